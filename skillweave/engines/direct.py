"""`DirectEngine`: the agent loop in this process (``WORKFLOW__EXECUTION_ENGINE=direct``).

The same ``AgentLoop`` the Temporal engine runs, with :class:`DirectRuntime` calling
``AgentServices`` in-process. Every input and result crosses a JSON round-trip through the same
pydantic models the Temporal engine's activities use, so a model that does not survive
serialization fails here first, not in production. Jobs are asyncio tasks; cancelling one
cancels the runtime call in flight (a script run is cancelled at the manager too).

Retries follow the same classification the Temporal engine's retry policies use: a
``ModelError`` marked ``retryable`` (HTTP 408/409/429/5xx, connection failures; decided in
``skillweave.llm.retry``) and a full pool (``PoolExhaustedError``) are tried again, after the
``Retry-After`` the server gave or an exponential back-off, up to ``RETRY_ATTEMPTS`` calls;
everything else fails the job at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final, TypeVar

from pydantic import BaseModel

from skillweave.agent.events import AgentEvent
from skillweave.agent.loop import AgentLoop, new_state
from skillweave.agent.runtime import (
    ApprovalDecision,
    ApprovalRequest,
    CatalogInput,
    CatalogResult,
    InvokeModelInput,
    LoadSkillInput,
    ModelTurn,
    ReadResourceInput,
    RunScriptInput,
    ScriptOutcome,
    SearchInput,
    SearchOutcome,
    SkillLoaded,
    ToolOutcome,
    TranscriptWrite,
    WaitInput,
)
from skillweave.agent.state import AgentState
from skillweave.engines.base import JobRequest, JobResult, result_of
from skillweave.engines.services import AgentServices
from skillweave.errors import (
    AgentError,
    ExecutionInProgressError,
    ModelError,
    PoolExhaustedError,
    SandboxLostError,
)
from skillweave.telemetry import bound
from skillweave.telemetry.tracing import span

__all__ = ["RETRY_ATTEMPTS", "DirectEngine", "DirectRuntime", "retry_delay"]

_M = TypeVar("_M", bound=BaseModel)
_T = TypeVar("_T")

RETRY_ATTEMPTS: Final = 4
_RETRY_MAX_SECONDS: Final = 30.0
_BACKOFF_SECONDS: Final = 0.5


def retry_delay(exc: BaseException, attempt: int) -> float | None:
    """Seconds to wait before calling again after `exc` on call number `attempt` (from 1),
    or None when it must not be retried."""
    if isinstance(exc, ModelError) and exc.retryable:
        hint = exc.retry_after
    elif isinstance(exc, PoolExhaustedError):
        hint = float(exc.retry_after)
    elif isinstance(exc, SandboxLostError):
        hint = 0.0  # a fresh sandbox is ready now
    elif isinstance(exc, ExecutionInProgressError):
        hint = exc.retry_after
    else:
        return None
    if hint is None:
        hint = _BACKOFF_SECONDS * 2 ** (attempt - 1)
    return min(_RETRY_MAX_SECONDS, max(0.0, hint))


async def _retrying(call: Callable[[], Awaitable[_T]], *, attempts: int) -> _T:
    attempt = 1
    while True:
        try:
            return await call()
        except (
            ModelError,
            PoolExhaustedError,
            SandboxLostError,
            ExecutionInProgressError,
        ) as exc:
            delay = retry_delay(exc, attempt)
            if delay is None or attempt >= attempts:
                raise
        await asyncio.sleep(delay)
        attempt += 1


def _wire(model: _M) -> _M:
    """`model` after the JSON round-trip every activity input and result makes."""
    return type(model).model_validate_json(model.model_dump_json())


class DirectRuntime:
    """The ``Runtime`` port over in-process services, for one job."""

    def __init__(
        self, services: AgentServices, *, run_id: str, attempts: int = RETRY_ATTEMPTS
    ) -> None:
        self.services = services
        self.run_id = run_id
        self.attempts = attempts
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.decisions: asyncio.Queue[ApprovalDecision] = asyncio.Queue()
        self.awaiting: ApprovalRequest | None = None

    async def prepare_catalog(self, request: CatalogInput) -> CatalogResult:
        return _wire(await self.services.prepare_catalog(_wire(request)))

    async def invoke_model(self, request: InvokeModelInput) -> ModelTurn:
        request = _wire(request)
        turn = await _retrying(lambda: self.services.invoke_model(request), attempts=self.attempts)
        return _wire(turn)

    async def load_skill(self, request: LoadSkillInput) -> SkillLoaded:
        request = _wire(request)
        loaded = await _retrying(lambda: self.services.load_skill(request), attempts=self.attempts)
        return _wire(loaded)

    async def read_skill_resource(self, request: ReadResourceInput) -> ToolOutcome:
        return _wire(await self.services.read_skill_resource(_wire(request)))

    async def run_skill_script(self, request: RunScriptInput) -> ScriptOutcome:
        request = _wire(request)
        try:
            outcome = await _retrying(
                lambda: self.services.run_skill_script(request), attempts=self.attempts
            )
            return _wire(outcome)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.services.sandbox.cancel(request.execution_id))
            raise

    async def search_skills(self, request: SearchInput) -> SearchOutcome:
        return _wire(await self.services.search_skills(_wire(request)))

    async def record(self, writes: tuple[TranscriptWrite, ...]) -> None:
        await self.services.record([_wire(w) for w in writes], run_id=self.run_id)

    def now(self) -> float:
        return time.time()

    async def wait_for_input(self, request: WaitInput) -> list[str]:
        messages: list[str] = []
        if self.inbox.empty() and request.timeout_seconds > 0:
            with contextlib.suppress(TimeoutError):
                messages.append(
                    await asyncio.wait_for(self.inbox.get(), timeout=request.timeout_seconds)
                )
        while not self.inbox.empty():
            messages.append(self.inbox.get_nowait())
        return messages

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.awaiting = _wire(request)
        try:
            return _wire(
                await asyncio.wait_for(self.decisions.get(), timeout=request.timeout_seconds)
            )
        except TimeoutError:
            return ApprovalDecision(
                approved=False, note=f"nobody decided within {request.timeout_seconds:g} s"
            )
        finally:
            self.awaiting = None


class _Job:
    def __init__(self, request: JobRequest, runtime: DirectRuntime, state: AgentState) -> None:
        self.request = request
        self.runtime = runtime
        self.state = state
        self.events: list[AgentEvent] = []
        # Replaced (and the old one set) on every change: a reader waits on the one it saw.
        self.changed = asyncio.Event()
        self.task: asyncio.Task[AgentState] | None = None

    def publish(self, event: AgentEvent) -> None:
        self.events.append(event)
        self.wake()

    def wake(self, *_: object) -> None:
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


async def _traced(loop: AgentLoop, state: AgentState) -> AgentState:
    """Run a job inside its own span, its job id bound for every log line and span within
    (the Temporal engine gets the same from the SDK's interceptor and the activities)."""
    with span("agent job", fields={"job_id": state.job_id}), bound(job_id=state.job_id):
        return await loop.run(state)


class DirectEngine:
    """Runs jobs as asyncio tasks in this process.

    Args:
        services: the side effects (model, skills, store, sandbox manager).
        catalog_mode: the settings' catalog mode, for specs that do not set one.
        catalog_top_k: the settings' top-k for ``auto``.
    """

    def __init__(
        self, services: AgentServices, *, catalog_mode: str = "enabled", catalog_top_k: int = 8
    ) -> None:
        self.services = services
        self._catalog_mode = catalog_mode
        self._top_k = catalog_top_k
        self._jobs: dict[str, _Job] = {}

    def _job(self, job_id: str) -> _Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise AgentError(f"no job {job_id!r} in this engine")
        return job

    async def start(self, request: JobRequest) -> str:
        request = _wire(request)
        if request.job_id in self._jobs:
            raise AgentError(f"job {request.job_id!r} already exists")
        state = new_state(
            job_id=request.job_id, task=request.task, spec=request.agent, inputs=request.inputs
        )
        job = _Job(request, DirectRuntime(self.services, run_id=state.run_id), state)
        loop = AgentLoop(
            job.runtime,
            request.agent,
            on_event=job.publish,
            catalog_mode=self._catalog_mode,
            catalog_top_k=self._top_k,
        )
        job.task = asyncio.create_task(_traced(loop, state), name=f"agent-job-{request.job_id}")
        job.task.add_done_callback(_settled)
        job.task.add_done_callback(job.wake)
        self._jobs[request.job_id] = job
        return request.job_id

    async def events(self, job_id: str) -> AsyncIterator[AgentEvent]:
        job = self._job(job_id)
        sent = 0
        while True:
            changed = job.changed
            while sent < len(job.events):
                event = job.events[sent]
                sent += 1
                yield event
                if event.kind == "job_finished":
                    return
            assert job.task is not None
            if job.task.done():
                return
            await changed.wait()

    async def send(self, job_id: str, text: str) -> None:
        job = self._job(job_id)
        if job.state.finished:
            raise AgentError(f"job {job_id!r} has ended ({job.state.status})")
        job.runtime.inbox.put_nowait(text)

    async def approve(self, job_id: str, decision: ApprovalDecision) -> None:
        job = self._job(job_id)
        if job.runtime.awaiting is None:
            raise AgentError(f"job {job_id!r} is not waiting for an approval")
        job.runtime.decisions.put_nowait(decision)

    async def cancel(self, job_id: str) -> None:
        job = self._job(job_id)
        assert job.task is not None
        job.task.cancel()
        await asyncio.wait({job.task})

    async def result(self, job_id: str) -> JobResult:
        job = self._job(job_id)
        assert job.task is not None
        # A job that failed or was cancelled says so in its state (status and reason); the
        # caller's own cancellation (or timeout) still propagates.
        await asyncio.wait({job.task})
        return result_of(job.state)

    def state(self, job_id: str) -> AgentState:
        """The live state of a job (for status views and tests)."""
        return self._job(job_id).state


def _settled(task: asyncio.Task[AgentState]) -> None:
    # A job's failure is recorded in its state (status ``failed`` and the reason); retrieving
    # the exception here marks it handled, so it is not reported again when the task is freed.
    if not task.cancelled():
        task.exception()
