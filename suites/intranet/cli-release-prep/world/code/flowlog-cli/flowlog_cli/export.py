"""CSV export of FlowLog readings."""

import csv

COLUMNS = ["timestamp", "sensor", "parameter", "value", "unit"]

# Names accepted by `flowlog export --delimiter`; comma stays the default.
DELIMITERS = {"comma": ",", "semicolon": ";", "tab": "\t"}


def write_csv(rows, fh, delimiter=","):
    """Write readings (dicts with COLUMNS) to the open text file `fh`."""
    writer = csv.writer(fh, delimiter=delimiter, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([row[c] for c in COLUMNS])
