"""A skill's evals as its author wrote them: skill-creator's evals.json read unchanged, our
checks superset, triggers.json in both of its shapes, and hostile files refused in one line
naming the field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillweave.evals.suite import (
    MAX_EVALS,
    MAX_SUITE_BYTES,
    MAX_TRIGGERS,
    AnswerContains,
    EvalSuiteError,
    FileMatchesSchema,
    ScriptRan,
    output_name,
    parse_suite,
    parse_triggers,
)


def suite(*evals: dict[str, Any], **more: Any) -> bytes:
    return json.dumps({"skill_name": "pdf", "evals": list(evals), **more}).encode()


def case(**fields: Any) -> dict[str, Any]:
    return {"id": 1, "prompt": "Fill the form", "expectations": ["The form is filled"]} | fields


def test_skill_creators_format_is_read_as_written() -> None:
    # The example of skill-creator's schemas, field for field.
    written = suite(
        {
            "id": 1,
            "prompt": "User's example prompt",
            "expected_output": "Description of expected result",
            "files": ["evals/files/sample1.pdf"],
            "expectations": ["The output includes X", "The skill used script Y"],
        }
    )

    (only,) = parse_suite(written, source="pdf/evals/evals.json", skill="pdf").evals

    assert only.id == "1"
    assert only.prompt == "User's example prompt"
    assert only.files == ("evals/files/sample1.pdf",)
    assert only.expectations == ("The output includes X", "The skill used script Y")
    assert only.checks == ()
    assert only.graded == 2


def test_the_checks_superset_is_read_into_its_models() -> None:
    checks = [
        {"type": "script_ran", "skill": "pdf", "script": "scripts/fill.py"},
        {"type": "answer_contains", "text": "filled"},
        {"type": "file_matches_schema", "path": "outputs/form.json", "schema": {"type": "object"}},
    ]

    (only,) = parse_suite(suite(case(checks=checks)), source="s").evals

    assert only.checks == (
        ScriptRan(skill="pdf", script="scripts/fill.py"),
        AnswerContains(text="filled"),
        FileMatchesSchema(path="outputs/form.json", schema={"type": "object"}),
    )
    assert only.graded == 4
    assert output_name("outputs/form.json") == output_name("form.json") == "form.json"


def test_a_check_survives_the_wire_it_crosses_to_a_worker() -> None:
    check = FileMatchesSchema(path="form.json", schema={"type": "object"})
    assert FileMatchesSchema.model_validate(check.model_dump(mode="json")) == check


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (b"{not json", "not JSON"),
        (b"[]", "an object"),
        (suite(), "evals"),
        (suite(case(), case()), "the id '1' is used twice"),
        (suite(case(expectations=[])), "eval 1: no expectations and no checks"),
        (suite(case(id=True)), "id"),
        (suite(case(id="../x")), "id"),
        (suite(case(prompt="")), "prompt"),
        (suite(case(files=["../../etc/passwd"])), "files"),
        (suite(case(files=["/etc/passwd"])), "files"),
        (suite(case(checks=[{"type": "file_exists", "path": "a/../../b"}])), "path"),
        (suite(case(checks=[{"type": "run_shell", "command": "id"}])), "checks"),
        (suite(case(checks=[{"type": "answer_contains", "text": "x", "extra": 1}])), "extra"),
        (suite(*[case(id=n) for n in range(MAX_EVALS + 1)]), "evals"),
    ],
)
def test_a_suite_that_cannot_be_used_is_refused_naming_what(written: bytes, said: str) -> None:
    with pytest.raises(EvalSuiteError) as refused:
        parse_suite(written, source="pdf/evals/evals.json")

    assert str(refused.value).startswith("pdf/evals/evals.json: ")
    assert said in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_suite_of_another_skill_or_too_large_is_refused() -> None:
    with pytest.raises(EvalSuiteError, match="is not the skill's name 'docx'"):
        parse_suite(suite(case()), source="s", skill="docx")
    with pytest.raises(EvalSuiteError, match=f"larger than {MAX_SUITE_BYTES} bytes"):
        parse_suite(b" " * (MAX_SUITE_BYTES + 1), source="s")


def test_triggers_are_read_in_both_shapes_prompt_standing_for_query() -> None:
    listed = json.dumps(
        [
            {"query": "fill my tax form", "should_trigger": True},
            {"query": "weather", "should_trigger": False},
        ]
    )
    wrapped = json.dumps(
        {
            "evals": [
                {"prompt": "fill my tax form", "should_trigger": True},
                {"prompt": "weather", "should_trigger": False},
            ]
        }
    )

    assert parse_triggers(listed, source="t") == parse_triggers(wrapped, source="t")
    assert [case.should_trigger for case in parse_triggers(listed, source="t")] == [True, False]


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ('{"query": "x"}', "a list"),
        ('[{"query": "x"}]', "[0].should_trigger"),
        ('[{"query": "", "should_trigger": true}]', "[0].query"),
        (json.dumps([{"query": "x", "should_trigger": False}] * (MAX_TRIGGERS + 1)), "more than"),
    ],
)
def test_triggers_that_cannot_be_used_are_refused(written: str, said: str) -> None:
    with pytest.raises(EvalSuiteError, match=said.replace("[", r"\[").replace("]", r"\]")):
        parse_triggers(written, source="t")
