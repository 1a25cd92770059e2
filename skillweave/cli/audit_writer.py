"""The audit log as this CLI's user writes it (:func:`cli_audit`: actor ``cli:USER@HOST``) and
a change refused because its record cannot be written (:func:`recorded`).

Every CLI change that is audited (``skills install``, ``update``, ``remove``, ``approve``,
``rollback``) is recorded before it is made, so a record that cannot be written means the
change was not made: the command says so in one line and exits 1. Used by
:mod:`~skillweave.cli.install` and :mod:`~skillweave.cli.versions`.
"""

from __future__ import annotations

import getpass
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from skillweave.cli.exits import fail
from skillweave.config import Settings
from skillweave.errors import AuditLogError
from skillweave.sandbox import audit_refusal

if TYPE_CHECKING:
    from skillweave.storage import ArtifactStore
    from skillweave.storage.audit import AuditLog

__all__ = ["cli_actor", "cli_audit", "recorded"]


def cli_actor() -> str:
    """Who this CLI's records name: ``cli:USER@HOST``."""
    return f"cli:{getpass.getuser()}@{socket.gethostname()}"


def cli_audit(settings: Settings, store: ArtifactStore) -> AuditLog:
    """The audit log of `settings`, in `store`, as this CLI's user writes it."""
    from skillweave.storage.audit import AuditLog

    return AuditLog.from_settings(settings.audit, store, actor=cli_actor())


@contextmanager
def recorded(what: str, *, so: str) -> Iterator[None]:
    """Within it, an :class:`~skillweave.errors.AuditLogError` is one line and exit 1 naming
    `what` was refused and `so`, what became of it (``nothing was installed``)."""
    try:
        yield
    except AuditLogError as exc:
        raise fail(audit_refusal(exc, what=what, so=so)) from None
