"""Waiting is visible (issue 41 item 5): the ``waiting`` note and its line, the one rule of when
a wait is told (:class:`WaitsTold`), the direct engine telling its run's waits as they happen,
and the Temporal follower reading them from the pending activities (heartbeat details holding
a :class:`Waiting`, a first attempt no worker took) without mistaking a wait for a retry or a
retry for a wait; and a query nobody answers while other workers poll. Against real servers:
tests/integration/temporal/test_waiting_visible.py."""

from __future__ import annotations

import asyncio
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.api.failure.v1 import Failure
from temporalio.api.workflow.v1 import PendingActivityInfo, PendingWorkflowTaskInfo
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCStatusCode

from skillweave.agent import AgentSpec
from skillweave.cli.view import EventView
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.engines.converter import data_converter
from skillweave.engines.notes import WAIT_RETELL_SECONDS, FollowNote, WaitsTold, note_line
from skillweave.engines.retries import Backoff, RetryNotice
from skillweave.engines.temporal import TemporalEngine, _follow, _pending
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from skillweave.waiting import Waiting, tell_waiting
from tests.agent.harness import FakeSandbox, sample_library
from tests.engines.test_temporal_engine import RUN, FakeClient, FakeHandle, FakeServer, _event, _rpc

SINCE = datetime(2026, 12, 6, 7, 31, 2, tzinfo=UTC)
MANAGER = Waiting(
    on="manager",
    detail="cannot connect to http://127.0.0.1:9/: connection refused",
    since=SINCE,
    call="script test-tools/scripts/echo.py",
)


# --- the note -----------------------------------------------------------------------------------


def test_a_waiting_note_is_the_waits_line_in_every_view() -> None:
    note = FollowNote.waiting_on(RUN, MANAGER, task_queue="tq")
    assert (note.kind, note.run_id, note.task_queue, note.waiting) == (
        "waiting",
        RUN,
        "tq",
        MANAGER,
    )
    line = note_line(note)
    assert (line.label, line.tone) == ("waiting", "warn")
    assert line.text.startswith(
        "script test-tools/scripts/echo.py: waiting for the MCP manager since 07:31:02 UTC ("
    )
    assert line.text.endswith("s): cannot connect to http://127.0.0.1:9/: connection refused")
    # As it was told: how long it had lasted then, not when a late reader reads it.
    assert line.text == note.detail
    # The live view and `runs logs` print it with its label; it round-trips through JSON (the
    # API's stream and its reader).
    console = Console(width=300, record=True, color_system=None)
    console.print(EventView.note_line(note), soft_wrap=True)
    assert console.export_text().strip() == f"waiting · {note.detail}"
    assert FollowNote.model_validate_json(note.model_dump_json()) == note


def test_a_wait_is_told_when_it_begins_and_again_while_it_lasts() -> None:
    now = [100.0]
    waits = WaitsTold(clock=lambda: now[0])
    assert waits.due(MANAGER)
    assert not waits.due(MANAGER)
    now[0] += WAIT_RETELL_SECONDS - 1
    assert not waits.due(MANAGER)
    now[0] += 1
    assert waits.due(MANAGER)  # it goes on: told again
    # Another wait (another cause, another start, another step) is told at once.
    assert waits.due(MANAGER.model_copy(update={"detail": "401: wrong token"}))
    assert waits.due(MANAGER.model_copy(update={"since": SINCE + timedelta(minutes=1)}))
    assert waits.due(MANAGER, step="run-1/7")


# --- the direct engine --------------------------------------------------------------------------


def _services(tmp_path: Path, script: str) -> AgentServices:
    store = LocalArtifactStore(tmp_path / "store")
    return AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=ScriptedProvider.from_yaml(textwrap.dedent(script)),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )


async def test_the_direct_engine_tells_each_wait_of_a_run_and_keeps_the_current_one(
    tmp_path: Path,
) -> None:
    services = _services(
        tmp_path,
        """
        turns:
          - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
          - say: done
        """,
    )
    gate = asyncio.Event()
    seen_waiting: list[list[Waiting]] = []
    load_skill = services.load_skill

    async def waits_for_the_manager(request: Any) -> Any:
        # What a caller of the manager does while it does not answer: tell, tell again, wait.
        tell_waiting(MANAGER)
        tell_waiting(MANAGER)  # the same wait, told again at once: one note
        await gate.wait()
        tell_waiting(None)
        return await load_skill(request)

    services.load_skill = waits_for_the_manager  # type: ignore[method-assign]
    engine = DirectEngine(services, backoff=Backoff(initial=0.001))
    run = await engine.start(RunRequest(run_id="waits", task="t", agent=AgentSpec()))
    items: list[Any] = []
    async for item in engine.follow(run):
        items.append(item)
        if item.kind == "waiting":
            seen_waiting.append(await engine.waiting(run))
            gate.set()
    assert (await engine.result(run)).status == "completed"
    notes = [item for item in items if isinstance(item, FollowNote)]
    assert [note.kind for note in notes] == ["waiting"]
    assert notes[0].waiting == MANAGER
    assert notes[0].run_id == run
    assert seen_waiting == [[MANAGER]]
    assert await engine.waiting(run) == []  # over once the call went on
    # The note sits between the steps, where it was told.
    kinds = [item.kind for item in items]
    assert kinds.index("waiting") < kinds.index("skill_activated")


