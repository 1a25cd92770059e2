"""The skill scanner against its corpus: detection per rule class, false positives, time.

The corpus is ``tests/data/scan``: malicious cases with the rules each must produce
(``expected.json``) and a benign library; the bundled skills count as benign too. A case is
detected for a rule class when every expected rule of that class fires at its least
severity. A false positive is a benign or bundled skill with a finding of that class at
medium or above (low findings are counted apart: they warn and block nothing under the
default policy). Precision per class = detected / (detected + false positives).

    python bench/scan_bench.py [--quick] [--repeat N] [--best]

Prints tables only and always exits 0: timings on shared machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.table import Table

from bench.measures import percentile
from skillweave.config import bundled_skills_dir
from skillweave.skills.scan import SCANNER, SEVERITIES, ScanReport, scan_folder
from skillweave.skills.scan._bandit import bandit_loaded
from skillweave.skills.scan.report import severity_rank

CORPUS: Final = Path(__file__).resolve().parents[1] / "tests" / "data" / "scan"
QUICK_SKILLS: Final = 12


def _class(rule: str) -> str:
    return rule.split(".", 1)[0]


def _timed(folder: Path, repeat: int) -> tuple[ScanReport, list[float]]:
    times = []
    report = None
    for _ in range(repeat):
        started = time.perf_counter()
        report = scan_folder(folder)
        times.append((time.perf_counter() - started) * 1000)
    assert report is not None
    return report, times


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its tables; always returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SKILLS} skills of each kind")
    parser.add_argument("--repeat", type=int, default=3, help="scans of each skill for timing")
    parser.add_argument(
        "--best",
        action="store_true",
        help="time each skill by its fastest scan, not the median of its scans (steadier when "
        "other work shares the machine)",
    )
    args = parser.parse_args(argv)
    console = Console(highlight=False, width=120)
    expected: dict[str, dict[str, str]] = json.loads((CORPUS / "expected.json").read_text())
    malicious = sorted(expected)
    benign = sorted(p for p in (CORPUS / "benign").iterdir() if p.is_dir())
    bundled = sorted(p.parent for p in bundled_skills_dir().rglob("SKILL.md"))
    if args.quick:
        malicious, benign = malicious[:QUICK_SKILLS], benign[:QUICK_SKILLS]
    repeat = 1 if args.quick else max(1, args.repeat)
    pick = min if args.best else statistics.median

    started = time.perf_counter()
    bandit_loaded()  # what the first scan with Python files pays once per process
    cold_ms = (time.perf_counter() - started) * 1000

    times: dict[str, list[float]] = {"malicious": [], "benign": [], "bundled": []}
    found: dict[str, dict[str, str]] = {}
    for case in malicious:
        report, spent = _timed(CORPUS / "malicious" / case, repeat)
        times["malicious"].append(pick(spent))
        worst: dict[str, str] = {}
        for f in report.findings:
            if severity_rank(f.severity) > severity_rank(worst.get(f.rule, "")):
                worst[f.rule] = f.severity
        found[case] = worst
    clean_reports: dict[str, tuple[str, ScanReport]] = {}
    for kind, folders in (("benign", benign), ("bundled", bundled)):
        for folder in folders:
            report, spent = _timed(folder, repeat)
            times[kind].append(pick(spent))
            clean_reports[f"{kind}/{folder.name}"] = (kind, report)

    # 1. Detection per rule class.
    classes = sorted({_class(r) for rules in expected.values() for r in rules})
    table = Table(title=f"1. Detection per rule class ({SCANNER})")
    for column in ("class", "cases", "detected", "recall", "FP skills ≥ medium", "precision",
                   "skills with low only"):  # fmt: skip
        table.add_column(column, justify="left" if column == "class" else "right")
    for name in classes:
        cases = [c for c in malicious if any(_class(r) == name for r in expected[c])]
        detected = [
            c for c in cases
            if all(
                r in found[c] and severity_rank(found[c][r]) >= severity_rank(least)
                for r, least in expected[c].items()
                if _class(r) == name
            )
        ]  # fmt: skip
        false_positive = low_only = 0
        for _, report in clean_reports.values():
            ranks = [severity_rank(f.severity) for f in report.findings if _class(f.rule) == name]
            if ranks and max(ranks) >= 2:
                false_positive += 1
            elif ranks:
                low_only += 1
        precision = len(detected) / (len(detected) + false_positive) if detected else 0.0
        table.add_row(
            name, str(len(cases)), str(len(detected)),
            f"{len(detected) / len(cases):.0%}" if cases else "-",
            str(false_positive), f"{precision:.0%}", str(low_only),
        )  # fmt: skip
    all_detected = sum(
        all(
            r in found[c] and severity_rank(found[c][r]) >= severity_rank(least)
            for r, least in expected[c].items()
        )
        for c in malicious
    )
    table.caption = (
        f"{all_detected}/{len(malicious)} malicious cases with every expected rule; false "
        f"positives over {len(benign)} benign + {len(bundled)} bundled skills"
    )
    console.print(table)

    # 2. Findings per severity on the clean libraries.
    table = Table(title="2. Findings per severity on skills that should be clean")
    for column in ("library", "skills", *SEVERITIES, "rules seen"):
        table.add_column(column, justify="left" if column in ("library", "rules seen") else "right")
    for kind, count in (("benign", len(benign)), ("bundled", len(bundled))):
        severities: Counter[str] = Counter()
        seen: Counter[str] = Counter()
        for label, report in clean_reports.values():
            if label != kind:
                continue
            severities.update(f.severity for f in report.findings)
            seen.update(f.rule for f in report.findings)
        table.add_row(
            kind, str(count), *(str(severities.get(s, 0)) for s in SEVERITIES),
            ", ".join(f"{rule} ×{n}" for rule, n in sorted(seen.items())) or "-",
        )  # fmt: skip
    console.print(table)

    # 3. Time per skill.
    each = "fastest" if args.best else "median"
    table = Table(title=f"3. Scan time per skill (ms, {each} of {repeat} scans each)")
    for column in ("skills", "n", "median", "p95", "max"):
        table.add_column(column, justify="left" if column == "skills" else "right")
    for kind, values in times.items():
        if values:
            table.add_row(
                kind, str(len(values)), f"{statistics.median(values):.1f}",
                f"{percentile(values, 0.95):.1f}", f"{max(values):.1f}",
            )  # fmt: skip
    table.caption = (
        f"once per process, bandit's import and plugin discovery: {cold_ms:.0f} ms; "
        f"run: bench/scan_bench.py {' '.join(sys.argv[1:] if argv is None else argv)}"
    )
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
