"""Reading the audit log back: every chain and the checkpoint chain, checked or just shown.

``verify`` walks the checkpoint chain, then every writer's chain, then checks them against
each other: each checkpoint's record must still be in its writer's chain with the hash it
names (a chain cut short or replaced behind a checkpoint), and each record's ``seen`` must
still be in the checkpoint chain (a checkpoint chain cut short). Nothing here trusts the
bytes it reads: a damaged record is a problem in the report, never an exception.

Listings are no snapshots: the checkpoints are listed before the chains (whatever a checkpoint
names was stored before it), and a gap or a reference past the end is looked at again before
it counts as removed (records appended while the listing ran).
"""

from __future__ import annotations

import asyncio
import hmac
import itertools
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import ValidationError

from skillweave.errors import ArtifactIntegrityError, ArtifactNotFoundError
from skillweave.storage import keys
from skillweave.storage.audit._records import (
    GENESIS,
    MAX_BLOCK_BYTES,
    MAX_RECORD_BYTES,
    AuditHead,
    AuditRecord,
    Checkpoint,
    Sealer,
    Unreadable,
    first_error,
    link_of,
    parse,
)
from skillweave.storage.base import ArtifactRef, ArtifactStore

ProblemKind = Literal["edited", "reordered", "removed", "unreadable"]
"""What ``verify`` found: a hash that does not match its content, or a record that is not the
one a checkpoint names (``edited``); a record in another's place, chain or order
(``reordered``); records missing from the middle or the tail of a chain (``removed``); bytes
that are not a record (``unreadable``)."""

CHECKPOINTS: Final = "checkpoints"
"""The `chain` of a problem in the checkpoint chain (writer ids are 16 hex digits)."""

READ_AHEAD: Final = 16
"""Blocks or checkpoints fetched at once."""

GAP_RECHECKS: Final = 256
"""Missing places looked at again, in case a listing raced with appends."""


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """One thing ``verify`` found, in `chain` (a writer id, or :data:`CHECKPOINTS`) at `seq`;
    both None for a key under ``audit/`` that belongs to no chain."""

    kind: ProblemKind
    chain: str | None
    seq: int | None
    message: str


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


@dataclass(frozen=True, slots=True)
class _Item:
    """One stored record or checkpoint as read: parsed when it could be."""

    seq: int
    model: AuditRecord | Checkpoint | None
    body: dict[str, object] | None
    link: str | None
    """The ``prev`` the next one must carry; None when it cannot be known."""
    problem: AuditProblem | None


@dataclass(slots=True)
class _ChainState:
    """What the walk of one writer's chain leaves for the cross-checks."""

    last: int = 0
    hashes: dict[int, str] = field(default_factory=dict)
    """The hashes at the places a checkpoint names."""


