"""The agent loop's rules, each exercised through a whole run with the scripted model.

Real services, a real local store and the real scripted provider; the sandbox is the fake in
``harness`` (a subprocess per script run). Integration tests repeat the main path through the
real manager and pool.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.agent import AgentSpec, Budgets, PreloadOptions
from skillweave.skills import SkillRegistry, SkillScanner
from tests.agent.harness import run_agent, sample_library, write_skill


def _tool_results(run, *, tool: str | None = None) -> list[dict]:
    return [
        m
        for m in run.transcript()
        if m["role"] == "tool" and (tool is None or m["tool_name"] == tool)
    ]


async def test_a_run_activates_reads_runs_and_answers(tmp_path: Path) -> None:
    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
          - tool_calls:
              - {name: activate_skill, arguments: {name: profiler}}
              - {name: read_skill_resource, arguments: {skill: profiler, path: references/guide.md}}
            expect: {tool_results: [{contains: '<skill_content name="toolkit">'}]}
          - tool_calls:
              - name: run_skill_script
                arguments: {skill: profiler, script: scripts/count.py, args: [inputs/a.txt],
                            inputs: ["{{artifact:a.txt}}"]}
            expect:
              tool_results: [{contains: "Run scripts/count.py"}, {contains: "Counting is easy"}]
          - say: "There are {{last_result}}"
            expect: {tool_results: [{contains: "words: 3", not_error: true}]}
        """,
        inputs={"a.txt": b"one two three"},
    )
    assert run.result.status == "completed", run.result.reason
    assert run.result.turns == 4
    assert run.result.script_runs == 1
    assert list(run.result.active_skills) == ["toolkit", "profiler"]
    (output,) = run.result.outputs
    assert output.key.endswith("/outputs/count.txt")
    assert (run.store.root / output.key).read_text() == "3"
    assert "words: 3" in (run.result.answer or "")
    assert run.kinds()[0] == "run_started"
    assert run.kinds()[-1] == "run_finished"
    # The transcript is in the store, one message per entry, in order.
    roles = [m["role"] for m in run.transcript()]
    assert roles == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert run.result.transcript_entries == len(roles)


async def test_activate_skill_offers_only_attachable_names_and_trees_grow_the_enum(
    tmp_path: Path,
) -> None:
    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
          - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
            expect:
              tool_results: [{is_error: true, contains: "cannot be activated now"}]
          - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
            expect: {tool_results: [{not_error: true, contains: "<sub_skills>"}]}
          - say: done
            expect: {tool_results: [{contains: '<skill_content name="profiler">'}]}
        """,
    )
    assert run.result.status == "completed"
    first = run.provider.offered(1)["activate_skill"]["properties"]["name"]["enum"]
    assert set(first) == {"toolkit", "shouter", "notes"}  # roots only: no child
    third = run.provider.offered(3)["activate_skill"]["properties"]["name"]["enum"]
    assert "profiler" in third
    assert "toolkit" not in third
    refused = _tool_results(run, tool="activate_skill")[0]
    assert "toolkit" in refused["text"]  # says what can be activated


async def test_tools_that_need_an_active_skill_refuse_politely(tmp_path: Path) -> None:
    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls:
              - {name: read_skill_resource, arguments: {skill: notes, path: SKILL.md}}
              - {name: run_skill_script, arguments: {skill: profiler, script: scripts/count.py}}
          - say: ok
            expect:
              tool_results:
                - {is_error: true, contains: "activate it first with activate_skill(name='notes')"}
                - {is_error: true, contains: "is not active"}
        """,
    )
    assert run.result.status == "completed"
    assert run.sandbox.requests == []  # nothing ran
    assert run.kinds().count("tool_refused") == 2


async def test_repeat_activation_answers_already_active_without_repeating_content(
    tmp_path: Path,
) -> None:
    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls: [{name: activate_skill, arguments: {name: notes}}]
          - tool_calls: [{name: activate_skill, arguments: {name: notes}}]
          - say: ok
            expect: {tool_results: [{is_error: true, contains: "already active"}]}
        """,
    )
    assert run.result.status == "completed"
    bodies = [m for m in run.transcript() if "Take notes." in m["text"]]
    assert len(bodies) == 1
    assert run.kinds().count("skill_activated") == 1


async def test_executable_skill_registers_its_tool_and_runs_it_with_run_json(
    tmp_path: Path,
) -> None:
    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls: [{name: activate_skill, arguments: {name: shouter}}]
          - tool_calls:
              - name: shout
                arguments: {word: hello, input_artifacts: ["{{artifact:a.txt}}"]}
            expect:
              tools_include: [shout]
              tool_results: [{contains: "Tools registered by this skill: shout"}]
          - say: ok
            expect: {tool_results: [{contains: "shouted hello inputs: ['a.txt']"}]}
        """,
        inputs={"a.txt": b"x"},
    )
    assert run.result.status == "completed", run.result.reason
    assert "shout" not in run.provider.offered(1)
    schema = run.provider.offered(2)["shout"]
    assert schema["required"] == ["word"]
    assert "input_artifacts" in schema["properties"]
    help_run, tool_run = run.sandbox.requests
    assert help_run.args == ["--help-json"]
    assert tool_run.args == ["--run-json", '{"word": "hello"}']  # input_artifacts taken out
    assert [ref.key.rsplit("/", 1)[1] for ref in tool_run.inputs] == ["a.txt"]
    (output,) = run.result.outputs
    assert (run.store.root / output.key).read_text() == "HELLO"


