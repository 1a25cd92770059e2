"""Skill evals: does a skill help, does a new version break it, does the catalog pick it.

A skill's ``evals/evals.json`` (skill-creator's format and a superset of deterministic checks,
:mod:`.suite`) becomes an eval batch (:mod:`.batch`): each eval run as an agent job with the
skill, and optionally without it or with another version, repeated. Each job is graded (checks
first, then a grader model that must quote its evidence) and the batch reported
(:mod:`.results`). The batch's side effects are declared once (:mod:`.effects`); on Temporal a
batch is the ``EvalBatchWorkflow`` (``workflows.evals``), on the direct engine it runs
in-process.
"""

from typing import TYPE_CHECKING

from skillweave.evals.batch import (
    EvalBatch,
    EvalJob,
    Variant,
    job_agent,
    job_request,
    job_run_id,
    plan_jobs,
)
from skillweave.evals.effects import BATCH_EFFECTS, EVAL_BATCH_WORKFLOW, BatchEffect
from skillweave.evals.results import (
    BatchProgress,
    EvalReport,
    JobGrade,
    ReportSummary,
    TriggerSummary,
    Verdict,
)
from skillweave.evals.suite import (
    EVALS_FILE,
    TRIGGERS_FILE,
    EvalCase,
    EvalSuite,
    EvalSuiteError,
    TriggerCase,
    parse_suite,
    parse_triggers,
)
from skillweave.lazy import lazy_exports

if TYPE_CHECKING:
    from skillweave.evals.runner import DirectEvals, EvalRunner, check_batch_services
    from skillweave.evals.services import EvalServices

__all__ = [
    "BATCH_EFFECTS",
    "EVALS_FILE",
    "EVAL_BATCH_WORKFLOW",
    "TRIGGERS_FILE",
    "BatchEffect",
    "BatchProgress",
    "DirectEvals",
    "EvalBatch",
    "EvalCase",
    "EvalJob",
    "EvalReport",
    "EvalRunner",
    "EvalServices",
    "EvalSuite",
    "EvalSuiteError",
    "JobGrade",
    "ReportSummary",
    "TriggerCase",
    "TriggerSummary",
    "Variant",
    "Verdict",
    "check_batch_services",
    "job_agent",
    "job_request",
    "job_run_id",
    "parse_suite",
    "parse_triggers",
    "plan_jobs",
]

# The services and runners do I/O: imported on first use (skillweave.lazy), so that workflow
# code importing the pure modules above does not load them.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DirectEvals": "runner",
        "EvalRunner": "runner",
        "EvalServices": "services",
        "check_batch_services": "runner",
    },
)
