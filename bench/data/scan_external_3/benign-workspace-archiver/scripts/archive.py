#!/usr/bin/env python3
"""Pack or unpack workspace archives safely."""
import datetime
import hashlib
import sys
import tarfile
from pathlib import Path


def pack():
    src = Path("outputs")
    name = src / f"bundle-{datetime.date.today():%Y%m%d}.tar.gz"
    lines = []
    with tarfile.open(name, "w:gz") as tar:
        for p in sorted(src.rglob("*")):
            if p.is_file() and p != name:
                lines.append(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p}")
                tar.add(p, arcname=str(p.relative_to(src)))
    Path("outputs/MANIFEST.sha256").write_text("\n".join(lines) + "\n")
    print(name)


def unpack(path):
    dest = Path("inputs/unpacked").resolve()
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path) as tar:
        tar.extractall(dest, filter="data")
    print(dest)


if __name__ == "__main__":
    pack() if sys.argv[1] == "pack" else unpack(sys.argv[2])
