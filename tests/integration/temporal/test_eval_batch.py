"""An eval batch on Temporal, on the real stack: the ``EvalBatchWorkflow`` and the real
``AgentWorkflow`` children on a worker (``build_worker``: the same one ``skillweave worker``
runs), real sandboxes, the real ``EvalServices`` over the session's store, and the scripted
model playing each eval's task, with the skill and without it.

A batch of 2 evals × (skill, baseline) × 2 repeats completes with one child run per job, each
graded and stored, and its report stored; no more than ``concurrency`` children run at once;
a batch cancelled mid-way writes its report ``cancelled``; a batch terminated mid-way and
resumed skips the jobs it had graded. The worker killed mid-batch:
test_eval_batch_crash.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime

import pytest
from temporalio.client import Client, WorkflowExecution

from skillweave.engines.contract import WORKFLOW_NAME, workflow_id
from skillweave.engines.run_start import summary_of
from skillweave.engines.temporal import TemporalEngine
from skillweave.errors import AgentError
from skillweave.evals import EvalBatch, EvalCase, job_request, job_run_id, plan_jobs
from skillweave.evals.effects import batch_workflow_id
from skillweave.evals.results import BatchProgress, ReportSummary
from skillweave.evals.store import load_batch, load_grades, read_report
from skillweave.evals.suite import AnswerContains, FileContains, ScriptNotRun, ScriptRan
from skillweave.evals.temporal import TemporalEvals
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, Stack, open_engine, unique

pytestmark = pytest.mark.asyncio(loop_scope="session")


def playbook(*, think_seconds: float = 0) -> str:
    """The agent of every job: with ``test-tools`` offered it runs the eval's script and
    answers ``Done``; without it, it answers that it cannot. `think_seconds`: each model call
    of a run with the skill takes that long (a job stays in flight)."""
    delay = f"delay_seconds: {think_seconds}, " if think_seconds else ""
    return f"""
cases:
  - when: {{task: 'Upper-case', offered: [{TOOLS}]}}
    turns:
      - {{{delay}tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]}}
      - tool_calls:
          - name: run_skill_script
            arguments: {{skill: {TOOLS}, script: scripts/upper.py,
                        inputs: ["{{{{artifact:notes.md}}}}"]}}
      - say: "Done: {{{{artifact:upper.txt}}}}"
  - when: {{task: 'Echo', offered: [{TOOLS}]}}
    turns:
      - {{{delay}tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]}}
      - tool_calls:
          - {{name: run_skill_script, arguments: {{skill: {TOOLS}, script: scripts/echo.py,
             args: [hello]}}}}
      - say: "Done: echoed hello"
  - when: {{}}
    turns:
      - say: "I cannot do that here."
"""


CASES = (
    EvalCase(
        id="1",
        prompt="Upper-case the notes I gave you.",
        files=("references/notes.md",),
        checks=(
            FileContains(path="upper.txt", text="THE SECRET WORD"),
            ScriptRan(script="scripts/upper.py"),
        ),
    ),
    EvalCase(
        id="2",
        prompt="Echo hello with the test tools.",
        checks=(AnswerContains(text="Done"), ScriptNotRun(script="scripts/upper.py")),
    ),
)


def batch_of(stack: Stack, **changes: object) -> EvalBatch:
    fields: dict[str, object] = {
        "batch_id": unique("eval-batch"),
        "skill": TOOLS,
        "version": stack.registry.get(TOOLS).version,
        "baseline": True,
        "repeat": 2,
        "concurrency": 2,
        "cases": CASES,
        "created_at": "2026-12-07T04:00:00Z",
    }
    return EvalBatch.model_validate(fields | changes)


@asynccontextmanager
async def evals_on(stack: Stack, script: str) -> AsyncIterator[TemporalEvals]:
    """Eval batches on a worker of their own (a fresh task queue) whose model plays `script`."""
    async with open_engine("temporal", stack, script) as harness:
        engine = harness.engine
        assert isinstance(engine, TemporalEngine)
        yield TemporalEvals(engine, poll_seconds=0.1)


async def children(client: Client, batch_id: str) -> list[WorkflowExecution]:
    """Every ``AgentWorkflow`` execution of the batch's jobs, by the server's visibility."""
    query = (
        f"WorkflowType = '{WORKFLOW_NAME}' AND WorkflowId STARTS_WITH '{workflow_id(batch_id)}-'"
    )
    return [execution async for execution in client.list_workflows(query)]


def most_at_once(spans: list[tuple[datetime, datetime]]) -> int:
    """The most spans open at one instant."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    open_, most = 0, 0
    for _, step in edges:
        open_ += step
        most = max(most, open_)
    return most


