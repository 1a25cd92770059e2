"""Length: one run of many turns (60 in CI, 1,000 under ``make soak``) finishes through
continue-as-new, each run's history bounded whatever the run's length.

The run runs on a dev server of its own that suggests continue-as-new after
``SUGGEST_AFTER_EVENTS`` history events (Temporal's ``limit.historyCount.suggestContinueAsNew``,
thousands by default), with the engine suite's manager and store. Its turns are cheap: it
activates ``test-tools``, runs ``scripts/slow.py 0 first`` once in a sandbox (an output the
last turn must still name), reads ``references/notes.md`` on every turn after that but the
last, and answers.

What must hold: the run completes with every turn, token and event counted; it crossed
several runs; each run stopped within a turn of the server's suggestion, so no run's history
passes :data:`HISTORY_BOUND` events; and what a run carries into the next stays within its caps
(a transcript window of ``FOLD_AT`` entries, ``EVENTS_CARRIED`` events), however many turns
came before.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecutionStatus

from skillweave.agent import AgentSpec
from skillweave.agent.state import FOLD_AT, Budgets
from skillweave.engines.contract import EVENTS_CARRIED, SA_TURNS, AgentWorkflowInput
from tests.integration.temporal.conftest import registry, skill_dirs, stack  # noqa: F401
from tests.integration.temporal.harness import (
    TOOLS,
    Stack,
    open_engine,
    reading_script,
    suggesting_continue_as_new,
)
from tests.reliability.conftest import scale
from workflows._search_attributes import COUNTS_EVERY_TURNS

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

TURNS = scale(ci=60, soak=1_000)
READS = TURNS - 3

SUGGEST_AFTER_EVENTS = 120
"""The server suggests continue-as-new once a run's history holds this many events (a 60-turn
run's reads ride with its model calls: about 400 events in all, so three runs or more)."""

TURN_EVENTS = 16
"""History events of one turn at most, with one tool call: 15 (docs/BENCHMARKS.md, "Workflow
history per turn"): two activities (model, tool) of scheduled, started and completed events, a
workflow task of three events after each, and two or three search-attribute upserts. A turn
that reads takes fewer: the read rides with the next model call."""

HISTORY_BOUND = SUGGEST_AFTER_EVENTS + 2 * TURN_EVENTS
"""A run's history at most. The server's suggestion comes with the first workflow task that
starts past the threshold (a turn has two, so within a turn's events of it); the run checks
for it after every turn, so it stops at the end of the turn in progress, with its last
workflow task and the continue-as-new event (at most a turn's events after the suggestion,
which the test checks too)."""


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def short_history(stack: Stack) -> AsyncIterator[Stack]:  # noqa: F811 (the fixture)
    """The stack, on a dev server that suggests continue-as-new early."""
    async with suggesting_continue_as_new(stack, after_events=SUGGEST_AFTER_EVENTS) as short:
        yield short


@dataclasses.dataclass
class Run:
    """One execution of the run's chain, from its history."""

    status: WorkflowExecutionStatus | None
    events: int
    after_suggestion: int | None
    """Events from the first workflow task that came with the server's suggestion to the
    end of the run (None: no suggestion)."""
    carried: AgentWorkflowInput
    """What the run started from (for a later run: what the one before carried over)."""
    carried_bytes: int
    count_upserts: int
    """Upserts that wrote ``SkillweaveTurns``."""


async def _runs(client: Client, workflow: str) -> list[Run]:
    """The run's executions, first to last."""
    chain = [e async for e in client.list_workflows(f"WorkflowId = '{workflow}'")]
    runs = []
    for execution in sorted(chain, key=lambda e: e.start_time):
        history = await client.get_workflow_handle(
            workflow, run_id=execution.run_id
        ).fetch_history()
        first = history.events[0]
        assert first.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
        attributes = first.workflow_execution_started_event_attributes
        (carried,) = await client.data_converter.decode(
            attributes.input.payloads, [AgentWorkflowInput]
        )
        suggested = [
            index
            for index, event in enumerate(history.events)
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
            and event.workflow_task_started_event_attributes.suggest_continue_as_new
        ]
        runs.append(
            Run(
                status=execution.status,
                events=len(history.events),
                after_suggestion=len(history.events) - suggested[0] if suggested else None,
                carried=carried,
                carried_bytes=attributes.input.ByteSize(),
                count_upserts=sum(_writes_turns(event) for event in history.events),
            )
        )
    return runs


