"""Waiting for a sandbox while the pool is full: one policy for every caller of a manager.

A full pool (``PoolExhaustedError``, 503 + Retry-After) and an execution another manager is
running (``ExecutionInProgressError``) are back-pressure, not failures: :func:`queued` asks
again after each Retry-After, jittered down to half so that waiting callers spread out, until
``queue_seconds`` have passed, and only then lets the error through (to the engine's retries,
or to an MCP client as a tool error). Used by the agent's services (``skillweave.engines``)
and by the MCP front door (``mcp_manager.mcp_server``) with the same
``SANDBOX__QUEUE_SECONDS``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from skillweave.errors import ExecutionInProgressError, PoolExhaustedError

__all__ = ["queued"]

T = TypeVar("T")

_JITTER: Final = random.SystemRandom()


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
        PoolExhaustedError, ExecutionInProgressError: still so after `queue_seconds`.
    """
    deadline = clock() + queue_seconds
    while True:
        try:
            return await attempt()
        except (PoolExhaustedError, ExecutionInProgressError) as exc:
            left = deadline - clock()
            if left <= 0:
                raise
            await sleep(min(left, exc.retry_after * jitter()))
