"""The problem vocabulary: stable codes, both body shapes read back, nothing raised."""

from __future__ import annotations

import json

import pytest

from skillweave.sandbox.problems import (
    PROBLEM_JSON,
    PROBLEM_TYPE_PREFIX,
    Problem,
    ProblemCode,
    read_problem,
)


def test_the_codes_are_the_bare_strings_managers_sent_before() -> None:
    """Clients of that time match ``error`` against these: they must never change."""
    assert ProblemCode.IN_PROGRESS == "in_progress"
    assert ProblemCode.SANDBOX_LOST == "sandbox_lost"
    assert ProblemCode.SANDBOX_REFUSED == "sandbox_refused"
    assert PROBLEM_JSON == "application/problem+json"


def test_a_coded_problem_carries_its_type_and_its_bare_code() -> None:
    problem = Problem.coded(
        ProblemCode.IN_PROGRESS, status=409, title="Execution in progress", detail="busy",
        retry_after=3,
    )  # fmt: skip
    body = problem.body()
    assert body == {
        "type": f"{PROBLEM_TYPE_PREFIX}in_progress",
        "title": "Execution in progress",
        "status": 409,
        "detail": "busy",
        "error": "in_progress",
        "retry_after": 3.0,
    }
    assert read_problem(409, json.dumps(body).encode()).code is ProblemCode.IN_PROGRESS


def test_the_type_names_the_code_without_the_bare_member() -> None:
    body = {"type": ProblemCode.SANDBOX_LOST.type, "title": "Sandbox lost", "status": 502}
    assert read_problem(502, json.dumps(body).encode()).code is ProblemCode.SANDBOX_LOST


def test_the_body_of_a_manager_before_problem_json_is_read() -> None:
    old = b'{"detail": "execution \'x\' is running", "error": "in_progress"}'
    problem = read_problem(409, old)
    assert problem.code is ProblemCode.IN_PROGRESS
    assert problem.detail == "execution 'x' is running"
    assert problem.status == 409


@pytest.mark.parametrize(
    "content",
    [b"<html>bad gateway</html>", b'["not", "an", "object"]', b'{"detail": "x", "error": 7}'],
)
def test_anything_else_is_a_problem_without_a_code(content: bytes) -> None:
    problem = read_problem(502, content)
    assert problem.code is None
    assert problem.status == 502
    assert problem.detail


@pytest.mark.parametrize(
    "type_uri", ["about:blank", f"{PROBLEM_TYPE_PREFIX}not_a_code", "https://example.com/x"]
)
def test_a_type_naming_no_known_code_has_none(type_uri: str) -> None:
    assert ProblemCode.of_type(type_uri) is None


def test_the_control_api_answers_with_the_same_model() -> None:
    """One problem+json shape for every service; its OpenAPI entry holds no dangling $ref."""
    from skillweave.api import problems as api

    assert api.Problem is Problem
    assert api.PROBLEM_JSON == PROBLEM_JSON
    schema = api.problem_response("refused")["content"][PROBLEM_JSON]["schema"]
    assert "$defs" not in json.dumps(schema)
    assert schema["properties"]["errors"]["anyOf"][0]["items"]["properties"]["loc"]
    answer = api.problem(409, "taken", errors=[{"loc": ["package"], "msg": "taken", "name": "x"}])
    assert json.loads(answer.body)["errors"] == [{"loc": ["package"], "msg": "taken", "name": "x"}]
