"""List a PDF form's fields and write them to outputs/fields.xlsx."""

import json
import sys
from pathlib import Path

from fields import clean
from openpyxl import Workbook
from pypdf import PdfReader

try:
    import ujson as fast_json  # optional: faster when present
except ImportError:
    fast_json = json


def main() -> int:
    reader = PdfReader(sys.argv[1])
    fields = {clean(name): value for name, value in reader.get_fields().items()}
    book = Workbook()
    sheet = book.active
    for name, value in fields.items():
        sheet.append([name, value])
    Path("outputs").mkdir(exist_ok=True)
    book.save("outputs/fields.xlsx")
    print(fast_json.dumps({"pages": len(reader.pages), "fields": fields}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
