"""One run's workflow and the queries a worker answers about it: :class:`RunHandles`, shared by
the engine, its follower (:mod:`._follow`) and its run views (:mod:`._visibility`).

A query needs a worker: the server holds it for a worker of the run's task queue for
:data:`QUERY_TIMEOUT` (a closed run is answered by replaying it), and while none answers a
follower asks again with :data:`WAIT_QUERY_TIMEOUT`.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any, Final

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.service import RPCError

from skillweave.engines.base import RunResult
from skillweave.engines.contract import QUERY_EVENTS, QUERY_STATUS, EventPage, RunView, workflow_id
from skillweave.engines.temporal._errors import run_errors
from skillweave.engines.temporal._routing import StoreRouting

__all__ = ["QUERY_TIMEOUT", "WAIT_QUERY_TIMEOUT", "RunHandles"]

QUERY_TIMEOUT: Final = timedelta(seconds=10)
"""A query waits this long for a worker to answer (a closed run is answered by replaying it)."""
WAIT_QUERY_TIMEOUT: Final = timedelta(seconds=5)
"""While no worker answers, each new query waits this long (or what is left of the wait); a
description (no worker needed) waits as long."""


class RunHandles:
    """The workflow handle of each run, its queries, and the server's refusals as errors.

    Args:
        client: the engine's client.
        routing: where the engine's runs run (named when no worker answers).
    """

    def __init__(self, client: Client, routing: StoreRouting) -> None:
        self.client = client
        self._routing = routing

    def of(self, run_id: str) -> WorkflowHandle[Any, RunResult]:
        """The handle of the run's workflow (the latest run of its chain)."""
        return self.client.get_workflow_handle(workflow_id(run_id), result_type=RunResult)

    def errors(self, run_id: str) -> contextlib.AbstractContextManager[None]:
        """What the server says about `run_id`, as one clear error
        (:func:`~skillweave.engines.temporal._errors.run_errors`)."""
        return run_errors(run_id, self._routing.task_queue)

    async def status(self, run_id: str, *, timeout: timedelta = QUERY_TIMEOUT) -> RunView:
        """The run's status (the ``status`` query; a worker answers it).

        Raises:
            NoWorkerError: no worker answered within `timeout`.
            AgentError: there is no such run.
        """
        with self.errors(run_id):
            return await self.of(run_id).query(
                QUERY_STATUS, result_type=RunView, rpc_timeout=timeout
            )

    async def page(
        self,
        handle: WorkflowHandle[Any, Any],
        run_id: str,
        after: int,
        *,
        timeout: timedelta = QUERY_TIMEOUT,
    ) -> EventPage:
        """The events the run keeps from index `after` (one ``events`` query)."""
        with self.errors(run_id):
            return await handle.query(
                QUERY_EVENTS, after, result_type=EventPage, rpc_timeout=timeout
            )

    @staticmethod
    async def closed(handle: WorkflowHandle[Any, Any]) -> None:
        """Return once the workflow (the last run of its chain) has closed, however it did."""
        with contextlib.suppress(WorkflowFailureError, RPCError):
            await handle.result()
