"""ScriptedProvider: stateless replay, expectations, placeholders, and script errors."""

from __future__ import annotations

import asyncio
import textwrap
import time
from pathlib import Path

import pytest

from skillweave.errors import ConfigError, ScriptedModelError
from skillweave.llm import (
    Message,
    ModelProvider,
    ModelRequest,
    ScriptedProvider,
    ScriptedToolCall,
    ScriptedTurn,
    ToolCall,
    ToolSpec,
    Usage,
)

SCRIPT = textwrap.dedent(
    """\
    model: scripted-demo
    turns:
      - say: "Let me load the toolkit."
        tool_calls:
          - name: activate_skill
            arguments: {name: data-toolkit}
        usage: {input_tokens: 100, output_tokens: 20}
      - tool_calls:
          - name: run_skill_script
            arguments:
              skill: data-toolkit
              script: stats.py
              inputs: ["{{artifact:sales.csv}}"]
          - name: read_skill_resource
            id: my-own-id
            arguments: {skill: data-toolkit, path: REFERENCE.md}
        expect:
          tool_results:
            - contains: "skill_content"
              not_error: true
          tools_include: [run_skill_script]
      - say: "Stats: {{last_result}}"
        expect:
          tool_results:
            - matches: "rows: \\\\d+"
            - is_error: true
    """
)

TOOLS = (
    ToolSpec(name="activate_skill", description="Activate.", input_schema={"type": "object"}),
    ToolSpec(name="run_skill_script", description="Run.", input_schema={"type": "object"}),
)
USER = Message(role="user", text="Please analyse runs/run-7/inputs/sales.csv for me.")


def ask(*messages: Message, tools: tuple[ToolSpec, ...] = TOOLS) -> ModelRequest:
    return ModelRequest(model="scripted", system="sys", messages=(USER, *messages), tools=tools)


def assistant(*ids: str) -> Message:
    return Message(role="assistant", tool_calls=tuple(ToolCall(id=i, name="t") for i in ids))


def result(text: str, *, call: str = "call_1_1", error: bool = False) -> Message:
    return Message(role="tool", text=text, tool_call_id=call, tool_name="t", is_error=error)


@pytest.fixture
def scripted() -> ScriptedProvider:
    return ScriptedProvider.from_yaml(SCRIPT, source="demo.yaml")


async def test_replays_the_turns_in_order_with_deterministic_ids(
    scripted: ScriptedProvider,
) -> None:
    first = await scripted.complete(ask())
    assert first.message == Message(
        role="assistant",
        text="Let me load the toolkit.",
        tool_calls=(
            ToolCall(id="call_1_1", name="activate_skill", arguments={"name": "data-toolkit"}),
        ),
    )
    assert first.stop_reason == "tool_use"
    assert first.usage == Usage(input_tokens=100, output_tokens=20)
    assert first.model == "scripted-demo"

    second = await scripted.complete(
        ask(first.message, result('<skill_content name="data-toolkit">…</skill_content>'))
    )
    assert second.message.tool_calls == (
        ToolCall(
            id="call_2_1",
            name="run_skill_script",
            arguments={
                "skill": "data-toolkit",
                "script": "stats.py",
                "inputs": ["runs/run-7/inputs/sales.csv"],
            },
        ),
        ToolCall(
            id="my-own-id",
            name="read_skill_resource",
            arguments={"skill": "data-toolkit", "path": "REFERENCE.md"},
        ),
    )

    third = await scripted.complete(
        ask(
            first.message,
            result("<skill_content>"),
            second.message,
            result("rows: 12", call="call_2_1"),
            result("no such file", call="my-own-id", error=True),
        )
    )
    assert third.message == Message(role="assistant", text="Stats: no such file")
    assert third.stop_reason == "end_turn"


async def test_replay_is_stateless_the_same_request_gets_the_same_answer(
    scripted: ScriptedProvider,
) -> None:
    request = ask()
    answers = [await scripted.complete(request) for _ in range(3)]
    assert answers[0] == answers[1] == answers[2]


async def test_running_out_of_turns(scripted: ScriptedProvider) -> None:
    history = (
        assistant("a"),
        result("x", call="a"),
        assistant("b"),
        result("y", call="b"),
        assistant("c"),
    )
    with pytest.raises(
        ScriptedModelError, match=r"^scripted model has no turn 4; the script has 3 turns$"
    ):
        await scripted.complete(ask(*history))


async def test_an_unmet_contains_names_turn_expectation_and_actual(
    scripted: ScriptedProvider,
) -> None:
    with pytest.raises(ScriptedModelError) as caught:
        await scripted.complete(ask(assistant("call_1_1"), result("unknown skill 'data-toolkit'")))
    message = str(caught.value)
    assert "turn 2" in message
    assert "expected tool result 1 (t) to contain 'skill_content'" in message
    assert "unknown skill 'data-toolkit'" in message
    assert not caught.value.retryable


