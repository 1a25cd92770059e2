"""A resource read rides with the next model call, on a real Temporal dev server (issue 47).

The loop answers ``read_skill_resource`` by deferring the read: the next ``invoke_model``
activity does it (its input carries it) before it reads the transcript back, so a read step
takes one activity and one workflow task, not a local activity and a second activation too.
Whether a run's reads ride is what its worker's ``run_limits`` answered (``model_calls_read``),
recorded in the run's history, so a run asked by an earlier worker reads as its history did.
And during a rolling deploy, a model call with reads that an earlier worker took (it ignores
them, finds no record at their seqs and fails ``ArtifactNotFoundError``) is made again: the
workflow does the reads as local activities first. Each run's history replays.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from temporalio.worker import Replayer

from skillweave.agent import AgentSpec, InvokeModelInput, ModelTurn
from skillweave.config import Settings
from skillweave.engines import AgentServices, RunRequest, RunResult
from skillweave.engines.contract import workflow_id
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import connect_engine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.store_id import store_identity
from tests.integration.temporal.harness import (
    RESOURCE_MARKER,
    TEST_TIMEOUTS,
    TOOLS,
    Stack,
    unique,
)
from workflows.agent import AgentWorkflow
from workflows.worker import build_worker, sandbox_runner

pytestmark = pytest.mark.asyncio(loop_scope="session")

READ = f"{{name: read_skill_resource, arguments: {{skill: {TOOLS}, path: references/notes.md}}}}"
SCRIPT = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
  - tool_calls: [{READ}, {READ}]
  - tool_calls: [{READ}]
    expect: {{tool_results: [{{not_error: true, contains: "{RESOURCE_MARKER}"}}]}}
  - say: "read it"
    expect: {{tool_results: [{{not_error: true, contains: "{RESOURCE_MARKER}"}}]}}
"""


def _events(history: Any) -> list[dict[str, Any]]:
    return list(json.loads(history.to_json())["events"])


def _decoded(payloads: dict[str, Any]) -> Any:
    (payload,) = payloads["payloads"]
    return json.loads(base64.b64decode(payload["data"]))


def _steps(events: list[dict[str, Any]]) -> list[str]:
    """The activities in order: ``name`` scheduled, ``local:name`` a local one's marker,
    ``failed:name`` an activity that failed (for good)."""
    names: dict[str, str] = {}
    steps = []
    for event in events:
        kind = event["eventType"]
        if kind == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED":
            name = event["activityTaskScheduledEventAttributes"]["activityType"]["name"]
            names[event["eventId"]] = name
            steps.append(name)
        elif kind == "EVENT_TYPE_ACTIVITY_TASK_FAILED":
            scheduled = event["activityTaskFailedEventAttributes"]["scheduledEventId"]
            steps.append(f"failed:{names[scheduled]}")
        elif kind == "EVENT_TYPE_MARKER_RECORDED":
            marker = event["markerRecordedEventAttributes"]
            if marker["markerName"] == "core_local_activity":
                steps.append(f"local:{_decoded(marker['details']['data'])['activity_type']}")
    return steps


def _model_reads(events: list[dict[str, Any]]) -> list[list[str]]:
    """The paths each ``invoke_model`` call was asked to read first, call by call."""
    return [
        [read["path"] for read in _decoded(attributes["input"]).get("reads", ())]
        for event in events
        if (attributes := event.get("activityTaskScheduledEventAttributes"))
        and attributes["activityType"]["name"] == "invoke_model"
    ]


async def _run(
    stack: Stack, services: AgentServices, *, reads_ride: bool = True
) -> tuple[RunResult, list[dict[str, Any]]]:
    """One run of `SCRIPT` on a worker over `services` whose ``run_limits`` answers
    ``model_calls_read`` = `reads_ride`; its result and its history's events, which replay."""
    task_queue = unique("reads")
    client_settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        workflow={"temporal_address": stack.temporal_address, "task_queue": task_queue},
    )
    engine = await connect_engine(client_settings, stack.store)
    run_id = unique("reads")
    async with build_worker(
        stack.client,
        services,
        task_queue=task_queue,
        store_id=await store_identity(stack.store),
        heartbeat_seconds=0.5,
        limits=TEST_TIMEOUTS,
        model_calls_read=reads_ride,
    ):
        await engine.start(RunRequest(run_id=run_id, task="Read the notes.", agent=AgentSpec()))
        result = await engine.result(run_id)
    history = await stack.client.get_workflow_handle(workflow_id(run_id)).fetch_history()
    replayer = Replayer(
        workflows=[AgentWorkflow],
        data_converter=data_converter(),
        workflow_runner=sandbox_runner(),
    )
    replayed = await replayer.replay_workflow(history)
    assert replayed.replay_failure is None
    return result, _events(history)


def _services(stack: Stack) -> AgentServices:
    return AgentServices(
        settings=stack.settings,
        registry=stack.registry,
        store=stack.store,
        provider=ScriptedProvider.from_yaml(SCRIPT),
        model="scripted",
        sandbox=stack.sandbox,
    )


async def test_reads_ride_with_the_next_model_call(stack: Stack) -> None:
    result, events = await _run(stack, _services(stack))

    assert result.status == "completed", result.reason
    assert result.answer == "read it"  # the model saw each read's text (the script expects it)
    steps = _steps(events)
    assert "local:read_skill_resource" not in steps
    assert "read_skill_resource" not in steps
    notes = "references/notes.md"
    assert _model_reads(events) == [[], [], [notes, notes], [notes]]


async def test_a_run_whose_worker_did_not_say_so_reads_on_its_own(stack: Stack) -> None:
    """A run an earlier worker answered ``run_limits`` for: its reads are local activities."""
    result, events = await _run(stack, _services(stack), reads_ride=False)

    assert result.status == "completed", result.reason
    assert _steps(events).count("local:read_skill_resource") == 3
    assert _model_reads(events) == [[], [], [], []]


async def test_a_model_call_an_earlier_worker_took_is_made_again_after_the_reads(
    stack: Stack,
) -> None:
    """Rolling deploy: the worker that takes the model calls ignores their reads, as a worker
    of an earlier release does; the first call with reads fails for good (no record at the
    reads' seqs), the workflow does the reads itself, and calls again."""
    services = _services(stack)
    invoke = services.model_calls.invoke

    async def as_an_earlier_worker(request: InvokeModelInput) -> ModelTurn:
        return await invoke(request.model_copy(update={"reads": ()}))

    services.model_calls.invoke = as_an_earlier_worker  # type: ignore[method-assign]
    result, events = await _run(stack, services)

    assert result.status == "completed", result.reason
    assert result.answer == "read it"
    steps = _steps(events)
    after_activation = steps[steps.index("load_skill") + 1 :]
    assert after_activation == [
        "invoke_model",
        "invoke_model",
        "failed:invoke_model",
        "local:read_skill_resource",
        "local:read_skill_resource",
        "invoke_model",
        "invoke_model",
        "failed:invoke_model",
        "local:read_skill_resource",
        "invoke_model",
    ]
    failures = [
        event["activityTaskFailedEventAttributes"]["failure"]["applicationFailureInfo"]["type"]
        for event in events
        if event["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_FAILED"
    ]
    assert failures == ["ArtifactNotFoundError", "ArtifactNotFoundError"]
