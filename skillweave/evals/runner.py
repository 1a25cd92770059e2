"""Running an eval batch: the :class:`EvalRunner` protocol, and :class:`DirectEvals`, a batch
run in this process on the direct engine.

A runner runs a batch (:class:`~skillweave.evals.batch.EvalBatch`) to its stored report and
answers the report's summary; it can cancel a batch it runs. There are two: ``TemporalEvals``
(:mod:`skillweave.evals.temporal`), the ``EvalBatchWorkflow`` on a Temporal engine, durable,
and :class:`DirectEvals` here, which makes the same steps in the same order as the workflow
(``workflows.evals``), in-process:

1. ``finished_eval_jobs``: the jobs an earlier attempt graded are skipped (a resumed batch,
   ``attempt`` + 1, never runs a graded job again; an ungraded one runs under a fresh run id,
   :func:`~skillweave.evals.batch.job_run_id`);
2. each remaining job of :func:`~skillweave.evals.batch.plan_jobs`, at most ``concurrency`` at
   once: ``prepare_eval_job`` (when its eval has files), the job's agent run on the direct engine
   (:func:`~skillweave.evals.batch.job_request`), its result, ``grade_eval_job`` with the run's
   wall seconds (it reads the eval from the batch stored first, and answers the stored grade
   counted), then the batch's progress (:class:`~skillweave.evals.results.BatchProgress`);
   a job whose step fails for good (after its retries), or whose run cannot start, is left
   ungraded and the batch goes on;
3. ``write_eval_report``: status ``completed``, or ``partial`` when a job was left ungraded
   (a resume runs it again).

Each step is a call of the ``EvalServices`` method named as its descriptor in
:data:`~skillweave.evals.effects.BATCH_EFFECTS`, the request and the result crossing the same
JSON round-trip as the activity's and retried by the same rule (``engines.retries``), the way
the direct engine calls ``AgentServices`` through the agent's effects: one rule for both
engines.

Cancelled (the task running :meth:`DirectEvals.run` is cancelled, Ctrl-C, or
:meth:`DirectEvals.cancel`): the runs in flight are cancelled, the report is written from the
jobs graded so far with status ``cancelled``, then ``CancelledError`` goes on.

Evals are unattended: an eval job's run that asks for a person's approval (a script run its
agent's ``approvals`` names, a skill it publishes or asks to install) is denied at once, with
:data:`UNATTENDED` as the note, and graded as it then ends.

Callers: ``skillweave skills eval`` (``skillweave.cli.eval_run``) and the API's
``POST /v1/skills/{name}/evals`` (``skillweave.api.skill_evals``) on the direct engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypeVar

from pydantic import BaseModel

from skillweave.agent import AgentEvent, ApprovalDecision
from skillweave.engines import Backoff, RunRequest, RunResult, call_retrying
from skillweave.errors import AgentError, ConfigError
from skillweave.evals.batch import EvalBatch, EvalJob, job_request, job_run_id, plan_jobs
from skillweave.evals.effects import (
    BATCH_EFFECTS,
    FINISHED_EVAL_JOBS,
    GRADE_EVAL_JOB,
    PREPARE_EVAL_JOB,
    WRITE_EVAL_REPORT,
    BatchEffect,
)
from skillweave.evals.results import (
    BatchProgress,
    FinishedJobsInput,
    GradedJob,
    GradeJobInput,
    PrepareJobInput,
    ReportInput,
    ReportSummary,
)
from skillweave.evals.store import save_batch
from skillweave.storage import ArtifactRef

if TYPE_CHECKING:
    from skillweave.engines import DirectEngine

__all__ = ["UNATTENDED", "DirectEvals", "EvalRunner", "ProgressCallback", "check_batch_services"]

_In = TypeVar("_In", bound=BaseModel)
_Out = TypeVar("_Out", bound=BaseModel)
_log = logging.getLogger(__name__)

UNATTENDED: Final = (
    "evals are unattended: nobody is asked, so an eval job's approval is denied (leave the "
    "skill out of the eval agent's approvals.skills to let its scripts run)"
)
_APPROVER: Final = "skillweave evals"

_Ended = Literal["completed", "cancelled", "partial"]

ProgressCallback = Callable[[BatchProgress], None]
"""Told the batch's progress each time it changes."""


class EvalRunner(Protocol):
    """Runs eval batches: ``TemporalEvals`` (durable) or :class:`DirectEvals` (in-process)."""

    async def run(
        self, batch: EvalBatch, *, on_progress: ProgressCallback | None = None
    ) -> ReportSummary:
        """Run `batch` to its stored report (the jobs a stored grade marks finished are
        skipped), telling `on_progress` as it goes; the report's summary."""
        ...

    async def cancel(self, skill: str, batch_id: str) -> None:
        """Cancel the batch `batch_id` of `skill`: its runs in flight stop, and its report is
        written from the jobs graded so far (status ``cancelled``)."""
        ...


