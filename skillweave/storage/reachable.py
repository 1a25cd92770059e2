"""Whether the artifact store is up yet, at a process's start: the store's start-up rule.

:func:`not_up_yet` says which store failures may pass by themselves (nothing listens at the
endpoint yet, no answer, the server answers 5xx or "slow down") and which never will without
an operator (a bucket that does not exist or is not ours, wrong credentials, a local folder
that cannot be written). :func:`store_ready` waits for the store with
:func:`skillweave.readiness.until_ready` under that rule, reading the store's id (a read and,
the first time, a write: what every process does first with it).

Callers: ``skillweave.cli.startup`` (the worker and the API), ``mcp_manager.app`` (the
manager), and ``skillweave doctor``'s store check, which shows a transient failure as one a
starting service waits for.
"""

from __future__ import annotations

import logging
from typing import Final

from skillweave.config import StorageSettings
from skillweave.errors import StorageError
from skillweave.readiness import Readiness, until_ready
from skillweave.storage.base import ArtifactStore
from skillweave.storage.store_id import store_identity

__all__ = ["describe_store", "not_up_yet", "store_ready"]

_BUSY_CODES: Final = frozenset(
    {"InternalError", "ServiceUnavailable", "SlowDown", "RequestTimeout"}
)
"""S3 error codes of a server that is up but cannot answer yet."""


def not_up_yet(exc: BaseException) -> str | None:
    """Why the store failed, in a few words, when that may pass by itself; None when it never
    will (the error says what to fix)."""
    if not isinstance(exc, StorageError) or exc.code is None:
        return None
    code = exc.code
    if code == "ConnectionError":
        return "no connection"
    if code.startswith("HTTP5") or code in _BUSY_CODES:
        return f"it answers {code}"
    return None


def describe_store(settings: StorageSettings) -> str:
    """The store as an operator names it: ``the S3 store at HOST:PORT (bucket B)``."""
    if settings.backend == "s3":
        return f"the S3 store at {settings.s3_endpoint} (bucket {settings.s3_bucket})"
    return f"the local store at {settings.local_dir}"


async def store_ready(
    store: ArtifactStore, settings: StorageSettings, *, readiness: Readiness | None = None
) -> str:
    """The store's id, once the store answers (waited for while it is not up yet).

    Raises:
        StorageError: a failure that will not pass by itself.
    """
    quiet = _NoRetryLines()
    connections = logging.getLogger("urllib3.connectionpool")
    connections.addFilter(quiet)  # one warning line for the wait, not two per attempt
    try:
        return await until_ready(
            describe_store(settings),
            lambda: store_identity(store),
            on="store",
            transient=not_up_yet,
            readiness=readiness,
        )
    finally:
        connections.removeFilter(quiet)


class _NoRetryLines(logging.Filter):
    """Drops the HTTP pool's "Retrying … after connection broken" lines: while the store is
    waited for, its one warning says it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Retrying")
