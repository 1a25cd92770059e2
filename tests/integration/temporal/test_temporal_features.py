"""What only the Temporal engine has: the ``send_message`` update and its validator, the
``status`` query, visibility through search attributes (seen by the ``temporal`` CLI), and the
typed failures a run's workflow ends with. Real dev server, worker, manager and sandboxes."""

from __future__ import annotations

import asyncio
import json
import subprocess
from dataclasses import dataclass
from typing import Any

import pytest
from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
)
from temporalio.exceptions import ApplicationError

from skillweave.agent import AgentSpec
from skillweave.agent.state import Budgets
from skillweave.engines import RunResult
from skillweave.engines.contract import (
    MAX_MESSAGE_CHARS,
    SA_ACTIVE_SKILLS,
    UPDATE_SEND,
    Reply,
    UserMessage,
)
from skillweave.errors import AgentError
from tests.integration.harness import eventually
from tests.integration.temporal.harness import (
    RESOURCE_MARKER,
    STDOUT_MARKER,
    TEMPORAL_CLI,
    TOOLS,
    Stack,
    kind_is,
    open_engine,
)
from tests.transcripts import stored_records

pytestmark = pytest.mark.asyncio(loop_scope="session")

TALK = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: test-tools}}]
  - say: "First answer."
  - say: "Second answer, to your question."
"""


async def test_the_update_validator_refuses_bad_messages_and_an_accepted_one_gets_the_reply(
    stack: Stack,
) -> None:
    async with open_engine("temporal", stack, TALK) as harness:
        engine = harness.temporal
        run_id = await harness.start(
            "Talk to me.", agent=AgentSpec(skills=(TOOLS,), follow_up_seconds=4)
        )
        handle = harness.handle(run_id)
        await harness.wait_event(run_id, kind_is("answered"))
        view = await engine.status(run_id)
        assert (view.phase, view.answer_turn) == ("waiting_input", 2)

        # Refused by the validator: the update never reaches the workflow's history.
        with pytest.raises(WorkflowUpdateFailedError) as empty:
            await handle.execute_update(UPDATE_SEND, UserMessage(text="  \n "), result_type=Reply)
        assert isinstance(empty.value.cause, ApplicationError)
        assert "the message is empty" in empty.value.cause.message
        with pytest.raises(AgentError, match="message refused: the message is empty"):
            await engine.ask(run_id, "")
        too_long = f"the message has {MAX_MESSAGE_CHARS + 1} characters; the limit is"
        with pytest.raises(AgentError, match=too_long):
            await engine.ask(run_id, "x" * (MAX_MESSAGE_CHARS + 1))
        with pytest.raises(AgentError, match="stale: it replies to the answer of turn 1"):
            await engine.ask(run_id, "About your first words...", reply_to_turn=1)

        # Accepted: the update completes with the model's answer to this very message.
        reply = await engine.ask(run_id, "What did you mean?", reply_to_turn=2)
        assert reply == Reply(
            run_id=run_id, turn=3, status="running", text="Second answer, to your question."
        )
        with pytest.raises(AgentError, match="latest answer is from turn 3"):
            await engine.ask(run_id, "And the first answer?", reply_to_turn=2)

        # Nobody writes within follow_up_seconds: the session closes; the run has ended.
        result = await engine.result(run_id)
        assert result.status == "completed"
        assert result.answer == "Second answer, to your question."
        with pytest.raises(AgentError, match="has ended"):
            await engine.ask(run_id, "Still there?")
        with pytest.raises(AgentError, match="has ended"):
            await engine.send(run_id, "Hello?")
        history = await handle.fetch_history()

    accepted = [
        event
        for event in history.events
        if event.HasField("workflow_execution_update_accepted_event_attributes")
    ]
    assert len(accepted) == 1, "a refused message must leave no trace in history"


STATUS = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
    usage: {{input_tokens: 100, output_tokens: 10}}
  - tool_calls:
      - {{name: read_skill_resource, arguments: {{skill: {TOOLS}, path: references/notes.md}}}}
      - {{name: run_skill_script, arguments: {{skill: {TOOLS}, script: scripts/echo.py}}}}
    usage: {{input_tokens: 200, output_tokens: 20}}
  - say: "All done."
    expect:
      tool_results:
        - {{contains: "{RESOURCE_MARKER}"}}
        - {{contains: "{STDOUT_MARKER}"}}
    usage: {{input_tokens: 300, output_tokens: 30}}
"""


