"""`TemporalRuntime`: the agent loop's ``Runtime`` port inside a Temporal workflow.

Every side effect becomes one activity named by the contract's
:class:`~skillweave.engines.contract.Activity`, with a ``summary`` for the UI ("model turn 7",
"activate pdf", "run pdf/scripts/extract.py"), start-to-close timeouts, heartbeat timeouts on the
long ones, and a retry policy built from the one back-off both engines use
(:class:`~skillweave.engines.retries.Backoff`). Whether an error is worth retrying is decided by
``skillweave.engines.retries`` where it happens, in the activities: a non-retryable
``ApplicationError`` stops the retries at once. An activity that still fails surfaces here as
:class:`ToolFailure`, which ends the job.

The cheap, idempotent reads (the catalog, a resource, a search) run as local activities in
jobs started since the ``fewer-events-per-step`` patch (:meth:`TemporalRuntime._read` says why
that is safe); model calls, activations (which may run ``--help-json`` in a sandbox) and script
runs stay activities of their own, with heartbeats and a task a worker can pick up after a
crash.

The limits every call runs under (:attr:`TemporalRuntime.timeouts`) are the worker's:
:meth:`TemporalRuntime.job_limits` asks for them, once per job, before the loop starts (the
workflow decides when; that call itself runs under the contract's defaults).

The clock is workflow time; waiting for a user message or an approval is a durable
``wait_condition`` on the session the workflow's handlers fill.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel

    from skillweave.agent.identity import script_call_id
    from skillweave.agent.runtime import (
        ApprovalDecision,
        ApprovalRequest,
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
        TranscriptWrite,
        WaitInput,
    )
    from skillweave.agent.state import AgentState
    from skillweave.engines.contract import (
        Activity,
        ActivityTimeouts,
        LimitsInput,
        Phase,
        RecordInput,
    )
    from skillweave.engines.retries import Backoff
    from skillweave.errors import AgentError

__all__ = ["Session", "TemporalRuntime", "ToolFailure"]

_R = TypeVar("_R", bound=BaseModel)


class ToolFailure(AgentError):
    """An activity failed for good (not retryable, or out of attempts): the job fails."""

    def __init__(self, activity: str, cause: BaseException) -> None:
        if isinstance(cause, ApplicationError):
            # The activity's failure leads with one line; its details keep the whole message.
            fields = cause.details[0] if cause.details else None
            whole = fields.get("message") if isinstance(fields, dict) else None
            why = f"{cause.type or 'ApplicationError'}: {whole or cause.message}"
        else:
            why = f"{type(cause).__name__}: {cause}"
        super().__init__(f"{activity} failed: {why}")
        self.activity = activity
        self.error_type = cause.type if isinstance(cause, ApplicationError) else None


@dataclass
class Session:
    """What the workflow's handlers hand the runtime: messages and approval decisions."""

    inbox: list[str] = field(default_factory=list)
    taken: int = 0
    awaiting: ApprovalRequest | None = None
    decision: ApprovalDecision | None = None


