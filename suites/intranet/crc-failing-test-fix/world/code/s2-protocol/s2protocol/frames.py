"""Decode S2 uplink frames (docs/frame-format.md)."""

import struct

from .crc import crc16

HEADER = 0xB2
PAYLOAD_LENGTH = 12


def decode_frame(frame):
    """Decode one frame (bytes) into a dict; ValueError when it is malformed or corrupted."""
    if len(frame) != 2 + PAYLOAD_LENGTH + 2 or frame[0] != HEADER or frame[1] != PAYLOAD_LENGTH:
        raise ValueError("not an S2 frame")
    (checksum,) = struct.unpack("<H", frame[-2:])
    if crc16(frame[:-2]) != checksum:
        raise ValueError("checksum mismatch")
    serial, temp, counts, turbidity, level = struct.unpack("<IhHHH", frame[2:-2])
    return {
        "serial": serial,
        "temperature_c": temp / 100,
        "conductivity_counts": counts,
        "turbidity_ntu": turbidity / 10,
        "level_cm": level,
    }
