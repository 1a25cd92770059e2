"""Which task queue an engine's runs run on, and which workers would run them:
:class:`StoreRouting`, held by :class:`~skillweave.engines.temporal.TemporalEngine`.

A run runs on the configured (base) task queue routed to the store it was started against
(:func:`~skillweave.engines.contract.store_task_queue`), where only that store's workers poll.
The engine's store id is read once, at the first run when it was not known at connection; the
roll call of the base queue (:mod:`._workers`) tells whether a run started here would wait
for ever.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from temporalio.client import Client
from temporalio.service import RPCError

from skillweave.engines.contract import store_task_queue
from skillweave.engines.temporal._errors import first_line
from skillweave.engines.temporal._workers import (
    default_model_of_worker,
    read_roll,
    recent_pollers,
)
from skillweave.errors import AgentError, ConfigError, StorageError
from skillweave.storage import store_identity

if TYPE_CHECKING:
    from skillweave.storage import ArtifactStore

__all__ = ["StoreRouting"]

_log = logging.getLogger("skillweave.engines")


class StoreRouting:
    """An engine's store, the task queue its runs run on, and the workers that poll it.

    Args:
        client: the engine's client.
        base_task_queue: the configured task queue (``WORKFLOW__TASK_QUEUE``).
        store: the engine's artifact store (its id routes the runs), if any.
        store_id: the store's id, when known (read from `store` at the first need otherwise).
    """

    def __init__(
        self,
        client: Client,
        *,
        base_task_queue: str,
        store: ArtifactStore | None,
        store_id: str | None,
    ) -> None:
        self.client = client
        self.base_task_queue = base_task_queue
        self.store = store
        self._store_id = store_id

    @property
    def task_queue(self) -> str:
        """The task queue this engine's runs run on: the base queue routed to its store (the
        base queue while the store's id is not known yet)."""
        if self._store_id is None:
            return self.base_task_queue
        return store_task_queue(self.base_task_queue, self._store_id)

    async def store_id(self, run_id: str | None = None) -> str:
        """This engine's store id, read once (`run_id`: the run that asks, for the message).

        Raises:
            ConfigError: the engine has no store (and was given no id): a run started here
                would run on no store's queue.
            StorageError: the store cannot be read.
        """
        if self._store_id is None:
            if self.store is None:
                refused = f"run {run_id!r} not started: " if run_id else ""
                raise ConfigError(
                    f"{refused}this client has no artifact store, and a run runs only on the "
                    "workers of the store it is started against: open the engine over the "
                    "deployment's store (its STORAGE__ settings)"
                )
            self._store_id = await store_identity(self.store)
        return self._store_id

    async def routed_queue(self) -> str:
        """This engine's task queue, once its store's id is known.

        Raises:
            AgentError: the store's id cannot be read, or there is no store.
        """
        try:
            return store_task_queue(self.base_task_queue, await self.store_id())
        except (StorageError, ConfigError) as exc:
            raise AgentError(f"cannot tell which workers run this engine's runs: {exc}") from None

    async def check_workers(self, store_id: str) -> int:
        """Refuse a run no worker of its store would run while workers of other stores
        answer the base queue's roll call (:class:`~skillweave.engines.temporal.Roll`): it
        would wait for ever. With no worker at all, the run is started: it waits for one.

        Returns:
            How many workers of the store poll its queue.

        Raises:
            ConfigError: one line naming this store, the others and what to do.
        """
        try:
            roll = await read_roll(self.client, self.base_task_queue, store_id)
        except RPCError as exc:  # not ours to read: the run waits for its store's worker
            _log.warning("cannot describe task queue %s: %s", self.task_queue, first_line(exc))
            return 0
        if roll.stranded():
            raise ConfigError(roll.refusal())
        return len(roll.serving)

    async def default_models(self) -> set[str]:
        """The default models (``provider:name``) the workers polling this engine's store's
        task queue lately say they have; empty: none answers, or none has a default.

        Raises:
            AgentError: the task queue or the store's id cannot be read.
        """
        try:
            pollers = await recent_pollers(self.client, await self.routed_queue())
        except RPCError as exc:
            raise AgentError(
                f"cannot read task queue {self.task_queue!r}: {first_line(exc)}"
            ) from None
        return {found for identity in pollers if (found := default_model_of_worker(identity))}

    async def pollers(self) -> int:
        """How many workers polled the task queue lately (0 when it cannot be read)."""
        try:
            return len(await recent_pollers(self.client, self.task_queue))
        except RPCError as exc:
            _log.debug("cannot describe task queue %s: %s", self.task_queue, first_line(exc))
            return 0
