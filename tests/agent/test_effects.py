"""The table of side effects: one descriptor each, found by its name, whose names are the ones
recorded in every workflow history and whose choices (limits, summaries, ids) both engines read.
"""

from __future__ import annotations

import pytest

from skillweave.agent import AgentSpec, new_state
from skillweave.agent.effect_models import (
    ActivityTimeouts,
    CreateSkillInput,
    InvokeModelInput,
    ReadResourceInput,
    RunScriptInput,
    SkillExample,
    ToolInvocation,
    TranscriptView,
)
from skillweave.agent.effects import (
    CREATE_SKILL,
    EFFECTS,
    INVOKE_MODEL,
    RUN_LIMITS,
    RUN_SKILL_SCRIPT,
    effect_named,
)

SCRIPT = RunScriptInput(
    run_id="r1",
    execution_id="skillweave-run-j1/script-7",
    skill="pdf",
    version="a" * 64,
    script="scripts/extract.py",
    seq=7,
    tool_call_id="call-1",
)


def test_every_effect_is_found_by_its_name_and_the_names_never_change() -> None:
    assert [effect.name for effect in EFFECTS] == [
        "prepare_catalog",
        "invoke_model",
        "load_skill",
        "read_skill_resource",
        "run_skill_script",
        "search_skills",
        "record_transcript",
        "create_skill",
        "publish_skill",
        "find_skills",
        "prepare_skill_request",
        "install_skill",
        "run_limits",
    ]
    for effect in EFFECTS:
        assert effect_named(effect.name) is effect
    with pytest.raises(KeyError):
        effect_named("roll_call")


def test_a_limit_is_named_or_computed_from_the_request() -> None:
    limits = ActivityTimeouts(model_seconds=60, script_seconds=100, short_seconds=5)
    assert INVOKE_MODEL.seconds(None, limits) == 60  # type: ignore[arg-type]
    assert RUN_SKILL_SCRIPT.seconds(SCRIPT, limits) == 100
    # A draft's examples run one after another, each a script run.
    draft = CreateSkillInput(
        run_id="r1",
        seq=3,
        tool_call_id="c",
        execution_id="x",
        name="adder",
        description="Adds.",
        instructions="Add.",
        examples=(SkillExample(script="a.py"), SkillExample(script="b.py")),
    )
    assert CREATE_SKILL.seconds(draft, limits) == 300
    assert CREATE_SKILL.activity_id is not None
    assert CREATE_SKILL.activity_id(draft) == "create-skill-3"


def test_a_script_runs_summary_says_what_runs() -> None:
    state = new_state(run_id="j1", task="t", spec=AgentSpec())
    summary = RUN_SKILL_SCRIPT.summary
    assert summary(SCRIPT, state) == "run pdf/scripts/extract.py"
    assert summary(SCRIPT.model_copy(update={"args": ("a", "b")}), state) == (
        "run pdf/scripts/extract.py a b"
    )
    as_tool = SCRIPT.model_copy(
        update={"run_json": ToolInvocation(tool="extract"), "tool_name": "pdf_extract"}
    )
    assert summary(as_tool, state) == "run pdf/scripts/extract.py (pdf_extract)"
    assert RUN_SKILL_SCRIPT.activity_id is not None
    assert RUN_SKILL_SCRIPT.activity_id(SCRIPT) == "script-7"


def test_a_model_calls_summary_names_the_reads_it_does_first() -> None:
    """The UI's line for a model call says which resource reads ride with it."""
    state = new_state(run_id="j1", task="t", spec=AgentSpec())
    call = InvokeModelInput(
        run_id="j1", system="s", tools=(), view=TranscriptView(upto=3), reply_seq=3
    )
    read = ReadResourceInput(
        run_id="j1", skill="pdf", version="a" * 64, path="forms.md", seq=1, tool_call_id="c1"
    )
    assert INVOKE_MODEL.summary(call, state) == "model turn 1"
    one = call.model_copy(update={"reads": (read,)})
    assert INVOKE_MODEL.summary(one, state) == "model turn 1, after reading pdf/forms.md"
    two = call.model_copy(update={"reads": (read, read.model_copy(update={"seq": 2}))})
    assert INVOKE_MODEL.summary(two, state) == "model turn 1, after 2 reads"


def test_only_the_workers_limits_are_asked_under_the_defaults_by_the_worker_itself() -> None:
    assert [e.name for e in EFFECTS if e.limits == "defaults"] == [RUN_LIMITS.name]
    assert [e.name for e in EFFECTS if e.implemented_by == "worker"] == [RUN_LIMITS.name]
