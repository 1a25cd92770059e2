"""`AgentActivities`: the agent workflow's side effects, as Temporal activities.

Each activity is one ``AgentServices`` method under the contract's name for it
(:class:`~skillweave.engines.contract.Activity`, which the workflow schedules by), taking the
runtime's input model and returning its result model; the worker registers
:meth:`AgentActivities.definitions`. What this layer adds is only what Temporal needs:

- **the worker's limits**: ``job_limits``, a local activity each job calls once at its start,
  answers the :class:`~skillweave.engines.contract.ActivityTimeouts` this worker's settings
  give (``WORKFLOW__*_TIMEOUT_SECONDS``, ``WORKFLOW__ACTIVITY_MAX_ATTEMPTS``): the worker owns
  the limits its jobs' activities run under, not the client that started them;

- **heartbeats** from the long calls (a model call, a skill activation that may run
  ``--help-json`` in a sandbox, a script run), so a dead worker is noticed by the heartbeat
  timeout rather than the start-to-close one, and a cancellation is delivered (Temporal
  delivers it in a heartbeat's response);
- **a check of the idempotency key** of a script run: the loop made it
  (``skillweave.agent.identity``) and it is used as it came, so both engines ask the manager
  under the same key; it must be this workflow's key for this run;
- **retryability**: the one rule of ``skillweave.engines.retries``, carried to Temporal by
  :mod:`activities.errors`;
- **retries told**: an attempt that fails and will be tried again puts its
  :class:`~skillweave.engines.retries.RetryNotice` in its heartbeat details (the line, then its
  fields), which the server keeps with the pending activity: the UI shows them there, and the
  engine's followers read them (``TemporalEngine.follow``), since the workflow never sees a
  retry the server schedules.

Cancelling a script run at the manager when the activity is cancelled is the services' job
(``AgentServices.run_skill_script``), the same on both engines.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from temporalio import activity
from temporalio.common import RetryPolicy
from temporalio.exceptions import TemporalError

from activities.errors import raises_application_errors
from skillweave.agent.identity import execution_key, job_id_of
from skillweave.agent.runtime import (
    CatalogInput,
    CatalogResult,
    CreateSkillInput,
    CreateSkillOutcome,
    InvokeModelInput,
    LoadSkillInput,
    ModelTurn,
    PublishSkillInput,
    PublishSkillOutcome,
    ReadResourceInput,
    RunScriptInput,
    ScriptOutcome,
    SearchInput,
    SearchOutcome,
    SkillLoaded,
    ToolOutcome,
)
from skillweave.engines.contract import (
    Activity,
    ActivityTimeouts,
    LimitsInput,
    RecordInput,
    activity_timeouts,
)
from skillweave.engines.retries import Backoff, retry_notice
from skillweave.engines.services import AgentServices
from skillweave.errors import AgentError
from skillweave.telemetry import bound
from skillweave.waiting import WAITING, Waiting

__all__ = ["AgentActivities", "checked_execution_key"]

_log = logging.getLogger(__name__)


def checked_execution_key(request: RunScriptInput, info: activity.Info) -> str:
    """The idempotency key a script run goes to the manager under: the request's, when it is
    the one :func:`~skillweave.agent.identity.execution_key` gives this workflow's run.

    Raises:
        AgentError: the activity was not scheduled by a workflow, or its request carries
            another job's or another run's key (it would reach somebody else's result).
    """
    if info.workflow_id is None:
        raise AgentError("run_skill_script must be scheduled by a workflow")
    job_id = job_id_of(info.workflow_id)
    key = execution_key(job_id, request.seq)
    if request.execution_id == key:
        return key
    raise AgentError(
        f"run_skill_script was asked to run under {request.execution_id!r}, "
        f"not this run's key {key!r}"
    )


@contextlib.asynccontextmanager
async def _heartbeating(every: float) -> AsyncIterator[None]:
    """Heartbeat every `every` seconds until the block ends.

    Not at once: most calls end within milliseconds, and a heartbeat is a round trip to the
    server. The heartbeat timeout is longer than `every`, so the first beat, `every` seconds
    in, is in time. While the call waits (a manager down or refusing this worker, a full
    pool: told through ``skillweave.waiting.WAITING``), the wait goes with that beat and
    every beat after as its details, :meth:`~skillweave.waiting.Waiting.line` then its fields
    (as a ``RetryNotice`` is carried), which the UI shows on the pending activity and the
    engine's followers decode with ``Waiting.model_validate``; once the wait is over (told
    ``None``), the beats carry nothing.
    """
    current: list[Waiting] = []

    def details() -> tuple[object, ...]:
        if not current:
            return ()
        return (current[0].line(), current[0].model_dump(mode="json"))

    def waiting(told: Waiting | None) -> None:
        current[:] = [] if told is None else [told]
        activity.heartbeat(*details())

    async def beat() -> None:
        while True:
            await asyncio.sleep(every)
            activity.heartbeat(*details())

    reporting = WAITING.set(waiting)
    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        WAITING.reset(reporting)
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


def _backoff(policy: RetryPolicy | None) -> Backoff:
    """The back-off the server follows for this activity: its retry policy's numbers."""
    if policy is None:
        return Backoff()
    maximum = policy.maximum_interval or policy.initial_interval * 100  # the server's default
    return Backoff(
        initial=policy.initial_interval.total_seconds(),
        coefficient=policy.backoff_coefficient,
        maximum=maximum.total_seconds(),
        attempts=policy.maximum_attempts or 2**31 - 1,  # 0: no limit
    )


