"""The disclosure rules both front doors share: what is attachable, the activation rules and
their texts, executable-skill tools."""

from __future__ import annotations

from skillweave.agent import ActiveSkill, SkillTool, disclosure
from skillweave.skills import ToolSchema
from skillweave.skills.allowed_tools import parse_allowed_tools

SCHEMA = {"type": "object", "properties": {"value": {"type": "number"}}}


def test_attachable_is_the_roots_then_the_children_of_active_parents_once_each() -> None:
    active = {
        "toolkit": ActiveSkill(name="toolkit", version="v", children=("profiler", "notes")),
        "other": ActiveSkill(name="other", version="v", children=("profiler", "deep")),
    }
    assert disclosure.attachable(("notes", "toolkit"), active) == (
        "notes",
        "toolkit",
        "profiler",
        "deep",
    )
    assert disclosure.attachable(("a",), {}) == ("a",)


def test_activation_refuses_a_repeat_and_what_is_not_attachable() -> None:
    active = {"toolkit": ActiveSkill(name="toolkit", version="v", children=("profiler",))}
    assert disclosure.activation_refusal("profiler", roots=("toolkit",), active=active) is None
    assert disclosure.activation_refusal("toolkit", roots=("toolkit",), active=active) == (
        "Skill 'toolkit' is already active; its instructions are above."
    )
    refused = disclosure.activation_refusal("deep", roots=("toolkit",), active=active)
    assert refused == (
        "Skill 'deep' cannot be activated now. Skills that can: toolkit, profiler. "
        "A sub-skill becomes available once its parent skill is active."
    )


def test_not_active_says_how_to_activate_or_what_can_be() -> None:
    assert disclosure.not_active("a", ("a", "b")) == (
        "Skill 'a' is not active; activate it first with activate_skill(name='a')."
    )
    assert disclosure.not_active("z", ("a", "b")) == (
        "Skill 'z' is not active; skills that can be activated now: a, b."
    )


def test_long_name_lists_are_cut_to_a_dozen() -> None:
    names = [f"s{i}" for i in range(15)]
    assert disclosure.names_preview(names).endswith("s11 and 3 more")
    assert disclosure.names_preview([]) == "(none)"


def test_a_scripts_schemas_become_tools_named_by_their_schemas() -> None:
    one = ToolSchema(name="convert", description="Convert.", input_schema=SCHEMA)
    two = ToolSchema(name="parse", description="Parse.", input_schema=SCHEMA)
    (single,) = disclosure.skill_tools("conv", [("scripts/c.py", [one])])
    assert single == SkillTool(
        name="convert",
        tool="convert",
        script="scripts/c.py",
        description="Convert.",
        input_schema=SCHEMA,
        shared_script=False,
    )
    both = disclosure.skill_tools("conv", [("scripts/c.py", [one, two])])
    assert [t.name for t in both] == ["convert", "parse"]
    assert all(t.shared_script for t in both)
    active = {"conv": ActiveSkill(name="conv", version="v", tools=both)}
    assert disclosure.find_skill_tool(active, "parse") == (active["conv"], both[1])
    assert disclosure.find_skill_tool(active, "nope") is None
    assert disclosure.registered_tools(active) == ("convert", "parse")


def test_a_tool_is_prefixed_with_its_skill_only_when_its_name_is_taken() -> None:
    search = ToolSchema(name="search", description="Search.", input_schema=SCHEMA)
    own = ToolSchema(name="activate_skill", description="Mine.", input_schema=SCHEMA)
    # Taken by a tool of a skill active before: the first keeps the name, this one is prefixed.
    (second,) = disclosure.skill_tools("code_search", [("execute.py", [search])], taken={"search"})
    assert (second.name, second.tool) == ("code_search__search", "search")
    # A front door's own tool is never shadowed.
    (renamed,) = disclosure.skill_tools("kit", [("execute.py", [own])])
    assert (renamed.name, renamed.tool) == ("kit__activate_skill", "activate_skill")
    # Two scripts of one skill offering the same tool: three distinct names, first unprefixed.
    tools = disclosure.skill_tools(
        "kit", [("a.py", [search]), ("b.py", [search]), ("c.py", [search])]
    )
    names = [t.name for t in tools]
    assert names[:2] == ["search", "kit__search"]
    assert len(set(names)) == 3
    assert names[2].endswith("__search")
    assert [t.script for t in tools] == ["a.py", "b.py", "c.py"]