class Reader:
    """Reads and checks the audit log in `store` under one key (or none)."""

    def __init__(self, store: ArtifactStore, sealer: Sealer) -> None:
        self._store = store
        self._sealer = sealer

    async def verify(self, *, expect: AuditHead | None = None) -> AuditReport:
        problems: list[AuditProblem] = []
        checkpoints = await self._checkpoints(problems)
        valid = {seq: m for seq, (m, ok) in checkpoints.items() if ok and m is not None}
        named: dict[str, set[int]] = defaultdict(set)
        for checkpoint in valid.values():
            named[checkpoint.writer].add(checkpoint.record)
        chains: dict[str, _ChainState] = {}
        records = 0
        seen: dict[tuple[int, str], tuple[str, int]] = {}
        async for writer, item in self._records(problems.append):
            state = chains.setdefault(writer, _ChainState())
            records += 1
            state.last = max(state.last, item.seq)
            if item.link is not None and item.seq in named.get(writer, ()):
                state.hashes[item.seq] = item.link
            if isinstance(item.model, AuditRecord) and item.model.seen and item.problem is None:
                ref = item.model.seen
                seen.setdefault((ref.seq, ref.hash), (writer, item.seq))
        for seq, checkpoint in sorted(valid.items()):
            problems.extend(_against_chain(seq, checkpoint, chains.get(checkpoint.writer)))
        late = await self._late_checkpoints(checkpoints, {seq for seq, _ in seen})
        for (seq, digest), (writer, place) in sorted(seen.items()):
            named_by = f"record {place} of writer {writer}"
            problems.extend(_against_checkpoints(seq, digest, checkpoints, late, named_by))
        if expect is not None and expect.seq > 0:
            problems.extend(
                _against_checkpoints(
                    expect.seq, expect.hash, checkpoints, late, "the head you kept"
                )
            )
        anchored: dict[str, int] = defaultdict(int)
        for checkpoint in valid.values():
            anchored[checkpoint.writer] = max(anchored[checkpoint.writer], checkpoint.record)
        unanchored = sum(max(0, s.last - anchored[w]) for w, s in chains.items())
        newest = max(checkpoints, default=0)
        head = None
        if newest:
            model, _ = checkpoints[newest]
            head = AuditHead(newest, model.hash) if model is not None else None
        problems.sort(key=_order)
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
        async for _, item in self._records(lambda _: None, links=False):
            if isinstance(item.model, AuditRecord) and item.problem is None:
                found.append(item.model)
            else:
                damaged(item.problem or _unreadable("?", item.seq, "it is not an audit record"))
        found.sort(key=lambda record: (record.time, record.writer, record.seq))
        return found

    # -- the checkpoint chain ------------------------------------------------------------------

    async def _checkpoints(
        self, problems: list[AuditProblem]
    ) -> dict[int, tuple[Checkpoint | None, bool]]:
        """Every checkpoint by place: the model (None when unreadable) and whether it is sound
        (its hash and its link); the chain's problems go to `problems`."""
        listed: list[tuple[int, ArtifactRef]] = []
        for ref in await self._store.list(keys.AUDIT_CHECKPOINTS_PREFIX):
            seq = keys.audit_checkpoint_seq(ref.key)
            if seq is None:
                problems.append(_stray(ref.key))
            else:
                listed.append((seq, ref))
        listed = await self._with_late_arrivals(sorted(listed, key=lambda item: item[0]))
        found: dict[int, tuple[Checkpoint | None, bool]] = {}
        expected, link = 1, GENESIS
        link_known = True
        for start in range(0, len(listed), READ_AHEAD):
            batch = listed[start : start + READ_AHEAD]
            for item in await asyncio.gather(*(self._checkpoint(s, r) for s, r in batch)):
                if item.seq > expected:
                    reason = f"checkpoint {item.seq} follows checkpoint {expected - 1}"
                    problems.append(_removed(CHECKPOINTS, expected, item.seq - 1, reason))
                    link_known = False
                problem = item.problem or self._problem(item, link if link_known else None)
                if problem is not None:
                    problems.append(problem)
                model = item.model if isinstance(item.model, Checkpoint) else None
                found[item.seq] = (model, problem is None)
                link_known = item.model is not None and item.link is not None
                link = item.link or GENESIS
                expected = item.seq + 1
        return found

    async def _checkpoint(self, seq: int, ref: ArtifactRef) -> _Item:
        data = await self._fetch(CHECKPOINTS, seq, ref, MAX_RECORD_BYTES)
        if isinstance(data, AuditProblem):
            return _Item(seq, None, None, None, data)
        return _item(CHECKPOINTS, seq, data, Checkpoint)

    async def _late_checkpoints(
        self, checkpoints: dict[int, tuple[Checkpoint | None, bool]], wanted: set[int]
    ) -> dict[int, Checkpoint | None]:
        """Checkpoints past the listed end that records name: appended while the log was read."""
        end = max(checkpoints, default=0)
        places = sorted(seq for seq in wanted if seq > end)[:GAP_RECHECKS]
        late: dict[int, Checkpoint | None] = {}
        for seq in places:
            ref = await self._store.stat(keys.audit_checkpoint_key(seq))
            if ref is None:
                continue
            item = await self._checkpoint(seq, ref)
            if isinstance(item.model, Checkpoint) and self._problem(item, None) is None:
                late[seq] = item.model
            else:
                late[seq] = None
        return late

    # -- the writers' chains -------------------------------------------------------------------

    async def _records(
        self, problem: Callable[[AuditProblem], None], *, links: bool = True
    ) -> AsyncIterator[tuple[str, _Item]]:
        """Every stored record, chain by chain in place order; each item's `problem` is its
        own or its chain's (a gap or a broken link is reported to `problem`)."""
        blocks: dict[str, list[tuple[int, ArtifactRef]]] = defaultdict(list)
        for ref in await self._store.list(keys.AUDIT_CHAINS_PREFIX):
            place = keys.audit_block_place(ref.key)
            if place is None:
                problem(_stray(ref.key))
            else:
                blocks[place[0]].append((place[1], ref))
        for writer in sorted(blocks):
            async for item in self._chain(writer, sorted(blocks[writer]), problem, links):
                yield writer, item

    async def _chain(
        self,
        writer: str,
        listed: list[tuple[int, ArtifactRef]],
        problem: Callable[[AuditProblem], None],
        links: bool,
    ) -> AsyncIterator[_Item]:
        expected = 1
        link: str | None = GENESIS
        pending = list(listed)
        loaded: dict[int, asyncio.Task[list[_Item]]] = {}
        while pending:
            for first, ref in pending[:READ_AHEAD]:
                if first not in loaded:
                    loaded[first] = asyncio.ensure_future(self._block(writer, first, ref))
            first, _ = pending[0]
            if first > expected:
                ref = await self._store.stat(keys.audit_block_key(writer, expected))
                if ref is not None:  # stored after the listing passed its place
                    pending.insert(0, (expected, ref))
                    continue
                reason = f"block {first} follows record {expected - 1}"
                problem(_removed(writer, expected, first - 1, reason))
                link = None
            pending.pop(0)
            for item in await loaded.pop(first):
                own = item.problem
                if own is None:
                    own = (
                        self._problem(item, link, writer=writer)
                        if links
                        else self._hash_problem(item, writer)
                    )
                if own is not None and links:
                    problem(own)
                yield _Item(item.seq, item.model, item.body, item.link, own)
                link = item.link if item.model is not None else None
                expected = item.seq + 1
        for task in loaded.values():
            task.cancel()

    async def _block(self, writer: str, first: int, ref: ArtifactRef) -> list[_Item]:
        data = await self._fetch(writer, first, ref, MAX_BLOCK_BYTES)
        if isinstance(data, AuditProblem):
            return [_Item(first, None, None, None, data)]
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if not lines:
            return [
                _Item(first, None, None, None, _unreadable(writer, first, "the block is empty"))
            ]
        return [_item(writer, first + index, line, AuditRecord) for index, line in enumerate(lines)]

    # -- checks ---------------------------------------------------------------------------------

    def _problem(
        self, item: _Item, link: str | None, *, writer: str | None = None
    ) -> AuditProblem | None:
        """What is wrong with a readable record or checkpoint: its place, hash or link."""
        chain = writer or CHECKPOINTS
        model = item.model
        assert model is not None
        what = _what(chain, item.seq)
        if model.seq != item.seq:
            return AuditProblem(
                "reordered", chain, item.seq, f"{what} holds {_what(chain, model.seq)}: moved"
            )
        if isinstance(model, AuditRecord) and model.writer != chain:
            return AuditProblem(
                "reordered",
                chain,
                item.seq,
                f"{what} is record {model.seq} of writer {model.writer}: moved between chains",
            )
        problem = self._hash_problem(item, chain)
        if problem is not None:
            return problem
        if link is not None and model.prev != link:
            before = _what(chain, item.seq - 1) if item.seq > 1 else "the start"
            return AuditProblem(
                "reordered",
                chain,
                item.seq,
                f"{what} does not follow {before}: its prev is not the hash before it "
                "(reordered, replaced, or the chain forked)",
            )
        return None

    def _hash_problem(self, item: _Item, chain: str) -> AuditProblem | None:
        model, body = item.model, item.body
        assert model is not None
        assert body is not None
        checkpoint = isinstance(model, Checkpoint)
        if hmac.compare_digest(self._sealer.link(body, checkpoint=checkpoint), model.hash):
            return None
        what = _what(chain, item.seq)
        if self._sealer.forged(body, model.hash, checkpoint=checkpoint):
            return AuditProblem(
                "edited",
                chain,
                item.seq,
                f"{what} was forged: its hash is a plain SHA-256, not an HMAC under "
                "AUDIT__KEY (rewritten without the key, or written before the key was set)",
            )
        return AuditProblem(
            "edited", chain, item.seq, f"{what} was edited: its hash does not match its content"
        )

    async def _fetch(
        self, chain: str, seq: int, ref: ArtifactRef, limit: int
    ) -> bytes | AuditProblem:
        what = _what(chain, seq) if chain == CHECKPOINTS else f"block {seq} of writer {chain}"
        if ref.size > limit:
            return _unreadable(chain, seq, f"it is {ref.size} bytes, over {limit}", what=what)
        for _ in range(2):  # a store-level mismatch may be a write racing the listing: once more
            try:
                return await self._store.get_bytes(ref)
            except ArtifactNotFoundError:
                return AuditProblem("removed", chain, seq, f"{what} was removed")
            except ArtifactIntegrityError:
                fresh = await self._store.stat(ref.key)
                if fresh is None:
                    return AuditProblem("removed", chain, seq, f"{what} was removed")
                ref = fresh
        return AuditProblem(
            "edited", chain, seq, f"{what} was edited: its bytes changed behind the store"
        )

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
            *(self._store.stat(keys.audit_checkpoint_key(seq)) for seq in missing)
        )
        late = [(seq, ref) for seq, ref in zip(missing, found, strict=True) if ref is not None]
        return sorted([*listed, *late], key=lambda item: item[0]) if late else listed


