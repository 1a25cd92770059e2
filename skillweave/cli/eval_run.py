"""An eval batch run from the command line on an opened engine, with its progress shown.

:func:`run_eval_batch` runs a batch on an engine :mod:`skillweave.cli.compose` opened: on the
direct engine in this process (:class:`~skillweave.evals.runner.DirectEvals` over the engine's
services), on Temporal as the ``EvalBatchWorkflow`` its workers run
(``skillweave.evals.temporal.TemporalEvals``), and answers the stored report. First the
engine is made ready for this user's batch: a direct engine takes the scripted models this
user names from any file, and a Temporal engine must have a worker polling its task queue
(else the batch would wait for one; refused in one line). While it runs,
:class:`EvalProgress` shows how far it is on stderr: a live line on a terminal (jobs done of
all, running, the pass rate so far), otherwise a short line each time a job is graded.

Callers: ``skillweave skills eval`` (:mod:`skillweave.cli.evals`) and the gated ``skills
update`` / ``skills rollback`` (``--gate``), which run a batch and judge its report.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.live import Live
from rich.text import Text

from skillweave.cli.console import err
from skillweave.errors import ConfigError
from skillweave.evals import BatchProgress, EvalBatch, EvalReport, ReportSummary

if TYPE_CHECKING:
    from skillweave.cli.compose import OpenedEngine
    from skillweave.engines import Engine
    from skillweave.evals import runner as eval_runner

__all__ = ["EvalProgress", "progress_line", "run_eval_batch", "runner_of"]


def progress_line(progress: BatchProgress) -> str:
    """One line of a batch's progress: ``eval-…: 3/12 jobs graded, 2 running, 83% passed so
    far (2 skipped, graded before)``."""
    parts = [f"{progress.batch_id}: {progress.finished}/{progress.jobs} jobs graded"]
    if progress.running:
        parts.append(f"{len(progress.running)} running")
    if progress.verdicts:
        parts.append(f"{progress.passed_verdicts / progress.verdicts:.0%} passed so far")
    line = ", ".join(parts)
    if progress.skipped:
        line += f" ({progress.skipped} graded before: not run again)"
    if progress.phase == "reporting":
        line += "; writing the report"
    return line


class EvalProgress:
    """A batch's progress on stderr: a live line on a terminal, else a line per graded job."""

    def __init__(self, *, live: bool | None = None) -> None:
        self.live = err.is_terminal if live is None else live
        self._shown: Live | None = None
        self._last: tuple[int, str] | None = None

    @contextlib.contextmanager
    def showing(self) -> Iterator[EvalProgress]:
        """Show the progress while the context lasts."""
        if not self.live:
            yield self
            return
        with Live(Text("starting the eval batch…", style="dim"), console=err) as shown:
            self._shown = shown
            try:
                yield self
            finally:
                self._shown = None

    def __call__(self, progress: BatchProgress) -> None:
        line = progress_line(progress)
        if self._shown is not None:
            self._shown.update(Text(line, style="dim"))
            return
        told = (progress.finished, progress.phase)
        # A line per job graded (and phase), not per run started; the report tells the end.
        if told != self._last and progress.phase != "completed":
            self._last = told
            err.print(Text(line, style="dim"), soft_wrap=True)


def runner_of(opened: OpenedEngine[Engine]) -> eval_runner.EvalRunner:
    """The eval runner of `opened`: in this process on the direct engine, the batch workflow
    on Temporal."""
    from skillweave.engines import DirectEngine

    engine = opened.engine
    if isinstance(engine, DirectEngine):
        from skillweave.evals import runner, services

        return runner.DirectEvals(engine, services.EvalServices(engine.services))
    from skillweave.evals import temporal

    return temporal.TemporalEvals(engine)  # type: ignore[arg-type]


async def run_eval_batch(
    opened: OpenedEngine[Engine], batch: EvalBatch, *, progress: bool, live: bool | None = None
) -> EvalReport:
    """Run `batch` on `opened` (see the module docstring) and answer its stored report.

    Args:
        opened: the engine, opened by :mod:`skillweave.cli.compose`.
        batch: the batch (stored first: a resume reads it).
        progress: show the batch's progress on stderr while it runs.
        live: a live line (default: when stderr is a terminal); False: a line per job graded.

    Raises:
        ConfigError: on Temporal, no worker polls the engine's task queue.
        asyncio.CancelledError: interrupted (Ctrl-C); on the direct engine the batch was
            cancelled and its report written (``cancelled``), on Temporal it goes on.
        SkillweaveError: the batch could not start, or failed (Temporal).
    """
    from skillweave.evals import store

    await _ready(opened)
    summary: ReportSummary
    runner = runner_of(opened)
    if progress:
        view = EvalProgress(live=live)
        with view.showing():
            summary = await runner.run(batch, on_progress=view)
    else:
        summary = await runner.run(batch)
    return await store.read_report(opened.store, summary.skill, summary.batch_id)


async def _ready(opened: OpenedEngine[Engine]) -> None:
    """The engine can run the batch: a direct engine's scripted models may be any file (this
    user's own ``--model`` and ``--grader``); a Temporal engine has a worker polling its task
    queue (else the batch would wait for one)."""
    if opened.services is not None and opened.services.models is not None:
        opened.services.models.any_script = True
    if opened.workers is not None and await opened.workers() == 0:
        workflow = opened.settings.workflow
        queue = getattr(opened.engine, "task_queue", workflow.task_queue)
        raise ConfigError(
            f"no worker polls task queue {queue!r} on {workflow.temporal_address} (namespace "
            f"{workflow.namespace!r}): start one with `skillweave worker`, or the whole stack "
            "with `skillweave dev`"
        )
