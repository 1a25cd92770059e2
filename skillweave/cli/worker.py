"""``skillweave worker``'s worker: ``AgentWorkflow`` and the agent activities on the configured
Temporal server and task queue, for runs started elsewhere (``run --engine temporal``, the API)
against its store: it polls the task queue routed to its store and answers the roll call on
the configured one (:func:`workflows.worker.running_worker`).

It is made of :mod:`skillweave.cli.compose`'s pieces, as the embedded stack's worker is (the
services, :func:`workflows.worker.running_worker`), on the whole skill library
(:func:`~skillweave.cli.library.opened_library`: directories and the store's skills, unpacked
into a folder of this process's own), reloaded every ``SKILLS__RELOAD_SECONDS``. It may start
before Temporal and the store: it waits for them (:mod:`skillweave.cli.startup`), its readiness
at ``/healthz`` on its metrics port from the start.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillweave.cli.compose import POOL_TARGET, open_services, open_store
from skillweave.cli.library import opened_library
from skillweave.cli.startup import dependencies_ready
from skillweave.config import ModelSettings, Settings
from skillweave.engines import WorkerMetrics, serve_worker_metrics
from skillweave.llm import describe_default
from skillweave.readiness import Readiness
from skillweave.skills import owned_folder, reloading

__all__ = ["WorkerInfo", "open_worker"]


@dataclass(frozen=True)
class WorkerInfo:
    """What a started worker is connected to."""

    address: str
    namespace: str
    task_queue: str
    """The queue it takes runs from: the configured one routed to its store."""
    manager_url: str
    model: str


@contextlib.asynccontextmanager
async def open_worker(
    settings: Settings,
    *,
    model: ModelSettings | None,
    roots: Sequence[Path],
    pool_target: int = POOL_TARGET,
) -> AsyncIterator[WorkerInfo]:
    """A worker on ``settings.workflow``'s server and task queue while the context lasts,
    with the services of :func:`~skillweave.cli.compose.open_services` and their metrics at
    ``/metrics`` when ``OBSERVABILITY__WORKER_METRICS_PORT`` is set, its readiness at
    ``/healthz`` there. Temporal and the store may start after it: it waits for them
    (:func:`~skillweave.cli.startup.dependencies_ready`; ``/healthz`` 503 until it polls).
    Its runs use the whole library: the directory `roots` and the store's skills (unpacked
    into a folder of this process's own), reloaded every ``SKILLS__RELOAD_SECONDS``. Its
    default model is `model`, else (None) ``MODEL__*``, which may be absent: runs then name theirs.

    Raises:
        ConfigError: the Temporal address is not HOST:PORT, its namespace does not exist, or
            the model or manager cannot be used.
        StorageError: the store refuses this worker for good (no such bucket, wrong keys).
    """
    from workflows.worker import running_worker  # temporalio: only where a worker runs

    workflow = settings.workflow
    readiness = Readiness()
    metrics = WorkerMetrics()
    # A folder of this process's own: workers on one host never unpack into each other's.
    with (
        owned_folder(settings, "worker") as own,
        # Readiness (/healthz) answers before anything is waited for.
        serve_worker_metrics(metrics, own.observability, readiness=readiness),
    ):
        async with open_store(own) as store:
            # Temporal and the store may not be up yet: waited for, side by side.
            client = await dependencies_ready(own, store, readiness=readiness)
            async with (
                opened_library(own, roots=roots) as library,
                open_services(
                    own,
                    registry=library.registry,
                    model=model,
                    pool_target=pool_target,
                    store=store,
                    metrics=metrics,
                ) as local,
            ):
                local.services.serve_library(library)
                every = own.skills.reload_seconds
                async with (
                    reloading(library, local.services.use_registry, every=every),
                    running_worker(client, local.services, own) as task_queue,
                ):
                    readiness.mark_ready()
                    yield WorkerInfo(
                        address=workflow.temporal_address,
                        namespace=workflow.namespace,
                        task_queue=task_queue,
                        manager_url=local.manager_url,
                        model=describe_default(local.services.provider),
                    )
