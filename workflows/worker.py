"""The worker: ``AgentWorkflow`` and the agent activities on its store's task queue, with
``EvalBatchWorkflow`` and the eval batch's activities beside them (a batch's jobs' runs are its
children, on the same queue, over the same services).

:func:`build_worker` is all a process needs once it has a client (built with
``skillweave.engines.converter.data_converter`` over the same store as the services) and the
``AgentServices`` the activities run. It polls the configured task queue routed to the
services' store (``contract.store_task_queue``), so it runs only runs started against that
store. :func:`build_roll_call` is its answer to the roll call on the configured (base) queue:
a tiny second worker whose pollers list it, with its identity, to whoever describes that
queue (``skillweave.engines.temporal.Roll``). :func:`running_worker` runs both
with a process's settings, as ``skillweave worker`` and the embedded stack of ``skillweave
dev`` and ``skillweave demo`` do (``skillweave.cli``): on the services' store's id, with an
identity naming it, the services' metrics, and one warning when the worker is alone on its
store (``skillweave.engines.temporal.warn_if_alone``). :func:`worker_tuning` maps the
settings' ``WORKFLOW__WORKER_…`` tuning (its cache of runs, task slots and pollers) onto the
worker's options, which :func:`build_worker` applies under any a caller passes.

Workflow code runs outside Temporal's sandbox unless ``WORKFLOW__WORKER_WORKFLOW_SANDBOX`` asks
for it (:func:`workflow_runner`): on a busy worker the sandbox cost about a fifth of its CPU (a
fresh import of the workflow modules per run, every call of a task through its import checks;
docs/BENCHMARKS.md, issue 47), and what it checks is checked before code ships: the workflow
modules import only pure code (the import layers), and the replay tests replay every recorded
history inside :func:`sandbox_runner`. In the sandbox, ``skillweave`` and ``pydantic`` pass
through (imported once, outside, and shared): the workflow imports only their pure modules, and
reloading pydantic models for every run would cost time and break ``isinstance`` across the
boundary.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import (
    PollerBehaviorSimpleMaximum,
    UnsandboxedWorkflowRunner,
    Worker,
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.agent import AgentActivities
from activities.evals import EvalActivities
from skillweave.engines import (
    ROLL_CALL_ACTIVITY,
    ActivityTimeouts,
    AgentServices,
    serve_worker_metrics,
    store_task_queue,
)
from skillweave.engines.temporal import warn_if_alone, worker_identity
from skillweave.evals import EvalServices
from skillweave.storage import store_identity
from workflows.agent import AgentWorkflow
from workflows.evals import EvalBatchWorkflow

if TYPE_CHECKING:
    from skillweave.config import Settings, WorkflowSettings

__all__ = [
    "PASSTHROUGH_MODULES",
    "build_roll_call",
    "build_worker",
    "running_worker",
    "sandbox_runner",
    "worker_tuning",
    "workflow_runner",
]

PASSTHROUGH_MODULES: Final = ("skillweave", "pydantic", "pydantic_core", "annotated_types")


def sandbox_runner() -> SandboxedWorkflowRunner:
    """The workflow sandbox with skillweave's and pydantic's modules passed through."""
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES)
    )


def workflow_runner(settings: WorkflowSettings) -> WorkflowRunner:
    """How the worker runs workflow code: in the SDK's sandbox only when
    ``WORKFLOW__WORKER_WORKFLOW_SANDBOX`` asks for it (its description says why not by
    default); the replay tests always use :func:`sandbox_runner`."""
    if settings.worker_workflow_sandbox:
        return sandbox_runner()
    return UnsandboxedWorkflowRunner()


_SLOT_OPTIONS: Final = (
    "max_concurrent_workflow_tasks",
    "max_concurrent_activities",
    "max_concurrent_local_activities",
)
"""The worker options a ``tuner`` replaces: the SDK refuses both at once."""


def worker_tuning(settings: WorkflowSettings) -> dict[str, Any]:
    """The :class:`temporalio.worker.Worker` options of the worker's tuning settings
    (``WORKFLOW__WORKER_MAX_CACHED_WORKFLOWS``, ``…_MAX_CONCURRENT_*``, ``…_POLLERS``):
    its cache of runs, its task slots and its pollers (docs/SCALING.md)."""
    return {
        "max_cached_workflows": settings.worker_max_cached_workflows,
        "max_concurrent_workflow_tasks": settings.worker_max_concurrent_workflow_tasks,
        "max_concurrent_activities": settings.worker_max_concurrent_activities,
        "max_concurrent_local_activities": settings.worker_max_concurrent_local_activities,
        "workflow_task_poller_behavior": PollerBehaviorSimpleMaximum(
            maximum=settings.worker_workflow_pollers
        ),
        "activity_task_poller_behavior": PollerBehaviorSimpleMaximum(
            maximum=settings.worker_activity_pollers
        ),
    }


def build_worker(
    client: Client,
    services: AgentServices,
    *,
    task_queue: str,
    store_id: str,
    heartbeat_seconds: float = 5.0,
    drain_seconds: float = 30.0,
    limits: ActivityTimeouts | None = None,
    model_calls_read: bool = True,
    **worker_options: Any,
) -> Worker:
    """A worker running ``AgentWorkflow`` and the agent activities of the runs started
    against the store `store_id` on `task_queue` (it polls their routed queue), and
    ``EvalBatchWorkflow`` with the eval batch's activities over the same `services`.

    Args:
        client: the client to poll with (skillweave's data converter).
        services: what the activities do.
        task_queue: the configured (base) task queue.
        store_id: the id of the services' store (``storage.identity``).
        heartbeat_seconds: how often a long activity heartbeats.
        drain_seconds: at shutdown, how long running activities may take to finish before
            they are cancelled (and retried on another worker); polling stops at once.
        limits: the limits a run asks this worker for (its activities' timeouts and
            attempts); by default its settings' (``services.settings.workflow``).
        model_calls_read: whether the runs it starts may defer reads to their model calls
            (False: its answer is an earlier release's; benchmarks compare the two).
        worker_options: passed to :class:`temporalio.worker.Worker` (identity, graceful
            shutdown…); they win over the tuning of ``services.settings.workflow``
            (:func:`worker_tuning`), and a ``tuner`` replaces its task slots.

    Run it with ``await worker.run()`` or ``async with worker:``.
    """
    worker_options.setdefault("workflow_runner", workflow_runner(services.settings.workflow))
    for option, value in worker_tuning(services.settings.workflow).items():
        if option in _SLOT_OPTIONS and "tuner" in worker_options:
            continue
        worker_options.setdefault(option, value)
    # Heartbeats carry cancellation to a running activity; the SDK would otherwise send them at
    # most every 80 % of the heartbeat timeout, so a cancelled script run would keep going for
    # up to 24 s with the default 30 s timeout.
    worker_options.setdefault(
        "max_heartbeat_throttle_interval", timedelta(seconds=heartbeat_seconds)
    )
    worker_options.setdefault("graceful_shutdown_timeout", timedelta(seconds=drain_seconds))
    return Worker(
        client,
        task_queue=store_task_queue(task_queue, store_id),
        workflows=[AgentWorkflow, EvalBatchWorkflow],
        activities=[
            *AgentActivities(
                services,
                heartbeat_seconds=heartbeat_seconds,
                limits=limits,
                model_calls_read=model_calls_read,
            ).definitions(),
            *EvalActivities(
                EvalServices(services), heartbeat_seconds=heartbeat_seconds
            ).definitions(),
        ],
        **worker_options,
    )


@activity.defn(name=ROLL_CALL_ACTIVITY)
async def _roll_call() -> None:
    """Never scheduled: registered so that its worker polls the base queue for it."""


def build_roll_call(client: Client, *, task_queue: str, identity: str) -> Worker:
    """The roll call of a worker of `identity` (:func:`~skillweave.engines.temporal.
    worker_identity`) on base queue `task_queue`: one poller for an activity nothing
    schedules, one slot, and nothing else to do. Run it beside :func:`build_worker`'s
    worker, with the same identity, for as long as that one runs."""
    return Worker(
        client,
        task_queue=task_queue,
        activities=[_roll_call],
        identity=identity,
        max_concurrent_activities=1,
        activity_task_poller_behavior=PollerBehaviorSimpleMaximum(maximum=1),
        graceful_shutdown_timeout=timedelta(0),
    )


@contextlib.asynccontextmanager
async def running_worker(
    client: Client, services: AgentServices, settings: Settings
) -> AsyncIterator[str]:
    """The workflow and activities of the runs started against the services' store, polled
    with `client` on the settings' task queue routed to that store, with the roll call on the
    settings' (base) queue (its identity names its store and default model), and the
    services' metrics, while it lasts; yields the queue it takes runs from. Once it polls, it
    warns if alone on its store (``skillweave.engines.temporal.warn_if_alone``)."""
    base = settings.workflow.task_queue
    store_id = await store_identity(services.store)
    identity = worker_identity(store_id, default_model=services.default_model)
    worker = build_worker(
        client,
        services,
        task_queue=base,
        store_id=store_id,
        heartbeat_seconds=settings.workflow.worker_heartbeat_seconds,
        drain_seconds=settings.workflow.worker_drain_seconds,
        identity=identity,
    )
    roll_call = build_roll_call(client, task_queue=base, identity=identity)
    with serve_worker_metrics(services.metrics, settings.observability):
        async with worker, roll_call:
            await warn_if_alone(client, base, store_id, identity)
            yield store_task_queue(base, store_id)
