"""Waiting for a sandbox while the pool is full: one policy for every caller of a manager.

A full pool (``PoolExhaustedError``, 503 + Retry-After) and an execution another manager is
running (``ExecutionInProgressError``) are back-pressure, not failures: :func:`queued` asks
again after each Retry-After, jittered down to half so that waiting callers spread out, until
``queue_seconds`` have passed, and only then lets the error through (to the engine's retries,
or to an MCP client as a tool error). Used by the agent's services (``skillweave.engines``)
and by the MCP front door (``mcp_manager.mcp_server``) with the same
``SANDBOX__QUEUE_SECONDS``.

A manager that does not take the connection (``ManagerUnreachableError``: down, restarting,
not started yet; nothing was sent) is waited for the same way, asking again after 1 s, then
twice as long each time up to 10 s (jittered): a worker holds its script steps through a
manager's restart instead of spending their attempts on it. Each wait is said to the caller's
:data:`WAITING` reporter (a Temporal activity's heartbeat details, for the UI) and logged.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Final, TypeVar

from skillweave.errors import ExecutionInProgressError, ManagerUnreachableError, PoolExhaustedError

__all__ = ["WAITING", "queued"]

T = TypeVar("T")

_JITTER: Final = random.SystemRandom()
_UNREACHED_FIRST: Final = 1.0
_UNREACHED_MOST: Final = 10.0
_log = logging.getLogger(__name__)

WAITING: ContextVar[Callable[[str], None] | None] = ContextVar("skillweave_waiting", default=None)
"""Who hears why a call waits (one line), in this context: set by the Temporal activities to
their heartbeat, so that a step holding for a manager says so in the UI."""


def _jitter() -> float:
    return _JITTER.uniform(0.5, 1.0)


async def queued(
    attempt: Callable[[], Awaitable[T]],
    *,
    queue_seconds: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    jitter: Callable[[], float] = _jitter,
) -> T:
    """Await `attempt()`, asking again while the pool is full, for up to `queue_seconds`.

    Args:
        attempt: one try (claim a sandbox and run), e.g. ``lambda: client.execute(request)``.
        queue_seconds: how long to keep asking; 0 tries once.
        clock, sleep, jitter: monotonic seconds, how to wait, and the factor a Retry-After is
            scaled by (in [0.5, 1]); tests pass fakes.

    Raises:
        PoolExhaustedError, ExecutionInProgressError, ManagerUnreachableError: still so after
            `queue_seconds`.
    """
    deadline = clock() + queue_seconds
    unreached = 0
    while True:
        try:
            return await attempt()
        except (PoolExhaustedError, ExecutionInProgressError) as exc:
            left = deadline - clock()
            if left <= 0:
                raise
            pause = exc.retry_after
            _said(f"waiting: {exc}")
        except ManagerUnreachableError as exc:
            left = deadline - clock()
            if left <= 0:
                raise
            pause = min(_UNREACHED_MOST, _UNREACHED_FIRST * 2**unreached)
            unreached += 1
            if unreached == 1:
                _log.warning("waiting for the MCP manager (up to %.0f s): %s", left, exc)
            _said(f"waiting for the MCP manager: {exc}")
        await sleep(min(left, pause * jitter()))


def _said(why: str) -> None:
    report = WAITING.get()
    if report is not None:
        report(why)
