"""The eval batch on Temporal, over fakes: its activities (``activities.evals``) in Temporal's
activity environment, how a child run's end becomes a result, what the UI shows of a batch,
and ``EvalBatchWorkflow`` itself on a dev server with fake eval services and a stand-in
``AgentWorkflow`` (the real one, with real sandboxes and the scripted model:
tests/integration/temporal/test_eval_batch*.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio import activity, workflow
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError, CancelledError, TerminatedError
from temporalio.testing import ActivityEnvironment, WorkflowEnvironment
from temporalio.worker import Replayer, Worker

from activities.evals import EvalActivities
from skillweave.agent.effect_models import ActivityTimeouts, LimitsInput
from skillweave.engines.base import RunResult
from skillweave.engines.contract import WORKFLOW_NAME, AgentWorkflowInput, workflow_id
from skillweave.errors import ConfigError, StorageError
from skillweave.evals import BATCH_EFFECTS, EvalBatch, EvalCase, EvalJob, job_run_id, plan_jobs
from skillweave.evals.effects import EVAL_BATCH_WORKFLOW, GRADE_EVAL_JOB, batch_workflow_id
from skillweave.evals.results import (
    BatchProgress,
    FinishedJobs,
    FinishedJobsInput,
    GradedJob,
    GradeJobInput,
    JobGrade,
    PreparedJob,
    PrepareJobInput,
    ReportInput,
    ReportSummary,
    Verdict,
)
from skillweave.evals.suite import EvalSuiteError
from skillweave.evals.temporal import batch_details, batch_summary
from skillweave.llm.messages import Usage
from skillweave.storage import ArtifactRef
from skillweave.storage.local import LocalArtifactStore
from workflows.evals import EvalBatchWorkflow, _ended
from workflows.worker import sandbox_runner

VERSION = "a" * 64
REF = ArtifactRef(key="evals/x/report.json", size=1, sha256="0" * 64)


def batch_of(**changes: Any) -> EvalBatch:
    fields: dict[str, Any] = {
        "batch_id": f"eval-{uuid.uuid4().hex[:10]}",
        "skill": "unit-converter",
        "version": VERSION,
        "baseline": True,
        "repeat": 2,
        "concurrency": 3,
        "cases": (
            EvalCase(id="1", prompt="Convert 5 km to miles", files=("evals/files/a.csv",)),
            EvalCase(id="2", prompt="Convert 3 kg to pounds"),
        ),
        "created_at": "2026-12-07T04:00:00Z",
        "store_id": "0123456789abcdef",
    }
    return EvalBatch(**(fields | changes))


def grade_of(job: EvalJob, run_id: str, *, passed: bool = True) -> JobGrade:
    return JobGrade(
        job=job,
        run_id=run_id,
        status="completed",
        verdicts=(Verdict(text="the answer holds it", passed=passed, by="check"),),
    )


@dataclass
class FakeEvalServices:
    """The four batch effects, recording what they were asked."""

    stored: list[JobGrade] = field(default_factory=list)
    prepared: list[PrepareJobInput] = field(default_factory=list)
    graded: list[GradeJobInput] = field(default_factory=list)
    reports: list[ReportInput] = field(default_factory=list)
    fail_grading: set[str] = field(default_factory=set)

    async def finished_eval_jobs(self, request: FinishedJobsInput) -> FinishedJobs:
        return FinishedJobs(grades=tuple(GradedJob.of(grade) for grade in self.stored))

    async def prepare_eval_job(self, request: PrepareJobInput) -> PreparedJob:
        self.prepared.append(request)
        ref = ArtifactRef(key=f"runs/{request.run_id}/inputs/a.csv", size=1, sha256="1" * 64)
        return PreparedJob(inputs=(ref,))

    async def grade_eval_job(self, request: GradeJobInput) -> GradedJob:
        if request.job.key in self.fail_grading:
            raise EvalSuiteError("x/evals/evals.json", "broken for good")
        self.graded.append(request)
        grade = grade_of(
            request.job, request.result.run_id, passed=request.result.status == "completed"
        )
        self.stored.append(grade)
        return GradedJob.of(grade)

    async def write_eval_report(self, request: ReportInput) -> ReportSummary:
        self.reports.append(request)
        return ReportSummary(
            batch_id=request.batch_id,
            skill=request.skill,
            status=request.status,
            jobs=len(self.stored),
            report=REF,
            markdown=REF,
            html=REF,
        )


# --- the activities --------------------------------------------------------------------------


def test_one_activity_per_batch_effect_named_as_it() -> None:
    definitions = EvalActivities(FakeEvalServices()).definitions()
    names = [activity._Definition.must_from_callable(d).name for d in definitions]
    assert names == [effect.name for effect in BATCH_EFFECTS]


def test_services_without_a_method_of_an_effect_are_refused_when_built() -> None:
    class Partial:
        async def finished_eval_jobs(self, request: FinishedJobsInput) -> FinishedJobs:
            return FinishedJobs()

    with pytest.raises(ConfigError, match="prepare_eval_job, grade_eval_job, write_eval_report"):
        EvalActivities(Partial())


async def test_an_activity_calls_the_services_method_and_maps_errors_once() -> None:
    services = FakeEvalServices()
    activities = EvalActivities(services)
    job = EvalJob(eval_id="2", variant="skill", repeat=1)
    request = GradeJobInput(
        batch_id="eval-x",
        skill="unit-converter",
        job=job,
        result=RunResult(run_id="eval-x-e2-skill-r1", status="completed"),
        wall_seconds=1.5,
    )
    grade = await ActivityEnvironment().run(activities.definition(GRADE_EVAL_JOB), request)
    assert grade == GradedJob.of(services.stored[0])
    assert services.graded == [request]

    services.fail_grading.add(job.key)
    with pytest.raises(ApplicationError) as raised:
        await ActivityEnvironment().run(activities.definition(GRADE_EVAL_JOB), request)
    # The one mapping (activities.failures): a skillweave error is not tried again.
    assert raised.value.type == "EvalSuiteError"
    assert raised.value.non_retryable

    async def store_down(request: GradeJobInput) -> GradedJob:
        raise StorageError("the store is down")

    services.grade_eval_job = store_down  # type: ignore[method-assign]
    with pytest.raises(ApplicationError) as raised:
        await ActivityEnvironment().run(activities.definition(GRADE_EVAL_JOB), request)
    assert not raised.value.non_retryable


async def test_grading_heartbeats_while_it_runs() -> None:
    beats: list[object] = []

    class Slow(FakeEvalServices):
        async def grade_eval_job(self, request: GradeJobInput) -> GradedJob:
            await asyncio.sleep(0.35)
            return GradedJob.of(grade_of(request.job, request.result.run_id))

    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)
    definition = EvalActivities(Slow(), heartbeat_seconds=0.1).definition(GRADE_EVAL_JOB)
    job = EvalJob(eval_id="1", variant="skill", repeat=1)
    await env.run(
        definition,
        GradeJobInput(
            batch_id="eval-x",
            skill="s",
            job=job,
            result=RunResult(run_id="r", status="completed"),
            wall_seconds=0,
        ),
    )
    assert len(beats) >= 2


# --- a child run's end -----------------------------------------------------------------------


def test_a_child_run_that_failed_or_ran_out_of_budget_is_graded_on_the_result_it_carries() -> None:
    carried = RunResult(run_id="r", status="budget_exhausted", turns=7, usage=Usage(input_tokens=9))
    failure = ApplicationError(
        "out of turns", carried.model_dump(mode="json"), type="BudgetExhausted"
    )
    assert _ended("r", failure) == carried


def test_any_other_end_of_a_child_run_is_a_failed_or_cancelled_result_saying_why() -> None:
    assert _ended("r", CancelledError("x")).status == "cancelled"
    terminated = _ended("r", TerminatedError("by ops"))
    assert (terminated.status, terminated.reason) == ("failed", "terminated: by ops")
    other = _ended("r", ApplicationError("boom", type="ToolFailure"))
    assert (other.status, other.reason) == ("failed", "ToolFailure: boom")
    assert _ended("r", ApplicationError("no details", type="RunFailed")).status == "failed"


# --- what the UI shows of a batch --------------------------------------------------------------


def test_the_ui_summary_and_details_of_a_batch() -> None:
    batch = batch_of(model="scripted:[x](http://evil)", grader=None)
    assert batch_summary(batch) == "eval unit-converter: 2 evals × 2 variants × 2"
    assert (
        batch_summary(batch_of(baseline=False, repeat=1))
        == "eval unit-converter: 2 evals × 1 variant"
    )
    details = batch_details(batch)
    assert f"`{batch.batch_id}`" in details
    assert "8 jobs (skill, baseline; 2 repeats), 3 at a time" in details
    assert f"skillweave skills eval unit-converter --resume {batch.batch_id}" in details
    assert f"skillweave skills eval unit-converter --cancel {batch.batch_id}" in details
    assert r"scripted:\[x\](http://evil)" in details  # escaped: never a link


# --- the workflow, on a dev server -----------------------------------------------------------


@dataclass
class Children:
    """What the stand-in ``AgentWorkflow``'s runs did, seen from this process."""

    started: list[AgentWorkflowInput] = field(default_factory=list)
    in_flight: int = 0
    most: int = 0


