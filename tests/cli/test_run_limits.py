"""``runs show`` says the limits a run's steps run under, its worker's (``RunView.limits``, issue
41 item 4): one ``limits:`` line when the run has asked for them, none before (or for a run
recorded before the worker owned its limits). A real ``runs show`` on Temporal, directly and
through the API, is tests/integration/temporal/test_waiting_visible.py."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from skillweave.cli import run_report
from skillweave.engines.contract import ActivityTimeouts, RunView
from skillweave.llm.messages import Usage


def _shown(monkeypatch: pytest.MonkeyPatch, limits: ActivityTimeouts | None) -> str:
    buffer = io.StringIO()
    monkeypatch.setattr(run_report, "out", Console(file=buffer, width=200, color_system=None))
    view = RunView(
        run_id="run-1",
        agent="a",
        task="t",
        phase="running_script",
        status="running",
        turn=1,
        script_runs=0,
        usage=Usage(),
        limits=limits,
    )
    run_report.print_view(view, None)
    return buffer.getvalue()


def test_the_workers_limits_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _shown(monkeypatch, ActivityTimeouts())
    assert (
        "limits: model 600 s, script 900 s, heartbeat 30 s, others 120 s, 8 attempts "
        "(the worker's)\n"
    ) in shown


def test_fractions_and_one_attempt_are_said_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = ActivityTimeouts(
        model_seconds=2.5, script_seconds=60, heartbeat_seconds=0.5, short_seconds=10,
        max_attempts=1,
    )  # fmt: skip
    assert run_report.limits_line(limits) == (
        "limits: model 2.5 s, script 60 s, heartbeat 0.5 s, others 10 s, 1 attempt (the worker's)"
    )
    assert run_report.limits_line(limits) in _shown(monkeypatch, limits)


def test_a_run_that_has_not_asked_says_no_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "limits:" not in _shown(monkeypatch, None)
