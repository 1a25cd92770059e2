"""One store for a deployment (issue 28, part 2): a job carries the id of the store it was
started against, and a worker whose store has another id refuses it at its first step, naming
both, instead of failing far away ("input … does not exist"); a client whose workers say
another store is refused before the job starts."""

from __future__ import annotations

import pytest

from skillweave.agent import AgentSpec
from skillweave.engines import AgentServices, JobRequest
from skillweave.engines.temporal import TemporalEngine, worker_identity
from skillweave.errors import ConfigError
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.identity import store_identity
from skillweave.storage.local import LocalArtifactStore
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, Stack, open_engine, unique
from workflows.worker import build_worker

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


async def test_a_client_on_another_store_than_the_workers_is_refused_before_the_job_starts(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The workers' identities name their store: a client whose store is another one is
    refused at start, naming both, instead of starting a job no worker can run."""
    ours = await store_identity(stack.store)
    elsewhere = LocalArtifactStore(tmp_path_factory.mktemp("client-store"))
    services = AgentServices(
        settings=stack.settings,
        registry=stack.registry,
        store=stack.store,
        provider=ScriptedProvider.from_yaml(SCRIPT),
        model="scripted",
        sandbox=stack.sandbox,
    )
    queue = unique("tq")
    worker = build_worker(stack.client, services, task_queue=queue, identity=worker_identity(ours))
    async with worker:
        wrong = TemporalEngine(stack.client, task_queue=queue, store=elsewhere)
        await eventually(wrong.workers, what="the worker polls")
        with pytest.raises(ConfigError) as refused:
            await wrong.start(JobRequest(job_id=unique("refused"), task="t", agent=AgentSpec()))
        right = TemporalEngine(stack.client, task_queue=queue, store=stack.store)
        job = await right.start(JobRequest(job_id=unique("right"), task="t", agent=AgentSpec()))
        result = await right.result(job)

    theirs = await store_identity(elsewhere)
    assert str(refused.value) == (
        f"the workers on task queue {queue!r} work on the store {ours}, this process on "
        f"{theirs}: give both the same STORAGE__ settings"
    )
    assert result.status == "completed", result.reason
