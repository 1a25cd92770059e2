"""Waiting for the MCP manager and its sandboxes: one policy for every caller of a manager.

A full pool (``PoolExhaustedError``, 503 + Retry-After) and an execution another manager is
running (``ExecutionInProgressError``) are back-pressure, not failures: :func:`queued` asks
again after each Retry-After, jittered down to half so that waiting callers spread out, until
``queue_seconds`` have passed, and only then lets the error through (to the engine's retries,
or to an MCP client as a tool error). Used by the agent's services (``skillweave.engines``)
and by the MCP front door (``mcp_manager.mcp_server``) with the same
``SANDBOX__QUEUE_SECONDS``.

A manager that does not take the connection (``ManagerUnreachableError``: down, restarting,
not started yet; nothing was sent), that answers it is starting (``ManagerNotReadyError``, one
of those: waiting for its store; nothing ran) or that refuses this caller
(``ManagerRefusedError``: its token or its store, which an operator fixes, typically by
restarting one side with the right settings; nothing ran) is waited for the same way, asking
again after 1 s, then twice as long each time up to 10 s (jittered): a worker holds its script
steps through a manager's restart instead of spending their attempts on it, and a refusal
never reaches the model. A run the manager refused because it cannot store the run's audit
record (``AuditUnavailableError``: the store failing; nothing ran, the id is free) is waited
for on the store, at the same back-off (never sooner than its Retry-After): the step goes
on, and its script runs once, when the store is back; it is never a tool result, and never
a failed run before the budget is spent.

Each wait is told as a :class:`~skillweave.waiting.Waiting` through
:func:`~skillweave.waiting.tell_waiting` (a Temporal activity's heartbeat details, for the UI
and the engine's followers): once when it begins, again (same ``since``) when its cause
changes, and ``None`` when it ends, whether the call went through or the error goes on. A wait
for the manager or the store is logged at WARNING with its cause, once per wait and cause,
never per attempt.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from skillweave.errors import (
    AuditUnavailableError,
    ExecutionInProgressError,
    ManagerRefusedError,
    ManagerUnreachableError,
    PoolExhaustedError,
    SandboxError,
)
from skillweave.waiting import WaitFor, Waiting, tell_waiting

__all__ = ["queued"]

T = TypeVar("T")

_JITTER: Final = random.SystemRandom()
_UNREACHED_FIRST: Final = 1.0
_UNREACHED_MOST: Final = 10.0
_DETAIL_CHARS: Final = 500
_log = logging.getLogger(__name__)

_WAITED: Final = (
    PoolExhaustedError,
    ExecutionInProgressError,
    ManagerUnreachableError,
    ManagerRefusedError,
    AuditUnavailableError,
)
"""What is waited for rather than failed: back-pressure, a manager down or refusing, and a
store that cannot take the run's audit record."""


def _jitter() -> float:
    return _JITTER.uniform(0.5, 1.0)


async def queued(
    attempt: Callable[[], Awaitable[T]],
    *,
    queue_seconds: float,
    call: str = "",
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    jitter: Callable[[], float] = _jitter,
) -> T:
    """Await `attempt()`, asking again while the pool is full, the manager is down or
    refuses this caller, or the run cannot be recorded, for up to `queue_seconds`.

    Args:
        attempt: one try (claim a sandbox and run), e.g. ``lambda: client.execute(request)``.
        queue_seconds: how long to keep asking; 0 tries once.
        call: the step that waits, in a few words (``script pdf/scripts/x.py``), for its
            :class:`~skillweave.waiting.Waiting`.
        clock, sleep, jitter: monotonic seconds, how to wait, and the factor a pause is
            scaled by (in [0.5, 1]); tests pass fakes.

    Raises:
        PoolExhaustedError, ExecutionInProgressError, ManagerUnreachableError,
            ManagerRefusedError, AuditUnavailableError: still so after `queue_seconds`.
    """
    deadline = clock() + queue_seconds
    backoffs = 0  # waits on the manager or the store: 1 s, doubling
    told: Waiting | None = None
    cause: tuple[str, str] | None = None
    try:
        while True:
            try:
                return await attempt()
            except _WAITED as exc:
                left = deadline - clock()
                if left <= 0:
                    raise
                on, pause = _wait_of(exc, backoffs)
                if on in ("manager", "store"):
                    backoffs += 1
                now = (on, _cause_of(exc))
                if now != cause:  # a wait begins, or its cause changed: tell it, log it
                    cause = now
                    told = _told(told, on, exc, call=call)
                    tell_waiting(told)
                    level = logging.WARNING if on in ("manager", "store") else logging.INFO
                    _log.log(level, "%s (for up to %.0f s more)", told.line(), left)
            await sleep(min(left, pause * jitter()))
    finally:
        if told is not None:
            tell_waiting(None)


def _wait_of(exc: SandboxError, backoffs: int) -> tuple[WaitFor, float]:
    """What `exc` waits on, and the pause before the next try (before jitter). A store that
    failed is asked at the manager's back-off, never sooner than the Retry-After: every
    waiting step asking each 2 s would keep a struggling store down."""
    backoff = min(_UNREACHED_MOST, _UNREACHED_FIRST * 2**backoffs)
    match exc:
        case PoolExhaustedError(retry_after=after):
            return "sandbox", float(after)
        case ExecutionInProgressError(retry_after=after):
            return "execution", after
        case AuditUnavailableError(retry_after=after):
            return "store", max(after, backoff)
        case _:
            return "manager", backoff


def _cause_of(exc: SandboxError) -> str:
    """Which cause `exc` is (two errors of one cause differ only in their numbers)."""
    if isinstance(exc, ManagerRefusedError):
        return f"refused {exc.refused}"
    return type(exc).__name__


def _told(told: Waiting | None, on: WaitFor, exc: SandboxError, *, call: str) -> Waiting:
    """The wait to tell: a new one, or `told` with its new cause and its ``since`` kept."""
    line = next((one.strip() for one in str(exc).splitlines() if one.strip()), type(exc).__name__)
    detail = line if len(line) <= _DETAIL_CHARS else line[: _DETAIL_CHARS - 1] + "…"
    if told is None:
        return Waiting.now(on, detail, call=call)
    return told.model_copy(update={"on": on, "detail": detail})
