"""Reading the audit log back: every chain and the checkpoint chain, checked or just shown.

``verify`` walks the checkpoint chain (:class:`~skillweave.storage.audit._checkpoint_walk.
CheckpointWalk`), then every writer's chain (:class:`~skillweave.storage.audit._chain_walk.
ChainWalk`), then checks them against each other here: each checkpoint's record must still be
in its writer's chain with the hash it names (a chain cut short or replaced behind a
checkpoint), and each record's ``seen`` must still be in the checkpoint chain (a checkpoint
chain cut short). Nothing here trusts the bytes it reads: a damaged record is a problem in the
report, never an exception.

Listings are no snapshots: the checkpoints are listed before the chains (whatever a checkpoint
names was stored before it), and a gap or a reference past the end is looked at again before
it counts as removed (records appended while the listing ran).
"""

from __future__ import annotations

import hmac
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from skillweave.storage.audit._chain_walk import ChainWalk
from skillweave.storage.audit._checkpoint_walk import CheckpointsByPlace, CheckpointWalk
from skillweave.storage.audit._findings import (
    CHECKPOINTS,
    AuditProblem,
    problem_order,
    removed,
    unreadable,
    what,
)
from skillweave.storage.audit._inspection import Inspector
from skillweave.storage.audit._records import AuditHead, AuditRecord, Checkpoint, Sealer
from skillweave.storage.base import ArtifactStore

__all__ = ["AuditReport", "Reader"]


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What ``verify`` found."""

    records: int
    writers: int
    checkpoints: int
    keyed: bool
    """Whether hashes were checked as HMACs under ``AUDIT__KEY``."""
    head: AuditHead | None
    """The newest checkpoint: keep it elsewhere and pass it back as ``expect``."""
    unanchored: int
    """Records after their writer's newest checkpoint: their removal from the tail of a chain
    could not be told from a crash (the next checkpoint covers them)."""
    problems: tuple[AuditProblem, ...]

    @property
    def intact(self) -> bool:
        """Whether the log verified: no problem at all."""
        return not self.problems


@dataclass(slots=True)
class _ChainState:
    """What the walk of one writer's chain leaves for the cross-checks."""

    last: int = 0
    open_end: bool = False
    """Its last block could not be read: where the chain ends is unknown."""
    hashes: dict[int, str] = field(default_factory=dict)
    """The hashes at the places a checkpoint names."""


class Reader:
    """Reads and checks the audit log in `store` under one key (or none)."""

    def __init__(self, store: ArtifactStore, sealer: Sealer) -> None:
        self._sealer = sealer
        inspector = Inspector(store, sealer)
        self._checkpoint_walk = CheckpointWalk(inspector)
        self._chain_walk = ChainWalk(inspector)

    async def verify(self, *, expect: AuditHead | None = None) -> AuditReport:
        problems: list[AuditProblem] = []
        checkpoints = await self._checkpoint_walk.checkpoints(problems)
        valid = {seq: m for seq, (m, ok) in checkpoints.items() if ok and m is not None}
        named: dict[str, set[int]] = defaultdict(set)
        for checkpoint in valid.values():
            named[checkpoint.writer].add(checkpoint.record)
        chains: dict[str, _ChainState] = {}
        records = 0
        seen: dict[tuple[int, str], tuple[str, int]] = {}
        async for writer, item in self._chain_walk.records(problems.append):
            state = chains.setdefault(writer, _ChainState())
            records += 1
            state.last = max(state.last, item.seq)
            state.open_end = item.whole_block
            inserted = item.problem is not None and item.problem.kind == "inserted"
            if item.model is not None and item.seq in named.get(writer, ()) and not inserted:
                state.hashes[item.seq] = item.model.hash
            if isinstance(item.model, AuditRecord) and item.model.seen and item.problem is None:
                ref = item.model.seen
                seen.setdefault((ref.seq, ref.hash), (writer, item.seq))
        by_writer: dict[str, list[tuple[int, Checkpoint]]] = defaultdict(list)
        for seq, checkpoint in sorted(valid.items()):
            by_writer[checkpoint.writer].append((seq, checkpoint))
        for writer, named_by in by_writer.items():
            problems.extend(_against_chain(writer, named_by, chains.get(writer)))
        late = await self._checkpoint_walk.late_checkpoints(checkpoints, {seq for seq, _ in seen})
        problems.extend(_against_checkpoints(seen, checkpoints, late))
        if expect is not None and expect.seq > 0:
            kept = {(expect.seq, expect.hash): ("the head you kept", 0)}
            problems.extend(_against_checkpoints(kept, checkpoints, late))
        anchored: dict[str, int] = defaultdict(int)
        for checkpoint in valid.values():
            anchored[checkpoint.writer] = max(anchored[checkpoint.writer], checkpoint.record)
        unanchored = sum(max(0, s.last - anchored[w]) for w, s in chains.items())
        newest = max(checkpoints, default=0)
        head = None
        if newest:
            model, _ = checkpoints[newest]
            head = AuditHead(newest, model.hash) if model is not None else None
        problems.sort(key=problem_order)
        return AuditReport(
            records=records,
            writers=len(chains),
            checkpoints=len(checkpoints),
            keyed=self._sealer.key is not None,
            head=head,
            unanchored=unanchored,
            problems=tuple(problems),
        )

    async def records(self, damaged: Callable[[AuditProblem], None]) -> list[AuditRecord]:
        """Every record whose hash matches its content, in time order (then writer, place);
        the rest go to `damaged`. The chains' links are not checked (that is ``verify``)."""
        found: list[AuditRecord] = []
        async for _, item in self._chain_walk.records(lambda _: None, links=False):
            if isinstance(item.model, AuditRecord) and item.problem is None:
                found.append(item.model)
            else:
                damaged(item.problem or unreadable("?", item.seq, "it is not an audit record"))
        found.sort(key=lambda record: (record.time, record.writer, record.seq))
        return found