async def test_tool_schemas_are_cached_by_skill_version(tmp_path: Path) -> None:
    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls: [{name: activate_skill, arguments: {name: shouter}}]
          - say: ok
        """,
    )
    services = run.engine.services
    skill = services.registry.get("shouter")
    (schema,) = await services.activations.tool_schemas(skill, "scripts/shout.py")
    (tool,) = run.engine.state(run.result.run_id).active["shouter"].tools
    assert (schema.name, schema.input_schema) == (tool.tool, tool.input_schema)
    assert len(run.sandbox.requests) == 1  # the second lookup did not run the script


async def test_mistakes_come_back_as_tool_results(tmp_path: Path) -> None:
    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls:
              - {name: activate_skill, arguments: {name: toolkit}}
              - {name: no_such_tool, arguments: {}}
              - {name: activate_skill, arguments: {}}
          - tool_calls:
              - {name: activate_skill, arguments: {name: profiler}}
              - {name: read_skill_resource, arguments: {skill: toolkit, path: ../escape.md}}
              - {name: read_skill_resource, arguments: {skill: toolkit, path: missing.md}}
          - tool_calls:
              - {name: run_skill_script, arguments: {skill: profiler, script: scripts/nope.py}}
              - name: run_skill_script
                arguments: {skill: profiler, script: scripts/count.py, inputs: [runs/x/y.txt]}
              - {name: run_skill_script, arguments: {skill: profiler, script: scripts/count.py,
                                                     args: "not a list"}}
          - say: ok
        """,
    )
    assert run.result.status == "completed", run.result.reason
    errors = [m["text"] for m in _tool_results(run) if m["is_error"]]
    assert any("no tool named 'no_such_tool'" in t and "activate_skill" in t for t in errors)
    assert any("activate_skill needs 'name'" in t for t in errors)
    assert any("'..' is not allowed" in t for t in errors)
    assert any("no such file" in t for t in errors)
    assert any("is not in skill 'profiler'" in t for t in errors)
    assert any("Unknown artifact 'runs/x/y.txt'" in t for t in errors)
    assert any("'args' must be a list" in t for t in errors)
    assert len(errors) == 7


async def test_compaction_elides_old_tool_outputs_but_never_skill_content(tmp_path: Path) -> None:
    big = "data " * 400  # 2,000 characters a read
    reads = "\n".join(
        "  - tool_calls: [{name: read_skill_resource, arguments: {skill: notes, path: big.md}}]"
        for _ in range(6)
    )
    sample_library(tmp_path / "skills")
    (tmp_path / "skills" / "notes" / "big.md").write_text(big)
    registry = sample_library(tmp_path / "skills")  # rescanned with the new file
    run = await run_agent(
        tmp_path,
        f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: notes}}}}]
{reads}
  - say: done
""",
        registry=registry,
        spec=AgentSpec(limits=Budgets(transcript_chars=5_000, keep_recent_outputs=1)),
    )
    assert run.result.status == "completed", run.result.reason
    last = run.provider.texts(len(run.provider.requests))
    assert sum(len(t) for t in last) <= 5_000 + 2_000  # the budget, plus the kept latest output
    assert any("Take notes." in t for t in last)  # the skill content is still there, whole
    elided = [t for t in last if t.startswith("[read_skill_resource notes/big.md")]
    assert len(elided) >= 3
    assert sum(1 for t in last if t == big) >= 1  # the latest read is intact
    assert "compacted" in run.kinds()
    # Nothing was deleted: the store still holds every read in full.
    assert sum(1 for m in run.transcript() if m["text"] == big) == 6


@pytest.mark.parametrize(
    ("budgets", "reason"),
    [
        (Budgets(max_turns=3), "max_turns reached (3 model calls)"),
        (Budgets(max_tokens=250), "max_tokens reached"),
        (Budgets(max_script_runs=2), "max_script_runs reached (2 script runs)"),
    ],
)
async def test_each_budget_ends_the_run_with_a_clear_status(
    tmp_path: Path, budgets: Budgets, reason: str
) -> None:
    # Runs of a script the skill has (it fails without arguments, but it ran): a script the
    # manager refuses to run does not count against the budget.
    runs = "\n".join(
        "  - tool_calls: [{name: run_skill_script, arguments: "
        "{skill: shouter, script: scripts/shout.py}}]\n"
        "    usage: {input_tokens: 100, output_tokens: 10}"
        for _ in range(8)
    )
    run = await run_agent(
        tmp_path,
        f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: shouter}}}}]
    usage: {{input_tokens: 100, output_tokens: 10}}
{runs}
  - say: never reached
""",
        spec=AgentSpec(limits=budgets),
    )
    assert run.result.status == "budget_exhausted"
    assert reason in (run.result.reason or "")
    assert run.kinds()[-1] == "run_finished"
    assert run.events[-1].status == "budget_exhausted"


