"""One run on either engine, over given services, for the tests against the strict server: the
direct engine in-process, or a Temporal worker of its own (a fresh task queue) on `env`."""

from __future__ import annotations

from temporalio.testing import WorkflowEnvironment

from skillweave.engines import AgentServices, DirectEngine, RunRequest, RunResult
from skillweave.engines.contract import ActivityTimeouts
from skillweave.engines.retries import Backoff
from skillweave.engines.temporal import TemporalEngine
from skillweave.storage.store_id import store_identity
from tests.integration.temporal.harness import unique
from workflows.worker import build_worker


async def run_on(
    kind: str,
    services: AgentServices,
    request: RunRequest,
    *,
    attempts: int,
    env: WorkflowEnvironment | None = None,
) -> RunResult:
    """Run `request` to its end on the `kind` engine (``direct`` or ``temporal``, which needs
    `env`), each side-effect call tried `attempts` times in all at most."""
    if kind == "direct":
        engine = DirectEngine(services, backoff=Backoff(initial=0.01, attempts=attempts))
        return await engine.result(await engine.start(request))
    assert env is not None, "a Temporal run needs a dev server"
    task_queue = unique("tq")
    async with build_worker(
        env.client,
        services,
        task_queue=task_queue,
        store_id=await store_identity(services.store),
        heartbeat_seconds=0.5,
        limits=ActivityTimeouts(heartbeat_seconds=5, max_attempts=attempts),
    ):
        temporal = TemporalEngine(
            env.client, task_queue=task_queue, poll_seconds=0.05, store=services.store
        )
        return await temporal.result(await temporal.start(request))
