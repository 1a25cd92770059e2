"""Determinism: recorded workflow histories replay against today's workflow code.

``tests/data/histories/*.json`` are real runs run as ``AgentWorkflow`` on a real dev server
(``bench/record_history.py``): the demo run, and a conversation that continues as new and
takes a signal, an update and timers (see the README there). Replaying needs no server: the
``Replayer`` feeds the recorded events to the workflow code in this process, with the worker's
data converter and sandbox, and fails on the first command that differs from the history (an
activity added, removed, renamed or reordered; a timer; a search-attribute upsert; a
continue-as-new). A workflow change that fails here would break every run running when it is
deployed: gate it (``workflow.patched``, or what the history holds: the worker's ``run_limits``
answer gates the reads that ride with model calls) and keep the old histories (in a folder named
for the change), or, before the first release only, re-record the histories on purpose (the
rule is in ``workflows.agent``'s docstring).
"""

from __future__ import annotations

import base64
import json
import re
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
GOLDEN = sorted(path.relative_to(HISTORIES).as_posix() for path in HISTORIES.rglob("*.json"))
"""Every recorded history: today's, and those of earlier workflow code (in folders named for
the change to the workflow's commands before which they were recorded: ``before-…``), which
must keep replaying."""
CURRENT = [name for name in GOLDEN if "/" not in name]

ACTIVITIES = {
    "run_limits",
    "prepare_catalog",
    "invoke_model",
    "load_skill",
    "read_skill_resource",
    "run_skill_script",
    "search_skills",
    "record_transcript",
}


def _data(name: str) -> dict[str, Any]:
    return json.loads((HISTORIES / name).read_text(encoding="utf-8"))


def _history(name: str, data: dict[str, Any]) -> WorkflowHistory:
    run = re.sub(r"-\d+$", "", Path(name).stem)  # conversation-2.json: run 2 of the run
    return WorkflowHistory.from_json(workflow_id(f"golden-{run}"), data)


def _replayer() -> Replayer:
    return Replayer(
        workflows=[AgentWorkflow],
        data_converter=data_converter(),
        workflow_runner=sandbox_runner(),
    )


def _local_activity(event: dict[str, Any]) -> tuple[str, Any] | None:
    """A local activity's name and result when `event` is its marker, else None."""
    if event["eventType"] != "EVENT_TYPE_MARKER_RECORDED":
        return None
    marker = event["markerRecordedEventAttributes"]
    if marker["markerName"] != "core_local_activity":
        return None
    (payload,) = marker["details"]["data"]["payloads"]
    results = marker["details"].get("result", {}).get("payloads", [])
    result = json.loads(base64.b64decode(results[0]["data"])) if results else None
    return json.loads(base64.b64decode(payload["data"]))["activity_type"], result


