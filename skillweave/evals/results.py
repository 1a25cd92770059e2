"""What an eval batch produces: each job's verdicts (:class:`JobGrade`) and the batch's report
(:class:`EvalReport`), and the inputs and results of the batch's steps
(:mod:`skillweave.evals.effects`).

A job's grade is stored when it is made (``keys.eval_job_key``): it is the mark that the job
is finished, which a resumed batch reads so that it never runs that job again. The report is
built from the grades (:mod:`skillweave.evals.report`) and stored beside them as JSON,
Markdown and HTML.

What the batch's steps take and answer is small and bounded, whatever runs and graders write:
on Temporal it is the batch workflow's history, which must grow with the jobs, never with
their verdicts, evidence or prompts. So the grading step names its eval by id (the case is
read from the stored batch) and answers a :class:`GradedJob` (counts) while the
:class:`JobGrade` itself stays in the store.

Pure models; new fields are optional (a running batch decodes old payloads).
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillweave.engines.base import RunResult
from skillweave.evals.batch import EvalJob, Variant
from skillweave.llm.messages import Usage
from skillweave.storage import ArtifactRef

__all__ = [
    "BatchProgress",
    "Difference",
    "EvalReport",
    "EvalRow",
    "FinishedJobs",
    "FinishedJobsInput",
    "GradeJobInput",
    "GradedJob",
    "JobGrade",
    "PrepareJobInput",
    "PreparedJob",
    "ReportInput",
    "ReportSummary",
    "TriggerCaseResult",
    "TriggerSummary",
    "VariantSummary",
    "Verdict",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class Verdict(_Model):
    """One check or expectation of one job, judged."""

    text: str = Field(description="The expectation, or the check as a sentence.")
    passed: bool
    evidence: str = Field(
        default="",
        description="What the verdict rests on: for the grader, a quote found verbatim in the "
        "transcript or the outputs; for a check, what it saw.",
    )
    by: Literal["check", "grader"]


class JobGrade(_Model):
    """One job, run and graded."""

    job: EvalJob
    run_id: str
    status: str = Field(description="How the run ended: completed, failed, cancelled…")
    reason: str | None = None
    answer: str | None = None
    verdicts: tuple[Verdict, ...] = ()
    usage: Usage = Field(default_factory=Usage, description="The agent's tokens.")
    grader_usage: Usage = Field(default_factory=Usage)
    wall_seconds: float = Field(default=0.0, ge=0, description="The run, start to end.")
    turns: int = 0
    script_runs: int = 0
    cost: float | None = Field(default=None, description="USD, when the model has prices.")
    grade_error: str | None = Field(
        default=None,
        description="Why the grader judged nothing (its expectations are then failed).",
    )

    @property
    def passed(self) -> int:
        return sum(verdict.passed for verdict in self.verdicts)

    @property
    def pass_rate(self) -> float:
        """Verdicts passed over verdicts; 0 for a job with none."""
        return self.passed / len(self.verdicts) if self.verdicts else 0.0


_SHORT: Final = 200
"""Characters of a :class:`GradedJob`'s run id and status kept (a stored grade is hostile)."""


class GradedJob(_Model):
    """One job's grade as a batch carries it: the job, its run, how the run ended and its
    verdicts counted. The grade itself (verdicts with their evidence, the answer, usage) is
    stored (``store.save_grade``) and read from there, never carried by a batch's steps."""

    job: EvalJob
    run_id: str = Field(max_length=_SHORT)
    status: str = Field(max_length=_SHORT, description="How the run ended.")
    passed: int = Field(default=0, ge=0, description="Verdicts passed.")
    verdicts: int = Field(default=0, ge=0, description="Verdicts, passed or not.")

    @classmethod
    def of(cls, grade: JobGrade) -> GradedJob:
        """`grade`, counted."""
        return cls(
            job=grade.job,
            run_id=grade.run_id[:_SHORT],
            status=grade.status[:_SHORT],
            passed=grade.passed,
            verdicts=len(grade.verdicts),
        )


class PrepareJobInput(_Model):
    """Copy an eval's input files from the evaluated version's package to a run's inputs."""

    skill: str
    version: str
    run_id: str
    files: tuple[str, ...]


class PreparedJob(_Model):
    inputs: tuple[ArtifactRef, ...] = ()


class GradeJobInput(_Model):
    """Grade one finished run: its checks, then its expectations by the grader. The eval is
    the job's (``job.eval_id``), read from the stored batch (``store.load_batch``): a case is
    never carried (its prompt and expectations may be long, and every job of it would carry
    them again)."""

    batch_id: str
    skill: str
    job: EvalJob
    result: RunResult
    wall_seconds: float = Field(ge=0)
    model: str | None = None
    grader: str | None = None


class FinishedJobsInput(_Model):
    skill: str
    batch_id: str


class FinishedJobs(_Model):
    """The jobs a batch has a stored grade for already, counted (:class:`GradedJob`)."""

    grades: tuple[GradedJob, ...] = ()


