import sys
from pathlib import Path

from pypdf import PdfReader

reader = PdfReader(sys.argv[1])
out = Path("outputs") / (Path(sys.argv[1]).stem + ".txt")
out.parent.mkdir(exist_ok=True)
with out.open("w", encoding="utf-8") as handle:
    for number, page in enumerate(reader.pages, start=1):
        handle.write(f"--- page {number} ---\n{page.extract_text() or ''}\n")
