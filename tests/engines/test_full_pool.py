"""A full sandbox pool is back-pressure: a script step asks again after each 503's
Retry-After for up to SANDBOX__QUEUE_SECONDS, and only then fails to the engine's retries
(each of which would count against the activity's attempts)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import cast

import pytest

from skillweave.agent.effect_models import RunScriptInput
from skillweave.config import Settings
from skillweave.engines.services import AgentServices
from skillweave.errors import PoolExhaustedError
from skillweave.llm.base import ModelProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.skills import SkillLibrary
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill


class FullThenFree:
    """A manager whose pool is full for the first `full` requests (503, Retry-After 1 s)."""

    def __init__(self, full: int) -> None:
        self.full = full
        self.calls: list[float] = []

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        self.calls.append(time.monotonic())
        if len(self.calls) <= self.full:
            raise PoolExhaustedError("no sandbox free within 10 s", retry_after=1)
        return ExecutionResult(
            execution_id=request.execution_id,
            run_id=request.run_id,
            skill=request.skill,
            version=request.version,
            script=request.script,
            status="succeeded",
            exit_code=0,
            stdout="ran\n",
        )


def services(tmp_path: Path, sandbox: FullThenFree, queue_seconds: float) -> AgentServices:
    library = tmp_path / "library"
    write_skill(library / "tool", description="A tool. Use when testing.", files={"run.py": ""})
    settings = Settings(
        _env_file=None,
        skills={"dirs": [str(library)]},
        sandbox={"queue_seconds": queue_seconds},
    )
    return AgentServices(
        settings=settings,
        registry=SkillLibrary(settings.skills).refresh(),
        store=LocalArtifactStore(tmp_path / "store"),
        provider=cast(ModelProvider, object()),
        model="none",
        sandbox=cast(SandboxClient, sandbox),
    )


def step(services: AgentServices) -> RunScriptInput:
    return RunScriptInput(
        run_id="run-1",
        execution_id="wf/script-1",
        skill="tool",
        version=services.registry.get("tool").version,
        script="run.py",
        seq=1,
        tool_call_id="call-1",
    )


async def test_a_step_waits_for_a_full_pool_then_runs(tmp_path: Path) -> None:
    sandbox = FullThenFree(full=2)
    agent = services(tmp_path, sandbox, queue_seconds=30)
    outcome = await agent.run_skill_script(step(agent))
    assert outcome.status == "succeeded"
    assert len(sandbox.calls) == 3
    gaps = [later - earlier for earlier, later in itertools.pairwise(sandbox.calls)]
    assert all(0.45 <= gap <= 5 for gap in gaps), gaps  # Retry-After 1 s, jittered down


async def test_past_the_queue_budget_the_full_pool_is_the_engines_to_retry(
    tmp_path: Path,
) -> None:
    sandbox = FullThenFree(full=100)
    agent = services(tmp_path, sandbox, queue_seconds=0)
    with pytest.raises(PoolExhaustedError):
        await agent.run_skill_script(step(agent))
    assert len(sandbox.calls) == 1
