"""What ``skillweave skills eval`` shows of a batch: its report, its files, the skill's past
batches, its trigger evals, and the exit code its report earns.

A report is always rendered here from its ``report.json`` (``evals.markdown`` and
``evals.html``), never copied from the store's ``.md`` and ``.html``: whatever a store holds,
what reaches the terminal or a file went through the renderers' escaping. On a terminal the
Markdown is drawn by rich; elsewhere it is printed as text. :func:`judged` is the exit code: 0
for a completed batch whose pass rate (with the skill) reaches ``--min-pass-rate``, 1
otherwise, with one line saying why.

Called by :mod:`skillweave.cli.evals`.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from skillweave.cli.console import dump, err, out, shown_path
from skillweave.cli.exits import EXIT_PROBLEM
from skillweave.evals import EvalReport, TriggerSummary
from skillweave.storage import LocalArtifactStore, keys
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:
    from skillweave.storage import ArtifactStore

__all__ = [
    "judged",
    "print_listing",
    "print_report",
    "print_triggers",
    "stored_where",
    "write_files",
]

_SHORT: Final = 12
"""Hex digits shown of a version."""


def print_report(report: EvalReport, *, as_json: bool) -> None:
    """The report on stdout: its JSON (``--json``), else its Markdown (drawn on a terminal)."""
    from skillweave.evals import markdown

    if as_json:
        dump(report.model_dump(mode="json"))
        return
    text = markdown.report_markdown(report)
    if out.is_terminal:
        out.print(Markdown(text))
    else:
        sys.stdout.write(terminal_safe(text).rstrip("\n") + "\n")


def write_files(report: EvalReport, *, html: Path | None, out_dir: Path | None) -> list[Path]:
    """The report as a file at `html` (its HTML page) and as ``report.json``, ``report.md``
    and ``report.html`` in `out_dir`; the files written.

    Raises:
        OSError: a file cannot be written.
    """
    from skillweave.evals import html as html_page
    from skillweave.evals import markdown

    written: list[Path] = []
    page = html_page.report_html(report)
    if html is not None:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(page, encoding="utf-8")
        written.append(html)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        forms = {
            "report.json": report.model_dump_json(indent=2),
            "report.md": markdown.report_markdown(report),
            "report.html": page,
        }
        for name, text in forms.items():
            (out_dir / name).write_text(text, encoding="utf-8")
            written.append(out_dir / name)
    return written


def stored_where(store: ArtifactStore, skill: str, batch_id: str) -> str:
    """Where a batch's report is stored: its folder for a local store, else its key."""
    key = keys.eval_report_key(skill, batch_id, "json")
    if isinstance(store, LocalArtifactStore):
        return shown_path(store.root / key)
    return f"store key {key}"


def say(line: str, *, style: str = "dim") -> None:
    """One line on stderr, from text others may have written."""
    err.print(Text(terminal_safe(line), style=style), soft_wrap=True)


def judged(report: EvalReport, *, min_pass_rate: float | None) -> int:
    """The exit code `report` earns (see the module docstring), saying why on stderr when it
    is not 0."""
    if report.status != "completed":
        say(
            f"eval batch {report.batch_id} did not complete ({report.status}): its report has "
            "the jobs graded before it stopped",
            style="yellow",
        )
        return EXIT_PROBLEM
    rate = report.pass_rate
    if min_pass_rate is not None and (rate is None or rate < min_pass_rate):
        shown = "no pass rate" if rate is None else f"pass rate {rate:.0%}"
        say(
            f"{report.skill}: {shown} with the skill, below --min-pass-rate {min_pass_rate:.0%}",
            style="bold red",
        )
        return EXIT_PROBLEM
    return 0


def _rates(report: EvalReport) -> str:
    return ", ".join(f"{v.variant} {v.pass_rate:.0%}" for v in report.variants) or "-"


def _when(created_at: str) -> str:
    try:
        return f"{datetime.fromisoformat(created_at):%Y-%m-%d %H:%M}"
    except ValueError:
        return created_at[:16]


def print_listing(skill: str, reports: tuple[EvalReport, ...], *, as_json: bool) -> None:
    """A skill's past batches, newest first: date, id, version, status, each variant's pass
    rate."""
    if as_json:
        dump(
            [
                {
                    "batch_id": report.batch_id,
                    "created_at": report.created_at,
                    "version": report.version,
                    "against": report.against,
                    "variants": [v.variant for v in report.variants],
                    "pass_rates": {v.variant: v.pass_rate for v in report.variants},
                    "jobs": len(report.jobs),
                    "status": report.status,
                }
                for report in reports
            ]
        )
        return
    if not reports:
        say(f"no eval batch of {skill} has a report yet: `skillweave skills eval {skill}` runs one")
        return
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("date (UTC)", "batch", "version", "status"):
        table.add_column(column, no_wrap=True)
    table.add_column("pass rate by variant", overflow="fold")
    for report in reports:
        cells = (
            _when(report.created_at),
            report.batch_id,
            report.version[:_SHORT],
            report.status,
            _rates(report),
        )
        table.add_row(*(Text(terminal_safe(cell)) for cell in cells))
    out.print(table)


def print_triggers(skill: str, summary: TriggerSummary, *, as_json: bool) -> None:
    """The trigger evals of a skill: recall, false triggers, and each case that went wrong."""
    if as_json:
        dump(summary.model_dump(mode="json"))
        return
    recall = _share(summary.recall, summary.positives)
    false = _share(summary.false_trigger_rate, summary.negatives)
    head = (
        f"{skill} · triggers ({summary.strategy}, top {summary.top_k}): recall {recall}, "
        f"false triggers {false}"
    )
    if summary.first_counts() is not None:
        head += (
            f"; ranked first: recall {_share(summary.first_recall, summary.positives)}, "
            f"false triggers {_share(summary.first_false_trigger_rate, summary.negatives)}"
        )
    out.print(Text(terminal_safe(head)), soft_wrap=True)
    for case in summary.cases:
        if case.triggered == case.should_trigger:
            continue
        what = "missed" if case.should_trigger else "picked, not meant for it"
        rank = "" if case.rank is None else f" (rank {case.rank})"
        line = f"  {what}{rank}: {case.query[:200]}"
        out.print(Text(terminal_safe(line.replace("\n", " "))), soft_wrap=True)


def _share(rate: float | None, total: int) -> str:
    if rate is None or total == 0:
        return "- (none)"
    return f"{round(rate * total)}/{total} ({rate:.0%})"
