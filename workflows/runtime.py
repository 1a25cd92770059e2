"""`TemporalRuntime`: the agent loop's ``Runtime`` port inside a Temporal workflow.

Every side effect is one activity, scheduled by :meth:`TemporalRuntime.call` from its descriptor
(:class:`~skillweave.agent.effects.SideEffect`): its name, a ``summary`` for the UI ("model turn
7", "activate pdf", "run pdf/scripts/extract.py"), its start-to-close timeout, a heartbeat
timeout on the long ones, its activity id and cancellation, local or not, and a retry policy
built from the one back-off both engines use (:class:`~skillweave.engines.retries.Backoff`).
Nothing here is written per effect. Whether an error is worth retrying is decided by
``skillweave.engines.retries`` where it happens, in the activities: a non-retryable
``ApplicationError`` stops the retries at once. An activity that still fails surfaces here as
:class:`ToolFailure`, which ends the run.

The cheap, idempotent reads (the catalog, a resource, a search: ``local`` in their descriptors)
run as local activities, recorded as one marker in the workflow task that asked for them instead
of a task of their own and three events. That is safe because such a read only reads the pinned
skills and writes its result to a fixed transcript key: run again after a crash (nothing was
recorded yet), it writes the same place, and the result the marker records is the one stored.
Model calls, activations (which may run ``--help-json`` in a sandbox) and script runs stay
activities of their own, with heartbeats and a task a worker can pick up after a crash.

A resource read is cheaper still where the run's worker says its model calls do reads
(``ActivityTimeouts.model_calls_read``, in its ``run_limits`` answer): the loop defers it and
the next ``invoke_model`` does it first (:meth:`TemporalRuntime.reads_ride_with_model_calls`),
so a read step takes one activity and one workflow activation. A run an earlier worker answered
reads with local activities, as its history did. During a rolling deploy a model call with reads
can reach a worker of an earlier release, which ignores them and fails for want of their
records (``ArtifactNotFoundError``, never retried): :meth:`TemporalRuntime.call` then does the
reads as local activities and calls again, so the run goes on.

The limits every call runs under (:attr:`TemporalRuntime.timeouts`) are the worker's:
:meth:`TemporalRuntime.run_limits` asks for them, once per run, before the loop starts (the
workflow decides when; that call itself runs under the contract's defaults: its descriptor's
``limits``).

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
    from skillweave.agent.effect_models import (
        ActivityTimeouts,
        ApprovalDecision,
        ApprovalRequest,
        InvokeModelInput,
        LimitsInput,
        WaitInput,
    )
    from skillweave.agent.effects import (
        INVOKE_MODEL,
        READ_SKILL_RESOURCE,
        RUN_LIMITS,
        Phase,
        SideEffect,
    )
    from skillweave.agent.state import AgentState
    from skillweave.engines.retries import Backoff
    from skillweave.errors import AgentError

__all__ = ["Session", "TemporalRuntime", "ToolFailure", "retry_policy"]

_In = TypeVar("_In")
_Out = TypeVar("_Out")


class ToolFailure(AgentError):
    """An activity failed for good (not retryable, or out of attempts): the run fails."""

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
        state: the run's state (read for summaries: the turn, the run id).
        session: the inbox and approvals the workflow's handlers fill.
        timeouts: activity timeouts and attempts until :meth:`run_limits` sets the worker's.
        on_phase: told what the run is doing before each call (status, search attributes).
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

    # --- activities ------------------------------------------------------------------------

    async def call(self, effect: SideEffect[_In, _Out], request: _In) -> _Out:
        """Schedule the activity `effect` describes, with `request`, and answer its result.

        Raises:
            ToolFailure: it failed for good (not retryable, or out of attempts).
            asyncio.CancelledError: it was cancelled because the run was.
        """
        try:
            return await self._schedule(effect, request)
        except ToolFailure as failure:
            if not _read_by_old_worker(request, failure):
                raise
            assert isinstance(request, InvokeModelInput)
        # A worker of a release before reads rode with model calls took the call: it did not
        # do the reads and found no record at their seqs. Do them here, then call again.
        outcomes = [await self._schedule(READ_SKILL_RESOURCE, read) for read in request.reads]
        turn = await self._schedule(INVOKE_MODEL, request.model_copy(update={"reads": ()}))
        answer: _Out = turn.model_copy(update={"reads": tuple(outcomes)})  # type: ignore[assignment]
        return answer

    def reads_ride_with_model_calls(self) -> bool:
        # What the worker's run_limits answered, recorded in the run's history (or carried
        # over continue-as-new): a run whose history read with local activities replays so.
        return self.timeouts.model_calls_read

    async def _schedule(self, effect: SideEffect[_In, _Out], request: _In) -> _Out:
        if effect.phase is not None:
            self._on_phase(effect.phase)
        limits = self.timeouts if effect.limits == "run" else ActivityTimeouts()
        options: dict[str, Any] = {
            "result_type": effect.output,
            "start_to_close_timeout": timedelta(seconds=effect.seconds(request, limits)),
            "retry_policy": retry_policy(limits),
            "summary": effect.summary(request, self.state)[:200],
        }
        if effect.activity_id is not None:
            options["activity_id"] = effect.activity_id(request)
        if effect.local:
            return await _settled(
                effect.name, workflow.execute_local_activity(effect.name, request, **options)
            )
        if effect.heartbeat:
            options["heartbeat_timeout"] = timedelta(seconds=limits.heartbeat_seconds)
        if effect.waits_for_cancellation:
            options["cancellation_type"] = (
                workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
            )
        return await _settled(
            effect.name, workflow.execute_activity(effect.name, request, **options)
        )

    async def run_limits(self) -> ActivityTimeouts:
        """Ask the worker for the limits the run runs under (``run_limits``, under the
        contract's default limits), and run every later call under them."""
        self.timeouts = await self.call(RUN_LIMITS, LimitsInput(run_id=self.state.run_id))
        return self.timeouts

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


def _read_by_old_worker(request: object, failure: ToolFailure) -> bool:
    """Whether `failure` is a model call with reads that found no record at their seqs: what
    a worker of an earlier release answers (it ignores the reads), during a rolling deploy."""
    return (
        isinstance(request, InvokeModelInput)
        and bool(request.reads)
        and failure.activity == INVOKE_MODEL.name
        and failure.error_type == "ArtifactNotFoundError"
    )


def retry_policy(timeouts: ActivityTimeouts) -> RetryPolicy:
    """The one back-off both engines use, with `timeouts`' attempts, as Temporal takes it
    (every activity of a run, and of an eval batch: ``workflows.evals``)."""
    backoff = Backoff(attempts=timeouts.max_attempts)
    return RetryPolicy(
        initial_interval=timedelta(seconds=backoff.initial),
        backoff_coefficient=backoff.coefficient,
        maximum_interval=timedelta(seconds=backoff.maximum),
        maximum_attempts=backoff.attempts,
    )


async def _settled(name: str, call: Awaitable[Any]) -> Any:
    """The activity's result; its failure as :class:`ToolFailure`, its cancellation (the run
    was cancelled) as ``asyncio.CancelledError``."""
    try:
        return await call
    except ActivityError as exc:
        if isinstance(exc.cause, CancelledError):
            # Cancelled because the run was: not a failure of the tool.
            raise asyncio.CancelledError() from exc
        raise ToolFailure(name, exc.cause or exc) from exc