def test_the_activation_footer_lists_tools_then_notes() -> None:
    (tool,) = disclosure.skill_tools(
        "conv", [("s.py", [ToolSchema(name="x", description="X.", input_schema=SCHEMA)])]
    )
    assert disclosure.activation_footer([tool], ["a problem"]) == (
        "\nTools registered by this skill: x.\n\nNote: a problem\n"
    )
    assert disclosure.activation_footer([], []) == ""


def test_the_activate_enum_leaves_out_what_is_active_until_everything_is() -> None:
    def enum(roots: tuple[str, ...], active: dict[str, ActiveSkill]) -> list[str]:
        specs = disclosure.tool_specs(roots=roots, active=active, search=False)
        return specs[0].input_schema["properties"]["name"]["enum"]

    a = ActiveSkill(name="a", version="v")
    assert enum(("a", "b"), {"a": a}) == ["b"]
    assert enum(("a",), {"a": a}) == ["a"]
    assert [s.name for s in disclosure.tool_specs(roots=(), active={}, search=False)] == [
        "read_skill_resource",
        "run_skill_script",
    ]


async def test_activation_tools_are_asked_per_script_and_failures_become_notes() -> None:
    asked: list[str] = []
    go = ToolSchema(name="go", description="Go.", input_schema=SCHEMA)

    async def schemas(script: str) -> tuple[ToolSchema, ...] | str:
        asked.append(script)
        return (go,) if script == "scripts/go.py" else f"{script}: not a tool schema"

    tools, notes = await disclosure.activation_tools(
        ["scripts/go.py", "scripts/bad.py"], schemas, skill="kit", taken=(), notes=()
    )
    assert (tools, notes, asked) == (
        list(disclosure.skill_tools("kit", [("scripts/go.py", [go])])),
        ["scripts/bad.py: not a tool schema"],
        ["scripts/go.py", "scripts/bad.py"],
    )
    # Named around what the run registered already.
    tools, _ = await disclosure.activation_tools(
        ["scripts/go.py"], schemas, skill="kit", taken=("go",), notes=()
    )
    assert [t.name for t in tools] == ["kit__go"]
    # A skill whose scripts cannot run registers nothing, and nothing is run to ask.
    asked.clear()
    tools, notes = await disclosure.activation_tools(
        ["scripts/go.py"], schemas, skill="kit", taken=(), notes=["its package is refused"]
    )
    assert (tools, notes, asked) == ([], ["its package is refused"], [])


# --- a call's arguments (issue 24) -------------------------------------------------------------

STRICT = {
    "type": "object",
    "properties": {"word": {"type": "string"}, "times": {"type": "integer", "minimum": 1}},
    "required": ["word"],
    "additionalProperties": False,
}


def test_the_raw_arguments_key_is_the_providers() -> None:
    from skillweave.llm import RAW_ARGUMENTS_KEY

    assert disclosure.RAW_ARGUMENTS == RAW_ARGUMENTS_KEY
    assert disclosure.raw_arguments({RAW_ARGUMENTS_KEY: '{"a": '}) == '{"a": '
    assert disclosure.raw_arguments({RAW_ARGUMENTS_KEY: '{"a": ', "b": 1}) is None
    assert disclosure.raw_arguments({"word": "x"}) is None


def test_unreadable_arguments_say_what_was_wrong_and_what_came() -> None:
    refused = disclosure.arguments_refusal("t", {"_raw": '{"word": "a'}, STRICT, cut_off=True)
    assert refused == (
        "Your arguments were not valid JSON: Unterminated string starting at: line 1 column 10"
        " (char 9). t was not run; call it again with all its arguments as one JSON object."
        " Your reply was cut off at the output token limit, which ended them early."
        """ They began: '{"word": "a'"""
    )
    long = disclosure.unreadable_arguments("t", "x" * 500)
    assert "Expecting value: line 1 column 1 (char 0)" in long
    assert long.endswith("x" * 160 + "…'")


