"""CSV export of FlowLog readings."""

import csv

COLUMNS = ["timestamp", "sensor", "parameter", "value", "unit"]

# Names accepted by `flowlog export --delimiter`; comma stays the default.
DELIMITERS = {"comma": ",", "semicolon": ";", "tab": "\t"}


def write_csv(rows, fh, delimiter=","):
    """Write readings (dicts with COLUMNS) to the open text file `fh`."""
    writer = csv.writer(fh, delimiter=delimiter)
    writer.writerow(COLUMNS)
    writer.writerows([row[c] for c in COLUMNS] for row in rows)
