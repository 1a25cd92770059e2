"""How `skillweave run` decides a direct run's approvals (:mod:`skillweave.cli.direct_approvals`):
the answer read as a decision, a terminal asked while the live view holds still, none denied at
once, each decision by this CLI's user. The engine is a fake that records what it is told; the
subprocess tests are in tests/integration/cli/test_direct_approvals.py."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

import pytest

from skillweave.agent import AgentEvent, ApprovalDecision
from skillweave.cli.audit_writer import cli_actor
from skillweave.cli.direct_approvals import (
    NO_TERMINAL,
    PROMPT,
    DirectApprovals,
    deciding,
    decision_of,
)
from skillweave.cli.view import RunOutput
from skillweave.engines import DirectEngine
from skillweave.errors import AgentError


class FakeEngine:
    """Records each decision; `ended` answers as an engine whose run has ended."""

    def __init__(self, *, ended: bool = False) -> None:
        self.decided: list[tuple[str, ApprovalDecision]] = []
        self.ended = ended

    async def approve(self, run_id: str, decision: ApprovalDecision) -> None:
        if self.ended:
            raise AgentError(f"run {run_id!r} is not waiting for an approval")
        self.decided.append((run_id, decision))


def _event(kind: str) -> AgentEvent:
    return AgentEvent(kind=kind, run_id="r1", turn=2, at=0.0, detail="s/scripts/x.py")


async def _decided(approvals: DirectApprovals, *kinds: str) -> None:
    for kind in kinds:
        approvals.event(_event(kind))
    for _ in range(200):
        if not approvals._deciding:
            return
        await asyncio.sleep(0.01)
    pytest.fail("the decision was never made")


@pytest.mark.parametrize(
    ("answer", "approved", "note"),
    [
        ("y", True, ""),
        ("YES  fine by me ", True, "fine by me"),
        ("n nope", False, "nope"),
        ("", False, ""),  # the default is no
        ("sure", False, ""),  # only y or yes approve
    ],
)
def test_an_answer_is_a_decision(answer: str, approved: bool, note: str) -> None:
    decision = decision_of(answer, by="cli:me@here")
    assert (decision.approved, decision.note, decision.by) == (approved, note, "cli:me@here")


def test_the_end_of_the_input_denies_saying_so() -> None:
    decision = decision_of(None, by="cli:me@here")
    assert not decision.approved
    assert "Ctrl-D" in decision.note


def test_a_long_note_is_kept_to_what_a_decision_holds() -> None:
    assert len(decision_of("n " + "x" * 5_000, by="b").note) == 2_000


async def test_without_a_terminal_each_approval_is_denied_at_once_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine = FakeEngine()
    approvals = DirectApprovals(cast(DirectEngine, engine), "r1", interactive=False)
    await _decided(approvals, "script_ran", "approval_requested")
    assert engine.decided == [
        ("r1", ApprovalDecision(approved=False, note=NO_TERMINAL, by=cli_actor()))
    ]
    assert NO_TERMINAL in capsys.readouterr().err.replace("\n", " ")


async def test_on_a_terminal_the_answer_decides_while_the_view_holds_still(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("n not this one\n"))
    paused: list[str] = []

    @contextmanager
    def pause() -> Iterator[None]:
        paused.append("held")
        yield
        paused.append("let go")

    engine = FakeEngine()
    approvals = DirectApprovals(cast(DirectEngine, engine), "r1", pause=pause, interactive=True)
    await _decided(approvals, "approval_requested")
    assert engine.decided == [
        ("r1", ApprovalDecision(approved=False, note="not this one", by=cli_actor()))
    ]
    assert paused == ["held", "let go"]
    assert PROMPT.strip() in capsys.readouterr().err


async def test_a_run_that_ended_before_the_decision_is_left_alone() -> None:
    engine = FakeEngine(ended=True)
    approvals = DirectApprovals(cast(DirectEngine, engine), "r1", interactive=False)
    await _decided(approvals, "approval_requested")  # no error escapes
    assert engine.decided == []


async def test_a_question_decided_elsewhere_ends_and_its_read_answers_the_next(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The approval timed out while asked: the question ends on a line of its own, and the line
    the person types next answers the next approval (a thread's read cannot be taken back)."""
    typed = threading.Event()

    class Typing(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            typed.wait(timeout=10)
            return "y\n"

    monkeypatch.setattr("sys.stdin", Typing())
    engine = FakeEngine()
    approvals = DirectApprovals(cast(DirectEngine, engine), "r1", interactive=True)
    approvals.event(_event("approval_requested"))
    await asyncio.sleep(0.05)
    capsys.readouterr()
    approvals.event(_event("approval_decided"))  # by its timeout
    assert capsys.readouterr().err == "\n"
    await _decided(approvals)
    assert engine.decided == []
    approvals.event(_event("approval_requested"))
    typed.set()
    await _decided(approvals)
    assert engine.decided == [("r1", ApprovalDecision(approved=True, by=cli_actor()))]


def test_only_a_direct_engine_s_events_are_decided_here() -> None:
    shown = RunOutput(as_json=True, out_dir=None)
    assert deciding(cast(DirectEngine, FakeEngine()), "r1", shown) == shown.event