def _writes_turns(event: HistoryEvent) -> bool:
    if event.event_type != EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
        return False
    upsert = event.upsert_workflow_search_attributes_event_attributes
    return SA_TURNS.name in upsert.search_attributes.indexed_fields


def _long_script() -> str:
    return reading_script(
        script_call="script: scripts/slow.py, args: ['0', first]", reads=READS, output="first.txt"
    )


async def test_a_run_of_many_turns_finishes_with_bounded_runs(
    short_history: Stack, figures: Any
) -> None:
    lab = short_history
    agent = AgentSpec(skills=(TOOLS,), limits=Budgets(max_turns=TURNS))
    async with open_engine("temporal", lab, _long_script()) as harness:
        engine = harness.temporal
        began = time.monotonic()
        run_id = await harness.start(
            "Run the first step, then keep reading the notes.", agent=agent
        )
        events = await harness.all_events(run_id)
        result = await engine.result(run_id)
        wall = time.monotonic() - began
        view = await engine.status(run_id)
        runs = await _runs(lab.client, harness.handle(run_id).id)

    calls = [e.at for e in events if e.kind == "model_called"]
    turn_times = sorted((b - a) * 1000 for a, b in itertools.pairwise(calls))
    p95 = turn_times[math.ceil(0.95 * len(turn_times)) - 1] if turn_times else None
    completed = result.status == "completed"
    lengths = [run.events for run in runs]
    carried = [run.carried_bytes for run in runs[1:]]
    figures(
        runs=1,
        scripts_run=result.script_runs,
        scripts_expected=1,
        failures=0 if completed else 1,
        steps_per_second=result.turns / wall,
        p95_step_ms=p95,
        note=(
            f"{result.turns} turns in {wall:.1f} s over {len(runs)} runs (a step is a turn: "
            f"p95 between model calls); history per run max {max(lengths)} events (bound "
            f"{HISTORY_BOUND}, suggested at {SUGGEST_AFTER_EVENTS}), {sum(lengths)} in all; "
            f"a run's input carried over {min(carried, default=0):,}-"
            f"{max(carried, default=0):,} bytes"
        ),
    )

    assert completed, result.reason
    assert result.turns == TURNS
    assert result.script_runs == 1
    (first,) = result.outputs
    assert first.key.endswith("/outputs/first.txt")
    assert result.answer == f"Done: {first.key}"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (TURNS * 100, TURNS * 10)

    # Several runs, every one but the last continued as new, each run's history bounded: it
    # stopped within one turn of the server's suggestion.
    assert view.runs == len(runs) >= max(3, sum(lengths) // HISTORY_BOUND), lengths
    statuses = [run.status for run in runs]
    assert statuses[:-1] == [WorkflowExecutionStatus.CONTINUED_AS_NEW] * (len(runs) - 1)
    assert statuses[-1] == WorkflowExecutionStatus.COMPLETED
    assert max(lengths) <= HISTORY_BOUND, lengths
    for run in runs[:-1]:
        assert run.after_suggestion is not None, "continued as new unasked"
        assert run.after_suggestion <= TURN_EVENTS, [r.after_suggestion for r in runs]
    # What a run carries over does not grow with the turns done: the transcript window is
    # folded to at most FOLD_AT entries and at most EVENTS_CARRIED events go along...
    for number, run in enumerate(runs[1:], start=2):
        state = run.carried.state
        assert state is not None
        assert run.carried.runs == number
        assert len(state.transcript) <= FOLD_AT, (number, len(state.transcript))
        assert len(run.carried.events) <= EVENTS_CARRIED
    # ...and picks up where the last one stopped.
    carried_turns = [r.carried.state.turn for r in runs[1:] if r.carried.state is not None]
    assert carried_turns == sorted(set(carried_turns)), carried_turns
    assert [r.carried.events_total for r in runs] == sorted(r.carried.events_total for r in runs)

    # A turn that changes only the counts does not write them: of these reads, one turn in
    # COUNTS_EVERY_TURNS does (plus the phase changes of a run: a few), not every one.
    count_upserts = sum(run.count_upserts for run in runs)
    assert count_upserts <= TURNS // COUNTS_EVERY_TURNS + 4 * len(runs), count_upserts

    # Every event of every run, in order, from the run's start.
    kinds = [e.kind for e in events]
    assert len(events) == view.events_total
    assert (kinds[0], kinds[-1]) == ("run_started", "run_finished")
    assert kinds.count("model_called") == TURNS
    assert kinds.count("resource_read") == READS
    assert [e.turn for e in events] == sorted(e.turn for e in events)
