"""`AgentActivities`: the agent workflow's side effects, as Temporal activities.

Each activity is one ``AgentServices`` method under a stable name the workflow calls it by
(``invoke_model``, ``run_skill_script``…), taking the runtime's input model and returning its
result model; the worker registers :meth:`AgentActivities.definitions`. What this layer adds
is only what Temporal needs:

- **heartbeats** from the long calls (a model call, a skill activation that may run
  ``--help-json`` in a sandbox, a script run), so a dead worker is noticed by the heartbeat
  timeout rather than the start-to-close one, and a cancellation is delivered (Temporal
  delivers it in a heartbeat's response);
- **the idempotency key** of a script run, ``{workflow_id}/{activity_id}``: the workflow
  gives each run the activity id ``script-{seq}``, so a retry, or the same run after
  continue-as-new, reaches the manager under the same key and gets the stored result back
  instead of running the script twice;
- **cancelling the sandbox** when a script run is cancelled, since the manager would
  otherwise run it to its timeout;
- **retryability**, decided by :mod:`activities.errors`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from temporalio import activity

from activities.errors import raises_application_errors
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
)
from skillweave.engines.contract import RecordInput
from skillweave.engines.services import AgentServices
from skillweave.errors import AgentError
from skillweave.telemetry import bound

__all__ = ["AgentActivities", "execution_key"]


def execution_key(info: activity.Info) -> str:
    """The idempotency key of a script run: the same for every attempt of the activity.

    Raises:
        AgentError: the activity was not scheduled by a workflow (it has no stable key).
    """
    if info.workflow_id is None:
        raise AgentError("run_skill_script must be scheduled by a workflow")
    return f"{info.workflow_id}/{info.activity_id}"


@contextlib.asynccontextmanager
async def _heartbeating(every: float) -> AsyncIterator[None]:
    """Heartbeat now and every `every` seconds until the block ends."""

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(every)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        # Waiting (not awaiting the task) leaves this task's own cancellation, if any, intact.
        await asyncio.wait({task})


def _with_job_fields(
    fn: Callable[[Any, Any], Coroutine[Any, Any, Any]],
) -> Callable[[Any, Any], Coroutine[Any, Any, Any]]:
    """Bind the request's job id (and skill, script, execution id when it has them) for the
    activity's log lines and its span (the SDK's tracing interceptor opened it)."""

    @functools.wraps(fn)
    async def wrapper(self: Any, request: Any) -> Any:
        with bound(
            job_id=getattr(request, "run_id", None),
            skill=getattr(request, "skill", None),
            script=getattr(request, "script", None),
            execution_id=getattr(request, "execution_id", None),
        ):
            return await fn(self, request)

    return wrapper


class AgentActivities:
    """The activities of the agent workflow, over one worker's services.

    Args:
        services: the side effects (model, skill library, store, sandbox manager).
        heartbeat_seconds: how often long activities heartbeat; well under the workflow's
            heartbeat timeout (``ActivityTimeouts.heartbeat_seconds``).
    """

    def __init__(self, services: AgentServices, *, heartbeat_seconds: float = 5.0) -> None:
        self._services = services
        self._heartbeat_seconds = heartbeat_seconds

    def definitions(self) -> list[Callable[..., Any]]:
        """The bound activities, for ``Worker(activities=...)``."""
        return [
            self.prepare_catalog,
            self.invoke_model,
            self.load_skill,
            self.read_skill_resource,
            self.run_skill_script,
            self.search_skills,
            self.record_transcript,
        ]

    @activity.defn(name="prepare_catalog")
    @raises_application_errors
    @_with_job_fields
    async def prepare_catalog(self, request: CatalogInput) -> CatalogResult:
        """The tier-1 catalog of the skills the job may see."""
        return await self._services.prepare_catalog(request)

    @activity.defn(name="invoke_model")
    @raises_application_errors
    @_with_job_fields
    async def invoke_model(self, request: InvokeModelInput) -> ModelTurn:
        """One model call; its reply is stored in the transcript."""
        async with _heartbeating(self._heartbeat_seconds):
            return await self._services.invoke_model(request)

    @activity.defn(name="load_skill")
    @raises_application_errors
    @_with_job_fields
    async def load_skill(self, request: LoadSkillInput) -> SkillLoaded:
        """Activate a skill, registering its script tools (which may run ``--help-json``)."""
        async with _heartbeating(self._heartbeat_seconds):
            return await self._services.load_skill(request)

    @activity.defn(name="read_skill_resource")
    @raises_application_errors
    @_with_job_fields
    async def read_skill_resource(self, request: ReadResourceInput) -> ToolOutcome:
        """One file of an active skill, stored as a tool result."""
        return await self._services.read_skill_resource(request)

    @activity.defn(name="run_skill_script")
    @raises_application_errors
    @_with_job_fields
    async def run_skill_script(self, request: RunScriptInput) -> ScriptOutcome:
        """Run a script in a sandbox under this activity's idempotency key; the request's
        own ``execution_id`` is replaced, so every attempt asks the manager for the same run."""
        request = request.model_copy(update={"execution_id": execution_key(activity.info())})
        try:
            with bound(execution_id=request.execution_id):
                async with _heartbeating(self._heartbeat_seconds):
                    return await self._services.run_skill_script(request)
        except asyncio.CancelledError:
            await self._cancel_execution(request.execution_id)
            raise

    @activity.defn(name="search_skills")
    @raises_application_errors
    @_with_job_fields
    async def search_skills(self, request: SearchInput) -> SearchOutcome:
        """Skills that fit a query, stored as a tool result."""
        return await self._services.search_skills(request)

    @activity.defn(name="record_transcript")
    @raises_application_errors
    @_with_job_fields
    async def record_transcript(self, request: RecordInput) -> None:
        """Store loop-made messages no model call carried (at the end of a job)."""
        await self._services.record(request.writes, run_id=request.run_id)

    async def _cancel_execution(self, execution_id: str) -> None:
        """Ask the manager to stop a run; best effort, since the activity is cancelled
        whatever the answer (shielded, so finishing the request is not cut short)."""
        try:
            await asyncio.shield(self._services.sandbox.cancel(execution_id))
        except Exception:
            activity.logger.warning("could not cancel execution %s", execution_id, exc_info=True)
