import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from s2protocol.crc import crc16  # noqa: E402


class Crc16Test(unittest.TestCase):
    def test_check_value(self):
        # the standard check input "123456789"
        self.assertEqual(crc16(b"123456789"), 0xBB3D)

    def test_single_bit_changes_crc(self):
        self.assertNotEqual(crc16(b"\x00\x01"), crc16(b"\x00\x03"))


if __name__ == "__main__":
    unittest.main()