class TemporalRuntime:
    """The ``Runtime`` port over activities, for one workflow run.

    Args:
        state: the job's state (read for summaries: the turn, the run id).
        session: the inbox and approvals the workflow's handlers fill.
        timeouts: activity timeouts and attempts until :meth:`job_limits` sets the worker's.
        on_phase: told what the job is doing before each call (status, search attributes).
    """

    def __init__(
        self,
        *,
        state: AgentState,
        session: Session,
        timeouts: ActivityTimeouts,
        on_phase: Callable[[Phase], None],
    ) -> None:
        self.state = state
        self.session = session
        self.timeouts = timeouts
        self._on_phase = on_phase
        self.local_reads = False
        """Run the cheap reads as local activities (set by the workflow from its patch)."""

    # --- activities ------------------------------------------------------------------------

    def _retry(self) -> RetryPolicy:
        return _retry_policy(self.timeouts)

    async def _call(
        self,
        name: Activity,
        request: BaseModel,
        result_type: type[_R] | None,
        *,
        summary: str,
        seconds: float,
        heartbeat: bool = False,
        **options: Any,
    ) -> Any:
        return await _settled(
            name,
            workflow.execute_activity(
                name.value,
                request,
                result_type=result_type,
                start_to_close_timeout=timedelta(seconds=seconds),
                heartbeat_timeout=(
                    timedelta(seconds=self.timeouts.heartbeat_seconds) if heartbeat else None
                ),
                retry_policy=self._retry(),
                summary=summary[:200],
                **options,
            ),
        )

    async def _read(
        self, name: Activity, request: BaseModel, result_type: type[_R], *, summary: str
    ) -> Any:
        """A cheap, idempotent read (the catalog, a resource, a search): a local activity,
        recorded as one marker in the workflow task that asked for it, instead of a task of its
        own and three events. Safe because such a read only reads the pinned skills and writes
        its result to a fixed transcript key: run again after a crash (nothing was recorded
        yet), it writes the same place, and the result the marker records is the one stored.
        Histories recorded before (``local_reads`` off) keep their activities."""
        if not self.local_reads:
            return await self._call(
                name, request, result_type, summary=summary, seconds=self.timeouts.short_seconds
            )
        return await _settled(
            name,
            workflow.execute_local_activity(
                name.value,
                request,
                result_type=result_type,
                start_to_close_timeout=timedelta(seconds=self.timeouts.short_seconds),
                retry_policy=self._retry(),
                summary=summary[:200],
            ),
        )

    async def job_limits(self) -> ActivityTimeouts:
        """Ask the worker for the limits the job runs under (a local activity, under the
        contract's default limits), and run every later call under them."""
        defaults = ActivityTimeouts()
        limits: ActivityTimeouts = await _settled(
            Activity.JOB_LIMITS,
            workflow.execute_local_activity(
                Activity.JOB_LIMITS.value,
                LimitsInput(run_id=self.state.run_id),
                result_type=ActivityTimeouts,
                start_to_close_timeout=timedelta(seconds=defaults.short_seconds),
                retry_policy=_retry_policy(defaults),
                summary="the worker's limits",
            ),
        )
        self.timeouts = limits
        return limits

    async def prepare_catalog(self, request: CatalogInput) -> CatalogResult:
        self._on_phase("starting")
        return await self._read(
            Activity.PREPARE_CATALOG, request, CatalogResult, summary="prepare the skill catalog"
        )

    async def invoke_model(self, request: InvokeModelInput) -> ModelTurn:
        self._on_phase("thinking")
        return await self._call(
            Activity.INVOKE_MODEL,
            request,
            ModelTurn,
            summary=f"model turn {self.state.turn + 1}",
            seconds=self.timeouts.model_seconds,
            heartbeat=True,
        )

    async def load_skill(self, request: LoadSkillInput) -> SkillLoaded:
        self._on_phase("activating")
        return await self._call(
            Activity.LOAD_SKILL,
            request,
            SkillLoaded,
            summary=f"activate {request.skill}",
            seconds=self.timeouts.short_seconds,
            heartbeat=True,
        )

    async def read_skill_resource(self, request: ReadResourceInput) -> ToolOutcome:
        self._on_phase("reading")
        return await self._read(
            Activity.READ_SKILL_RESOURCE,
            request,
            ToolOutcome,
            summary=f"read {request.skill}/{request.path}",
        )

    async def run_skill_script(self, request: RunScriptInput) -> ScriptOutcome:
        self._on_phase("running_script")
        summary = f"run {request.skill}/{request.script}"
        if request.run_json is not None:
            summary += f" ({request.tool_name})"
        elif request.args:
            summary += " " + " ".join(request.args)
        return await self._call(
            Activity.RUN_SKILL_SCRIPT,
            request,
            ScriptOutcome,
            summary=summary,
            seconds=self.timeouts.script_seconds,
            heartbeat=True,
            # The activity id is part of the job's history; the run's idempotency key is in
            # the request (skillweave.agent.identity makes both from the same seq).
            activity_id=script_call_id(request.seq),
            # A cancelled job waits until the run is cancelled at the manager too.
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )

    async def create_skill(self, request: CreateSkillInput) -> CreateSkillOutcome:
        self._on_phase("running_script")
        return await self._call(
            Activity.CREATE_SKILL,
            request,
            CreateSkillOutcome,
            summary=f"create skill {request.name}",
            # its examples run in sandboxes, one after another
            seconds=self.timeouts.script_seconds * (1 + len(request.examples)),
            heartbeat=True,
            # The examples' idempotency keys are in the request (made from the same seq).
            activity_id=f"create-skill-{request.seq}",
        )

    async def publish_skill(self, request: PublishSkillInput) -> PublishSkillOutcome:
        self._on_phase("activating")
        return await self._call(
            Activity.PUBLISH_SKILL,
            request,
            PublishSkillOutcome,
            summary=f"publish skill {request.name}",
            seconds=self.timeouts.short_seconds,
            heartbeat=True,
        )

    async def search_skills(self, request: SearchInput) -> SearchOutcome:
        self._on_phase("searching")
        return await self._read(
            Activity.SEARCH_SKILLS,
            request,
            SearchOutcome,
            summary=f"search skills for {request.query!r}",
        )

    async def record(self, writes: tuple[TranscriptWrite, ...]) -> None:
        await self._call(
            Activity.RECORD_TRANSCRIPT,
            RecordInput(run_id=self.state.run_id, writes=writes),
            None,
            summary="record the last messages",
            seconds=self.timeouts.short_seconds,
        )

    # --- time and people -------------------------------------------------------------------

    def now(self) -> float:
        return workflow.time()

    async def wait_for_input(self, request: WaitInput) -> list[str]:
        session = self.session
        if not session.inbox and request.timeout_seconds > 0:
            self._on_phase("waiting_input")
            try:
                await workflow.wait_condition(
                    lambda: bool(session.inbox),
                    timeout=timedelta(seconds=request.timeout_seconds),
                    timeout_summary="idle timeout: close the session",
                )
            except TimeoutError:
                return []
        taken, session.inbox = session.inbox, []
        session.taken += len(taken)
        return taken

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        session = self.session
        session.awaiting, session.decision = request, None
        self._on_phase("awaiting_approval")
        try:
            await workflow.wait_condition(
                lambda: session.decision is not None,
                timeout=timedelta(seconds=request.timeout_seconds),
                timeout_summary="approval timeout: deny",
            )
        except TimeoutError:
            return ApprovalDecision(
                approved=False, note=f"nobody decided within {request.timeout_seconds:g} s"
            )
        finally:
            session.awaiting = None
        decision, session.decision = session.decision, None
        assert decision is not None
        return decision


def _retry_policy(timeouts: ActivityTimeouts) -> RetryPolicy:
    """The one back-off both engines use, with `timeouts`' attempts, as Temporal takes it."""
    backoff = Backoff(attempts=timeouts.max_attempts)
    return RetryPolicy(
        initial_interval=timedelta(seconds=backoff.initial),
        backoff_coefficient=backoff.coefficient,
        maximum_interval=timedelta(seconds=backoff.maximum),
        maximum_attempts=backoff.attempts,
    )


async def _settled(name: Activity, call: Awaitable[Any]) -> Any:
    """The activity's result; its failure as :class:`ToolFailure`, its cancellation (the job
    was cancelled) as ``asyncio.CancelledError``."""
    try:
        return await call
    except ActivityError as exc:
        if isinstance(exc.cause, CancelledError):
            # Cancelled because the job was: not a failure of the tool.
            raise asyncio.CancelledError() from exc
        raise ToolFailure(name.value, exc.cause or exc) from exc
