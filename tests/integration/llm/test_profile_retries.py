"""A model profile's retry policy (``max_attempts``) on both engines, against the strict server
of ``tests.llm_server`` answering 503 (worth a retry): the job's model call is tried as often as
its profile allows, not as often as the engine would."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillweave.agent import AgentSpec
from skillweave.config import ModelSettings, Settings
from skillweave.engines import AgentServices, DirectEngine, JobRequest, JobResult
from skillweave.engines.contract import ActivityTimeouts
from skillweave.engines.retries import Backoff
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.factory import ModelProviders
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library
from tests.integration.temporal.harness import start_dev_server, unique
from tests.llm_server import StrictLLMServer, strict_llm_server, unavailable_503
from workflows.worker import build_worker

ENGINE_ATTEMPTS = 4


@pytest.fixture
async def server() -> AsyncIterator[StrictLLMServer]:
    async with strict_llm_server(unavailable_503()) as running:
        yield running


def _services(tmp_path: Path, server: StrictLLMServer) -> tuple[AgentServices, ModelProviders]:
    store = LocalArtifactStore(tmp_path / "store")
    profile = {"provider": "openai", "name": "m", "base_url": server.base_url}
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


async def _direct(services: AgentServices, model: str) -> JobResult:
    engine = DirectEngine(services, backoff=Backoff(initial=0.01, attempts=ENGINE_ATTEMPTS))
    job_id = await engine.start(
        JobRequest(job_id=unique("direct"), task="Take notes.", agent=AgentSpec(model=model))
    )
    return await engine.result(job_id)


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


@pytest.mark.parametrize(("model", "requests"), [("capped", 2), ("uncapped", ENGINE_ATTEMPTS)])
async def test_temporal_engine_tries_a_model_call_as_often_as_its_profile_allows(
    tmp_path: Path, server: StrictLLMServer, model: str, requests: int
) -> None:
    services, models = _services(tmp_path, server)
    env = await start_dev_server(LocalArtifactStore(tmp_path / "store"))
    try:
        task_queue = unique("tq")
        async with build_worker(env.client, services, task_queue=task_queue, heartbeat_seconds=0.5):
            engine = TemporalEngine(
                env.client,
                task_queue=task_queue,
                timeouts=ActivityTimeouts(heartbeat_seconds=5, max_attempts=ENGINE_ATTEMPTS),
                poll_seconds=0.05,
            )
            job_id = await engine.start(
                JobRequest(
                    job_id=unique("temporal"), task="Take notes.", agent=AgentSpec(model=model)
                )
            )
            result = await engine.result(job_id)
    finally:
        await env.shutdown()
        await models.aclose()
    assert result.status == "failed", result
    assert "HTTP 503" in (result.reason or "")
    assert len(server.requests) == requests