async def test_an_error_result_fails_not_error(scripted: ScriptedProvider) -> None:
    with pytest.raises(
        ScriptedModelError, match=r"turn 2: expected tool result 1 .* not to be an error"
    ):
        await scripted.complete(
            ask(assistant("call_1_1"), result("skill_content but failed", error=True))
        )


async def test_a_tool_not_offered_fails_tools_include(scripted: ScriptedProvider) -> None:
    with pytest.raises(
        ScriptedModelError, match=r"turn 2: expected the tools \['run_skill_script'\] to be offered"
    ):
        await scripted.complete(
            ask(assistant("call_1_1"), result("skill_content"), tools=TOOLS[:1])
        )


async def test_an_offered_tool_fails_tools_exclude() -> None:
    provider = ScriptedProvider.from_yaml(
        "turns:\n  - say: ok\n    expect: {tools_exclude: [run_skill_script]}\n"
    )
    assert (await provider.complete(ask(tools=TOOLS[:1]))).message.text == "ok"
    with pytest.raises(
        ScriptedModelError,
        match=r"turn 1: expected the tools \['run_skill_script'\] not to be offered",
    ):
        await provider.complete(ask())


async def test_matches_and_is_error_and_too_few_results() -> None:
    provider = ScriptedProvider.from_yaml(SCRIPT)
    history = (assistant("a"), result("skill_content", call="a"), assistant("b"))
    with pytest.raises(
        ScriptedModelError,
        match=r"turn 3: expected tool result 1 \(t\) to match /rows: \\d\+/; got: 'rows: many'",
    ):
        await provider.complete(ask(*history, result("rows: many", call="b")))
    with pytest.raises(
        ScriptedModelError, match=r"turn 3: expected tool result 2 .* to be an error"
    ):
        await provider.complete(
            ask(*history, result("rows: 3", call="b"), result("fine", call="c"))
        )
    with pytest.raises(ScriptedModelError, match=r"turn 3: expected 2 tool result\(s\), got 1"):
        await provider.complete(ask(*history, result("rows: 3", call="b")))


async def test_long_actual_text_is_truncated_in_the_error() -> None:
    provider = ScriptedProvider.from_yaml(SCRIPT)
    with pytest.raises(ScriptedModelError) as caught:
        await provider.complete(ask(assistant("a"), result("x" * 5000, call="a")))
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            "Stored `runs/r1/executions/9f2c/outputs/stats.json`.",
            "runs/r1/executions/9f2c/outputs/stats.json",
        ),
        (
            '{"outputs": [{"key": "runs/r1/executions/9f2c/outputs/stats.json", "size": 10}]}',
            "runs/r1/executions/9f2c/outputs/stats.json",
        ),
        (
            "saved to runs/r1/executions/9f2c/outputs/stats.json.",
            "runs/r1/executions/9f2c/outputs/stats.json",
        ),
        (
            "(see runs/r-2.x_y/executions/ab/outputs/stats.json)",
            "runs/r-2.x_y/executions/ab/outputs/stats.json",
        ),
        (
            "[runs/a/x/stats.json] then runs/b/y/stats.json\nand runs/c/z/stats.json.bak",
            "runs/b/y/stats.json",
        ),
        ('["runs/a/x","runs/b/outputs/stats.json"]', "runs/b/outputs/stats.json"),
    ],
)
async def test_artifact_placeholder_finds_the_key(text: str, key: str) -> None:
    provider = ScriptedProvider(
        [
            ScriptedTurn(
                tool_calls=(
                    ScriptedToolCall(name="t", arguments={"path": "{{artifact:stats.json}}"}),
                )
            )
        ]
    )
    response = await provider.complete(
        ModelRequest(model="m", messages=(Message(role="user", text=text),))
    )
    assert response.message.tool_calls[0].arguments == {"path": key}


async def test_artifact_placeholder_takes_the_most_recent_key_and_nests() -> None:
    provider = ScriptedProvider(
        [
            ScriptedTurn(),
            ScriptedTurn(
                tool_calls=(
                    ScriptedToolCall(
                        name="t",
                        arguments={
                            "inputs": [
                                {"file": "{{ artifact:stats.json }}"},
                                "copy of {{artifact:stats.json}}",
                            ],
                            "n": 3,
                            "flag": True,
                        },
                    ),
                )
            ),
        ]
    )
    messages = (
        Message(role="user", text="old: runs/r/executions/01/outputs/stats.json"),
        Message(role="assistant", text="ok"),
        Message(
            role="tool",
            text="new: runs/r/executions/02/outputs/stats.json and "
            "runs/r/executions/03/outputs/other.json",
            tool_call_id="x",
        ),
    )
    response = await provider.complete(ModelRequest(model="m", messages=messages))
    key = "runs/r/executions/02/outputs/stats.json"
    assert response.message.tool_calls[0].arguments == {
        "inputs": [{"file": key}, f"copy of {key}"],
        "n": 3,
        "flag": True,
    }


