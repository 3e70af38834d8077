"""Command line: python3 -m hours.cli <command> <timesheet.csv> [--out FILE]"""
import argparse
import csv
import sys

from .timesheet import hours_by_project, load_entries


def write_rows(header, rows, out):
    f = open(out, "w", newline="", encoding="utf-8") if out else sys.stdout
    try:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    finally:
        if out:
            f.close()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="hours")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("hours", help="total hours per project")
    p.add_argument("timesheet")
    p.add_argument("--out", help="write CSV here instead of stdout")
    args = parser.parse_args(argv)

    entries = load_entries(args.timesheet)
    if args.command == "hours":
        totals = hours_by_project(entries)
        write_rows(["project", "hours"], [[k, f"{v:.2f}"] for k, v in sorted(totals.items())], args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
