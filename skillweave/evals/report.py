"""A batch's report, built from its grades: :func:`build_report`.

``EvalServices.write_eval_report`` (:mod:`skillweave.evals.services`) calls it with the batch
and the grades stored for it, then renders the report (:mod:`skillweave.evals.markdown`,
:mod:`skillweave.evals.html`) and stores the three forms. The numbers, and what each means:

- **a job's pass rate**: its verdicts passed over its verdicts (``JobGrade.pass_rate``);
- **a variant** (:class:`~skillweave.evals.results.VariantSummary`): the mean of its jobs'
  pass rates and their sample standard deviation (n − 1; 0 for one job), its tokens (agent and
  grader, every job), the mean wall time of a job, and its cost: the sum of its jobs' costs,
  None when no job of it has one (the model has no prices). A variant none of whose jobs was
  graded is left out: its pass rate is unknown, not 0;
- **an eval** (:class:`~skillweave.evals.results.EvalRow`), for every eval of the batch in its
  order, graded or not: each variant's mean pass rate over its repeats, jobs graded, mean
  tokens (agent and grader), mean wall seconds and mean cost (when known);
- **a difference** (:class:`~skillweave.evals.results.Difference`), for ``baseline`` and
  ``against`` when both it and ``skill`` have graded jobs: mean(skill) − mean(other) over the
  JOB pass rates, with a 95% Welch t interval (:mod:`._welch`), clipped to [−1, 1]. The jobs of
  different evals pool in one sample, so the interval also holds the spread between evals: it
  is wide on purpose, an honest answer to "does the skill help on this suite". With fewer
  than two jobs on a side the spread is unknown and the interval is [−1, 1], the bounds that
  hold whatever it is; when no job on either side varies, it is the difference itself;
- **totals**: tokens (agent and grader, every job) and cost (None when no job has one).

The grades come from the store, which anyone with write access to it could have filled: a
grade for a job the batch does not plan is ignored, and of two grades for one job the first
is kept (the store keeps the first one written, too). Jobs are listed eval by eval (the
batch's order), variant by variant (``skill`` first), repeat by repeat.

Pure: no I/O, no clock (the caller says when the batch finished).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from skillweave.agent import rendering
from skillweave.evals._welch import mean, sample_stddev, welch_interval
from skillweave.evals.batch import EvalBatch, EvalJob, Variant, plan_jobs
from skillweave.evals.results import (
    Difference,
    EvalReport,
    EvalRow,
    JobGrade,
    TriggerSummary,
    VariantSummary,
)

__all__ = ["PROMPT_CHARS", "build_report"]

PROMPT_CHARS: Final = 200
"""An eval's prompt in a report's row is cut to this many characters (the suite has it whole)."""
_LEVEL: Final = 0.95
_COMPARED: Final[tuple[Variant, ...]] = ("baseline", "against")


def _tokens(grade: JobGrade) -> int:
    return grade.usage.total_tokens + grade.grader_usage.total_tokens


def _cost_sum(grades: Sequence[JobGrade]) -> float | None:
    known = [grade.cost for grade in grades if grade.cost is not None]
    return sum(known) if known else None


def _planned(batch: EvalBatch, grades: Sequence[JobGrade]) -> tuple[JobGrade, ...]:
    """The grades of jobs `batch` plans, the first of each job, in the report's order."""
    planned = set(plan_jobs(batch))
    evals = {case.id: index for index, case in enumerate(batch.cases)}
    variants = {variant: index for index, variant in enumerate(batch.variants)}
    kept: dict[EvalJob, JobGrade] = {}
    for grade in grades:
        if grade.job in planned and grade.job not in kept:
            kept[grade.job] = grade
    ordered = sorted(kept, key=lambda job: (evals[job.eval_id], variants[job.variant], job.repeat))
    return tuple(kept[job] for job in ordered)


