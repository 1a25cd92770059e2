"""`TemporalEvals`: eval batches on a Temporal engine, the client side of ``EvalBatchWorkflow``.

It implements the :class:`~skillweave.evals.runner.EvalRunner` protocol over a
:class:`~skillweave.engines.temporal.TemporalEngine` (its client, its store, the task queue
routed to that store), so the CLI (``skillweave skills eval --engine temporal``), the API and
the gated updates run a batch durably the way they run one in-process with ``DirectEvals``:

- :meth:`TemporalEvals.start`: store the batch (``evals.store.save_batch``: a resume reads it),
  then start its workflow, ``batch_workflow_id(batch_id)``, on the task queue of the batch's
  store, where the workers that run its jobs' runs poll (a batch id whose workflow still runs
  is refused in one line). The batch is stored as it runs: with its store's id, and with the
  engine's catalog mode and top-k in its agent where the agent sets none, so every job (and
  a resume) runs with what a run started from here would;
- :meth:`TemporalEvals.progress`: the workflow's ``progress`` query;
- :meth:`TemporalEvals.run`: start, then tell `on_progress` each change (polled every
  ``poll_seconds``), and answer the report's summary;
- :meth:`TemporalEvals.cancel`: cancel the workflow and wait until it has closed (its
  children are cancelled, its report written, status ``cancelled``);
- :meth:`TemporalEvals.resume`: the stored batch again, ``attempt + 1``: jobs graded before
  are skipped, the others run under fresh run ids.

How a batch ends, as a caller sees it: completed (or ``partial``: a job could not be graded,
a resume runs it) → its :class:`ReportSummary`; cancelled (here, from the UI or the CLI: the
workflow ends *cancelled*) → the summary of the report it wrote, status ``cancelled``; failed
or terminated → one :class:`AgentError` line saying why and how to resume it.

What the Temporal UI shows of a batch: a summary (``eval unit-converter: 3 evals × 2
variants × 2``), details (the batch, its version, model, grader and the commands that follow,
cancel and resume it) and the agent its jobs run as a search attribute
(``SkillweaveAgent = 'eval-unit-converter'`` lists the batch and its runs).
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Final

from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    TerminatedError,
    WorkflowAlreadyStartedError,
)
from temporalio.service import RPCError, RPCStatusCode

from skillweave.agent import markdown_text
from skillweave.engines import SA_AGENT, store_task_queue
from skillweave.engines.temporal import TemporalEngine
from skillweave.errors import AgentError, ConfigError
from skillweave.evals.batch import EvalBatch, job_agent, plan_jobs
from skillweave.evals.effects import EVAL_BATCH_WORKFLOW, QUERY_PROGRESS, batch_workflow_id
from skillweave.evals.results import BatchProgress, ReportSummary
from skillweave.evals.runner import ProgressCallback
from skillweave.evals.store import load_batch, read_report, save_batch
from skillweave.storage import keys, store_identity
from skillweave.terminal import counted

__all__ = ["POLL_SECONDS", "TemporalEvals", "batch_details", "batch_summary"]

POLL_SECONDS: Final = 0.5
"""How often :meth:`TemporalEvals.run` asks a batch for its progress."""
_QUERY_TIMEOUT: Final = timedelta(seconds=5)
_STOPPED: Final = frozenset(
    {
        WorkflowExecutionStatus.TERMINATED,
        WorkflowExecutionStatus.FAILED,
        WorkflowExecutionStatus.TIMED_OUT,
    }
)
"""A batch's workflow closed without its report's phase: its progress query would lie."""
_VERSION_CHARS: Final = 12


class TemporalEvals:
    """Eval batches as ``EvalBatchWorkflow`` executions on `engine`'s server (see the module
    docstring).

    Args:
        engine: the Temporal engine (its client, store and task queue).
        poll_seconds: how often :meth:`run` reads the progress.
    """

    def __init__(self, engine: TemporalEngine, *, poll_seconds: float = POLL_SECONDS) -> None:
        self.engine = engine
        self.poll_seconds = poll_seconds

    async def start(self, batch: EvalBatch) -> str:
        """Store `batch`, then start its workflow; its workflow id.

        Raises:
            AgentError: the batch's workflow is running already, or did not start.
            ConfigError: the engine has no store; the namespace lacks skillweave's search
                attributes; no worker of the store polls while others do.
            StorageError: the batch cannot be stored.
        """
        engine = self.engine
        if engine.store is None:
            raise ConfigError(
                f"eval batch {batch.batch_id} not started: this client has no artifact store "
                "(open the engine over the deployment's store, its STORAGE__ settings)"
            )
        await engine.check_namespace()
        batch = await self._as_run(batch)
        await engine.workers()  # refuses a store no worker serves while others' do
        workflow_id = batch_workflow_id(batch.batch_id)
        if await self._status(self._handle(batch.batch_id)) == WorkflowExecutionStatus.RUNNING:
            raise _running_already(batch)  # before its stored batch is replaced
        await save_batch(engine.store, batch)
        assert batch.store_id is not None
        try:
            await engine.client.start_workflow(
                EVAL_BATCH_WORKFLOW,
                batch,
                id=workflow_id,
                task_queue=store_task_queue(engine.base_task_queue, batch.store_id),
                # Resumed under the same id once closed; never two at once.
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
                static_summary=batch_summary(batch),
                static_details=batch_details(batch),
                search_attributes=TypedSearchAttributes(
                    [SearchAttributePair(SA_AGENT, job_agent(batch, plan_jobs(batch)[0]).name)]
                ),
            )
        except WorkflowAlreadyStartedError:
            raise _running_already(batch) from None
        except RPCError as exc:
            raise AgentError(f"eval batch {batch.batch_id} did not start: {_line(exc)}") from None
        return workflow_id

    async def progress(self, batch_id: str) -> BatchProgress:
        """The batch's progress (its ``progress`` query; a worker answers it).

        Raises:
            AgentError: no such batch, one that stopped (terminated, failed, timed out: resume
                it), or no worker answered in time.
        """
        handle = self._handle(batch_id)
        status = await self._status(handle)
        if status is None:
            raise AgentError(f"no eval batch {batch_id} on this server")
        if status in _STOPPED:
            # A closed workflow still answers a query (a worker replays it), with the progress
            # it had when it closed: a terminated batch would read as running for ever.
            raise AgentError(f"eval batch {batch_id} does not run: it is {status.name.lower()}")
        try:
            return await handle.query(
                QUERY_PROGRESS, result_type=BatchProgress, rpc_timeout=_QUERY_TIMEOUT
            )
        except RPCError as exc:
            raise AgentError(f"eval batch {batch_id}: no progress ({_line(exc)})") from None

    async def runs(self, batch_id: str) -> bool:
        """Whether the batch's workflow runs now (its progress may still be untold: no worker
        answers, or its workflow task fails until fixed code is deployed)."""
        status = await self._status(self._handle(batch_id))
        return status == WorkflowExecutionStatus.RUNNING

    async def run(
        self, batch: EvalBatch, *, on_progress: ProgressCallback | None = None
    ) -> ReportSummary:
        """Start `batch` and follow it to its report (see the module docstring): `on_progress`
        is told each change. Cancelling this call leaves the batch running on the server.

        Raises:
            AgentError: it did not start, or it failed or was terminated.
        """
        await self.start(batch)
        ending = asyncio.ensure_future(self._ended(batch.skill, batch.batch_id))
        last: BatchProgress | None = None

        async def tell() -> None:
            nonlocal last
            if on_progress is None:
                return
            with contextlib.suppress(AgentError):  # no worker yet: the batch waits
                progress = await self.progress(batch.batch_id)
                if progress != last:
                    last = progress
                    on_progress(progress)

        try:
            while not ending.done():
                await tell()
                await asyncio.wait({ending}, timeout=self.poll_seconds)
            summary = ending.result()
            await tell()  # how it ended (a closed workflow still answers, replayed)
            return summary
        finally:
            if not ending.done():
                ending.cancel()
                await asyncio.wait({ending})

    async def cancel(self, skill: str, batch_id: str) -> None:
        """Cancel the batch and wait until its workflow has closed (its report written, status
        ``cancelled``); a batch that has ended already is left as it is.

        Raises:
            AgentError: there is no such batch.
        """
        handle = self._handle(batch_id)
        try:
            await handle.cancel()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                if await self._status(handle) is not None:
                    return  # closed already
                raise AgentError(f"no eval batch {batch_id} of {skill} on this server") from None
            raise AgentError(f"eval batch {batch_id} not cancelled: {_line(exc)}") from None
        with contextlib.suppress(WorkflowFailureError):
            await handle.result()

    async def resume(self, skill: str, batch_id: str) -> str:
        """Run the stored batch `batch_id` of `skill` again (``attempt + 1``): its graded jobs
        are skipped, the others run again. Its workflow id.

        Raises:
            EvalsNotFoundError: no such batch is stored.
            AgentError: it is still running.
        """
        store = self.engine.store
        if store is None:
            raise ConfigError(f"eval batch {batch_id} not resumed: this client has no store")
        batch = await load_batch(store, skill, batch_id)
        return await self.start(batch.model_copy(update={"attempt": batch.attempt + 1}))

    # --- how a batch ended -----------------------------------------------------------------

    async def _ended(self, skill: str, batch_id: str) -> ReportSummary:
        """Wait for the batch's workflow to close; its report's summary, or why there is none.

        Raises:
            AgentError: it failed or was terminated (one line, with how to resume it).
        """
        try:
            return await self._handle(batch_id).result()
        except WorkflowFailureError as exc:
            cause = exc.cause
        if isinstance(cause, CancelledError):
            return await self._stored_summary(skill, batch_id)
        terminated = isinstance(cause, TerminatedError)
        why = "was terminated" if terminated else f"failed: {_why(cause)}"
        raise AgentError(
            f"eval batch {batch_id} {why}; resume it (its graded jobs are kept): "
            f"skillweave skills eval {skill} --resume {batch_id}"
        )

    async def _stored_summary(self, skill: str, batch_id: str) -> ReportSummary:
        """The summary of the report a cancelled batch wrote before it ended."""
        store = self.engine.store
        assert store is not None
        report = await read_report(store, skill, batch_id)
        refs = {}
        for form in ("json", "md", "html"):
            ref = await store.stat(keys.eval_report_key(skill, batch_id, form))  # type: ignore[arg-type]
            if ref is None:
                raise AgentError(f"eval batch {batch_id}: its report.{form} is missing")
            refs[form] = ref
        baseline = report.variant("baseline")
        return ReportSummary(
            batch_id=batch_id,
            skill=skill,
            status=report.status,
            pass_rate=report.pass_rate,
            baseline_pass_rate=None if baseline is None else baseline.pass_rate,
            jobs=len(report.jobs),
            report=refs["json"],
            markdown=refs["md"],
            html=refs["html"],
        )

    # --- plumbing --------------------------------------------------------------------------

    async def _as_run(self, batch: EvalBatch) -> EvalBatch:
        """`batch` as it runs here: with its store's id, and the engine's catalog where its
        agent sets none (see the module docstring)."""
        store = self.engine.store
        assert store is not None
        store_id = batch.store_id or await store_identity(store)
        mode, top_k = self.engine.catalog
        catalog = batch.agent.catalog
        catalog = catalog.model_copy(
            update={"mode": catalog.mode or mode, "top_k": catalog.top_k or top_k}
        )
        agent = batch.agent.model_copy(update={"catalog": catalog})
        return batch.model_copy(update={"store_id": store_id, "agent": agent})

    def _handle(self, batch_id: str) -> WorkflowHandle[object, ReportSummary]:
        return self.engine.client.get_workflow_handle(
            batch_workflow_id(batch_id), result_type=ReportSummary
        )

    async def _status(
        self, handle: WorkflowHandle[object, ReportSummary]
    ) -> WorkflowExecutionStatus | None:
        """The status of the batch's latest workflow; None: there is none.

        Raises:
            AgentError: the server cannot be asked.
        """
        try:
            return (await handle.describe()).status
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return None
            raise AgentError(f"eval batch {handle.id}: {_line(exc)}") from None


def _running_already(batch: EvalBatch) -> AgentError:
    return AgentError(
        f"eval batch {batch.batch_id} is running already: wait for it, or cancel it "
        f"(skillweave skills eval {batch.skill} --cancel {batch.batch_id})"
    )


def batch_summary(batch: EvalBatch) -> str:
    """The one line the Temporal UI shows for a batch: ``eval unit-converter: 3 evals × 2
    variants × 2``."""
    evals = counted(len(batch.cases), "eval")
    variants = counted(len(batch.variants), "variant")
    line = f"eval {batch.skill}: {evals} × {variants}"
    return line + (f" × {batch.repeat}" if batch.repeat > 1 else "")


def batch_details(batch: EvalBatch) -> str:
    """The fixed details the Temporal UI shows for a batch (markdown; the names escaped)."""
    skill, batch_id = markdown_text(batch.skill), batch.batch_id
    version = f"`{batch.version[:_VERSION_CHARS]}`"
    if batch.against is not None:
        version += f" against `{batch.against[:_VERSION_CHARS]}`"
    lines = [
        f"**Eval batch:** `{batch_id}` of {skill} @ {version}",
        f"**Jobs:** {counted(len(plan_jobs(batch)), 'job')} ({', '.join(batch.variants)}; "
        f"{counted(batch.repeat, 'repeat')}), {batch.concurrency} at a time",
        f"**Model:** {markdown_text(batch.model)}"
        if batch.model
        else "**Model:** the worker's default",
        f"**Grader:** {markdown_text(batch.grader)}" if batch.grader else "**Grader:** the model",
        f"**Report:** skillweave skills eval {skill} --show {batch_id}",
        f"**Cancel:** skillweave skills eval {skill} --cancel {batch_id} · **Resume:** "
        f"skillweave skills eval {skill} --resume {batch_id}",
    ]
    if batch.attempt:
        lines.insert(1, f"**Resumed:** attempt {batch.attempt + 1} (graded jobs are kept)")
    return "\n\n".join(lines)


def _why(cause: BaseException | None) -> str:
    """A failed batch's cause in one line: the failed step and its error."""
    if isinstance(cause, ActivityError) and cause.cause is not None:
        return f"{cause.activity_type}: {_why(cause.cause)}"
    if isinstance(cause, ApplicationError):
        return f"{cause.type or 'ApplicationError'}: {_line(cause)}"
    return _line(cause) if cause is not None else "failed"


def _line(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "failed")
