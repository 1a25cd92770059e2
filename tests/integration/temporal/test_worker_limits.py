"""One owner per timeout: a run runs under its worker's limits, never its client's (issue 41).

A client whose ``WORKFLOW__SCRIPT_TIMEOUT_SECONDS`` is 2.5 s starts a run whose script sleeps
4 s, on a worker with the default (900 s). Before, the client's value went into the run's input
and the script step timed out and was run again; now the run asks its worker for the limits at
its start (the local activity ``run_limits``), so the step is scheduled with the worker's
timeouts and runs once. The history replays against the workflow code.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from temporalio.worker import Replayer

from skillweave.agent import AgentSpec
from skillweave.config import Settings
from skillweave.engines import AgentServices, RunRequest
from skillweave.engines.contract import ActivityTimeouts, activity_timeouts, workflow_id
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import connect_engine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.store_id import store_identity
from tests.integration.temporal.harness import TOOLS, Stack, unique
from workflows.agent import AgentWorkflow
from workflows.worker import build_worker, sandbox_runner

pytestmark = pytest.mark.asyncio(loop_scope="session")

SLEEP_SECONDS = 4
CLIENT_SCRIPT_TIMEOUT = 2.5

SCRIPT = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
  - tool_calls:
      - {{name: run_skill_script,
         arguments: {{skill: {TOOLS}, script: scripts/slow.py, args: ["{SLEEP_SECONDS}", late]}}}}
  - say: "Done: {{{{artifact:late.txt}}}}"
    expect: {{tool_results: [{{not_error: true, contains: "slept {SLEEP_SECONDS} s as late"}}]}}
"""


def _events(history: Any, kind: str) -> list[dict[str, Any]]:
    return [e for e in json.loads(history.to_json())["events"] if e["eventType"] == kind]


def _seconds(duration: str) -> float:
    assert duration.endswith("s"), duration
    return float(duration[:-1])


async def test_a_run_runs_under_its_workers_limits_not_its_clients(stack: Stack) -> None:
    task_queue = unique("limits")
    worker_settings = stack.settings  # the defaults: a 900 s script step, 30 s heartbeats
    assert worker_settings.workflow.script_timeout_seconds > SLEEP_SECONDS * 10
    services = AgentServices(
        settings=worker_settings,
        registry=stack.registry,
        store=stack.store,
        provider=ScriptedProvider.from_yaml(SCRIPT),
        model="scripted",
        sandbox=stack.sandbox,
    )
    # The client, from its own settings as `run` and the API build it: a 2.5 s script step,
    # which would cut the 4 s script off (and run it again) if it were used.
    client_settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        workflow={
            "temporal_address": stack.temporal_address,
            "task_queue": task_queue,
            "script_timeout_seconds": CLIENT_SCRIPT_TIMEOUT,
        },
    )
    engine = await connect_engine(client_settings, stack.store)
    run_id = unique("limits")
    async with build_worker(
        stack.client,
        services,
        task_queue=task_queue,
        store_id=await store_identity(stack.store),
        heartbeat_seconds=0.5,
    ):
        await engine.start(RunRequest(run_id=run_id, task="Sleep, then say so.", agent=AgentSpec()))
        result = await engine.result(run_id)
        view = await engine.status(run_id)
    history = await stack.client.get_workflow_handle(workflow_id(run_id)).fetch_history()

    assert result.status == "completed", result.reason
    assert result.script_runs == 1
    assert result.answer is not None
    assert result.answer.endswith("/outputs/late.txt")
    # The limits the run ran under are the worker's, and `status` says so.
    # (and that its model calls do the reads the run defers to them)
    theirs = activity_timeouts(worker_settings.workflow).model_copy(
        update={"model_calls_read": True}
    )
    assert view.limits == theirs
    assert theirs != ActivityTimeouts(script_seconds=CLIENT_SCRIPT_TIMEOUT)
    # The script step was scheduled with the worker's timeouts, once, and took one attempt.
    scheduled = [
        e["activityTaskScheduledEventAttributes"]
        for e in _events(history, "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED")
        if e["activityTaskScheduledEventAttributes"]["activityType"]["name"] == "run_skill_script"
    ]
    assert len(scheduled) == 1
    (step,) = scheduled
    assert _seconds(step["startToCloseTimeout"]) == theirs.script_seconds
    assert _seconds(step["heartbeatTimeout"]) == theirs.heartbeat_seconds
    assert step["retryPolicy"]["maximumAttempts"] == theirs.max_attempts
    started = [
        e["activityTaskStartedEventAttributes"]
        for e in _events(history, "EVENT_TYPE_ACTIVITY_TASK_STARTED")
        if e["activityTaskStartedEventAttributes"]["scheduledEventId"]
        == next(
            e["eventId"]
            for e in _events(history, "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED")
            if e["activityTaskScheduledEventAttributes"]["activityId"] == step["activityId"]
        )
    ]
    assert [s.get("attempt", 1) for s in started] == [1]
    assert not _events(history, "EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT")
    # The client sent no limits; the run asked its worker once, at its start (a local activity).
    (first,) = _events(history, "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED")
    (payload,) = first["workflowExecutionStartedEventAttributes"]["input"]["payloads"]
    sent = json.loads(base64.b64decode(payload["data"]))
    assert "timeouts" not in sent
    assert sent["limits"] is None
    local = [
        json.loads(base64.b64decode(marker["details"]["data"]["payloads"][0]["data"]))
        for e in _events(history, "EVENT_TYPE_MARKER_RECORDED")
        if (marker := e["markerRecordedEventAttributes"])["markerName"] == "core_local_activity"
    ]
    assert [m["activity_type"] for m in local].count("run_limits") == 1
    assert local[0]["activity_type"] == "run_limits"
    patches = [
        json.loads(base64.b64decode(payload["data"]))["id"]
        for e in _events(history, "EVENT_TYPE_MARKER_RECORDED")
        if e["markerRecordedEventAttributes"]["markerName"] == "core_patch"
        for payload in e["markerRecordedEventAttributes"]["details"]["patch-data"]["payloads"]
    ]
    assert patches == []  # the baseline: asking is no patch of its own
    # Deterministic: the history replays against the workflow code.
    replayed = await Replayer(
        workflows=[AgentWorkflow],
        data_converter=data_converter(stack.store),
        workflow_runner=sandbox_runner(),
    ).replay_workflow(history)
    assert replayed.replay_failure is None
