"""Which workers would run a run: worker identities, the pollers of a task queue, and the roll
call of a base task queue with what each process says about it.

A run runs on the configured task queue (``WORKFLOW__TASK_QUEUE``, the *base* queue) routed to
the store it was started against (:func:`~skillweave.engines.contract.store_task_queue`), and
only workers of that store poll that queue; a run no such worker polls for waits. Every worker
also answers the *roll call* on the base queue: it polls it for
:data:`~skillweave.engines.contract.ROLL_CALL_ACTIVITY`, which nothing schedules, and its
Temporal identity (:func:`worker_identity`) names its store and default model. So one
description of the base queue lists every worker of it and the store it works on
(:func:`read_roll`), and :class:`Roll` says what that means for one store:

- the client (``TemporalEngine.start``) refuses a run no worker of its store polls for while
  workers of other stores answer the roll call (:meth:`Roll.refusal`: it would wait for ever);
- a worker at start warns when other workers of its queue work on other stores and none on its
  own (:func:`warn_if_alone`, called by ``workflows.worker.running_worker``);
- ``skillweave doctor`` and the start-up checks read the same roll
  (``skillweave.cli.service_checks``).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError

from skillweave.engines.contract import store_task_queue

__all__ = [
    "POLLER_RECENT",
    "Roll",
    "default_model_of_worker",
    "read_roll",
    "recent_pollers",
    "store_of_worker",
    "stores_of",
    "warn_if_alone",
    "worker_identity",
]

_log = logging.getLogger("skillweave.worker")

_STORE_MARK: Final = " store="
_MODEL_MARK: Final = " model="

POLLER_RECENT: Final = timedelta(seconds=90)
"""A worker that polled this recently counts as alive (its long polls last about a minute)."""


def worker_identity(store_id: str, *, default_model: str | None = None) -> str:
    """A worker's Temporal identity: the SDK's own (``pid@host``), the id of its store and its
    default model (``provider:name`` as configured; none: it has none), so that a client can
    tell, before it starts a run, whether the workers share its store, and which model a run
    that names none will get there."""
    model = f"{_MODEL_MARK}{default_model}" if default_model else ""
    return f"{os.getpid()}@{socket.gethostname()}{_STORE_MARK}{store_id}{model}"


def store_of_worker(identity: str) -> str | None:
    """The store id a worker's identity names (:func:`worker_identity`), or None."""
    _, found, rest = identity.partition(_STORE_MARK)
    store_id = rest.partition(_MODEL_MARK)[0].strip()
    return store_id or None if found else None


def default_model_of_worker(identity: str) -> str | None:
    """The default model a worker's identity names (:func:`worker_identity`), or None."""
    _, found, model = identity.partition(_MODEL_MARK)
    return model.strip() or None if found else None


def stores_of(identities: Iterable[str]) -> set[str]:
    """The stores the workers of `identities` name (those that name none are left out)."""
    return {found for identity in identities if (found := store_of_worker(identity))}


async def recent_pollers(client: Client, task_queue: str, *, roll_call: bool = False) -> list[str]:
    """The identities of the workers that polled `task_queue` lately: for workflow tasks (the
    workers of a routed queue), or with `roll_call` for activity tasks (the roll call of a base
    queue).

    Raises:
        RPCError: the server refused the description.
    """
    kind = (
        TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY
        if roll_call
        else TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
    )
    response = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=kind,
        )
    )
    since = datetime.now(UTC) - POLLER_RECENT
    return [
        poller.identity
        for poller in response.pollers
        if poller.last_access_time.ToDatetime().replace(tzinfo=UTC) >= since
    ]


@dataclass(frozen=True, slots=True)
class Roll:
    """The workers of a base task queue, as seen from one store.

    Attributes:
        task_queue: the base queue (``WORKFLOW__TASK_QUEUE``).
        store_id: the store of the process that reads it.
        serving: the identities of the workers polling the queue routed to that store: those
            that would run a run started against it.
        answered: the identities on the base queue's roll call: every worker of the queue.
    """

    task_queue: str
    store_id: str
    serving: tuple[str, ...]
    answered: tuple[str, ...]

    @property
    def routed(self) -> str:
        """The queue runs started against this store run on."""
        return store_task_queue(self.task_queue, self.store_id)

    def other_stores(self, *, besides: str | None = None) -> list[str]:
        """The other stores the queue's workers (`besides` that identity) work on, sorted."""
        workers = (identity for identity in self.answered if identity != besides)
        return sorted(stores_of(workers) - {self.store_id})

    def stranded(self) -> bool:
        """Whether a run started against this store would wait for ever: no worker of it
        polls, while workers of other stores do (someone pointed this process, or them, at
        the wrong store)."""
        return (
            not self.serving
            and bool(self.other_stores())
            and self.store_id not in stores_of(self.answered)
        )

    def refusal(self) -> str:
        """The one line a client says when it will not start a run (:meth:`stranded`)."""
        return (
            f"no worker on task queue {self.task_queue!r} works on this process's store "
            f"{self.store_id} (the workers there work on {', '.join(self.other_stores())}): "
            f"give this process their STORAGE__ settings, or start a worker on {self.store_id}"
        )

    def lonely_line(self, identity: str) -> str | None:
        """What the worker of `identity` says at start when other workers of its queue work on
        other stores and none besides it on its own (None: nothing to say). It cannot tell
        which side is misconfigured, so it warns: each side's runs never run on the other."""
        others = self.other_stores(besides=identity)
        mine = stores_of(w for w in (*self.answered, *self.serving) if w != identity)
        if not others or self.store_id in mine:
            return None
        theirs = ", ".join(others)
        return (
            f"other workers on task queue {self.task_queue!r} work on store {theirs}; this "
            f"worker works on {self.store_id}: runs started against {theirs} never run here, "
            f"nor {self.store_id}'s there"
        )


async def read_roll(client: Client, task_queue: str, store_id: str) -> Roll:
    """The workers of base queue `task_queue` as the store `store_id` sees them.

    Raises:
        RPCError: the server refused a description.
    """
    serving = await recent_pollers(client, store_task_queue(task_queue, store_id))
    answered = await recent_pollers(client, task_queue, roll_call=True)
    return Roll(task_queue, store_id, tuple(serving), tuple(answered))


async def warn_if_alone(client: Client, task_queue: str, store_id: str, identity: str) -> None:
    """Once the worker of `identity` polls: one WARNING line (logger ``skillweave.worker``)
    when the other workers of `task_queue` work on other stores and none on `store_id`
    (:meth:`Roll.lonely_line`). It cannot tell which side is misconfigured, only that neither
    runs the other's runs; it runs regardless."""
    try:
        roll = await read_roll(client, task_queue, store_id)
    except RPCError as exc:  # only read to warn
        _log.debug("cannot read the roll call of %s: %s", task_queue, exc)
        return
    if (line := roll.lonely_line(identity)) is not None:
        _log.warning(line)
