#!/usr/bin/env python3
import json, math, struct, sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else "model")
total = 0
for f in sorted(root.glob("*.safetensors")):
    with open(f, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(n))
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        count = math.prod(meta["shape"])
        total += count
        print(f"{name:60} {meta['dtype']:6} {meta['shape']}")
for f in sorted(root.glob("*.bin")) + sorted(root.glob("*.pt")):
    print(f"skipped (pickle format, not opened): {f.name}")
print(f"total parameters: {total:,}")
