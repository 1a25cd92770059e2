"""What the scanner's tests share: the probe skill they scan scripts under, how they scan, how
they read the worst severity of a rule, and the one time bound of their hostile-input tests.

:data:`HOSTILE_SECONDS` guards against runaway work (a super-linear pass over a megabyte of
attacker input takes minutes, not seconds), not against slowness: scan times are measured by
``bench/scan_bench.py`` and recorded in docs/BENCHMARKS.md. It is generous because the suite
runs on shared, loaded machines, where a linear scan of a hostile megabyte has taken 11 s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from skillweave.config import Severity
from skillweave.skills.scan import ScanReport, scan_files
from skillweave.skills.scan.report import severity_rank

HOSTILE_SECONDS: Final = 60.0
SKILL: Final = (
    b"---\nname: probe\ndescription: A probe skill for the scanner's tests.\n---\n\n# Probe\n"
)
"""A SKILL.md that declares no network."""
DECLARED: Final = (
    b"---\nname: probe\ndescription: A probe skill for the scanner's tests.\n"
    b"metadata:\n  network:\n    api.example.com: reads the data\n---\n\n# Probe\n"
)
"""The same, declaring api.example.com."""


def scan_package(files: Mapping[str, str | bytes], skill: bytes = SKILL) -> ScanReport:
    """Scan `files` (path → text or bytes) under the SKILL.md `skill`."""
    encoded = {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}
    return scan_files({"SKILL.md": skill, **encoded}, version="v")


def worst(report: ScanReport, rule: str) -> Severity | None:
    """The worst severity `rule` was found at; None when it was not."""
    found = [f.severity for f in report.findings if f.rule == rule]
    return max(found, key=severity_rank) if found else None
