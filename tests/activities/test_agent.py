"""The agent activities run in Temporal's activity environment over fake services.

Cancelling a script run at the manager is the services' run, the same on both engines:
tests/engines/test_services_cancel.py."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import cast

import pytest
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities import AgentActivities
from skillweave.agent.effect_models import (
    ActivityTimeouts,
    CatalogInput,
    CatalogResult,
    InvokeModelInput,
    LimitsInput,
    ModelTurn,
    RecordInput,
    RunScriptInput,
    ScriptOutcome,
    TranscriptView,
    TranscriptWrite,
)
from skillweave.agent.effects import (
    EFFECTS,
    INVOKE_MODEL,
    PREPARE_CATALOG,
    RECORD_TRANSCRIPT,
    RUN_LIMITS,
    RUN_SKILL_SCRIPT,
)
from skillweave.config import Settings, WorkflowSettings
from skillweave.engines.services import AgentServices
from skillweave.errors import ConfigError, ModelError, SandboxError, SkillNotFoundError
from skillweave.llm.messages import Message, Usage

WORKFLOW_ID = "skillweave-run-j1"
KEY = f"{WORKFLOW_ID}/script-7"

SCRIPT = RunScriptInput(
    run_id="r1",
    execution_id=KEY,
    skill="notes",
    version="a" * 64,
    script="scripts/add.py",
    seq=7,
    tool_call_id="call-1",
)
MODEL_CALL = InvokeModelInput(
    run_id="r1", system="be brief", tools=(), view=TranscriptView(upto=1), reply_seq=1
)


class FakeSandbox:
    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.cancelled: list[str] = []

    async def cancel(self, execution_id: str) -> bool:
        self.cancelled.append(execution_id)
        if self.fail:
            raise SandboxError("cannot reach the MCP manager")
        return True


class FakeServices:
    """The ``AgentServices`` methods the activities call; slow calls wait on `gate`."""

    def __init__(self, *, sandbox: FakeSandbox | None = None) -> None:
        self.sandbox = sandbox or FakeSandbox()
        self.settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            workflow=WorkflowSettings(script_timeout_seconds=42.0, activity_max_attempts=3),
        )
        self.started = asyncio.Event()
        self.gate = asyncio.Event()
        self.gate.set()
        self.scripts: list[RunScriptInput] = []
        self.recorded: list[tuple[list[TranscriptWrite], str]] = []
        self.model_error: Exception | None = None

    async def prepare_catalog(self, request: CatalogInput) -> CatalogResult:
        raise SkillNotFoundError("pdf", available=("notes",))

    async def invoke_model(self, request: InvokeModelInput) -> ModelTurn:
        self.started.set()
        await self.gate.wait()
        if self.model_error is not None:
            raise self.model_error
        return ModelTurn(
            message=Message(role="assistant", text="done"), stop_reason="end_turn", usage=Usage()
        )

    async def run_skill_script(self, request: RunScriptInput) -> ScriptOutcome:
        self.scripts.append(request)
        self.started.set()
        await self.gate.wait()
        return ScriptOutcome(
            seq=request.seq, chars=10, summary="[ran]", status="succeeded", exit_code=0
        )

    async def record_transcript(self, request: RecordInput) -> None:
        self.recorded.append((list(request.writes), request.run_id))

    # Every side effect has an implementation (the activities check it when built); these
    # are not called here.
    load_skill = read_skill_resource = search_skills = create_skill = publish_skill = invoke_model
    find_skills = prepare_skill_request = install_skill = invoke_model


@pytest.fixture
def services() -> FakeServices:
    return FakeServices()


@pytest.fixture
def activities(services: FakeServices) -> AgentActivities:
    return AgentActivities(cast(AgentServices, services), heartbeat_seconds=0.01)


@pytest.fixture
def env() -> ActivityEnvironment:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, workflow_id=WORKFLOW_ID, activity_id="script-7")
    return env


def test_definitions_carry_the_names_the_workflow_calls(activities: AgentActivities) -> None:
    names = [activity._Definition.must_from_callable(fn).name for fn in activities.definitions()]
    assert names == [effect.name for effect in EFFECTS]
    # The names are in every recorded history: they never change.
    assert set(names) == {
        "prepare_catalog",
        "invoke_model",
        "load_skill",
        "read_skill_resource",
        "run_skill_script",
        "search_skills",
        "record_transcript",
        "create_skill",
        "publish_skill",
        "find_skills",
        "prepare_skill_request",
        "install_skill",
        "run_limits",
    }


def test_the_activities_take_and_answer_the_descriptors_models(
    activities: AgentActivities,
) -> None:
    """The SDK decodes a request and encodes a result by the activity's types: the
    descriptor's, since no activity is written by hand."""
    for effect in EFFECTS:
        defn = activity._Definition.must_from_callable(activities.definition(effect))
        assert defn.arg_types == [effect.input]
        assert defn.ret_type is (type(None) if effect.output is None else effect.output)


def test_services_without_a_side_effect_fail_when_the_activities_are_built(
    services: FakeServices,
) -> None:
    class Partial(FakeServices):
        publish_skill = None  # type: ignore[assignment]

    with pytest.raises(ConfigError, match="Partial implements no publish_skill"):
        AgentActivities(cast(AgentServices, Partial()))


