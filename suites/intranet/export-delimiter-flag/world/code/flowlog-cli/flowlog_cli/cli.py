"""The `flowlog` command."""

import argparse
import sys

from .client import fetch_readings
from .export import write_csv


def build_parser():
    parser = argparse.ArgumentParser(prog="flowlog", description="FlowLog command line tools")
    sub = parser.add_subparsers(dest="command", required=True)
    export = sub.add_parser("export", help="export the readings of a site as CSV")
    export.add_argument("--site", required=True, help="FlowLog site id")
    export.add_argument("--from", dest="start", required=True, help="first day, YYYY-MM-DD")
    export.add_argument("--to", dest="end", required=True, help="last day, YYYY-MM-DD")
    export.add_argument("--out", default="-", help="output file (default: standard output)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "export":
        rows = fetch_readings(args.site, args.start, args.end)
        if args.out == "-":
            write_csv(rows, sys.stdout)
        else:
            with open(args.out, "w", newline="", encoding="utf-8") as fh:
                write_csv(rows, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
