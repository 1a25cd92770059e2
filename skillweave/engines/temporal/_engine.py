"""`TemporalEngine`: the ``Engine`` protocol over a Temporal client (``WORKFLOW__EXECUTION_ENGINE
=temporal``). Each job is one ``AgentWorkflow`` (``workflows.agent``) that a worker
(``workflows.worker``) runs; this module only talks to the server, through the names and wire
models of :mod:`skillweave.engines.contract`.

Callers see what the direct engine gives them: ``start`` refuses a job id used before,
``events`` yields every event from the job's start and ends after ``job_finished`` (it polls
the ``events`` query by absolute index), ``send`` is taken before the job's next model call
(an update, accepted or rejected by the workflow's validator), ``cancel`` returns once the job
has ended, and ``result`` maps every way a workflow closes to a :class:`JobResult`. Beyond the
protocol: :meth:`TemporalEngine.ask` (a message and the model's reply to it),
:meth:`TemporalEngine.status` (the ``status`` query), :meth:`TemporalEngine.list_jobs`
(visibility, filtered by the search attributes the workflow keeps up to date) and
:meth:`TemporalEngine.follow`, the events with a :class:`FollowNote` between them while no
worker answers and when an activity is retried.

Retries are scheduled by the server, so the workflow never sees them: a follower reads them
from the workflow's description (its pending activities, no worker needed) at most every
:data:`RETRY_POLL_SECONDS`, each told once, in the words the failed attempt put in its
heartbeat details (``activities.agent``); the UI shows the same words on the pending activity.
The same read tells what a step waits for (a ``waiting`` note, :meth:`TemporalEngine._waits`):
a wait the activity put in its heartbeat details (a :class:`~skillweave.waiting.Waiting`: a
manager that does not answer, a full pool), or a first attempt no worker has taken from its
task queue for :data:`UNTAKEN_SECONDS`; each told when it begins and again while it lasts
(:class:`~skillweave.engines.notes.WaitsTold`). :meth:`TemporalEngine.waiting` reads the same
for ``runs show`` and the API's run.

Followers outlive workers. A query needs a worker: while none polls the task queue (one was
killed, a deploy is rolling), the server holds each query for about ten seconds and then
answers "timeout" or "no poller seen recently". Nothing of the job moves then either (its
workflow and activity tasks need a worker too), so :meth:`TemporalEngine.follow` treats that
answer as a wait, not an end: it asks again, says so with a ``waiting_for_worker`` note at
most every :data:`WAIT_NOTE_SECONDS` (naming the workers that poll all the same, when some
do: after a worker is killed, queries go to its own queue until the server moves the run), and
goes on from the same index once a worker answers
(the events are kept in the workflow's state, so none is lost). It stops when the workflow has
closed (read from history, which needs no worker) or, with :class:`NoWorkerError`, once no
worker has answered for ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS``; the job itself goes on.

Every client is built by :func:`connect_engine` with the data converter of
:mod:`skillweave.engines.converter`, so it reads what the worker wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, get_args

from pydantic import BaseModel, ConfigDict
from temporalio.api.enums.v1 import PendingActivityState, PendingWorkflowTaskState
from temporalio.api.workflow.v1 import PendingActivityInfo, PendingWorkflowTaskInfo
from temporalio.client import (
    Client,
    WorkflowExecution,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateStage,
)
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import (
    ApplicationError,
    CancelledError,
    TerminatedError,
    WorkflowAlreadyStartedError,
)
from temporalio.exceptions import TimeoutError as WorkflowTimeoutError
from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)
from temporalio.service import RPCError, RPCStatusCode

from skillweave.agent.events import AgentEvent
from skillweave.agent.runtime import ApprovalDecision
from skillweave.config import CatalogMode
from skillweave.engines.base import JobRequest, JobResult
from skillweave.engines.contract import (
    QUERY_EVENTS,
    QUERY_STATUS,
    SA_ACTIVE_SKILLS,
    SA_AGENT,
    SA_PHASE,
    SA_TOKENS,
    SA_TURNS,
    SIGNAL_APPROVE,
    SIGNAL_CANCEL,
    UPDATE_SEND,
    WORKFLOW_NAME,
    AgentWorkflowInput,
    EventPage,
    JobView,
    Phase,
    Reply,
    UserMessage,
    job_id_of,
    store_task_queue,
    workflow_id,
)
from skillweave.engines.converter import data_converter
from skillweave.engines.notes import FollowKind, FollowNote, WaitsTold, events_only
from skillweave.engines.retries import RetryNotice, cause_line
from skillweave.engines.temporal_setup import require_namespace, search_attribute_problems
from skillweave.engines.temporal_workers import (
    default_model_of_worker,
    read_roll,
    recent_pollers,
    store_of_worker,
    worker_identity,
)
from skillweave.errors import AgentError, ConfigError, StorageError
from skillweave.storage.identity import store_identity
from skillweave.telemetry import provider
from skillweave.terminal import counted
from skillweave.waiting import Waiting

_log = logging.getLogger("skillweave.engines")

if TYPE_CHECKING:
    from skillweave.config import Settings, WorkflowSettings
    from skillweave.storage.base import ArtifactStore

__all__ = [
    "FAILURE_TYPES",
    "FOLLOW_WORKER_WAIT_SECONDS",
    "PHASES",
    "FollowNote",
    "JobRow",
    "NoWorkerError",
    "TemporalEngine",
    "TemporalUnreachableError",
    "configure_logging",
    "connect",
    "connect_engine",
    "default_model_of_worker",
    "details_of",
    "jobs_query",
    "store_of_worker",
    "summary_of",
    "ui_link",
    "worker_identity",
]

PHASES: Final[tuple[str, ...]] = get_args(Phase)
FAILURE_TYPES: Final = ("BudgetExhausted", "JobFailed")
"""``ApplicationError`` types the workflow fails with, the ``JobResult`` in their details."""

SUMMARY_MAX_CHARS: Final = 200
POLL_SECONDS: Final = 0.2
QUERY_TIMEOUT: Final = timedelta(seconds=10)
"""A query waits this long for a worker to answer (a closed job is answered by replaying it)."""
WAIT_QUERY_TIMEOUT: Final = timedelta(seconds=5)
"""While no worker answers, each new query waits this long (or what is left of the wait)."""
WAIT_NOTE_SECONDS: Final = 5.0
"""A follower says it waits for a worker at most this often."""
WAIT_RETRY_SECONDS: Final = 1.0
"""While no worker answers, a query refused at once is asked again after this long."""
FOLLOW_WORKER_WAIT_SECONDS: Final = 3600.0
"""How long :meth:`TemporalEngine.follow` waits for a worker by default (0: for ever)."""

_FILTER_VALUE: Final = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")
_STATUS_NAMES: Final = {
    WorkflowExecutionStatus.RUNNING: "running",
    WorkflowExecutionStatus.COMPLETED: "completed",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.CONTINUED_AS_NEW: "continued",
    WorkflowExecutionStatus.TIMED_OUT: "timed_out",
}


# --- settings → client ----------------------------------------------------------------------


def _interceptors() -> list[Any]:
    """The SDK's tracing interceptor when tracing is on, else none. Given to the client only:
    workers made from it inherit it, so it is registered once."""
    if not provider.active():
        return []
    from temporalio.contrib.opentelemetry import TracingInterceptor

    return [TracingInterceptor()]


class TemporalUnreachableError(ConfigError):
    """No Temporal server answered at ``WORKFLOW__TEMPORAL_ADDRESS``.

    The message says how to start one; a command that runs jobs says how to do without one
    too (:meth:`or_direct`).

    Attributes:
        address: where the server was looked for.
        reason: why the connection failed, in a few words (connection refused…).
    """

    def __init__(self, address: str, reason: str) -> None:
        self.address = address
        self.reason = reason
        super().__init__(
            f"cannot reach Temporal at {address} ({reason}): start one with `skillweave dev`, "
            "or set WORKFLOW__TEMPORAL_ADDRESS"
        )

    def or_direct(self, direct: str) -> str:
        """The line for a command whose jobs could run without Temporal: both remedies,
        `direct` saying how to choose the direct engine there (``--engine direct``…)."""
        return (
            f"cannot reach Temporal at {self.address} ({self.reason}). Start it with "
            "`skillweave dev` in another terminal (or point WORKFLOW__TEMPORAL_ADDRESS at "
            f"yours), or run it in this process, local and not durable, with {direct}"
        )


async def connect(settings: WorkflowSettings, store: ArtifactStore | None = None) -> Client:
    """A client of the configured server, with skillweave's data converter over `store`,
    once the server has said the namespace exists.

    Raises:
        TemporalUnreachableError: the server cannot be reached.
        ConfigError: the address is not HOST:PORT, or the namespace does not exist (the
            message says how to create it).
    """
    try:
        client = await Client.connect(
            settings.temporal_address,
            namespace=settings.namespace,
            data_converter=data_converter(store),
            # Tracing's interceptor when on (workers made from this client inherit it).
            interceptors=_interceptors(),
        )
    except ValueError as exc:  # the address itself
        raise ConfigError(
            f"WORKFLOW__TEMPORAL_ADDRESS {settings.temporal_address!r} is not HOST:PORT ({exc})"
        ) from None
    except RuntimeError as exc:
        raise TemporalUnreachableError(settings.temporal_address, _connect_failure(exc)) from None
    await require_namespace(client, settings.namespace, address=settings.temporal_address)
    return client


async def connect_engine(settings: Settings, store: ArtifactStore | None = None) -> TemporalEngine:
    """A :class:`TemporalEngine` on ``settings.workflow``'s server, namespace and task queue.

    Args:
        settings: the workflow section (address, namespace, task queue) and the
            skills section (catalog mode and top-k for agents that do not set them).
        store: the artifact store large payloads live in; the worker's must be the same.
            Its id routes the engine's jobs (:func:`~skillweave.engines.contract.
            store_task_queue`); read now when it can be, else at the first job.

    Raises:
        TemporalUnreachableError: the server cannot be reached.
        ConfigError: see :func:`connect`.
    """
    client = await connect(settings.workflow, store)
    store_id = None
    if store is not None:
        try:
            store_id = await store_identity(store)
        except StorageError as exc:  # not up yet: read again when a job starts
            _log.warning("the store's id cannot be read yet: %s", exc)
    return TemporalEngine(
        client,
        store=store,
        store_id=store_id,
        task_queue=settings.workflow.task_queue,
        catalog_mode=settings.skills.catalog_mode,
        catalog_top_k=settings.skills.catalog_top_k,
        worker_wait_seconds=settings.workflow.follow_worker_wait_seconds,
    )


def ui_link(base: str, namespace: str, job_id: str) -> str:
    """The Temporal UI page of a job's workflow."""
    return f"{base.rstrip('/')}/namespaces/{namespace}/workflows/{workflow_id(job_id)}"


def configure_logging(*, verbose: bool) -> None:
    """How much the Temporal SDK says; call before the first client is made.

    A worker (``skillweave worker``, ``skillweave dev``) reports warnings, such as an activity
    that failed and will be retried, and its SDK Core's records are forwarded to the
    ``temporalio.core`` logger, so they reach the process's handler (installed by
    :func:`skillweave.telemetry.logs.configure_logging`) in its format, instead of Core's own
    lines on stderr. A command that only runs or reads a job shows errors only, since the
    job's own events say what happened.
    """
    level = logging.WARNING if verbose else logging.ERROR
    logging.getLogger("temporalio").setLevel(level)
    activities = logging.getLogger("temporalio.activity")
    if _one_line_failures not in activities.filters:
        activities.addFilter(_one_line_failures)
    core = "WARN" if verbose else "ERROR"
    forwarding = (
        LogForwardingConfig(logger=logging.getLogger("temporalio.core")) if verbose else None
    )
    Runtime.set_default(
        Runtime(
            telemetry=TelemetryConfig(
                logging=LoggingConfig(
                    filter=TelemetryFilter(core_level=core, other_level="ERROR"),
                    forwarding=forwarding,
                )
            )
        ),
        error_if_already_set=False,
    )


def _one_line_failures(record: logging.LogRecord) -> bool:
    """An activity failure the SDK logs ("Completing activity as failed") is one line when
    the activities made it an ``ApplicationError`` (``activities.errors``: its message is the
    cause in one line, its traceback already at DEBUG); anything else keeps its traceback."""
    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, ApplicationError):
        kind = f"{error.type}: " if error.type else ""
        retry = "not retryable" if error.non_retryable else "retryable"
        record.msg = f"{record.getMessage()}: {kind}{error.message} ({retry})"
        record.args = None
        record.exc_info = None
        record.exc_text = None
    return True


# --- visibility -----------------------------------------------------------------------------


class JobRow(BaseModel):
    """One job as visibility lists it: no query to a worker needed."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    workflow_id: str
    run_id: str
    status: str
    agent: str | None = None
    phase: str | None = None
    turns: int | None = None
    tokens: int | None = None
    active_skills: tuple[str, ...] = ()
    start_time: datetime
    close_time: datetime | None = None

    @classmethod
    def of(cls, execution: WorkflowExecution) -> JobRow:
        """The row of a listed (or described) workflow execution."""
        attrs = execution.typed_search_attributes
        status = execution.status
        return cls(
            job_id=job_id_of(execution.id),
            workflow_id=execution.id,
            run_id=execution.run_id,
            status=_STATUS_NAMES.get(status, "unknown") if status is not None else "unknown",
            agent=attrs.get(SA_AGENT),
            phase=attrs.get(SA_PHASE),
            turns=attrs.get(SA_TURNS),
            tokens=attrs.get(SA_TOKENS),
            active_skills=tuple(attrs.get(SA_ACTIVE_SKILLS) or ()),
            start_time=execution.start_time,
            close_time=execution.close_time,
        )


def _literal(option: str, value: str) -> str:
    """`value` as a visibility-query string literal. Values are names (agents, skills,
    phases), so anything else is refused rather than escaped: the server's SQL-like parser
    treats quotes and backslashes differently from one visibility store to another."""
    if not _FILTER_VALUE.fullmatch(value):
        raise ConfigError(
            f"{option}: {value!r} is not a name (letters, digits, '.', '_', ':' and '-', "
            "at most 200)"
        )
    return f"'{value}'"


def jobs_query(
    *, agent: str | None = None, phase: str | None = None, skill: str | None = None
) -> str:
    """The visibility query of :meth:`TemporalEngine.list_jobs`: agent workflows (the latest
    run of each job, not the runs it continued from), filtered by agent, phase and a skill
    that is active.

    Raises:
        ConfigError: a filter value is not a name, or the phase is not one of :data:`PHASES`.
    """
    clauses = [
        f"WorkflowType = {_literal('workflow type', WORKFLOW_NAME)}",
        "ExecutionStatus != 'ContinuedAsNew'",
    ]
    if agent is not None:
        clauses.append(f"{SA_AGENT.name} = {_literal('--agent', agent)}")
    if phase is not None:
        if phase not in PHASES:
            raise ConfigError(f"--phase: {phase!r} is not a phase (one of {', '.join(PHASES)})")
        clauses.append(f"{SA_PHASE.name} = {_literal('--phase', phase)}")
    if skill is not None:
        # A keyword list matches when it holds the value.
        clauses.append(f"{SA_ACTIVE_SKILLS.name} = {_literal('--skill', skill)}")
    return " AND ".join(clauses)


# --- errors ---------------------------------------------------------------------------------


def _connect_failure(exc: BaseException) -> str:
    """Why a connection failed, without the transport library's nesting."""
    text = str(exc)
    for marker, reason in (
        ("ConnectionRefused", "connection refused"),
        ("dns error", "unknown host"),
        ("timed out", "timed out"),
        ("InvalidArgument", "invalid address"),
    ):
        if marker.lower() in text.lower():
            return reason
    line = _first_line(exc).removeprefix("Failed client connect: ")
    return line if len(line) <= 160 else line[:159] + "…"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class NoWorkerError(AgentError):
    """No worker answered a query about a job (none polls its task queue); the job itself is
    durable and goes on once one does.

    Attributes:
        job_id: the job.
        task_queue: where its workers poll.
        waited_seconds: how long a follower waited before giving up; None for one query.
    """

    def __init__(
        self, job_id: str, *, task_queue: str, waited_seconds: float | None = None
    ) -> None:
        self.job_id = job_id
        self.task_queue = task_queue
        self.waited_seconds = waited_seconds
        if waited_seconds is None:
            message = (
                f"run {job_id!r}: no worker answered in time; is `skillweave worker` (or "
                f"`skillweave dev`) running on task queue {task_queue!r}?"
            )
        else:
            message = (
                f"run {job_id!r}: no worker answered for {waited_seconds:.0f} s (task queue "
                f"{task_queue!r}); the run may still be running"
            )
        super().__init__(message)


def _no_answer(exc: RPCError) -> bool:
    """Whether the server says no worker answered: the query's deadline passed (the client's
    or the server's), or the server saw no poller on the task queue lately."""
    message = exc.message.lower()
    if exc.status in (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED):
        return True
    if exc.status == RPCStatusCode.FAILED_PRECONDITION and "no poller" in message:
        return True
    return "timeout" in message


@contextlib.contextmanager
def _job_errors(job_id: str, task_queue: str) -> Iterator[None]:
    """What the server says about a job, as one clear :class:`AgentError`
    (:class:`NoWorkerError` when no worker answered)."""
    try:
        yield
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            if "already completed" in exc.message:
                raise AgentError(f"run {job_id!r} has ended") from None
            raise AgentError(f"no run {job_id!r} on this Temporal namespace") from None
        if _no_answer(exc):
            raise NoWorkerError(job_id, task_queue=task_queue) from None
        raise AgentError(f"run {job_id!r}: Temporal said: {_first_line(exc)}") from None
    except WorkflowQueryFailedError as exc:
        raise AgentError(f"run {job_id!r}: the query failed: {exc.message}") from None


# --- following a job ------------------------------------------------------------------------

RETRY_POLL_SECONDS: Final = 0.5
"""A follower reads the job's pending activities (for their retries and waits) at most this
often."""
UNTAKEN_SECONDS: Final = 5.0
"""A first attempt scheduled this long ago that no worker has started waits for a worker."""


@dataclass
class _PendingRead:
    """What a follower of `job_id` has read of its pending activities: when last, the retries
    it told (run, activity, failed attempt), and the waits (:class:`WaitsTold`)."""

    job_id: str
    waits: WaitsTold
    read_at: float = -RETRY_POLL_SECONDS
    retries: set[tuple[str, str, int]] = field(default_factory=set)


# --- the engine -----------------------------------------------------------------------------


class TemporalEngine:
    """Runs jobs as ``AgentWorkflow`` executions on a Temporal server.

    Args:
        client: a client built with skillweave's data converter (see :func:`connect_engine`).
        task_queue: the configured (base) task queue; a job runs on it routed to the store it
            was started against (:attr:`task_queue`), where only that store's workers poll.
        catalog_mode: the settings' catalog mode, for specs that do not set one.
        catalog_top_k: the settings' top-k for ``auto``.
        poll_seconds: how often :meth:`events` asks for new events.
        worker_wait_seconds: how long :meth:`follow` (and :meth:`events`) go on while no
            worker answers before raising :class:`NoWorkerError`; 0 waits for ever.
        store: this client's artifact store: a job started here carries its id and runs on
            its store's queue (``storage.identity``).
        store_id: the store's id, when known (read from `store` at the first job otherwise).
    """

    def __init__(
        self,
        client: Client,
        *,
        task_queue: str,
        catalog_mode: CatalogMode = "enabled",
        catalog_top_k: int = 8,
        poll_seconds: float = POLL_SECONDS,
        worker_wait_seconds: float = FOLLOW_WORKER_WAIT_SECONDS,
        store: ArtifactStore | None = None,
        store_id: str | None = None,
    ) -> None:
        self.client = client
        self.base_task_queue = task_queue
        self.store = store
        self._store_id = store_id
        self._namespace_checked = False
        self._catalog_mode = catalog_mode
        self._top_k = catalog_top_k
        self._poll = poll_seconds
        self._worker_wait = worker_wait_seconds

    @property
    def namespace(self) -> str:
        """The namespace the client works in."""
        return self.client.namespace

    @property
    def task_queue(self) -> str:
        """The task queue this engine's jobs run on: the base queue routed to its store (the
        base queue while the store's id is not known yet)."""
        if self._store_id is None:
            return self.base_task_queue
        return store_task_queue(self.base_task_queue, self._store_id)

    async def _own_store_id(self, job_id: str | None = None) -> str:
        """This engine's store id, read once (`job_id`: the job that asks, for the message).

        Raises:
            ConfigError: the engine has no store (and was given no id): a job started here
                would run on no store's queue.
            StorageError: the store cannot be read.
        """
        if self._store_id is None:
            if self.store is None:
                refused = f"run {job_id!r} not started: " if job_id else ""
                raise ConfigError(
                    f"{refused}this client has no artifact store, and a job runs only on the "
                    "workers of the store it is started against: open the engine over the "
                    "deployment's store (its STORAGE__ settings)"
                )
            self._store_id = await store_identity(self.store)
        return self._store_id

    def _handle(self, job_id: str) -> WorkflowHandle[Any, JobResult]:
        return self.client.get_workflow_handle(workflow_id(job_id), result_type=JobResult)

    def _errors(self, job_id: str) -> contextlib.AbstractContextManager[None]:
        return _job_errors(job_id, self.task_queue)

    async def _check_namespace(self) -> None:
        """Refuse, once per engine, a namespace that lacks skillweave's search attributes: a
        job started there would fail every workflow task and stay "Running" for ever.

        Raises:
            ConfigError: which attributes, and the command that registers them.
        """
        if self._namespace_checked:
            return
        try:
            problems = await search_attribute_problems(self.client, self.client.namespace)
        except RPCError as exc:  # e.g. a server that does not let this client list them
            _log.warning("cannot list the namespace's search attributes: %s", _first_line(exc))
            problems = []
        if problems:
            raise ConfigError(
                f"namespace {self.client.namespace!r} cannot hold runs: {'; '.join(problems)}; "
                "run `skillweave temporal setup` (it registers them)"
            )
        self._namespace_checked = True

    # --- Engine ----------------------------------------------------------------------------

    async def start(self, request: JobRequest) -> str:
        """Start the job's workflow; returns its id.

        It starts on the task queue routed to the store the job is started against (the
        request's, else this engine's): only that store's workers run it, and it waits until
        one polls.

        Raises:
            AgentError: a job with this id exists (running or not).
            ConfigError: the server does not know skillweave's search attributes; no worker of
                the job's store polls while workers of other stores do; this engine has no
                store.
            StorageError: the store's id cannot be read.
        """
        spec = request.agent
        await self._check_namespace()
        store_id = request.store_id or await self._own_store_id(request.job_id)
        request = request.model_copy(update={"store_id": store_id})
        await self._check_workers_store(store_id)
        try:
            await self.client.start_workflow(
                WORKFLOW_NAME,
                AgentWorkflowInput(
                    request=request,
                    catalog_mode=self._catalog_mode,
                    catalog_top_k=self._top_k,
                ),
                id=workflow_id(request.job_id),
                task_queue=store_task_queue(self.base_task_queue, store_id),
                # A job id names its artifacts (runs/{job_id}/…): never reuse one.
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                static_summary=summary_of(request),
                static_details=details_of(request),
                search_attributes=TypedSearchAttributes(
                    [
                        SearchAttributePair(SA_AGENT, spec.name),
                        SearchAttributePair(SA_PHASE, "starting"),
                    ]
                ),
            )
        except WorkflowAlreadyStartedError:
            raise AgentError(f"run {request.job_id!r} already exists") from None
        except RPCError as exc:
            if exc.status == RPCStatusCode.INVALID_ARGUMENT and "search attribute" in exc.message:
                raise ConfigError(
                    f"the Temporal server does not know skillweave's search attributes "
                    f"({_first_line(exc)}): run `skillweave temporal setup` (it registers them)"
                ) from None
            raise AgentError(f"run {request.job_id!r} did not start: {_first_line(exc)}") from None
        return request.job_id

    async def events(self, job_id: str, *, after: int = 0) -> AsyncIterator[AgentEvent]:
        """Every event of the job from index `after` (0: its start), ending after
        ``job_finished``, or once the workflow has closed and its last events were read:
        :meth:`follow` without its notes.

        Raises:
            NoWorkerError: no worker answered for ``worker_wait_seconds``.
            AgentError: there is no such job, or a query failed.
        """
        async for event in events_only(self.follow(job_id, after=after)):
            yield event

    async def follow(
        self, job_id: str, *, after: int = 0, until_finished: bool = True
    ) -> AsyncIterator[AgentEvent | FollowNote]:
        """The job's events from index `after`, as :meth:`events` gives them, with a
        :class:`FollowNote` between them while no worker answers (``waiting_for_worker``,
        at most every :data:`WAIT_NOTE_SECONDS`, then ``worker_answered``), when events
        were dropped from the workflow's window before they were read, once for each
        retry of an activity (``retrying``: :meth:`_retries`), and when a step waits
        (``waiting``: :meth:`_waits`); retries and waits are read from the job's pending
        activities at most every :data:`RETRY_POLL_SECONDS`, also while no worker answers.

        Args:
            job_id: the job.
            after: the index to start from (0: the job's start).
            until_finished: follow until the job finishes; False: stop after the events
                there are now (still waiting for a worker to say what they are).

        Raises:
            NoWorkerError: no worker answered for ``worker_wait_seconds`` (0: never raised);
                the job may still be running.
            AgentError: there is no such job, or a query failed.
        """
        handle = self._handle(job_id)
        closed = asyncio.create_task(self._closed(handle))
        loop = asyncio.get_running_loop()
        waiting_since: float | None = None
        noted_at: float | None = None
        pending = _PendingRead(job_id, WaitsTold(clock=loop.time))
        try:
            while True:
                was_closed = closed.done()
                asked = loop.time()
                try:
                    page = await self._page(
                        handle, job_id, after, timeout=self._query_timeout(waiting_since, asked)
                    )
                except NoWorkerError:
                    if was_closed:
                        return  # closed, and no worker to replay it: nothing more to read
                    now = loop.time()
                    waiting_since = asked if waiting_since is None else waiting_since
                    waited = now - waiting_since
                    if self._worker_wait > 0 and waited >= self._worker_wait:
                        raise NoWorkerError(
                            job_id, task_queue=self.task_queue, waited_seconds=waited
                        ) from None
                    if noted_at is None or now - noted_at >= WAIT_NOTE_SECONDS:
                        noted_at = now
                        yield self._note(
                            job_id,
                            "waiting_for_worker",
                            waited_seconds=waited,
                            pollers=await self._pollers(),
                        )
                    # The description needs no worker: what the steps wait for is told.
                    for note in await self._pending_notes(handle, pending, now=loop.time()):
                        yield note
                    # A query refused at once is asked again a little later; one that waited
                    # for its deadline, at once. The job closing ends the wait too.
                    pause = max(0.0, WAIT_RETRY_SECONDS - (loop.time() - asked))
                    await asyncio.wait({closed}, timeout=pause)
                    continue
                except AgentError:
                    if was_closed:
                        return
                    raise
                if waiting_since is not None:
                    waited = loop.time() - waiting_since
                    waiting_since = noted_at = None
                    yield self._note(job_id, "worker_answered", waited_seconds=waited)
                if page.dropped:
                    yield self._note(job_id, "events_dropped", dropped=page.dropped)
                for event in page.events:
                    yield event
                    if event.kind == "job_finished":
                        return
                after = page.next
                if not was_closed:
                    # Without until_finished, read once whatever the time.
                    now = loop.time() if until_finished else None
                    for note in await self._pending_notes(handle, pending, now=now):
                        yield note
                if was_closed or not until_finished:
                    return
                await asyncio.wait({closed}, timeout=self._poll)
        finally:
            closed.cancel()
            await asyncio.wait({closed})

    async def _pending_notes(
        self, handle: WorkflowHandle[Any, Any], pending: _PendingRead, *, now: float | None
    ) -> list[FollowNote]:
        """The notes of the job's pending activities not told yet: their retries
        (:meth:`_retries`), then their waits (:meth:`_waits`, as :class:`WaitsTold` says
        when). Read at most every :data:`RETRY_POLL_SECONDS` of `now` (None: now, whatever
        the time)."""
        if now is not None:
            if now - pending.read_at < RETRY_POLL_SECONDS:
                return []
            pending.read_at = now
        try:
            description = await handle.describe(rpc_timeout=WAIT_QUERY_TIMEOUT)
        except RPCError as exc:  # the events go on; the next poll asks again
            _log.debug("cannot describe %s: %s", handle.id, _first_line(exc))
            return []
        job_id, queue = pending.job_id, self.task_queue
        notes = [
            FollowNote.retrying(job_id, notice, task_queue=queue)
            for notice in await self._retries(description, pending.retries)
        ]
        for step, waiting in await self._waits(description):
            if pending.waits.due(waiting, step=step):
                notes.append(FollowNote.waiting_on(job_id, waiting, task_queue=queue))
        return notes

    async def _retries(
        self, description: WorkflowExecutionDescription, told: set[tuple[str, str, int]]
    ) -> list[RetryNotice]:
        """The retries of the job's activities not yet in `told` (which they join).

        The server schedules an activity's retries, so the workflow never sees them; its
        description does (no worker needed): a pending activity past its first attempt that
        failed. The activity said how in its heartbeat details (``activities.agent``: the
        notice of :func:`~skillweave.engines.retries.retry_notice`, also what the UI shows on
        the pending activity); an attempt that could not say (it timed out, its worker died)
        is told from the description: the activity's name, its attempts, the wait and the
        failure's message.
        """
        notices = []
        for pending in description.raw_description.pending_activities:
            if pending.attempt < 2 or not pending.HasField("last_failure"):
                continue
            key = (description.run_id, pending.activity_id, pending.attempt - 1)
            if key in told:
                continue
            told.add(key)
            notices.append(await self._notice_of(pending))
        return notices

    async def _waits(self, description: WorkflowExecutionDescription) -> list[tuple[str, Waiting]]:
        """What the job's pending activities wait for now, each with its step's key (the
        workflow run and activity id).

        A running attempt that waits says so in its heartbeat details (``activities.agent``:
        the line, then the :class:`~skillweave.waiting.Waiting`), which the server keeps on
        the pending activity; details from before the attempt started are an earlier
        attempt's and are not read. A first attempt that no worker has started
        :data:`UNTAKEN_SECONDS` after it was scheduled waits for a worker on its task queue;
        so does a workflow task (nothing of the run moves: no worker of its store polls).
        """
        raw = description.raw_description
        waits: list[tuple[str, Waiting]] = []
        for pending in raw.pending_activities:
            step = f"{description.run_id}/{pending.activity_id}"
            if pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED:
                said = await self._heartbeat_said(pending)
                beat = pending.last_heartbeat_time.ToDatetime()
                if isinstance(said, Waiting) and beat >= pending.last_started_time.ToDatetime():
                    waits.append((step, said))
                continue
            since = _untaken_since(pending)
            if since is not None:
                queue = (
                    pending.activity_options.task_queue.name
                    or raw.execution_config.task_queue.name
                    or self.task_queue
                )
                detail = f"no worker has taken it from task queue {queue!r}"
                call = pending.activity_type.name
                waits.append((step, Waiting(on="worker", detail=detail, since=since, call=call)))
        since = _untaken_task_since(raw.pending_workflow_task)  # unset: state unspecified
        if since is not None:  # no worker of the job's store polls: nothing moves at all
            queue = raw.execution_config.task_queue.name or self.task_queue
            detail = f"no worker has taken the run's next step from task queue {queue!r}"
            waiting = Waiting(on="worker", detail=detail, since=since, call="the run")
            waits.append((f"{description.run_id}/workflow-task", waiting))
        return waits

    async def waiting(self, job_id: str) -> list[Waiting]:
        """What the job's steps wait for now (:meth:`_waits`), from its description: no
        worker needed; empty when nothing waits.

        Raises:
            AgentError: there is no such job.
        """
        with self._errors(job_id):
            description = await self._handle(job_id).describe(rpc_timeout=WAIT_QUERY_TIMEOUT)
        if description.status != WorkflowExecutionStatus.RUNNING:
            return []
        return [waiting for _, waiting in await self._waits(description)]

    async def _notice_of(self, pending: PendingActivityInfo) -> RetryNotice:
        """The retry of a pending activity: as its last attempt told it, or from the
        description when it did not."""
        failed = pending.attempt - 1
        told = await self._told_retry(pending)
        if told is not None and told.attempt == failed:
            return told
        waiting = pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
        interval = pending.current_retry_interval.ToTimedelta().total_seconds()
        return RetryNotice(
            call=pending.activity_type.name,
            attempt=failed,
            attempts=pending.maximum_attempts or None,
            wait_seconds=interval if waiting and interval > 0 else None,
            cause=cause_line(pending.last_failure.message),
        )

    async def _told_retry(self, pending: PendingActivityInfo) -> RetryNotice | None:
        """The retry notice in the activity's heartbeat details, if they hold one (not a
        wait: :meth:`_heartbeat_said`)."""
        said = await self._heartbeat_said(pending)
        return said if isinstance(said, RetryNotice) else None

    async def _heartbeat_said(self, pending: PendingActivityInfo) -> RetryNotice | Waiting | None:
        """What the activity's heartbeat details say, when they hold one of the two things an
        attempt tells there (``activities.agent``: the line, then the fields): a retry notice
        or a wait. Their required fields differ (a notice's ``attempt`` and ``cause``, a
        wait's ``on`` and ``since``), so neither is read as the other; anything else (free-form
        details) is None."""
        payloads = list(pending.heartbeat_details.payloads)
        if len(payloads) != 2:
            return None
        try:
            fields = (await self.client.data_converter.decode(payloads))[-1]
        except Exception:  # not ours to read: told another way
            return None
        for model in (RetryNotice, Waiting):
            with contextlib.suppress(ValueError):
                return model.model_validate(fields)
        return None

    async def _pollers(self) -> int:
        """How many workers polled the task queue lately (0 when it cannot be read)."""
        try:
            return len(await recent_pollers(self.client, self.task_queue))
        except RPCError as exc:
            _log.debug("cannot describe task queue %s: %s", self.task_queue, _first_line(exc))
            return 0

    def _query_timeout(self, waiting_since: float | None, now: float) -> timedelta:
        """The first query waits :data:`QUERY_TIMEOUT` for a worker; once none answers, each
        waits :data:`WAIT_QUERY_TIMEOUT`, and not past the end of the wait."""
        if waiting_since is None:
            return QUERY_TIMEOUT
        timeout = WAIT_QUERY_TIMEOUT.total_seconds()
        if self._worker_wait > 0:
            left = self._worker_wait - (now - waiting_since)
            timeout = min(timeout, max(left, WAIT_RETRY_SECONDS))
        return timedelta(seconds=timeout)

    def _note(self, job_id: str, kind: FollowKind, **fields: Any) -> FollowNote:
        return FollowNote(kind=kind, job_id=job_id, task_queue=self.task_queue, **fields)

    async def send(self, job_id: str, text: str) -> None:
        """Queue a user message; the job takes it before its next model call.

        Raises:
            AgentError: the workflow refused it (empty, too long, the job has ended), or
                there is no such job.
        """
        with self._errors(job_id):
            update = await self._handle(job_id).start_update(
                UPDATE_SEND,
                UserMessage(text=text),
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                result_type=Reply,
            )
        # A rejected update comes back at once with its outcome; waiting on an accepted one
        # would wait for the model's answer, which ``send`` does not.
        if getattr(update, "_known_outcome", None) is not None:
            await _update_result(update)

    async def ask(self, job_id: str, text: str, *, reply_to_turn: int | None = None) -> Reply:
        """Send a user message and wait for the model's answer to it.

        Args:
            job_id: the job.
            text: the message.
            reply_to_turn: the turn of the answer this replies to; refused as stale when a
                newer answer exists.

        Raises:
            AgentError: the workflow refused the message, or there is no such job.
        """
        with self._errors(job_id):
            update = await self._handle(job_id).start_update(
                UPDATE_SEND,
                UserMessage(text=text, reply_to_turn=reply_to_turn),
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                result_type=Reply,
            )
            return await _update_result(update)

    async def approve(self, job_id: str, decision: ApprovalDecision) -> None:
        """Approve or deny the script run the job waits on.

        Raises:
            AgentError: the job waits on no approval, or there is no such job.
        """
        view = await self.status(job_id)
        if view.awaiting_approval is None:
            raise AgentError(f"run {job_id!r} is not waiting for an approval")
        with self._errors(job_id):
            await self._handle(job_id).signal(SIGNAL_APPROVE, decision)

    async def cancel(self, job_id: str, *, reason: str = "cancelled by the user") -> None:
        """Ask the job to stop and wait until its workflow has closed (a job that has ended
        already is left as it is)."""
        handle = self._handle(job_id)
        try:
            with self._errors(job_id):
                await handle.signal(SIGNAL_CANCEL, reason)
        except AgentError as exc:
            if str(exc).endswith("has ended"):
                return
            raise
        await self._closed(handle)

    async def result(self, job_id: str) -> JobResult:
        """Wait for the job's workflow to close; how it ended, whichever way it did."""
        handle = self._handle(job_id)
        try:
            with self._errors(job_id):
                return await handle.result()
        except WorkflowFailureError as exc:
            cause = exc.cause
        if isinstance(cause, ApplicationError) and cause.type in FAILURE_TYPES and cause.details:
            return JobResult.model_validate(cause.details[0])
        if isinstance(cause, CancelledError):
            status, reason = "cancelled", "the workflow was cancelled"
        elif isinstance(cause, TerminatedError):
            status, reason = "failed", f"terminated: {cause.message}"
        elif isinstance(cause, WorkflowTimeoutError):
            status, reason = "failed", "the workflow timed out"
        elif isinstance(cause, ApplicationError):
            status, reason = "failed", f"{cause.type or 'ApplicationError'}: {cause.message}"
        else:
            status, reason = "failed", f"{type(cause).__name__}: {_first_line(cause)}"
        return await self._closed_result(job_id, status=status, reason=reason)

    # --- beyond the protocol ---------------------------------------------------------------

    async def status(self, job_id: str, *, timeout: timedelta = QUERY_TIMEOUT) -> JobView:
        """The job's status (the ``status`` query; a worker answers it).

        Raises:
            NoWorkerError: no worker answered within `timeout`.
            AgentError: there is no such job.
        """
        with self._errors(job_id):
            return await self._handle(job_id).query(
                QUERY_STATUS, result_type=JobView, rpc_timeout=timeout
            )

    async def event_page(self, job_id: str, *, after: int = 0) -> EventPage:
        """The events the job keeps from index `after` (one ``events`` query)."""
        return await self._page(self._handle(job_id), job_id, after)

    async def describe(self, job_id: str) -> JobRow:
        """The job's row from the server (no worker needed).

        Raises:
            AgentError: there is no such job.
        """
        with self._errors(job_id):
            return JobRow.of(await self._handle(job_id).describe())

    async def request(self, job_id: str) -> JobRequest:
        """What the job was started with (task, agent, inputs), from its workflow's first
        history event: no worker needed, for a job started by any client.

        Raises:
            AgentError: there is no such job.
        """
        with self._errors(job_id):
            async for event in self._handle(job_id).fetch_history_events(page_size=1):
                payloads = event.workflow_execution_started_event_attributes.input.payloads
                [start] = await self.client.data_converter.decode(payloads, [AgentWorkflowInput])
                return start.request
        raise AgentError(f"no run {job_id!r} on this Temporal namespace")

    async def list_jobs(
        self,
        *,
        agent: str | None = None,
        phase: str | None = None,
        skill: str | None = None,
        limit: int = 50,
    ) -> list[JobRow]:
        """Jobs on the server, newest first, filtered by agent, phase and an active skill.

        Raises:
            ConfigError: a filter is not a name or not a phase.
        """
        query = jobs_query(agent=agent, phase=phase, skill=skill)
        try:
            return [
                JobRow.of(execution)
                async for execution in self.client.list_workflows(query, limit=limit)
            ]
        except RPCError as exc:
            raise AgentError(f"listing runs failed: {_first_line(exc)}") from None

    async def workers(self) -> int:
        """How many workers of this engine's store polled its task queue lately (those that
        would run a job started here).

        Raises:
            ConfigError: none does while workers of other stores poll the base queue (see
                :meth:`start`), or this engine has no store.
        """
        return await self._check_workers_store(await self._own_store_id())

    async def worker_default_models(self) -> set[str]:
        """The default models (``provider:name``) the workers that would run a job started
        here (those polling its store's task queue lately) say they have; empty: none
        answers, or none has a default.

        Raises:
            AgentError: the task queue or the store's id cannot be read.
        """
        try:
            pollers = await recent_pollers(self.client, await self._routed_queue())
        except RPCError as exc:
            raise AgentError(
                f"cannot read task queue {self.task_queue!r}: {_first_line(exc)}"
            ) from None
        return {found for identity in pollers if (found := default_model_of_worker(identity))}

    async def _routed_queue(self) -> str:
        """This engine's task queue, once its store's id is known.

        Raises:
            AgentError: the store's id cannot be read, or there is no store.
        """
        try:
            return store_task_queue(self.base_task_queue, await self._own_store_id())
        except (StorageError, ConfigError) as exc:
            raise AgentError(f"cannot tell which workers run this engine's jobs: {exc}") from None

    async def _check_workers_store(self, store_id: str) -> int:
        """Refuse a job no worker of its store would run while workers of other stores
        answer the base queue's roll call (:class:`~skillweave.engines.temporal_workers.Roll`):
        it would wait for ever. With no worker at all, the job is started: it waits for one.

        Returns:
            How many workers of the store poll its queue.

        Raises:
            ConfigError: one line naming this store, the others and what to do.
        """
        try:
            roll = await read_roll(self.client, self.base_task_queue, store_id)
        except RPCError as exc:  # not ours to read: the job waits for its store's worker
            _log.warning("cannot describe task queue %s: %s", self.task_queue, _first_line(exc))
            return 0
        if roll.stranded():
            raise ConfigError(roll.refusal())
        return len(roll.serving)

    # --- helpers ---------------------------------------------------------------------------

    async def _page(
        self,
        handle: WorkflowHandle[Any, Any],
        job_id: str,
        after: int,
        *,
        timeout: timedelta = QUERY_TIMEOUT,
    ) -> EventPage:
        with self._errors(job_id):
            return await handle.query(
                QUERY_EVENTS, after, result_type=EventPage, rpc_timeout=timeout
            )

    @staticmethod
    async def _closed(handle: WorkflowHandle[Any, Any]) -> None:
        """Return once the workflow (the last run of its chain) has closed, however it did."""
        with contextlib.suppress(WorkflowFailureError, RPCError):
            await handle.result()

    async def _closed_result(self, job_id: str, *, status: str, reason: str) -> JobResult:
        """The result of a job whose workflow closed without returning one: counts from its
        final status when a worker can still answer, else only the status and reason."""
        try:
            view = await self.status(job_id, timeout=timedelta(seconds=3))
        except AgentError:
            return JobResult(job_id=job_id, status=status, reason=reason)  # type: ignore[arg-type]
        return JobResult(
            job_id=job_id,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            answer=view.answer,
            turns=view.turn,
            script_runs=view.script_runs,
            usage=view.usage,
            active_skills=view.active_skills,
        )


def _untaken_since(pending: PendingActivityInfo) -> datetime | None:
    """When a first attempt that no worker has taken :data:`UNTAKEN_SECONDS` after it was
    scheduled was scheduled; None for any other (a later attempt waits for its retry, told
    as one)."""
    if (
        pending.state != PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
        or pending.attempt > 1
        or not pending.HasField("scheduled_time")
    ):
        return None
    since = pending.scheduled_time.ToDatetime().replace(tzinfo=UTC)
    if datetime.now(UTC) - since < timedelta(seconds=UNTAKEN_SECONDS):
        return None
    return since


def _untaken_task_since(task: PendingWorkflowTaskInfo) -> datetime | None:
    """When a workflow task that no worker has taken :data:`UNTAKEN_SECONDS` after it was
    first scheduled was scheduled; None when a worker has it or it is younger."""
    if task.state != PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED:
        return None
    first = task.original_scheduled_time if task.HasField("original_scheduled_time") else None
    stamp = first or (task.scheduled_time if task.HasField("scheduled_time") else None)
    if stamp is None:
        return None
    since = stamp.ToDatetime().replace(tzinfo=UTC)
    if datetime.now(UTC) - since < timedelta(seconds=UNTAKEN_SECONDS):
        return None
    return since


async def _update_result(update: Any) -> Reply:
    try:
        return await update.result()
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause
        message = cause.message if isinstance(cause, ApplicationError) else str(cause)
        raise AgentError(f"message refused: {message}") from None


def summary_of(request: JobRequest) -> str:
    """The one-line summary the UI shows for the run: ``agent: task``, at most 200 chars."""
    line = " ".join(f"{request.agent.name}: {request.task}".split())
    return line if len(line) <= SUMMARY_MAX_CHARS else line[: SUMMARY_MAX_CHARS - 1] + "…"


def details_of(request: JobRequest) -> str:
    """The fixed details the UI shows for the run (markdown): its id (the one every door
    knows it by), task, agent, model, skills, limits. (Each model call's event names the
    model that answered.)"""
    spec = request.agent
    skills = ", ".join(f"`{name}`" for name in spec.skills) if spec.skills else "all enabled"
    limits = spec.limits
    model = f"`{spec.model}`" if spec.model else "the worker's default (MODEL__*)"
    lines = [
        f"**Run:** `{request.job_id}` (`skillweave runs show {request.job_id}`)",
        f"**Task:** {request.task.strip()}",
        f"**Agent:** `{spec.name}`" + (f" — {spec.description}" if spec.description else ""),
        f"**Model:** {model}",
        f"**Skills allowed:** {skills}",
        f"**Limits:** {counted(limits.max_turns, 'turn')} · "
        f"{counted(limits.max_script_runs, 'script run')} · {counted(limits.max_tokens, 'token')}",
    ]
    if request.inputs:
        names = ", ".join(f"`{ref.key.rsplit('/', 1)[-1]}`" for ref in request.inputs)
        lines.append(f"**Inputs:** {names}")
    return "\n\n".join(lines)