async def test_preload_activates_the_best_match_before_the_first_call(tmp_path: Path) -> None:
    script = """
        turns:
          - say: ok
        """
    run = await run_agent(
        tmp_path,
        script,
        task="I need to shout a word loudly with the shouter",
        spec=AgentSpec(preload=PreloadOptions(enabled=True, min_score=0.1)),
    )
    assert run.result.status == "completed"
    assert "shouter" in run.result.active_skills
    first = run.provider.texts(1)
    assert any("The skill 'shouter' was activated for this task." in t for t in first)
    assert run.kinds()[:3] == ["run_started", "skill_activated", "preloaded"]


@pytest.mark.parametrize(
    ("task", "preloaded"),
    [
        ("I need to shout a word loudly with the shouter", {"shouter"}),
        ("What is the weather in Lisbon tomorrow?", set()),
    ],
)
async def test_preload_without_a_threshold_uses_the_strategy_default(
    tmp_path: Path, task: str, preloaded: set[str]
) -> None:
    """The selection strategy's own threshold (hybrid here: both rankings must agree)."""
    run = await run_agent(
        tmp_path,
        "turns: [{say: ok}]",
        task=task,
        spec=AgentSpec(preload=PreloadOptions(enabled=True)),
    )
    assert set(run.result.active_skills) == preloaded


async def test_preload_is_off_by_default(tmp_path: Path) -> None:
    run = await run_agent(
        tmp_path, "turns: [{say: ok}]", task="I need to shout a word loudly with the shouter"
    )
    assert run.result.active_skills == {}


async def test_an_infrastructure_failure_fails_the_run_with_its_reason(tmp_path: Path) -> None:
    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls: [{name: activate_skill, arguments: {name: notes}}]
        """,
    )
    assert run.result.status == "failed"
    assert "ScriptedModelError" in (run.result.reason or "")
    # The loop's own messages were still stored before it stopped.
    assert run.transcript()[0]["text"] == "Do the thing."


async def test_allowed_skills_limit_the_catalog_and_activation(tmp_path: Path) -> None:
    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls: [{name: activate_skill, arguments: {name: shouter}}]
          - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
          - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
          - say: ok
        """,
        spec=AgentSpec(skills=("toolkit",)),
    )
    assert run.result.status == "completed"
    assert list(run.result.active_skills) == ["toolkit", "profiler"]  # a parent allows its tree
    assert "shouter" not in run.provider.requests[0].system


async def test_auto_mode_offers_search_and_its_hits_become_attachable(tmp_path: Path) -> None:
    from skillweave.agent import CatalogOptions

    run = await run_agent(
        tmp_path,
        """
        turns:
          - tool_calls: [{name: search_skills, arguments: {query: shouter skill}}]
            expect: {tools_include: [search_skills]}
          - tool_calls: [{name: activate_skill, arguments: {name: shouter}}]
            expect: {tool_results: [{contains: '<skill name="shouter">'}]}
          - say: ok
            expect: {tool_results: [{not_error: true, contains: "<skill_content"}]}
        """,
        task="take some notes",
        spec=AgentSpec(catalog=CatalogOptions(mode="auto", top_k=1)),
    )
    assert run.result.status == "completed", run.result.reason
    enum = run.provider.offered(1)["activate_skill"]["properties"]["name"]["enum"]
    assert enum == ["notes"]  # auto: the one best match for the task
    assert "shouter" in run.result.active_skills
    assert "skills_searched" in run.kinds()


async def test_auto_load_skills_are_active_before_the_first_model_call(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    sample_library(root)
    write_skill(root, "house-style", "# House style", meta='auto_load: "true"')
    write_skill(root, "toolkit/checker", "# Checker", meta='auto_load: "true"')  # a child
    write_skill(root, "switched-off", "# Off", meta='auto_load: "true"')
    scanned = SkillScanner([root]).scan()
    registry = SkillRegistry.from_scan(scanned, disabled=["switched-off"])
    run = await run_agent(
        tmp_path,
        """
        turns:
          - say: ok
        """,
        spec=AgentSpec(skills=("house-style", "toolkit", "notes", "switched-off")),
        registry=registry,
    )
    assert run.result.status == "completed", run.result.reason
    # Allowed (a parent allows its tree) and not switched off by the operator.
    assert list(run.result.active_skills) == ["house-style", "checker"]
    loaded = [e.skill for e in run.events if e.kind == "preloaded"]
    assert loaded == ["house-style", "checker"]
    (request,) = run.provider.requests
    texts = [message.text for message in request.messages]
    assert texts[0] == "Do the thing."
    assert texts[1].startswith("The skill 'house-style' was activated for this task.")
