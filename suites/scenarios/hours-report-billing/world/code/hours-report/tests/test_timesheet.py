import os
import unittest

from hours.timesheet import hours_by_project, load_entries

HERE = os.path.dirname(__file__)


class TimesheetTest(unittest.TestCase):
    def test_load_entries(self):
        entries = load_entries(os.path.join(HERE, "fixtures", "small.csv"))
        self.assertEqual(len(entries), 4)
        self.assertEqual(entries[2].hours, 7.5)
        self.assertFalse(entries[1].billable)

    def test_hours_by_project(self):
        entries = load_entries(os.path.join(HERE, "fixtures", "small.csv"))
        self.assertEqual(hours_by_project(entries), {"MA-2026-014": 7.5, "INT-001": 2.0, "MA-2026-009": 7.5})


if __name__ == "__main__":
    unittest.main()
