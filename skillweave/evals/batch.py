"""An eval batch: what it runs (:class:`EvalBatch`), its jobs (:func:`plan_jobs`) and each job's
agent run (:func:`job_request`).

A batch evaluates one version of one skill on every eval of its suite, ``repeat`` times, in
up to three variants: ``skill`` (the agent has the skill, pinned to the version), ``baseline``
(the agent does not have it) and ``against`` (the agent has another version of it). A job is
one eval in one variant, one repeat: one agent run, then its grading. The batch is the
``EvalBatchWorkflow``'s input on Temporal (``workflows.evals``) and what the direct engine's
runner runs in-process (:mod:`skillweave.evals.runner`); it is stored at
``keys.eval_batch_key`` so that a batch can be resumed by its id.

Run ids are derived, never random: a job's run is ``{batch_id}-e{eval}-{variant}-r{repeat}``
(``-a{attempt}`` added when a resumed batch runs a job again whose run had started but was
never graded), so a crashed worker that replays the batch starts the same child, and the
Temporal UI shows which job a run is.

Pure: the workflow sandbox passes it through.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from skillweave.agent.spec import AgentSpec
from skillweave.engines.base import RunRequest
from skillweave.evals.suite import EvalCase
from skillweave.storage import ArtifactRef

__all__ = [
    "BATCH_ID_PATTERN",
    "MAX_CONCURRENCY",
    "MAX_JOBS",
    "MAX_REPEAT",
    "UNATTENDED_APPROVAL_SECONDS",
    "EvalBatch",
    "EvalJob",
    "Variant",
    "job_agent",
    "job_request",
    "job_run_id",
    "new_batch_id",
    "plan_jobs",
]

Variant = Literal["skill", "baseline", "against"]
"""``skill``: with the version evaluated; ``baseline``: without the skill; ``against``: with
another version of it."""

BATCH_ID_PATTERN: Final = r"^eval-[a-z0-9][a-z0-9-]{0,62}$"
MAX_REPEAT: Final = 20
MAX_CONCURRENCY: Final = 64
MAX_JOBS: Final = 2_000
"""Jobs in one batch: each is a child workflow and a grading activity in the batch's history,
which stays well under Temporal's limits at this size."""
_VERSION: Final = r"^[0-9a-f]{64}$"


def new_batch_id(now: datetime | None = None) -> str:
    """A new batch's id: ``eval-YYYYmmdd-HHMMSS-<6 hex>`` (UTC), sortable by when it was asked
    for (every door names its batches so; never called by workflow code)."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    return f"eval-{when:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class EvalJob(BaseModel):
    """One eval, in one variant, one repeat (1-based)."""

    model_config = ConfigDict(frozen=True)

    eval_id: str
    variant: Variant
    repeat: int = Field(ge=1, le=MAX_REPEAT)

    @property
    def key(self) -> str:
        """``e{eval}-{variant}-r{repeat}``: the job's name in the batch (and its stored grade)."""
        return f"e{self.eval_id}-{self.variant}-r{self.repeat}"


