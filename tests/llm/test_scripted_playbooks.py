"""The scripted playbooks of the bundled skills' evals (``examples/evals/``) against their
suites, without running an agent: for every eval prompt the agent playbook activates the skill
when it is offered and answers from "memory" when it is not; the with-skill answer holds every
``answer_contains`` text and the baseline's none; the grader playbook answers each eval's
expectations in order, its quotes found in the with-skill answer (all pass) and not in the
baseline's (all fail, saying so). The end-to-end runs are tests/integration/evals."""

from __future__ import annotations

import pytest

from skillweave.config import bundled_skills_dir
from skillweave.evals import EVALS_FILE, EvalCase, parse_suite
from skillweave.evals.evidence import JobEvidence
from skillweave.evals.grading import NOT_IN_EVIDENCE, grade_job
from skillweave.evals.suite import AnswerContains
from skillweave.llm import Message, ModelRequest, ScriptedProvider, ToolSpec
from tests.conftest import REPO

SKILLS = ("unit-converter", "log-triage")


def suite_of(skill: str) -> tuple[EvalCase, ...]:
    path = bundled_skills_dir() / skill / EVALS_FILE
    return parse_suite(path.read_bytes(), source=str(path), skill=skill).evals


def playbook(name: str) -> ScriptedProvider:
    return ScriptedProvider.from_file(REPO / "examples" / "evals" / f"{name}.yaml")


def offering(skill: str | None, case: EvalCase) -> ModelRequest:
    """The first model request of `case`'s run, its catalog offering `skill` (or nothing)."""
    system = "" if skill is None else f'<available_skills>\n<skill name="{skill}">x</skill>\n'
    schema = {"type": "object", "properties": {"name": {"type": "string", "enum": [skill]}}}
    tools = (
        ()
        if skill is None
        else (ToolSpec(name="activate_skill", description="", input_schema=schema),)
    )
    task = Message(role="user", text=case.prompt)
    return ModelRequest(model="m", system=system, messages=(task,), tools=tools)


def last_answer(agent: ScriptedProvider, skill: str, case: EvalCase) -> str:
    """The answer the with-skill case of `case` ends its run with."""
    offered = frozenset({skill})
    played = next(scripted for scripted in agent.cases if scripted.when.holds(case.prompt, offered))
    final = played.turns[-1]
    assert not final.tool_calls, f"eval {case.id}: the case ends with an answer"
    assert final.say
    return final.say


def needles(case: EvalCase) -> list[str]:
    return [check.text for check in case.checks if isinstance(check, AnswerContains)]


@pytest.mark.parametrize("skill", SKILLS)
async def test_the_agent_activates_the_skill_when_offered_and_guesses_without(
    skill: str,
) -> None:
    agent = playbook(skill)
    for case in suite_of(skill):
        first = await agent.complete(offering(skill, case))
        assert [call.name for call in first.message.tool_calls] == ["activate_skill"], case.id
        assert first.message.tool_calls[0].arguments == {"name": skill}
        baseline = await agent.complete(offering(None, case))
        assert baseline.message.tool_calls == (), case.id
        assert baseline.message.text
        assert not any(text in baseline.message.text for text in needles(case)), case.id
        answer = last_answer(agent, skill, case)
        assert all(text in answer for text in needles(case)), case.id


@pytest.mark.parametrize("skill", SKILLS)
async def test_the_grader_passes_the_skills_answer_and_fails_the_baseline(skill: str) -> None:
    agent, grader = playbook(skill), playbook(f"{skill}-grader")
    for case in suite_of(skill):
        answer = last_answer(agent, skill, case)
        baseline = (await agent.complete(offering(None, case))).message.text
        for said, passed in ((answer, True), (baseline, False)):
            evidence = JobEvidence(status="completed", answer=said, transcript=case.prompt)
            outcome = await grade_job(grader, None, case, evidence)
            assert outcome.error is None, (case.id, outcome.error)
            assert [verdict.text for verdict in outcome.verdicts] == list(case.expectations)
            assert all(verdict.passed is passed for verdict in outcome.verdicts), (
                case.id,
                outcome.verdicts,
            )
            if not passed:
                assert all(v.evidence.startswith(NOT_IN_EVIDENCE) for v in outcome.verdicts)
