import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from calibrate import ALPHA, compensate, to_us_per_cm  # noqa: E402


class ToMicroSiemensTest(unittest.TestCase):
    def test_explicit_cell_constant(self):
        self.assertAlmostEqual(to_us_per_cm(1000, cell_constant=1.0), 500.0)

    def test_zero_counts(self):
        self.assertEqual(to_us_per_cm(0), 0)


class CompensateTest(unittest.TestCase):
    def test_reference_temperature_is_identity(self):
        self.assertAlmostEqual(compensate(500.0, 25), 500.0)

    def test_cold_water_reads_higher_at_25(self):
        self.assertAlmostEqual(compensate(400.0, 15), 400.0 / (1 - 10 * ALPHA))


if __name__ == "__main__":
    unittest.main()