async def test_other_braces_are_left_alone() -> None:
    provider = ScriptedProvider([ScriptedTurn(say="Template: {{ name }} and {{artifact:}}")])
    response = await provider.complete(ModelRequest(model="m", messages=(USER,)))
    assert response.message.text == "Template: {{ name }} and {{artifact:}}"


async def test_artifact_with_no_matching_key_names_turn_and_name() -> None:
    provider = ScriptedProvider(
        [
            ScriptedTurn(
                tool_calls=(ScriptedToolCall(name="t", arguments={"p": "{{artifact:chart.png}}"}),)
            )
        ]
    )
    messages = (Message(role="user", text="runs/r/outputs/chart.png.tmp and sales/chart.png"),)
    with pytest.raises(
        ScriptedModelError,
        match=r"turn 1: \{\{artifact:chart.png\}\} matches no artifact key ending in '/chart.png'",
    ):
        await provider.complete(ModelRequest(model="m", messages=messages))


async def test_last_result_without_any_result() -> None:
    provider = ScriptedProvider([ScriptedTurn(say="{{last_result}}")])
    with pytest.raises(ScriptedModelError, match=r"turn 1: .*last_result.* no tool result"):
        await provider.complete(ModelRequest(model="m", messages=(USER,)))


async def test_usage_estimate_is_deterministic_chars_over_four() -> None:
    provider = ScriptedProvider([ScriptedTurn(say="12345678")], model="fake")
    request = ModelRequest(model="m", system="abcd", messages=(Message(role="user", text="efgh"),))
    response = await provider.complete(request)
    assert response.usage == Usage(input_tokens=2, output_tokens=2)
    assert response.model == "fake"
    assert provider.name == "scripted:fake"


async def test_delay_seconds_makes_the_call_slow_and_cancellable() -> None:
    provider = ScriptedProvider.from_yaml(
        "turns:\n  - say: slow\n    delay_seconds: 0.2\n  - say: fast\n"
    )
    request = ModelRequest(model="m", messages=(USER,))
    started = time.perf_counter()
    assert (await provider.complete(request)).message.text == "slow"
    assert time.perf_counter() - started >= 0.2
    # A call in its delay can be cancelled (a worker stopping mid-call).
    call = asyncio.create_task(provider.complete(request))
    await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    started = time.perf_counter()
    later = ModelRequest(model="m", messages=(USER, Message(role="assistant", text="slow")))
    assert (await provider.complete(later)).message.text == "fast"
    assert time.perf_counter() - started < 0.2
    with pytest.raises(ConfigError, match=r"turn 1: delay_seconds"):
        ScriptedProvider.from_yaml("turns:\n  - delay_seconds: -1\n")


async def test_is_a_model_provider(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text("turns:\n  - say: hi\n", encoding="utf-8")
    async with ScriptedProvider.from_file(path) as provider:
        assert isinstance(provider, ModelProvider)
        assert provider.name == "scripted:script"  # known by its file when it names no model
        assert (
            await provider.complete(ModelRequest(model="m", messages=(USER,)))
        ).message.text == "hi"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "turns: [\n",
            "script.yaml: not valid YAML: expected the node content, but found '<stream end>' "
            "at line 2",
        ),
        (
            "turns:\n  - tool_calls:\n      - name: t\n        arguments: {p: {{artifact:x}}}\n",
            "quote values that hold {{...}} placeholders",
        ),
        ("- say: hi\n", "script.yaml: a model script is a mapping with 'turns'"),
        ("", "not NoneType"),
        ("model: m\n", "script.yaml: 'turns' (a list of assistant turns) or 'cases'"),
        ("turns: []\n", "script.yaml: turns: Tuple should have at least 1 item"),
        (
            "turns:\n  - say: hi\n  - tool_calls: [{arguments: {}}]\n",
            "script.yaml: turn 2: tool_calls.0.name: Field required",
        ),
        ("turns:\n  - sayy: hi\n", "script.yaml: turn 1: sayy: Extra inputs are not permitted"),
        (
            "turns:\n  - expect: {tool_results: [{matches: '('}]}\n",
            "turn 1: expect.tool_results.0.matches: not a valid regular expression",
        ),
        (
            "turns:\n  - expect: {tool_results: [{is_error: true, not_error: true}]}\n",
            "is_error and not_error contradict each other",
        ),
        (
            "turns:\n  - usage: {input_tokens: -1}\n  - {}\n  - tool_calls: 3\n",
            "(and 1 more problem)",
        ),
    ],
)
def test_a_bad_script_is_a_config_error_naming_file_and_field(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        ScriptedProvider.from_file(path)
    assert problem in str(caught.value)
    assert str(caught.value).startswith(str(path))
    assert "\n" not in str(caught.value)


def test_a_missing_or_unreadable_script_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such model script"):
        ScriptedProvider.from_file(tmp_path / "missing.yaml")
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="cannot read the model script"):
        ScriptedProvider.from_file(tmp_path / "binary.yaml")
