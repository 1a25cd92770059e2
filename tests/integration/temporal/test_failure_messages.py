"""What the Temporal UI shows of a step whose manager is down (issue 28, part 3): while the step
waits for the manager, its heartbeat details say so; once it fails, the cause in one line, its
fields as structured details, never "Failure exceeds size limit." Real Temporal dev server and
worker; the manager the worker is given is down."""

from __future__ import annotations

import pytest

from skillweave.agent import AgentSpec
from skillweave.cli.temporal_server import free_port
from skillweave.engines import AgentServices, RunRequest
from skillweave.engines.contract import workflow_id
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.storage.store_id import store_identity
from skillweave.waiting import Waiting
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TEST_TIMEOUTS, TOOLS, Stack, unique
from workflows.worker import build_worker

pytestmark = pytest.mark.asyncio(loop_scope="session")

SCRIPT = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
  - tool_calls:
      - {{name: run_skill_script, arguments: {{skill: {TOOLS}, script: scripts/upper.py}}}}
  - say: "unreached"
"""


async def test_a_step_whose_manager_is_down_shows_its_cause_in_one_line(stack: Stack) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    sandbox = stack.settings.sandbox.model_copy(update={"queue_seconds": 3.0})
    services = AgentServices(
        settings=stack.settings.model_copy(update={"sandbox": sandbox}),
        registry=stack.registry,
        store=stack.store,
        provider=ScriptedProvider.from_yaml(SCRIPT),
        model="scripted",
        sandbox=SandboxClient(down, token="t" * 16),
    )
    queue = unique("tq")
    engine = TemporalEngine(stack.client, task_queue=queue, store=stack.store)
    run_id = unique("down")
    async with build_worker(
        stack.client,
        services,
        task_queue=queue,
        store_id=await store_identity(stack.store),
        heartbeat_seconds=0.5,
        limits=TEST_TIMEOUTS,
    ):
        await engine.start(RunRequest(run_id=run_id, task="t", agent=AgentSpec(skills=(TOOLS,))))
        handle = stack.client.get_workflow_handle(workflow_id(run_id))

        async def waiting() -> object:
            described = await handle.describe()
            for pending in described.raw_description.pending_activities:
                if pending.activity_type.name == "run_skill_script" and pending.attempt == 1:
                    said = await stack.client.data_converter.decode(
                        pending.heartbeat_details.payloads
                    )
                    if said:
                        return said
            return None

        line, fields = await eventually(waiting, timeout=60, what="the step said it waits")
        # The wait as every view tells it: its line, then its fields (``Waiting``).
        told = Waiting.model_validate(fields)
        assert (told.on, told.call) == ("manager", f"script {TOOLS}/scripts/upper.py")
        assert told.detail.startswith(f"cannot reach the MCP manager at {down}")
        assert line.startswith(f"script {TOOLS}/scripts/upper.py: waiting for the MCP manager ")
        assert line.endswith(told.detail)

        async def failed_twice() -> object:
            described = await handle.describe()
            for pending in described.raw_description.pending_activities:
                if pending.activity_type.name == "run_skill_script" and pending.attempt >= 3:
                    return pending
            return None

        pending = await eventually(failed_twice, timeout=90, what="the step retried")
        await engine.cancel(run_id)

    failure = pending.last_failure
    assert failure.message.startswith(f"cannot reach the MCP manager at {down}")
    assert "\n" not in failure.message
    assert "exceeds size limit" not in failure.message
    assert not failure.HasField("cause")
    info = failure.application_failure_info
    assert info.type == "ManagerUnreachableError"
    assert not info.non_retryable
    (details,) = await stack.client.data_converter.decode(info.details.payloads)
    assert details["error"] == "ManagerUnreachableError"
    assert details["causes"][0].startswith("ConnectError")
