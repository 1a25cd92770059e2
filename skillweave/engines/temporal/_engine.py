"""`TemporalEngine`: the ``Engine`` protocol over a Temporal client (``WORKFLOW__EXECUTION_ENGINE
=temporal``). Each run is one ``AgentWorkflow`` (``workflows.agent``) that a worker
(``workflows.worker``) runs; the engine only talks to the server, through the names and wire
models of :mod:`skillweave.engines.contract`.

Callers see what the direct engine gives them: ``start`` refuses a run id used before,
``events`` yields every event from the run's start and ends after ``run_finished`` (it polls
the ``events`` query by absolute index), ``send`` is taken before the run's next model call
(an update, accepted or rejected by the workflow's validator), ``cancel`` returns once the run
has ended, and ``result`` maps every way a workflow closes to a :class:`RunResult`. Beyond the
protocol: :meth:`TemporalEngine.ask` (a message and the model's reply to it),
:meth:`TemporalEngine.status` (the ``status`` query), :meth:`TemporalEngine.list_runs`,
``describe`` and ``request`` (no worker needed: :mod:`._visibility`),
:meth:`TemporalEngine.waiting` (:mod:`._pending`) and :meth:`TemporalEngine.follow`, the
events with notes between them (:mod:`._follow`).

The engine composes its collaborators, one run each: :class:`~._routing.StoreRouting` (its
store and the task queue its runs run on), :class:`~._start.RunStarter` (starting a run),
:class:`~._handles.RunHandles` (a run's workflow and queries), :class:`~._results.RunResults`
(how a run ended), :class:`~._visibility.Visibility` (what the server tells without a
worker), :class:`~._pending.PendingActivities` (retries and waits) and
:class:`~._follow.Follower` (following a run). It is built by ``connect_engine``
(:mod:`._connection`) or, in tests, over any client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowUpdateFailedError,
    WorkflowUpdateStage,
)
from temporalio.exceptions import ApplicationError

from skillweave.agent import AgentEvent, ApprovalDecision
from skillweave.config import CatalogMode
from skillweave.engines.base import RunRequest, RunResult
from skillweave.engines.contract import (
    SIGNAL_APPROVE,
    SIGNAL_CANCEL,
    UPDATE_SEND,
    EventPage,
    Reply,
    RunView,
    UserMessage,
)
from skillweave.engines.notes import FollowNote, events_only
from skillweave.engines.temporal._follow import FOLLOW_WORKER_WAIT_SECONDS, POLL_SECONDS, Follower
from skillweave.engines.temporal._handles import QUERY_TIMEOUT, WAIT_QUERY_TIMEOUT, RunHandles
from skillweave.engines.temporal._pending import PendingActivities
from skillweave.engines.temporal._results import RunResults
from skillweave.engines.temporal._routing import StoreRouting
from skillweave.engines.temporal._start import RunStarter
from skillweave.engines.temporal._visibility import RunRow, Visibility
from skillweave.errors import AgentError

if TYPE_CHECKING:
    from skillweave.storage import ArtifactStore
    from skillweave.waiting import Waiting

__all__ = ["TemporalEngine"]


class TemporalEngine:
    """Executes runs as ``AgentWorkflow`` executions on a Temporal server.

    Args:
        client: a client built with skillweave's data converter (see ``connect_engine``).
        task_queue: the configured (base) task queue; a run runs on it routed to the store it
            was started against (:attr:`task_queue`), where only that store's workers poll.
        catalog_mode: the settings' catalog mode, for specs that do not set one.
        catalog_top_k: the settings' top-k for ``auto``.
        poll_seconds: how often :meth:`events` asks for new events.
        worker_wait_seconds: how long :meth:`follow` (and :meth:`events`) go on while no
            worker answers before raising ``NoWorkerError``; 0 waits for ever.
        store: this client's artifact store: a run started here carries its id and runs on
            its store's queue (``storage.identity``).
        store_id: the store's id, when known (read from `store` at the first run otherwise).
    """

    def __init__(
        self,
        client: Client,
        *,
        task_queue: str,
        catalog_mode: CatalogMode = "enabled",
        catalog_top_k: int = 8,
        poll_seconds: float = POLL_SECONDS,
        worker_wait_seconds: float = FOLLOW_WORKER_WAIT_SECONDS,
        store: ArtifactStore | None = None,
        store_id: str | None = None,
    ) -> None:
        self.client = client
        self.base_task_queue = task_queue
        self.store = store
        self._routing = StoreRouting(
            client, base_task_queue=task_queue, store=store, store_id=store_id
        )
        self._starter = RunStarter(
            client, self._routing, catalog_mode=catalog_mode, catalog_top_k=catalog_top_k
        )
        self._handles = RunHandles(client, self._routing)
        self._results = RunResults(self._handles)
        self._pending = PendingActivities(client, self._routing)
        self._visibility = Visibility(client, self._handles)
        self._follower = Follower(
            self._handles,
            self._routing,
            self._pending,
            poll_seconds=poll_seconds,
            worker_wait_seconds=worker_wait_seconds,
        )

    @property
    def namespace(self) -> str:
        """The namespace the client works in."""
        return self.client.namespace

    @property
    def task_queue(self) -> str:
        """The task queue this engine's runs run on: the base queue routed to its store (the
        base queue while the store's id is not known yet)."""
        return self._routing.task_queue

    @property
    def catalog(self) -> tuple[CatalogMode, int]:
        """The catalog mode and top-k (the settings') a run whose spec sets none runs with."""
        return self._starter.catalog_mode, self._starter.catalog_top_k

    # --- Engine ----------------------------------------------------------------------------

    async def start(self, request: RunRequest) -> str:
        """Start the run's workflow; returns its id.

        It starts on the task queue routed to the store the run is started against (the
        request's, else this engine's): only that store's workers run it, and it waits until
        one polls.

        Raises:
            AgentError: a run with this id exists (running or not).
            ConfigError: the server does not know skillweave's search attributes; no worker of
                the run's store polls while workers of other stores do; this engine has no
                store.
            StorageError: the store's id cannot be read.
        """
        return await self._starter.start(request)

    async def events(self, run_id: str, *, after: int = 0) -> AsyncIterator[AgentEvent]:
        """Every event of the run from index `after` (0: its start), ending after
        ``run_finished``, or once the workflow has closed and its last events were read:
        :meth:`follow` without its notes.

        Raises:
            NoWorkerError: no worker answered for ``worker_wait_seconds``.
            AgentError: there is no such run, or a query failed.
        """
        async for event in events_only(self.follow(run_id, after=after)):
            yield event

    def follow(
        self, run_id: str, *, after: int = 0, until_finished: bool = True
    ) -> AsyncIterator[AgentEvent | FollowNote]:
        """The run's events from index `after`, as :meth:`events` gives them, with a
        :class:`FollowNote` between them while no worker answers, when events were dropped,
        when an activity is retried and when a step waits
        (:meth:`~skillweave.engines.temporal._follow.Follower.follow`).

        Raises:
            NoWorkerError: no worker answered for ``worker_wait_seconds`` (0: never raised);
                the run may still be running.
            AgentError: there is no such run, or a query failed.
        """
        return self._follower.follow(run_id, after=after, until_finished=until_finished)

    async def send(self, run_id: str, text: str) -> None:
        """Queue a user message; the run takes it before its next model call.

        Raises:
            AgentError: the workflow refused it (empty, too long, the run has ended), or
                there is no such run.
        """
        with self._handles.errors(run_id):
            update = await self._handles.of(run_id).start_update(
                UPDATE_SEND,
                UserMessage(text=text),
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                result_type=Reply,
            )
        # A rejected update comes back at once with its outcome; waiting on an accepted one
        # would wait for the model's answer, which ``send`` does not.
        if getattr(update, "_known_outcome", None) is not None:
            await _update_result(update)

    async def ask(self, run_id: str, text: str, *, reply_to_turn: int | None = None) -> Reply:
        """Send a user message and wait for the model's answer to it.

        Args:
            run_id: the run.
            text: the message.
            reply_to_turn: the turn of the answer this replies to; refused as stale when a
                newer answer exists.

        Raises:
            AgentError: the workflow refused the message, or there is no such run.
        """
        with self._handles.errors(run_id):
            update = await self._handles.of(run_id).start_update(
                UPDATE_SEND,
                UserMessage(text=text, reply_to_turn=reply_to_turn),
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                result_type=Reply,
            )
            return await _update_result(update)

    async def approve(self, run_id: str, decision: ApprovalDecision) -> None:
        """Approve or deny the script run the run waits on.

        Raises:
            AgentError: the run waits on no approval, or there is no such run.
        """
        view = await self.status(run_id)
        if view.awaiting_approval is None:
            raise AgentError(f"run {run_id!r} is not waiting for an approval")
        with self._handles.errors(run_id):
            await self._handles.of(run_id).signal(SIGNAL_APPROVE, decision)

    async def cancel(self, run_id: str, *, reason: str = "cancelled by the user") -> None:
        """Ask the run to stop and wait until its workflow has closed (a run that has ended
        already is left as it is)."""
        handle = self._handles.of(run_id)
        try:
            with self._handles.errors(run_id):
                await handle.signal(SIGNAL_CANCEL, reason)
        except AgentError as exc:
            if str(exc).endswith("has ended"):
                return
            raise
        await self._handles.closed(handle)

    async def result(self, run_id: str) -> RunResult:
        """Wait for the run's workflow to close; how it ended, whichever way it did."""
        return await self._results.result(run_id)

    # --- beyond the protocol ---------------------------------------------------------------

    async def status(self, run_id: str, *, timeout: timedelta = QUERY_TIMEOUT) -> RunView:
        """The run's status (the ``status`` query; a worker answers it).

        Raises:
            NoWorkerError: no worker answered within `timeout`.
            AgentError: there is no such run.
        """
        return await self._handles.status(run_id, timeout=timeout)

    async def event_page(self, run_id: str, *, after: int = 0) -> EventPage:
        """The events the run keeps from index `after` (one ``events`` query)."""
        return await self._handles.page(self._handles.of(run_id), run_id, after)

    async def waiting(self, run_id: str) -> list[Waiting]:
        """What the run's steps wait for now
        (:meth:`~skillweave.engines.temporal._pending.PendingActivities.waits`), from its
        description: no worker needed; empty when nothing waits.

        Raises:
            AgentError: there is no such run.
        """
        with self._handles.errors(run_id):
            description = await self._handles.of(run_id).describe(rpc_timeout=WAIT_QUERY_TIMEOUT)
        if description.status != WorkflowExecutionStatus.RUNNING:
            return []
        return [waiting for _, waiting in await self._pending.waits(description)]

    async def describe(self, run_id: str) -> RunRow:
        """The run's row from the server, no worker needed (:meth:`Visibility.describe`)."""
        return await self._visibility.describe(run_id)

    async def request(self, run_id: str) -> RunRequest:
        """What the run was started with, no worker needed (:meth:`Visibility.request`)."""
        return await self._visibility.request(run_id)

    async def list_runs(
        self,
        *,
        agent: str | None = None,
        phase: str | None = None,
        skill: str | None = None,
        limit: int = 50,
    ) -> list[RunRow]:
        """Runs on the server, newest first, filtered by agent, phase and an active skill
        (:meth:`Visibility.list_runs`)."""
        return await self._visibility.list_runs(agent=agent, phase=phase, skill=skill, limit=limit)

    async def workers(self) -> int:
        """How many workers of this engine's store polled its task queue lately (those that
        would run a run started here).

        Raises:
            ConfigError: none does while workers of other stores poll the base queue (see
                :meth:`start`), or this engine has no store.
        """
        return await self._routing.check_workers(await self._routing.store_id())

    async def check_namespace(self) -> None:
        """Refuse, once per engine, a namespace without skillweave's search attributes, where
        no run could run (what :meth:`start` checks first; an eval batch's client too).

        Raises:
            ConfigError: which attributes, and the command that registers them.
        """
        await self._starter.check_namespace()

    async def worker_default_models(self) -> set[str]:
        """The default models (``provider:name``) the workers that would run a run started
        here (those polling its store's task queue lately) say they have; empty: none
        answers, or none has a default.

        Raises:
            AgentError: the task queue or the store's id cannot be read.
        """
        return await self._routing.default_models()


async def _update_result(update: Any) -> Reply:
    try:
        return await update.result()
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause
        message = cause.message if isinstance(cause, ApplicationError) else str(cause)
        raise AgentError(f"message refused: {message}") from None
