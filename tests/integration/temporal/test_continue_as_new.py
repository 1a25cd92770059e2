"""A long run rolls over several workflow runs (continue-as-new) and loses nothing.

A dev server of its own suggests continue-as-new after a few dozen history events (Temporal's
``limit.historyCount.suggestContinueAsNew``, thousands by default), so a 32-turn run crosses
many runs. The run must end exactly as one long run would: active skills, usage, turn count,
outputs, events and the transcript (the last turn names an artifact from the second turn).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from temporalio.client import WorkflowExecutionStatus, WorkflowHistory

from skillweave.agent import AgentSpec
from skillweave.agent.effects import RUN_LIMITS
from tests.integration.temporal.harness import (
    TEST_TIMEOUTS,
    TOOLS,
    Stack,
    open_engine,
    reading_script,
    suggesting_continue_as_new,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")

SUGGEST_AFTER_EVENTS = 60
TURNS = 32
READS = TURNS - 3


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def short_history(stack: Stack) -> AsyncIterator[Stack]:
    """The stack, on a dev server that suggests continue-as-new early."""
    async with suggesting_continue_as_new(stack, after_events=SUGGEST_AFTER_EVENTS) as short:
        yield short


def _limits_asked(history: WorkflowHistory) -> int:
    """How many times a run asked its worker for the run's limits (a local activity each)."""
    calls = 0
    for event in history.events:
        if event.HasField("marker_recorded_event_attributes"):
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == "core_local_activity":
                (payload,) = marker.details["data"].payloads
                calls += json.loads(payload.data)["activity_type"] == RUN_LIMITS.name
    return calls


def _long_script() -> str:
    return reading_script(
        script_call='script: scripts/upper.py, inputs: ["{{artifact:letter.txt}}"]',
        reads=READS,
        output="upper.txt",
    )


async def test_a_long_run_continues_as_new_and_carries_all_its_state(
    short_history: Stack,
) -> None:
    stack = short_history
    async with open_engine("temporal", stack, _long_script()) as harness:
        engine = harness.temporal
        run_id = await harness.start(
            "Upper-case the letter, then keep reading the notes.",
            agent=AgentSpec(skills=(TOOLS,)),
            files={"letter.txt": b"dear reader\n"},
        )
        events = await harness.all_events(run_id)
        result = await engine.result(run_id)
        view = await engine.status(run_id)
        handle = harness.handle(run_id)
        chain = [
            execution
            async for execution in stack.client.list_workflows(f"WorkflowId = '{handle.id}'")
        ]
        lengths = []
        asked: dict[int, int] = {}  # a run's first event id → its run_limits calls
        for execution in chain:
            history = await stack.client.get_workflow_handle(
                handle.id, run_id=execution.run_id
            ).fetch_history()
            lengths.append(len(history.events))
            asked[history.events[0].event_time.ToNanoseconds()] = _limits_asked(history)

    # It took several runs: the status of the last run counts them, visibility lists them.
    assert view.runs >= 3, view
    assert len(chain) == view.runs
    statuses = sorted(execution.status for execution in chain)
    assert statuses.count(WorkflowExecutionStatus.CONTINUED_AS_NEW) == view.runs - 1
    assert WorkflowExecutionStatus.COMPLETED in statuses
    # Each run's history stays bounded, however long the run (a run stops at a safe point
    # soon after the server's suggestion).
    assert max(lengths) < SUGGEST_AFTER_EVENTS * 2, lengths

    # And the run ended exactly as one long run would have.
    assert result.status == "completed", result.reason
    assert result.turns == TURNS
    assert result.script_runs == 1
    assert result.active_skills == {TOOLS: stack.registry.get(TOOLS).version}
    assert (result.usage.input_tokens, result.usage.output_tokens) == (TURNS * 100, TURNS * 10)
    (upper,) = result.outputs
    assert upper.key.endswith("/outputs/upper.txt")
    assert await stack.store.get_bytes(upper) == b"DEAR READER\n"
    assert result.answer == f"Done: {upper.key}"
    assert view.usage == result.usage
    assert (view.turn, view.outputs) == (TURNS, 1)
    # Every event of every run, in order, from the run's start.
    assert events[0].kind == "run_started"
    assert events[-1].kind == "run_finished"
    assert len(events) == view.events_total
    assert [e.kind for e in events].count("model_called") == TURNS
    assert [e.kind for e in events].count("resource_read") == READS
    assert [e.turn for e in events] == sorted(e.turn for e in events)
    # The worker's limits were asked for once, by the first run, and carried over: every run
    # ran under them (the status of the last one shows them).
    assert [asked[start] for start in sorted(asked)] == [1] + [0] * (view.runs - 1)
    assert view.limits == TEST_TIMEOUTS.model_copy(update={"model_calls_read": True})
