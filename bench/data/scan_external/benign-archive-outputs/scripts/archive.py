#!/usr/bin/env python3
"""Pack or safely unpack archives inside the workspace.

    python3 archive.py pack PATH... [--format tar.gz|zip]
    python3 archive.py unpack inputs/ARCHIVE
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tarfile
import zipfile
from pathlib import Path

WORKSPACE = Path.cwd().resolve()
OUT = WORKSPACE / "outputs"


def inside(base: Path, target: Path) -> bool:
    try:
        target.resolve().relative_to(base.resolve())
        return True
    except ValueError:
        return False


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def pack(paths: list[str], fmt: str) -> dict:
    files = []
    for p in paths:
        src = (WORKSPACE / p)
        if not inside(WORKSPACE, src):
            raise SystemExit(f"refusing {p}: outside the workspace")
        files += [f for f in ([src] if src.is_file() else sorted(src.rglob("*"))) if f.is_file()]
    OUT.mkdir(exist_ok=True)
    bundle = OUT / f"bundle.{fmt}"
    if fmt == "zip":
        with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as z:
            for f in files:
                z.write(f, f.relative_to(WORKSPACE).as_posix())
    else:
        with tarfile.open(bundle, "w:gz") as t:
            for f in files:
                t.add(f, arcname=f.relative_to(WORKSPACE).as_posix(), recursive=False)
    manifest = "".join(f"{sha256(f)}  {f.relative_to(WORKSPACE).as_posix()}\n" for f in files)
    (OUT / "MANIFEST.sha256").write_text(manifest)
    return {"bundle": str(bundle.relative_to(WORKSPACE)), "files": len(files)}


def unpack(archive: str) -> dict:
    dest = OUT / "extracted"
    dest.mkdir(parents=True, exist_ok=True)
    count = 0
    if archive.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                if not inside(dest, dest / name):
                    raise SystemExit(f"refusing member {name}")
            z.extractall(dest)
            count = len(z.namelist())
    else:
        with tarfile.open(archive) as t:
            t.extractall(dest, filter="data")  # refuses absolute paths, '..' and outside links
            count = len(t.getmembers())
    return {"extracted": count, "to": os.path.relpath(dest, WORKSPACE)}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "archive_files", "description": "Pack or unpack archives in the workspace",
                          "input_schema": {"type": "object", "properties": {
                              "mode": {"type": "string", "enum": ["pack", "unpack"]},
                              "paths": {"type": "array", "items": {"type": "string"}},
                              "archive": {"type": "string"}, "format": {"type": "string"}}}}))
        return 0
    p = argparse.ArgumentParser(prog="archive.py")
    sub = p.add_subparsers(dest="mode", required=True)
    pk = sub.add_parser("pack")
    pk.add_argument("paths", nargs="+")
    pk.add_argument("--format", choices=["tar.gz", "zip"], default="tar.gz")
    up = sub.add_parser("unpack")
    up.add_argument("archive")
    a = p.parse_args(argv)
    print(json.dumps(pack(a.paths, a.format) if a.mode == "pack" else unpack(a.archive)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