def _item(chain: str, seq: int, data: bytes, kind: type[AuditRecord] | type[Checkpoint]) -> _Item:
    """Stored bytes as a record or checkpoint; never raises for bad content."""
    if len(data) > MAX_RECORD_BYTES:
        problem = _unreadable(chain, seq, f"it is {len(data)} bytes, over {MAX_RECORD_BYTES}")
        return _Item(seq, None, None, link_of(data, None), problem)
    try:
        body = parse(data)
    except Unreadable as exc:
        return _Item(seq, None, None, link_of(data, None), _unreadable(chain, seq, str(exc)))
    try:
        model = kind.model_validate(body)
    except ValidationError as exc:
        what = "an audit record" if kind is AuditRecord else "a checkpoint"
        problem = _unreadable(chain, seq, f"it is not {what}: {first_error(exc)}")
        return _Item(seq, None, body, link_of(data, body), problem)
    return _Item(seq, model, body, model.hash, None)


def _against_chain(
    seq: int, checkpoint: Checkpoint, state: _ChainState | None
) -> list[AuditProblem]:
    """Whether the record checkpoint `seq` names is still in its writer's chain."""
    writer, record = checkpoint.writer, checkpoint.record
    if state is None:
        reason = f"checkpoint {seq} names its record {record}"
        return [
            _removed(writer, 1, record, f"the whole chain of writer {writer} is gone: {reason}")
        ]
    if state.last < record:
        reason = f"the chain was rolled back: checkpoint {seq} names record {record}"
        return [_removed(writer, state.last + 1, record, reason)]
    digest = state.hashes.get(record)
    if digest is not None and not hmac.compare_digest(digest, checkpoint.head):
        return [
            AuditProblem(
                "edited",
                writer,
                record,
                f"{_what(writer, record)} is not the record checkpoint {seq} names: the chain "
                "was replaced from there",
            )
        ]
    return []


