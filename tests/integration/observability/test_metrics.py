"""Each ``/metrics`` after a real run: a run made over the API on the Temporal engine (a real dev
server, an in-process worker, the session's MCP manager with real sandboxes) searches, activates
``test-tools`` and runs a script; then the worker's, the manager's and the API's metrics are
scraped over HTTP and the counters the run moved are checked.

The worker's services are this test's own, so their counters start at zero; the manager is the
session's, shared with other tests, so its counters are compared before and after.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.api.skills import open_skills
from skillweave.api.skills import router as skills_router
from skillweave.cli.temporal_server import free_port
from skillweave.config import ObservabilitySettings, Settings
from skillweave.engines.worker_metrics import serve_worker_metrics
from tests.api.test_runs import make_agent, sse
from tests.integration.harness import eventually
from tests.integration.temporal.conftest import registry, skill_dirs, stack  # noqa: F401
from tests.integration.temporal.harness import TOOLS, Stack, open_engine, unique

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(180)]

TOKEN = "metrics-api-token"
USAGE = "usage: {input_tokens: 100, output_tokens: 10}"
SCRIPT = f"""
turns:
  - tool_calls: [{{name: search_skills, arguments: {{query: small tools for engine tests}}}}]
    {USAGE}
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
    expect: {{tool_results: [{{not_error: true, contains: '<skill name="{TOOLS}">'}}]}}
    {USAGE}
  - tool_calls:
      - {{name: run_skill_script,
          arguments: {{skill: {TOOLS}, script: scripts/echo.py, args: [counted]}}}}
    expect: {{tool_results: [{{not_error: true, contains: "<skill_content"}}]}}
    {USAGE}
  - say: "Echoed."
    expect: {{tool_results: [{{not_error: true, contains: counted}}]}}
    {USAGE}
"""


Scraped = dict[tuple[str, frozenset[tuple[str, str]]], float]
"""A scraped body's samples: value by (name, labels)."""


def samples(text: str) -> Scraped:
    """Every sample of a Prometheus text body, by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(scraped: Scraped, name: str, **labels: str) -> float:
    """The sum of `name`'s samples that carry `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, have), v in scraped.items() if n == name and wanted <= have)


async def scrape(client: httpx.AsyncClient, url: str) -> Scraped:
    response = await client.get(url)
    assert response.status_code == 200, response.text
    return samples(response.text)


async def test_each_metrics_endpoint_counts_the_run_it_served(
    stack: Stack,  # noqa: F811 (the fixture imported above)
    skill_dirs: list[Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    manager_before = await scrape(stack.manager.http, "/metrics")
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        # The default model runs named by the API (the harness replays SCRIPT).
        model={"provider": "scripted", "name": "harness.yaml"},
        skills={"dirs": [str(d) for d in skill_dirs], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    async with open_engine("temporal", stack, SCRIPT) as harness:
        assert harness.services is not None
        port = free_port()
        app = create_api(
            settings,
            store=stack.store,
            routers=[skills_router, agents_router, runs_router],
            on_startup=[open_skills, open_agents, open_runs(harness.engine)],
        )
        with serve_worker_metrics(
            harness.services.metrics, ObservabilitySettings(worker_metrics_port=port)
        ) as worker_url:
            assert worker_url == f"http://127.0.0.1:{port}/metrics"
            async with (
                LoopbackServer(app) as server,
                httpx.AsyncClient(
                    base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
                ) as api,
            ):
                agent_id = await make_agent(
                    api, name=unique("metrics"), skill_ids=[TOOLS], catalog_mode="auto"
                )
                started = await api.post(
                    "/v1/runs/", data={"agent_id": agent_id, "input": "Echo a word."}
                )
                assert started.status_code == 201, started.text
                run_id = started.json()["id"]
                events = await sse(api, f"/v1/runs/{run_id}/events")
                assert events[-1]["data"]["status"] == "completed", events[-1]

                async def completed() -> bool:
                    return (await api.get(f"/v1/runs/{run_id}")).json()["status"] == "completed"

                await eventually(completed, timeout=30)
                api_metrics = await scrape(api, "/metrics")
                refused = await api.get("/metrics", headers={"Authorization": "Bearer wrong"})
                assert refused.status_code == 401
            async with httpx.AsyncClient(timeout=10) as client:
                worker = await scrape(client, worker_url)
    manager_after = await scrape(stack.manager.http, "/metrics")

    # The worker: its services counted each step of the run.
    assert total(worker, "skillweave_model_calls_total", provider="scripted", outcome="ok") == 4
    assert total(worker, "skillweave_model_calls_total", outcome="error") == 0
    assert total(worker, "skillweave_model_call_seconds_count", provider="scripted") == 4
    assert total(worker, "skillweave_model_tokens_total", type="input") == 400
    assert total(worker, "skillweave_model_tokens_total", type="output") == 40
    assert total(worker, "skillweave_skill_searches_total", result="found") == 1
    assert total(worker, "skillweave_skill_activations_total", skill=TOOLS) == 1
    assert total(worker, "skillweave_script_runs_total", outcome="succeeded") == 1
    assert total(worker, "skillweave_script_runs_total") == 1

    # The manager ran the script: a claim and an execution that succeeded.
    def moved(name: str, **labels: str) -> float:
        return total(manager_after, name, **labels) - total(manager_before, name, **labels)

    assert moved("skillweave_sandbox_claim_seconds_count") >= 1
    assert moved("skillweave_sandbox_executions_total", outcome="succeeded") >= 1
    assert moved("skillweave_sandbox_execution_seconds_count") >= 1

    # The API: each request by its route template and status, timed by route.
    def requests(route: str, method: str, status: str) -> float:
        return total(
            api_metrics, "skillweave_api_requests_total", route=route, method=method, status=status
        )

    assert requests("/v1/agents/", "POST", "201") == 1
    assert requests("/v1/runs/", "POST", "201") == 1
    assert requests("/v1/runs/{run_id}/events", "GET", "200") == 1
    assert requests("/v1/runs/{run_id}", "GET", "200") >= 1
    assert total(api_metrics, "skillweave_api_request_seconds_count", route="/v1/runs/") == 1
    routes = {value for _, labels in api_metrics for key, value in labels if key == "route"}
    assert not [route for route in routes if run_id in route]  # never the raw path
    # A Temporal API holds no services: the worker's metrics are the worker's alone.
    assert total(api_metrics, "skillweave_model_calls_total") == 0
