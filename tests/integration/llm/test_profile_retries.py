"""A model profile's retry policy on both engines, against the strict server of
``tests.llm_server``: answering 503 (worth a retry), the run's model call is tried as often as
its profile allows (``max_attempts``), not as often as the engine would; running away past the
profile's timeout on a local server, it is not tried again at all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillweave.agent import AgentSpec
from skillweave.config import ModelSettings, Settings
from skillweave.engines import AgentServices, RunRequest, RunResult
from skillweave.llm.factory import ModelProviders
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library
from tests.integration.llm.engines import run_on
from tests.integration.temporal.harness import start_dev_server, unique
from tests.llm_server import StrictLLMServer, runaway_reply, strict_llm_server, unavailable_503

ENGINE_ATTEMPTS = 4


@pytest.fixture
async def server() -> AsyncIterator[StrictLLMServer]:
    async with strict_llm_server(unavailable_503()) as running:
        yield running


def _services(
    tmp_path: Path, server: StrictLLMServer, *, timeout: float = 30.0
) -> tuple[AgentServices, ModelProviders]:
    store = LocalArtifactStore(tmp_path / "store")
    profile = {
        "provider": "openai",
        "name": "m",
        "base_url": server.base_url,
        "timeout_seconds": timeout,
    }
    models = ModelProviders(
        ModelSettings(
            profiles={
                "capped": {**profile, "max_attempts": 2},
                "uncapped": profile,
            }
        )
    )
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=ScriptedProvider.from_yaml("turns:\n  - say: not this one\n"),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
        models=models,
    )
    return services, models


async def _direct(services: AgentServices, model: str) -> RunResult:
    request = RunRequest(run_id=unique("direct"), task="Take notes.", agent=AgentSpec(model=model))
    return await run_on("direct", services, request, attempts=ENGINE_ATTEMPTS)


@pytest.mark.parametrize(("model", "requests"), [("capped", 2), ("uncapped", ENGINE_ATTEMPTS)])
async def test_direct_engine_tries_a_model_call_as_often_as_its_profile_allows(
    tmp_path: Path, server: StrictLLMServer, model: str, requests: int
) -> None:
    services, models = _services(tmp_path, server)
    try:
        result = await _direct(services, model)
    finally:
        await models.aclose()
    assert result.status == "failed", result
    assert "HTTP 503" in (result.reason or "")
    assert len(server.requests) == requests


async def _temporal(tmp_path: Path, services: AgentServices, model: str) -> RunResult:
    env = await start_dev_server(LocalArtifactStore(tmp_path / "store"))
    request = RunRequest(
        run_id=unique("temporal"), task="Take notes.", agent=AgentSpec(model=model)
    )
    try:
        return await run_on("temporal", services, request, attempts=ENGINE_ATTEMPTS, env=env)
    finally:
        await env.shutdown()


@pytest.mark.parametrize(("model", "requests"), [("capped", 2), ("uncapped", ENGINE_ATTEMPTS)])
async def test_temporal_engine_tries_a_model_call_as_often_as_its_profile_allows(
    tmp_path: Path, server: StrictLLMServer, model: str, requests: int
) -> None:
    services, models = _services(tmp_path, server)
    try:
        result = await _temporal(tmp_path, services, model)
    finally:
        await models.aclose()
    assert result.status == "failed", result
    assert "HTTP 503" in (result.reason or "")
    assert len(server.requests) == requests


@pytest.fixture
async def runaway() -> AsyncIterator[StrictLLMServer]:
    async with strict_llm_server(runaway_reply(seconds=30)) as running:
        yield running


@pytest.mark.parametrize("engine", ["direct", "temporal"])
async def test_a_timeout_against_a_local_server_is_not_stacked_behind_the_generation(
    tmp_path: Path, runaway: StrictLLMServer, engine: str
) -> None:
    """The reported case: a runaway generation on a one-request-at-a-time local server was
    asked again after each timeout, and the retries only queued behind it."""
    services, models = _services(tmp_path, runaway, timeout=0.5)
    try:
        if engine == "direct":
            result = await _direct(services, "uncapped")
        else:
            result = await _temporal(tmp_path, services, "uncapped")
    finally:
        await models.aclose()
    assert result.status == "failed", result
    assert "did not answer in time" in (result.reason or "")
    assert "MODEL__TIMEOUT_SECONDS" in (result.reason or "")
    assert len(runaway.requests) == 1
