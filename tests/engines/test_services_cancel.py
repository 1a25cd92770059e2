"""Cancelling a script run cancels it at the manager: one place (``AgentServices``) for both
engines, so a cancelled run on either engine does not leave its script running."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from skillweave.agent.effect_models import RunScriptInput
from skillweave.agent.idempotency import execution_key
from skillweave.config import Settings
from skillweave.engines import AgentServices
from skillweave.errors import SandboxError
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library


class _HangingSandbox(FakeSandbox):
    """Never finishes a run; records what it is asked to cancel."""

    def __init__(self, store: LocalArtifactStore, *, cancel_fails: bool = False) -> None:
        super().__init__(store)
        self.started = asyncio.Event()
        self.cancelled: list[str] = []
        self.cancel_fails = cancel_fails

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def cancel(self, execution_id: str) -> bool:
        self.cancelled.append(execution_id)
        if self.cancel_fails:
            raise SandboxError("cannot reach the MCP manager")
        return True


async def _cancel_a_run(tmp_path: Path, sandbox_factory) -> tuple[_HangingSandbox, str]:  # type: ignore[no-untyped-def]
    store = LocalArtifactStore(tmp_path / "store")
    registry = sample_library(tmp_path / "skills")
    sandbox = sandbox_factory(store)
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=registry,
        store=store,
        provider=ScriptedProvider.from_yaml("turns: [{say: unused}]"),
        model="scripted",
        sandbox=sandbox,
    )
    key = execution_key("j1", 5)
    run = asyncio.create_task(
        services.run_skill_script(
            RunScriptInput(
                run_id="j1",
                execution_id=key,
                skill="profiler",
                version=registry.get("profiler").version,
                script="scripts/count.py",
                seq=5,
                tool_call_id="call-1",
            )
        )
    )
    await asyncio.wait_for(sandbox.started.wait(), timeout=10)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    return sandbox, key


async def test_a_cancelled_run_is_cancelled_at_the_manager(tmp_path: Path) -> None:
    sandbox, key = await _cancel_a_run(tmp_path, _HangingSandbox)
    assert sandbox.cancelled == [key]


async def test_a_failed_cancel_is_logged_and_the_cancellation_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        sandbox, key = await _cancel_a_run(
            tmp_path, lambda store: _HangingSandbox(store, cancel_fails=True)
        )
    assert sandbox.cancelled == [key]
    assert f"could not cancel execution {key}" in caplog.text
