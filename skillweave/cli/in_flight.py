"""What a stopped worker leaves running: the one line ``skillweave dev`` and ``skillweave
worker`` end with when Ctrl-C (or SIGTERM) stops them.

:func:`runs_in_flight` asks the Temporal server, before the worker stops, which runs of the
worker's task queue are still open; :func:`stopped_line` says them, and what becomes of them:
they resume when a worker polls that task queue again (the server keeps them), or they are
gone with a dev server's in-memory state (``dev --ephemeral``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from skillweave.agent.identity import job_id_of

if TYPE_CHECKING:
    from temporalio.client import Client

    from skillweave.config import WorkflowSettings

__all__ = ["runs_in_flight", "runs_in_flight_at", "stopped_line"]

_ASK_SECONDS: Final = 3.0
"""How long a stopping process waits for the server's answer: a stop is not held up by it."""
_NAMED: Final = 3
"""Runs named in the line; more are counted."""


async def runs_in_flight(client: Client, task_queue: str, *, limit: int = 100) -> list[str] | None:
    """The ids of the runs of `task_queue` that are still running, oldest first; None when
    the server did not answer within a few seconds (a stop goes on regardless)."""
    from temporalio.service import RPCError

    from skillweave.engines.temporal import jobs_query

    query = f"{jobs_query()} AND ExecutionStatus = 'Running'"

    async def ask() -> list[str]:
        found = [
            execution
            async for execution in client.list_workflows(query, limit=limit)
            if execution.task_queue == task_queue
        ]
        found.sort(key=lambda execution: execution.start_time)
        return [job_id_of(execution.id) for execution in found]

    try:
        async with asyncio.timeout(_ASK_SECONDS):
            return await ask()
    except (RPCError, TimeoutError):
        return None


async def runs_in_flight_at(settings: WorkflowSettings) -> list[str] | None:
    """:func:`runs_in_flight` of ``settings``' task queue, on a client of its own (None: the
    server cannot be reached)."""
    from skillweave.engines.temporal import connect
    from skillweave.errors import ConfigError

    try:
        async with asyncio.timeout(_ASK_SECONDS):
            client = await connect(settings)
    except (ConfigError, TimeoutError):
        return None
    return await runs_in_flight(client, settings.task_queue)


def stopped_line(what: str, runs: Sequence[str] | None, *, resumes: str | None) -> str:
    """The line a stopped process ends with: `what` stopped, and the `runs` left in flight.

    Args:
        what: what stopped, e.g. ``worker, MCP manager, Temporal``.
        runs: from :func:`runs_in_flight` (None: unknown).
        resumes: when they resume, e.g. ``at the next `skillweave dev```; None: they do not
            (an in-memory dev server, gone with them).
    """
    line = f"stopped: {what}"
    if runs is None:
        return f"{line}; the runs in flight could not be listed (`skillweave runs list` shows them)"
    if not runs:
        return line
    count = f"{len(runs)} run was" if len(runs) == 1 else f"{len(runs)} runs were"
    named = ", ".join(runs[:_NAMED])
    if len(runs) > _NAMED:
        named += f" and {len(runs) - _NAMED} more"
    if resumes is None:
        return f"{line}; {count} in flight, gone with the in-memory state (--ephemeral): {named}"
    them = "it resumes" if len(runs) == 1 else "they resume"
    return f"{line}; {count} in flight: {named} ({them} {resumes})"
