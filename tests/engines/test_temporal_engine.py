"""`TemporalEngine` against a fake Temporal client: what it asks the server and how it maps the
answers (errors, closed workflows, rejected updates). The engine against a real server and
worker is tested in tests/integration/temporal."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import PollerInfo
from temporalio.api.workflow.v1 import PendingWorkflowTaskInfo
from temporalio.api.workflowservice.v1 import DescribeTaskQueueResponse
from temporalio.client import (
    WorkflowExecution,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
)
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import (
    ApplicationError,
    CancelledError,
    TerminatedError,
    TimeoutType,
    WorkflowAlreadyStartedError,
)
from temporalio.exceptions import TimeoutError as WorkflowTimeoutError
from temporalio.service import RPCError, RPCStatusCode

from skillweave.agent.effect_models import ApprovalDecision, ApprovalRequest
from skillweave.agent.events import AgentEvent
from skillweave.agent.spec import AgentSpec
from skillweave.config import WORKER_LIMITS, WorkflowSettings, worker_limits_set
from skillweave.engines.base import RunRequest, RunResult
from skillweave.engines.contract import (
    SA_ACTIVE_SKILLS,
    SA_AGENT,
    SA_PHASE,
    SA_TOKENS,
    SA_TURNS,
    SEARCH_ATTRIBUTES,
    ActivityTimeouts,
    AgentWorkflowInput,
    EventPage,
    Reply,
    RunView,
    UserMessage,
    activity_timeouts,
    workflow_id,
)
from skillweave.engines.temporal import (
    RunRow,
    TemporalEngine,
    details_of,
    runs_query,
    summary_of,
    ui_link,
    worker_identity,
)
from skillweave.errors import AgentError, ConfigError
from skillweave.llm.messages import Usage

RUN = "run-1"
WID = workflow_id(RUN)
STORE = "0123456789abcdef"


def _rpc(status: RPCStatusCode, message: str) -> RPCError:
    return RPCError(message, status, b"")


def _event(kind: str, index: int) -> AgentEvent:
    return AgentEvent(kind=kind, run_id=RUN, turn=index, at=float(index))  # type: ignore[arg-type]


def _view(**update: Any) -> RunView:
    base = RunView(
        run_id=RUN,
        agent="demo",
        task="t",
        phase="thinking",
        status="running",
        turn=3,
        script_runs=1,
        usage=Usage(input_tokens=10, output_tokens=5),
        active_skills={"csv-profiler": "abc"},
        answer="partial",
    )
    return base.model_copy(update=update)


@dataclass
class FakeUpdate:
    """An update handle: `outcome` None means accepted and still running."""

    outcome: BaseException | Reply | None
    awaited: bool = False

    @property
    def _known_outcome(self) -> object | None:
        return self.outcome

    async def result(self) -> Reply:
        self.awaited = True
        if self.outcome is None:
            await asyncio.Event().wait()  # the model's answer never comes in these tests
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        assert isinstance(self.outcome, Reply)
        return self.outcome


@dataclass
class FakeServer:
    """What the fake client answers; every call is recorded."""

    events: list[AgentEvent] = field(default_factory=list)
    finished: bool = False
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: BaseException | RunResult | None = None
    view: RunView | BaseException = field(default_factory=_view)
    query_error: BaseException | None = None
    signal_error: BaseException | None = None
    start_error: BaseException | None = None
    update: FakeUpdate = field(default_factory=lambda: FakeUpdate(None))
    update_error: BaseException | None = None
    calls: list[tuple[str, Any]] = field(default_factory=list)
    pending: list[Any] = field(default_factory=list)
    """The workflow's pending activities (``PendingActivityInfo``) its description shows."""

    def page(self, after: int) -> EventPage:
        return EventPage(
            events=tuple(self.events[after:]), next=len(self.events), finished=self.finished
        )


