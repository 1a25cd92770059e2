"""How a run ended, whichever way its workflow closed: :class:`RunResults`, behind
``TemporalEngine.result``.

A workflow that returns gives its :class:`~skillweave.engines.base.RunResult`; one that fails
with one of :data:`FAILURE_TYPES` carries it in the failure's details; any other close (the
workflow cancelled, terminated, timed out or failed otherwise) is mapped to a status and a
reason, with the counts of the run's final status when a worker can still answer.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError, CancelledError, TerminatedError
from temporalio.exceptions import TimeoutError as WorkflowTimeoutError

from skillweave.engines.base import RunResult
from skillweave.engines.contract import FAILURE_TYPES
from skillweave.engines.temporal._errors import first_line
from skillweave.engines.temporal._handles import RunHandles
from skillweave.errors import AgentError

__all__ = ["FAILURE_TYPES", "RunResults"]


class RunResults:
    """Waits for runs' workflows to close and says how each ended.

    Args:
        handles: the runs' workflows and queries.
    """

    def __init__(self, handles: RunHandles) -> None:
        self._handles = handles

    async def result(self, run_id: str) -> RunResult:
        """Wait for the run's workflow to close; how it ended, whichever way it did."""
        handle = self._handles.of(run_id)
        try:
            with self._handles.errors(run_id):
                return await handle.result()
        except WorkflowFailureError as exc:
            cause = exc.cause
        if isinstance(cause, ApplicationError) and cause.type in FAILURE_TYPES and cause.details:
            return RunResult.model_validate(cause.details[0])
        if isinstance(cause, CancelledError):
            status, reason = "cancelled", "the workflow was cancelled"
        elif isinstance(cause, TerminatedError):
            status, reason = "failed", f"terminated: {cause.message}"
        elif isinstance(cause, WorkflowTimeoutError):
            status, reason = "failed", "the workflow timed out"
        elif isinstance(cause, ApplicationError):
            status, reason = "failed", f"{cause.type or 'ApplicationError'}: {cause.message}"
        else:
            status, reason = "failed", f"{type(cause).__name__}: {first_line(cause)}"
        return await self._closed_result(run_id, status=status, reason=reason)

    async def _closed_result(self, run_id: str, *, status: str, reason: str) -> RunResult:
        """The result of a run whose workflow closed without returning one: counts from its
        final status when a worker can still answer, else only the status and reason."""
        try:
            view = await self._handles.status(run_id, timeout=timedelta(seconds=3))
        except AgentError:
            return RunResult(run_id=run_id, status=status, reason=reason)  # type: ignore[arg-type]
        return RunResult(
            run_id=run_id,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            answer=view.answer,
            turns=view.turn,
            script_runs=view.script_runs,
            usage=view.usage,
            active_skills=view.active_skills,
        )
