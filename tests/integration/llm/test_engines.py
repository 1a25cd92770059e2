"""Both engines against the strict server of ``tests.llm_server``: a model call that can never
succeed fails the run after exactly one request, instead of being retried."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from skillweave.config import Settings
from skillweave.engines import AgentServices, RunRequest
from skillweave.llm import OpenAIProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library
from tests.integration.llm.engines import run_on
from tests.integration.temporal.harness import start_dev_server, unique
from tests.llm_server import StrictLLMServer, invalid_request_500, strict_llm_server

MODEL = "strict-test-model"


@pytest_asyncio.fixture
async def server() -> AsyncIterator[StrictLLMServer]:
    """The strict server, answering every request with llama-cpp-python's 500 invalid-request."""
    async with strict_llm_server(invalid_request_500()) as running:
        yield running


@pytest_asyncio.fixture
async def services(tmp_path: Path, server: StrictLLMServer) -> AsyncIterator[AgentServices]:
    store = LocalArtifactStore(tmp_path / "store")
    async with OpenAIProvider(model=MODEL, base_url=server.base_url, timeout=10) as provider:
        yield AgentServices(
            settings=Settings(_env_file=None),
            registry=sample_library(tmp_path / "skills"),
            store=store,
            provider=provider,
            model=MODEL,
            sandbox=FakeSandbox(store),  # type: ignore[arg-type]
        )


async def test_direct_run_fails_after_one_request(
    services: AgentServices, server: StrictLLMServer
) -> None:
    # A short back-off with three attempts: were the error retried, the run would still end
    # quickly, with three requests recorded.
    request = RunRequest(run_id=unique("direct"), task="Take notes.")
    result = await run_on("direct", services, request, attempts=3)
    assert result.status == "failed", result
    assert "HTTP 500" in (result.reason or "")
    assert len(server.requests) == 1


async def test_temporal_run_fails_after_one_request(
    tmp_path: Path, services: AgentServices, server: StrictLLMServer
) -> None:
    env = await start_dev_server(LocalArtifactStore(tmp_path / "store"))
    request = RunRequest(run_id=unique("temporal"), task="Take notes.")
    try:
        result = await run_on("temporal", services, request, attempts=3, env=env)
    finally:
        await env.shutdown()
    assert result.status == "failed", result
    assert "HTTP 500" in (result.reason or "")
    assert len(server.requests) == 1
