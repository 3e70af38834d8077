import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from flowlog_cli.cli import build_parser  # noqa: E402
from flowlog_cli.export import write_csv  # noqa: E402

ROWS = [
    {"timestamp": "2026-03-02T10:00:00+01:00", "sensor": "S2-0017", "parameter": "conductivity", "value": 412.0, "unit": "uS/cm"},
    {"timestamp": "2026-03-02T10:00:00+01:00", "sensor": "S2-0017", "parameter": "temperature", "value": 8.5, "unit": "C"},
]


class WriteCsvTest(unittest.TestCase):
    def test_header_and_rows(self):
        out = io.StringIO()
        write_csv(ROWS, out)
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "timestamp,sensor,parameter,value,unit")
        self.assertEqual(lines[1], "2026-03-02T10:00:00+01:00,S2-0017,conductivity,412.0,uS/cm")
        self.assertEqual(len(lines), 3)


class ParserTest(unittest.TestCase):
    def test_export_defaults(self):
        args = build_parser().parse_args(["export", "--site", "lek", "--from", "2026-03-01", "--to", "2026-03-07"])
        self.assertEqual(args.out, "-")
        self.assertEqual(args.start, "2026-03-01")


if __name__ == "__main__":
    unittest.main()
