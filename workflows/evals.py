"""`EvalBatchWorkflow`: one eval batch as a durable Temporal workflow.

A batch (``skillweave.evals.batch``) runs every job of :func:`~skillweave.evals.batch.plan_jobs`:
each is one agent run, started as a **child** ``AgentWorkflow`` on the batch's own task queue
with the id, input, UI summary and search attributes any run gets
(``skillweave.engines.run_start``), then graded. Its own side effects are the four of
``skillweave.evals.effects``, scheduled here from their descriptors (:meth:`_call`), with the
worker's limits (asked once with the agent's local activity ``run_limits``, as a run asks) and
the one retry policy (``workflows.runtime.retry_policy``). In order:

1. ``finished_eval_jobs``: the grades an earlier attempt stored; those jobs are skipped (and
   counted as ``skipped``), never run again;
2. every other job, at most ``batch.concurrency`` at once: ``prepare_eval_job`` (when its eval
   has files: they become the run's inputs) → the child run, under
   ``job_request(batch, job, attempt=batch.attempt)`` → its :class:`RunResult` (a child that
   failed with ``RunFailed``/``BudgetExhausted`` carries it in its failure; any other failure
   is a failed result with the reason) → ``grade_eval_job`` with the run's wall seconds
   (workflow time, start to end), which stores the grade and answers it counted → the
   progress;
3. ``write_eval_report``: status ``completed``, or ``partial`` when a job could not be
   prepared or graded for good (it has no grade: a resume runs it again).

**Crashes.** The workflow's history holds every child it started and every grade it asked
for, so a worker killed mid-batch changes nothing: the next worker replays it, the children
run on, and no job is started twice. **Resume** (``TemporalEvals.resume``: the batch again,
``attempt + 1``, same workflow id) after a termination or a failure skips every graded job; an
ungraded one runs under a fresh run id (``…-a{attempt}``).

**Cancel** (``TemporalEvals.cancel``, the UI's Cancel, ``temporal workflow cancel``): the
running children are cancelled (and waited for), the report is written with status
``cancelled`` from the jobs graded so far, and the workflow then ends **cancelled**, which is
what the UI lists and what a client sees; the report stays stored for ``--show`` and the API.

For people: the ``progress`` query (:class:`~skillweave.evals.results.BatchProgress`),
``set_current_details`` (markdown: jobs finished of all, pass rate so far, runs in flight,
the last error) on every change, a ``summary`` on every activity; the static summary and
details are the client's (``skillweave.evals.temporal``).

Deterministic: only pure modules, imported through ``imports_passed_through``; the clock is
workflow time. The recorded history holds, per job, a child and at most two activities, whose
inputs and results are small whatever the runs and the grader write: a grade is carried as
counts (``GradedJob``; the grade with its evidence is in the store) and the grading step
names its eval by id (the grader reads the case from the stored batch). 2,000 jobs
(``MAX_JOBS``) stay far under Temporal's history limits, so no continue-as-new.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import datetime, timedelta
from typing import Any, Final, Literal, TypeVar

from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    TerminatedError,
    WorkflowAlreadyStartedError,
    is_cancelled_exception,
)
from temporalio.exceptions import TimeoutError as WorkflowTimeoutError

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel

    from skillweave.agent.effect_models import ActivityTimeouts, LimitsInput
    from skillweave.agent.effects import RUN_LIMITS
    from skillweave.agent.rendering import markdown_text, one_line
    from skillweave.engines.base import RunRequest, RunResult
    from skillweave.engines.contract import FAILURE_TYPES, WORKFLOW_NAME
    from skillweave.engines.run_start import run_start
    from skillweave.evals.batch import EvalBatch, EvalJob, job_request, job_run_id, plan_jobs
    from skillweave.evals.effects import (
        EVAL_BATCH_WORKFLOW,
        FINISHED_EVAL_JOBS,
        GRADE_EVAL_JOB,
        PREPARE_EVAL_JOB,
        QUERY_PROGRESS,
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
    from skillweave.storage.base import ArtifactRef
    from skillweave.terminal import counted
    from workflows.runtime import retry_policy

__all__ = ["EvalBatchWorkflow"]

_In = TypeVar("_In", bound=BaseModel)
_Out = TypeVar("_Out", bound=BaseModel)

_SUMMARY_CHARS: Final = 200
_RUNNING_SHOWN: Final = 10
_Status = Literal["completed", "cancelled", "partial"]
_Phase = Literal["starting", "running", "reporting", "completed", "cancelled"]


class _JobNotGraded(Exception):
    """A job's step failed for good: the job has no grade (the batch is ``partial``)."""


