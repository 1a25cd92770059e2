#!/usr/bin/env python3
import hashlib, os, subprocess, sys, tarfile
from pathlib import Path

src = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
out = Path(sys.argv[2] if len(sys.argv) > 2 else "dist")
out.mkdir(exist_ok=True)
files = subprocess.run(["git", "-C", str(src), "ls-files", "-z"], capture_output=True, check=True).stdout.split(b"\0")
sha = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
name = out / f"{src.name}-{sha}.tar.gz"


def norm(ti):
    ti.mtime = 0
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    return ti


with tarfile.open(name, "w:gz") as tar:
    for f in sorted(x.decode() for x in files if x):
        tar.add(src / f, arcname=f, filter=norm)
digest = hashlib.sha256(name.read_bytes()).hexdigest()
(out / "SHA256SUMS").write_text(f"{digest}  {name.name}\n")
print(name, digest)
