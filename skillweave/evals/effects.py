"""The side effects of an eval batch, each declared once.

A batch's agent runs are ordinary runs (``AgentWorkflow`` children on Temporal, the direct
engine's runs in-process); its own side effects are the four below. Each :class:`BatchEffect`
names its activity (recorded in histories: never rename one), its input and result models
(:mod:`skillweave.evals.results`), its start-to-close limit, whether it heartbeats and what
the Temporal UI shows for it. The batch workflow schedules them (``workflows.evals``), the
worker registers them (``activities.evals``) and the direct runner calls them in-process
(:mod:`skillweave.evals.runner`), all calling the method of ``EvalServices``
(:mod:`skillweave.evals.services`) named as the effect.

Inputs and results are small and bounded (ids, refs, counts): a batch's history grows with its
jobs, never with what its runs and graders write (grades, cases and reports are in the store).

Pure: the workflow sandbox passes it through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Generic, Literal, TypeVar

from pydantic import BaseModel

from skillweave.evals.results import (
    FinishedJobs,
    FinishedJobsInput,
    GradedJob,
    GradeJobInput,
    PreparedJob,
    PrepareJobInput,
    ReportInput,
    ReportSummary,
)

__all__ = [
    "BATCH_EFFECTS",
    "EVAL_BATCH_WORKFLOW",
    "FINISHED_EVAL_JOBS",
    "GRADE_EVAL_JOB",
    "PREPARE_EVAL_JOB",
    "QUERY_PROGRESS",
    "WRITE_EVAL_REPORT",
    "BatchEffect",
    "batch_workflow_id",
]

EVAL_BATCH_WORKFLOW: Final = "EvalBatchWorkflow"
QUERY_PROGRESS: Final = "progress"

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


def batch_workflow_id(batch_id: str) -> str:
    """The batch's workflow id: ``skillweave-{batch_id}`` (``skillweave-eval-…``: batch ids begin
    with ``eval-``); a resume reuses it."""
    return f"skillweave-{batch_id}"


@dataclass(frozen=True, kw_only=True)
class BatchEffect(Generic[In, Out]):
    """One side effect of an eval batch (see the module docstring).

    Attributes:
        name: the activity's name, and ``EvalServices``' method's.
        input: what a call takes.
        output: what it answers.
        summary: what the Temporal UI shows for a call.
        timeout: ``short`` (the worker's activity limit) or ``model`` (a model call's: the
            grader is one).
        heartbeat: the worker heartbeats while it runs, so a dead worker is noticed.
    """

    name: str
    input: type[In]
    output: type[Out]
    summary: Callable[[In], str]
    timeout: Literal["short", "model"] = "short"
    heartbeat: bool = False


FINISHED_EVAL_JOBS: Final = BatchEffect[FinishedJobsInput, FinishedJobs](
    name="finished_eval_jobs",
    input=FinishedJobsInput,
    output=FinishedJobs,
    summary=lambda request: "read the jobs already graded",
)
PREPARE_EVAL_JOB: Final = BatchEffect[PrepareJobInput, PreparedJob](
    name="prepare_eval_job",
    input=PrepareJobInput,
    output=PreparedJob,
    summary=lambda request: f"inputs of {request.run_id}",
)
GRADE_EVAL_JOB: Final = BatchEffect[GradeJobInput, GradedJob](
    name="grade_eval_job",
    input=GradeJobInput,
    output=GradedJob,
    summary=lambda request: f"grade {request.job.key}",
    timeout="model",
    heartbeat=True,
)
WRITE_EVAL_REPORT: Final = BatchEffect[ReportInput, ReportSummary](
    name="write_eval_report",
    input=ReportInput,
    output=ReportSummary,
    summary=lambda request: f"report of {request.batch_id}",
)

BATCH_EFFECTS: Final[tuple[BatchEffect[BaseModel, BaseModel], ...]] = (
    FINISHED_EVAL_JOBS,  # type: ignore[assignment]
    PREPARE_EVAL_JOB,  # type: ignore[assignment]
    GRADE_EVAL_JOB,  # type: ignore[assignment]
    WRITE_EVAL_REPORT,  # type: ignore[assignment]
)
