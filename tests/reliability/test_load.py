"""Load: many concurrent runs of script steps on one worker and one manager, with no failure.

``RUNS`` runs (12 in CI, 100 under ``make soak``) start at once on one Temporal worker with the
product's defaults (``build_worker``: the SDK's 100 workflow-task and 100 activity slots, 5
pollers of each kind) and run to their answer. Each run activates ``test-tools``, then takes
``STEPS`` steps, a step being one ``run_skill_script`` of the trivial ``scripts/echo.py`` in a
one-shot sandbox of one MCP manager whose warm pool has the product's default size (target 2,
maximum 8, a claim waits 10 s before a 503). Everything is real: the Temporal dev server and
the executor sandboxes are processes of their own; the worker and the manager run in this one.

What counts as a failure (the *failures* figure counts runs): a run that did not complete with
its own answer, or whose ``STEPS`` scripts did not all succeed. Beyond that, no script run may
be missing or run twice: the manager's count of the executions it really ran (*scripts run*)
must be exactly ``RUNS * STEPS``.

The figures: *steps/s* is the script steps completed over the wall time from the first start to
the last result. A step's latency is measured on the run's own events, which carry workflow
time: from the ``model_called`` event of the turn whose reply asks for the script (the workflow
has the reply) to that turn's ``script_ran`` event (the workflow has the script's result), so it
covers scheduling the activity, waiting for an activity slot and a sandbox, the run itself and
the result's way back; p95 is over every step of every run. The note adds the same span as
Temporal records it (activity scheduled to completed, from the histories), the activity retries,
and the manager's warm and cold claims.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
import pytest_asyncio
from pydantic import SecretStr
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from skillweave.agent import AgentSpec
from skillweave.agent.events import AgentEvent
from skillweave.config import SandboxSettings, Settings
from skillweave.engines import AgentServices, RunRequest, RunResult
from skillweave.engines.contract import workflow_id
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage import keys
from skillweave.storage.store_id import store_identity
from tests.integration.temporal.conftest import registry, skill_dirs, stack  # noqa: F401
from tests.integration.temporal.harness import TOOLS, Stack, serving_stack, unique
from tests.reliability.conftest import scale
from workflows.worker import build_worker

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

RUNS = scale(ci=12, soak=100)
STEPS = 5
INPUT = "id.txt"
"""Each run's one input: its key (``runs/<run>/inputs/id.txt``) is what makes the shared
scripted model's arguments and answer differ from run to run."""


def _printed(step: int) -> str:
    """The expectation on a step's result: it succeeded and printed the run's input key."""
    return (
        f"{{not_error: true, matches: 'stdout:\\n\\S+ runs/\\S+/inputs/id\\.txt step-{step}\\n'}}"
    )


