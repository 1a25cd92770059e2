"""On Temporal, a script step whose manager refuses the worker's token (issue 41): while it
waits, the pending activity's heartbeat details carry the ``Waiting`` (its line, then its
fields), which the UI shows and the engine's followers decode; the model never reads the
refusal. Real Temporal dev server, worker and manager; the worker holds a wrong token."""

from __future__ import annotations

import json

import pytest

from skillweave.agent import AgentSpec
from skillweave.engines import AgentServices, RunRequest
from skillweave.engines.contract import workflow_id
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.storage.store_id import store_identity
from skillweave.waiting import Waiting
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TEST_TIMEOUTS, TOOLS, Stack, unique
from tests.transcripts import stored_records
from workflows.worker import build_worker

pytestmark = pytest.mark.asyncio(loop_scope="session")

SCRIPT = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
  - tool_calls:
      - {{name: run_skill_script, arguments: {{skill: {TOOLS}, script: scripts/upper.py}}}}
  - say: "unreached"
"""


async def test_a_refused_token_is_a_wait_in_the_heartbeat_not_a_tool_result(stack: Stack) -> None:
    sandbox = stack.settings.sandbox.model_copy(update={"queue_seconds": 600.0})
    services = AgentServices(
        settings=stack.settings.model_copy(update={"sandbox": sandbox}),
        registry=stack.registry,
        store=stack.store,
        provider=ScriptedProvider.from_yaml(SCRIPT),
        model="scripted",
        sandbox=SandboxClient(stack.manager.url, token="not-the-managers-token"),
    )
    queue = unique("tq")
    engine = TemporalEngine(stack.client, task_queue=queue, store=stack.store)
    run_id = unique("refused")
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

        async def waiting() -> list[object] | None:
            described = await handle.describe()
            for pending in described.raw_description.pending_activities:
                if pending.activity_type.name == "run_skill_script":
                    details = await stack.client.data_converter.decode(
                        pending.heartbeat_details.payloads
                    )
                    if details:
                        return details
            return None

        line, fields = await eventually(waiting, timeout=60, what="the step told its wait")
        told = Waiting.model_validate(fields)
        assert told.on == "manager"
        assert told.call == f"script {TOOLS}/scripts/upper.py"
        assert told.detail == (
            f"the MCP manager at {stack.manager.url} refuses this worker's token (401): "
            "SANDBOX__MANAGER_TOKEN must be the manager's"
        )
        assert line.startswith(f"script {TOOLS}/scripts/upper.py: waiting for the MCP manager")
        assert line.endswith(told.detail)

        # Every beat while it lasts carries it, its age growing; the step is still attempt 1.
        async def later_beat() -> Waiting | None:
            details = await waiting()
            if not details or details[0] == line:
                return None
            return Waiting.model_validate(details[1])

        later = await eventually(later_beat, timeout=30, what="a later beat of the same wait")
        assert later.since == told.since
        described = await handle.describe()
        (pending,) = [
            p
            for p in described.raw_description.pending_activities
            if p.activity_type.name == "run_skill_script"
        ]
        assert pending.attempt == 1
        await engine.cancel(run_id)
    await services.sandbox.aclose()
    records = stored_records(stack.store, run_id)
    assert records  # the run's task and the model's call, at least
    assert "bearer token" not in json.dumps(records)
