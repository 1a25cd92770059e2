"""A manager restarted with another token (issue 41): a worker's script step is not turned
into a tool result the model reads. The step waits, told as a ``Waiting`` and logged once
with the setting to fix; a manager restarted on the right token within the wait runs it; past
the wait the refusal goes to the engine's retries, and nothing was written to the transcript.
Real managers (local warm pool of executor processes) on one loopback port, real services."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import pytest
from pydantic import SecretStr

from mcp_manager.app import create_app
from mcp_manager.server import LoopbackServer
from skillweave.agent.effect_models import RunScriptInput
from skillweave.config import Settings
from skillweave.engines.retries import classify
from skillweave.engines.services import AgentServices
from skillweave.engines.transcript import TranscriptRecord, read_transcript_record
from skillweave.errors import ManagerRefusedError
from skillweave.llm.base import ModelProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.packages import publish_library
from skillweave.skills import SkillRegistry
from skillweave.storage.local import LocalArtifactStore
from skillweave.waiting import WAITING, Waiting
from tests.integration.harness import eventually

OLD, NEW = "the-managers-old-token", "the-workers-new-token"
LINE = "refuses this worker's token (401): SANDBOX__MANAGER_TOKEN must be the manager's"


@contextlib.asynccontextmanager
async def manager(
    store: LocalArtifactStore, library: SkillRegistry, *, token: str, port: int
) -> AsyncIterator[str]:
    """A manager with `token` on 127.0.0.1:`port` (the same address across restarts)."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen()
    settings = Settings(
        _env_file=None,
        sandbox={"manager_token": SecretStr(token), "pool_target": 1, "pool_max": 2},
    )
    server = LoopbackServer(create_app(settings, store=store, publish=False), listener=listener)
    url = await server.start()
    try:
        yield url
    finally:
        await server.stop()


def worker(
    tmp_path: Path, store: LocalArtifactStore, library: SkillRegistry, url: str, *, wait: float
) -> AgentServices:
    """A worker's services on the manager's store, holding the new token."""
    settings = Settings(_env_file=None, sandbox={"queue_seconds": wait})
    return AgentServices(
        settings=settings,
        registry=library,
        store=store,
        provider=cast(ModelProvider, object()),
        model="none",
        sandbox=SandboxClient(url, token=NEW),
    )


def step(library: SkillRegistry) -> RunScriptInput:
    return RunScriptInput(
        run_id="run-1",
        execution_id="wf-run-1/script-1",
        skill="probe",
        version=library.get("probe").version,
        script="scripts/hello.py",
        args=("world",),
        seq=1,
        tool_call_id="call-1",
    )


@pytest.fixture
async def store(tmp_path: Path, library: SkillRegistry) -> LocalArtifactStore:
    store = LocalArtifactStore(tmp_path / "store")
    await publish_library(store, library)
    return store


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.timeout(180)
async def test_a_step_waits_for_a_manager_restarted_on_the_right_token_then_runs(
    tmp_path: Path,
    library: SkillRegistry,
    store: LocalArtifactStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = _port()
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    services = worker(tmp_path, store, library, f"http://127.0.0.1:{port}", wait=120)
    try:
        async with manager(store, library, token=OLD, port=port):
            with caplog.at_level(logging.WARNING, logger="skillweave.sandbox.queue"):
                running = asyncio.create_task(services.run_skill_script(step(library)))
                await eventually(lambda: said, timeout=30, what="the step told its wait")
                await asyncio.sleep(1.5)  # a few more refused attempts
        assert not running.done()
        async with manager(store, library, token=NEW, port=port):
            outcome = await asyncio.wait_for(running, timeout=90)
    finally:
        WAITING.reset(reporting)
        await services.sandbox.aclose()
    assert outcome.status == "succeeded", outcome
    # Told when the wait began, again when the restart left no manager for a moment (same
    # since), and over once it ran.
    *told, ended = said
    assert ended is None
    waiting = told[0]
    assert isinstance(waiting, Waiting)
    assert waiting.on == "manager"
    assert waiting.call == "script probe/scripts/hello.py"
    assert waiting.detail == f"the MCP manager at http://127.0.0.1:{port} {LINE}"
    assert all(isinstance(one, Waiting) and one.since == waiting.since for one in told)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len([w for w in warned if "SANDBOX__MANAGER_TOKEN" in w]) == 1, warned
    stored = await read_transcript_record(store, "run-1", 1)
    assert stored is not None
    record = TranscriptRecord.model_validate_json(stored)
    assert "hello world" in record.message.text
    assert "bearer token" not in record.message.text


@pytest.mark.timeout(120)
async def test_past_the_wait_the_refusal_goes_to_the_engines_retries_not_to_the_model(
    tmp_path: Path, library: SkillRegistry, store: LocalArtifactStore
) -> None:
    async with manager(store, library, token=OLD, port=_port()) as url:
        services = worker(tmp_path, store, library, url, wait=2)
        try:
            with pytest.raises(ManagerRefusedError) as caught:
                await services.run_skill_script(step(library))
        finally:
            await services.sandbox.aclose()
    assert str(caught.value) == f"the MCP manager at {url} {LINE}"
    assert classify(caught.value).again
    assert await read_transcript_record(store, "run-1", 1) is None  # nothing for the model
