"""A worker killed mid-batch: the batch completes, and no finished eval runs twice.

The worker is ``skillweave worker`` in a process of its own (``worker_rig``, as
test_worker_crash.py runs one), killed with SIGKILL once a job of the batch is graded and
while others run, then started again. The batch is started and followed through
``TemporalEvals`` as the CLI does; the MCP manager runs in this process, so it outlives the
worker and counts the scripts it really ran.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType

from skillweave.engines.contract import workflow_id
from skillweave.errors import AgentError
from skillweave.evals import job_run_id, plan_jobs
from skillweave.evals.effects import GRADE_EVAL_JOB, batch_workflow_id
from skillweave.evals.store import load_grades, read_report
from skillweave.evals.temporal import TemporalEvals
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, Stack
from tests.integration.temporal.test_eval_batch import batch_of, children, playbook
from tests.integration.temporal.test_worker_crash import worker_rig

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_worker_killed_mid_batch_the_batch_completes_and_no_finished_eval_runs_twice(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    batch = batch_of(stack, concurrency=2)
    jobs = plan_jobs(batch)
    async with worker_rig(stack, skill_dirs, tmp_path, playbook(think_seconds=2)) as rig:
        evals = TemporalEvals(rig.engine, poll_seconds=0.1)
        running = asyncio.create_task(evals.run(batch))

        async def graded_and_running() -> bool:
            try:
                progress = await evals.progress(batch.batch_id)
            except AgentError:  # not started yet
                return False
            return progress.finished >= 1 and bool(progress.running)

        await eventually(graded_and_running, timeout=90, what="a job graded, others running")
        killed_at = datetime.now(UTC)
        rig.worker.kill()
        graded_before = {g.job.key: g for g in await load_grades(rig.store, TOOLS, batch.batch_id)}
        assert 1 <= len(graded_before) < len(jobs)
        await rig.worker.start()
        summary = await asyncio.wait_for(running, timeout=180)
        runs = await children(rig.client, batch.batch_id)
        history = await rig.client.get_workflow_handle(
            batch_workflow_id(batch.batch_id)
        ).fetch_history()
        scripts_ran = await rig.manager.executions()
        grades = await load_grades(rig.store, TOOLS, batch.batch_id)
        report = await read_report(rig.store, TOOLS, batch.batch_id)

    assert rig.worker.started == 2
    assert summary.status == "completed"
    assert report.status == "completed"
    # Every job has exactly one AgentWorkflow execution, under its first run id, completed.
    per_id = Counter(run.id for run in runs)
    assert per_id == Counter(workflow_id(job_run_id(batch.batch_id, job)) for job in jobs)
    assert {run.status.name for run in runs} == {"COMPLETED"}
    # The batch went on on the second worker: it started the jobs left after the kill.
    assert any(run.start_time > killed_at for run in runs)
    # Exactly one grade per job, and the batch asked to grade each job once.
    assert sorted(g.job.key for g in grades) == sorted(job.key for job in jobs)
    scheduled = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert scheduled.count(GRADE_EVAL_JOB.name) == len(jobs)
    # The jobs graded before the kill were not run again: their grade is the one stored then,
    # from their only run.
    for key, before in graded_before.items():
        assert next(g for g in grades if g.job.key == key) == before
    # Each run with the skill ran its script once (the manager counts what really ran).
    assert scripts_ran == sum(1 for job in jobs if job.variant == "skill")
