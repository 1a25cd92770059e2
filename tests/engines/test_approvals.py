"""Human in the loop on the direct engine: script runs of listed skills wait for a decision."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillweave.agent import AgentSpec
from skillweave.agent.effect_models import ApprovalDecision
from skillweave.agent.spec import ApprovalOptions
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.errors import AgentError
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, RecordingProvider, sample_library

SCRIPT = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
  - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: profiler, script: scripts/count.py, args: [inputs/a.txt],
                    inputs: ["{{artifact:a.txt}}"]}
  - say: "done: {{last_result}}"
"""


async def _start(tmp_path: Path, approvals: ApprovalOptions) -> tuple[DirectEngine, FakeSandbox]:
    store = LocalArtifactStore(tmp_path / "store")
    sandbox = FakeSandbox(store)
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=RecordingProvider(ScriptedProvider.from_yaml(SCRIPT)),
        model="scripted",
        sandbox=sandbox,  # type: ignore[arg-type]
    )
    engine = DirectEngine(services)
    ref = await store.put_bytes("runs/j/inputs/a.txt", b"one two three")
    await engine.start(
        RunRequest(run_id="j", task="count", agent=AgentSpec(approvals=approvals), inputs=(ref,))
    )
    return engine, sandbox


async def _until_awaiting(engine: DirectEngine) -> None:
    async for event in engine.events("j"):
        if event.kind == "approval_requested":
            return
    pytest.fail("the run never asked for approval")


async def test_an_approved_run_goes_ahead(tmp_path: Path) -> None:
    engine, sandbox = await _start(tmp_path, ApprovalOptions(skills=("profiler",)))
    await _until_awaiting(engine)
    assert sandbox.requests == []  # nothing ran before the decision
    await engine.approve("j", ApprovalDecision(approved=True, by="tester"))
    result = await engine.result("j")
    assert result.status == "completed"
    assert result.script_runs == 1
    assert len(sandbox.requests) == 1
    decided = [e async for e in engine.events("j") if e.kind == "approval_decided"]
    assert decided[0].status == "approved"


async def test_a_denied_run_is_refused_to_the_model(tmp_path: Path) -> None:
    engine, sandbox = await _start(tmp_path, ApprovalOptions(skills=("*",)))
    await _until_awaiting(engine)
    await engine.approve("j", ApprovalDecision(approved=False, note="not on prod data"))
    result = await engine.result("j")
    assert result.status == "completed"
    assert result.script_runs == 0
    assert sandbox.requests == []
    assert "was not approved: not on prod data" in (result.answer or "")


async def test_nobody_deciding_denies_after_the_timeout(tmp_path: Path) -> None:
    engine, sandbox = await _start(
        tmp_path, ApprovalOptions(skills=("profiler",), timeout_seconds=0.2)
    )
    result = await asyncio.wait_for(engine.result("j"), timeout=10)
    assert result.script_runs == 0
    assert "nobody decided within 0.2 s" in (result.answer or "")
    assert sandbox.requests == []


async def test_unlisted_skills_run_without_asking(tmp_path: Path) -> None:
    engine, _ = await _start(tmp_path, ApprovalOptions(skills=("notes",)))
    result = await engine.result("j")
    assert result.script_runs == 1
    with pytest.raises(AgentError, match="not waiting for an approval"):
        await engine.approve("j", ApprovalDecision(approved=True))