class ReportInput(_Model):
    """Build, store and summarise a batch's report from its stored batch and grades (named by
    id: a batch's evals are never carried by a step)."""

    skill: str
    batch_id: str
    status: Literal["completed", "cancelled", "partial"] = "completed"
    finished_at: str = Field(description="ISO 8601, UTC.")
    wall_seconds: float = Field(default=0.0, ge=0, description="The batch, start to end.")


class VariantSummary(_Model):
    """One variant over every job of it."""

    variant: Variant
    jobs: int
    pass_rate: float = Field(description="The mean of its jobs' pass rates.")
    stddev: float = 0.0
    tokens: int = 0
    wall_seconds: float = Field(default=0.0, description="Mean per job.")
    cost: float | None = None


class EvalRow(_Model):
    """One eval: each variant's mean pass rate, tokens and time over its repeats."""

    eval_id: str
    prompt: str = Field(description="The eval's prompt, shortened.")
    pass_rates: dict[str, float] = Field(default_factory=dict, description="variant → mean")
    runs: dict[str, int] = Field(default_factory=dict, description="variant → jobs graded")
    tokens: dict[str, int] = Field(default_factory=dict, description="variant → mean tokens")
    wall_seconds: dict[str, float] = Field(default_factory=dict, description="variant → mean")
    cost: dict[str, float] = Field(default_factory=dict, description="variant → mean, if known")


class Difference(_Model):
    """The skill variant's mean pass rate minus another variant's, with a confidence interval
    over the jobs (Welch's t)."""

    versus: Variant
    delta: float
    low: float
    high: float
    level: float = 0.95


class TriggerCaseResult(_Model):
    query: str
    should_trigger: bool
    triggered: bool
    rank: int | None = Field(default=None, description="The skill's place in the selection.")


class TriggerSummary(_Model):
    """Whether the catalog (or ``search_skills``) picks the skill for the requests it is meant
    for, and not for the others, with the configured selection strategy and library."""

    strategy: str
    top_k: int
    positives: int
    negatives: int
    recall: float | None = None
    false_trigger_rate: float | None = None
    first_recall: float | None = Field(
        default=None,
        description="Positives for which the skill ranks first: what a small library's "
        "top-k (which lists every skill) cannot tell.",
    )
    first_false_trigger_rate: float | None = Field(
        default=None, description="Negatives for which the skill ranks first."
    )
    cases: tuple[TriggerCaseResult, ...] = ()

    def first_counts(self) -> tuple[int, int] | None:
        """(positives ranked first, negatives ranked first), or None (an old report)."""
        if self.first_recall is None and self.first_false_trigger_rate is None:
            return None
        return (
            sum(c.should_trigger and c.rank == 1 for c in self.cases),
            sum(not c.should_trigger and c.rank == 1 for c in self.cases),
        )


class EvalReport(_Model):
    """A batch's report (stored as ``report.json``; rendered as Markdown and HTML)."""

    batch_id: str
    skill: str
    version: str
    against: str | None = None
    model: str | None = None
    grader: str | None = None
    repeat: int = 1
    created_at: str
    finished_at: str
    status: Literal["completed", "cancelled", "partial"] = "completed"
    wall_seconds: float = 0.0
    jobs: tuple[JobGrade, ...] = ()
    variants: tuple[VariantSummary, ...] = ()
    rows: tuple[EvalRow, ...] = ()
    differences: tuple[Difference, ...] = ()
    triggers: TriggerSummary | None = None
    tokens: int = Field(default=0, description="Agent and grader, every job.")
    cost: float | None = None
    planned: int | None = Field(
        default=None, ge=0, description="The jobs the batch plans (graded or not)."
    )

    def variant(self, variant: Variant) -> VariantSummary | None:
        return next((v for v in self.variants if v.variant == variant), None)

    @property
    def pass_rate(self) -> float | None:
        """The skill variant's pass rate (what ``--min-pass-rate`` is held to)."""
        summary = self.variant("skill")
        return None if summary is None else summary.pass_rate


class ReportSummary(_Model):
    """What the report step answers: where the report is, and its headline."""

    batch_id: str
    skill: str
    status: Literal["completed", "cancelled", "partial"]
    pass_rate: float | None = None
    baseline_pass_rate: float | None = None
    jobs: int = 0
    report: ArtifactRef
    markdown: ArtifactRef
    html: ArtifactRef


class BatchProgress(_Model):
    """The ``progress`` query of a running batch (and what the direct runner reports)."""

    batch_id: str
    jobs: int
    finished: int = 0
    running: tuple[str, ...] = Field(default=(), description="Run ids in flight.")
    skipped: int = Field(default=0, description="Finished before a resume: not run again.")
    passed_verdicts: int = 0
    verdicts: int = 0
    phase: Literal["starting", "running", "reporting", "completed", "cancelled"] = "starting"
