"""The eval batches the API starts on its engine: :class:`EvalBatches`.

On the temporal engine a batch is the ``EvalBatchWorkflow`` (``evals.temporal.TemporalEvals``):
started, and read back through its ``progress`` query, by any API process; it outlives this
one. On the direct engine a batch runs in this process, in the background
(:class:`~skillweave.evals.runner.DirectEvals` over the engine's services), the way the API's
direct runs do; its progress is this process's, and a batch still running when the API stops
is cancelled first, its report written (status ``cancelled``): ``--resume`` (or a new batch)
runs the rest.

Opened by the ``open_evals`` start-up hook (:mod:`skillweave.api.skill_evals`) over the engine
``open_runs`` serves runs on; held by the app's state.
"""

from __future__ import annotations

import asyncio
import logging

from skillweave.engines import DirectEngine, Engine
from skillweave.errors import AgentError
from skillweave.evals import BatchProgress, EvalBatch, ReportSummary
from skillweave.evals import runner as eval_runner
from skillweave.evals import services as eval_services
from skillweave.evals import store as eval_store

__all__ = ["EvalBatches", "NoEvals"]

_log = logging.getLogger("skillweave.api")


class EvalBatches:
    """Starts eval batches on `engine` and tells how far they are.

    Args:
        engine: the API's engine (the one its runs run on).
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._direct: eval_runner.DirectEvals | None = None
        if isinstance(engine, DirectEngine):
            self._store = engine.services.store
            self._direct = eval_runner.DirectEvals(
                engine, eval_services.EvalServices(engine.services)
            )
        self._running: set[asyncio.Task[object]] = set()

    async def start(self, batch: EvalBatch) -> None:
        """Start `batch` (stored first: its report, a resume and its progress read it).

        Raises:
            AgentError: its workflow runs already, or did not start (temporal).
            ConfigError: the engine cannot start it (temporal: no worker of its store).
        """
        if self._direct is None:
            from skillweave.evals import temporal  # temporalio: only on the temporal engine

            await temporal.TemporalEvals(self.engine).start(batch)  # type: ignore[arg-type]
            return
        if self._direct.progress(batch.batch_id) is not None:
            raise AgentError(f"eval batch {batch.batch_id} runs in this process already")
        await eval_store.save_batch(self._store, batch)  # read back at once
        task: asyncio.Task[object] = asyncio.create_task(
            self._direct.run(batch), name=f"eval-batch-{batch.batch_id}"
        )
        self._running.add(task)
        task.add_done_callback(self._ended)

    async def run(self, batch: EvalBatch) -> ReportSummary:
        """Run `batch` to its end and answer where its report is (a gated rollback waits for
        it: ``evals.gate``).

        Raises:
            SkillweaveError: a step of the batch failed for good.
        """
        if self._direct is None:
            from skillweave.evals import temporal  # temporalio: only on the temporal engine

            return await temporal.TemporalEvals(self.engine).run(batch)  # type: ignore[arg-type]
        return await self._direct.run(batch)

    def _ended(self, task: asyncio.Task[object]) -> None:
        self._running.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            batch_id = task.get_name().removeprefix("eval-batch-")
            _log.error("eval batch %s failed: %s", batch_id, error)

    async def progress(self, batch_id: str) -> BatchProgress | None:
        """How far the batch `batch_id` is while it runs; None: it does not run (it has ended,
        or it stopped before its report), or no worker answered."""
        if self._direct is not None:
            return self._direct.progress(batch_id)
        from skillweave.evals import temporal

        try:
            return await temporal.TemporalEvals(self.engine).progress(batch_id)  # type: ignore[arg-type]
        except AgentError:
            return None

    async def runs(self, batch_id: str) -> bool:
        """Whether the batch `batch_id` runs now, whether or not its progress can be told (on
        Temporal, a workflow whose worker does not answer still runs)."""
        if self._direct is not None:
            return self._direct.progress(batch_id) is not None
        from skillweave.evals import temporal

        return await temporal.TemporalEvals(self.engine).runs(batch_id)  # type: ignore[arg-type]

    async def close(self) -> None:
        """Cancel the batches running in this process (each writes its report first)."""
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)


class NoEvals:
    """No eval batches: the app was composed without ``open_evals`` (and so without the eval
    routes)."""
