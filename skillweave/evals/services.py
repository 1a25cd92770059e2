"""`EvalServices`: what each side effect of an eval batch does, in-process.

One async method per effect of :data:`skillweave.evals.effects.BATCH_EFFECTS`, named as it,
each taking the effect's input model and returning its result model: the Temporal worker's
activities (``activities.evals``) and the direct runner (:mod:`skillweave.evals.runner`) call
the very same methods. It works over the worker's (or the direct engine's) ``AgentServices``:
its store, its skill library, its models and its settings.

- ``finished_eval_jobs``: the jobs a batch has stored grades for, counted (a resumed batch
  skips those jobs);
- ``prepare_eval_job``: an eval's input files, copied from the evaluated version's package to
  the job's run inputs (a retry writes the same bytes to the same keys);
- ``grade_eval_job``: the run's evidence (:mod:`.evidence`), its checks (:mod:`.checks`),
  then its expectations by the grader (:mod:`.grading`), stored as the job's finish mark; the
  grade answered, counted (``GradedJob``), is the one stored (the first, when a retried step
  graded twice). The job's eval is read from the stored batch (``store.load_batch``, kept
  here for the batch's next jobs): the batch's doors store it before it runs;
- ``write_eval_report``: the report built from the stored grades (:mod:`.report`) with the
  trigger evals (:mod:`.triggers`), rendered (:mod:`.markdown`, :mod:`.html`) and stored.

A job's cost is its agent's tokens priced by the agent model's profile
(``ModelProfile.cost_of``); the grader's tokens are counted apart, unpriced.
"""

from __future__ import annotations

import logging
import posixpath
from collections import OrderedDict
from contextlib import suppress
from typing import Final

from skillweave.config import ModelProfile
from skillweave.engines import AgentServices
from skillweave.errors import ConfigError, ModelError, SkillweaveError
from skillweave.evals.batch import EvalBatch
from skillweave.evals.checks import check_verdict
from skillweave.evals.evidence import JobEvidence, gather_evidence
from skillweave.evals.grading import GraderOutcome, grade_job
from skillweave.evals.html import report_html
from skillweave.evals.markdown import report_markdown
from skillweave.evals.report import build_report
from skillweave.evals.results import (
    FinishedJobs,
    FinishedJobsInput,
    GradedJob,
    GradeJobInput,
    JobGrade,
    PreparedJob,
    PrepareJobInput,
    ReportInput,
    ReportSummary,
    TriggerSummary,
)
from skillweave.evals.runner import check_batch_services
from skillweave.evals.sources import read_skill_file, read_suite
from skillweave.evals.store import (
    load_batch,
    load_grade,
    load_grades,
    save_grade,
    save_report,
)
from skillweave.evals.suite import EVALS_FILE, EvalCase, EvalSuiteError
from skillweave.evals.triggers import trigger_summary
from skillweave.llm import Usage
from skillweave.storage import keys

__all__ = ["EvalServices"]

_log = logging.getLogger("skillweave.evals")

MAX_CACHED_BATCHES: Final = 32
"""Stored batches kept in memory (the most recently used), for their jobs' grading."""


