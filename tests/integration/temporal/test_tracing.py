"""One connected trace for a run: API request → workflow → activities → MCP manager → sandbox
executor, with the run's fields on the spans.

In-process spans (API, Temporal client and worker, manager) go to an in-memory exporter; the
executors are processes of their own, configured by the standard ``OTEL_*`` variables the
manager passes them, and export over OTLP/HTTP to a receiver this test serves on loopback.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from temporalio.contrib.opentelemetry import TracingInterceptor

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.api.skills import open_skills
from skillweave.api.skills import router as skills_router
from skillweave.config import Settings
from skillweave.engines.services import AgentServices
from skillweave.engines.temporal import TemporalEngine, connect
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.run_channel import SPAN_NAME
from skillweave.storage.store_id import store_identity
from tests.api.test_runs import make_agent, sse
from tests.integration.harness import Manager, eventually
from tests.integration.temporal.harness import TEST_TIMEOUTS, Stack, unique
from tests.telemetry.support import in_memory_tracing
from workflows.worker import build_worker

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(180)]

TOKEN = "tracing-api-token"
FIELDS = ("run_id", "skill", "script", "execution_id")

SCRIPT = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: data-toolkit}}]
  - tool_calls: [{name: activate_skill, arguments: {name: csv-profiler}}]
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: csv-profiler, script: scripts/profile_csv.py,
                    args: [inputs/sales.csv], inputs: ["{{artifact:sales.csv}}"]}
  - say: "Profiled."
    expect: {tool_results: [{not_error: true}]}
"""
CSV = b"region,units\nnorth,3\nsouth,5\n"


@contextlib.asynccontextmanager
async def otlp_receiver() -> AsyncIterator[tuple[str, list[Any]]]:
    """An OTLP/HTTP trace receiver on loopback: ``(its traces URL, the spans received)``."""
    received: list[Any] = []

    async def traces(request: Request) -> Response:
        export = ExportTraceServiceRequest()
        export.ParseFromString(await request.body())
        for resource_spans in export.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                received.extend(scope_spans.spans)
        return Response(b"", media_type="application/x-protobuf")

    app = Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])
    async with LoopbackServer(app) as server:
        yield f"{server.url}/v1/traces", received


def _attributes(span: Any) -> dict[str, str]:
    """An OTLP span's string attributes."""
    return {kv.key: kv.value.string_value for kv in span.attributes}


