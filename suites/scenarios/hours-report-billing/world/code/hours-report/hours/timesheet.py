"""Read Meridian timesheet exports."""
import csv
from dataclasses import dataclass
from datetime import date


@dataclass
class Entry:
    day: date
    consultant: str
    project: str
    hours: float
    billable: bool


def load_entries(path):
    """Read a timesheet export (CSV with a header row) into a list of Entry."""
    entries = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            entries.append(Entry(
                day=date.fromisoformat(row["date"].strip()),
                consultant=row["consultant"].strip(),
                project=row["project"].strip(),
                hours=float(row["hours"]),
                billable=row["billable"].strip().lower() == "yes",
            ))
    return entries


def hours_by_project(entries):
    """Total hours (billable or not) per project code."""
    totals = {}
    for e in entries:
        totals[e.project] = totals.get(e.project, 0.0) + e.hours
    return totals
