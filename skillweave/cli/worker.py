"""``skillweave worker``'s worker: ``AgentWorkflow`` and the agent activities on the configured
Temporal server and task queue, for jobs started elsewhere (``run --engine temporal``, the API).

It is made of :mod:`skillweave.cli.compose`'s pieces, as the embedded stack's worker is (the
services, :func:`~skillweave.cli.compose.running_worker`), plus the skills uploaded over the API
(:func:`~skillweave.cli.uploads.serving_uploaded`), which an embedded stack does not serve.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillweave.cli.compose import POOL_TARGET, open_services, running_worker
from skillweave.cli.uploads import own_uploaded_folder, serving_uploaded
from skillweave.config import ModelSettings, Settings
from skillweave.skills import SkillRegistry

__all__ = ["WorkerInfo", "open_worker"]


@dataclass(frozen=True)
class WorkerInfo:
    """What a started worker is connected to."""

    address: str
    namespace: str
    task_queue: str
    manager_url: str
    model: str


@contextlib.asynccontextmanager
async def open_worker(
    settings: Settings,
    *,
    registry: SkillRegistry,
    model: ModelSettings,
    roots: Sequence[Path],
    pool_target: int = POOL_TARGET,
) -> AsyncIterator[WorkerInfo]:
    """A worker on ``settings.workflow``'s server and task queue while the context lasts,
    with the services of :func:`~skillweave.cli.compose.open_services` and their metrics at
    ``/metrics`` when ``OBSERVABILITY__WORKER_METRICS_PORT`` is set. It also serves the
    skills uploaded over the API beside the library `roots` of `registry`: unpacked at start
    into a folder of this process's own and picked up again every
    ``SKILLS__UPLOADED_REFRESH_SECONDS``.

    Raises:
        ConfigError: the server cannot be reached, or the model or manager cannot be used.
    """
    from skillweave.engines.temporal import connect

    workflow = settings.workflow
    # A folder of this process's own: workers on one host never unpack into each other's.
    with own_uploaded_folder(settings, "worker") as own:
        async with open_services(
            own, registry=registry, model=model, pool_target=pool_target
        ) as local:
            client = await connect(workflow, local.services.store)
            async with (
                serving_uploaded(local.services, own, roots=roots),
                running_worker(client, local.services, own),
            ):
                yield WorkerInfo(
                    address=workflow.temporal_address,
                    namespace=workflow.namespace,
                    task_queue=workflow.task_queue,
                    manager_url=local.manager_url,
                    model=local.services.provider.name,
                )