async def test_a_run_is_one_connected_trace_from_the_api_to_the_executor(
    stack: Stack,
    skill_dirs: list[Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with in_memory_tracing() as exporter:
        async with otlp_receiver() as (receiver_url, executor_spans):
            # The executors this manager starts read these (the manager passes OTEL_* on).
            monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
            monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver_url)
            token = secrets.token_urlsafe(16)
            settings = Settings(
                _env_file=None,
                sandbox={"manager_token": SecretStr(token), "pool_target": 1, "pool_max": 3},
                workflow={
                    "temporal_address": stack.temporal_address,
                    "namespace": stack.client.namespace,
                },
                api={"token": SecretStr(TOKEN)},
                # The default model runs named by the API (the harness replays `script`).
                model={"provider": "scripted", "name": "harness.yaml"},
                skills={
                    "dirs": [str(d) for d in skill_dirs],
                    "uploaded_dir": str(tmp_path / "uploaded"),
                },
            )
            async with Manager.serving(settings, store=stack.store) as manager:
                client = await connect(settings.workflow, stack.store)
                tracers = [
                    i for i in client.config()["interceptors"] if isinstance(i, TracingInterceptor)
                ]
                assert len(tracers) == 1  # on the client only; the worker inherits it
                services = AgentServices(
                    settings=settings,
                    registry=stack.registry,
                    store=stack.store,
                    provider=ScriptedProvider.from_yaml(SCRIPT),
                    model="scripted",
                    sandbox=manager.client,
                )
                task_queue = unique("traced")
                engine = TemporalEngine(
                    client, task_queue=task_queue, poll_seconds=0.05, store=stack.store
                )
                api = create_api(
                    settings,
                    store=stack.store,
                    routers=[skills_router, agents_router, runs_router],
                    on_startup=[open_skills, open_agents, open_runs(engine)],
                )
                async with (
                    build_worker(
                        client,
                        services,
                        task_queue=task_queue,
                        store_id=await store_identity(stack.store),
                        heartbeat_seconds=0.5,
                        limits=TEST_TIMEOUTS,
                    ),
                    LoopbackServer(api) as server,
                    httpx.AsyncClient(
                        base_url=server.url,
                        headers={"Authorization": f"Bearer {TOKEN}"},
                        timeout=60,
                    ) as http,
                ):
                    agent_id = await make_agent(
                        http, name=unique("traced"), skill_ids=["data-toolkit"]
                    )
                    run = (
                        await http.post(
                            "/v1/runs/",
                            data={"agent_id": agent_id, "input": "Profile sales.csv."},
                            files={"files": ("sales.csv", CSV, "text/csv")},
                        )
                    ).json()
                    events = await sse(http, f"/v1/runs/{run['id']}/events")
                    assert [e["event"] for e in events].count("script_ran") == 1

                async def executor_exported() -> bool:
                    return any(s.name == SPAN_NAME for s in executor_spans)

                await eventually(executor_exported, timeout=30)

    spans: list[ReadableSpan] = list(exporter.get_finished_spans())
    by_id = {s.context.span_id: s for s in spans}
    [root] = [s for s in spans if s.name == "POST /v1/runs/" and s.parent is None]
    trace_id = root.context.trace_id
    names = {s.name for s in spans if s.context.trace_id == trace_id}
    for expected in (
        "StartWorkflow:AgentWorkflow",
        "RunWorkflow:AgentWorkflow",
        "RunActivity:run_skill_script",
        "POST /sandbox/execute",
        "sandbox execute",
    ):
        assert expected in names, sorted(names)

    # The activity and the manager's span carry the run's fields.
    [activity] = [
        s
        for s in spans
        if s.name == "RunActivity:run_skill_script" and s.context.trace_id == trace_id
    ]
    fields = {f: activity.attributes.get(f"skillweave.{f}") for f in FIELDS}
    assert fields["skill"] == "csv-profiler"
    assert fields["script"] == "scripts/profile_csv.py"
    assert fields["run_id"] == run["id"]
    assert fields["execution_id"]
    # (Activating a skill runs scripts too, for their tool schemas: find this run's.)
    [execute] = [
        s
        for s in spans
        if s.name == "sandbox execute"
        and s.attributes.get("skillweave.execution_id") == fields["execution_id"]
    ]
    assert execute.context.trace_id == trace_id
    assert {f: execute.attributes.get(f"skillweave.{f}") for f in FIELDS} == fields

    # The executor's span joins the same trace under the manager's, with the same fields
    # (carried as baggage), and walking parents from it reaches the API request.
    [executed] = [
        s
        for s in executor_spans
        if s.name == SPAN_NAME  # the local backend's runs go over the run channel
        and _attributes(s).get("skillweave.execution_id") == fields["execution_id"]
    ]
    assert executed.trace_id == trace_id.to_bytes(16, "big")
    assert {f: _attributes(executed).get(f"skillweave.{f}") for f in FIELDS} == fields
    parent = by_id[int.from_bytes(executed.parent_span_id, "big")]
    assert parent.name == "sandbox execute"
    chain = [parent.name]
    while parent.parent is not None:
        parent = by_id[parent.parent.span_id]  # KeyError: a link of the chain is missing
        chain.append(parent.name)
    assert parent is root, chain
    for link in ("RunActivity:run_skill_script", "StartWorkflow:AgentWorkflow"):
        assert link in chain, chain