class FakeHandle:
    def __init__(self, server: FakeServer, wid: str, result_type: type | None) -> None:
        self.server = server
        self.id = wid
        self.result_type = result_type

    async def result(self) -> RunResult:
        await self.server.closed.wait()
        if isinstance(self.server.outcome, BaseException):
            raise self.server.outcome
        assert self.server.outcome is not None
        return self.server.outcome

    async def query(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self.server.calls.append((f"query:{name}", args))
        if self.server.query_error is not None:
            raise self.server.query_error
        if name == "events":
            return self.server.page(args[0])
        if isinstance(self.server.view, BaseException):
            raise self.server.view
        return self.server.view

    async def describe(self, **kwargs: Any) -> Any:
        self.server.calls.append(("describe", ()))
        raw = SimpleNamespace(
            pending_activities=list(self.server.pending),
            pending_workflow_task=PendingWorkflowTaskInfo(),  # none pending, as a real answer
        )
        return SimpleNamespace(run_id="run-1", raw_description=raw)

    async def signal(self, name: str, arg: Any) -> None:
        self.server.calls.append((f"signal:{name}", arg))
        if self.server.signal_error is not None:
            raise self.server.signal_error
        if name == "cancel":
            self.server.closed.set()

    async def start_update(self, name: str, arg: Any, **kwargs: Any) -> FakeUpdate:
        self.server.calls.append((f"update:{name}", arg))
        if self.server.update_error is not None:
            raise self.server.update_error
        return self.server.update


class FakeOperator:
    """The operator service of a namespace with skillweave's search attributes registered."""

    async def list_search_attributes(self, _request: Any) -> Any:
        registered = {key.name: int(key.indexed_value_type) for key in SEARCH_ATTRIBUTES}
        return SimpleNamespace(custom_attributes=registered)


class FakeWorkflowService:
    """Task queues with the pollers a test gives them (none by default), by name and type."""

    def __init__(self) -> None:
        self.pollers: dict[tuple[str, int], list[str]] = {}

    async def describe_task_queue(self, request: Any) -> DescribeTaskQueueResponse:
        stamp = Timestamp()
        stamp.FromDatetime(datetime.now(UTC))
        found = self.pollers.get((request.task_queue.name, request.task_queue_type), [])
        return DescribeTaskQueueResponse(
            pollers=[PollerInfo(last_access_time=stamp, identity=name) for name in found]
        )


class FakeClient:
    namespace = "default"

    def __init__(self, server: FakeServer) -> None:
        self.server = server
        self.listed: list[WorkflowExecution] = []
        self.operator_service = FakeOperator()
        self.workflow_service = FakeWorkflowService()

    def get_workflow_handle(self, wid: str, *, result_type: type | None = None) -> FakeHandle:
        return FakeHandle(self.server, wid, result_type)

    async def start_workflow(self, name: str, arg: Any, **kwargs: Any) -> FakeHandle:
        self.server.calls.append(("start", (name, arg, kwargs)))
        if self.server.start_error is not None:
            raise self.server.start_error
        return FakeHandle(self.server, kwargs["id"], None)

    def list_workflows(self, query: str, *, limit: int) -> Any:
        self.server.calls.append(("list", (query, limit)))

        async def rows() -> Any:
            for execution in self.listed[:limit]:
                yield execution

        return rows()


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


@pytest.fixture
def engine(server: FakeServer) -> TemporalEngine:
    return TemporalEngine(
        FakeClient(server),  # type: ignore[arg-type]
        task_queue="tq",
        catalog_mode="auto",
        catalog_top_k=5,
        poll_seconds=0.01,
        store_id=STORE,
    )


def _calls(server: FakeServer, prefix: str) -> list[Any]:
    return [arg for name, arg in server.calls if name.startswith(prefix)]


# --- start ---------------------------------------------------------------------------------


async def test_start_names_the_workflow_by_run_and_labels_it(
    engine: TemporalEngine, server: FakeServer
) -> None:
    spec = AgentSpec(name="analyst", skills=("data-toolkit",))
    request = RunRequest(run_id=RUN, task="Profile\nthe file", agent=spec)
    assert await engine.start(request) == RUN
    ((name, start, options),) = _calls(server, "start")
    assert name == "AgentWorkflow"
    # No limits: the worker owns them (the workflow asks its worker for them).
    started = request.model_copy(update={"store_id": STORE})  # the run carries its store
    assert start == AgentWorkflowInput(request=started, catalog_mode="auto", catalog_top_k=5)
    assert "timeouts" not in start.model_fields_set
    assert start.limits is None
    assert options["id"] == WID
    assert options["task_queue"] == f"tq@{STORE}"  # only this store's workers run it
    assert options["id_reuse_policy"] == WorkflowIDReusePolicy.REJECT_DUPLICATE
    assert options["static_summary"] == "analyst: Profile the file"
    assert "`data-toolkit`" in options["static_details"]
    assert options["search_attributes"] == TypedSearchAttributes(
        [SearchAttributePair(SA_AGENT, "analyst"), SearchAttributePair(SA_PHASE, "starting")]
    )


async def test_a_run_runs_on_the_queue_of_the_store_it_names(
    engine: TemporalEngine, server: FakeServer
) -> None:
    await engine.start(RunRequest(run_id=RUN, task="t", store_id="fedcba9876543210"))
    ((_, _, options),) = _calls(server, "start")
    assert options["task_queue"] == "tq@fedcba9876543210"


async def test_an_engine_with_no_store_starts_no_run(server: FakeServer) -> None:
    """No store, no queue to route the run to: refused, never started on the bare queue."""
    bare = TemporalEngine(FakeClient(server), task_queue="tq")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="this client has no artifact store") as refused:
        await bare.start(RunRequest(run_id=RUN, task="t"))
    assert "\n" not in str(refused.value)
    assert _calls(server, "start") == []
    assert bare.task_queue == "tq"  # nothing routed yet


