import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from alarms.rules import conductivity_alarm, level_alarm, load_limits  # noqa: E402


class RulesTest(unittest.TestCase):
    def setUp(self):
        self.limits = load_limits("delfland-schie")

    def test_conductivity_below_limit(self):
        self.assertFalse(conductivity_alarm(1499.9, self.limits))

    def test_conductivity_at_limit_fires(self):
        self.assertTrue(conductivity_alarm(1500, self.limits))

    def test_level_at_limit_fires(self):
        self.assertTrue(level_alarm(210, self.limits))


if __name__ == "__main__":
    unittest.main()
