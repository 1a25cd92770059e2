"""Agent specs from YAML: the fields, the seeds' `agent:` wrapper, and one-line errors."""

from __future__ import annotations

import pytest

from skillweave.agent import AgentSpec, parse_agent_spec
from skillweave.errors import AgentSpecError


def test_a_full_spec_parses() -> None:
    spec = parse_agent_spec(
        """
        name: data-analyst
        instruction: You analyse data files.
        model: openai:gpt-4o-mini
        skills: [data-toolkit, unit-converter]
        catalog: {mode: auto, top_k: 4}
        preload: {enabled: true, min_score: 3.5}
        limits: {max_turns: 12, max_tokens: 50000, max_script_runs: 3}
        """
    )
    assert spec.name == "data-analyst"
    assert spec.model == "openai:gpt-4o-mini"
    assert spec.skills == ("data-toolkit", "unit-converter")
    assert spec.catalog.mode == "auto"
    assert spec.catalog.top_k == 4
    assert spec.preload.enabled
    assert spec.preload.min_score == 3.5
    assert spec.limits.max_turns == 12
    assert spec.limits.max_script_runs == 3


def test_the_agent_wrapper_and_an_empty_file_are_accepted() -> None:
    assert parse_agent_spec("agent:\n  name: wrapped\n").name == "wrapped"
    assert parse_agent_spec("") == AgentSpec()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: [unclosed", "a.yaml: not valid YAML at line 1"),
        ("- a list", "a.yaml: an agent spec is a YAML mapping"),
        ("limits: {max_turns: 0}", "a.yaml: limits.max_turns: Input should be greater than"),
        ("catalog: {mode: everything}", "a.yaml: catalog.mode: Input should be"),
        ("modle: x", "a.yaml: modle: Extra inputs are not permitted"),
    ],
)
def test_bad_specs_name_the_file_and_the_field(text: str, message: str) -> None:
    with pytest.raises(AgentSpecError) as caught:
        parse_agent_spec(text, source="a.yaml")
    assert str(caught.value).startswith(message)
