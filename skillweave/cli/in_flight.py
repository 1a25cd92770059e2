"""How ``skillweave dev`` and ``skillweave worker`` stop, and the one line they end with.

Ctrl-C (or SIGTERM) stops them in order (:mod:`skillweave.cli.signals`). Before their worker
stops, they ask the Temporal server which runs of its task queue are still open
(:func:`runs_in_flight`; a worker, which says first how long its activities may still take,
on a client of its own: :func:`stopping_worker`); :func:`say_stopped` then ends with them and
what becomes of them: they resume when a worker polls that task queue again (the server keeps
them), or they are gone with a dev server's in-memory state (``dev --ephemeral``). ``dev``'s
worker stops with its server, so it does not drain (:func:`stopping_at_once`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from skillweave.agent import run_id_of
from skillweave.cli.console import err
from skillweave.errors import ConfigError
from skillweave.terminal import counted

if TYPE_CHECKING:
    from temporalio.client import Client

    from skillweave.config import Settings, WorkflowSettings

__all__ = [
    "runs_in_flight",
    "runs_in_flight_at",
    "say_stopped",
    "stopped_line",
    "stopping_at_once",
    "stopping_worker",
]

_ASK_SECONDS: Final = 3.0
"""How long a stopping process waits for the server's answer: a stop is not held up by it."""
_NAMED: Final = 3
"""Runs named in the line; more are counted."""


async def runs_in_flight(client: Client, task_queue: str, *, limit: int = 100) -> list[str] | None:
    """The ids of the runs of `task_queue` that are still running, oldest first; None when
    the server did not answer within a few seconds (a stop goes on regardless)."""
    from temporalio.service import RPCError

    from skillweave.engines.temporal import runs_query

    query = f"{runs_query()} AND ExecutionStatus = 'Running'"

    async def ask() -> list[str]:
        found = [
            execution
            async for execution in client.list_workflows(query, limit=limit)
            if execution.task_queue == task_queue
        ]
        found.sort(key=lambda execution: execution.start_time)
        return [run_id_of(execution.id) for execution in found]

    try:
        async with asyncio.timeout(_ASK_SECONDS):
            return await ask()
    except (RPCError, TimeoutError):
        return None


async def runs_in_flight_at(settings: WorkflowSettings) -> list[str] | None:
    """:func:`runs_in_flight` of ``settings``' task queue, on a client of its own (None: the
    server cannot be reached)."""
    from skillweave.engines.temporal import connect

    try:
        async with asyncio.timeout(_ASK_SECONDS):
            client = await connect(settings)
    except (ConfigError, TimeoutError):
        return None
    return await runs_in_flight(client, settings.task_queue)


async def stopping_worker(workflow: WorkflowSettings) -> list[str] | None:
    """What a worker told to stop says at once (how long its activities may still take), and
    the runs of its task queue then in flight."""
    if workflow.worker_drain_seconds > 0:
        err.print(
            f"stopping: the activities in flight have {workflow.worker_drain_seconds:g} s to"
            " finish (WORKFLOW__WORKER_DRAIN_SECONDS), then they are cancelled and retried"
            " by another worker",
            soft_wrap=True,
            markup=False,
        )
    return await runs_in_flight_at(workflow)


def stopping_at_once(settings: Settings) -> Settings:
    """``dev``'s settings: its worker stops with its server, so Ctrl-C cancels the activities
    in flight at once (they are retried when a worker is back) rather than draining them for
    ``WORKFLOW__WORKER_DRAIN_SECONDS``, unless that is set."""
    if "worker_drain_seconds" in settings.workflow.model_fields_set:
        return settings
    workflow = settings.workflow.model_copy(update={"worker_drain_seconds": 0.0})
    return settings.model_copy(update={"workflow": workflow})


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
    were = f"{counted(len(runs), 'run')} {'was' if len(runs) == 1 else 'were'}"
    named = ", ".join(runs[:_NAMED])
    if len(runs) > _NAMED:
        named += f" and {len(runs) - _NAMED} more"
    if resumes is None:
        return f"{line}; {were} in flight, gone with the in-memory state (--ephemeral): {named}"
    them = "it resumes" if len(runs) == 1 else "they resume"
    return f"{line}; {were} in flight: {named} ({them} {resumes})"


def say_stopped(what: str, left: Sequence[list[str] | None], *, resumes: str | None) -> None:
    """Print :func:`stopped_line` on stderr; `left` holds what :func:`runs_in_flight` found,
    if it was asked (empty: stopped before it served)."""
    line = stopped_line(what, left[0] if left else [], resumes=resumes)
    err.print(line, soft_wrap=True, markup=False)