CHILDREN = Children()


@activity.defn(name="stand_in_run")
async def stand_in_run(start: AgentWorkflowInput) -> RunResult:
    CHILDREN.started.append(start)
    CHILDREN.in_flight += 1
    CHILDREN.most = max(CHILDREN.most, CHILDREN.in_flight)
    try:
        await asyncio.sleep(0.2)
    finally:
        CHILDREN.in_flight -= 1
    request = start.request
    if "pounds" in request.task and request.agent.skills == ():
        return RunResult(run_id=request.run_id, status="failed", reason="no answer", turns=3)
    return RunResult(run_id=request.run_id, status="completed", answer="3.1 miles", turns=2)


@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
class StandInAgentWorkflow:
    """Plays a run: an activity, then the way ``AgentWorkflow`` ends (a failed run fails the
    workflow with ``RunFailed``, its result in the details); a task saying "block" waits until
    cancelled."""

    @workflow.run
    async def run(self, start: AgentWorkflowInput) -> RunResult:
        if "block" in start.request.task:
            await workflow.wait_condition(lambda: False)
        result = await workflow.execute_activity(
            stand_in_run, start, start_to_close_timeout=timedelta(seconds=30)
        )
        if result.status == "failed":
            raise ApplicationError(
                "no answer", result.model_dump(mode="json"), type="RunFailed", non_retryable=True
            )
        return result


