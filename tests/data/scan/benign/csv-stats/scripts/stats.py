"""Per-column statistics of a CSV file."""

import csv
import json
import statistics
import sys
from pathlib import Path


def numeric(values):
    out = []
    for value in values:
        try:
            out.append(float(value))
        except ValueError:
            continue
    return out


def main(path):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    report = {}
    for column in rows[0] if rows else []:
        values = [row[column] for row in rows if row[column] != ""]
        numbers = numeric(values)
        entry = {"count": len(values)}
        if numbers:
            entry.update(mean=statistics.fmean(numbers), min=min(numbers), max=max(numbers))
        report[column] = entry
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/stats.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
