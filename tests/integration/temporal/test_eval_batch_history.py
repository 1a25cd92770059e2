"""An eval batch's Temporal history grows with its jobs, never with what its runs and its grader
write: the workflow carries each job's grade as counts (``GradedJob``), and the grading step
names its eval by id (the case is read from the stored batch), so the verdicts' evidence and
the expectations stay in the store.

A batch whose grader writes the longest evidence the contract allows on many long
expectations stays under a fixed number of history bytes per job (the batch itself, the
workflow's input, aside: it is there once), while each job's stored grade holds far more than
that: were the grades or the cases carried by the steps, it could not (it was 138,791 bytes a
job before they were not).
"""

from __future__ import annotations

import json
from typing import Final

import pytest

from skillweave.evals import EvalCase, plan_jobs
from skillweave.evals.effects import batch_workflow_id
from skillweave.evals.store import load_grades
from skillweave.evals.suite import MAX_TEXT_CHARS
from tests.integration.temporal.harness import TOOLS, Stack
from tests.integration.temporal.test_eval_batch import batch_of, evals_on

pytestmark = pytest.mark.asyncio(loop_scope="session")

EXPECTATIONS: Final = 25
MAX_HISTORY_BYTES_PER_JOB: Final = 10_000
"""What one job may add to a batch's history: its child's start (its agent, its prompt) and
end (a short answer), its grading step and their events. Nothing the grader writes counts: a
job's grade here holds over 80,000 characters."""


def expectation(n: int) -> str:
    return f"Expectation {n}: " + "the answer is thorough " * (1_400 // 23)


def grader_script() -> str:
    """The grader fails every expectation with the longest evidence a verdict may carry; the
    agent answers in one short line."""
    reply = json.dumps(
        {
            "expectations": [
                {"text": expectation(n), "passed": False, "evidence": "x" * MAX_TEXT_CHARS}
                for n in range(1, EXPECTATIONS + 1)
            ]
        }
    )
    return json.dumps(
        {
            "cases": [
                {"when": {"task": "^Grade this run of an eval"}, "turns": [{"say": reply}]},
                {"when": {}, "turns": [{"say": "The weather is fine."}]},
            ]
        }
    )


async def test_a_batch_history_stays_under_a_bound_per_job_whatever_the_grader_writes(
    stack: Stack,
) -> None:
    case = EvalCase(
        id="1",
        prompt="Tell me about the weather.",
        expectations=tuple(expectation(n) for n in range(1, EXPECTATIONS + 1)),
    )
    batch = batch_of(stack, cases=(case,), repeat=3, concurrency=3)
    async with evals_on(stack, grader_script()) as evals:
        summary = await evals.run(batch)
        handle = stack.client.get_workflow_handle(batch_workflow_id(batch.batch_id))
        description = await handle.describe()

    jobs = len(plan_jobs(batch))
    assert (summary.status, summary.jobs) == ("completed", jobs)
    grades = await load_grades(stack.store, TOOLS, batch.batch_id)
    written = sum(len(v.evidence) + len(v.text) for g in grades for v in g.verdicts)
    assert written >= jobs * EXPECTATIONS * MAX_TEXT_CHARS  # the grader's words are stored
    size = description.raw_description.workflow_execution_info.history_size_bytes
    # The batch is the workflow's input, once; every other byte is the jobs'.
    per_job = (size - len(batch.model_dump_json())) / jobs
    print(f"history: {size:,} bytes, {jobs} jobs, {per_job:,.0f} bytes a job besides the batch")
    assert per_job < MAX_HISTORY_BYTES_PER_JOB, f"{per_job:,.0f} bytes a job"