@activity.defn(name="run_limits")
async def run_limits(request: LimitsInput) -> ActivityTimeouts:
    return ActivityTimeouts(max_attempts=2, heartbeat_seconds=5)


@pytest.fixture(autouse=True)
def fresh_children() -> None:
    CHILDREN.__init__()  # type: ignore[misc]


@pytest_asyncio.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    from tests.integration.temporal.harness import start_dev_server

    env: WorkflowEnvironment = await start_dev_server(LocalArtifactStore(tmp_path / "store"))
    try:
        yield env.client
    finally:
        await env.shutdown()


@contextlib.asynccontextmanager
async def worker(client: Client, services: FakeEvalServices) -> AsyncIterator[str]:
    task_queue = f"tq-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[EvalBatchWorkflow, StandInAgentWorkflow],
        activities=[
            *EvalActivities(services, heartbeat_seconds=0.5).definitions(),
            run_limits,
            stand_in_run,
        ],
        workflow_runner=sandbox_runner(),
    ):
        yield task_queue


async def current_details(handle: WorkflowHandle[Any, Any]) -> str:
    """What the Temporal UI shows as the workflow's current details."""
    metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    return metadata.current_details


async def run_batch(client: Client, task_queue: str, batch: EvalBatch) -> ReportSummary:
    return await client.execute_workflow(
        EVAL_BATCH_WORKFLOW,
        batch,
        id=batch_workflow_id(batch.batch_id),
        task_queue=task_queue,
        result_type=ReportSummary,
    )


