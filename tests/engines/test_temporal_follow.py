"""`TemporalEngine.follow` and `events` against a fake Temporal client while no worker answers:
a query that times out or finds no poller is a wait (noted, not an end), the follower goes on
from the same index once a worker answers, and gives up with `NoWorkerError` only after its
bound. The same against a real server and killed workers is in
tests/integration/temporal/test_followers_outlive_workers.py."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from temporalio.exceptions import TerminatedError
from temporalio.service import RPCStatusCode

from skillweave.agent.events import AgentEvent
from skillweave.engines.temporal import FollowNote, NoWorkerError, TemporalEngine, _follow
from skillweave.errors import AgentError
from tests.engines.test_temporal_engine import RUN, FakeClient, FakeServer, _event, _rpc

NO_ANSWERS = {
    "client deadline": _rpc(RPCStatusCode.CANCELLED, "Timeout expired"),
    "server deadline": _rpc(RPCStatusCode.DEADLINE_EXCEEDED, "context deadline exceeded"),
    "no poller": _rpc(
        RPCStatusCode.FAILED_PRECONDITION,
        "no poller seen for task queue recently, worker may be down",
    ),
}
"""What a Temporal server (1.32) answers a query while no worker polls the task queue."""


@pytest.fixture(autouse=True)
def _fast_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_follow, "WAIT_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(_follow, "WAIT_NOTE_SECONDS", 0.05)


class NoPollers:
    """A task queue nobody polls (what a follower reads while no worker answers)."""

    async def describe_task_queue(self, _request: Any) -> Any:
        return SimpleNamespace(pollers=[])


def _engine(server: FakeServer, *, worker_wait: float = 3600.0) -> TemporalEngine:
    client = FakeClient(server)
    client.workflow_service = NoPollers()  # type: ignore[attr-defined]
    return TemporalEngine(
        client,  # type: ignore[arg-type]
        task_queue="tq",
        poll_seconds=0.01,
        worker_wait_seconds=worker_wait,
    )


def _kinds(items: list[AgentEvent | FollowNote]) -> list[str]:
    return [item.kind for item in items]


@pytest.mark.parametrize("no_answer", NO_ANSWERS.values(), ids=NO_ANSWERS.keys())
async def test_a_follower_waits_while_no_worker_answers_then_reads_on(
    no_answer: Exception,
) -> None:
    server = FakeServer(events=[_event("run_started", 0)])
    seen: list[AgentEvent | FollowNote] = []
    async for item in _engine(server).follow(RUN):
        seen.append(item)
        if item.kind == "run_started":
            server.query_error = no_answer  # the worker is killed
        elif _kinds(seen).count("waiting_for_worker") == 3:
            server.query_error = None  # a new worker polls; the run went on meanwhile
            server.events += [_event("model_called", 1), _event("run_finished", 2)]
    assert _kinds(seen) == [
        "run_started",
        *["waiting_for_worker"] * 3,
        "worker_answered",
        "model_called",
        "run_finished",
    ]
    notes = [item for item in seen if isinstance(item, FollowNote)]
    assert all(note.task_queue == "tq" and note.run_id == RUN for note in notes)
    waited = [note.waited_seconds for note in notes]
    # Repeated while it lasts, at most every WAIT_NOTE_SECONDS, each saying for how long.
    assert waited == sorted(waited)
    assert waited[2] - waited[1] >= 0.05 - 0.01
    # Asked again and again from where it was: the events after run_started, once each.
    afters = [args[0] for name, args in server.calls if name == "query:events"]
    assert afters[0] == 0
    assert len(afters) > 4
    assert set(afters[1:]) == {1}


async def test_events_without_notes_also_outlive_the_worker() -> None:
    server = FakeServer(events=[_event("run_started", 0)])
    seen: list[str] = []
    queries = 0

    async for event in _engine(server).events(RUN):
        seen.append(event.kind)
        if event.kind == "run_started":
            server.query_error = NO_ANSWERS["no poller"]
            queries = len(server.calls)
            asyncio.get_running_loop().call_later(0.2, _worker_back, server)
    assert seen == ["run_started", "model_called", "run_finished"]
    assert len(server.calls) - queries > 2  # it kept asking while no worker answered


def _worker_back(server: FakeServer) -> None:
    server.query_error = None
    server.events += [_event("model_called", 1), _event("run_finished", 2)]


async def test_a_follower_gives_up_after_its_bound_saying_the_run_may_still_run() -> None:
    server = FakeServer(events=[_event("run_started", 0)])
    seen: list[str] = []

    async def follow() -> None:
        async for item in _engine(server, worker_wait=0.3).follow(RUN):
            seen.append(item.kind)
            server.query_error = NO_ANSWERS["client deadline"]

    with pytest.raises(NoWorkerError) as raised:
        await follow()
    error = raised.value
    assert seen[0] == "run_started"
    assert set(seen[1:]) == {"waiting_for_worker"}
    assert error.run_id == RUN
    assert error.task_queue == "tq"
    assert error.waited_seconds is not None
    assert error.waited_seconds >= 0.3
    assert "may still be running" in str(error)
    assert isinstance(error, AgentError)


async def test_a_bound_of_zero_waits_for_ever() -> None:
    server = FakeServer(query_error=NO_ANSWERS["no poller"])
    async for item in _engine(server, worker_wait=0).follow(RUN):
        assert isinstance(item, FollowNote)
        assert item.kind == "waiting_for_worker"
        if item.waited_seconds > 0.5:
            break


async def test_a_run_that_closes_while_no_worker_answers_ends_the_follow() -> None:
    """Terminated while its worker is gone: nothing more to read (the result comes from
    history), and no error."""
    server = FakeServer(events=[_event("run_started", 0)], outcome=TerminatedError("by ops"))
    seen: list[str] = []
    async for item in _engine(server).follow(RUN):
        seen.append(item.kind)
        server.query_error = NO_ANSWERS["server deadline"]
        if item.kind == "waiting_for_worker":
            server.closed.set()
    assert seen[0] == "run_started"
    assert set(seen[1:]) == {"waiting_for_worker"}


async def test_other_query_failures_still_end_the_follow() -> None:
    server = FakeServer(query_error=_rpc(RPCStatusCode.NOT_FOUND, "workflow not found for ID: x"))
    with pytest.raises(AgentError, match="no run 'run-1'") as raised:
        [item async for item in _engine(server).follow(RUN)]
    assert not isinstance(raised.value, NoWorkerError)


async def test_dropped_events_are_noted_and_until_finished_false_reads_one_page() -> None:
    class Windowed(FakeServer):
        def page(self, after: int) -> Any:
            page = super().page(after)
            return page.model_copy(update={"dropped": 4})

    server = Windowed(events=[_event("run_started", 0), _event("model_called", 1)])
    items = [item async for item in _engine(server).follow(RUN, until_finished=False)]
    assert _kinds(items) == ["events_dropped", "run_started", "model_called"]
    assert isinstance(items[0], FollowNote)
    assert items[0].dropped == 4


async def test_one_status_query_nobody_answers_still_fails_at_once() -> None:
    server = FakeServer(query_error=NO_ANSWERS["no poller"])
    with pytest.raises(NoWorkerError, match=r"no worker answered in time.*task queue 'tq'"):
        await _engine(server).status(RUN)
