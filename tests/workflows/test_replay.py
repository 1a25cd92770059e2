"""Determinism: recorded workflow histories replay against today's workflow code.

``tests/data/histories/demo.json`` is the demo job (``examples/demo``) run as an
``AgentWorkflow`` on a real dev server (``bench/record_history.py``). Replaying it needs no
server: the ``Replayer`` feeds the recorded events to the workflow code in this process, with
the worker's data converter and sandbox, and fails on the first command that differs from the
history (an activity added, removed, renamed or reordered; a timer; a search-attribute upsert).
A workflow change that fails here would break every job running when it is deployed: gate it
with ``workflow.patched`` or re-record the history on purpose (tests/data/histories/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer
from temporalio.workflow import NondeterminismError

from skillweave.engines.contract import workflow_id
from skillweave.engines.converter import data_converter
from workflows.agent import AgentWorkflow
from workflows.worker import sandbox_runner

HISTORIES = Path(__file__).resolve().parents[1] / "data" / "histories"
GOLDEN = ("demo.json",)


def _events(name: str) -> dict[str, Any]:
    return json.loads((HISTORIES / name).read_text(encoding="utf-8"))


def _history(data: dict[str, Any]) -> WorkflowHistory:
    return WorkflowHistory.from_json(workflow_id("golden-demo"), data)


def _replayer() -> Replayer:
    return Replayer(
        workflows=[AgentWorkflow],
        data_converter=data_converter(),
        workflow_runner=sandbox_runner(),
    )


@pytest.mark.parametrize("name", GOLDEN)
async def test_a_recorded_history_replays_against_the_workflow_code(name: str) -> None:
    data = _events(name)
    scheduled = [
        e["activityTaskScheduledEventAttributes"]["activityType"]["name"]
        for e in data["events"]
        if e["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED"
    ]
    # The history is the whole demo job, not a stub: seven model turns and both scripts.
    assert scheduled.count("invoke_model") == 7
    assert scheduled.count("run_skill_script") == 2
    assert data["events"][-1]["eventType"] == "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED"

    result = await _replayer().replay_workflow(_history(data))

    assert result.replay_failure is None


async def test_a_history_that_disagrees_with_the_code_fails_the_replay() -> None:
    """The guard has teeth: one renamed activity in the history is a nondeterminism error."""
    data = _events("demo.json")
    for event in data["events"]:
        if event["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED":
            attributes = event["activityTaskScheduledEventAttributes"]
            if attributes["activityType"]["name"] == "read_skill_resource":
                attributes["activityType"]["name"] = "read_skill_file"
                break
    else:
        pytest.fail("the demo history has no read_skill_resource activity")

    with pytest.raises(NondeterminismError, match="read_skill_resource"):
        await _replayer().replay_workflow(_history(data))
