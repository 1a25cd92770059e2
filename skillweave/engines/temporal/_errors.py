"""What the Temporal server says about a run, as skillweave's errors.

Every call on a run's workflow (the engine's, the follower's, the run views') goes through
:func:`run_errors`: a run that does not exist or has ended, a query no worker answered
(:class:`NoWorkerError`), anything else the server refused, each as one clear
:class:`~skillweave.errors.AgentError`. :func:`first_line` is how the package quotes the server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from temporalio.client import WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from skillweave.errors import AgentError

__all__ = ["NoWorkerError", "first_line", "run_errors"]


def first_line(exc: BaseException) -> str:
    """The first line of what `exc` says (its type's name when it says nothing)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class NoWorkerError(AgentError):
    """No worker answered a query about a run (none polls its task queue); the run itself is
    durable and goes on once one does.

    Attributes:
        run_id: the run.
        task_queue: where its workers poll.
        waited_seconds: how long a follower waited before giving up; None for one query.
    """

    def __init__(
        self, run_id: str, *, task_queue: str, waited_seconds: float | None = None
    ) -> None:
        self.run_id = run_id
        self.task_queue = task_queue
        self.waited_seconds = waited_seconds
        if waited_seconds is None:
            message = (
                f"run {run_id!r}: no worker answered in time; is `skillweave worker` (or "
                f"`skillweave dev`) running on task queue {task_queue!r}?"
            )
        else:
            message = (
                f"run {run_id!r}: no worker answered for {waited_seconds:.0f} s (task queue "
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
def run_errors(run_id: str, task_queue: str) -> Iterator[None]:
    """What the server says about a run, as one clear :class:`AgentError`
    (:class:`NoWorkerError` when no worker answered)."""
    try:
        yield
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            if "already completed" in exc.message:
                raise AgentError(f"run {run_id!r} has ended") from None
            raise AgentError(f"no run {run_id!r} on this Temporal namespace") from None
        if _no_answer(exc):
            raise NoWorkerError(run_id, task_queue=task_queue) from None
        raise AgentError(f"run {run_id!r}: Temporal said: {first_line(exc)}") from None
    except WorkflowQueryFailedError as exc:
        raise AgentError(f"run {run_id!r}: the query failed: {exc.message}") from None
