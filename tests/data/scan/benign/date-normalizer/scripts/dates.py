import csv
import sys

from dateutil import parser

path, column = sys.argv[1], sys.argv[2]
with open(path, newline="") as source, open("outputs/dates.csv", "w", newline="") as target:
    reader = csv.DictReader(source)
    writer = csv.DictWriter(target, reader.fieldnames)
    writer.writeheader()
    for row in reader:
        try:
            row[column] = parser.parse(row[column]).date().isoformat()
        except (ValueError, OverflowError):
            pass
        writer.writerow(row)