@pytest.mark.slow
async def test_a_batch_runs_each_job_as_a_child_at_most_concurrency_at_once_then_reports(
    client: Client,
) -> None:
    services = FakeEvalServices()
    batch = batch_of()
    async with worker(client, services) as task_queue:
        summary = await run_batch(client, task_queue, batch)
        handle = client.get_workflow_handle(batch_workflow_id(batch.batch_id))
        progress = await handle.query("progress", result_type=BatchProgress)
        history = await handle.fetch_history()
        details = await current_details(handle)

    # Deterministic: its history replays on the same code, in the sandbox.
    await Replayer(
        workflows=[EvalBatchWorkflow],
        workflow_runner=sandbox_runner(),
        data_converter=client.data_converter,
    ).replay_workflow(history)
    jobs = plan_jobs(batch)
    assert summary.status == "completed"
    # One child per job, under the job's run id, with the job's agent and task.
    started = {start.request.run_id: start.request for start in CHILDREN.started}
    assert sorted(started) == sorted(job_run_id(batch.batch_id, job) for job in jobs)
    baseline = started[
        job_run_id(batch.batch_id, EvalJob(eval_id="1", variant="baseline", repeat=1))
    ]
    assert baseline.agent.skills == ()
    assert baseline.task == "Convert 5 km to miles"
    # At most `concurrency` at once, and the bound was reached.
    assert CHILDREN.most == batch.concurrency
    # Only the eval with files is prepared, and its run gets them as inputs.
    assert sorted(p.run_id for p in services.prepared) == sorted(
        job_run_id(batch.batch_id, job) for job in jobs if job.eval_id == "1"
    )
    assert all(started[p.run_id].inputs for p in services.prepared)
    # Every job graded once, a failed run on the result its failure carried.
    assert sorted(g.job.key for g in services.graded) == sorted(job.key for job in jobs)
    failed = [g.result for g in services.graded if g.result.status != "completed"]
    assert [(r.status, r.turns) for r in failed] == [("failed", 3)] * 2
    assert all(g.wall_seconds > 0 for g in services.graded)
    [report] = services.reports
    assert (report.status, report.skill, report.batch_id) == (
        "completed",
        batch.skill,
        batch.batch_id,
    )
    assert progress == BatchProgress(
        batch_id=batch.batch_id,
        jobs=8,
        finished=8,
        passed_verdicts=6,
        verdicts=8,
        phase="completed",
    )
    # What the UI shows as it goes (here, at the end).
    assert details.startswith("**completed** · 8 of 8 jobs finished · 0 running")
    assert "**Pass rate so far:** 75% (6 of 8 verdicts)" in details


@pytest.mark.slow
async def test_a_resumed_batch_skips_its_graded_jobs_and_runs_the_others_under_fresh_ids(
    client: Client,
) -> None:
    batch = batch_of(attempt=1)
    jobs = plan_jobs(batch)
    before = [grade_of(job, job_run_id(batch.batch_id, job)) for job in jobs[:5]]
    services = FakeEvalServices(stored=list(before))
    async with worker(client, services) as task_queue:
        summary = await run_batch(client, task_queue, batch)
        handle = client.get_workflow_handle(batch_workflow_id(batch.batch_id))
        progress = await handle.query("progress", result_type=BatchProgress)

    assert summary.status == "completed"
    assert sorted(s.request.run_id for s in CHILDREN.started) == sorted(
        job_run_id(batch.batch_id, job, attempt=1) for job in jobs[5:]
    )
    assert (progress.finished, progress.skipped) == (8, 5)


@pytest.mark.slow
async def test_a_job_that_cannot_be_graded_leaves_the_batch_partial(client: Client) -> None:
    batch = batch_of(baseline=False, repeat=1)
    services = FakeEvalServices(fail_grading={"e2-skill-r1"})
    async with worker(client, services) as task_queue:
        summary = await run_batch(client, task_queue, batch)
        details = await current_details(
            client.get_workflow_handle(batch_workflow_id(batch.batch_id))
        )
    assert summary.status == "partial"
    assert [g.job.key for g in services.graded] == ["e1-skill-r1"]
    assert "**Not graded:** 1 job (a resume runs them)" in details
    assert "**Last error:** grade\\_eval\\_job of e2-skill-r1 failed: EvalSuiteError" in details


@pytest.mark.slow
async def test_a_cancelled_batch_cancels_its_runs_writes_its_report_and_ends_cancelled(
    client: Client,
) -> None:
    batch = batch_of(
        baseline=False,
        repeat=1,
        concurrency=2,
        cases=(EvalCase(id="1", prompt="Convert 1 m"), EvalCase(id="2", prompt="block here")),
    )
    services = FakeEvalServices()
    async with worker(client, services) as task_queue:
        handle = await client.start_workflow(
            EVAL_BATCH_WORKFLOW, batch, id=batch_workflow_id(batch.batch_id), task_queue=task_queue
        )
        blocked = client.get_workflow_handle(
            workflow_id(job_run_id(batch.batch_id, EvalJob(eval_id="2", variant="skill", repeat=1)))
        )
        for _ in range(100):
            progress = await handle.query("progress", result_type=BatchProgress)
            if progress.finished == 1 and progress.running:
                break
            await asyncio.sleep(0.1)
        assert progress.running == (blocked.id.removeprefix("skillweave-run-"),)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError) as ended:
            await handle.result()
        assert isinstance(ended.value.cause, CancelledError)
        with pytest.raises(WorkflowFailureError) as child:
            await blocked.result()
        assert isinstance(child.value.cause, CancelledError)

    [report] = services.reports
    assert report.status == "cancelled"
    assert [g.job.key for g in services.graded] == ["e1-skill-r1"]
