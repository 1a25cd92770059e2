"""`DirectEngine`: the agent loop in this process (``WORKFLOW__EXECUTION_ENGINE=direct``).

The same ``AgentLoop`` the Temporal engine runs, with :class:`DirectRuntime` calling
``AgentServices`` in-process. Every input and result crosses a JSON round-trip through the same
pydantic models the Temporal engine's activities use, so a model that does not survive
serialization fails here first, not in production. Jobs are asyncio tasks; cancelling one
cancels the runtime call in flight (a script run is cancelled at the manager too).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import TypeVar

from pydantic import BaseModel

from skillweave.agent.events import AgentEvent
from skillweave.agent.loop import AgentLoop, new_state
from skillweave.agent.runtime import (
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
from skillweave.engines.base import JobRequest, JobResult
from skillweave.engines.services import AgentServices
from skillweave.errors import AgentError

__all__ = ["DirectEngine", "DirectRuntime"]

_M = TypeVar("_M", bound=BaseModel)


def _wire(model: _M) -> _M:
    """`model` after the JSON round-trip every activity input and result makes."""
    return type(model).model_validate_json(model.model_dump_json())


class DirectRuntime:
    """The ``Runtime`` port over in-process services, for one job."""

    def __init__(self, services: AgentServices, *, run_id: str) -> None:
        self.services = services
        self.run_id = run_id
        self.inbox: asyncio.Queue[str] = asyncio.Queue()

    async def prepare_catalog(self, request: CatalogInput) -> CatalogResult:
        return _wire(await self.services.prepare_catalog(_wire(request)))

    async def invoke_model(self, request: InvokeModelInput) -> ModelTurn:
        return _wire(await self.services.invoke_model(_wire(request)))

    async def load_skill(self, request: LoadSkillInput) -> SkillLoaded:
        return _wire(await self.services.load_skill(_wire(request)))

    async def read_skill_resource(self, request: ReadResourceInput) -> ToolOutcome:
        return _wire(await self.services.read_skill_resource(_wire(request)))

    async def run_skill_script(self, request: RunScriptInput) -> ScriptOutcome:
        request = _wire(request)
        try:
            return _wire(await self.services.run_skill_script(request))
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


class _Job:
    def __init__(self, request: JobRequest, runtime: DirectRuntime, state: AgentState) -> None:
        self.request = request
        self.runtime = runtime
        self.state = state
        self.events: list[AgentEvent] = []
        self.changed = asyncio.Condition()
        self.task: asyncio.Task[AgentState] | None = None

    def publish(self, event: AgentEvent) -> None:
        self.events.append(event)
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()


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
        job.task = asyncio.create_task(loop.run(state), name=f"agent-job-{request.job_id}")
        self._jobs[request.job_id] = job
        return request.job_id

    async def events(self, job_id: str) -> AsyncIterator[AgentEvent]:
        job = self._job(job_id)
        sent = 0
        while True:
            while sent < len(job.events):
                event = job.events[sent]
                sent += 1
                yield event
                if event.kind == "job_finished":
                    return
            assert job.task is not None
            if job.task.done() and sent >= len(job.events):
                return
            async with job.changed:
                if sent >= len(job.events) and not job.task.done():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(job.changed.wait(), timeout=0.5)

    async def send(self, job_id: str, text: str) -> None:
        job = self._job(job_id)
        if job.state.finished:
            raise AgentError(f"job {job_id!r} has ended ({job.state.status})")
        job.runtime.inbox.put_nowait(text)

    async def cancel(self, job_id: str) -> None:
        job = self._job(job_id)
        assert job.task is not None
        job.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await job.task

    async def result(self, job_id: str) -> JobResult:
        job = self._job(job_id)
        assert job.task is not None
        # A job that failed or was cancelled says so in its state (status and reason).
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(job.task)
        return result_of(job.state)

    def state(self, job_id: str) -> AgentState:
        """The live state of a job (for status views and tests)."""
        return self._job(job_id).state


def result_of(state: AgentState) -> JobResult:
    """The :class:`JobResult` of a finished (or running) state."""
    return JobResult(
        job_id=state.job_id,
        status=state.status,
        reason=state.reason,
        answer=state.answer,
        turns=state.turn,
        script_runs=state.script_runs,
        usage=state.usage,
        active_skills={name: skill.version for name, skill in state.active.items()},
        outputs=tuple(state.outputs),
        transcript_entries=len(state.transcript),
    )
