"""An eval batch's plan: its jobs, their derived run ids, and each job's agent (the skill
pinned per variant, the batch's model, approvals unattended)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from skillweave.agent import AgentSpec
from skillweave.agent.spec import ApprovalOptions
from skillweave.evals.batch import (
    MAX_JOBS,
    UNATTENDED_APPROVAL_SECONDS,
    EvalBatch,
    EvalJob,
    job_agent,
    job_request,
    job_run_id,
    new_batch_id,
    plan_jobs,
)
from skillweave.evals.suite import EvalCase

V1 = "1" * 64
V2 = "2" * 64
CASES = (
    EvalCase(id="1", prompt="Convert 5 km to miles", expectations=("3.11 miles",)),
    EvalCase(id="two", prompt="72 F in C", expectations=("22.2 C",)),
)


def batch(**fields: object) -> EvalBatch:
    given: dict[str, object] = {
        "batch_id": "eval-20261207-040000-abc123",
        "skill": "unit-converter",
        "version": V1,
        "cases": CASES,
        "created_at": "2026-12-07T04:00:00Z",
    }
    return EvalBatch.model_validate(given | fields)


def test_jobs_run_repeat_by_repeat_with_the_variants_of_an_eval_side_by_side() -> None:
    planned = plan_jobs(batch(baseline=True, against=V2, repeat=2))

    assert [job.key for job in planned] == [
        "e1-skill-r1", "e1-baseline-r1", "e1-against-r1",
        "etwo-skill-r1", "etwo-baseline-r1", "etwo-against-r1",
        "e1-skill-r2", "e1-baseline-r2", "e1-against-r2",
        "etwo-skill-r2", "etwo-baseline-r2", "etwo-against-r2",
    ]  # fmt: skip


def test_a_batch_of_the_skill_alone_has_one_variant() -> None:
    assert batch().variants == ("skill",)
    assert [job.key for job in plan_jobs(batch())] == ["e1-skill-r1", "etwo-skill-r1"]


def test_run_ids_are_derived_so_a_replay_starts_the_same_child_and_a_resume_a_new_one() -> None:
    job = EvalJob(eval_id="1", variant="baseline", repeat=2)

    assert job_run_id("eval-x", job) == "eval-x-e1-baseline-r2"
    assert job_run_id("eval-x", job, attempt=3) == "eval-x-e1-baseline-r2-a3"
    assert job_request(batch(), job, attempt=1).run_id == (
        "eval-20261207-040000-abc123-e1-baseline-r2-a1"
    )


def test_each_variant_pins_its_version_and_keeps_the_agents_other_skills() -> None:
    template = AgentSpec(
        skills=("log-triage", "unit-converter@abcdef12", "unit-converter"),
        approvals=ApprovalOptions(skills=("log-triage",), timeout_seconds=3600),
        model="openai:gpt-4o-mini",
    )
    evaluated = batch(agent=template, baseline=True, against=V2, model="scripted:x.yaml")

    def agent(variant: str) -> AgentSpec:
        job = EvalJob(eval_id="1", variant=variant, repeat=1)  # type: ignore[arg-type]
        return job_agent(evaluated, job)

    assert agent("skill").skills == ("log-triage", f"unit-converter@{V1}")
    assert agent("against").skills == ("log-triage", f"unit-converter@{V2}")
    assert agent("baseline").skills == ("log-triage",)
    for variant in ("skill", "against", "baseline"):
        spec = agent(variant)
        assert spec.model == "scripted:x.yaml"
        assert spec.name == "eval-unit-converter"
        # Nobody watches a batch: an approval its job asks for is denied quickly.
        assert spec.approvals.skills == ("log-triage",)
        assert spec.approvals.timeout_seconds == UNATTENDED_APPROVAL_SECONDS


def test_the_agents_model_is_kept_when_the_batch_names_none() -> None:
    evaluated = batch(agent=AgentSpec(model="openai:gpt-4o-mini"))
    job = plan_jobs(evaluated)[0]

    assert job_agent(evaluated, job).model == "openai:gpt-4o-mini"
    assert job_request(evaluated, job).task == "Convert 5 km to miles"


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"batch_id": "run-1"}, "batch_id"),
        ({"version": "abc"}, "version"),
        ({"against": V1}, "against: the version evaluated"),
        ({"repeat": 0}, "repeat"),
        ({"concurrency": 0}, "concurrency"),
        ({"cases": ()}, "cases"),
        ({"cases": CASES * (MAX_JOBS // 4 + 1), "baseline": True, "repeat": 1}, "at most"),
    ],
)
def test_a_batch_that_cannot_run_is_refused(fields: dict[str, object], said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        batch(**fields)


def test_a_new_batch_id_is_valid_and_sorts_by_time() -> None:
    first = new_batch_id()

    assert batch(batch_id=first).batch_id == first
    assert first.startswith("eval-")
