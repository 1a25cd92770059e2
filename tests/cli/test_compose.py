"""The CLI package's shape and its composition: small modules by concern that never import
the package itself (also an import-linter contract), a start-up that loads neither Temporal
nor the web stack, an engine opened from the settings' engine choice, and a run on an opened
engine that is cancelled when interrupted unless it runs on workers elsewhere.

The engines themselves run in tests/integration/cli (direct, embedded, Temporal)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import skillweave.cli
from skillweave.agent.events import AgentEvent
from skillweave.agent.spec import AgentSpec
from skillweave.cli.agent_run import run_agent
from skillweave.cli.compose import OpenedEngine, open_engine
from skillweave.config import Settings
from skillweave.engines import DirectEngine, RunRequest, RunResult
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import REPO

CLI = Path(skillweave.cli.__file__).parent
MAX_LINES = 400


@pytest.mark.parametrize("module", sorted(CLI.glob("*.py")), ids=lambda path: path.name)
def test_every_cli_module_is_small(module: Path) -> None:
    lines = module.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module.name}: {lines} lines; split it by concern"


def test_the_cli_starts_without_temporal_or_the_web_stack() -> None:
    heavy = ["temporalio", "fastapi", "uvicorn", "httpx", "mcp_manager", "skillweave.cli.compose"]
    code = f"import sys, skillweave.cli; print(' '.join(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.strip() == ""


def _settings(tmp_path: Path) -> Settings:
    # A configured manager: nothing is started (the client connects on first use).
    return Settings(
        _env_file=None,
        storage={"backend": "local", "local_dir": str(tmp_path / "store")},
        sandbox={"manager_url": "http://127.0.0.1:9", "manager_token": "t" * 16},
        model={"provider": "scripted", "name": str(REPO / "examples" / "demo" / "script.yaml")},
        workflow={"execution_engine": "direct"},
    )


async def test_open_engine_opens_the_direct_engine_of_the_settings(tmp_path: Path) -> None:
    async with open_engine(_settings(tmp_path)) as opened:
        assert isinstance(opened.engine, DirectEngine)
        assert opened.services is not None
        assert opened.services.store is opened.store
        assert opened.manager_url == "http://127.0.0.1:9"
        assert opened.model.startswith("scripted")
        assert not opened.runs_elsewhere
        assert opened.ui_link("run-1") is None


class _FakeEngine:
    """Starts a run whose events stop with an interrupt (the follower is cancelled)."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    async def start(self, request: RunRequest) -> str:
        return request.run_id

    async def events(self, run_id: str) -> AsyncIterator[AgentEvent]:
        yield AgentEvent(kind="run_started", run_id=run_id, turn=0, at=0.0)
        raise asyncio.CancelledError

    async def result(self, run_id: str) -> RunResult:
        return RunResult(run_id=run_id, status="completed")

    async def cancel(self, run_id: str) -> None:
        self.cancelled.append(run_id)


@pytest.mark.parametrize("elsewhere", [False, True], ids=["here", "on-workers-elsewhere"])
async def test_an_interrupted_run_is_cancelled_unless_it_runs_elsewhere(
    tmp_path: Path, *, elsewhere: bool
) -> None:
    engine = _FakeEngine()

    async def one_worker() -> int:
        return 1

    opened = OpenedEngine(
        engine=engine,
        store=LocalArtifactStore(tmp_path / "store"),
        settings=_settings(tmp_path),
        model="scripted",
        follow=engine.events,
        workers=one_worker if elsewhere else None,
    )
    seen: list[AgentEvent] = []
    with pytest.raises(asyncio.CancelledError):
        await run_agent(opened, run_id="run-1", task="t", agent=AgentSpec(), on_event=seen.append)
    assert [event.kind for event in seen] == ["run_started"]
    assert engine.cancelled == ([] if elsewhere else ["run-1"])
