import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bridge.registers import register_of  # noqa: E402


class RegistersTest(unittest.TestCase):
    def test_krohne_flow(self):
        self.assertEqual(register_of("krohne-optiflux", "flow_m3h"), 3002)


if __name__ == "__main__":
    unittest.main()
