"""How the CLI shows a scan to the operator who decides on it: one line with the findings'
count and the policy's decision with its reason, then each finding worst first (severity, rule,
``path:line``, message; the model review's marked) with its evidence line under it, a bounded
number with how to see the rest, and the model review's cost.

The words are :mod:`skillweave.skills.scan_decision`'s (every door says the same); this module
lays them out and colours them. Called by ``skills install`` and ``update`` (under the table,
per version), ``skills show`` (with ``--findings``), ``skills approve`` (before it enables the
version) and ``skills upload`` (the API's answer).

Every line is escaped onto one line by ``scan_decision`` and printed as a ``rich.text.Text``:
an excerpt's rich markup stays text, its escape sequences show as ``\\x1b``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer
from rich.text import Text

from skillweave.cli.exits import EXIT_USAGE, errors, fail
from skillweave.config import Settings
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:  # the scanner is imported when a scan is shown, not at every start-up
    from skillweave.config import Severity
    from skillweave.skills import ScanDecision
    from skillweave.skills.scan import Decision, ScanReport

__all__ = [
    "FINDINGS_PER_VERSION",
    "FindingsOption",
    "findings_limit",
    "read_stored_report",
    "row_scan_texts",
    "scan_fields",
    "scan_texts",
]

FINDINGS_PER_VERSION: Final = 5
"""Findings listed per version under the install table (the rest: ``skills show --findings``)."""
_SHOWN_BY_DEFAULT: Final = "10"
_STYLE: Final[dict[Severity, str]] = {
    "critical": "bold red",
    "high": "red",
    "medium": "yellow",
    "low": "cyan",
}
_DECISION_STYLE: Final[dict[Decision, str]] = {
    "block": "bold red",
    "approve": "yellow",
    "warn": "default",
    "clean": "green",
}

FindingsOption = Annotated[
    str,
    typer.Option(
        "--findings",
        metavar="N|all",
        help="How many of the scan's findings to list, worst first (all: every one).",
    ),
]


def findings_limit(value: str = _SHOWN_BY_DEFAULT) -> int | None:
    """The number ``--findings`` asks for; None for ``all``.

    Raises:
        typer.Exit: not a number nor ``all`` (one line, usage exit).
    """
    if value.strip().lower() == "all":
        return None
    try:
        limit = int(value)
    except ValueError:
        limit = -1
    if limit < 0:
        raise fail(f"--findings takes a number or 'all', not {value!r}", code=EXIT_USAGE)
    return limit


def scan_texts(
    report: ScanReport,
    decided: ScanDecision,
    *,
    name: str,
    limit: int | None,
    head: str = "scan",
) -> list[Text]:
    """The lines that show `report` and why it was decided as it was (`decided`): the head
    (``{head}: 2 findings (1 high, 1 low); needs an operator's approval: …``), the first
    `limit` findings worst first (None: all) each with its evidence, ``… and N more`` naming
    the command that lists them all, and the model review's cost when one ran."""
    from skillweave.skills import scan_decision

    first = Text(terminal_safe(f"{head}: {report.summary()}; "))
    first.append(decided.reason, style=_DECISION_STYLE[decided.decision])
    lines = [first]
    ordered = scan_decision.worst_first(report.findings)
    shown = ordered if limit is None else ordered[:limit]
    for finding in shown:
        line = Text("  ")
        line.append(scan_decision.finding_line(finding), style=_STYLE[finding.severity])
        lines.append(line)
        evidence = scan_decision.evidence(finding)
        if evidence:
            line = Text("      evidence: ", style="dim")
            line.append(evidence)
            lines.append(line)
    if len(ordered) > len(shown):
        more = len(ordered) - len(shown)
        hint = f"skillweave skills show {name} --findings all"
        lines.append(Text(terminal_safe(f"  … and {more} more ({hint})"), style="dim"))
    if report.review is not None:
        lines.append(Text("  " + scan_decision.review_line(report.review)))
    return lines


def read_stored_report(settings: Settings, name: str, version: str) -> ScanReport | None:
    """The report kept beside a stored version, read from the settings' store; None when it
    was stored before reports were kept."""
    from skillweave.cli.compose import open_store  # the engines' stack, only for this
    from skillweave.skills import stored_report

    async def read() -> ScanReport | None:
        async with open_store(settings) as store:
            return await stored_report(store, name, version)

    with errors():
        return asyncio.run(read())


def scan_fields(report: ScanReport | None, settings: Settings) -> dict[str, object]:
    """An install row's scan fields: ``reason`` (the policy's decision explained), and
    ``findings`` and ``review`` as the report has them (its own field names)."""
    from skillweave.skills import ScanDecision

    if report is None:
        return {"reason": None, "findings": [], "review": None}
    return {
        "reason": ScanDecision.of(report, settings.skills.scan).reason,
        "findings": [f.model_dump(mode="json") for f in report.findings],
        "review": report.review.model_dump(mode="json") if report.review else None,
    }


def row_scan_texts(row: dict[str, Any]) -> list[Text]:
    """An install row's findings (:func:`scan_fields`), worst first and at most
    :data:`FINDINGS_PER_VERSION`, each with its evidence, and why the policy decided what it
    did; nothing for a version without findings or review."""
    if not (row.get("findings") or row.get("review")) or not row.get("reason"):
        return []
    from skillweave.skills import ScanDecision
    from skillweave.skills.scan import ScanReport

    report = ScanReport(
        scanner="", version=row["version"], findings=row["findings"], review=row["review"]
    )
    decided = ScanDecision(decision=row["decision"], reason=row["reason"])
    return scan_texts(
        report, decided, name=row["name"], limit=FINDINGS_PER_VERSION, head=row["name"]
    )
