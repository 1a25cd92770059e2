"""The loop's pause point: a paused run resumes in a new loop exactly where it stopped."""

from __future__ import annotations

from pathlib import Path

from skillweave.agent import AgentLoop, AgentSpec, new_state
from skillweave.agent.state import AgentState
from skillweave.config import Settings
from skillweave.engines import AgentServices
from skillweave.engines.direct import DirectRuntime
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, RecordingProvider, run_agent, sample_library

SCRIPT = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
  - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
  - tool_calls:
      - {name: read_skill_resource, arguments: {skill: profiler, path: references/guide.md}}
  - say: "read it: {{last_result}}"
"""


async def test_a_paused_state_survives_the_wire_and_finishes_in_a_new_loop(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    provider = RecordingProvider(ScriptedProvider.from_yaml(SCRIPT))
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=provider,
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    spec = AgentSpec()
    state = new_state(run_id="p", task="read the guide", spec=spec)
    runs = 0
    while True:
        runs += 1
        loop = AgentLoop(DirectRuntime(services), spec, pause=lambda s: True)
        state = await loop.run(state)
        if state.finished:
            break
        # What continue-as-new carries: the state through JSON.
        state = AgentState.model_validate_json(state.model_dump_json())
    assert runs == 4  # one turn per run
    assert state.status == "completed"
    assert list(state.active) == ["toolkit", "profiler"]
    assert "Counting is easy" in (state.answer or "")
    # Each call saw the whole conversation: the last one carried the task and every result.
    texts = provider.texts(4)
    assert texts[0] == "read the guide"
    assert any("Counting is easy" in t for t in texts)


async def test_answers_are_reported_as_events(tmp_path: Path) -> None:
    run = await run_agent(tmp_path, 'turns: [{say: "hello there"}]')
    answered = [e for e in run.events if e.kind == "answered"]
    assert [e.detail for e in answered] == ["hello there"]
    assert run.kinds()[-2:] == ["answered", "run_finished"]
