import csv
import sys
from pathlib import Path

from openpyxl import load_workbook

book = load_workbook(sys.argv[1], read_only=True, data_only=True)
out = Path("outputs")
out.mkdir(exist_ok=True)
for sheet in book.worksheets:
    with open(out / f"{sheet.title}.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        for row in sheet.iter_rows(values_only=True):
            writer.writerow(["" if cell is None else cell for cell in row])
