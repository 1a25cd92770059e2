"""The grader over real HTTP, through ``OpenAIProvider``, against the strict OpenAI-compatible
server of ``tests.llm_server`` (which answers 400 to a request outside the API's schema): a
pass with a real quote, a quote not in the evidence turned to a fail, an unreadable answer
asked once more then failed with grade_error, a 503 raised for the activity's retry."""

from __future__ import annotations

import json

import pytest

from skillweave.errors import ModelError
from skillweave.evals.evidence import JobEvidence, OutputFile
from skillweave.evals.grading import GRADER_RUBRIC, NOT_IN_EVIDENCE, GraderOutcome, grade_job
from skillweave.evals.suite import EvalCase
from skillweave.llm import OpenAIProvider
from tests.llm_server import strict_llm_server, text_reply, unavailable_503

CASE = EvalCase(
    id="1",
    prompt="Summarise the errors in app.log",
    expected_output="a count of errors by kind",
    expectations=("The summary counts 2 timeouts", "The report file lists the error kinds"),
)
EVIDENCE = JobEvidence(
    status="completed",
    answer="app.log has 2 timeouts and 1 disk-full error.",
    transcript="[user]\nSummarise the errors in app.log\n\n[assistant]\nDone.",
    outputs=(OutputFile("report.md", 60, "# Errors\n\n- timeout: 2\n- disk full: 1\n"),),
)


def answer(*items: tuple[bool, str]) -> str:
    return json.dumps(
        {
            "expectations": [
                {"text": text, "passed": passed, "evidence": evidence}
                for text, (passed, evidence) in zip(CASE.expectations, items, strict=True)
            ]
        }
    )


async def grade(*replies: str) -> tuple[GraderOutcome, list[dict]]:
    async with strict_llm_server(*(text_reply(reply) for reply in replies)) as server:
        provider = OpenAIProvider(model="grader", base_url=server.base_url, api_key=None)
        try:
            outcome = await grade_job(provider, "grader", CASE, EVIDENCE)
        finally:
            await provider.aclose()
    assert all(request.status == 200 for request in server.requests), server.bodies
    return outcome, server.bodies


async def test_a_pass_with_real_quotes_over_http() -> None:
    outcome, bodies = await grade(
        answer((True, "2 timeouts and 1 disk-full"), (True, "- timeout: 2\n- disk full: 1"))
    )
    assert [v.passed for v in outcome.verdicts] == [True, True]
    assert outcome.usage.total_tokens > 0
    [body] = bodies
    assert body["model"] == "grader"
    assert body["messages"][0] == {"role": "system", "content": GRADER_RUBRIC}
    assert "tools" not in body
    assert "2. The report file lists the error kinds" in body["messages"][1]["content"]


async def test_a_quote_not_in_the_evidence_fails_over_http() -> None:
    outcome, _ = await grade(answer((True, "3 timeouts"), (False, "no list of kinds")))
    first, second = outcome.verdicts
    assert not first.passed
    assert first.evidence == NOT_IN_EVIDENCE + "3 timeouts"
    assert (second.passed, second.evidence) == (False, "no list of kinds")


async def test_an_unreadable_answer_is_retried_once_then_failed() -> None:
    outcome, bodies = await grade("PASS PASS", "Both expectations pass.")
    assert len(bodies) == 2
    retry = bodies[1]["messages"]
    assert [message["role"] for message in retry] == ["system", "user", "assistant", "user"]
    assert retry[3]["content"].startswith("Your answer could not be read: ")
    assert outcome.error is not None
    assert outcome.error.startswith("the grader's answer could not be read, twice")
    assert [v.passed for v in outcome.verdicts] == [False, False]


async def test_a_server_that_is_loading_is_raised_for_a_retry() -> None:
    async with strict_llm_server(unavailable_503()) as server:
        provider = OpenAIProvider(model="grader", base_url=server.base_url, api_key=None)
        try:
            with pytest.raises(ModelError) as raised:
                await grade_job(provider, "grader", CASE, EVIDENCE)
        finally:
            await provider.aclose()
    assert raised.value.retryable