def check_batch_services(services: object) -> None:
    """Check that `services` have a method for every batch effect (named as it).

    Raises:
        ConfigError: one has none (the line names it).
    """
    missing = [
        effect.name
        for effect in BATCH_EFFECTS
        if not callable(getattr(services, effect.name, None))
    ]
    if missing:
        raise ConfigError(
            f"{type(services).__name__} does not implement the eval batch's "
            f"{', '.join(missing)}: every effect in skillweave.evals.effects needs a method"
        )


def _wire(model: _Out) -> _Out:
    """`model` after the JSON round-trip every activity input and result makes."""
    return type(model).model_validate_json(model.model_dump_json())


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class _Batch:
    """One batch running here: its task and its progress."""

    batch: EvalBatch
    progress: BatchProgress
    on_progress: ProgressCallback | None
    task: asyncio.Task[ReportSummary] | None = None
    runs: set[str] = field(default_factory=set)
    ungraded: list[str] = field(default_factory=list)

    def tell(self, **changes: object) -> None:
        """The progress with `changes` (and the runs in flight), told to the callback."""
        self.progress = self.progress.model_copy(
            update={**changes, "running": tuple(sorted(self.runs))}
        )
        if self.on_progress is not None:
            try:
                self.on_progress(self.progress)
            except Exception:  # a view that fails must not fail the batch
                _log.exception("an eval batch's progress callback failed")


