"""Waiting for a long-running command's dependencies at start-up: Temporal and the store.

``skillweave worker`` (:mod:`skillweave.cli.worker`) and ``skillweave api``
(:mod:`skillweave.cli.api`) may start before Temporal and the store are up: they wait for
them with :func:`skillweave.readiness.until_ready` (one warning line, back-off, one line when
each comes), side by side, telling their :class:`~skillweave.readiness.Readiness` (their
``/healthz``) what they wait for. A configuration that can never work goes through at once
as one line: an address that is not HOST:PORT (:func:`temporal_address_problem`, also the
start-up checks' rule), a namespace that does not exist, a store that refuses us
(:func:`skillweave.storage.reachable.not_up_yet`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillweave.config import Settings
from skillweave.errors import ConfigError
from skillweave.readiness import Readiness, all_ready, until_ready
from skillweave.storage import ArtifactStore, store_ready

if TYPE_CHECKING:
    from temporalio.client import Client

__all__ = ["dependencies_ready", "temporal_address_problem", "temporal_ready"]


def temporal_address_problem(address: str) -> str | None:
    """What is wrong with `address` as a Temporal address (HOST:PORT), or None: such an
    address never works, so it is not waited for."""
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return (
            f"WORKFLOW__TEMPORAL_ADDRESS {address!r} is not HOST:PORT (e.g. 127.0.0.1:7233): "
            "set it to your Temporal server's address"
        )
    return None


async def temporal_ready(
    settings: Settings, store: ArtifactStore | None, *, readiness: Readiness | None = None
) -> Client:
    """A client of ``settings.workflow``'s server (its converter over `store`), once it
    answers (waited for while nothing listens there yet).

    Raises:
        ConfigError: the address is not HOST:PORT, or the namespace does not exist.
    """
    from skillweave.engines.temporal import TemporalUnreachableError, connect

    workflow = settings.workflow
    problem = temporal_address_problem(workflow.temporal_address)
    if problem is not None:
        raise ConfigError(problem)

    def transient(exc: BaseException) -> str | None:
        return exc.reason if isinstance(exc, TemporalUnreachableError) else None

    return await until_ready(
        f"Temporal at {workflow.temporal_address}",
        lambda: connect(workflow, store),
        on="temporal",
        transient=transient,
        readiness=readiness,
    )


async def dependencies_ready(
    settings: Settings, store: ArtifactStore, *, readiness: Readiness | None = None
) -> Client:
    """Temporal's client and the store, both up (waited for side by side).

    Raises:
        ConfigError: see :func:`temporal_ready`.
        StorageError: the store refuses us for good (no such bucket, wrong credentials…).
    """
    client, _ = await all_ready(
        temporal_ready(settings, store, readiness=readiness),
        store_ready(store, settings.storage, readiness=readiness),
    )
    return client  # type: ignore[return-value]
