"""Starting a run's workflow: :class:`RunStarter`, behind ``TemporalEngine.start``.

A run starts on the task queue routed to the store it is started against (the request's, else
the engine's, :mod:`._routing`), with the id, input, summary and details the UI shows and first
search attributes of ``skillweave.engines.run_start`` (the rule an eval batch's child runs are
started by too). It is refused before it starts where it could never run: a namespace
without skillweave's search attributes (every workflow task would fail and the run stay
"Running" for ever; checked once per engine), or a store no worker serves while workers of
other stores answer the roll call.
"""

from __future__ import annotations

import logging

from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from skillweave.config import CatalogMode
from skillweave.engines.base import RunRequest
from skillweave.engines.contract import WORKFLOW_NAME, store_task_queue
from skillweave.engines.run_start import run_start
from skillweave.engines.temporal._errors import first_line
from skillweave.engines.temporal._namespace import search_attribute_problems
from skillweave.engines.temporal._routing import StoreRouting
from skillweave.errors import AgentError, ConfigError

__all__ = ["RunStarter"]

_log = logging.getLogger("skillweave.engines")


class RunStarter:
    """Starts runs' workflows for one engine.

    Args:
        client: the engine's client.
        routing: the engine's store and task queue.
        catalog_mode: the settings' catalog mode, for specs that do not set one.
        catalog_top_k: the settings' top-k for ``auto``.
    """

    def __init__(
        self,
        client: Client,
        routing: StoreRouting,
        *,
        catalog_mode: CatalogMode,
        catalog_top_k: int,
    ) -> None:
        self.client = client
        self._routing = routing
        self.catalog_mode = catalog_mode
        self.catalog_top_k = catalog_top_k
        self._namespace_checked = False

    async def start(self, request: RunRequest) -> str:
        """Start the run's workflow; returns its id.

        Raises:
            AgentError: a run with this id exists (running or not).
            ConfigError: the server does not know skillweave's search attributes; no worker of
                the run's store polls while workers of other stores do; the engine has no
                store.
            StorageError: the store's id cannot be read.
        """
        await self.check_namespace()
        store_id = request.store_id or await self._routing.store_id(request.run_id)
        request = request.model_copy(update={"store_id": store_id})
        await self._routing.check_workers(store_id)
        start = run_start(request, catalog_mode=self.catalog_mode, catalog_top_k=self.catalog_top_k)
        try:
            await self.client.start_workflow(
                WORKFLOW_NAME,
                start.input,
                id=start.workflow_id,
                task_queue=store_task_queue(self._routing.base_task_queue, store_id),
                # A run id names its artifacts (runs/{run_id}/…): never reuse one.
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                static_summary=start.summary,
                static_details=start.details,
                search_attributes=start.search_attributes,
            )
        except WorkflowAlreadyStartedError:
            raise AgentError(f"run {request.run_id!r} already exists") from None
        except RPCError as exc:
            if exc.status == RPCStatusCode.INVALID_ARGUMENT and "search attribute" in exc.message:
                raise ConfigError(
                    f"the Temporal server does not know skillweave's search attributes "
                    f"({first_line(exc)}): run `skillweave temporal setup` (it registers them)"
                ) from None
            raise AgentError(f"run {request.run_id!r} did not start: {first_line(exc)}") from None
        return request.run_id

    async def check_namespace(self) -> None:
        """Refuse, once per engine, a namespace that lacks skillweave's search attributes: a
        run started there would fail every workflow task and stay "Running" for ever.

        Raises:
            ConfigError: which attributes, and the command that registers them.
        """
        if self._namespace_checked:
            return
        try:
            problems = await search_attribute_problems(self.client, self.client.namespace)
        except RPCError as exc:  # e.g. a server that does not let this client list them
            _log.warning("cannot list the namespace's search attributes: %s", first_line(exc))
            problems = []
        if problems:
            raise ConfigError(
                f"namespace {self.client.namespace!r} cannot hold runs: {'; '.join(problems)}; "
                "run `skillweave temporal setup` (it registers them)"
            )
        self._namespace_checked = True