def _tells_retries(
    fn: Callable[[Any, Any], Coroutine[Any, Any, Any]],
) -> Callable[[Any, Any], Coroutine[Any, Any, Any]]:
    """When the attempt fails and the rule tries it again, heartbeat its
    :class:`~skillweave.engines.retries.RetryNotice` (see the module docstring) before the
    failure leaves: the SDK sends the last details with the failure. Local activities have no
    heartbeat, and temporalio's own errors are the server's to retry."""

    @functools.wraps(fn)
    async def wrapper(self: Any, request: Any) -> Any:
        try:
            return await fn(self, request)
        except TemporalError:
            raise
        except Exception as exc:
            info = activity.info()
            if not info.is_local:
                try:
                    notice = retry_notice(
                        exc,
                        call=self._services.call_name(request),
                        attempt=info.attempt,
                        backoff=_backoff(info.retry_policy),
                    )
                    if notice is not None:
                        activity.heartbeat(notice.line(), notice.model_dump(mode="json"))
                except Exception:  # telling is best effort: the failure itself must leave
                    _log.warning(
                        "could not tell the retry of %s", info.activity_type, exc_info=True
                    )
            raise

    return wrapper


class AgentActivities:
    """The activities of the agent workflow, over one worker's services.

    Args:
        services: the side effects (model, skill library, store, sandbox manager).
        heartbeat_seconds: how often long activities heartbeat; well under the workflow's
            heartbeat timeout (``ActivityTimeouts.heartbeat_seconds``).
        limits: what ``job_limits`` answers: the limits this worker's jobs run under;
            by default those of its settings (``services.settings.workflow``).
    """

    def __init__(
        self,
        services: AgentServices,
        *,
        heartbeat_seconds: float = 5.0,
        limits: ActivityTimeouts | None = None,
    ) -> None:
        self._services = services
        self._heartbeat_seconds = heartbeat_seconds
        self.limits = limits or activity_timeouts(services.settings.workflow)

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
            self.create_skill,
            self.publish_skill,
            self.job_limits,
        ]

    @activity.defn(name=Activity.PREPARE_CATALOG.value)
    @raises_application_errors
    @_tells_retries
    @_with_job_fields
    async def prepare_catalog(self, request: CatalogInput) -> CatalogResult:
        """The tier-1 catalog of the skills the job may see."""
        return await self._services.prepare_catalog(request)

    @activity.defn(name=Activity.INVOKE_MODEL.value)
    @raises_application_errors
    @_tells_retries
    @_with_job_fields
    async def invoke_model(self, request: InvokeModelInput) -> ModelTurn:
        """One model call; its reply is stored in the transcript."""
        async with _heartbeating(self._heartbeat_seconds):
            return await self._services.invoke_model(request)

    @activity.defn(name=Activity.LOAD_SKILL.value)
    @raises_application_errors
    @_tells_retries
    @_with_job_fields
    async def load_skill(self, request: LoadSkillInput) -> SkillLoaded:
        """Activate a skill, registering its script tools (which may run ``--help-json``)."""
        async with _heartbeating(self._heartbeat_seconds):
            return await self._services.load_skill(request)

    @activity.defn(name=Activity.READ_SKILL_RESOURCE.value)
    @raises_application_errors
    @_tells_retries
    @_with_job_fields
    async def read_skill_resource(self, request: ReadResourceInput) -> ToolOutcome:
        """One file of an active skill, stored as a tool result."""
        return await self._services.read_skill_resource(request)

    @activity.defn(name=Activity.RUN_SKILL_SCRIPT.value)
    @raises_application_errors
    @_tells_retries
    @_with_job_fields
    async def run_skill_script(self, request: RunScriptInput) -> ScriptOutcome:
        """Run a script in a sandbox under the run's idempotency key, so every attempt asks
        the manager for the same run (cancelled at the manager when the activity is)."""
        key = checked_execution_key(request, activity.info())
        with bound(execution_id=key):
            async with _heartbeating(self._heartbeat_seconds):
                return await self._services.run_skill_script(request)

    @activity.defn(name=Activity.SEARCH_SKILLS.value)
    @raises_application_errors
    @_tells_retries
    @_with_job_fields
    async def search_skills(self, request: SearchInput) -> SearchOutcome:
        """Skills that fit a query, stored as a tool result."""
        return await self._services.search_skills(request)

    @activity.defn(name=Activity.CREATE_SKILL.value)
    @raises_application_errors
    @_tells_retries
    @_with_job_fields
    async def create_skill(self, request: CreateSkillInput) -> CreateSkillOutcome:
        """A skill the agent wrote: checked, scanned, its examples run, kept as a draft (every
        step idempotent: a retry keeps one draft)."""
        async with _heartbeating(self._heartbeat_seconds):
            return await self._services.create_skill(request)

    @activity.defn(name=Activity.PUBLISH_SKILL.value)
    @raises_application_errors
    @_tells_retries
    @_with_job_fields
    async def publish_skill(self, request: PublishSkillInput) -> PublishSkillOutcome:
        """An approved draft stored as an uploaded skill (idempotent: one version)."""
        async with _heartbeating(self._heartbeat_seconds):
            return await self._services.publish_skill(request)

    @activity.defn(name=Activity.JOB_LIMITS.value)
    @_with_job_fields
    async def job_limits(self, request: LimitsInput) -> ActivityTimeouts:
        """The limits the job's activities run under: this worker's (asked once per job)."""
        return self.limits

    @activity.defn(name=Activity.RECORD_TRANSCRIPT.value)
    @raises_application_errors
    @_tells_retries
    @_with_job_fields
    async def record_transcript(self, request: RecordInput) -> None:
        """Store loop-made messages no model call carried (at the end of a job)."""
        await self._services.record(request.writes, run_id=request.run_id)