def _script() -> str:
    """Activate, then ``STEPS`` echo runs (each checking the previous one succeeded and
    printed what it was asked to), then an answer naming the run's own input."""
    usage = "usage: {input_tokens: 100, output_tokens: 10}"
    lines = [
        "turns:",
        f"  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]",
        f"    {usage}",
    ]
    for step in range(1, STEPS + 1):
        lines += [
            "  - tool_calls:",
            f"      - {{name: run_skill_script, arguments: {{skill: {TOOLS}, "
            f'script: scripts/echo.py, args: ["{{{{artifact:{INPUT}}}}}", step-{step}]}}}}',
            f"    {usage}",
        ]
        if step > 1:
            lines.append(f"    expect: {{tool_results: [{_printed(step - 1)}]}}")
    lines += [
        f'  - say: "Done: {{{{artifact:{INPUT}}}}} after {STEPS} steps"',
        f"    expect: {{tool_results: [{_printed(STEPS)}]}}",
        f"    {usage}",
    ]
    return "\n".join(lines) + "\n"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def load_stack(
    stack: Stack,  # noqa: F811 (the fixture imported above)
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    """The engine suite's dev server, store and library, with a manager of this module's own
    whose pool has the product's default size (the suite's is smaller)."""
    token = secrets.token_urlsafe(16)
    settings = Settings(
        _env_file=None,
        sandbox={"manager_token": SecretStr(token)},
        skills={"uploaded_dir": str(tmp_path_factory.mktemp("load-worker") / "uploaded")},
    )
    defaults = SandboxSettings()
    assert (settings.sandbox.pool_target, settings.sandbox.pool_max) == (
        defaults.pool_target,
        defaults.pool_max,
    ), "SANDBOX__POOL_* set in the environment: this test measures the defaults"
    async with serving_stack(
        settings, registry=stack.registry, store=stack.store, env=stack.env
    ) as served:
        yield served


def _percentile(values: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0-100), nearest rank; 0 for no values."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def _step_latencies_ms(events: Sequence[AgentEvent]) -> list[float]:
    """Per script step: its turn's ``model_called`` to its ``script_ran`` (workflow time)."""
    called: dict[int, float] = {}
    spans = []
    for event in events:
        if event.kind == "model_called":
            called[event.turn] = event.at
        elif event.kind == "script_ran":
            spans.append((event.at - called[event.turn]) * 1000)
    return spans


async def _script_activities(client: Client, run_id: str) -> tuple[list[float], int]:
    """From the run's history: each ``run_skill_script`` activity's scheduled-to-completed
    time (ms), and how many attempts beyond the first they took."""
    history = await client.get_workflow_handle(workflow_id(run_id)).fetch_history()
    scheduled: dict[int, Any] = {}
    spans, retries = [], 0
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name == "run_skill_script":
                scheduled[event.event_id] = event.event_time.ToDatetime()
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attrs = event.activity_task_started_event_attributes
            if attrs.scheduled_event_id in scheduled:
                retries += attrs.attempt - 1
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            attrs = event.activity_task_completed_event_attributes
            started = scheduled.get(attrs.scheduled_event_id)
            if started is not None:
                spans.append((event.event_time.ToDatetime() - started).total_seconds() * 1000)
    return spans, retries


async def test_concurrent_runs_of_script_steps_all_complete(
    load_stack: Stack, figures: Any
) -> None:
    lab = load_stack
    settings = lab.settings
    services = AgentServices(
        settings=settings,
        registry=lab.registry,
        store=lab.store,
        provider=ScriptedProvider.from_yaml(_script()),
        model="scripted",
        sandbox=lab.sandbox,
    )
    task_queue = unique("load")
    worker = build_worker(
        lab.client,
        services,
        task_queue=task_queue,
        store_id=await store_identity(lab.store),
        heartbeat_seconds=settings.workflow.worker_heartbeat_seconds,
    )
    engine = TemporalEngine(lab.client, task_queue=task_queue, store=lab.store)
    agent = AgentSpec(skills=(TOOLS,))
    run_ids = [unique("load") for _ in range(RUNS)]
    inputs = {
        run_id: await lab.store.put_bytes(keys.run_input_key(run_id, INPUT), run_id.encode())
        for run_id in run_ids
    }
    await lab.manager.http.get("/healthz")
    ran_before = await lab.manager.executions()
    succeeded_before = await lab.manager.executions("succeeded")
    warm_before = await lab.manager.metric("skillweave_sandbox_claim_seconds_count", kind="warm")
    cold_before = await lab.manager.metric("skillweave_sandbox_claim_seconds_count", kind="cold")

    async def one_run(run_id: str) -> RunResult:
        await engine.start(
            RunRequest(
                run_id=run_id,
                task=f"Echo your input file's key {STEPS} times.",
                agent=agent,
                inputs=(inputs[run_id],),
            )
        )
        return await engine.result(run_id)

    async with worker:
        began = time.monotonic()
        results = await asyncio.gather(*(one_run(run_id) for run_id in run_ids))
        wall = time.monotonic() - began
        # Read after the fact (a run's events are the worker's answer to a query), so that
        # following them does not load the run being measured.
        all_events = [[event async for event in engine.events(run_id)] for run_id in run_ids]
    ran = await lab.manager.executions() - ran_before
    succeeded = await lab.manager.executions("succeeded") - succeeded_before
    warm = await lab.manager.metric("skillweave_sandbox_claim_seconds_count", kind="warm")
    cold = await lab.manager.metric("skillweave_sandbox_claim_seconds_count", kind="cold")
    activities = await asyncio.gather(*(_script_activities(lab.client, j) for j in run_ids))

    failures: list[str] = []
    latencies: list[float] = []
    steps_done = 0
    for run_id, result, events in zip(run_ids, results, all_events, strict=True):
        expected = f"Done: {keys.run_input_key(run_id, INPUT)} after {STEPS} steps"
        if result.status != "completed" or result.answer != expected:
            failures.append(f"{run_id}: {result.status} ({result.reason}): {result.answer!r}")
            continue
        runs = [e for e in events if e.kind == "script_ran"]
        ok = [e for e in runs if e.status == "succeeded" and e.detail == "scripts/echo.py"]
        steps_done += len(ok)
        if len(ok) != STEPS or result.script_runs != STEPS:
            failures.append(f"{run_id}: {len(ok)} of {len(runs)} steps succeeded")
        latencies.extend(_step_latencies_ms(events))
    activity_spans = [span for spans, _ in activities for span in spans]
    retries = sum(retried for _, retried in activities)
    expected_runs = RUNS * STEPS
    figures(
        runs=RUNS,
        scripts_run=ran,
        scripts_expected=expected_runs,
        failures=len(failures),
        steps_per_second=steps_done / wall,
        p95_step_ms=_percentile(latencies, 95) if latencies else None,
        note=(
            f"{RUNS} runs x {STEPS} steps in {wall:.1f} s; step p50 "
            f"{_percentile(latencies, 50):.0f} ms, max {max(latencies, default=0):.0f} ms; "
            "run_skill_script activity scheduled->completed p50/p95 "
            f"{_percentile(activity_spans, 50):.0f}/{_percentile(activity_spans, 95):.0f} ms; "
            f"{retries} activity retries; claims {warm - warm_before:.0f} warm / "
            f"{cold - cold_before:.0f} cold; pool target {settings.sandbox.pool_target}, "
            f"max {settings.sandbox.pool_max}"
        ),
    )

    assert not failures, failures
    # Exactly once: every step ran in a sandbox of its own, none twice, none lost.
    assert (ran, succeeded) == (expected_runs, expected_runs)
    assert steps_done == expected_runs
    assert len(latencies) == len(activity_spans) == expected_runs
