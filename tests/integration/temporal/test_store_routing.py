"""A run only ever runs on workers of its own store (issue 41, item 1), against the real dev
server: two workers on two local stores share one configured task queue; every run a client
on store A starts runs on worker A (each workflow and activity task, by the identity in its
history) and nothing of it lands in store B; worker B says in one loud line that it is alone
on its store; a client on a store C no worker uses is refused in one line naming the stores,
and ``skillweave doctor`` with its settings (a real process) names it too."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType

from skillweave.agent import AgentSpec
from skillweave.engines import AgentServices, RunRequest
from skillweave.engines.contract import store_task_queue, workflow_id
from skillweave.engines.temporal import TemporalEngine, connect, read_roll, worker_identity
from skillweave.errors import ConfigError
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.base import ArtifactStore
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from tests.integration.harness import eventually
from tests.integration.temporal.harness import Stack, unique
from tests.transcripts import record_logs, stored_records
from workflows.worker import running_worker

pytestmark = pytest.mark.asyncio(loop_scope="session")

SCRIPT = 'turns: [{say: "done"}]'
RUNS = 4
SKILLWEAVE = str(Path(sys.executable).with_name("skillweave"))


@contextlib.asynccontextmanager
async def _worker(stack: Stack, store: ArtifactStore, task_queue: str) -> AsyncIterator[str]:
    """A worker as ``skillweave worker`` runs one (``running_worker``: its store's queue and
    the roll call), on `store`, with a client of its own as a process has (the SDK allows
    one worker per client and queue); yields its identity."""
    workflow = stack.settings.workflow.model_copy(
        update={"task_queue": task_queue, "temporal_address": stack.temporal_address}
    )
    settings = stack.settings.model_copy(update={"workflow": workflow})
    client = await connect(workflow, store)
    services = AgentServices(
        settings=settings,
        registry=stack.registry,
        store=store,
        provider=ScriptedProvider.from_yaml(SCRIPT),
        model="scripted",
        sandbox=stack.sandbox,
    )
    async with running_worker(client, services, settings) as routed:
        store_id = await store_identity(store)
        assert routed == store_task_queue(task_queue, store_id)
        yield worker_identity(store_id, default_model=services.default_model)


async def _answered(stack: Stack, task_queue: str, identity: str) -> None:
    """Wait until the worker of `identity` answers the roll call of `task_queue`."""

    async def there() -> bool:
        roll = await read_roll(stack.client, task_queue, "0" * 16)
        return identity in roll.answered

    await eventually(there, timeout=30, what=f"{identity} on the roll call")


async def _task_identities(stack: Stack, run_id: str) -> set[str]:
    """The identities of the workers that took the run's workflow and activity tasks."""
    started = {
        EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED: "workflow_task_started_event_attributes",
        EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: "activity_task_started_event_attributes",
    }
    found = set()
    async for event in stack.client.get_workflow_handle(workflow_id(run_id)).fetch_history_events():
        if (field := started.get(event.event_type)) is not None:
            found.add(getattr(event, field).identity)
    return found


async def test_runs_run_only_on_workers_of_their_store(
    stack: Stack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    queue = unique("routed")
    store_a = stack.store  # the manager's, so that script runs would see the same bytes
    store_b = LocalArtifactStore(tmp_path / "store-b")
    store_c = LocalArtifactStore(tmp_path / "store-c")
    a, b, c = [await store_identity(s) for s in (store_a, store_b, store_c)]
    async with _worker(stack, store_a, queue) as worker_a:
        await _answered(stack, queue, worker_a)
        with caplog.at_level(logging.WARNING, logger="skillweave.worker"):
            async with _worker(stack, store_b, queue) as worker_b:
                await _answered(stack, queue, worker_b)
                await _check_runs_and_refusal(stack, queue, worker_a, (store_a, store_c), (a, b, c))
                await _check_doctor(stack, queue, store_c, (a, b, c), tmp_path)

    # Worker B came second, alone on its store: it said so, once, in one line.
    lonely = [r.getMessage() for r in caplog.records if r.name == "skillweave.worker"]
    assert lonely == [
        f"other workers on task queue {queue!r} work on store {a}; this worker works on {b}: "
        f"runs started against {a} never run here, nor {b}'s there"
    ]
    # Nothing of store A's runs was written into store B: no key, no transcript.
    assert [ref.key for ref in await store_b.list("runs/")] == []
    assert record_logs(store_b) == []
    assert worker_a != worker_b


async def _check_runs_and_refusal(
    stack: Stack,
    queue: str,
    worker_a: str,
    stores: tuple[ArtifactStore, ArtifactStore],
    ids: tuple[str, str, str],
) -> None:
    store_a, store_c = stores
    a, b, c = ids
    assert f"store={a}" in worker_a
    client_a = TemporalEngine(stack.client, task_queue=queue, store=store_a)
    assert await client_a.workers() == 1
    runs = [
        await client_a.start(RunRequest(run_id=unique("on-a"), task="t", agent=AgentSpec()))
        for _ in range(RUNS)
    ]
    results = await asyncio.gather(*(client_a.result(run) for run in runs))
    assert [r.status for r in results] == ["completed"] * RUNS, [r.reason for r in results]
    for run in runs:
        # Every workflow and activity task of it was taken by worker A.
        assert await _task_identities(stack, run) == {worker_a}
        described = await stack.client.get_workflow_handle(workflow_id(run)).describe()
        assert described.task_queue == store_task_queue(queue, a)
        assert stored_records(store_a, run)  # its transcript is in A

    # A client on store C, which no worker uses: refused in one line naming C, A and B.
    client_c = TemporalEngine(stack.client, task_queue=queue, store=store_c)
    with pytest.raises(ConfigError) as refused:
        await client_c.start(RunRequest(run_id=unique("on-c"), task="t", agent=AgentSpec()))
    message = str(refused.value)
    assert "\n" not in message
    assert message == (
        f"no worker on task queue {queue!r} works on this process's store {c} (the workers "
        f"there work on {', '.join(sorted((a, b)))}): give this process their STORAGE__ "
        f"settings, or start a worker on {c}"
    )
    with pytest.raises(ConfigError):
        await client_c.workers()  # `run`'s check before it uploads anything says the same


async def _check_doctor(
    stack: Stack, queue: str, store_c: LocalArtifactStore, ids: tuple[str, str, str], tmp: Path
) -> None:
    """``skillweave doctor`` with store C's settings, as a process: the workers check fails,
    naming the store no worker uses and the ones they do."""
    a, b, c = ids
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "WORKFLOW__EXECUTION_ENGINE": "temporal",
        "WORKFLOW__TEMPORAL_ADDRESS": stack.temporal_address,
        "WORKFLOW__TASK_QUEUE": queue,
        "STORAGE__LOCAL_DIR": str(store_c.root),
        "SKILLS__DIRS": json.dumps([str(tmp / "no-skills")]),
        "SANDBOX__ISOLATION": "none",
    }
    process = await asyncio.create_subprocess_exec(
        SKILLWEAVE,
        "doctor",
        "--json",
        env=env,
        cwd=tmp,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode != 0, out.decode() + err.decode()
    checks = {c["check"]: (c["status"], c["detail"]) for c in json.loads(out)}
    status, detail = checks["workers"]
    assert status == "fail", detail
    assert f"store {c}" in detail
    assert f"{', '.join(sorted((a, b)))}" in detail
    assert "wait for ever" in detail