def _against_checkpoints(
    seq: int,
    digest: str,
    checkpoints: dict[int, tuple[Checkpoint | None, bool]],
    late: dict[int, Checkpoint | None],
    named_by: str,
) -> list[AuditProblem]:
    """Whether checkpoint `seq` with hash `digest`, which `named_by` names, is still there."""
    if seq in checkpoints:
        model, _ = checkpoints[seq]
        if model is None or hmac.compare_digest(model.hash, digest):
            return []  # an unreadable checkpoint is reported where it is
        message = f"checkpoint {seq} is not the checkpoint {named_by} names: replaced"
        return [AuditProblem("edited", CHECKPOINTS, seq, message)]
    if seq in late:
        found = late[seq]
        if found is None or hmac.compare_digest(found.hash, digest):
            return []
        message = f"checkpoint {seq} is not the checkpoint {named_by} names: replaced"
        return [AuditProblem("edited", CHECKPOINTS, seq, message)]
    end = max(checkpoints, default=0)
    reason = f"the checkpoint chain was rolled back: {named_by} names checkpoint {seq}"
    return [_removed(CHECKPOINTS, end + 1, seq, reason)] if seq > end else []


def _order(problem: AuditProblem) -> tuple[int, str, int]:
    return (problem.chain is None, problem.chain or "", problem.seq or 0)


def _what(chain: str, seq: int) -> str:
    return f"checkpoint {seq}" if chain == CHECKPOINTS else f"record {seq} of writer {chain}"


def _stray(key: str) -> AuditProblem:
    return AuditProblem(
        "unreadable", None, None, f"{key!r} is in the audit log but no record's key"
    )


def _unreadable(chain: str, seq: int, reason: str, *, what: str | None = None) -> AuditProblem:
    return AuditProblem(
        "unreadable", chain, seq, f"{what or _what(chain, seq)} is unreadable: {reason}"
    )


def _removed(chain: str, first: int, last: int, reason: str) -> AuditProblem:
    if chain == CHECKPOINTS:
        what = f"checkpoint {first} was" if first == last else f"checkpoints {first} to {last} were"
    else:
        span = f"record {first}" if first == last else f"records {first} to {last}"
        what = f"{span} of writer {chain} {'was' if first == last else 'were'}"
    return AuditProblem("removed", chain, first, f"{what} removed: {reason}")
