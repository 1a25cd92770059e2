"""The :class:`AuditLog` front: what every door of skillweave calls to record and read."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime

from pydantic import JsonValue, SecretStr

from skillweave.config import AuditSettings
from skillweave.errors import AuditLogError, StorageError
from skillweave.storage.audit._chain import Chain
from skillweave.storage.audit._checkpoints import CHECKPOINT_SECONDS, Checkpoints
from skillweave.storage.audit._findings import AuditProblem
from skillweave.storage.audit._reading import AuditReport, Reader
from skillweave.storage.audit._records import (
    AuditEntry,
    AuditEvent,
    AuditHead,
    AuditRecord,
    Sealer,
    args_digest,
)
from skillweave.storage.base import ArtifactStore

_log = logging.getLogger("skillweave.storage.audit")


class AuditLog:
    """The audit log in `store` (see the package docstring for its layout and guarantees).

    Args:
        store: the artifact store every process of the deployment shares.
        key: ``AUDIT__KEY``: hashes are HMACs under it; None for plain SHA-256.
        enabled: when False, appends write nothing and return None (reads still work).
        actor: who this process is (``api@host``, ``worker@host``), for entries that name none.
        clock: the time of a new record (UTC); tests pass their own.
        checkpoint_seconds: how often a busy writer anchors its chain.
    """

    def __init__(
        self,
        store: ArtifactStore,
        *,
        key: SecretStr | None = None,
        enabled: bool = True,
        actor: str | None = None,
        clock: Callable[[], datetime] | None = None,
        checkpoint_seconds: float = CHECKPOINT_SECONDS,
    ) -> None:
        self._store = store
        self._sealer = Sealer(key)
        self._enabled = enabled
        self._clock = clock or (lambda: datetime.now(UTC))
        self._checkpoints = Checkpoints(store, self._sealer, self._clock)
        self._chain = Chain(
            store,
            sealer=self._sealer,
            checkpoints=self._checkpoints,
            actor=actor,
            checkpoint_seconds=checkpoint_seconds,
        )
        self._actor = actor

    @classmethod
    def from_settings(
        cls, settings: AuditSettings, store: ArtifactStore, *, actor: str | None = None
    ) -> AuditLog:
        """The log the ``AUDIT__`` settings describe, in `store`."""
        return cls(store, key=settings.key, enabled=settings.enabled, actor=actor)

    @property
    def enabled(self) -> bool:
        """Whether appends are written."""
        return self._enabled

    @property
    def keyed(self) -> bool:
        """Whether hashes are HMACs under ``AUDIT__KEY``."""
        return self._sealer.key is not None

    @property
    def writer(self) -> str:
        """The id of the chain this log appends to now."""
        return self._chain.writer

    # -- writing ---------------------------------------------------------------------------------

    async def record(
        self,
        event: AuditEvent,
        *,
        skill: str,
        version: str | None = None,
        run: str | None = None,
        actor: str | None = None,
        args: Sequence[str] | None = None,
        **details: JsonValue,
    ) -> AuditRecord | None:
        """Append one event built from keyword arguments; see :meth:`append`.

        `args`, when given, is stored as ``details.args_digest`` (:func:`args_digest` under the
        log's key), never as it is; every other keyword goes into ``details``.
        """
        if args is not None:
            details["args_digest"] = args_digest(args, key=self._sealer.args_key)
        entry = AuditEntry(
            event=event, skill=skill, version=version, actor=actor, run=run, details=details
        )
        return await self.append(entry)

    async def append(self, entry: AuditEntry) -> AuditRecord | None:
        """Append `entry` to this process's chain and return its record (None when disabled),
        once it is stored. Safe to call from any number of tasks at once (one event loop).

        Raises:
            AuditLogError: the entry is malformed (bad event, fields too long, details too
                large or not JSON; before any I/O), or the store failed. The event is then not
                in the log; whether the caller's operation must fail too is the caller's call.
        """
        if not self._enabled:
            return None
        moment = self._clock()
        self._sealer.check(entry, moment=moment, actor=self._actor)  # before it joins a block
        return await self._chain.append(entry, moment)

    async def aclose(self) -> None:
        """Wait for queued appends and anchor this process's newest record in a checkpoint
        (servers call it on shutdown; a short-lived process's first append is anchored)."""
        if self._enabled:
            await self._chain.aclose()

    # -- reading ---------------------------------------------------------------------------------

    async def read(
        self,
        *,
        skill: str | None = None,
        since: datetime | None = None,
        event: AuditEvent | None = None,
        limit: int | None = None,
        on_damaged: Callable[[AuditProblem], None] | None = None,
    ) -> AsyncIterator[AuditRecord]:
        """The records that match, in time order across writers (``since`` and later).

        The chains are not checked (that is :meth:`verify`), but a record that cannot be read
        or whose hash does not match its content is not yielded: it goes to `on_damaged` (by
        default, logged as a warning).

        Raises:
            AuditLogError: the store failed.
        """
        if since is not None and since.tzinfo is None:
            raise AuditLogError("`since` must be an aware datetime (UTC)")
        damaged = on_damaged or _warn
        try:
            records = await Reader(self._store, self._sealer).records(damaged)
        except StorageError as exc:
            raise AuditLogError(f"cannot read the audit log: {exc}", key=exc.key) from exc
        shown = 0
        for record in records:
            if skill is not None and record.skill != skill:
                continue
            if event is not None and record.event != event:
                continue
            if since is not None and record.time < since:
                continue
            yield record
            shown += 1
            if limit is not None and shown >= limit:
                return

    async def verify(self, *, expect: AuditHead | None = None) -> AuditReport:
        """Check every chain, the checkpoint chain and each against the other; with `expect`
        (a head ``verify`` reported earlier, kept elsewhere), that the log still holds it.

        Raises:
            AuditLogError: the store failed (a damaged log is a report, not an error).
        """
        try:
            return await Reader(self._store, self._sealer).verify(expect=expect)
        except AuditLogError:
            raise
        except StorageError as exc:
            raise AuditLogError(f"cannot read the audit log: {exc}", key=exc.key) from exc


def _warn(problem: AuditProblem) -> None:
    _log.warning("audit log: %s", problem.message)
