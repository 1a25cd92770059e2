"""ScriptedProvider's per-task scripts (``cases:``): the first case whose ``when`` holds plays,
by the task and by the skills offered (catalog or activate_skill's enum); none holding, and a
script giving both forms, are errors; the choice is stateless."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from skillweave.errors import ConfigError, ScriptedModelError
from skillweave.llm import Message, ModelRequest, ScriptedProvider, ToolCall, ToolSpec

PLAYBOOK = textwrap.dedent(
    """\
    model: playbook
    cases:
      - when: {task: 'Convert \\d+ km', offered: [unit-converter], not_offered: [log-triage]}
        turns:
          - say: activating
            tool_calls: [{name: activate_skill, arguments: {name: unit-converter}}]
          - say: "with the skill: {{last_result}}"
      - when: {task: 'Convert \\d+ km'}
        turns: [{say: from memory}]
      - when: {offered: [log-triage]}
        turns: [{say: triage}]
    """
)

CATALOG = (
    'Skills:\n<available_skills>\n<skill name="{name}">Converts units.</skill>\n</available_skills>'
)


def activate(*names: str) -> ToolSpec:
    return ToolSpec(
        name="activate_skill",
        description="Activate.",
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "enum": list(names)}},
        },
    )


def ask(
    task: str, *later: Message, system: str = "", tools: tuple[ToolSpec, ...] = ()
) -> ModelRequest:
    messages = (Message(role="user", text=task), *later)
    return ModelRequest(model="m", system=system, messages=messages, tools=tools)


@pytest.fixture
def playbook() -> ScriptedProvider:
    return ScriptedProvider.from_yaml(PLAYBOOK, source="playbook.yaml")


async def text(provider: ScriptedProvider, request: ModelRequest) -> str:
    return (await provider.complete(request)).message.text


async def test_a_skill_in_the_catalog_is_offered_and_its_case_plays(
    playbook: ScriptedProvider,
) -> None:
    request = ask("Convert 5 km to miles", system=CATALOG.format(name="unit-converter"))
    reply = await playbook.complete(request)
    assert reply.message.text == "activating"
    assert reply.message.tool_calls[0].arguments == {"name": "unit-converter"}


async def test_a_skill_in_the_activate_enum_is_offered(playbook: ScriptedProvider) -> None:
    request = ask("Convert 5 km to miles", tools=(activate("unit-converter"),))
    assert await text(playbook, request) == "activating"


async def test_without_the_skill_the_next_case_plays(playbook: ScriptedProvider) -> None:
    assert await text(playbook, ask("Convert 5 km to miles")) == "from memory"
    other = ask("Convert 5 km to miles", tools=(activate("csv-profiler"),))
    assert await text(playbook, other) == "from memory"


async def test_not_offered_rules_a_case_out(playbook: ScriptedProvider) -> None:
    both = ask(
        "Convert 5 km to miles",
        system=CATALOG.format(name="unit-converter"),
        tools=(activate("log-triage"),),
    )
    assert await text(playbook, both) == "from memory"


async def test_the_task_is_the_first_user_message_searched(playbook: ScriptedProvider) -> None:
    task = "Please: Convert 12 km, then round."
    assert await text(playbook, ask(task)) == "from memory"
    later = ask("What is the weather?", Message(role="user", text="Convert 5 km"))
    with pytest.raises(ScriptedModelError, match="no case holds for the task 'What is"):
        await playbook.complete(later)


async def test_the_first_case_that_holds_plays(playbook: ScriptedProvider) -> None:
    # Both the second and the third case hold; the second comes first.
    request = ask("Convert 7 km", tools=(activate("log-triage"),))
    assert await text(playbook, request) == "from memory"
    assert await text(playbook, ask("Why is it failing?", tools=(activate("log-triage"),))) == (
        "triage"
    )


async def test_turns_within_a_case_are_numbered_by_assistant_messages(
    playbook: ScriptedProvider,
) -> None:
    system = CATALOG.format(name="unit-converter")
    request = ask(
        "Convert 5 km to miles",
        Message(role="assistant", tool_calls=(ToolCall(id="c1", name="activate_skill"),)),
        Message(role="tool", text="3.107 mi", tool_call_id="c1", tool_name="activate_skill"),
        system=system,
    )
    assert await text(playbook, request) == "with the skill: 3.107 mi"
    # Stateless: the same request, asked again or after another, gets the same answer.
    await playbook.complete(ask("Convert 5 km"))
    assert await text(playbook, request) == "with the skill: 3.107 mi"


async def test_past_the_cases_last_turn_names_the_case(playbook: ScriptedProvider) -> None:
    request = ask("Convert 5 km", Message(role="assistant", text="from memory"))
    with pytest.raises(ScriptedModelError, match=r"no turn 2; case 2 has 1 turn$"):
        await playbook.complete(request)


async def test_no_case_holding_names_the_start_of_the_task(playbook: ScriptedProvider) -> None:
    task = "Summarise this very long document " + "x" * 200
    with pytest.raises(ScriptedModelError) as caught:
        await playbook.complete(ask(task))
    message = str(caught.value)
    assert repr(task[:80] + "…") in message
    assert "x" * 81 not in message
    assert "skills offered: none" in message


async def test_an_expectation_failing_in_a_case_names_case_and_turn() -> None:
    provider = ScriptedProvider.from_yaml(
        "cases:\n  - when: {}\n    turns:\n      - expect: {tools_include: [activate_skill]}\n"
    )
    with pytest.raises(ScriptedModelError, match=r"scripted model, case 1, turn 1: expected"):
        await provider.complete(ask("anything"))


async def test_an_empty_when_holds_for_every_request() -> None:
    provider = ScriptedProvider.from_yaml("cases:\n  - when: {}\n    turns: [{say: any}]\n")
    assert await text(provider, ask("")) == "any"
    assert await text(provider, ModelRequest(model="m", messages=())) == "any"


async def test_a_hostile_activate_schema_offers_nothing(playbook: ScriptedProvider) -> None:
    for schema in (
        {"properties": "x"},
        {"properties": {"name": ["unit-converter"]}},
        {"properties": {"name": {"enum": "unit-converter"}}},
        {"properties": {"name": {"enum": [1, None, {"a": "unit-converter"}]}}},
    ):
        tool = ToolSpec(name="activate_skill", description="", input_schema=schema)
        assert await text(playbook, ask("Convert 5 km", tools=(tool,))) == "from memory"


def test_repr_counts_the_cases(playbook: ScriptedProvider) -> None:
    assert repr(playbook) == "ScriptedProvider(model='playbook', cases=3)"


def test_turns_and_cases_together_in_code_are_a_config_error(
    playbook: ScriptedProvider,
) -> None:
    with pytest.raises(ConfigError, match="'turns' or 'cases', not both"):
        ScriptedProvider(playbook.cases[0].turns, cases=playbook.cases)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "turns: [{say: a}]\ncases:\n  - when: {}\n    turns: [{say: b}]\n",
            "'turns' and 'cases' together: give one of them",
        ),
        ("cases: []\n", "cases: Tuple should have at least 1 item"),
        ("cases:\n  - turns: [{say: a}]\n", "case 1: when: Field required"),
        ("cases:\n  - when: {}\n", "case 1: turns: Field required"),
        ("cases:\n  - when: {}\n    turns: []\n", "case 1: turns: Tuple should have at least 1"),
        (
            "cases:\n  - when: {task: a}\n    turns: [{say: a}]\n"
            "  - when: {tsak: b}\n    turns: [{say: b}]\n",
            "case 2: when.tsak: Extra inputs are not permitted",
        ),
        (
            "cases:\n  - when: {task: '('}\n    turns: [{say: a}]\n",
            "case 1: when.task: not a valid regular expression",
        ),
        (
            "cases:\n  - when: {offered: unit-converter}\n    turns: [{say: a}]\n",
            "case 1: when.offered: Input should be a valid tuple",
        ),
        (
            "cases:\n  - when: {}\n    turns: [{say: a}, {sayy: b}]\n",
            "case 1: turn 2: sayy: Extra inputs are not permitted",
        ),
        (
            "cases:\n  - when: {}\n    turns: [{say: a}]\n    extra: 1\n",
            "case 1: extra: Extra inputs are not permitted",
        ),
    ],
)
def test_a_bad_playbook_is_a_config_error_naming_file_case_and_field(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "playbook.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        ScriptedProvider.from_file(path)
    assert problem in str(caught.value)
    assert str(caught.value).startswith(str(path))
    assert "\n" not in str(caught.value)
