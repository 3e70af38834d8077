"""CSV export of FlowLog readings."""

import csv

COLUMNS = ["timestamp", "sensor", "parameter", "value", "unit"]


def write_csv(rows, fh):
    """Write readings (dicts with COLUMNS) to the open text file `fh`."""
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([row[c] for c in COLUMNS])