async def test_a_run_no_worker_of_its_store_would_run_is_refused_naming_the_stores(
    engine: TemporalEngine, server: FakeServer
) -> None:
    roll = engine.client.workflow_service.pollers  # type: ignore[attr-defined]
    roll[("tq", TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)] = [
        worker_identity("aaaaaaaaaaaaaaaa"),
        worker_identity("bbbbbbbbbbbbbbbb"),
    ]
    with pytest.raises(ConfigError) as refused:
        await engine.start(RunRequest(run_id=RUN, task="t"))
    assert str(refused.value) == (
        f"no worker on task queue 'tq' works on this process's store {STORE} (the workers "
        f"there work on aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb): give this process their "
        f"STORAGE__ settings, or start a worker on {STORE}"
    )
    assert _calls(server, "start") == []
    # A worker of its store on its queue: the run starts, whoever else shares the base queue.
    roll[(f"tq@{STORE}", TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)] = [worker_identity(STORE)]
    assert await engine.start(RunRequest(run_id=RUN, task="t")) == RUN
    assert await engine.workers() == 1


async def test_a_run_with_no_worker_at_all_starts_and_waits(
    engine: TemporalEngine, server: FakeServer
) -> None:
    assert await engine.start(RunRequest(run_id=RUN, task="t")) == RUN
    assert await engine.workers() == 0


async def test_a_run_id_used_before_is_refused(engine: TemporalEngine, server: FakeServer) -> None:
    server.start_error = WorkflowAlreadyStartedError(WID, "AgentWorkflow")
    with pytest.raises(AgentError, match="run 'run-1' already exists"):
        await engine.start(RunRequest(run_id=RUN, task="t"))


async def test_a_server_without_the_search_attributes_says_how_to_add_them(
    engine: TemporalEngine, server: FakeServer
) -> None:
    server.start_error = _rpc(
        RPCStatusCode.INVALID_ARGUMENT,
        "Namespace default has no mapping defined for search attribute SkillweaveAgent",
    )
    with pytest.raises(ConfigError, match="skillweave temporal setup"):
        await engine.start(RunRequest(run_id=RUN, task="t"))


def test_summary_is_one_line_of_at_most_200_chars() -> None:
    request = RunRequest(run_id=RUN, task="word\n" * 100, agent=AgentSpec(name="a"))
    summary = summary_of(request)
    assert "\n" not in summary
    assert len(summary) == 200
    assert summary.startswith("a: word word")
    assert summary.endswith("…")


def test_details_name_task_agent_skills_and_limits() -> None:
    spec = AgentSpec(name="a", description="Does things.", skills=("x", "y"))
    details = details_of(RunRequest(run_id=RUN, task="Do it", agent=spec))
    assert f"**Run:** `{RUN}` (`skillweave runs show {RUN}`)" in details  # the id every door knows
    assert "**Task:** Do it" in details
    assert "**Agent:** `a` — Does things." in details
    assert "**Skills allowed:** `x`, `y`" in details
    assert f"{spec.limits.max_turns} turns" in details
    assert "all enabled" in details_of(RunRequest(run_id=RUN, task="t"))


