"""Heartbeats from a long activity: :func:`heartbeating`, the one way every activity that
heartbeats does it (the agent's, ``activities.agent``, and an eval batch's, ``activities.evals``).

A heartbeat tells the server the worker is alive (a dead worker's activity is retried
elsewhere once its heartbeat timeout passes) and brings a cancellation to the activity (the
server answers a heartbeat with it).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import activity

from skillweave.waiting import WAITING, Waiting

__all__ = ["heartbeating"]


@contextlib.asynccontextmanager
async def heartbeating(every: float) -> AsyncIterator[None]:
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
