"""One store for a deployment (issue 28, part 2): a job carries the id of the store it was
started against, and a worker whose store has another id refuses it at its first step, naming
both, instead of failing far away ("input … does not exist")."""

from __future__ import annotations

import pytest

from skillweave.agent import AgentSpec
from skillweave.engines import JobRequest
from skillweave.engines.temporal import TemporalEngine
from skillweave.storage.identity import store_identity
from skillweave.storage.local import LocalArtifactStore
from tests.integration.temporal.harness import TOOLS, Stack, open_engine

pytestmark = pytest.mark.asyncio(loop_scope="session")

SCRIPT = 'turns: [{say: "done"}]'


async def test_a_worker_refuses_a_job_started_against_another_store(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = LocalArtifactStore(tmp_path_factory.mktemp("another-store"))
    async with open_engine("temporal", stack, SCRIPT) as harness:
        queue = harness.temporal.task_queue
        for name, store in (("job-wrong-store", elsewhere), ("job-right-store", stack.store)):
            client = TemporalEngine(stack.client, task_queue=queue, store=store)
            await client.start(
                JobRequest(job_id=name, task="Anything.", agent=AgentSpec(skills=(TOOLS,)))
            )
        wrong = await harness.engine.result("job-wrong-store")
        right = await harness.engine.result("job-right-store")

    assert wrong.status == "failed"
    assert wrong.reason is not None
    assert f"started against the store {await store_identity(elsewhere)}" in wrong.reason
    assert f"this process's store is {await store_identity(stack.store)}" in wrong.reason
    assert right.status == "completed", right.reason
