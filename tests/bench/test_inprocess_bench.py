"""The in-process benchmark's arithmetic (how steps are cut from model-call times, summed up
per framework and length, and judged against the fastest peer), and a real smoke run of
skillweave's side, which is all that runs without the peers (they live in ``.venv-bench``)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from bench import inprocess_bench
from bench.inprocess_bench import (
    SKILLWEAVE,
    TARGET_STEPS,
    Clock,
    Figures,
    RunRecord,
    figures,
    step_ms,
    verdicts,
)


def _row(framework: str, steps: int, p50: float) -> Figures:
    return Figures(framework, steps, runs=1, step_p50=p50, step_p95=p50, wall_p50=p50, cpu_p50=p50)


def test_a_step_runs_from_one_model_call_to_the_next() -> None:
    assert step_ms([1.0, 1.002, 1.005]) == pytest.approx([2.0, 3.0])


def test_the_calls_before_the_first_tool_call_are_not_steps() -> None:
    # skillweave's activation turn comes before the first read.
    assert step_ms([0.0, 1.0, 1.002, 1.005], calls_before=1) == pytest.approx([2.0, 3.0])
    assert step_ms([1.0]) == []


def test_the_clock_keeps_the_calls_of_one_run() -> None:
    clock = Clock()
    clock.tick()
    clock.tick()
    assert len(clock.calls) == 2
    assert clock.calls[0] <= clock.calls[1]
    clock.reset()
    assert clock.calls == []


def test_figures_are_percentiles_of_every_step_and_per_step_wall_and_cpu() -> None:
    records = [
        RunRecord(SKILLWEAVE, 2, (1.0, 3.0), wall=0.010, cpu=0.004),
        RunRecord(SKILLWEAVE, 2, (2.0, 10.0), wall=0.020, cpu=0.006),
    ]
    found = figures(SKILLWEAVE, 2, records)
    assert (found.step_p50, found.step_p95) == (2.0, 10.0)
    assert found.wall_p50 == pytest.approx(5.0)  # nearest rank of 5 and 10 ms a step
    assert found.cpu_p50 == pytest.approx(2.0)
    assert found.runs == 2


def test_a_run_with_a_missed_model_call_is_an_error_not_a_figure() -> None:
    with pytest.raises(RuntimeError, match="1 steps measured"):
        figures(SKILLWEAVE, 2, [RunRecord(SKILLWEAVE, 2, (1.0,), wall=0.01, cpu=0.01)])


def test_skillweave_is_judged_against_the_fastest_peer_at_each_length() -> None:
    rows = [
        _row(SKILLWEAVE, 10, 3.0),
        _row("pydantic-ai", 10, 2.0),
        _row("openai-agents", 10, 1.5),
        _row(SKILLWEAVE, TARGET_STEPS, 2.0),
        _row("pydantic-ai", TARGET_STEPS, 2.5),
        _row("openai-agents", TARGET_STEPS, 4.0),
        _row(SKILLWEAVE, 100, 1.0),  # no peer at 100: no verdict
    ]
    found = verdicts(rows)
    assert [(v.steps, v.peer, v.met) for v in found] == [
        (10, "openai-agents", False),
        (TARGET_STEPS, "pydantic-ai", True),
    ]
    assert found[0].ratio == pytest.approx(2.0)
    assert found[1].ratio == pytest.approx(0.8)


def test_skillweave_alone_runs_and_says_the_peers_are_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(inprocess_bench, "PEERS_INSTALLED", False)
    monkeypatch.setattr(inprocess_bench, "Console", lambda: Console(file=out, width=200))
    assert inprocess_bench.main(["--lengths", "3", "--runs", "1", "--markdown"]) == 0
    text = out.getvalue()
    assert "the peers are not installed here" in text
    assert "| skillweave | 3 | 1 |" in text
    assert "load average at the end" in text
