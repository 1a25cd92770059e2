"""The reliability suite's scale and figures.

Every test here runs at CI scale by default; ``make soak`` sets ``SKILLWEAVE_SOAK=1`` for the
full scale (:func:`scale` picks). Tests record what they measured with the ``figures`` fixture;
the run ends with one summary table (runs, kills, scripts run vs expected, failures, steps/s,
p95 step latency) in the terminal, and in ``SKILLWEAVE_SOAK_REPORT`` as JSON when set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

import pytest

SOAK = os.environ.get("SKILLWEAVE_SOAK") == "1"
"""True under ``make soak``: the full scale."""

_T = TypeVar("_T")


def scale(ci: _T, soak: _T) -> _T:
    """`soak` under ``make soak``, else `ci`."""
    return soak if SOAK else ci


@dataclass
class Figure:
    """What one reliability test measured (None: does not apply)."""

    test: str
    runs: int | None = None
    kills: int | None = None
    scripts_run: int | None = None
    scripts_expected: int | None = None
    failures: int | None = None
    steps_per_second: float | None = None
    p95_step_ms: float | None = None
    note: str = ""


_FIGURES: list[Figure] = []


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Callable[..., None]:
    """Record this test's figures: ``figures(runs=20, kills=9, ...)``."""

    def record(**values: object) -> None:
        _FIGURES.append(Figure(test=request.node.name, **values))  # type: ignore[arg-type]

    return record


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _FIGURES:
        return
    columns = ["test", "runs", "kills", "scripts run / expected", "failures", "steps/s", "p95 ms"]
    rows = [
        [
            figure.test,
            _cell(figure.runs),
            _cell(figure.kills),
            (
                f"{figure.scripts_run} / {figure.scripts_expected}"
                if figure.scripts_expected is not None
                else "-"
            ),
            _cell(figure.failures),
            _cell(figure.steps_per_second),
            _cell(figure.p95_step_ms),
        ]
        for figure in _FIGURES
    ]
    widths = [max(len(row[i]) for row in [columns, *rows]) for i in range(len(columns))]
    terminalreporter.section(f"reliability figures ({'soak' if SOAK else 'CI'} scale)")
    for row in [columns, ["-" * w for w in widths], *rows]:
        terminalreporter.write_line(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        )
    for figure in _FIGURES:
        if figure.note:
            terminalreporter.write_line(f"{figure.test}: {figure.note}")
    report = os.environ.get("SKILLWEAVE_SOAK_REPORT")
    if report:
        Path(report).write_text(json.dumps([asdict(f) for f in _FIGURES], indent=2) + "\n")