def test_an_executable_tool_is_held_to_its_whole_schema() -> None:
    assert disclosure.arguments_refusal("s__t", {"word": "a", "times": 2}, STRICT) is None
    refused = disclosure.arguments_refusal("s__t", {"times": 0, "loud": True}, STRICT)
    assert refused is not None
    assert refused.startswith("Your arguments to s__t do not match its schema: ")
    for problem in (
        "'word' is a required property",
        "Additional properties are not allowed ('loud' was unexpected)",
        "'times': 0 is less than the minimum of 1",
    ):
        assert problem in refused
    many = {
        "type": "object",
        "properties": {name: {"type": "string"} for name in "abcdefg"},
    }
    refused = disclosure.arguments_refusal("s__t", dict.fromkeys("abcdefg", 1), many)
    assert refused is not None
    assert "; and 2 more. It was not run" in refused


def test_the_own_tools_leave_what_their_rules_say_better_to_them() -> None:
    """Missing, mistyped and not-attachable values get the rules' own words (the same as the
    MCP front door's); what the schema adds is arguments the tool does not take."""
    (run,) = [
        spec
        for spec in disclosure.tool_specs(roots=("a",), active={}, search=False)
        if spec.name == disclosure.RUN_SKILL_SCRIPT
    ]
    schema = run.input_schema
    tool = disclosure.RUN_SKILL_SCRIPT
    assert disclosure.arguments_refusal(tool, {}, schema) is None
    assert disclosure.arguments_refusal(tool, {"skill": 1, "args": [1, 2.5]}, schema) is None
    refused = disclosure.arguments_refusal(tool, {"skill": "a", "script": "x", "env": {}}, schema)
    assert refused is not None
    assert "Additional properties are not allowed ('env' was unexpected)" in refused


def test_a_schema_that_cannot_be_applied_lets_the_arguments_go_on() -> None:
    remote = {"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}}
    assert disclosure.arguments_refusal("s__t", {"a": 1}, remote) is None


# --- allowed-tools (issue 25) --------------------------------------------------------------


def _limited(name: str, allowed: str | None, *tools: SkillTool) -> ActiveSkill:
    parsed = parse_allowed_tools(allowed)[0] if allowed is not None else None
    return ActiveSkill(name=name, version="v", tools=tools, allowed=parsed)


def _tool(name: str, script: str) -> SkillTool:
    return SkillTool(name=name, tool=name, script=script, description="T.", input_schema=SCHEMA)


def test_while_a_skill_limits_the_tools_only_the_union_of_what_is_allowed_is_offered() -> None:
    shout, render = _tool("shout", "scripts/shout.py"), _tool("render_report", "scripts/r.sh")

    def offered(active: dict[str, ActiveSkill]) -> list[str]:
        return [s.name for s in disclosure.tool_specs(roots=("x",), active=active, search=True)]

    free = {"shouter": _limited("shouter", None, shout)}
    assert offered(free) == [
        "activate_skill",
        "read_skill_resource",
        "run_skill_script",
        "search_skills",
        "shout",
    ]
    limited = {**free, "deer": _limited("deer", "read_file render_report", render)}
    assert offered(limited) == [
        "activate_skill",
        "read_skill_resource",
        "search_skills",
        "render_report",
    ]
    assert not disclosure.permits(limited, skill="shouter", script="scripts/shout.py", tool=shout)
    both = {**limited, "pdf": _limited("pdf", "Bash(python:*) Read")}
    assert "shout" in offered(both)
    assert "run_skill_script" in offered(both)
    assert disclosure.permits(both, skill="pdf", script="scripts/fill.py")
    assert not disclosure.permits(both, skill="pdf", script="scripts/flatten.sh")
    refusal = disclosure.not_permitted(both, "Running pdf/scripts/flatten.sh")
    assert refusal.startswith("Running pdf/scripts/flatten.sh is not allowed while skills")
    assert "deer: the tool render_report; pdf: scripts *.py" in refusal


def test_a_skill_pre_approves_only_its_own_runs() -> None:
    shout = _tool("shout", "scripts/shout.py")
    active = {
        "pdf": _limited("pdf", "Bash(python:*)"),
        "shouter": _limited("shouter", None, shout),
    }
    assert disclosure.pre_approved(active, skill="pdf", script="scripts/fill.py")
    assert not disclosure.pre_approved(active, skill="pdf", script="scripts/run.sh")
    # pdf's grant lets shouter's python tool run, but only a person approves it.
    assert disclosure.permits(active, skill="shouter", script="scripts/shout.py", tool=shout)
    assert not disclosure.pre_approved(
        active, skill="shouter", script="scripts/shout.py", tool=shout
    )
