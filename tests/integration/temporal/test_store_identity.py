"""One store for a deployment (issue 28, part 2; issue 41, item 1): a run runs on the task
queue routed to the store it was started against, so only workers of that store take it; a
client whose store no worker uses, while workers of other stores poll, is refused before the
run starts, naming the stores; and a worker that is handed a run of another store anyway (a
run started on its queue by hand, or by an older client) refuses it at its first step, naming
both, instead of failing far away ("input … does not exist")."""

from __future__ import annotations

import pytest

from skillweave.agent import AgentSpec
from skillweave.engines import AgentServices, RunRequest
from skillweave.engines.contract import (
    WORKFLOW_NAME,
    AgentWorkflowInput,
    store_task_queue,
    workflow_id,
)
from skillweave.engines.temporal import TemporalEngine, worker_identity
from skillweave.errors import ConfigError
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, Stack, open_engine, unique
from workflows.worker import build_roll_call, build_worker

pytestmark = pytest.mark.asyncio(loop_scope="session")

SCRIPT = 'turns: [{say: "done"}]'


async def test_a_worker_refuses_a_run_of_another_store_put_on_its_queue(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = LocalArtifactStore(tmp_path_factory.mktemp("another-store"))
    theirs, ours = await store_identity(elsewhere), await store_identity(stack.store)
    async with open_engine("temporal", stack, SCRIPT) as harness:
        engine = harness.temporal
        wrong = RunRequest(
            run_id="run-wrong-store", task="t", agent=AgentSpec(skills=(TOOLS,)), store_id=theirs
        )
        # By hand on this worker's queue: a client routes it to its store's queue instead.
        await stack.client.start_workflow(
            WORKFLOW_NAME,
            AgentWorkflowInput(request=wrong),
            id=workflow_id(wrong.run_id),
            task_queue=store_task_queue(engine.base_task_queue, ours),
        )
        await engine.start(
            RunRequest(run_id="run-right-store", task="t", agent=AgentSpec(skills=(TOOLS,)))
        )
        refused = await engine.result("run-wrong-store")
        right = await engine.result("run-right-store")

    assert refused.status == "failed"
    assert refused.reason is not None
    assert f"started against the store {theirs}" in refused.reason
    assert f"this process's store is {ours}" in refused.reason
    assert right.status == "completed", right.reason


async def test_a_client_whose_store_no_worker_uses_is_refused_before_the_run_starts(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The workers' identities on the queue's roll call name their store: a client whose
    store none of them works on is refused at start, naming both, instead of starting a run
    that would wait for ever."""
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
    identity = worker_identity(ours)
    worker = build_worker(
        stack.client, services, task_queue=queue, store_id=ours, identity=identity
    )
    roll_call = build_roll_call(stack.client, task_queue=queue, identity=identity)
    async with worker, roll_call:
        right = TemporalEngine(stack.client, task_queue=queue, store=stack.store)
        await eventually(right.workers, what="the worker polls")
        wrong = TemporalEngine(stack.client, task_queue=queue, store=elsewhere)

        async def answered() -> bool:
            try:
                await wrong.workers()
            except ConfigError:
                return True
            return False

        await eventually(answered, what="the worker answers the roll call")
        with pytest.raises(ConfigError) as refused:
            await wrong.start(RunRequest(run_id=unique("refused"), task="t", agent=AgentSpec()))
        run = await right.start(RunRequest(run_id=unique("right"), task="t", agent=AgentSpec()))
        result = await right.result(run)

    theirs = await store_identity(elsewhere)
    assert str(refused.value) == (
        f"no worker on task queue {queue!r} works on this process's store {theirs} (the "
        f"workers there work on {ours}): give this process their STORAGE__ settings, or start "
        f"a worker on {theirs}"
    )
    assert result.status == "completed", result.reason