async def test_a_batch_runs_one_child_per_job_grades_and_reports_them(stack: Stack) -> None:
    batch = batch_of(stack)
    seen: list[BatchProgress] = []
    async with evals_on(stack, playbook(think_seconds=0.3)) as evals:
        summary = await evals.run(batch, on_progress=seen.append)
        runs = await children(stack.client, batch.batch_id)
        first = plan_jobs(batch)[0]
        description = await stack.client.get_workflow_handle(
            workflow_id(job_run_id(batch.batch_id, first))
        ).describe()
        batch_description = await stack.client.get_workflow_handle(
            batch_workflow_id(batch.batch_id)
        ).describe()

    jobs = plan_jobs(batch)
    assert summary.status == "completed"
    # Without the skill: eval 1 fails both checks, eval 2 passes one of two.
    assert (summary.pass_rate, summary.baseline_pass_rate) == (1.0, 0.25)
    # One child run per job, under its run id, each finished.
    assert sorted(run.id for run in runs) == sorted(
        workflow_id(job_run_id(batch.batch_id, job)) for job in jobs
    )
    assert {run.status.name for run in runs} == {"COMPLETED"}
    # A child is started as any run is: the UI shows it the same way.
    assert await description.static_summary() == summary_of(job_request(batch, first))
    assert await batch_description.static_summary() == (f"eval {TOOLS}: 2 evals × 2 variants × 2")
    # Never more than `concurrency` at once (and that many at times).
    spans = [(run.start_time, run.close_time) for run in runs if run.close_time is not None]
    assert most_at_once(spans) == batch.concurrency
    assert max(len(progress.running) for progress in seen) <= batch.concurrency
    assert seen[-1].phase == "completed"
    # Each job graded once and stored; the report stored beside the grades.
    grades = await load_grades(stack.store, TOOLS, batch.batch_id)
    assert sorted(grade.job.key for grade in grades) == sorted(job.key for job in jobs)
    with_skill = [g for g in grades if g.job.variant == "skill"]
    assert all(g.pass_rate == 1.0 and g.script_runs == 1 for g in with_skill), with_skill
    assert all(g.status == "completed" and g.wall_seconds > 0 for g in grades)
    report = await read_report(stack.store, TOOLS, batch.batch_id)
    assert (report.status, len(report.jobs)) == ("completed", 8)
    assert report.pass_rate == 1.0


async def test_a_batch_cancelled_mid_way_writes_its_report_cancelled(stack: Stack) -> None:
    batch = batch_of(stack, concurrency=2)
    async with evals_on(stack, playbook(think_seconds=1.5)) as evals:
        running = asyncio.create_task(evals.run(batch))

        async def one_graded_and_more_running() -> bool:
            try:
                progress = await evals.progress(batch.batch_id)
            except AgentError:  # not started yet
                return False
            return progress.finished >= 1 and bool(progress.running)

        await eventually(one_graded_and_more_running, timeout=60, what="a job graded")
        await evals.cancel(TOOLS, batch.batch_id)
        summary = await running
        await evals.cancel(TOOLS, batch.batch_id)  # ended already: left as it is
        with pytest.raises(AgentError, match="no eval batch eval-none of test-tools"):
            await evals.cancel(TOOLS, "eval-none")
        runs = await children(stack.client, batch.batch_id)

    assert summary.status == "cancelled"
    report = await read_report(stack.store, TOOLS, batch.batch_id)
    assert report.status == "cancelled"
    graded = await load_grades(stack.store, TOOLS, batch.batch_id)
    assert 1 <= len(graded) < len(plan_jobs(batch))
    assert {g.job.key for g in report.jobs} == {g.job.key for g in graded}
    # The runs in flight were cancelled with it; none is left running (visibility lags the
    # cancellation a moment on a busy host: asked until it says so).
    assert runs

    closed: list[str] = []

    async def none_running() -> bool:
        closed[:] = [run.status.name for run in await children(stack.client, batch.batch_id)]
        return "RUNNING" not in closed

    await eventually(none_running, timeout=30, what="the cancelled batch's runs closed")
    # Read once they closed: the listing just after the cancel may still show them running.
    assert "CANCELED" in closed


async def test_a_terminated_batch_resumed_skips_the_jobs_it_graded(stack: Stack) -> None:
    batch = batch_of(stack, concurrency=2)
    async with evals_on(stack, playbook(think_seconds=1.0)) as evals:
        following = asyncio.create_task(evals.run(batch))

        async def two_graded() -> bool:
            try:
                return (await evals.progress(batch.batch_id)).finished >= 2
            except AgentError:  # not started yet
                return False

        await eventually(two_graded, timeout=60, what="two jobs graded")
        with pytest.raises(AgentError, match="is running already: wait for it, or cancel it"):
            await evals.start(batch.model_copy(update={"attempt": 5}))
        stored = await load_batch(stack.store, TOOLS, batch.batch_id)
        assert stored.attempt == 0  # the running batch's, not replaced by the refused one
        handle = stack.client.get_workflow_handle(batch_workflow_id(batch.batch_id))
        await handle.terminate("a test stops it")
        with pytest.raises(AgentError, match="was terminated; resume it"):
            await following
        # A closed workflow answers its query as it was: never "running" once terminated.
        with pytest.raises(AgentError, match="does not run: it is terminated"):
            await evals.progress(batch.batch_id)
        before = {g.job.key for g in await load_grades(stack.store, TOOLS, batch.batch_id)}
        await evals.resume(TOOLS, batch.batch_id)
        summary = await stack.client.get_workflow_handle(
            batch_workflow_id(batch.batch_id), result_type=ReportSummary
        ).result()
        progress = await evals.progress(batch.batch_id)
        runs = await children(stack.client, batch.batch_id)

    assert summary.status == "completed"
    assert progress.skipped >= len(before) >= 2
    grades = await load_grades(stack.store, TOOLS, batch.batch_id)
    assert sorted(g.job.key for g in grades) == sorted(job.key for job in plan_jobs(batch))
    by_job = {g.job.key: g.run_id for g in grades}
    for job in plan_jobs(batch):
        if job.key in before:  # graded before: its run is the first attempt's, not run again
            assert by_job[job.key] == job_run_id(batch.batch_id, job)
            resumed = workflow_id(job_run_id(batch.batch_id, job, attempt=1))
            assert resumed not in {run.id for run in runs}
        else:
            # Terminating a workflow does not stop its activities: a grade in flight may still
            # land after the snapshot above (its first attempt's run, stored put-if-absent),
            # and then stands; otherwise the resumed attempt's run was graded.
            assert by_job[job.key] in {
                job_run_id(batch.batch_id, job),
                job_run_id(batch.batch_id, job, attempt=1),
            }
