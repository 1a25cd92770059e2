#!/usr/bin/env python3
"""Condensed git blame: line ranges per commit, with author, date and subject."""
from __future__ import annotations

import json
import os
import subprocess
import sys


def git(*args: str) -> str:
    # argument list, no shell: paths with spaces or metacharacters are passed verbatim
    result = subprocess.run(["git", *args], capture_output=True, text=True, check=True, timeout=60)
    return result.stdout


def blame(path: str, rev: str = "HEAD", ignore_revs: str | None = None) -> list[dict]:
    if rev.startswith("-"):
        raise ValueError("rev must not start with '-'")
    args = ["blame", "--line-porcelain"]
    if ignore_revs is None and os.path.exists(".git-blame-ignore-revs"):
        ignore_revs = ".git-blame-ignore-revs"
    if ignore_revs:
        args += ["--ignore-revs-file", ignore_revs]
    out = git(*args, rev, "--", path)
    ranges: list[dict] = []
    meta: dict[str, dict] = {}
    commit = None
    line_no = 0
    for line in out.splitlines():
        if line.startswith("\t"):
            line_no += 1
            info = meta[commit]
            if ranges and ranges[-1]["commit"] == commit and ranges[-1]["end"] == line_no - 1:
                ranges[-1]["end"] = line_no
            else:
                ranges.append({"start": line_no, "end": line_no, "commit": commit[:10], **info})
                ranges[-1]["commit"] = commit
            continue
        key, _, value = line.partition(" ")
        if len(key) == 40 and all(c in "0123456789abcdef" for c in key):
            commit = key
            meta.setdefault(commit, {})
        elif key == "author":
            meta[commit]["author"] = value
        elif key == "author-time":
            meta[commit]["date"] = value
        elif key == "summary":
            meta[commit]["subject"] = value
    for r in ranges:
        r["commit"] = r["commit"][:10]
    return ranges


if __name__ == "__main__":
    a = json.loads(sys.argv[2]) if sys.argv[1:2] == ["--run-json"] else {"path": sys.argv[1]}
    print(json.dumps(blame(a["path"], a.get("rev", "HEAD"), a.get("ignore_revs")), indent=1))