async def test_a_direct_call_that_ends_without_saying_its_wait_ended_waits_no_more(
    tmp_path: Path,
) -> None:
    services = _services(tmp_path, "turns: [{say: done}]")
    gate = asyncio.Event()
    invoke = services.invoke_model

    async def waits_then_answers(request: Any) -> Any:
        tell_waiting(MANAGER.model_copy(update={"on": "model"}))
        await gate.wait()
        return await invoke(request)

    services.invoke_model = waits_then_answers  # type: ignore[method-assign]
    engine = DirectEngine(services)
    run = await engine.start(RunRequest(run_id="ends", task="t", agent=AgentSpec()))
    async for item in engine.follow(run):
        if item.kind == "waiting":
            assert [w.on for w in await engine.waiting(run)] == ["model"]
            gate.set()
        if item.kind == "answered":
            assert await engine.waiting(run) == []
    assert (await engine.result(run)).status == "completed"


# --- the Temporal follower ----------------------------------------------------------------------


async def _details(pending: PendingActivityInfo, said: RetryNotice | Waiting) -> None:
    # What activities.agent heartbeats: the line, then the fields.
    payloads = await data_converter(None).encode([said.line(), said.model_dump(mode="json")])
    pending.heartbeat_details.payloads.extend(payloads)


def _started(activity_id: str, *, attempt: int = 1) -> PendingActivityInfo:
    pending = PendingActivityInfo(
        activity_id=activity_id,
        attempt=attempt,
        maximum_attempts=3,
        state=PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
    )
    pending.activity_type.name = "run_skill_script"
    started = datetime.now(UTC) - timedelta(seconds=20)
    pending.last_started_time.FromDatetime(started)
    pending.last_heartbeat_time.FromDatetime(started + timedelta(seconds=1))
    return pending


def _scheduled(activity_id: str, *, ago: float) -> PendingActivityInfo:
    pending = PendingActivityInfo(
        activity_id=activity_id,
        attempt=1,
        maximum_attempts=3,
        state=PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED,
    )
    pending.activity_type.name = "run_skill_script"
    pending.scheduled_time.FromDatetime(datetime.now(UTC) - timedelta(seconds=ago))
    return pending


class Pollers:
    """The task queue's pollers as ``describe_task_queue`` gives them."""

    def __init__(self, *ages: timedelta) -> None:
        self.ages = ages

    async def describe_task_queue(self, _request: Any) -> Any:
        pollers = []
        for age in self.ages:
            poller = SimpleNamespace(identity=f"worker-{age}", last_access_time=SimpleNamespace())
            at = (datetime.now(UTC) - age).replace(tzinfo=None)
            poller.last_access_time.ToDatetime = lambda at=at: at
            pollers.append(poller)
        return SimpleNamespace(pollers=pollers)


