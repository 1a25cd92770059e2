"""The checkpoint chain: the one sequence every writer of the audit log shares.

A writer appends a checkpoint naming its own newest record at most once per
:data:`CHECKPOINT_SECONDS` (and on close), so the chain grows with time, not with events: a few
appends a second for a whole fleet, where the events themselves go into per-writer chains and
contend for nothing. An append writes checkpoint ``head + 1`` with ``put_if_absent``; whoever
loses the race probes forward with ``stat`` and tries again after a random pause that grows
with each race lost (writers that checkpoint together spread out; no append waits for it: a
writer checkpoints in a task of its own). A checkpoint that cannot be written is skipped
(the records are written; only their anchoring waits for the next one).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from datetime import datetime
from typing import Final

from pydantic import ValidationError

from skillweave.errors import ArtifactIntegrityError, ArtifactNotFoundError, StorageError
from skillweave.storage import keys
from skillweave.storage.audit._records import (
    GENESIS,
    MAX_RECORD_BYTES,
    AuditHead,
    Checkpoint,
    Sealer,
    Seen,
    Unreadable,
    link_of,
    parse,
)
from skillweave.storage.base import ArtifactStore

CHECKPOINT_SECONDS: Final = 1.0
"""How often a busy writer anchors its chain into the checkpoint chain."""

CHECKPOINT_ATTEMPTS: Final = 32
"""Races a checkpoint may lose before it is skipped until the writer's next one."""

_MAX_BACKOFF: Final = 1.0
"""Longest pause (seconds) between two tries of one checkpoint."""
_JSON: Final = "application/json"
_log = logging.getLogger(__name__)


class Checkpoints:
    """Appends to the checkpoint chain in `store`, remembering the newest checkpoint known."""

    def __init__(self, store: ArtifactStore, sealer: Sealer, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._sealer = sealer
        self._clock = clock
        self._head: AuditHead | None = None

    @property
    def seen(self) -> Seen | None:
        """The newest checkpoint this process knows of, for the next record to name."""
        if self._head is None or self._head.seq == 0:
            return None
        return Seen(seq=self._head.seq, hash=self._head.hash)

    async def append(self, *, writer: str, record: int, head: str) -> Checkpoint | None:
        """Anchor `writer`'s chain at `record` (hash `head`); None when it could not be written."""
        try:
            known = self._head or await self._find(0)
            for attempt in range(CHECKPOINT_ATTEMPTS):
                checkpoint, data = self._sealer.checkpoint(
                    seq=known.seq + 1,
                    prev=known.hash,
                    writer=writer,
                    record=record,
                    head=head,
                    moment=self._clock(),
                )
                key = keys.audit_checkpoint_key(checkpoint.seq)
                if await self._store.put_if_absent(key, data, content_type=_JSON) is not None:
                    self._remember(AuditHead(checkpoint.seq, checkpoint.hash))
                    return checkpoint
                known = await self._find(checkpoint.seq)
                # Others checkpoint at the same moment: back off, longer the more races are
                # lost, so that a crowd of writers spreads out (no append waits for this).
                await asyncio.sleep(random.uniform(0, min(_MAX_BACKOFF, 0.01 * 2**attempt)))
        except StorageError as exc:
            _log.warning("audit log: checkpoint of writer %s not written: %s", writer, exc)
            return None
        _log.warning(
            "audit log: checkpoint of writer %s not written: %d other checkpoints won the race",
            writer,
            CHECKPOINT_ATTEMPTS,
        )
        return None

    def _remember(self, head: AuditHead) -> None:
        if self._head is None or head.seq > self._head.seq:
            self._head = head

    async def _find(self, start: int) -> AuditHead:
        """The newest checkpoint at or after `start` (0, or one known to exist)."""
        head = await self._head_at(await self._last_from(start))
        self._remember(head)
        return head

    async def _exists(self, seq: int) -> bool:
        return await self._store.stat(keys.audit_checkpoint_key(seq)) is not None

    async def _last_from(self, seq: int) -> int:
        """The last checkpoint of the run that starts at `seq`: galloping forward, then
        bisecting, so O(log n) stats however far behind `seq` is (``1`` stat when it is the
        last but one, the usual case after losing a race)."""
        step = 1
        while seq + step <= keys.MAX_AUDIT_SEQ and await self._exists(seq + step):
            seq += step
            step *= 2
        low, high = seq, min(seq + step, keys.MAX_AUDIT_SEQ + 1)
        while high - low > 1:
            middle = (low + high) // 2
            if await self._exists(middle):
                low = middle
            else:
                high = middle
        return low

    async def _head_at(self, seq: int) -> AuditHead:
        """Checkpoint `seq` as a head to follow: its claimed hash even when it is damaged (the
        damage is ``verify``'s to report; the chain goes on after it)."""
        if seq == 0:
            return AuditHead(0, GENESIS)
        ref = await self._store.stat(keys.audit_checkpoint_key(seq))
        if ref is None or ref.size > MAX_RECORD_BYTES:
            raise StorageError(f"checkpoint {seq} vanished or is oversized while appending")
        try:
            data = await self._store.get_bytes(ref)
        except (ArtifactNotFoundError, ArtifactIntegrityError) as exc:
            raise StorageError(f"checkpoint {seq} changed while appending: {exc}") from exc
        try:
            body: dict[str, object] | None = parse(data)
        except Unreadable:
            body = None
        try:
            Checkpoint.model_validate(body)
        except ValidationError:
            _log.error("audit log: checkpointing after a damaged checkpoint %d", seq)
        return AuditHead(seq, link_of(data, body))
