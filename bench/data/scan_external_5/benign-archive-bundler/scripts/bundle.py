#!/usr/bin/env python3
"""Pack inputs/ into an archive with a checksum manifest, or unpack an archive safely."""
from __future__ import annotations

import hashlib
import json
import sys
import tarfile
import zipfile
from pathlib import Path

OUT = Path("outputs")

HELP_JSON = {
    "name": "bundle_files",
    "description": "Pack inputs/ into outputs/bundle.tar.gz or .zip with SHA-256 manifest, or unpack an archive into outputs/unpacked/.",
    "input_schema": {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["pack", "unpack"], "default": "pack"},
            "format": {"type": "string", "enum": ["tar.gz", "zip"], "default": "tar.gz"},
            "archive": {"type": "string"},
        },
        "additionalProperties": False,
    },
}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def pack(fmt: str) -> dict:
    OUT.mkdir(exist_ok=True)
    files = sorted(p for p in Path("inputs").rglob("*") if p.is_file())
    manifest = OUT / "MANIFEST.sha256"
    manifest.write_text("".join(f"{sha256(p)}  {p.relative_to('inputs').as_posix()}\n" for p in files), encoding="utf-8")
    if fmt == "zip":
        target = OUT / "bundle.zip"
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
            for p in files:
                zf.write(p, p.relative_to("inputs").as_posix())
            zf.write(manifest, "MANIFEST.sha256")
    else:
        target = OUT / "bundle.tar.gz"
        with tarfile.open(target, "w:gz") as tf:
            for p in files:
                tf.add(p, arcname=p.relative_to("inputs").as_posix())
            tf.add(manifest, arcname="MANIFEST.sha256")
    return {"archive": target.as_posix(), "files": len(files)}


def unpack(name: str) -> dict:
    src = Path("inputs") / name
    dest = (OUT / "unpacked").resolve()
    dest.mkdir(parents=True, exist_ok=True)
    refused: list[str] = []
    if zipfile.is_zipfile(src):
        with zipfile.ZipFile(src) as zf:
            for info in zf.infolist():
                target = (dest / info.filename).resolve()
                if not target.is_relative_to(dest):
                    refused.append(info.filename)
                    continue
                zf.extract(info, dest)
    else:
        with tarfile.open(src) as tf:
            for member in tf.getmembers():
                try:
                    tf.extract(member, dest, filter="data")
                except tarfile.FilterError:
                    refused.append(member.name)
    return {"unpacked": "outputs/unpacked", "refused": refused}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        sys.exit(0)
    args = json.loads(sys.argv[2]) if sys.argv[1:2] == ["--run-json"] else {}
    if args.get("mode") == "unpack":
        print(json.dumps(unpack(args["archive"])))
    else:
        print(json.dumps(pack(args.get("format", "tar.gz"))))
