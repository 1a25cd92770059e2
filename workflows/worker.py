"""The worker: ``AgentWorkflow`` and the agent activities on one task queue.

:func:`build_worker` is all a process needs once it has a client (built with
``skillweave.engines.converter.data_converter`` over the same store as the services) and the
``AgentServices`` the activities run. Who composes those (``skillweave worker``, the embedded
stack of ``skillweave dev`` and ``skillweave demo``, tests) is the caller's business.

The workflow runs in Temporal's sandbox; ``skillweave`` and ``pydantic`` pass through it (they
are imported once, outside, and shared): the workflow imports only their pure modules, and
reloading pydantic models for every workflow run would cost time and break ``isinstance``
across the boundary.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.agent import AgentActivities
from skillweave.engines.services import AgentServices
from workflows.agent import AgentWorkflow

__all__ = ["PASSTHROUGH_MODULES", "build_worker", "sandbox_runner"]

PASSTHROUGH_MODULES: Final = ("skillweave", "pydantic", "pydantic_core", "annotated_types")


def sandbox_runner() -> SandboxedWorkflowRunner:
    """The workflow sandbox with skillweave's and pydantic's modules passed through."""
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES)
    )


def build_worker(
    client: Client,
    services: AgentServices,
    *,
    task_queue: str,
    heartbeat_seconds: float = 5.0,
    drain_seconds: float = 30.0,
    **worker_options: Any,
) -> Worker:
    """A worker running ``AgentWorkflow`` and the agent activities on `task_queue`.

    Args:
        client: the client to poll with (skillweave's data converter).
        services: what the activities do.
        task_queue: the queue jobs are started on.
        heartbeat_seconds: how often a long activity heartbeats.
        drain_seconds: at shutdown, how long running activities may take to finish before
            they are cancelled (and retried on another worker); polling stops at once.
        worker_options: passed to :class:`temporalio.worker.Worker` (concurrency, identity,
            graceful shutdown…).

    Run it with ``await worker.run()`` or ``async with worker:``.
    """
    worker_options.setdefault("workflow_runner", sandbox_runner())
    # Heartbeats carry cancellation to a running activity; the SDK would otherwise send them at
    # most every 80 % of the heartbeat timeout, so a cancelled script run would keep going for
    # up to 24 s with the default 30 s timeout.
    worker_options.setdefault(
        "max_heartbeat_throttle_interval", timedelta(seconds=heartbeat_seconds)
    )
    worker_options.setdefault("graceful_shutdown_timeout", timedelta(seconds=drain_seconds))
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[AgentWorkflow],
        activities=AgentActivities(services, heartbeat_seconds=heartbeat_seconds).definitions(),
        **worker_options,
    )
