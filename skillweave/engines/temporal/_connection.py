"""Opening a client of the configured Temporal server: :func:`connect`, and
:func:`connect_engine` for a :class:`~skillweave.engines.temporal.TemporalEngine` over it.

Every client is built here with the data converter of :mod:`skillweave.engines.converter`, so
it reads what the worker wrote, and with the SDK's tracing interceptor when tracing is on; the
namespace is checked at once (:func:`~skillweave.engines.temporal.require_namespace`). Called
by the CLI's composition (``skillweave.cli.compose``), its checks and the API.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from temporalio.client import Client

from skillweave.engines.converter import data_converter
from skillweave.engines.temporal._engine import TemporalEngine
from skillweave.engines.temporal._errors import first_line
from skillweave.engines.temporal._namespace import require_namespace
from skillweave.errors import ConfigError, StorageError
from skillweave.storage import store_identity
from skillweave.telemetry import provider

if TYPE_CHECKING:
    from skillweave.config import Settings, WorkflowSettings
    from skillweave.storage import ArtifactStore

__all__ = ["TemporalUnreachableError", "connect", "connect_engine"]

_log = logging.getLogger("skillweave.engines")


def _interceptors() -> list[Any]:
    """The SDK's tracing interceptor when tracing is on, else none. Given to the client only:
    workers made from it inherit it, so it is registered once."""
    if not provider.active():
        return []
    from temporalio.contrib.opentelemetry import TracingInterceptor

    return [TracingInterceptor()]


class TemporalUnreachableError(ConfigError):
    """No Temporal server answered at ``WORKFLOW__TEMPORAL_ADDRESS``.

    The message says how to start one; a command that executes runs says how to do without one
    too (:meth:`or_direct`).

    Attributes:
        address: where the server was looked for.
        reason: why the connection failed, in a few words (connection refused…).
    """

    def __init__(self, address: str, reason: str) -> None:
        self.address = address
        self.reason = reason
        super().__init__(
            f"cannot reach Temporal at {address} ({reason}): start one with `skillweave dev`, "
            "or set WORKFLOW__TEMPORAL_ADDRESS"
        )

    def or_direct(self, direct: str) -> str:
        """The line for a command whose runs could run without Temporal: both remedies,
        `direct` saying how to choose the direct engine there (``--engine direct``…)."""
        return (
            f"cannot reach Temporal at {self.address} ({self.reason}). Start it with "
            "`skillweave dev` in another terminal (or point WORKFLOW__TEMPORAL_ADDRESS at "
            f"yours), or run it in this process, local and not durable, with {direct}"
        )


async def connect(settings: WorkflowSettings, store: ArtifactStore | None = None) -> Client:
    """A client of the configured server, with skillweave's data converter over `store`,
    once the server has said the namespace exists.

    Raises:
        TemporalUnreachableError: the server cannot be reached.
        ConfigError: the address is not HOST:PORT, or the namespace does not exist (the
            message says how to create it).
    """
    try:
        client = await Client.connect(
            settings.temporal_address,
            namespace=settings.namespace,
            data_converter=data_converter(store),
            # Tracing's interceptor when on (workers made from this client inherit it).
            interceptors=_interceptors(),
        )
    except ValueError as exc:  # the address itself
        raise ConfigError(
            f"WORKFLOW__TEMPORAL_ADDRESS {settings.temporal_address!r} is not HOST:PORT ({exc})"
        ) from None
    except RuntimeError as exc:
        raise TemporalUnreachableError(settings.temporal_address, _connect_failure(exc)) from None
    await require_namespace(client, settings.namespace, address=settings.temporal_address)
    return client


async def connect_engine(settings: Settings, store: ArtifactStore | None = None) -> TemporalEngine:
    """A :class:`TemporalEngine` on ``settings.workflow``'s server, namespace and task queue.

    Args:
        settings: the workflow section (address, namespace, task queue) and the
            skills section (catalog mode and top-k for agents that do not set them).
        store: the artifact store large payloads live in; the worker's must be the same.
            Its id routes the engine's runs (:func:`~skillweave.engines.contract.
            store_task_queue`); read now when it can be, else at the first run.

    Raises:
        TemporalUnreachableError: the server cannot be reached.
        ConfigError: see :func:`connect`.
    """
    client = await connect(settings.workflow, store)
    store_id = None
    if store is not None:
        try:
            store_id = await store_identity(store)
        except StorageError as exc:  # not up yet: read again when a run starts
            _log.warning("the store's id cannot be read yet: %s", exc)
    return TemporalEngine(
        client,
        store=store,
        store_id=store_id,
        task_queue=settings.workflow.task_queue,
        catalog_mode=settings.skills.catalog_mode,
        catalog_top_k=settings.skills.catalog_top_k,
        worker_wait_seconds=settings.workflow.follow_worker_wait_seconds,
    )


def _connect_failure(exc: BaseException) -> str:
    """Why a connection failed, without the transport library's nesting."""
    text = str(exc)
    for marker, reason in (
        ("ConnectionRefused", "connection refused"),
        ("dns error", "unknown host"),
        ("timed out", "timed out"),
        ("InvalidArgument", "invalid address"),
    ):
        if marker.lower() in text.lower():
            return reason
    line = first_line(exc).removeprefix("Failed client connect: ")
    return line if len(line) <= 160 else line[:159] + "…"
