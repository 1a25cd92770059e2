"""A worker whose cache of runs is smaller than the runs in flight evicts and replays them, and
every run still completes once, with no side effect run twice (issue 47 part 3).

Six runs each pause on a script run held for approval, on a worker whose
``WORKFLOW__WORKER_MAX_CACHED_WORKFLOWS`` is 2 (``build_worker`` reads it from its services'
settings). The worker's runtime metrics (Temporal's SDK core, served on loopback) prove the
evictions and the cache misses that replay a run's history; the manager's counters and each
run's history prove that every script ran once and every model call was scheduled once.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from skillweave.agent import AgentSpec, ApprovalDecision, ApprovalOptions
from skillweave.cli.temporal_server import free_port
from skillweave.engines import AgentServices, RunRequest
from skillweave.engines.contract import workflow_id
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.store_id import store_identity
from tests.integration.harness import eventually
from tests.integration.temporal.harness import (
    STDOUT_MARKER,
    TEST_TIMEOUTS,
    TOOLS,
    Stack,
    unique,
)
from workflows.worker import build_worker

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

CACHE = 2
RUNS = 6

SCRIPT = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
  - tool_calls:
      - {{name: run_skill_script, arguments: {{skill: {TOOLS}, script: scripts/echo.py,
          args: [once]}}}}
  - say: "Done."
    expect: {{tool_results: [{{not_error: true, contains: "{STDOUT_MARKER} once"}}]}}
"""
AGENT = AgentSpec(skills=(TOOLS,), approvals=ApprovalOptions(skills=(TOOLS,)))


def _sticky(text: str) -> dict[str, float]:
    """The worker's sticky-cache metrics by family name (the SDK core adds no ``_total``)."""
    return {
        family.name: sum(sample.value for sample in family.samples)
        for family in text_string_to_metric_families(text)
        if family.name.startswith("temporal_sticky_cache")
    }


def _scheduled(history: Any) -> list[str]:
    """The activity type of every activity the run scheduled (local ones are markers)."""
    return [
        event["activityTaskScheduledEventAttributes"]["activityType"]["name"]
        for event in json.loads(history.to_json())["events"]
        if event["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED"
    ]


async def test_a_cache_smaller_than_the_runs_evicts_and_replays_but_runs_each_step_once(
    stack: Stack,
) -> None:
    port = free_port()
    runtime = Runtime(
        telemetry=TelemetryConfig(metrics=PrometheusConfig(bind_address=f"127.0.0.1:{port}"))
    )
    client = await Client.connect(
        stack.temporal_address, data_converter=data_converter(stack.store), runtime=runtime
    )
    workflow = stack.settings.workflow.model_copy(update={"worker_max_cached_workflows": CACHE})
    services = AgentServices(
        settings=stack.settings.model_copy(update={"workflow": workflow}),
        registry=stack.registry,
        store=stack.store,
        provider=ScriptedProvider.from_yaml(SCRIPT),
        model="scripted",
        sandbox=stack.sandbox,
    )
    task_queue = unique("cache")
    engine = TemporalEngine(
        stack.client, task_queue=task_queue, poll_seconds=0.05, store=stack.store
    )
    executed, deduplicated = await stack.manager.executions(), await stack.manager.deduplicated()
    run_ids = [unique("cached") for _ in range(RUNS)]
    worker = build_worker(
        client,
        services,
        task_queue=task_queue,
        store_id=await store_identity(stack.store),
        heartbeat_seconds=0.5,
        limits=TEST_TIMEOUTS,
    )
    assert worker.config()["max_cached_workflows"] == CACHE
    async with worker, httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as metrics:
        for run_id in run_ids:
            await engine.start(RunRequest(run_id=run_id, task="Echo once.", agent=AGENT))

        async def all_parked() -> bool:
            views = [await engine.status(run_id) for run_id in run_ids]
            return all(view.awaiting_approval is not None for view in views)

        await eventually(all_parked, timeout=120, every=0.2, what="every run awaits approval")
        parked = _sticky((await metrics.get("/metrics")).text)
        for run_id in run_ids:
            await engine.approve(run_id, ApprovalDecision(approved=True, by="test"))
        results = [await engine.result(run_id) for run_id in run_ids]
        after = _sticky((await metrics.get("/metrics")).text)

    # Every run completed with its answer, after its one script run.
    assert [(r.status, r.answer, r.script_runs) for r in results] == [
        ("completed", "Done.", 1)
    ] * RUNS
    # The cache held at most CACHE runs; the others were evicted, and their next tasks missed
    # it (each miss replays the run's history on the worker).
    assert parked["temporal_sticky_cache_size"] <= CACHE
    assert after["temporal_sticky_cache_total_forced_eviction"] >= RUNS - CACHE
    assert after["temporal_sticky_cache_miss"] >= RUNS - CACHE
    # No side effect ran twice: the manager ran one script per run and answered none from a
    # stored run, and each run scheduled each of its activities once.
    assert await stack.manager.executions() - executed == RUNS
    assert await stack.manager.deduplicated() - deduplicated == 0
    for run_id in run_ids:
        history = await stack.client.get_workflow_handle(workflow_id(run_id)).fetch_history()
        kinds = _scheduled(history)
        assert kinds.count("run_skill_script") == 1, (run_id, kinds)
        assert kinds.count("invoke_model") == 3, (run_id, kinds)