class EvalServices:
    """The side effects of eval batches, over one process's `services` (see the module
    docstring).

    Raises:
        ConfigError: a batch effect has no method here (checked when built).
    """

    def __init__(self, services: AgentServices) -> None:
        check_batch_services(self)
        self._services = services
        self._store = services.store
        self._batches: OrderedDict[tuple[str, str], EvalBatch] = OrderedDict()

    async def finished_eval_jobs(self, request: FinishedJobsInput) -> FinishedJobs:
        """The jobs the batch has stored grades for already, counted."""
        grades = await load_grades(self._store, request.skill, request.batch_id)
        return FinishedJobs(grades=tuple(GradedJob.of(grade) for grade in grades))

    async def prepare_eval_job(self, request: PrepareJobInput) -> PreparedJob:
        """Copy the eval's files from the evaluated version to the run's inputs, each under
        its file name.

        Raises:
            EvalSuiteError: two of the files have one name.
            ResourceError, SkillVersionError: a file the version does not have, or a version
                no one has (see ``sources.read_skill_file``).
        """
        named: dict[str, str] = {}
        for path in request.files:
            name = posixpath.basename(path)
            if name in named:
                raise EvalSuiteError(
                    f"{request.skill}/{EVALS_FILE}",
                    f"files {named[name]!r} and {path!r} have one name: an eval's input files "
                    "are named by their file name",
                )
            named[name] = path
        inputs = []
        for name, path in named.items():
            data = await read_skill_file(
                self._services.registry, self._store, request.skill, request.version, path
            )
            inputs.append(
                await self._store.put_bytes(keys.run_input_key(request.run_id, name), data)
            )
        return PreparedJob(inputs=tuple(inputs))

    async def grade_eval_job(self, request: GradeJobInput) -> GradedJob:
        """Grade the finished run: its checks, then its expectations by the grader; store the
        grade (unless one is stored already) and answer the stored one, counted.

        Raises:
            EvalsNotFoundError: the batch is not stored (or not as `request` names it).
            EvalSuiteError: the stored batch has no eval of the job's id.
            ModelError: the grader's call may succeed later (retried by the caller).
            ConfigError: the grader's model does not resolve here.
        """
        case = await self._case(request)
        result = request.result
        evidence = await gather_evidence(self._store, result)
        checked = tuple(check_verdict(check, evidence) for check in case.checks)
        graded = await self._grader_outcome(case, request, evidence)
        grade = JobGrade(
            job=request.job,
            run_id=result.run_id,
            status=result.status,
            reason=result.reason,
            answer=result.answer,
            verdicts=(*checked, *graded.verdicts),
            usage=result.usage,
            grader_usage=graded.usage,
            wall_seconds=request.wall_seconds,
            turns=result.turns,
            script_runs=result.script_runs,
            cost=self._cost(request.model, result.usage),
            grade_error=graded.error,
        )
        await save_grade(self._store, request.skill, request.batch_id, grade)
        stored = await load_grade(self._store, request.skill, request.batch_id, request.job.key)
        return GradedJob.of(stored if stored is not None else grade)

    async def _case(self, request: GradeJobInput) -> EvalCase:
        """The eval of `request`'s job, from its stored batch (kept for the batch's next jobs:
        the most recently used :data:`MAX_CACHED_BATCHES`; read again when the one kept has
        no such eval).

        Raises:
            EvalsNotFoundError: no such batch is stored.
            EvalSuiteError: the stored batch has no eval of the job's id.
        """
        with suppress(KeyError):
            return (await self._batch(request.skill, request.batch_id)).case(request.job.eval_id)
        with suppress(KeyError):  # the one kept may be stale: read it again
            fresh = await self._batch(request.skill, request.batch_id, again=True)
            return fresh.case(request.job.eval_id)
        raise EvalSuiteError(
            keys.eval_batch_key(request.skill, request.batch_id),
            f"no eval {request.job.eval_id!r} in batch {request.batch_id}: the batch stored "
            "is not the one that runs (start the batch again)",
        )

    async def _batch(self, skill: str, batch_id: str, *, again: bool = False) -> EvalBatch:
        """The stored batch `batch_id` of `skill`, kept (the most recently used
        :data:`MAX_CACHED_BATCHES`); `again`: read from the store even when kept.

        Raises:
            EvalsNotFoundError: no such batch is stored.
        """
        named = (skill, batch_id)
        batch = None if again else self._batches.pop(named, None)
        if batch is None:
            batch = await load_batch(self._store, skill, batch_id)
        self._batches.pop(named, None)
        self._batches[named] = batch  # the most recently used last
        while len(self._batches) > MAX_CACHED_BATCHES:
            self._batches.popitem(last=False)
        return batch

    async def _grader_outcome(
        self, case: EvalCase, request: GradeJobInput, evidence: JobEvidence
    ) -> GraderOutcome:
        if not case.expectations:  # checks only: no grader, no model resolved
            return GraderOutcome(verdicts=(), usage=Usage())
        named = request.grader or request.model
        provider, model, attempts = self._services.model_calls.resolve_named(named)
        try:
            return await grade_job(provider, model, case, evidence)
        except ModelError as exc:
            if exc.max_attempts is None:
                exc.max_attempts = attempts  # the grader's own retry policy, for the engine
            raise

    def _profile(self, named: str | None) -> ModelProfile | None:
        models = self._services.models
        try:
            if models is not None:
                return models.profile_for(named)
        except ConfigError:
            return None
        return self._services.settings.model if not named else None

    def _cost(self, named: str | None, usage: Usage) -> float | None:
        profile = self._profile(named)
        if profile is None:
            return None
        return profile.cost_of(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)

    async def write_eval_report(self, request: ReportInput) -> ReportSummary:
        """Build the batch's report from its stored batch and grades (with its trigger evals),
        render it and store it; its summary.

        Raises:
            EvalsNotFoundError: the batch is not stored.
        """
        # Read again: a resume stores its next attempt under the same id.
        batch = await self._batch(request.skill, request.batch_id, again=True)
        grades = await load_grades(self._store, batch.skill, batch.batch_id)
        report = build_report(
            batch,
            grades,
            status=request.status,
            finished_at=request.finished_at,
            wall_seconds=request.wall_seconds,
            triggers=await self._triggers(batch),
        )
        return await save_report(
            self._store, report, markdown=report_markdown(report), html=report_html(report)
        )

    async def _triggers(self, batch: EvalBatch) -> TriggerSummary | None:
        """The batch's trigger evals: its eval prompts and the version's ``triggers.json``,
        ranked against the library with the version evaluated in the skill's place. None
        when they cannot be told (said in the log): the report goes on without them."""
        services = self._services
        try:
            _, negatives = await read_suite(
                services.registry, self._store, batch.skill, batch.version
            )
            candidate = await services.views.skill_at(batch.skill, batch.version)
            return trigger_summary(
                services.registry,
                batch.skill,
                positives=[case.prompt for case in batch.cases],
                negatives=negatives,
                settings=services.settings.skills,
                candidate=candidate,
                top_k=batch.agent.catalog.top_k,
            )
        except (SkillweaveError, ValueError) as exc:
            _log.warning("eval batch %s: no trigger evals: %s", batch.batch_id, exc)
            return None