def test_details_name_the_model_the_run_runs_on() -> None:
    named = AgentSpec(model="local")
    assert "**Model:** `local`" in details_of(RunRequest(run_id=RUN, task="t", agent=named))
    plain = details_of(RunRequest(run_id=RUN, task="t"))
    assert "**Model:** the worker's default (MODEL__*)" in plain


# --- events ----------------------------------------------------------------------------------


async def test_events_are_read_by_absolute_index_until_run_finished(
    engine: TemporalEngine, server: FakeServer
) -> None:
    server.events = [_event("run_started", 0), _event("model_called", 1)]
    seen: list[str] = []

    async def more() -> None:
        while len(seen) < 2:
            await asyncio.sleep(0.005)
        server.events += [_event("run_finished", 2), _event("answered", 3)]

    feeder = asyncio.create_task(more())
    async for event in engine.events(RUN):
        seen.append(event.kind)
    await feeder
    assert seen == ["run_started", "model_called", "run_finished"]
    afters = [args[0] for args in _calls(server, "query:events")]
    assert afters[0] == 0
    assert set(afters[1:]) <= {2}


async def test_events_from_an_index(engine: TemporalEngine, server: FakeServer) -> None:
    server.events = [_event("run_started", 0), _event("model_called", 1), _event("run_finished", 2)]
    assert [e.turn async for e in engine.events(RUN, after=1)] == [1, 2]


async def test_events_stop_when_the_workflow_closed_without_run_finished(
    engine: TemporalEngine, server: FakeServer
) -> None:
    server.events = [_event("run_started", 0)]
    server.outcome = TerminatedError("by ops")

    async def close() -> None:
        await asyncio.sleep(0.03)
        server.events.append(_event("model_called", 1))
        server.closed.set()

    closer = asyncio.create_task(close())

    async def read() -> list[str]:
        return [event.kind async for event in engine.events(RUN)]

    kinds = await asyncio.wait_for(read(), timeout=2)
    await closer
    assert kinds == ["run_started", "model_called"]


async def test_events_of_an_unknown_run(engine: TemporalEngine, server: FakeServer) -> None:
    server.query_error = _rpc(RPCStatusCode.NOT_FOUND, "workflow not found for ID: x")
    with pytest.raises(AgentError, match="no run 'run-1'"):
        [event async for event in engine.events(RUN)]


async def test_a_query_nobody_answers_names_the_task_queue(
    engine: TemporalEngine, server: FakeServer
) -> None:
    server.query_error = _rpc(RPCStatusCode.DEADLINE_EXCEEDED, "Timeout expired")
    with pytest.raises(AgentError, match=rf"no worker answered.*task queue 'tq@{STORE}'"):
        await engine.status(RUN)


# --- send, ask, approve, cancel ------------------------------------------------------------


async def test_send_returns_once_accepted(engine: TemporalEngine, server: FakeServer) -> None:
    await asyncio.wait_for(engine.send(RUN, "more please"), timeout=1)
    assert _calls(server, "update:send_message") == [UserMessage(text="more please")]
    assert not server.update.awaited


async def test_a_refused_message_gives_the_workflows_reason(
    engine: TemporalEngine, server: FakeServer
) -> None:
    server.update = FakeUpdate(WorkflowUpdateFailedError(ApplicationError("the message is empty")))
    with pytest.raises(AgentError, match="message refused: the message is empty"):
        await engine.send(RUN, " ")


async def test_ask_waits_for_the_reply(engine: TemporalEngine, server: FakeServer) -> None:
    reply = Reply(run_id=RUN, turn=4, status="running", text="done")
    server.update = FakeUpdate(reply)
    assert await engine.ask(RUN, "and?", reply_to_turn=3) == reply
    assert _calls(server, "update:") == [UserMessage(text="and?", reply_to_turn=3)]


async def test_send_to_an_ended_run(engine: TemporalEngine, server: FakeServer) -> None:
    server.update_error = _rpc(RPCStatusCode.NOT_FOUND, "workflow execution already completed")
    with pytest.raises(AgentError, match="run 'run-1' has ended"):
        await engine.send(RUN, "hi")


async def test_approve_needs_a_waiting_approval(engine: TemporalEngine, server: FakeServer) -> None:
    decision = ApprovalDecision(approved=True)
    with pytest.raises(AgentError, match="not waiting for an approval"):
        await engine.approve(RUN, decision)
    server.view = _view(
        awaiting_approval=ApprovalRequest(
            seq=4, skill="s", script="scripts/x.py", timeout_seconds=60
        )
    )
    await engine.approve(RUN, decision)
    assert _calls(server, "signal:approve") == [decision]


