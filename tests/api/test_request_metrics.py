"""The API's ``/metrics``: requests counted by route template (never the raw path) and status,
behind the token, with the in-process worker's metrics when the API executes runs itself."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.request_metrics import include_worker_metrics
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library

TOKEN = "metrics-test-token"


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, AgentServices]]:
    """Agents and runs on a direct engine (a fake sandbox: nothing runs here), whose
    services' metrics the API includes; a client with the token."""
    settings = Settings(_env_file=None, api={"token": SecretStr(TOKEN), "max_json_bytes": 1024})
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=settings,
        registry=sample_library(tmp_path / "skills"),
        store=store,
        provider=ScriptedProvider.from_yaml("turns: [{say: done}]"),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    app = create_api(
        settings,
        store=store,
        routers=[agents_router, runs_router],
        on_startup=[
            open_agents,
            open_runs(DirectEngine(services)),
            include_worker_metrics(services.metrics),
        ],
    )
    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}
        ) as client,
    ):
        yield client, services


async def requests_counted(client: httpx.AsyncClient) -> dict[tuple[str, str, str], float]:
    """``skillweave_api_requests_total`` by (route, method, status), scraped over HTTP."""
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    counted = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name == "skillweave_api_requests_total":
                labels = sample.labels
                counted[labels["route"], labels["method"], labels["status"]] = sample.value
    return counted


async def test_a_request_is_labelled_with_its_route_template_and_status(
    served: tuple[httpx.AsyncClient, AgentServices],
) -> None:
    client, _ = served
    assert (await client.get("/v1/runs/abc")).status_code == 404
    assert (await client.get("/v1/runs/def")).status_code == 404
    assert (await client.get("/v1/agents/")).status_code == 200
    assert (
        await client.get("/v1/agents/", headers={"Authorization": "Bearer no"})
    ).status_code == 401
    too_big = await client.post("/v1/agents/", content=b"{" + b" " * 2048 + b"}")
    assert too_big.status_code == 413  # refused before routing
    assert (await client.get("/no/such/path")).status_code == 404
    for made_up in ("FROB", "XYZZY"):  # a client cannot mint label values
        assert (await client.request(made_up, "/v1/agents/")).status_code == 405

    counted = await requests_counted(client)
    assert counted[("/v1/agents/", "other", "405")] == 2
    assert counted[("/v1/runs/{run_id}", "GET", "404")] == 2
    assert counted[("/v1/agents/", "GET", "200")] == 1
    assert counted[("unmatched", "GET", "401")] == 1  # refused before routing, unread
    assert counted[("unmatched", "POST", "413")] == 1
    assert counted[("unmatched", "GET", "404")] == 1
    assert not [route for route, _, _ in counted if "abc" in route or "def" in route]


async def test_request_latency_is_observed_by_route(
    served: tuple[httpx.AsyncClient, AgentServices],
) -> None:
    client, _ = served
    await client.get("/v1/runs/abc")
    text = (await client.get("/metrics")).text
    [family] = [
        f
        for f in text_string_to_metric_families(text)
        if f.name == "skillweave_api_request_seconds"
    ]
    counts = {
        sample.labels["route"]: sample.value
        for sample in family.samples
        if sample.name == "skillweave_api_request_seconds_count"
    }
    assert counts["/v1/runs/{run_id}"] == 1


async def test_metrics_want_the_token_and_healthz_does_not(
    served: tuple[httpx.AsyncClient, AgentServices],
) -> None:
    client, _ = served
    for headers in ({"Authorization": ""}, {"Authorization": "Bearer wrong"}):
        refused = await client.get("/metrics", headers=headers)
        assert refused.status_code == 401
        assert refused.headers["content-type"] == "application/problem+json"
    assert (await client.get("/healthz", headers={"Authorization": ""})).status_code == 200


async def test_an_api_that_executes_runs_itself_shows_its_worker_metrics_too(
    served: tuple[httpx.AsyncClient, AgentServices],
) -> None:
    client, services = served
    services.metrics.activations.labels(skill="notes").inc()
    text = (await client.get("/metrics")).text
    names = {family.name for family in text_string_to_metric_families(text)}
    assert {"skillweave_api_requests", "skillweave_skill_activations"} <= names
    assert 'skillweave_skill_activations_total{skill="notes"} 1.0' in text
