"""The line `dev` and `worker` end with when stopped: what was left in flight, and its fate."""

from __future__ import annotations

from skillweave.cli.in_flight import stopped_line

WHAT = "worker, MCP manager, Temporal"


def test_nothing_in_flight_is_the_short_line() -> None:
    assert stopped_line(WHAT, [], resumes="at the next `skillweave dev`") == f"stopped: {WHAT}"


def test_runs_in_flight_are_named_with_when_they_resume() -> None:
    runs = [f"run-{n}" for n in range(5)]
    assert stopped_line(WHAT, runs[:1], resumes="at the next `skillweave dev`") == (
        f"stopped: {WHAT}; 1 run was in flight: run-0 (it resumes at the next `skillweave dev`)"
    )
    assert stopped_line("worker", runs, resumes="when a worker for task queue 'q' starts") == (
        "stopped: worker; 5 runs were in flight: run-0, run-1, run-2 and 2 more (they resume"
        " when a worker for task queue 'q' starts)"
    )


def test_an_in_memory_server_takes_them_with_it() -> None:
    assert stopped_line(WHAT, ["run-a", "run-b"], resumes=None) == (
        f"stopped: {WHAT}; 2 runs were in flight, gone with the in-memory state (--ephemeral):"
        " run-a, run-b"
    )


def test_a_server_that_did_not_answer_is_said() -> None:
    assert stopped_line(WHAT, None, resumes=None) == (
        f"stopped: {WHAT}; the runs in flight could not be listed (`skillweave runs list` shows"
        " them)"
    )
