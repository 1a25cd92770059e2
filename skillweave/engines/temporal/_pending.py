"""What a run's pending activities say: their retries and what its steps wait for, read from
the workflow's description (no worker needed): :class:`PendingActivities`.

Retries are scheduled by the server, so the workflow never sees them: a follower
(:mod:`._follow`) reads them from the description at most every :data:`RETRY_POLL_SECONDS`,
each told once, in the words the failed attempt put in its heartbeat details
(``activities.agent``); the UI shows the same words on the pending activity. The same read
tells what a step waits for (a ``waiting`` note): a wait the activity put in its heartbeat
details (a :class:`~skillweave.waiting.Waiting`: a manager that does not answer, a full pool),
or a first attempt no worker has taken from its task queue for :data:`UNTAKEN_SECONDS`; each
told when it begins and again while it lasts (:class:`~skillweave.engines.notes.WaitsTold`).
``TemporalEngine.waiting`` reads the same for ``runs show`` and the API's run.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from temporalio.api.enums.v1 import PendingActivityState, PendingWorkflowTaskState
from temporalio.api.workflow.v1 import PendingActivityInfo, PendingWorkflowTaskInfo
from temporalio.client import Client, WorkflowExecutionDescription, WorkflowHandle
from temporalio.service import RPCError

from skillweave.engines.notes import FollowNote, WaitsTold
from skillweave.engines.retries import RetryNotice, cause_line
from skillweave.engines.temporal._errors import first_line
from skillweave.engines.temporal._handles import WAIT_QUERY_TIMEOUT
from skillweave.engines.temporal._routing import StoreRouting
from skillweave.waiting import Waiting

__all__ = ["RETRY_POLL_SECONDS", "UNTAKEN_SECONDS", "PendingActivities", "PendingRead"]

_log = logging.getLogger("skillweave.engines")

RETRY_POLL_SECONDS: Final = 0.5
"""A follower reads the run's pending activities (for their retries and waits) at most this
often."""
UNTAKEN_SECONDS: Final = 5.0
"""A first attempt scheduled this long ago that no worker has started waits for a worker."""


@dataclass
class PendingRead:
    """What a follower of `run_id` has read of its pending activities: when last, the retries
    it told (run, activity, failed attempt), and the waits (:class:`WaitsTold`)."""

    run_id: str
    waits: WaitsTold
    read_at: float = -RETRY_POLL_SECONDS
    retries: set[tuple[str, str, int]] = field(default_factory=set)


class PendingActivities:
    """Reads a run's retries and waits from its workflow's description.

    Args:
        client: the engine's client (its data converter reads the heartbeat details).
        routing: where the engine's runs run (the queue a wait for a worker names, when the
            description does not).
    """

    def __init__(self, client: Client, routing: StoreRouting) -> None:
        self.client = client
        self._routing = routing

    async def notes(
        self, handle: WorkflowHandle[Any, Any], pending: PendingRead, *, now: float | None
    ) -> list[FollowNote]:
        """The notes of the run's pending activities not told yet: their retries
        (:meth:`retries`), then their waits (:meth:`waits`, as :class:`WaitsTold` says
        when). Read at most every :data:`RETRY_POLL_SECONDS` of `now` (None: now, whatever
        the time)."""
        if now is not None:
            if now - pending.read_at < RETRY_POLL_SECONDS:
                return []
            pending.read_at = now
        try:
            description = await handle.describe(rpc_timeout=WAIT_QUERY_TIMEOUT)
        except RPCError as exc:  # the events go on; the next poll asks again
            _log.debug("cannot describe %s: %s", handle.id, first_line(exc))
            return []
        run_id, queue = pending.run_id, self._routing.task_queue
        notes = [
            FollowNote.retrying(run_id, notice, task_queue=queue)
            for notice in await self.retries(description, pending.retries)
        ]
        for step, waiting in await self.waits(description):
            if pending.waits.due(waiting, step=step):
                notes.append(FollowNote.waiting_on(run_id, waiting, task_queue=queue))
        return notes

    async def retries(
        self, description: WorkflowExecutionDescription, told: set[tuple[str, str, int]]
    ) -> list[RetryNotice]:
        """The retries of the run's activities not yet in `told` (which they join).

        The server schedules an activity's retries, so the workflow never sees them; its
        description does (no worker needed): a pending activity past its first attempt that
        failed. The activity said how in its heartbeat details (``activities.agent``: the
        notice of :func:`~skillweave.engines.retries.retry_notice`, also what the UI shows on
        the pending activity); an attempt that could not say (it timed out, its worker died)
        is told from the description: the activity's name, its attempts, the wait and the
        failure's message.
        """
        notices = []
        for pending in description.raw_description.pending_activities:
            if pending.attempt < 2 or not pending.HasField("last_failure"):
                continue
            key = (description.run_id, pending.activity_id, pending.attempt - 1)
            if key in told:
                continue
            told.add(key)
            notices.append(await self._notice_of(pending))
        return notices

    async def waits(self, description: WorkflowExecutionDescription) -> list[tuple[str, Waiting]]:
        """What the run's pending activities wait for now, each with its step's key (the
        workflow run and activity id).

        A running attempt that waits says so in its heartbeat details (``activities.agent``:
        the line, then the :class:`~skillweave.waiting.Waiting`), which the server keeps on
        the pending activity; details from before the attempt started are an earlier
        attempt's and are not read. A first attempt that no worker has started
        :data:`UNTAKEN_SECONDS` after it was scheduled waits for a worker on its task queue;
        so does a workflow task (nothing of the run moves: no worker of its store polls).
        """
        raw = description.raw_description
        waits: list[tuple[str, Waiting]] = []
        for pending in raw.pending_activities:
            step = f"{description.run_id}/{pending.activity_id}"
            if pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED:
                said = await self._heartbeat_said(pending)
                beat = pending.last_heartbeat_time.ToDatetime()
                if isinstance(said, Waiting) and beat >= pending.last_started_time.ToDatetime():
                    waits.append((step, said))
                continue
            since = _untaken_since(pending)
            if since is not None:
                queue = (
                    pending.activity_options.task_queue.name
                    or raw.execution_config.task_queue.name
                    or self._routing.task_queue
                )
                detail = f"no worker has taken it from task queue {queue!r}"
                call = pending.activity_type.name
                waits.append((step, Waiting(on="worker", detail=detail, since=since, call=call)))
        since = _untaken_task_since(raw.pending_workflow_task)  # unset: state unspecified
        if since is not None:  # no worker of the run's store polls: nothing moves at all
            queue = raw.execution_config.task_queue.name or self._routing.task_queue
            detail = f"no worker has taken the run's next step from task queue {queue!r}"
            waiting = Waiting(on="worker", detail=detail, since=since, call="the run")
            waits.append((f"{description.run_id}/workflow-task", waiting))
        return waits

    async def _notice_of(self, pending: PendingActivityInfo) -> RetryNotice:
        """The retry of a pending activity: as its last attempt told it, or from the
        description when it did not."""
        failed = pending.attempt - 1
        told = await self._told_retry(pending)
        if told is not None and told.attempt == failed:
            return told
        waiting = pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
        interval = pending.current_retry_interval.ToTimedelta().total_seconds()
        return RetryNotice(
            call=pending.activity_type.name,
            attempt=failed,
            attempts=pending.maximum_attempts or None,
            wait_seconds=interval if waiting and interval > 0 else None,
            cause=cause_line(pending.last_failure.message),
        )

    async def _told_retry(self, pending: PendingActivityInfo) -> RetryNotice | None:
        """The retry notice in the activity's heartbeat details, if they hold one (not a
        wait: :meth:`_heartbeat_said`)."""
        said = await self._heartbeat_said(pending)
        return said if isinstance(said, RetryNotice) else None

    async def _heartbeat_said(self, pending: PendingActivityInfo) -> RetryNotice | Waiting | None:
        """What the activity's heartbeat details say, when they hold one of the two things an
        attempt tells there (``activities.agent``: the line, then the fields): a retry notice
        or a wait. Their required fields differ (a notice's ``attempt`` and ``cause``, a
        wait's ``on`` and ``since``), so neither is read as the other; anything else (free-form
        details) is None."""
        payloads = list(pending.heartbeat_details.payloads)
        if len(payloads) != 2:
            return None
        try:
            fields = (await self.client.data_converter.decode(payloads))[-1]
        except Exception:  # not ours to read: told another way
            return None
        for model in (RetryNotice, Waiting):
            with contextlib.suppress(ValueError):
                return model.model_validate(fields)
        return None


def _untaken_since(pending: PendingActivityInfo) -> datetime | None:
    """When a first attempt that no worker has taken :data:`UNTAKEN_SECONDS` after it was
    scheduled was scheduled; None for any other (a later attempt waits for its retry, told
    as one)."""
    if (
        pending.state != PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
        or pending.attempt > 1
        or not pending.HasField("scheduled_time")
    ):
        return None
    since = pending.scheduled_time.ToDatetime().replace(tzinfo=UTC)
    if datetime.now(UTC) - since < timedelta(seconds=UNTAKEN_SECONDS):
        return None
    return since


def _untaken_task_since(task: PendingWorkflowTaskInfo) -> datetime | None:
    """When a workflow task that no worker has taken :data:`UNTAKEN_SECONDS` after it was
    first scheduled was scheduled; None when a worker has it or it is younger."""
    if task.state != PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED:
        return None
    first = task.original_scheduled_time if task.HasField("original_scheduled_time") else None
    stamp = first or (task.scheduled_time if task.HasField("scheduled_time") else None)
    if stamp is None:
        return None
    since = stamp.ToDatetime().replace(tzinfo=UTC)
    if datetime.now(UTC) - since < timedelta(seconds=UNTAKEN_SECONDS):
        return None
    return since