def _engine(server: FakeServer, pollers: Pollers | None = None) -> TemporalEngine:
    client = FakeClient(server)
    client.data_converter = data_converter(None)  # type: ignore[attr-defined]
    client.workflow_service = pollers or Pollers()  # type: ignore[attr-defined]
    return TemporalEngine(client, task_queue="tq", poll_seconds=0.01)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_pending, "RETRY_POLL_SECONDS", 0.01)
    monkeypatch.setattr(_follow, "WAIT_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(_follow, "WAIT_NOTE_SECONDS", 0.05)


async def test_the_temporal_follower_tells_a_wait_from_the_heartbeat_once_per_wait() -> None:
    server = FakeServer(events=[_event("run_started", 0)])
    waiting = _started("4")
    await _details(waiting, MANAGER)
    server.pending = [waiting]
    seen: list[Any] = []

    def describes() -> int:
        return len([call for call in server.calls if call[0] == "describe"])

    async def another_wait_later(after: int) -> None:
        # Read again and again while it lasts: not told again (within 30 s); another wait
        # of the same step is.
        while describes() < after + 10:
            await asyncio.sleep(0.01)
        other = _started("4")
        await _details(other, MANAGER.model_copy(update={"detail": "401: wrong token"}))
        server.pending = [other]

    later: asyncio.Task[None] | None = None
    async for item in _engine(server).follow(RUN):
        seen.append(item)
        if item.kind == "waiting" and later is None:
            later = asyncio.create_task(another_wait_later(describes()))
        elif item.kind == "waiting":
            server.pending = []
            server.events += [_event("script_ran", 1), _event("run_finished", 2)]
    assert later is not None
    await later
    assert [item.kind for item in seen] == [
        "run_started",
        "waiting",
        "waiting",
        "script_ran",
        "run_finished",
    ]
    notes = [item for item in seen if isinstance(item, FollowNote)]
    assert [note.waiting.detail for note in notes if note.waiting] == [
        MANAGER.detail,
        "401: wrong token",
    ]
    assert all(note.task_queue == "tq" and note.run_id == RUN for note in notes)


async def test_a_wait_is_not_a_retry_nor_a_retry_a_wait() -> None:
    server = FakeServer(events=[_event("run_started", 0)])
    # A second attempt, its first failed, waiting now: the retry is told from the description
    # (its heartbeat holds a wait, not the notice), and the wait as a wait.
    retried_waiting = _started("4", attempt=2)
    retried_waiting.last_failure.CopyFrom(Failure(message="manager gone"))
    await _details(retried_waiting, MANAGER)
    # A running attempt whose heartbeat holds a retry notice: no wait.
    notice = RetryNotice(call="model openai:x", attempt=1, attempts=3, cause="HTTP 503")
    told_retry = _started("5")
    await _details(told_retry, notice)
    # A wait left in the details by an earlier attempt (the beat is older than this attempt's
    # start): not told.
    stale = _started("6", attempt=1)
    await _details(stale, MANAGER.model_copy(update={"detail": "stale"}))
    stale.last_heartbeat_time.FromDatetime(datetime.now(UTC) - timedelta(minutes=5))
    server.pending = [retried_waiting, told_retry, stale]
    items = [item async for item in _engine(server).follow(RUN, until_finished=False)]
    notes = [item for item in items if isinstance(item, FollowNote)]
    assert [note.kind for note in notes] == ["retrying", "waiting"]
    retry, wait = notes
    assert retry.retry is not None
    assert retry.retry.call == "run_skill_script"  # from the description, not the wait
    assert retry.retry.cause == "manager gone"
    assert wait.waiting == MANAGER


async def test_a_first_attempt_no_worker_takes_waits_for_a_worker() -> None:
    server = FakeServer(events=[_event("run_started", 0)])
    taken_soon = _scheduled("3", ago=1)  # just scheduled: not a wait yet
    untaken = _scheduled("4", ago=30)
    untaken.activity_options.task_queue.name = "tq-activities"
    server.pending = [taken_soon, untaken]
    items = [item async for item in _engine(server).follow(RUN, until_finished=False)]
    notes = [item for item in items if isinstance(item, FollowNote)]
    assert [note.kind for note in notes] == ["waiting"]
    wait = notes[0].waiting
    assert wait is not None
    assert (wait.on, wait.call) == ("worker", "run_skill_script")
    assert wait.detail == "no worker has taken it from task queue 'tq-activities'"
    assert abs((wait.since - (datetime.now(UTC) - timedelta(seconds=30))).total_seconds()) < 5
    assert note_line(notes[0]).text.startswith("run_skill_script: waiting for a worker since ")


async def test_waiting_reads_the_description_for_runs_show(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeServer()
    waiting = _started("4")
    await _details(waiting, MANAGER)
    server.pending = [waiting, _scheduled("5", ago=30)]
    status = [WorkflowExecutionStatus.RUNNING]

    async def describe(self: FakeHandle, **kwargs: Any) -> Any:
        raw = SimpleNamespace(
            pending_activities=list(self.server.pending),
            execution_config=SimpleNamespace(task_queue=SimpleNamespace(name="tq-routed")),
            pending_workflow_task=PendingWorkflowTaskInfo(),
        )
        return SimpleNamespace(run_id="run-1", raw_description=raw, status=status[0])

    monkeypatch.setattr(FakeHandle, "describe", describe)
    engine = _engine(server)
    found = await engine.waiting(RUN)
    assert [w.on for w in found] == ["manager", "worker"]
    assert found[0] == MANAGER
    assert found[1].detail == "no worker has taken it from task queue 'tq-routed'"
    status[0] = WorkflowExecutionStatus.COMPLETED
    assert await engine.waiting(RUN) == []


async def test_a_query_nobody_answers_while_workers_poll_says_the_run_moves_to_them() -> None:
    no_answer = _rpc(RPCStatusCode.CANCELLED, "Timeout expired")
    for pollers, said in (
        (
            Pollers(timedelta(seconds=2), timedelta(minutes=10)),
            "the worker holding the run has not answered for 0 s; task queue 'tq' has 1 worker "
            "polling: one takes the run over when the server moves it",
        ),
        (Pollers(), "none answered on task queue 'tq' for 0 s; the run goes on when one polls"),
    ):
        server = FakeServer(query_error=no_answer)
        async for item in _engine(server, pollers).follow(RUN):
            assert item.kind == "waiting_for_worker"
            assert isinstance(item, FollowNote)
            assert note_line(item).text == said
            break
