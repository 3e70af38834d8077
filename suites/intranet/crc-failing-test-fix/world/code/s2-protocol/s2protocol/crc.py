"""The 16-bit checksum of S2 frames."""


def crc16(data):
    """CRC-16 (reflected polynomial 0xA001) of `data` (bytes)."""
    crc = 0x0000
    for byte in data:
        crc ^= byte
        for _ in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ 0xA001
            else:
                crc >>= 1
    return crc
