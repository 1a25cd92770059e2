"""Tool specs built from the state, and executable tool names."""

from __future__ import annotations

from skillweave.agent import ActiveSkill, AgentState, SkillTool, skill_tool_name, tool_specs


def _names(state: AgentState) -> list[str]:
    return [spec.name for spec in tool_specs(state)]


def test_a_fresh_run_offers_activation_reading_and_running() -> None:
    state = AgentState(run_id="j", task="t", roots=("a", "b"))
    assert _names(state) == ["activate_skill", "read_skill_resource", "run_skill_script"]
    enum = tool_specs(state)[0].input_schema["properties"]["name"]["enum"]
    assert enum == ["a", "b"]


def test_search_is_offered_only_when_enabled() -> None:
    state = AgentState(run_id="j", task="t", roots=("a",), search_enabled=True)
    assert "search_skills" in _names(state)


def test_active_skills_narrow_the_skill_argument_and_add_their_tools() -> None:
    tool = SkillTool(
        name="convert_units",
        tool="convert_units",
        script="scripts/convert.py",
        description="Convert.",
        input_schema={"type": "object", "properties": {"value": {"type": "number"}}},
    )
    state = AgentState(
        run_id="j",
        task="t",
        roots=("conv", "toolkit"),
        active={
            "conv": ActiveSkill(name="conv", version="v", tools=(tool,)),
            "toolkit": ActiveSkill(name="toolkit", version="v", children=("child",)),
        },
    )
    specs = {spec.name: spec for spec in tool_specs(state)}
    assert specs["activate_skill"].input_schema["properties"]["name"]["enum"] == ["child"]
    assert specs["run_skill_script"].input_schema["properties"]["skill"]["enum"] == [
        "conv",
        "toolkit",
    ]
    schema = specs["convert_units"].input_schema
    assert set(schema["properties"]) == {"value", "input_artifacts"}
    assert tool.input_schema["properties"].keys() == {"value"}  # the original is untouched


def test_long_tool_names_are_shortened_but_stay_distinct() -> None:
    skill = "a-very-long-skill-name-that-goes-on-and-on-and-on-and-on"
    first = skill_tool_name(skill, "render_the_report")
    second = skill_tool_name(skill + "x", "render_the_report")
    assert len(first) <= 64
    assert len(second) <= 64
    assert first != second
    assert first.endswith("__render_the_report")
    assert skill_tool_name("conv", "convert") == "conv__convert"
