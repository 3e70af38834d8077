import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from s2protocol.frames import decode_frame  # noqa: E402


class DecodeTest(unittest.TestCase):
    def test_rejects_wrong_header(self):
        with self.assertRaises(ValueError):
            decode_frame(bytes.fromhex("a10c110000004d03b406b700d40029ea"))

    def test_rejects_short_frame(self):
        with self.assertRaises(ValueError):
            decode_frame(bytes.fromhex("b20c1100"))


if __name__ == "__main__":
    unittest.main()
