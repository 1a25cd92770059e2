"""Adding a side effect touches three files: its descriptor, its implementation, its test.

This test is all three: it declares ``count_words`` (a :class:`SideEffect` beside the table of
``skillweave.agent.effects``), implements it as a method of a subclass of ``AgentServices``, and
makes it through both engines without another module changed: the direct engine's runtime
calls the method through the wire models, and a real Temporal worker registers its activity
from the descriptor (``AgentActivities(effects=…)``, where a product change would add it to
``EFFECTS``) while a workflow schedules it through ``TemporalRuntime.call``, with the
descriptor's summary, timeout, heartbeat, activity id and phase.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pydantic import BaseModel
from temporalio import workflow
from temporalio.worker import Worker

from activities import AgentActivities
from skillweave.agent import AgentSpec, new_state
from skillweave.agent.effect_models import ActivityTimeouts
from skillweave.agent.effects import EFFECTS, Phase, SideEffect
from skillweave.engines import AgentServices
from skillweave.engines.direct import DirectRuntime
from tests.integration.temporal.harness import Stack, unique
from workflows.runtime import Session, TemporalRuntime

pytestmark = pytest.mark.asyncio(loop_scope="session")


# --- the descriptor ------------------------------------------------------------------------


class CountInput(BaseModel):
    run_id: str
    text: str
    seq: int


class WordCount(BaseModel):
    words: int


COUNT_WORDS = SideEffect[CountInput, WordCount](
    name="count_words",
    input=CountInput,
    output=WordCount,
    summary=lambda request, state: f"count the words of turn {state.turn + 1}",
    retry_name=lambda request: f"count words {request.seq}",
    phase="reading",
    timeout=lambda request, limits: limits.short_seconds * 2,
    heartbeat=True,
    activity_id=lambda request: f"count-words-{request.seq}",
)


# --- the implementation --------------------------------------------------------------------


class CountingServices(AgentServices):
    async def count_words(self, request: CountInput) -> WordCount:
        return WordCount(words=len(request.text.split()))


def _services(stack: Stack) -> CountingServices:
    return CountingServices(
        settings=stack.settings,
        registry=stack.registry,
        store=stack.store,
        provider=None,
        model=None,
        sandbox=stack.sandbox,
    )


# --- the test ------------------------------------------------------------------------------

REQUEST = CountInput(run_id="r1", text="one two three", seq=4)


async def test_the_direct_engine_makes_a_side_effect_from_its_descriptor(stack: Stack) -> None:
    assert await DirectRuntime(_services(stack)).call(COUNT_WORDS, REQUEST) == WordCount(words=3)


@workflow.defn(name="CountWordsProbe", sandboxed=False)
class CountWordsProbe:
    """Stands for a workflow step that makes the new side effect through its runtime."""

    def __init__(self) -> None:
        self.phases: list[Phase] = []

    @workflow.run
    async def run(self, request: CountInput) -> WordCount:
        runtime = TemporalRuntime(
            state=new_state(run_id="probe", task="count", spec=AgentSpec()),
            session=Session(),
            timeouts=ActivityTimeouts(),
            on_phase=self.phases.append,
        )
        return await runtime.call(COUNT_WORDS, request)

    @workflow.query
    def told(self) -> list[str]:
        return list(self.phases)


def _scheduled(history: Any) -> dict[str, Any]:
    """The one activity the probe scheduled: the event, as the server recorded it."""
    (event,) = [
        e
        for e in json.loads(history.to_json())["events"]
        if e["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED"
    ]
    return event


async def test_a_temporal_worker_runs_a_side_effect_from_its_descriptor(stack: Stack) -> None:
    task_queue = unique("new-effect")
    activities = AgentActivities(
        _services(stack), heartbeat_seconds=0.5, effects=(*EFFECTS, COUNT_WORDS)
    )
    async with Worker(
        stack.client,
        task_queue=task_queue,
        workflows=[CountWordsProbe],
        activities=activities.definitions(),
    ):
        handle = await stack.client.start_workflow(
            CountWordsProbe.run, REQUEST, id=unique("count-words"), task_queue=task_queue
        )
        assert await handle.result() == WordCount(words=3)
        assert await handle.query(CountWordsProbe.told) == ["reading"]
        history = await handle.fetch_history()

    event = _scheduled(history)
    scheduled = event["activityTaskScheduledEventAttributes"]
    limits = ActivityTimeouts()
    assert scheduled["activityType"]["name"] == "count_words"
    assert scheduled["activityId"] == "count-words-4"
    assert scheduled["startToCloseTimeout"] == f"{limits.short_seconds * 2:g}s"
    assert scheduled["heartbeatTimeout"] == f"{limits.heartbeat_seconds:g}s"
    assert scheduled["retryPolicy"]["maximumAttempts"] == limits.max_attempts
    summary = base64.b64decode(event["userMetadata"]["summary"]["data"])
    assert json.loads(summary) == "count the words of turn 1"