def _variant_summary(variant: Variant, grades: Sequence[JobGrade]) -> VariantSummary:
    rates = [grade.pass_rate for grade in grades]
    return VariantSummary(
        variant=variant,
        jobs=len(grades),
        pass_rate=mean(rates),
        stddev=sample_stddev(rates),
        tokens=sum(_tokens(grade) for grade in grades),
        wall_seconds=mean([grade.wall_seconds for grade in grades]),
        cost=_cost_sum(grades),
    )


def _row(batch: EvalBatch, eval_id: str, grades: Sequence[JobGrade]) -> EvalRow:
    pass_rates: dict[str, float] = {}
    runs: dict[str, int] = {}
    tokens: dict[str, int] = {}
    seconds: dict[str, float] = {}
    cost: dict[str, float] = {}
    for variant in batch.variants:
        mine = [grade for grade in grades if grade.job.variant == variant]
        if not mine:
            continue
        pass_rates[variant] = mean([grade.pass_rate for grade in mine])
        runs[variant] = len(mine)
        tokens[variant] = round(mean([_tokens(grade) for grade in mine]))
        seconds[variant] = mean([grade.wall_seconds for grade in mine])
        priced = [grade.cost for grade in mine if grade.cost is not None]
        if priced:
            cost[variant] = mean(priced)
    return EvalRow(
        eval_id=eval_id,
        prompt=rendering.one_line(batch.case(eval_id).prompt, PROMPT_CHARS),
        pass_rates=pass_rates,
        runs=runs,
        tokens=tokens,
        wall_seconds=seconds,
        cost=cost,
    )


def _clip(value: float) -> float:
    return min(1.0, max(-1.0, value))


def _difference(
    versus: Variant, skill: Sequence[JobGrade], other: Sequence[JobGrade]
) -> Difference:
    first = [grade.pass_rate for grade in skill]
    second = [grade.pass_rate for grade in other]
    interval = welch_interval(first, second, level=_LEVEL)
    delta = mean(first) - mean(second)
    if interval is None:
        return Difference(versus=versus, delta=delta, low=-1.0, high=1.0, level=_LEVEL)
    return Difference(
        versus=versus,
        delta=delta,
        low=_clip(interval.low),
        high=_clip(interval.high),
        level=_LEVEL,
    )


def build_report(
    batch: EvalBatch,
    grades: Sequence[JobGrade],
    *,
    status: Literal["completed", "cancelled", "partial"],
    finished_at: str,
    wall_seconds: float,
    triggers: TriggerSummary | None,
) -> EvalReport:
    """The report of `batch` from `grades` (the module docstring says what each number is).

    Args:
        batch: the batch, as it was run.
        grades: the grades stored for it, in any order; hostile (see the module docstring).
        status: how the batch ended.
        finished_at: when, ISO 8601 UTC.
        wall_seconds: the batch, start to end.
        triggers: the trigger evals' summary, None when they were not run.
    """
    jobs = _planned(batch, grades)
    by_variant = {
        variant: [grade for grade in jobs if grade.job.variant == variant]
        for variant in batch.variants
    }
    skill = by_variant["skill"]
    return EvalReport(
        batch_id=batch.batch_id,
        skill=batch.skill,
        version=batch.version,
        against=batch.against,
        model=batch.model,
        grader=batch.grader,
        repeat=batch.repeat,
        created_at=batch.created_at,
        finished_at=finished_at,
        status=status,
        wall_seconds=max(0.0, wall_seconds),
        jobs=jobs,
        variants=tuple(
            _variant_summary(variant, mine) for variant, mine in by_variant.items() if mine
        ),
        rows=tuple(
            _row(batch, case.id, [grade for grade in jobs if grade.job.eval_id == case.id])
            for case in batch.cases
        ),
        differences=tuple(
            _difference(versus, skill, by_variant[versus])
            for versus in _COMPARED
            if skill and by_variant.get(versus)
        ),
        triggers=triggers,
        tokens=sum(_tokens(grade) for grade in jobs),
        cost=_cost_sum(jobs),
        planned=len(plan_jobs(batch)),
    )
