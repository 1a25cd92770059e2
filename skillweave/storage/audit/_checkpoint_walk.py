"""The walk of the checkpoint chain: every checkpoint by place, each checked for its hash, its
place and its link, gaps looked at again before they count as removed, and checkpoints past
the listed end that records name (appended while the log was read). Used by ``verify``
(:class:`~skillweave.storage.audit._reading.Reader`)."""

from __future__ import annotations

import asyncio
import itertools

from skillweave.storage import keys
from skillweave.storage.audit._findings import CHECKPOINTS, AuditProblem, removed, stray
from skillweave.storage.audit._inspection import GAP_RECHECKS, READ_AHEAD, Inspector, Item, item_of
from skillweave.storage.audit._records import GENESIS, MAX_RECORD_BYTES, Checkpoint
from skillweave.storage.base import ArtifactRef

__all__ = ["CheckpointWalk", "CheckpointsByPlace"]

CheckpointsByPlace = dict[int, tuple[Checkpoint | None, bool]]
"""Every checkpoint by place: the model (None when unreadable) and whether it is sound."""


class CheckpointWalk:
    """Reads and checks the checkpoint chain through `inspector`."""

    def __init__(self, inspector: Inspector) -> None:
        self._inspector = inspector

    async def checkpoints(self, problems: list[AuditProblem]) -> CheckpointsByPlace:
        """Every checkpoint by place: the model (None when unreadable) and whether it is sound
        (its hash and its link); the chain's problems go to `problems`."""
        listed: list[tuple[int, ArtifactRef]] = []
        for ref in await self._inspector.store.list(keys.AUDIT_CHECKPOINTS_PREFIX):
            seq = keys.audit_checkpoint_seq(ref.key)
            if seq is None:
                problems.append(stray(ref.key))
            else:
                listed.append((seq, ref))
        listed = await self._with_late_arrivals(sorted(listed, key=lambda item: item[0]))
        found: CheckpointsByPlace = {}
        expected, link = 1, GENESIS
        link_known = True
        for start in range(0, len(listed), READ_AHEAD):
            batch = listed[start : start + READ_AHEAD]
            for item in await asyncio.gather(*(self._checkpoint(s, r) for s, r in batch)):
                if item.seq > expected:
                    reason = f"checkpoint {item.seq} follows checkpoint {expected - 1}"
                    problems.append(removed(CHECKPOINTS, expected, item.seq - 1, reason))
                    link_known = False
                problem = item.problem or self._inspector.checkpoint_problem(
                    item, link if link_known else None
                )
                if problem is not None:
                    problems.append(problem)
                model = item.model if isinstance(item.model, Checkpoint) else None
                found[item.seq] = (model, problem is None)
                link_known = item.model is not None and item.link is not None
                link = item.link or GENESIS
                expected = item.seq + 1
        return found

    async def late_checkpoints(
        self, checkpoints: CheckpointsByPlace, wanted: set[int]
    ) -> dict[int, Checkpoint | None]:
        """Checkpoints past the listed end that records name: appended while the log was read."""
        end = max(checkpoints, default=0)
        places = sorted(seq for seq in wanted if seq > end)[:GAP_RECHECKS]
        late: dict[int, Checkpoint | None] = {}
        for seq in places:
            ref = await self._inspector.store.stat(keys.audit_checkpoint_key(seq))
            if ref is None:
                continue
            item = await self._checkpoint(seq, ref)
            if (
                isinstance(item.model, Checkpoint)
                and self._inspector.checkpoint_problem(item, None) is None
            ):
                late[seq] = item.model
            else:
                late[seq] = None
        return late

    async def _checkpoint(self, seq: int, ref: ArtifactRef) -> Item:
        data = await self._inspector.fetch(CHECKPOINTS, seq, ref, MAX_RECORD_BYTES)
        if isinstance(data, AuditProblem):
            return Item(seq, None, None, None, data)
        return item_of(CHECKPOINTS, seq, data, Checkpoint)

    async def _with_late_arrivals(
        self, listed: list[tuple[int, ArtifactRef]]
    ) -> list[tuple[int, ArtifactRef]]:
        missing = [
            seq
            for (before, _), (after, _) in itertools.pairwise([(0, None), *listed])
            for seq in range(before + 1, after)
        ]
        if not missing or len(missing) > GAP_RECHECKS:
            return listed
        found = await asyncio.gather(
            *(self._inspector.store.stat(keys.audit_checkpoint_key(seq)) for seq in missing)
        )
        late = [(seq, ref) for seq, ref in zip(missing, found, strict=True) if ref is not None]
        return sorted([*listed, *late], key=lambda item: item[0]) if late else listed