class EvalBatch(BaseModel):
    """What one eval batch runs (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    batch_id: str = Field(
        default_factory=new_batch_id,
        pattern=BATCH_ID_PATTERN,
        description="A new one (new_batch_id) unless given: every door names batches so.",
    )
    skill: str = Field(min_length=1, max_length=64)
    version: str = Field(pattern=_VERSION, description="The version evaluated.")
    against: str | None = Field(
        default=None, pattern=_VERSION, description="Another version to compare with."
    )
    baseline: bool = Field(default=False, description="Also run each eval without the skill.")
    repeat: int = Field(default=1, ge=1, le=MAX_REPEAT)
    concurrency: int = Field(default=4, ge=1, le=MAX_CONCURRENCY)
    model: str | None = Field(default=None, description="The agent's model; None: the default.")
    grader: str | None = Field(
        default=None, description="The grader's model profile; None: the agent's model."
    )
    agent: AgentSpec = Field(
        default_factory=AgentSpec,
        description="The agent each job runs (instruction, limits, other skills); its skills "
        "are set per variant by job_agent.",
    )
    cases: tuple[EvalCase, ...] = Field(min_length=1)
    created_at: str = Field(
        default_factory=lambda: datetime.now(UTC).isoformat(),
        description="ISO 8601, UTC: when the batch was asked for (now, unless given; a "
        "payload always carries it, so workflow code never reads the clock here).",
    )
    store_id: str | None = None
    attempt: int = Field(
        default=0, ge=0, description="How many times the batch was resumed (0: never)."
    )

    @model_validator(mode="after")
    def _size(self) -> EvalBatch:
        if self.against is not None and self.against == self.version:
            raise ValueError("against: the version evaluated; name another version")
        if len(self.variants) * len(self.cases) * self.repeat > MAX_JOBS:
            raise ValueError(
                f"{len(self.variants) * len(self.cases) * self.repeat} jobs: at most {MAX_JOBS}"
                " in one batch (fewer evals, repeats or variants)"
            )
        return self

    @property
    def variants(self) -> tuple[Variant, ...]:
        """The variants each eval runs in, ``skill`` first."""
        chosen: list[Variant] = ["skill"]
        if self.baseline:
            chosen.append("baseline")
        if self.against is not None:
            chosen.append("against")
        return tuple(chosen)

    def case(self, eval_id: str) -> EvalCase:
        """The eval named `eval_id`."""
        for case in self.cases:
            if case.id == eval_id:
                return case
        raise KeyError(eval_id)


def plan_jobs(batch: EvalBatch) -> tuple[EvalJob, ...]:
    """Every job of `batch`, repeat by repeat, and within a repeat eval by eval with its
    variants side by side: a batch stopped half-way has comparable results."""
    return tuple(
        EvalJob(eval_id=case.id, variant=variant, repeat=repeat)
        for repeat in range(1, batch.repeat + 1)
        for case in batch.cases
        for variant in batch.variants
    )


def job_run_id(batch_id: str, job: EvalJob, *, attempt: int = 0) -> str:
    """The run id of `job`'s agent run (see the module docstring)."""
    run_id = f"{batch_id}-{job.key}"
    return run_id if attempt == 0 else f"{run_id}-a{attempt}"


_PINNED: Final = re.compile(r"@[0-9a-fA-F]+$")

UNATTENDED_APPROVAL_SECONDS: Final = 1.0
"""How long an eval job's approval waits for a person: nobody watches an eval batch, so an
approval it asks for is denied (at once by the direct runner, after this on Temporal, where
the batch cannot see its children's events), and the job is graded as it then ends."""


def job_agent(batch: EvalBatch, job: EvalJob) -> AgentSpec:
    """The agent of `job`'s run: the batch's agent, with the skill pinned to the version the
    variant names (or without the skill, for ``baseline``), the batch's model, and its
    approvals unattended (:data:`UNATTENDED_APPROVAL_SECONDS`)."""
    others = tuple(
        reference
        for reference in batch.agent.skills or ()
        if _PINNED.sub("", reference) != batch.skill
    )
    match job.variant:
        case "skill":
            skills = (*others, f"{batch.skill}@{batch.version}")
        case "against":
            assert batch.against is not None
            skills = (*others, f"{batch.skill}@{batch.against}")
        case "baseline":
            skills = others
    return batch.agent.model_copy(
        update={
            "name": f"eval-{batch.skill}"[:64],
            "skills": skills,
            "model": batch.model if batch.model is not None else batch.agent.model,
            "pinned": None,
            "approvals": batch.agent.approvals.model_copy(
                update={"timeout_seconds": UNATTENDED_APPROVAL_SECONDS}
            ),
        }
    )


def job_request(
    batch: EvalBatch, job: EvalJob, *, inputs: tuple[ArtifactRef, ...] = (), attempt: int = 0
) -> RunRequest:
    """The run of `job`: its eval's prompt as the task, its agent, and its input files (already
    stored under the run's ``inputs/``)."""
    return RunRequest(
        run_id=job_run_id(batch.batch_id, job, attempt=attempt),
        task=batch.case(job.eval_id).prompt,
        agent=job_agent(batch, job),
        inputs=inputs,
        store_id=batch.store_id,
    )