def _cli_list(address: str, query: str) -> list[dict[str, object]]:
    done = subprocess.run(
        [
            str(TEMPORAL_CLI),
            "workflow",
            "list",
            "--address",
            address,
            "--query",
            query,
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(done.stdout or "[]")


async def test_status_and_visibility_show_phase_skills_and_usage_but_never_the_transcript(
    stack: Stack,
) -> None:
    async with open_engine("temporal", stack, STATUS) as harness:
        engine = harness.temporal
        run_id = await harness.start(
            "Read the notes and echo.", agent=AgentSpec(skills=(TOOLS,), follow_up_seconds=3)
        )
        await harness.wait_event(run_id, kind_is("answered"))
        waiting = await engine.status(run_id)
        result = await engine.result(run_id)
        final = await engine.status(run_id)
        history = await harness.handle(run_id).fetch_history()

    version = stack.registry.get(TOOLS).version
    assert waiting.phase == "waiting_input"
    assert final.phase == "completed"
    for view in (waiting, final):
        assert view.active_skills == {TOOLS: version}
        assert (view.turn, view.script_runs) == (3, 1)
        assert (view.usage.input_tokens, view.usage.output_tokens) == (600, 60)
        shown = view.model_dump_json()
        assert RESOURCE_MARKER not in shown
        assert STDOUT_MARKER not in shown
    assert result.usage == final.usage

    # The transcript (with the tool outputs) is in the store, by reference only: not in the
    # status, and not anywhere in the workflow's history.
    transcript = json.dumps(stored_records(stack.store, run_id)).encode()
    assert RESOURCE_MARKER.encode() in transcript
    assert STDOUT_MARKER.encode() in transcript
    recorded = b"".join(event.SerializeToString() for event in history.events)
    assert b"All done." in recorded  # the model's reply itself is a small activity result
    assert RESOURCE_MARKER.encode() not in recorded
    assert STDOUT_MARKER.encode() not in recorded

    # Visibility (eventually consistent): the CLI finds the run by the skill it activated.
    address = stack.temporal_address
    query = f"{SA_ACTIVE_SKILLS.name} = '{TOOLS}'"

    async def listed() -> list[dict[str, object]] | None:
        rows = await asyncio.to_thread(_cli_list, address, query)
        mine = [row for row in rows if row["execution"]["workflowId"] == harness.handle(run_id).id]
        return mine or None

    (row,) = await eventually(listed, timeout=20, every=0.3, what=f"{run_id} listed by skill")
    assert row["status"] == "WORKFLOW_EXECUTION_STATUS_COMPLETED"
    runs = await engine.list_runs(skill=TOOLS, phase="completed")
    assert run_id in [run.run_id for run in runs]
    (mine,) = [run for run in runs if run.run_id == run_id]
    assert mine.active_skills == (TOOLS,)
    assert (mine.turns, mine.tokens) == (3, 660)
    others = await engine.list_runs(skill="http-api-guidelines")
    assert run_id not in [run.run_id for run in others]


@dataclass(frozen=True)
class FailureCase:
    script: str
    limits: Budgets
    status: str
    reason: str


FAILURES = {
    "BudgetExhausted": FailureCase(
        script="""
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: test-tools}}]
  - say: "never reached"
""",
        limits=Budgets(max_turns=1),
        status="budget_exhausted",
        reason="max_turns reached (1 model call)",
    ),
    # The scripted model has no second turn: a non-retryable model error fails the tool call.
    "RunFailed": FailureCase(
        script="""
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: test-tools}}]
""",
        limits=Budgets(),
        status="failed",
        reason="scripted model has no turn 2",
    ),
}


@pytest.mark.parametrize("failure_type", list(FAILURES))
async def test_a_run_that_cannot_finish_fails_its_workflow_with_a_typed_error(
    stack: Stack, failure_type: str
) -> None:
    case = FAILURES[failure_type]
    async with open_engine("temporal", stack, case.script) as harness:
        run_id = await harness.start("Go.", agent=AgentSpec(skills=(TOOLS,), limits=case.limits))
        with pytest.raises(WorkflowFailureError) as failed:
            await harness.handle(run_id).result()
        result = await harness.engine.result(run_id)

    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.type == failure_type
    assert cause.non_retryable
    assert case.reason in cause.message
    carried = RunResult.model_validate(cause.details[0])
    assert carried.status == case.status
    assert result.status == case.status
    assert case.reason in (result.reason or "")
    assert result.turns == 1
    assert list(result.active_skills) == [TOOLS]


SLOW = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
  - tool_calls:
      - {{name: run_skill_script,
         arguments: {{skill: {TOOLS}, script: scripts/slow.py, args: ["30", long]}}}}
  - say: "never reached"
"""


async def test_a_workflow_cancelled_from_outside_stops_its_script_and_ends_cancelled(
    stack: Stack,
) -> None:
    manager = stack.manager
    async with open_engine("temporal", stack, SLOW) as harness:
        run_id = await harness.start("Take your time.", agent=AgentSpec(skills=(TOOLS,)))
        execution_id = harness.execution_id(run_id, 4)

        async def running() -> bool:
            found = await manager.execution(execution_id)
            return found is not None and found["state"] == "running"

        await eventually(running, what=f"{execution_id} running at the manager")
        handle = harness.handle(run_id)
        # What the UI's "Request cancellation" and `temporal workflow cancel` do.
        await handle.cancel()
        result = await harness.engine.result(run_id)
        description = await handle.describe()

    assert description.status == WorkflowExecutionStatus.CANCELED
    assert result.status == "cancelled"

    async def finished() -> dict[str, Any] | None:
        found = await manager.execution(execution_id)
        return found if found is not None and found["state"] == "finished" else None

    found = await eventually(finished, timeout=10, what=f"{execution_id} finished")
    assert found["result"]["status"] == "cancelled"
