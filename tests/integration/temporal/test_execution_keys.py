"""A script run has one idempotency key: the same on both engines, on every retry, and in every
execution of a run that continues as new (``skillweave.agent.idempotency.execution_key``).

The same run (same id, same scripted model) runs on the direct engine and then on the Temporal
engine, over the same real manager. A sandbox client wrapper records the key of every request
and fails the first attempt of each (as a sandbox lost before it ran), so every run is retried.
The Temporal side runs on a dev server that suggests continue-as-new early, so its script runs
fall in different workflow runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType

from skillweave.agent import AgentSpec
from skillweave.agent.idempotency import execution_key
from skillweave.errors import SandboxLostError
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from tests.integration.temporal.harness import (
    TOOLS,
    Stack,
    open_engine,
    suggesting_continue_as_new,
    unique,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")

RUNS = 3
READS_BETWEEN = 4


class _KeyRecorder:
    """The manager's client, recording each request's key; the first attempt of every key
    fails before it reaches the manager, so the engine must retry it."""

    def __init__(self, inner: SandboxClient) -> None:
        self.inner = inner
        self.keys: list[str] = []

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        first = request.execution_id not in self.keys
        self.keys.append(request.execution_id)
        if first:
            raise SandboxLostError(request.execution_id, "lost before it ran (test)")
        return await self.inner.execute(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _script() -> str:
    usage = "usage: {input_tokens: 10, output_tokens: 1}"
    read = (
        f"  - tool_calls: [{{name: read_skill_resource, "
        f"arguments: {{skill: {TOOLS}, path: references/notes.md}}}}]\n    {usage}\n"
    )
    lines = [f"turns:\n  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]"]
    lines.append(f"    {usage}\n")
    text = "\n".join(lines)
    for n in range(RUNS):
        text += (
            "  - tool_calls:\n"
            f"      - {{name: run_skill_script, arguments: "
            f"{{skill: {TOOLS}, script: scripts/echo.py, args: [run-{n}]}}}}\n"
            f"    {usage}\n" + read * READS_BETWEEN
        )
    return text + f'  - say: "done"\n    {usage}\n'


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def short_history(stack: Stack) -> AsyncIterator[Stack]:
    async with suggesting_continue_as_new(stack, after_events=40) as short:
        yield short


async def _keys_on(kind: str, stack: Stack, run_id: str) -> tuple[list[str], Any]:
    async with open_engine(kind, stack, _script()) as harness:  # type: ignore[arg-type]
        assert harness.services is not None
        recorder = _KeyRecorder(harness.services.sandbox)
        harness.services.sandbox = recorder  # type: ignore[assignment]
        await harness.start(
            "Echo three times, reading between.", run_id=run_id, agent=AgentSpec(skills=(TOOLS,))
        )
        await harness.all_events(run_id)
        result = await harness.engine.result(run_id)
        runs = None
        if kind == "temporal":
            runs = await _script_runs_per_workflow_run(harness, run_id)
    assert result.status == "completed", result.reason
    assert result.script_runs == RUNS
    return recorder.keys, runs


async def _script_runs_per_workflow_run(harness: Any, run_id: str) -> list[int]:
    """How many script runs each workflow execution of the run scheduled."""
    handle = harness.handle(run_id)
    client = harness.stack.client
    counts = []
    async for execution in client.list_workflows(f"WorkflowId = '{handle.id}'"):
        history = await client.get_workflow_handle(
            handle.id, run_id=execution.run_id
        ).fetch_history()
        counts.append(
            sum(
                1
                for event in history.events
                if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                and event.activity_task_scheduled_event_attributes.activity_type.name
                == "run_skill_script"
            )
        )
    return counts


async def test_a_script_run_has_one_key_on_both_engines_across_retries_and_runs(
    short_history: Stack,
) -> None:
    run_id = unique("keys")
    direct, _ = await _keys_on("direct", short_history, run_id)
    temporal, per_run = await _keys_on("temporal", short_history, run_id)

    # Every run was asked for twice (the first attempt failed), under one key each time.
    distinct = list(dict.fromkeys(direct))
    assert len(distinct) == RUNS
    assert direct == [key for key in distinct for _ in range(2)]
    # The keys are the one function's, and the Temporal engine used the very same ones.
    seqs = [int(key.rsplit("-", 1)[1]) for key in distinct]
    assert distinct == [execution_key(run_id, seq) for seq in seqs]
    assert temporal == direct
    # And on Temporal, the runs were spread over workflow runs (continue-as-new in between).
    assert per_run is not None
    assert sum(per_run) == RUNS
    assert sum(1 for count in per_run if count) >= 2, per_run