async def test_a_run_is_told_the_limits_of_its_workers_settings(
    activities: AgentActivities, env: ActivityEnvironment
) -> None:
    """The worker owns the limits a run's activities run under: its own settings', whatever
    the client that started the run has set."""
    limits = await env.run(activities.definition(RUN_LIMITS), LimitsInput(run_id="r1"))

    # ...and that its model calls do the reads a run defers to them, whatever the limits.
    assert limits == ActivityTimeouts(script_seconds=42.0, max_attempts=3, model_calls_read=True)
    told = AgentActivities(
        activities._services, limits=ActivityTimeouts(heartbeat_seconds=2.0)
    )  # a worker composed with limits of its own (tests, the embedded stack)
    assert await env.run(told.definition(RUN_LIMITS), LimitsInput(run_id="r1")) == ActivityTimeouts(
        heartbeat_seconds=2.0, model_calls_read=True
    )
    earlier = AgentActivities(activities._services, model_calls_read=False)
    answer = await env.run(earlier.definition(RUN_LIMITS), LimitsInput(run_id="r1"))
    assert answer.model_calls_read is False  # as a worker of an earlier release answers


async def test_a_script_runs_under_the_key_the_loop_gave_it(
    activities: AgentActivities, services: FakeServices, env: ActivityEnvironment
) -> None:
    outcome = await env.run(activities.definition(RUN_SKILL_SCRIPT), SCRIPT)
    assert outcome.status == "succeeded"
    assert services.scripts == [SCRIPT]


@pytest.mark.parametrize(
    "foreign",
    ["chosen-by-the-caller", "skillweave-run-other/script-7", "j1/7", "j1/8", "j2/7"],
)
async def test_a_request_keyed_for_another_run_is_refused(
    activities: AgentActivities, services: FakeServices, env: ActivityEnvironment, foreign: str
) -> None:
    with pytest.raises(ApplicationError) as raised:
        await env.run(
            activities.definition(RUN_SKILL_SCRIPT),
            SCRIPT.model_copy(update={"execution_id": foreign}),
        )
    assert raised.value.type == "AgentError"
    assert raised.value.non_retryable
    assert services.scripts == []


async def test_every_attempt_uses_the_same_key(
    activities: AgentActivities, services: FakeServices, env: ActivityEnvironment
) -> None:
    await env.run(activities.definition(RUN_SKILL_SCRIPT), SCRIPT)
    env.info = dataclasses.replace(env.info, attempt=2)
    await env.run(activities.definition(RUN_SKILL_SCRIPT), SCRIPT)
    assert [s.execution_id for s in services.scripts] == [KEY, KEY]


async def test_a_script_run_outside_a_workflow_has_no_key_and_fails(
    activities: AgentActivities, services: FakeServices, env: ActivityEnvironment
) -> None:
    env.info = dataclasses.replace(env.info, workflow_id=None)
    with pytest.raises(ApplicationError) as raised:
        await env.run(activities.definition(RUN_SKILL_SCRIPT), SCRIPT)
    assert raised.value.type == "AgentError"
    assert raised.value.non_retryable
    assert services.scripts == []


async def test_a_slow_call_heartbeats_until_it_returns(
    activities: AgentActivities, services: FakeServices, env: ActivityEnvironment
) -> None:
    beats: list[tuple[object, ...]] = []
    env.on_heartbeat = lambda *details: beats.append(details)
    services.gate.clear()
    call = asyncio.create_task(env.run(activities.definition(INVOKE_MODEL), MODEL_CALL))
    await services.started.wait()
    await asyncio.sleep(0.1)
    assert len(beats) >= 3
    services.gate.set()
    turn = await call
    assert turn.message.text == "done"
    after = len(beats)
    await asyncio.sleep(0.05)
    assert len(beats) == after


async def test_a_transient_model_error_is_retried_after_retry_after(
    activities: AgentActivities, services: FakeServices, env: ActivityEnvironment
) -> None:
    services.model_error = ModelError("rate limited", retryable=True, retry_after=2, status=429)
    with pytest.raises(ApplicationError) as raised:
        await env.run(activities.definition(INVOKE_MODEL), MODEL_CALL)
    assert raised.value.type == "ModelError"
    assert not raised.value.non_retryable
    assert raised.value.next_retry_delay is not None
    assert raised.value.next_retry_delay.total_seconds() == 2


async def test_a_permanent_error_is_not_retried(
    activities: AgentActivities, env: ActivityEnvironment
) -> None:
    with pytest.raises(ApplicationError) as raised:
        await env.run(activities.definition(PREPARE_CATALOG), CatalogInput(run_id="r1", task="t"))
    assert raised.value.type == "SkillNotFoundError"
    assert raised.value.non_retryable


async def test_other_exceptions_leave_the_activity_in_one_line_and_are_retried(
    activities: AgentActivities, services: FakeServices, env: ActivityEnvironment
) -> None:
    services.model_error = OSError("connection reset")
    with pytest.raises(ApplicationError, match="connection reset") as raised:
        await env.run(activities.definition(INVOKE_MODEL), MODEL_CALL)
    assert raised.value.type == "OSError"
    assert not raised.value.non_retryable


async def test_record_transcript_stores_the_writes_under_the_run(
    activities: AgentActivities, services: FakeServices, env: ActivityEnvironment
) -> None:
    write = TranscriptWrite(seq=4, message=Message(role="user", text="thanks"))
    await env.run(
        activities.definition(RECORD_TRANSCRIPT), RecordInput(run_id="r1", writes=(write,))
    )
    assert services.recorded == [([write], "r1")]
