"""One scenario suite, run on both engines: the direct engine in-process, and the Temporal
engine with a real dev server and worker.

Every scenario uses the real MCP manager with a local warm pool of real executor processes,
the bundled skills plus ``test-tools``, and a scripted model whose ``expect`` blocks check what
each model call received. A scenario passes only when both engines behave the same way.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import pytest

from skillweave.agent import AgentSpec
from skillweave.agent.effect_models import ApprovalDecision
from skillweave.agent.spec import ApprovalOptions
from skillweave.agent.state import Budgets
from tests.integration.harness import Manager, eventually
from tests.integration.temporal.harness import TOOLS, EngineKind, Stack, kind_is, open_engine

pytestmark = pytest.mark.asyncio(loop_scope="session")

MESSY_CSV = b"region,units,price\nnorth,3,9.5\n south ,5,12\nnorth,3,9.5\n,,\neast,7,8.25\n"

TREE = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: csv-profiler}}]
  - tool_calls: [{name: activate_skill, arguments: {name: data-toolkit}}]
    expect: {tool_results: [{is_error: true, contains: "cannot be activated now"}]}
  - tool_calls: [{name: activate_skill, arguments: {name: csv-profiler}}]
    expect:
      tool_results: [{not_error: true, contains: "<sub_skills>"}]
  - tool_calls:
      - {name: read_skill_resource,
         arguments: {skill: csv-profiler, path: references/stats-format.md}}
    expect:
      tool_results: [{not_error: true, contains: '<skill_content name="csv-profiler">'}]
      tools_include: [profile_csv]
  - say: "Format page: {{last_result}}"
    expect: {tool_results: [{not_error: true, contains: "csv-profiler/stats@1"}]}
"""


async def test_activation_expands_the_tree_parent_then_child_and_reads_a_resource(
    stack: Stack, engine_kind: EngineKind
) -> None:
    async with open_engine(engine_kind, stack, TREE) as harness:
        result, events = await harness.run(
            "What does a csv profile contain?", agent=AgentSpec(skills=("data-toolkit",))
        )

    assert result.status == "completed", result.reason
    # The child was refused before its parent was active, then attached once it was.
    refused = [e for e in events if e.kind == "tool_refused"]
    assert [(e.tool, e.turn) for e in refused] == [("activate_skill", 1)]
    activated = [e for e in events if e.kind == "skill_activated"]
    assert [e.skill for e in activated] == ["data-toolkit", "csv-profiler"]
    assert activated[0].detail.startswith("sub-skills: ")
    assert "csv-profiler" in activated[0].detail
    assert activated[1].tools_registered == ("profile_csv",)
    assert list(result.active_skills) == ["data-toolkit", "csv-profiler"]
    assert result.active_skills["csv-profiler"] == stack.registry.get("csv-profiler").version
    reads = [e for e in events if e.kind == "resource_read"]
    assert [(e.skill, e.detail) for e in reads] == [("csv-profiler", "references/stats-format.md")]
    assert "csv-profiler/stats@1" in (result.answer or "")
    assert result.turns == 5
    assert result.script_runs == 0


CHAIN = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: data-toolkit}}]
  - tool_calls:
      - {name: activate_skill, arguments: {name: csv-cleaner}}
      - {name: activate_skill, arguments: {name: csv-profiler}}
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: csv-cleaner, script: scripts/clean_csv.py,
                    args: [inputs/sales.csv, --strip, --drop-empty-rows, --dedupe],
                    inputs: ["{{artifact:sales.csv}}"]}
    expect: {tools_include: [clean_csv, profile_csv]}
  - tool_calls:
      - name: profile_csv
        arguments: {input_artifacts: ["{{artifact:clean.csv}}"]}
    expect: {tool_results: [{not_error: true, contains: "clean.csv"}]}
  - say: "Profiled the cleaned file: {{artifact:stats.json}}"
    expect: {tool_results: [{not_error: true, contains: "stats.json"}]}
