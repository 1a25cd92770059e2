"""A 200-turn run: the transcript lives in the store by reference and memory stays bounded."""

from __future__ import annotations

from pathlib import Path

from skillweave.agent import AgentSpec, Budgets
from tests.agent.harness import run_agent, sample_library

TURNS = 200
PAGE = "line of a long reference file\n" * 300  # 9,000 characters a read


async def test_a_200_turn_run_keeps_state_and_model_calls_bounded(tmp_path: Path) -> None:
    sample_library(tmp_path / "skills")
    (tmp_path / "skills" / "notes" / "page.md").write_text(PAGE)
    registry = sample_library(tmp_path / "skills")
    reads = "\n".join(
        "  - tool_calls: [{name: read_skill_resource, arguments: {skill: notes, path: page.md}}]"
        for _ in range(TURNS - 2)
    )
    budget = 40_000
    run = await run_agent(
        tmp_path,
        f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: notes}}}}]
{reads}
  - say: all read
""",
        registry=registry,
        spec=AgentSpec(limits=Budgets(max_turns=TURNS, max_tokens=10**8, transcript_chars=budget)),
    )
    assert run.result.status == "completed", run.result.reason
    assert run.result.turns == TURNS
    stored = run.transcript()
    assert len(stored) == run.result.transcript_entries == 2 * TURNS  # task, then pairs
    content = sum(len(m["text"]) for m in stored)
    assert content > 1_700_000  # ~1.8 MB of reads went through the run...

    state = run.engine.state(run.result.run_id)
    state_bytes = len(state.model_dump_json())
    # ...but the state holds refs: a few hundred bytes an entry, no read's text.
    assert state_bytes < 400 * len(state.transcript)
    assert PAGE[:200] not in state.model_dump_json()
    # Every model call stayed within the compaction budget (plus the two newest reads kept).
    largest = max(sum(len(m.text) for m in r.messages) for r in run.provider.requests)
    assert largest <= budget + 2 * len(PAGE)
    # The skill's content was carried to the very last call.
    assert any("Take notes." in t for t in run.provider.texts(TURNS))