async def test_cancel_signals_and_waits_for_the_workflow_to_close(
    engine: TemporalEngine, server: FakeServer
) -> None:
    server.outcome = RunResult(run_id=RUN, status="cancelled", reason="enough")
    await asyncio.wait_for(engine.cancel(RUN, reason="enough"), timeout=1)
    assert _calls(server, "signal:cancel") == ["enough"]
    assert server.closed.is_set()


async def test_cancel_leaves_an_ended_run_alone(engine: TemporalEngine, server: FakeServer) -> None:
    server.signal_error = _rpc(RPCStatusCode.NOT_FOUND, "workflow execution already completed")
    await asyncio.wait_for(engine.cancel(RUN), timeout=1)


# --- result ----------------------------------------------------------------------------------


def _closed(server: FakeServer, outcome: BaseException | RunResult) -> None:
    server.outcome = outcome
    server.closed.set()


async def test_result_of_a_completed_run(engine: TemporalEngine, server: FakeServer) -> None:
    done = RunResult(run_id=RUN, status="completed", answer="hi", turns=2)
    _closed(server, done)
    assert await engine.result(RUN) == done


@pytest.mark.parametrize(
    ("kind", "status"), [("BudgetExhausted", "budget_exhausted"), ("RunFailed", "failed")]
)
async def test_result_of_a_failed_workflow_comes_from_its_details(
    engine: TemporalEngine, server: FakeServer, kind: str, status: str
) -> None:
    carried = RunResult(run_id=RUN, status=status, reason="why", turns=9)  # type: ignore[arg-type]
    failure = ApplicationError("why", carried.model_dump(mode="json"), type=kind)
    _closed(server, WorkflowFailureError(cause=failure))
    assert await engine.result(RUN) == carried


async def test_a_natively_cancelled_workflow_is_a_cancelled_run_with_its_counts(
    engine: TemporalEngine, server: FakeServer
) -> None:
    _closed(server, WorkflowFailureError(cause=CancelledError("Workflow cancelled")))
    result = await engine.result(RUN)
    assert result.status == "cancelled"
    assert result.turns == 3
    assert result.usage.input_tokens == 10
    assert result.active_skills == {"csv-profiler": "abc"}


@pytest.mark.parametrize(
    ("cause", "reason"),
    [
        (TerminatedError("by ops"), "terminated: by ops"),
        (
            WorkflowTimeoutError("t", type=TimeoutType.START_TO_CLOSE, last_heartbeat_details=[]),
            "the workflow timed out",
        ),
        (ApplicationError("boom", type="KeyError"), "KeyError: boom"),
    ],
)
async def test_a_workflow_closed_otherwise_is_a_failed_run(
    engine: TemporalEngine, server: FakeServer, cause: BaseException, reason: str
) -> None:
    server.view = _rpc(RPCStatusCode.DEADLINE_EXCEEDED, "Timeout expired")  # no worker left
    _closed(server, WorkflowFailureError(cause=cause))
    assert await engine.result(RUN) == RunResult(run_id=RUN, status="failed", reason=reason)


# --- visibility ------------------------------------------------------------------------------


def test_runs_query_lists_the_latest_run_of_agent_workflows() -> None:
    assert runs_query() == "WorkflowType = 'AgentWorkflow' AND ExecutionStatus != 'ContinuedAsNew'"


def test_runs_query_filters_by_search_attributes() -> None:
    query = runs_query(agent="data.analyst-2", phase="running_script", skill="csv-profiler")
    assert query.endswith(
        " AND SkillweaveAgent = 'data.analyst-2' AND SkillweavePhase = 'running_script'"
        " AND SkillweaveActiveSkills = 'csv-profiler'"
    )


@pytest.mark.parametrize("value", ["a' OR 'x'='x", 'a"b', "a\\b", "two words", "", "x" * 201, "é"])
def test_runs_query_refuses_values_that_are_not_names(value: str) -> None:
    with pytest.raises(ConfigError, match=r"--agent: .* is not a name"):
        runs_query(agent=value)
    with pytest.raises(ConfigError, match="--skill: "):
        runs_query(skill=value)