@workflow.defn(name=EVAL_BATCH_WORKFLOW)
class EvalBatchWorkflow:
    """One eval batch (see the module docstring)."""

    @workflow.init
    def __init__(self, batch: EvalBatch) -> None:
        self._batch = batch
        self._jobs = plan_jobs(batch)
        self._limits = ActivityTimeouts()
        self._grades: dict[str, GradedJob] = {}
        self._skipped = 0
        self._running: dict[str, str] = {}  # job key → run id, in the order started
        self._slots = 0  # jobs holding a concurrency slot (set before their task runs)
        self._ungraded: list[str] = []
        self._last_error: str | None = None
        self._cancelling = False
        self._phase: _Phase = "starting"

    # --- the batch -------------------------------------------------------------------------

    @workflow.run
    async def run(self, batch: EvalBatch) -> ReportSummary:
        started = workflow.now()
        tasks: list[asyncio.Task[None]] = []
        try:
            self._limits = await self._worker_limits()
            finished = await self._call(
                FINISHED_EVAL_JOBS, FinishedJobsInput(skill=batch.skill, batch_id=batch.batch_id)
            )
            planned = {job.key for job in self._jobs}
            for grade in finished.grades:
                if grade.job.key in planned:  # a grade of no job of this batch counts for nothing
                    self._grades[grade.job.key] = grade
            self._skipped = len(self._grades)
            self._show("running")
            for job in self._jobs:
                if job.key in self._grades:
                    continue
                await workflow.wait_condition(lambda: self._slots < batch.concurrency)
                self._slots += 1
                tasks.append(asyncio.create_task(self._job(job)))
            # Not asyncio.gather: a cancelled gather waits for its tasks before this task
            # hears of it, and the jobs must know the batch is cancelled when theirs end.
            await workflow.wait_condition(lambda: all(task.done() for task in tasks))
            status: _Status = "partial" if self._ungraded else "completed"
            return await self._report(status, started)
        except BaseException as exc:
            if not is_cancelled_exception(exc):
                raise
            # Cancelled from outside (wherever the batch was: a step of its own or waiting on
            # its jobs): stop every job (their children are cancelled and waited for), keep
            # what was graded, and end cancelled.
            self._cancelling = True
            for task in tasks:
                task.cancel()
            await _all(tasks)
            await self._report("cancelled", started)
            raise asyncio.CancelledError() from None

    async def _job(self, job: EvalJob) -> None:
        """Run, then grade, one job (its slot is freed at the end)."""
        batch = self._batch
        try:
            case = batch.case(job.eval_id)
            inputs: tuple[ArtifactRef, ...] = ()
            if case.files:
                prepared = await self._step(
                    PREPARE_EVAL_JOB,
                    PrepareJobInput(
                        skill=batch.skill,
                        version=batch.version,
                        run_id=job_run_id(batch.batch_id, job, attempt=batch.attempt),
                        files=case.files,
                    ),
                    job=job,
                )
                inputs = prepared.inputs
            request = job_request(batch, job, inputs=inputs, attempt=batch.attempt)
            began = workflow.now()
            self._running[job.key] = request.run_id
            self._show()
            try:
                result = await self._child(request)
            finally:
                self._running.pop(job.key, None)
            seconds = max(0.0, (workflow.now() - began).total_seconds())
            grade = await self._step(
                GRADE_EVAL_JOB,
                GradeJobInput(
                    batch_id=batch.batch_id,
                    skill=batch.skill,
                    job=job,
                    result=result,
                    wall_seconds=seconds,
                    model=batch.model,
                    grader=batch.grader,
                ),
                job=job,
            )
            self._grades[job.key] = grade
        except _JobNotGraded:
            self._ungraded.append(job.key)
        finally:
            self._slots -= 1
        # Not in `finally`: a workflow evicted from the cache closes its coroutines outside
        # the workflow's event loop, where no workflow call may be made.
        self._show()

    async def _child(self, request: RunRequest) -> RunResult:
        """The job's run as a child ``AgentWorkflow``, and how it ended. (Its catalog mode is
        its agent's: the client put the engine's there, ``skillweave.evals.temporal``.)

        Raises:
            asyncio.CancelledError: the batch was cancelled (the child is cancelled with it).
            _JobNotGraded: the child could not start (its run id is taken).
        """
        start = run_start(request)
        try:
            handle = await workflow.start_child_workflow(
                WORKFLOW_NAME,
                start.input,
                id=start.workflow_id,
                task_queue=workflow.info().task_queue,
                result_type=RunResult,
                # A run id names its artifacts (runs/{run_id}/…): never reuse one.
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                static_summary=start.summary,
                static_details=start.details,
                search_attributes=start.search_attributes,
            )
        except WorkflowAlreadyStartedError:
            self._failed(f"run {request.run_id} exists already: not started again")
            raise _JobNotGraded() from None
        try:
            return await handle
        except ChildWorkflowError as exc:
            if is_cancelled_exception(exc) and self._cancelling:
                raise asyncio.CancelledError() from exc
            return _ended(request.run_id, exc.cause)

    # --- side effects ----------------------------------------------------------------------

    async def _worker_limits(self) -> ActivityTimeouts:
        """The limits this worker's activities run under, asked as a run asks (the agent's
        local activity ``run_limits``, under the contract's defaults)."""
        request = LimitsInput(run_id=self._batch.batch_id)
        defaults = ActivityTimeouts()
        return await workflow.execute_local_activity(
            RUN_LIMITS.name,
            request,
            result_type=ActivityTimeouts,
            start_to_close_timeout=timedelta(seconds=RUN_LIMITS.seconds(request, defaults)),
            retry_policy=retry_policy(defaults),
            summary="ask the worker for its limits",
        )

    def _call(self, effect: BatchEffect[_In, _Out], request: _In) -> Awaitable[_Out]:
        """Schedule the activity `effect` describes, with `request`, under the worker's limits
        (its timeout, its heartbeat timeout if it heartbeats, the one retry policy)."""
        limits = self._limits
        options: dict[str, Any] = {
            "result_type": effect.output,
            "start_to_close_timeout": timedelta(
                seconds=getattr(limits, f"{effect.timeout}_seconds")
            ),
            "retry_policy": retry_policy(limits),
            "summary": effect.summary(request)[:_SUMMARY_CHARS],
        }
        if effect.heartbeat:
            options["heartbeat_timeout"] = timedelta(seconds=limits.heartbeat_seconds)
        return workflow.execute_activity(effect.name, request, **options)

    async def _step(self, effect: BatchEffect[_In, _Out], request: _In, *, job: EvalJob) -> _Out:
        """A job's step; one that failed for good leaves the job ungraded (said in the
        details), and the batch goes on.

        Raises:
            _JobNotGraded: the step failed for good.
        """
        try:
            return await self._call(effect, request)
        except ActivityError as exc:
            if is_cancelled_exception(exc) and self._cancelling:
                raise asyncio.CancelledError() from exc
            self._failed(f"{effect.name} of {job.key} failed: {_reason(exc.cause or exc)}")
            raise _JobNotGraded() from exc

    async def _report(self, status: _Status, started: datetime) -> ReportSummary:
        self._show("reporting")
        summary = await self._call(
            WRITE_EVAL_REPORT,
            ReportInput(
                skill=self._batch.skill,
                batch_id=self._batch.batch_id,
                status=status,
                finished_at=workflow.now().isoformat().replace("+00:00", "Z"),
                wall_seconds=max(0.0, (workflow.now() - started).total_seconds()),
            ),
        )
        self._show("cancelled" if status == "cancelled" else "completed")
        return summary

    # --- progress and the UI ---------------------------------------------------------------

    def _failed(self, line: str) -> None:
        self._last_error = line
        workflow.logger.warning("eval batch %s: %s", self._batch.batch_id, line)

    def _show(self, phase: _Phase | None = None) -> None:
        if phase is not None:
            self._phase = phase
        workflow.set_current_details(self._details())

    def _details(self) -> str:
        progress = self.progress()
        lines = [
            f"**{progress.phase}** · {progress.finished} of {counted(progress.jobs, 'job')} "
            f"finished"
            + (f" ({progress.skipped} before a resume, not run again)" if progress.skipped else "")
            + f" · {len(progress.running)} running",
        ]
        if progress.verdicts:
            rate = progress.passed_verdicts / progress.verdicts
            lines.append(
                f"**Pass rate so far:** {rate:.0%} "
                f"({progress.passed_verdicts} of {counted(progress.verdicts, 'verdict')})"
            )
        if progress.running:
            shown = ", ".join(f"`{run_id}`" for run_id in progress.running[:_RUNNING_SHOWN])
            more = len(progress.running) - _RUNNING_SHOWN
            lines.append(f"**Running:** {shown}" + (f" and {more} more" if more > 0 else ""))
        if self._ungraded:
            lines.append(
                f"**Not graded:** {counted(len(self._ungraded), 'job')} (a resume runs them)"
            )
        if self._last_error:
            # Escaped: an error may carry a model server's or a script's words.
            lines.append(f"**Last error:** {markdown_text(one_line(self._last_error))}")
        return "\n\n".join(lines)

    @workflow.query(name=QUERY_PROGRESS)
    def progress(self) -> BatchProgress:
        """Where the batch is: jobs finished (graded, those of an earlier attempt included)
        and running, the verdicts so far."""
        grades = self._grades.values()
        return BatchProgress(
            batch_id=self._batch.batch_id,
            jobs=len(self._jobs),
            finished=len(self._grades),
            running=tuple(self._running.values()),
            skipped=self._skipped,
            passed_verdicts=sum(grade.passed for grade in grades),
            verdicts=sum(grade.verdicts for grade in grades),
            phase=self._phase,
        )


async def _all(tasks: list[asyncio.Task[None]]) -> None:
    """Wait for every task (each ends on its own: a job catches its failures)."""
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)


def _ended(run_id: str, cause: BaseException | None) -> RunResult:
    """How a child run that did not return ended: the result its failure carries (a run that
    failed or ran out of budget), else a failed (or cancelled) result with the reason."""
    if isinstance(cause, ApplicationError) and cause.type in FAILURE_TYPES and cause.details:
        return RunResult.model_validate(cause.details[0])
    if cause is not None and is_cancelled_exception(cause):
        return RunResult(run_id=run_id, status="cancelled", reason="the run was cancelled")
    if isinstance(cause, TerminatedError):
        reason = f"terminated: {cause.message}"
    elif isinstance(cause, WorkflowTimeoutError):
        reason = "the run's workflow timed out"
    else:
        reason = _reason(cause)
    return RunResult(run_id=run_id, status="failed", reason=reason)


def _reason(cause: BaseException | None) -> str:
    if cause is None:
        return "failed"
    if isinstance(cause, ApplicationError):
        return f"{cause.type or 'ApplicationError'}: {cause.message}"
    return f"{type(cause).__name__}: {one_line(str(cause))}"
