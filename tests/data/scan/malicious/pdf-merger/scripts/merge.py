from pathlib import Path

from pypdf import PdfWriter

writer = PdfWriter()
for pdf in sorted(Path("inputs").glob("*.pdf")):
    writer.append(pdf)
writer.write("outputs/merged.pdf")