def _against_chain(
    writer: str, named_by: list[tuple[int, Checkpoint]], state: _ChainState | None
) -> list[AuditProblem]:
    """Whether the records the checkpoints `named_by` name are still in `writer`'s chain:
    one problem for the newest gone, one for the first that is not the record named."""
    seq, newest = max(named_by, key=lambda named: named[1].record)
    reason = f"checkpoint {seq} names record {newest.record}"
    if state is None:
        return [removed(writer, 1, newest.record, f"the whole chain is gone: {reason}")]
    found: list[AuditProblem] = []
    if state.last < newest.record and not state.open_end:
        found.append(removed(writer, state.last + 1, newest.record, f"rolled back: {reason}"))
    for seq, checkpoint in sorted(named_by, key=lambda named: named[1].record):
        digest = state.hashes.get(checkpoint.record)
        if digest is not None and not hmac.compare_digest(digest, checkpoint.head):
            message = (
                f"{what(writer, checkpoint.record)} is not the record checkpoint {seq} "
                "names: the chain was replaced from there"
            )
            found.append(AuditProblem("edited", writer, checkpoint.record, message))
            break
    return found


def _against_checkpoints(
    named: dict[tuple[int, str], tuple[str, int]],
    checkpoints: CheckpointsByPlace,
    late: dict[int, Checkpoint | None],
) -> list[AuditProblem]:
    """Whether each checkpoint (place, hash) in `named` is still in the checkpoint chain (the
    value says who names it: a writer and a place, or a text and 0)."""
    found: list[AuditProblem] = []
    end = max(checkpoints, default=0)
    beyond: tuple[int, str] | None = None
    for (seq, digest), (who, place) in sorted(named.items()):
        by = f"record {place} of writer {who}" if place else who
        stored = checkpoints[seq][0] if seq in checkpoints else late.get(seq)
        if seq in checkpoints or seq in late:
            if stored is not None and not hmac.compare_digest(stored.hash, digest):
                message = f"checkpoint {seq} is not the checkpoint {by} names: replaced"
                found.append(AuditProblem("edited", CHECKPOINTS, seq, message))
        elif seq > end and (beyond is None or seq > beyond[0]):
            beyond = (seq, by)
    # an unreadable checkpoint, or one missing from the middle, is reported where it is
    if beyond is not None:
        reason = f"the checkpoint chain was rolled back: {beyond[1]} names checkpoint {beyond[0]}"
        found.append(removed(CHECKPOINTS, end + 1, beyond[0], reason))
    return found