"""


async def test_a_script_chain_passes_artifacts_between_real_sandboxes(
    stack: Stack, engine_kind: EngineKind
) -> None:
    async with open_engine(engine_kind, stack, CHAIN) as harness:
        result, events = await harness.run(
            "Clean the attached sales.csv, then profile the cleaned file.",
            agent=AgentSpec(skills=("data-toolkit",)),
            files={"sales.csv": MESSY_CSV},
        )

    assert result.status == "completed", result.reason
    assert result.script_runs == 2
    ran = [e for e in events if e.kind == "script_ran"]
    assert [(e.skill, e.status) for e in ran] == [
        ("csv-cleaner", "succeeded"),
        ("csv-profiler", "succeeded"),
    ]
    names = [ref.key.rsplit("/", 1)[1] for ref in result.outputs]
    assert sorted(names) == ["clean.csv", "cleaning.json", "stats.json"]
    by_name = {ref.key.rsplit("/", 1)[1]: ref for ref in result.outputs}
    # The first sandbox cleaned the upload; the second profiled exactly what the first wrote.
    cleaned = (await stack.store.get_bytes(by_name["clean.csv"])).decode()
    assert cleaned.splitlines() == [
        "region,units,price",
        "north,3,9.5",
        "south,5,12",
        "east,7,8.25",
    ]
    stats = json.loads(await stack.store.get_bytes(by_name["stats.json"]))
    assert stats["source"] == "inputs/clean.csv"
    assert stats["rows"] == 3
    assert by_name["stats.json"].key in (result.answer or "")


CONVERSATION = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: test-tools}}]
  - say: "First answer: the notes page is ready."
  - tool_calls:
      - {name: read_skill_resource, arguments: {skill: test-tools, path: references/notes.md}}
  - say: "Second answer: {{last_result}}"
    expect: {tool_results: [{not_error: true, contains: "secret word"}]}
"""


async def test_a_conversation_takes_a_follow_up_then_closes_when_idle(
    stack: Stack, engine_kind: EngineKind
) -> None:
    idle = 3.0
    async with open_engine(engine_kind, stack, CONVERSATION) as harness:
        run_id = await harness.start(
            "Prepare the notes.",
            agent=AgentSpec(skills=(TOOLS,), follow_up_seconds=idle),
        )
        first = await harness.wait_event(run_id, kind_is("answered"))
        assert first.detail == "First answer: the notes page is ready."
        reply = await harness.follow_up(run_id, "And what does the page say?")
        answered_at = time.monotonic()
        result = await harness.engine.result(run_id)
        closed_after = time.monotonic() - answered_at
        events = await harness.all_events(run_id)

    assert reply.startswith("Second answer: ")
    assert "secret word" in reply
    assert result.status == "completed", result.reason
    assert result.answer == reply
    assert result.turns == 4
    received = [e for e in events if e.kind == "message_received"]
    assert [e.detail for e in received] == ["And what does the page say?"]
    assert [e.kind for e in events].count("answered") == 2
    # The session closed on its own, after the idle timeout and not long after.
    assert idle * 0.5 <= closed_after < idle + 5


@dataclass(frozen=True)
class BudgetCase:
    script: str
    limits: Budgets
    reason: str
    turns: int
    script_runs: int


BUDGETS = {
    "max_turns": BudgetCase(
        script="""
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: test-tools}}]
  - tool_calls: [{name: read_skill_resource,
                  arguments: {skill: test-tools, path: references/notes.md}}]
  - say: "never reached"
""",
        limits=Budgets(max_turns=2),
        reason="max_turns reached (2 model calls)",
        turns=2,
        script_runs=0,
    ),
    "max_script_runs": BudgetCase(
        script="""
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: test-tools}}]
  - tool_calls:
      - {name: run_skill_script, arguments: {skill: test-tools, script: scripts/echo.py,
                                             args: [one]}}
      - {name: run_skill_script, arguments: {skill: test-tools, script: scripts/echo.py,
                                             args: [two]}}
  - say: "never reached"
""",
        limits=Budgets(max_script_runs=1),
        reason="max_script_runs reached (1 script run)",
        turns=2,
        script_runs=1,
    ),
}


@pytest.mark.parametrize("budget", list(BUDGETS))
async def test_a_spent_budget_ends_the_run_as_budget_exhausted_with_the_reason(
    stack: Stack, engine_kind: EngineKind, budget: str
) -> None:
    case = BUDGETS[budget]
    async with open_engine(engine_kind, stack, case.script) as harness:
        result, events = await harness.run(
            "Keep going.", agent=AgentSpec(skills=(TOOLS,), limits=case.limits)
        )

    assert result.status == "budget_exhausted"
    assert result.reason == case.reason
    assert result.turns == case.turns
    assert result.script_runs == case.script_runs
    assert result.answer is None
    finished = [e for e in events if e.kind == "run_finished"]
    assert [(e.status, e.detail) for e in finished] == [("budget_exhausted", case.reason)]


CANCEL = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: test-tools}}]
  - tool_calls:
      - {name: run_skill_script,
         arguments: {skill: test-tools, script: scripts/slow.py, args: ["30", long]}}
  - say: "never reached"
