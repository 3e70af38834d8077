import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from flowlog_sync import config  # noqa: E402


class ConfigTest(unittest.TestCase):
    def test_bearer_header(self):
        self.assertTrue(config.auth_headers()["Authorization"].startswith("Bearer "))


if __name__ == "__main__":
    unittest.main()
