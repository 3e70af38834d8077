import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from s2protocol.frames import decode_frame  # noqa: E402


# Captured by Karim from unit 17 (Rivierenland, Lek inlet) on 2026-03-09 with the Hub's debug
# tap. Ground truth from a real device: do not edit.
CAPTURED_UNIT_17 = "b20c110000004d03b406b700d40029ea"


class DecodeTest(unittest.TestCase):
    def test_decode_captured_frame(self):
        reading = decode_frame(bytes.fromhex(CAPTURED_UNIT_17))
        self.assertEqual(reading["serial"], 17)
        self.assertAlmostEqual(reading["temperature_c"], 8.45)
        self.assertEqual(reading["conductivity_counts"], 1716)
        self.assertAlmostEqual(reading["turbidity_ntu"], 18.3)
        self.assertEqual(reading["level_cm"], 212)

    def test_rejects_corrupted_captured_frame(self):
        frame = bytearray.fromhex(CAPTURED_UNIT_17)
        frame[7] ^= 0x01
        with self.assertRaises(ValueError):
            decode_frame(bytes(frame))

    def test_rejects_wrong_header(self):
        with self.assertRaises(ValueError):
            decode_frame(bytes.fromhex("a10c110000004d03b406b700d40029ea"))

    def test_rejects_short_frame(self):
        with self.assertRaises(ValueError):
            decode_frame(bytes.fromhex("b20c1100"))


if __name__ == "__main__":
    unittest.main()