"""


@pytest.mark.parametrize("engine_kind", ["direct", "temporal"])
async def test_cancel_stops_a_run_blocked_in_a_script_run_and_its_sandbox(
    stack: Stack, engine_kind: EngineKind
) -> None:
    manager = stack.manager
    cancelled_before = await manager.executions("cancelled")
    async with open_engine(engine_kind, stack, CANCEL) as harness:
        run_id = await harness.start("Take your time.", agent=AgentSpec(skills=(TOOLS,)))
        # task 0, activate call 1, skill 2, run call 3: the run's result goes to seq 4.
        execution_id = harness.execution_id(run_id, 4)

        async def running() -> bool:
            found = await manager.execution(execution_id)
            return found is not None and found["state"] == "running"

        await eventually(running, what=f"{execution_id} running at the manager")
        started = time.monotonic()
        await harness.engine.cancel(run_id)
        result = await harness.engine.result(run_id)
        stopped_in = time.monotonic() - started

    assert result.status == "cancelled", result.reason
    assert result.answer is None
    assert stopped_in < 15, "the run waited for the 30 s script"

    # The manager stopped the run (it was not left to its timeout) and nothing is left running.
    async def finished() -> dict[str, Any] | None:
        found = await manager.execution(execution_id)
        return found if found is not None and found["state"] == "finished" else None

    found = await eventually(finished, timeout=10, what=f"{execution_id} finished")
    assert found["result"]["status"] == "cancelled"
    assert found["result"]["duration_ms"] < 15_000
    assert await manager.executions("cancelled") == cancelled_before + 1
    pool = await eventually(
        lambda: _idle(manager), what="no sandbox busy at the manager after the cancel"
    )
    assert pool["busy"] == 0


async def _idle(manager: Manager) -> dict[str, object] | None:
    pool = await manager.pool()
    return pool if pool["busy"] == 0 else None


APPROVALS = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: test-tools}}]
  - tool_calls:
      - {name: run_skill_script, arguments: {skill: test-tools, script: scripts/echo.py,
                                             args: [approved]}}
      - {name: run_skill_script, arguments: {skill: test-tools, script: scripts/echo.py,
                                             args: [denied]}}
      - {name: run_skill_script, arguments: {skill: test-tools, script: scripts/echo.py,
                                             args: [unanswered]}}
  - say: "Done."
    expect:
      tool_results:
        - {not_error: true, contains: "approved"}
        - {is_error: true, contains: "was not approved: not today"}
        - {is_error: true, contains: "was not approved: nobody decided within"}
"""


async def test_script_runs_that_need_approval_wait_and_run_only_when_approved(
    stack: Stack, engine_kind: EngineKind
) -> None:
    timeout = 2.5
    ran_before = await stack.manager.executions()
    async with open_engine(engine_kind, stack, APPROVALS) as harness:
        run_id = await harness.start(
            "Echo three words.",
            agent=AgentSpec(
                skills=(TOOLS,),
                approvals=ApprovalOptions(skills=(TOOLS,), timeout_seconds=timeout),
            ),
        )
        asked = await harness.wait_event(run_id, kind_is("approval_requested"))
        assert asked.detail == f"{TOOLS}/scripts/echo.py approved"
        if engine_kind == "temporal":
            view = await harness.status(run_id)
            assert view.phase == "awaiting_approval"
            assert view.awaiting_approval is not None
            assert view.awaiting_approval.args == ("approved",)
            assert view.script_runs == 0
        await harness.engine.approve(run_id, ApprovalDecision(approved=True))
        second = await harness.wait_event(run_id, kind_is("approval_requested"), count=2)
        assert second.detail.endswith("echo.py denied")
        await harness.engine.approve(run_id, ApprovalDecision(approved=False, note="not today"))
        # The third request is left alone: it is denied when its timeout passes.
        result = await harness.engine.result(run_id)
        events = await harness.all_events(run_id)

    assert result.status == "completed", result.reason
    assert result.script_runs == 1
    decided = [(e.status, e.detail) for e in events if e.kind == "approval_decided"]
    assert [status for status, _ in decided] == ["approved", "denied", "denied"]
    assert decided[1][1].endswith("(not today)")
    assert f"nobody decided within {timeout:g} s" in decided[2][1]
    ran = [e for e in events if e.kind == "script_ran"]
    assert len(ran) == 1
    assert ran[0].status == "succeeded"
    assert [e.tool for e in events if e.kind == "tool_refused"] == ["run_skill_script"] * 2
    # Only the approved run reached a sandbox.
    assert await stack.manager.executions() == ran_before + 1
