#!/usr/bin/env python3
"""Compress a PDF with qpdf or Ghostscript (argument lists, no shell)."""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--quality", choices=["screen", "ebook", "printer"], default="ebook")
a = ap.parse_args()
src = Path(a.file)
out = Path("outputs") / f"{src.stem}.min.pdf"
out.parent.mkdir(exist_ok=True)
if shutil.which("gs"):
    cmd = ["gs", "-sDEVICE=pdfwrite", "-dCompatibilityLevel=1.5", f"-dPDFSETTINGS=/{a.quality}",
           "-dNOPAUSE", "-dBATCH", "-dQUIET", f"-sOutputFile={out}", str(src)]
elif shutil.which("qpdf"):
    cmd = ["qpdf", "--linearize", "--object-streams=generate", "--compress-streams=y", str(src), str(out)]
else:
    sys.exit("neither ghostscript nor qpdf is installed")
subprocess.run(cmd, check=True, timeout=300)
print(f"{src.stat().st_size:,} -> {out.stat().st_size:,} bytes")