def _scheduled(data: dict[str, Any]) -> list[str]:
    """The activities a history ran, in order: scheduled ones, and local ones (a marker)."""
    names = []
    for event in data["events"]:
        if event["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED":
            names.append(event["activityTaskScheduledEventAttributes"]["activityType"]["name"])
        elif (local := _local_activity(event)) is not None:
            names.append(local[0])
    return names


def _patches(data: dict[str, Any]) -> list[str]:
    """The ``workflow.patched`` ids a history recorded (a ``core_patch`` marker each), in order."""
    return [
        json.loads(base64.b64decode(payload["data"]))["id"]
        for event in data["events"]
        if event["eventType"] == "EVENT_TYPE_MARKER_RECORDED"
        and event["markerRecordedEventAttributes"]["markerName"] == "core_patch"
        for payload in event["markerRecordedEventAttributes"]["details"]["patch-data"]["payloads"]
    ]


def _input(data: dict[str, Any]) -> dict[str, Any]:
    """The run's ``AgentWorkflowInput``, as recorded."""
    started = data["events"][0]["workflowExecutionStartedEventAttributes"]
    (payload,) = started["input"]["payloads"]
    return json.loads(base64.b64decode(payload["data"]))


def _continued(data: dict[str, Any]) -> bool:
    """Whether the run was started by continue-as-new (not the run's first run)."""
    started = data["events"][0]["workflowExecutionStartedEventAttributes"]
    return bool(started.get("continuedExecutionRunId"))


def _local(data: dict[str, Any]) -> set[str]:
    """The activities a history ran as local activities."""
    return set(_scheduled(data)) - {
        event["activityTaskScheduledEventAttributes"]["activityType"]["name"]
        for event in data["events"]
        if event["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED"
    }


@pytest.mark.parametrize("name", GOLDEN)
async def test_a_recorded_history_replays_against_the_workflow_code(name: str) -> None:
    result = await _replayer().replay_workflow(_history(name, _data(name)))

    assert result.replay_failure is None


def test_the_histories_cover_every_activity_and_interaction() -> None:
    """Re-recording must not quietly lose what the histories guard."""
    assert "demo.json" in GOLDEN
    demo = _data("demo.json")
    assert _scheduled(demo).count("invoke_model") == 7
    assert _scheduled(demo).count("run_skill_script") == 2
    assert demo["events"][-1]["eventType"] == "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED"

    histories = [_data(name) for name in CURRENT]
    assert {a for data in histories for a in _scheduled(data)} == ACTIVITIES
    kinds = {event["eventType"] for data in histories for event in data["events"]}
    assert {
        "EVENT_TYPE_TIMER_STARTED",
        "EVENT_TYPE_TIMER_CANCELED",
        "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED",
        "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED",
        "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED",
        "EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW",
        "EVENT_TYPE_WORKFLOW_EXECUTION_FAILED",
    } <= kinds


async def test_a_history_that_disagrees_with_the_code_fails_the_replay() -> None:
    """The guard has teeth: one renamed activity in the history is a nondeterminism error."""
    data = _data("demo.json")
    for event in data["events"]:
        if event["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED":
            attributes = event["activityTaskScheduledEventAttributes"]
            if attributes["activityType"]["name"] == "run_skill_script":
                attributes["activityType"]["name"] = "run_skill_file"
                break
    else:
        pytest.fail("the demo history has no run_skill_script activity")

    with pytest.raises(NondeterminismError, match="run_skill_script"):
        await _replayer().replay_workflow(_history("demo.json", data))


async def test_a_history_with_another_local_activity_fails_the_replay() -> None:
    """And for a local activity (a marker): the read a run deferred and did as it ended."""
    data = _data("conversation-2.json")
    for event in data["events"]:
        marker = event.get("markerRecordedEventAttributes")
        if marker is not None and marker["markerName"] == "core_local_activity":
            (payload,) = marker["details"]["data"]["payloads"]
            recorded = json.loads(base64.b64decode(payload["data"]))
            if recorded["activity_type"] == "read_skill_resource":
                recorded["activity_type"] = "read_skill_file"
                payload["data"] = base64.b64encode(json.dumps(recorded).encode()).decode()
                break
    else:
        pytest.fail("the conversation's second run has no local read_skill_resource")

    with pytest.raises(NondeterminismError):
        await _replayer().replay_workflow(_history("conversation-2.json", data))


def _scheduled_inputs(data: dict[str, Any], activity: str) -> list[dict[str, Any]]:
    """The inputs of every scheduled `activity`, in order."""
    found = []
    for event in data["events"]:
        attributes = event.get("activityTaskScheduledEventAttributes")
        if attributes is not None and attributes["activityType"]["name"] == activity:
            (payload,) = attributes["input"]["payloads"]
            found.append(json.loads(base64.b64decode(payload["data"])))
    return found


def _limits_told(data: dict[str, Any]) -> dict[str, Any]:
    """What the run's ``run_limits`` answered (a run's first run), or its carried limits."""
    for event in data["events"]:
        local = _local_activity(event)
        if local is not None and local[0] == "run_limits":
            told: dict[str, Any] = local[1]
            return told
    carried: dict[str, Any] = _input(data)["limits"]
    return carried


def test_a_read_rides_with_the_next_model_call_where_the_worker_said_it_may() -> None:
    """Today's worker answers ``model_calls_read``, and its runs' reads ride with the next
    ``invoke_model`` (in its input): no call and no activation of their own. A run whose
    limits lack it (one an earlier worker answered, recorded in the kept histories) read with
    local activities, and replays so (the test above replays them)."""
    demo, before = _data("demo.json"), _data("before-reads-ride-with-model-calls/demo.json")
    assert _limits_told(demo)["model_calls_read"] is True
    assert "model_calls_read" not in _limits_told(before)
    assert "read_skill_resource" not in _scheduled(demo)
    assert _scheduled(before).count("read_skill_resource") == 1
    # The demo's one read (examples/demo/script.yaml) rode with the model call after it.
    calls = _scheduled_inputs(demo, "invoke_model")
    riding = [(n, r) for n, call in enumerate(calls) for r in call.get("reads", ())]
    assert [(r["skill"], r["path"]) for _, r in riding] == [
        ("csv-profiler", "references/stats-format.md")
    ]
    ((n, read),) = riding
    # Asked for by the reply of the call before (stored after it), seen by this one.
    assert calls[n - 1]["reply_seq"] < read["seq"] < calls[n]["reply_seq"]
    assert len(demo["events"]) < len(before["events"])
    # A read still waiting when the run ends (its budget ran out) is done then, on its own.
    conversation = _data("conversation-2.json")
    assert _limits_told(conversation)["model_calls_read"] is True
    assert _scheduled(conversation)[-2:] == ["read_skill_resource", "record_transcript"]


def _upserts(data: dict[str, Any]) -> list[dict[str, str]]:
    """The values of every upsert of our search attributes, in order."""
    found = []
    for event in data["events"]:
        if event["eventType"] != "EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES":
            continue
        fields = event["upsertWorkflowSearchAttributesEventAttributes"]["searchAttributes"][
            "indexedFields"
        ]
        values = {
            name: base64.b64decode(field["data"]).decode()
            for name, field in fields.items()
            if name.startswith("Skillweave")
        }
        if values:
            found.append(values)
    return found


def test_steps_make_few_history_events() -> None:
    """Each upsert is a history event: the workflow writes one when the phase or the active
    skills change (turns and tokens ride along) or every tenth turn, not on every event, and not
    for the phases of local reads (``tests/reliability/test_length.py`` shows the tenth-turn
    rule on a long run of reads). The baseline records no ``workflow.patched`` marker."""
    for name in CURRENT:
        data = _data(name)
        upserts = _upserts(data)
        assert all(
            "SkillweavePhase" in values or "SkillweaveTurns" in values for values in upserts
        ), (name, upserts)
        shown = {
            json.loads(values["SkillweavePhase"])
            for values in upserts
            if "SkillweavePhase" in values
        }
        assert not shown & {"starting", "reading", "searching"}, (name, shown)
        assert _patches(data) == [], name
    # The cheap reads ran as local activities (a marker each, no task of their own); the
    # side effects that must not run twice or run long stayed activities.
    local = set().union(*(_local(_data(name)) for name in CURRENT))
    assert local == {"run_limits", "prepare_catalog", "read_skill_resource", "search_skills"}
    demo = _data("demo.json")
    assert len(_upserts(demo)) < len(_scheduled(demo))


def test_a_run_asks_its_worker_for_its_limits_once_at_its_start() -> None:
    """A run's first run asks its worker for the limits its activities run under: one
    ``run_limits`` local activity (a marker), before any other step; a run continued as new
    carries them in its input and does not ask again."""
    first_runs = {name for name in CURRENT if not _continued(_data(name))}
    assert first_runs == {"demo.json", "conversation-1.json"}, CURRENT
    for name in CURRENT:
        data = _data(name)
        asked = _scheduled(data).count("run_limits")
        if _continued(data):
            assert asked == 0, name
            assert _input(data)["limits"] is not None, name
        else:
            assert asked == 1, name
            assert _scheduled(data)[0] == "run_limits", name
            assert "run_limits" in _local(data), name
            assert _input(data)["limits"] is None, name
    # What run 1 of the conversation was told is what run 2 runs under.
    (told,) = [
        local[1]
        for event in _data("conversation-1.json")["events"]
        if (local := _local_activity(event)) is not None and local[0] == "run_limits"
    ]
    assert told is not None
    assert _input(_data("conversation-2.json"))["limits"] == told