def test_runs_query_refuses_an_unknown_phase() -> None:
    with pytest.raises(ConfigError, match="--phase: 'sleeping' is not a phase"):
        runs_query(phase="sleeping")


def _execution(attributes: TypedSearchAttributes, status: WorkflowExecutionStatus) -> Any:
    start = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    return WorkflowExecution(
        close_time=None,
        execution_time=start,
        history_length=10,
        id=WID,
        namespace="default",
        parent_id=None,
        parent_run_id=None,
        root_id=None,
        root_run_id=None,
        raw_info=None,  # type: ignore[arg-type]
        run_id="run-1",
        search_attributes={},
        start_time=start,
        status=status,
        task_queue="tq",
        typed_search_attributes=attributes,
        workflow_type="AgentWorkflow",
        _context_free_data_converter=None,  # type: ignore[arg-type]
    )


async def test_list_runs_reads_rows_from_visibility(
    engine: TemporalEngine, server: FakeServer
) -> None:
    attributes = TypedSearchAttributes(
        [
            SearchAttributePair(SA_AGENT, "demo"),
            SearchAttributePair(SA_PHASE, "thinking"),
            SearchAttributePair(SA_ACTIVE_SKILLS, ["a", "b"]),
            SearchAttributePair(SA_TURNS, 4),
            SearchAttributePair(SA_TOKENS, 1234),
        ]
    )
    client: FakeClient = engine.client  # type: ignore[assignment]
    client.listed = [
        _execution(attributes, WorkflowExecutionStatus.RUNNING),
        _execution(TypedSearchAttributes([]), WorkflowExecutionStatus.TERMINATED),
    ]
    rows = await engine.list_runs(agent="demo", limit=7)
    assert _calls(server, "list") == [(runs_query(agent="demo"), 7)]
    assert rows[0] == RunRow(
        run_id=RUN,
        workflow_id=WID,
        execution_run_id="run-1",
        status="running",
        agent="demo",
        phase="thinking",
        turns=4,
        tokens=1234,
        active_skills=("a", "b"),
        start_time=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    assert rows[1].status == "terminated"
    assert rows[1].phase is None


async def test_workers_counts_recent_pollers(engine: TemporalEngine) -> None:
    def poller(ago: timedelta) -> PollerInfo:
        stamp = Timestamp()
        stamp.FromDatetime(datetime.now(UTC) - ago)
        return PollerInfo(last_access_time=stamp, identity="w")

    asked: list[Any] = []

    async def describe(request: Any) -> DescribeTaskQueueResponse:
        asked.append(request)
        return DescribeTaskQueueResponse(
            pollers=[poller(timedelta(seconds=1)), poller(timedelta(minutes=10))]
        )

    engine.client.workflow_service = type("S", (), {"describe_task_queue": staticmethod(describe)})  # type: ignore[misc]
    assert await engine.workers() == 1
    assert asked[0].task_queue.name == f"tq@{STORE}"  # the workers that would run its runs
    assert asked[1].task_queue.name == "tq"  # the roll call, read for its stores
    assert asked[1].task_queue_type == TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY


# --- settings ----------------------------------------------------------------------------------


def test_activity_timeouts_come_from_the_workflow_settings() -> None:
    """The worker's ``WORKFLOW__`` limits, every one of :data:`WORKER_LIMITS`."""
    settings = WorkflowSettings(
        model_timeout_seconds=1,
        script_timeout_seconds=2,
        heartbeat_timeout_seconds=3,
        activity_timeout_seconds=4,
        activity_max_attempts=5,
    )
    assert activity_timeouts(settings) == ActivityTimeouts(
        model_seconds=1,
        script_seconds=2,
        heartbeat_seconds=3,
        short_seconds=4,
        max_attempts=5,
    )
    # Each limit is one setting, and a process that sets one is told (a client: to no effect).
    # (model_calls_read is what the worker's code does, not a setting: activities.agent)
    assert len(WORKER_LIMITS) == len(ActivityTimeouts.model_fields.keys() - {"model_calls_read"})
    assert worker_limits_set(settings) == [f"WORKFLOW__{name.upper()}" for name in WORKER_LIMITS]
    assert worker_limits_set(WorkflowSettings(task_queue="q")) == []


def test_ui_link() -> None:
    assert (
        ui_link("http://localhost:8233/", "default", RUN)
        == f"http://localhost:8233/namespaces/default/workflows/{WID}"
    )
