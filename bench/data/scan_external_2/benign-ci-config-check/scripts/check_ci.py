#!/usr/bin/env python3
"""Lint GitHub Actions / GitLab CI YAML files."""
from __future__ import annotations

import re
import sys

import yaml

PINNED = re.compile(r"@[0-9a-f]{40}$")
SECRET_ECHO = re.compile(r"echo\s+.*\$\{\{\s*secrets\.", re.I)


def github(path: str, doc: dict) -> list[str]:
    out = []
    triggers = doc.get("on", doc.get(True, {}))
    jobs = doc.get("jobs", {}) or {}
    if "permissions" not in doc and not all("permissions" in j for j in jobs.values()):
        out.append(f"{path}: no permissions block (defaults may be write-all)")
    for name, job in jobs.items():
        needs = job.get("needs", [])
        for n in [needs] if isinstance(needs, str) else needs:
            if n not in jobs:
                out.append(f"{path}: job {name} needs unknown job {n}")
        for step in job.get("steps", []) or []:
            uses = step.get("uses", "")
            if uses and not uses.startswith("./") and not PINNED.search(uses):
                out.append(f"{path}: job {name}: {uses} is not pinned to a commit SHA")
            if SECRET_ECHO.search(step.get("run", "") or ""):
                out.append(f"{path}: job {name}: a run step echoes a secret")
            if "pull_request_target" in (triggers or {}) and "checkout" in uses and "head" in str(step.get("with", {})):
                out.append(f"{path}: job {name}: checks out the PR head under pull_request_target")
    return out


def gitlab(path: str, doc: dict) -> list[str]:
    out = []
    stages = doc.get("stages", ["build", "test", "deploy"])
    for name, job in doc.items():
        if isinstance(job, dict) and "script" in job and job.get("stage", "test") not in stages:
            out.append(f"{path}: job {name} uses undeclared stage {job.get('stage')}")
    return out


def main(paths: list[str]) -> int:
    findings = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh) or {}
        findings += gitlab(p, doc) if p.endswith(".gitlab-ci.yml") else github(p, doc)
    print("\n".join(findings) or "no findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
