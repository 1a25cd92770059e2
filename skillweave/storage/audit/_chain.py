"""One writer's chain of the audit log, written by group commit.

Each :class:`~skillweave.storage.audit.AuditLog` that appends is one writer: a random 64-bit
id and a chain of records only it writes, ``audit/chains/{writer}/``. Appends queue; one task
seals everything queued as the next block (one store write, up to
:data:`~._records.MAX_BLOCK_RECORDS` records, each linked to the one before) and answers the
callers when the block is stored. No two writers share a key, so no append waits on another
process: throughput grows with writers, and within a writer with the batch a write carries.

A block whose write fails is retried with the same bytes (a lost reply finds its own bytes
stored); when it still fails, its callers get :class:`~skillweave.errors.AuditLogError` and
the writer starts a new chain, so that a block that lands late can never collide with the
next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    AuditLogError,
    StorageError,
)
from skillweave.storage import keys
from skillweave.storage.audit._checkpoints import CHECKPOINT_SECONDS, Checkpoints
from skillweave.storage.audit._records import (
    GENESIS,
    MAX_BLOCK_RECORDS,
    AuditEntry,
    AuditRecord,
    Sealer,
)
from skillweave.storage.base import ArtifactStore

WRITE_ATTEMPTS: Final = 4
"""Tries of one block write (with the same bytes) before its callers are told it failed."""

_BACKOFF: Final = 0.05
_JSON_LINES: Final = "application/x-ndjson"
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Pending:
    entry: AuditEntry
    moment: datetime
    future: asyncio.Future[AuditRecord]


class _Collision(Exception):
    """Another block is stored under this writer's key: its id is not its own any more."""


class Chain:
    """The chain this process writes (see the module docstring). One event loop at a time."""

    def __init__(
        self,
        store: ArtifactStore,
        *,
        sealer: Sealer,
        checkpoints: Checkpoints,
        actor: str | None,
        checkpoint_seconds: float = CHECKPOINT_SECONDS,
    ) -> None:
        self._store = store
        self._sealer = sealer
        self._checkpoints = checkpoints
        self._actor = actor
        self._interval = checkpoint_seconds
        self._queue: list[_Pending] = []
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._start()

    def _start(self) -> None:
        """Begin a new chain under a fresh writer id."""
        self.writer = secrets.token_hex(8)
        self.seq = 0
        self.hash = GENESIS
        self._anchored = 0
        self._anchored_at: float | None = None

    async def append(self, entry: AuditEntry, moment: datetime) -> AuditRecord:
        """`entry` as a record of this chain, once the block that holds it is stored."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[AuditRecord] = loop.create_future()
        self._queue.append(_Pending(entry, moment, future))
        if self._task is None or self._task.done() or self._loop is not loop:
            self._loop = loop
            self._task = loop.create_task(self._flush(), name=f"audit-writer-{self.writer}")
        return await future

    async def aclose(self) -> None:
        """Wait for queued appends, then anchor the chain's newest record."""
        task = self._task
        if task is not None and not task.done() and self._loop is asyncio.get_running_loop():
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
        if self.seq > self._anchored:
            await self._anchor()

    async def _flush(self) -> None:
        batch: list[_Pending] = []
        try:
            while self._queue:
                batch = [p for p in self._queue[:MAX_BLOCK_RECORDS] if not p.future.done()]
                del self._queue[:MAX_BLOCK_RECORDS]
                if not batch:
                    continue
                try:
                    written = await self._write(batch)
                except AuditLogError as exc:
                    for pending in batch:
                        _settle(pending.future, exc)
                    batch = []
                    continue
                if self._anchored_at is None or time.monotonic() - self._anchored_at >= (
                    self._interval
                ):
                    await self._anchor()
                for pending, record in written:
                    _settle(pending.future, record)
                batch = []
        except BaseException as exc:  # cancelled with its loop: no caller may wait forever
            failure = AuditLogError(f"the audit log's writer stopped: {exc!r}")
            for pending in [*batch, *self._queue]:
                _settle(pending.future, failure)
            self._queue.clear()
            raise

    async def _write(self, batch: list[_Pending]) -> list[tuple[_Pending, AuditRecord]]:
        for _ in range(3):
            try:
                return await self._write_block(batch)
            except _Collision:
                _log.error("audit log: writer %s found a block it did not write", self.writer)
                self._start()
        raise AuditLogError("cannot append to the audit log: every new writer id is taken")

    async def _write_block(self, batch: list[_Pending]) -> list[tuple[_Pending, AuditRecord]]:
        """Seal `batch` as the next block and store it; the chain moves on only when stored."""
        seen = self._checkpoints.seen
        seq, prev = self.seq, self.hash
        written: list[tuple[_Pending, AuditRecord]] = []
        lines: list[bytes] = []
        for pending in batch:
            try:
                record, line = self._sealer.record(
                    pending.entry,
                    writer=self.writer,
                    seq=seq + 1,
                    prev=prev,
                    seen=seen,
                    moment=pending.moment,
                    actor=self._actor,
                )
            except AuditLogError as exc:
                _settle(pending.future, exc)
                continue
            written.append((pending, record))
            lines.append(line)
            seq, prev = record.seq, record.hash
        if not written:
            return written
        key = keys.audit_block_key(self.writer, self.seq + 1)
        data = b"\n".join(lines) + b"\n"
        failure: StorageError | None = None
        for attempt in range(WRITE_ATTEMPTS):
            try:
                stored = await self._store.put_if_absent(key, data, content_type=_JSON_LINES)
                if stored is not None:
                    break
                if not await self._holds(key, data):
                    raise _Collision
                break  # a retry after a lost reply: the block is stored
            except StorageError as exc:
                failure = exc
                if attempt + 1 < WRITE_ATTEMPTS:
                    await asyncio.sleep(_BACKOFF * 2**attempt)
        else:
            self._start()  # the block may yet land: never write another in its place
            raise AuditLogError(
                f"cannot write {len(written)} audit record(s) to the store: {failure}",
                key=key,
                code=getattr(failure, "code", None),
            )
        self.seq, self.hash = seq, prev
        return written

    async def _holds(self, key: str, data: bytes) -> bool:
        ref = await self._store.stat(key)
        if ref is None or ref.size != len(data):
            return False
        try:
            return await self._store.get_bytes(ref) == data
        except (ArtifactNotFoundError, ArtifactIntegrityError):
            return False

    async def _anchor(self) -> None:
        self._anchored_at = time.monotonic()
        seq, head = self.seq, self.hash
        if seq == 0:
            return
        if await self._checkpoints.append(writer=self.writer, record=seq, head=head):
            self._anchored = max(self._anchored, seq)


def _settle(future: asyncio.Future[AuditRecord], outcome: AuditRecord | BaseException) -> None:
    if future.done():
        return
    with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits any more
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
