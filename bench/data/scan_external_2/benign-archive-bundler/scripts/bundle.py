#!/usr/bin/env python3
"""Pack, verify and safely unpack archives inside the workspace."""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tarfile
import zipfile

OUT = os.path.abspath("outputs")
MAX_TOTAL = 2 * 1024**3


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def pack(folder: str) -> dict:
    name = os.path.basename(os.path.normpath(folder))
    os.makedirs(OUT, exist_ok=True)
    archive = os.path.join(OUT, f"{name}.tar.gz")
    manifest = {}
    with tarfile.open(archive, "w:gz") as tar:
        for root, _, files in os.walk(folder):
            for f in sorted(files):
                p = os.path.join(root, f)
                rel = os.path.relpath(p, folder)
                manifest[rel] = sha256(p)
                tar.add(p, arcname=os.path.join(name, rel), recursive=False)
    with open(os.path.join(OUT, f"{name}.sha256"), "w", encoding="utf-8") as fh:
        fh.writelines(f"{digest}  {rel}\n" for rel, digest in sorted(manifest.items()))
    return {"archive": archive, "files": len(manifest)}


def _inside(base: str, target: str) -> bool:
    base, target = os.path.realpath(base), os.path.realpath(target)
    return os.path.commonpath([base, target]) == base


def unpack(archive: str) -> dict:
    name = os.path.basename(archive).split(".")[0]
    dest = os.path.join(OUT, "extracted", name)
    os.makedirs(dest, exist_ok=True)
    refused, total = [], 0
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                total += info.file_size
                if total > MAX_TOTAL or not _inside(dest, os.path.join(dest, info.filename)):
                    refused.append(info.filename)
                    continue
                zf.extract(info, dest)
    else:
        with tarfile.open(archive) as tar:
            members = []
            for m in tar.getmembers():
                total += m.size
                if total > MAX_TOTAL or not _inside(dest, os.path.join(dest, m.name)) or m.issym() or m.islnk() or m.isdev():
                    refused.append(m.name)
                    continue
                members.append(m)
            tar.extractall(dest, members=members, filter="data")
    return {"extracted_to": dest, "refused": refused}


def verify(archive: str, manifest: str) -> dict:
    listed = dict(reversed(line.strip().split("  ", 1)) for line in open(manifest, encoding="utf-8") if line.strip())
    result = unpack(archive)
    base = os.path.join(result["extracted_to"], os.listdir(result["extracted_to"])[0])
    bad = [rel for rel, digest in listed.items() if not os.path.exists(os.path.join(base, rel)) or sha256(os.path.join(base, rel)) != digest]
    return {"checked": len(listed), "mismatched": bad}


if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    print(json.dumps({"pack": pack, "unpack": unpack, "verify": verify}[cmd](*rest)))
