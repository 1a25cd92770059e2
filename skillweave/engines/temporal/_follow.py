"""Following a run: its events from an index until it finishes, with a
:class:`~skillweave.engines.notes.FollowNote` between them while no worker answers, when events
were dropped, when an activity is retried and when a step waits: :class:`Follower`, behind
``TemporalEngine.follow`` and ``TemporalEngine.events``.

Followers outlive workers. A query needs a worker: while none polls the task queue (one was
killed, a deploy is rolling), the server holds each query for about ten seconds and then
answers "timeout" or "no poller seen recently". Nothing of the run moves then either (its
workflow and activity tasks need a worker too), so a follower treats that answer as a wait, not
an end: it asks again, says so with a ``waiting_for_worker`` note at most every
:data:`WAIT_NOTE_SECONDS` (naming the workers that poll all the same, when some do: after a
worker is killed, queries go to its own queue until the server moves the run), and goes on
from the same index once a worker answers (the events are kept in the workflow's state, so
none is lost). It stops when the workflow has closed (read from history, which needs no
worker) or, with :class:`~skillweave.engines.temporal.NoWorkerError`, once no worker has
answered for ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS``; the run itself goes on. Retries and
waits come from the run's pending activities (:mod:`._pending`), also while no worker answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any, Final

from skillweave.agent import AgentEvent
from skillweave.engines.notes import FollowKind, FollowNote, WaitsTold
from skillweave.engines.temporal._errors import NoWorkerError
from skillweave.engines.temporal._handles import QUERY_TIMEOUT, WAIT_QUERY_TIMEOUT, RunHandles
from skillweave.engines.temporal._pending import PendingActivities, PendingRead
from skillweave.engines.temporal._routing import StoreRouting
from skillweave.errors import AgentError

__all__ = [
    "FOLLOW_WORKER_WAIT_SECONDS",
    "POLL_SECONDS",
    "WAIT_NOTE_SECONDS",
    "WAIT_RETRY_SECONDS",
    "Follower",
]

POLL_SECONDS: Final = 0.2
"""How often a follower asks for new events by default."""
WAIT_NOTE_SECONDS: Final = 5.0
"""A follower says it waits for a worker at most this often."""
WAIT_RETRY_SECONDS: Final = 1.0
"""While no worker answers, a query refused at once is asked again after this long."""
FOLLOW_WORKER_WAIT_SECONDS: Final = 3600.0
"""How long a follower waits for a worker by default (0: for ever)."""


class Follower:
    """Follows runs' events, with notes between them.

    Args:
        handles: the runs' workflows and queries.
        routing: where the runs run (named in the notes; its pollers counted).
        pending: reads the retries and waits of a run's pending activities.
        poll_seconds: how often to ask for new events.
        worker_wait_seconds: how long to go on while no worker answers before raising
            :class:`NoWorkerError`; 0 waits for ever.
    """

    def __init__(
        self,
        handles: RunHandles,
        routing: StoreRouting,
        pending: PendingActivities,
        *,
        poll_seconds: float = POLL_SECONDS,
        worker_wait_seconds: float = FOLLOW_WORKER_WAIT_SECONDS,
    ) -> None:
        self._handles = handles
        self._routing = routing
        self._pending = pending
        self._poll = poll_seconds
        self._worker_wait = worker_wait_seconds

    async def follow(
        self, run_id: str, *, after: int = 0, until_finished: bool = True
    ) -> AsyncIterator[AgentEvent | FollowNote]:
        """The run's events from index `after`, ending after ``run_finished`` or once the
        workflow has closed and its last events were read, with a :class:`FollowNote`
        between them while no worker answers (``waiting_for_worker``, at most every
        :data:`WAIT_NOTE_SECONDS`, then ``worker_answered``), when events were dropped from
        the workflow's window before they were read, once for each retry of an activity
        (``retrying``) and when a step waits (``waiting``); retries and waits are read from
        the run's pending activities at most every
        :data:`~skillweave.engines.temporal._pending.RETRY_POLL_SECONDS`, also while no
        worker answers.

        Args:
            run_id: the run.
            after: the index to start from (0: the run's start).
            until_finished: follow until the run finishes; False: stop after the events
                there are now (still waiting for a worker to say what they are).

        Raises:
            NoWorkerError: no worker answered for ``worker_wait_seconds`` (0: never raised);
                the run may still be running.
            AgentError: there is no such run, or a query failed.
        """
        handle = self._handles.of(run_id)
        closed = asyncio.create_task(self._handles.closed(handle))
        loop = asyncio.get_running_loop()
        waiting_since: float | None = None
        noted_at: float | None = None
        pending = PendingRead(run_id, WaitsTold(clock=loop.time))
        try:
            while True:
                was_closed = closed.done()
                asked = loop.time()
                try:
                    page = await self._handles.page(
                        handle, run_id, after, timeout=self._query_timeout(waiting_since, asked)
                    )
                except NoWorkerError:
                    if was_closed:
                        return  # closed, and no worker to replay it: nothing more to read
                    now = loop.time()
                    waiting_since = asked if waiting_since is None else waiting_since
                    waited = now - waiting_since
                    if self._worker_wait > 0 and waited >= self._worker_wait:
                        raise NoWorkerError(
                            run_id, task_queue=self._routing.task_queue, waited_seconds=waited
                        ) from None
                    if noted_at is None or now - noted_at >= WAIT_NOTE_SECONDS:
                        noted_at = now
                        yield self._note(
                            run_id,
                            "waiting_for_worker",
                            waited_seconds=waited,
                            pollers=await self._routing.pollers(),
                        )
                    # The description needs no worker: what the steps wait for is told.
                    for note in await self._pending.notes(handle, pending, now=loop.time()):
                        yield note
                    # A query refused at once is asked again a little later; one that waited
                    # for its deadline, at once. The run closing ends the wait too.
                    pause = max(0.0, WAIT_RETRY_SECONDS - (loop.time() - asked))
                    await asyncio.wait({closed}, timeout=pause)
                    continue
                except AgentError:
                    if was_closed:
                        return
                    raise
                if waiting_since is not None:
                    waited = loop.time() - waiting_since
                    waiting_since = noted_at = None
                    yield self._note(run_id, "worker_answered", waited_seconds=waited)
                if page.dropped:
                    yield self._note(run_id, "events_dropped", dropped=page.dropped)
                for event in page.events:
                    yield event
                    if event.kind == "run_finished":
                        return
                after = page.next
                if not was_closed:
                    # Without until_finished, read once whatever the time.
                    now = loop.time() if until_finished else None
                    for note in await self._pending.notes(handle, pending, now=now):
                        yield note
                if was_closed or not until_finished:
                    return
                await asyncio.wait({closed}, timeout=self._poll)
        finally:
            closed.cancel()
            await asyncio.wait({closed})

    def _query_timeout(self, waiting_since: float | None, now: float) -> timedelta:
        """The first query waits :data:`QUERY_TIMEOUT` for a worker; once none answers, each
        waits :data:`WAIT_QUERY_TIMEOUT`, and not past the end of the wait."""
        if waiting_since is None:
            return QUERY_TIMEOUT
        timeout = WAIT_QUERY_TIMEOUT.total_seconds()
        if self._worker_wait > 0:
            left = self._worker_wait - (now - waiting_since)
            timeout = min(timeout, max(left, WAIT_RETRY_SECONDS))
        return timedelta(seconds=timeout)

    def _note(self, run_id: str, kind: FollowKind, **fields: Any) -> FollowNote:
        return FollowNote(kind=kind, run_id=run_id, task_queue=self._routing.task_queue, **fields)