class DirectEvals:
    """Runs eval batches in this process, on `engine` and `services` (see the module
    docstring).

    Args:
        engine: the direct engine the jobs' agent runs run on.
        services: the batch's side effects (``EvalServices``): a method per batch effect.
        backoff: how failed steps are retried; the Temporal engine's numbers
            (``workflow.activity_max_attempts``) unless given.

    Raises:
        ConfigError: `services` miss a batch effect's method (:func:`check_batch_services`).
    """

    def __init__(
        self, engine: DirectEngine, services: object, *, backoff: Backoff | None = None
    ) -> None:
        check_batch_services(services)
        self.engine = engine
        self.services = services
        attempts = engine.services.settings.workflow.activity_max_attempts
        self.backoff = backoff or Backoff(attempts=attempts)
        self._batches: dict[str, _Batch] = {}

    # --- what a caller asks ------------------------------------------------------------------

    async def run(
        self, batch: EvalBatch, *, on_progress: ProgressCallback | None = None
    ) -> ReportSummary:
        """Store `batch` (``evals.store.save_batch``: a resume reads it), then run it here to
        its stored report (see the module docstring).

        Raises:
            AgentError: the batch runs here already.
            asyncio.CancelledError: cancelled; the report was written first (``cancelled``).
        """
        if batch.batch_id in self._batches:
            raise AgentError(f"eval batch {batch.batch_id} runs in this process already")
        jobs = plan_jobs(batch)
        running = _Batch(
            batch=batch,
            progress=BatchProgress(batch_id=batch.batch_id, jobs=len(jobs)),
            on_progress=on_progress,
        )
        running.task = asyncio.current_task()
        self._batches[batch.batch_id] = running
        try:
            await save_batch(self.engine.services.store, batch)  # what a resume reads
            return await self._run(running)
        finally:
            del self._batches[batch.batch_id]

    async def cancel(self, skill: str, batch_id: str) -> None:
        """Cancel the batch `batch_id` of `skill` running here, and wait until its report is
        written.

        Raises:
            AgentError: no such batch runs in this process.
        """
        running = self._batches.get(batch_id)
        if running is None or running.batch.skill != skill or running.task is None:
            raise AgentError(f"no eval batch {batch_id} of {skill} runs in this process")
        running.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({running.task})

    def progress(self, batch_id: str) -> BatchProgress | None:
        """The progress of the batch `batch_id` running here (None: none runs here)."""
        running = self._batches.get(batch_id)
        return None if running is None else running.progress

    # --- the batch ---------------------------------------------------------------------------

    async def _call(self, effect: BatchEffect[_In, _Out], request: _In) -> _Out:
        """One step, as its activity would make it: ``services.<effect.name>``, the request and
        the result crossing the wire models, a failure retried by the shared rule."""
        method: Callable[[_In], Awaitable[_Out]] = getattr(self.services, effect.name)
        wired = _wire(request)
        result = await call_retrying(
            lambda: method(wired), backoff=self.backoff, name=lambda: effect.summary(wired)
        )
        return _wire(effect.output.model_validate(result))

    async def _run(self, running: _Batch) -> ReportSummary:
        batch = running.batch
        started = time.monotonic()
        finished = await self._call(
            FINISHED_EVAL_JOBS, FinishedJobsInput(skill=batch.skill, batch_id=batch.batch_id)
        )
        planned = plan_jobs(batch)
        graded = {grade.job.key: grade for grade in finished.grades}
        skipped = [graded[job.key] for job in planned if job.key in graded]
        running.tell(
            phase="running",
            skipped=len(skipped),
            finished=len(skipped),
            passed_verdicts=sum(grade.passed for grade in skipped),
            verdicts=sum(grade.verdicts for grade in skipped),
        )
        slots = asyncio.Semaphore(batch.concurrency)  # FIFO: jobs start in the plan's order
        tasks = [
            asyncio.create_task(self._job(running, job, slots), name=f"eval-{job.key}")
            for job in planned
            if job.key not in graded
        ]
        try:
            await asyncio.gather(*tasks)  # a job that fails is left ungraded, not raised
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            try:
                await self._report(running, "cancelled", started)
            except Exception:  # the cancellation is what the caller hears of
                _log.exception("the report of eval batch %s was not written", batch.batch_id)
            raise
        status: _Ended = "partial" if running.ungraded else "completed"
        return await self._report(running, status, started)

    async def _report(self, running: _Batch, status: _Ended, started: float) -> ReportSummary:
        """Write the report; shielded, so that a cancelled batch still has one."""
        running.tell(phase="reporting")
        request = ReportInput(
            skill=running.batch.skill,
            batch_id=running.batch.batch_id,
            status=status,
            finished_at=_now(),
            wall_seconds=round(time.monotonic() - started, 3),
        )
        writing = asyncio.ensure_future(self._call(WRITE_EVAL_REPORT, request))
        try:
            summary = await asyncio.shield(writing)
        except asyncio.CancelledError:
            # Cancelled again while it is written: let it finish, then go on being cancelled.
            with contextlib.suppress(Exception):
                await writing
            raise
        running.tell(phase="completed" if status == "completed" else "cancelled")
        return summary

    async def _job(self, running: _Batch, job: EvalJob, slots: asyncio.Semaphore) -> None:
        """One job: its inputs, its run, its grade, then the progress told. A step that fails
        for good leaves the job ungraded (the batch goes on, and ends ``partial``)."""
        try:
            async with slots:
                grade = await self._graded(running, job)
        except Exception as exc:
            _log.warning(
                "eval job %s of %s left ungraded: %s", job.key, running.batch.batch_id, exc
            )
            running.ungraded.append(job.key)
            running.tell()
            return
        progress = running.progress
        running.tell(
            finished=progress.finished + 1,
            passed_verdicts=progress.passed_verdicts + grade.passed,
            verdicts=progress.verdicts + grade.verdicts,
        )

    async def _graded(self, running: _Batch, job: EvalJob) -> GradedJob:
        """The job's steps: its inputs prepared, its run, its grade (the one stored, counted)."""
        batch = running.batch
        case = batch.case(job.eval_id)
        run_id = job_run_id(batch.batch_id, job, attempt=batch.attempt)
        inputs: tuple[ArtifactRef, ...] = ()
        if case.files:
            prepared = await self._call(
                PREPARE_EVAL_JOB,
                PrepareJobInput(
                    skill=batch.skill, version=batch.version, run_id=run_id, files=case.files
                ),
            )
            inputs = prepared.inputs
        request = job_request(batch, job, inputs=inputs, attempt=batch.attempt)
        running.runs.add(run_id)
        running.tell()
        try:
            started = time.monotonic()
            result = await self._agent_run(request)
            wall = time.monotonic() - started
        finally:
            running.runs.discard(run_id)
        return await self._call(
            GRADE_EVAL_JOB,
            GradeJobInput(
                batch_id=batch.batch_id,
                skill=batch.skill,
                job=job,
                result=result,
                wall_seconds=round(wall, 3),
                model=batch.model,
                grader=batch.grader,
            ),
        )

    async def _agent_run(self, request: RunRequest) -> RunResult:
        """The job's run, started, its approvals denied, to its result (how it ended: a run
        that fails is graded as such). Cancelled: the run is cancelled first.

        Raises:
            AgentError: the run could not start (its run id is taken).
        """
        run_id = await self.engine.start(request)
        denying = asyncio.create_task(self._deny_approvals(run_id), name=f"deny-{run_id}")
        try:
            return await self.engine.result(run_id)
        except BaseException:
            await self.engine.cancel(run_id)
            raise
        finally:
            denying.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await denying

    async def _deny_approvals(self, run_id: str) -> None:
        """Deny each approval the run asks for, at once (evals are unattended)."""
        decision = ApprovalDecision(approved=False, note=UNATTENDED, by=_APPROVER)
        async for item in self.engine.follow(run_id):
            if isinstance(item, AgentEvent) and item.kind == "approval_requested":
                # The run may end meanwhile: nothing to decide then.
                with contextlib.suppress(AgentError):
                    await _approve_when_waiting(self.engine, run_id, decision)


async def _approve_when_waiting(
    engine: DirectEngine, run_id: str, decision: ApprovalDecision
) -> None:
    """Decide the approval run `run_id` asks for once it waits on it (its event comes just
    before the runtime waits)."""
    for _ in range(100):
        try:
            await engine.approve(run_id, decision)
            return
        except AgentError:
            if engine.state(run_id).finished:
                return
            await asyncio.sleep(0.01)
