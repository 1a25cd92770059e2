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
next one (such a block's records are in the log although their callers were told otherwise).
The chain left behind is anchored with the new one's first block. A writer whose event loop
stops with a write in flight starts a new chain too, on its next loop.

A caller cancelled before its entry joins a block writes nothing; once its block is being
written, the record may land. The first block of a chain is anchored before its callers
return (a short-lived process's records are anchored); later checkpoints are written after
their block's callers have their answer.
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

FIRST_ANCHOR_WAIT: Final = 0.5
"""Longest a chain's first callers wait for its first checkpoint (it goes on aside after)."""

_BACKOFF: Final = 0.05
_MAX_LEFT: Final = 16
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
        self._anchoring: asyncio.Task[None] | None = None
        self._left: list[tuple[str, int, str]] = []
        """Chains left for a new one with records no checkpoint names yet: writer, seq, hash."""
        self._start()

    def _start(self) -> None:
        """Begin a new chain under a fresh writer id."""
        self.writer = secrets.token_hex(8)
        self.seq = 0
        self.hash = GENESIS
        self._anchored = 0
        self._anchored_at: float | None = None

    def _rotate(self) -> None:
        """Leave this chain for a new one; its newest record is anchored with the next one's."""
        if self.seq > self._anchored and len(self._left) < _MAX_LEFT:
            self._left.append((self.writer, self.seq, self.hash))
        self._start()

    async def append(self, entry: AuditEntry, moment: datetime) -> AuditRecord:
        """`entry` as a record of this chain, once the block that holds it is stored."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[AuditRecord] = loop.create_future()
        self._queue.append(_Pending(entry, moment, future))
        if self._task is None or self._task.done() or self._loop is not loop:
            if self._task is not None and not self._task.done():
                # Its loop stopped with a block write in flight, which may still land: never
                # write another block in its place.
                self._rotate()
            self._loop = loop
            self._task = loop.create_task(self._flush(), name=f"audit-writer-{self.writer}")
        return await future

    async def aclose(self) -> None:
        """Wait for queued appends, then anchor the chain's newest record."""
        task = self._task
        if task is not None and not task.done() and self._loop is asyncio.get_running_loop():
            await asyncio.wait({task})  # its callers get its outcome; cancelling this leaves it
        anchoring = self._anchoring
        if (
            anchoring is not None
            and not anchoring.done()
            and anchoring.get_loop() is asyncio.get_running_loop()
        ):
            await asyncio.wait({anchoring})
        if self.seq > self._anchored or self._left:
            await self._anchor()

    async def _flush(self) -> None:
        me = asyncio.current_task()
        batch: list[_Pending] = []
        written: list[tuple[_Pending, AuditRecord]] = []
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
                # A chain's first block is anchored before its callers hear back, so that a
                # short-lived process's records are anchored, but they wait for it at most
                # FIRST_ANCHOR_WAIT (many writers starting at once race for the checkpoint
                # chain for seconds); it goes on aside. Later anchors add no latency.
                first = self._anchored_at is None
                if first:
                    self._anchor_aside()
                    assert self._anchoring is not None
                    await asyncio.wait({self._anchoring}, timeout=FIRST_ANCHOR_WAIT)
                for pending, record in written:
                    _settle(pending.future, record)
                batch, written = [], []
                if not first and time.monotonic() - (self._anchored_at or 0) >= self._interval:
                    self._anchor_aside()
        except BaseException as exc:  # cancelled with its loop, or a bug: nobody waits forever
            if self._task is not me:  # closed long after its loop, another writes the chain now
                raise
            for pending, record in written:
                _settle(pending.future, record)  # stored: it is in the log
            failure = AuditLogError(f"the audit log's writer stopped: {exc!r}")
            for pending in [*batch, *self._queue]:
                _settle(pending.future, failure)
            self._queue.clear()
            self._rotate()  # a block write may be in flight: never write another in its place
            if not isinstance(exc, Exception):
                raise
            _log.error("audit log: writer %s stopped", self.writer, exc_info=exc)

    async def _write(self, batch: list[_Pending]) -> list[tuple[_Pending, AuditRecord]]:
        for _ in range(3):
            try:
                return await self._write_block(batch)
            except _Collision:
                _log.error("audit log: writer %s found a block it did not write", self.writer)
                self._rotate()
        raise AuditLogError("cannot append to the audit log: every new writer id is taken")

    async def _write_block(self, batch: list[_Pending]) -> list[tuple[_Pending, AuditRecord]]:
        """Seal `batch` as the next block and store it; the chain moves on only when stored."""
        seen = self._checkpoints.seen
        seq, prev = self.seq, self.hash
        written: list[tuple[_Pending, AuditRecord]] = []
        lines: list[bytes] = []
        for pending in batch:
            if pending.future.done():  # cancelled while an earlier try of this block ran
                continue
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
            self._rotate()  # the block may yet land: never write another in its place
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

    def _anchor_aside(self) -> None:
        """Anchor in a task of its own, off the block path: a checkpoint that loses races
        backs off for seconds under many writers, and no append waits for it."""
        if self._anchoring is not None and not self._anchoring.done():
            return
        self._anchored_at = time.monotonic()
        self._anchoring = asyncio.get_running_loop().create_task(
            self._anchor_quietly(), name=f"audit-anchor-{self.writer}"
        )

    async def _anchor_quietly(self) -> None:
        try:
            await self._anchor()
        except Exception:  # a bug, not the store (Checkpoints.append says what failed)
            _log.exception("audit log: writer %s could not anchor its chain", self.writer)

    async def _anchor(self) -> None:
        self._anchored_at = time.monotonic()
        for left in list(self._left):
            writer, seq, head = left
            if not await self._checkpoints.append(writer=writer, record=seq, head=head):
                break
            with contextlib.suppress(ValueError):  # anchored by a concurrent call already
                self._left.remove(left)
        writer, seq, head = self.writer, self.seq, self.hash
        if seq == 0:
            return
        anchored = await self._checkpoints.append(writer=writer, record=seq, head=head)
        if anchored and self.writer == writer:  # not a chain left meanwhile
            self._anchored = max(self._anchored, seq)


def _settle(future: asyncio.Future[AuditRecord], outcome: AuditRecord | BaseException) -> None:
    if future.done():
        return
    with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits any more
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
