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
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import ValidationError

from skillweave.errors import ArtifactIntegrityError, ArtifactNotFoundError
from skillweave.storage import keys
from skillweave.storage.audit._records import (
    GENESIS,
    MAX_BLOCK_BYTES,
    MAX_BLOCK_RECORDS,
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

ProblemKind = Literal["edited", "reordered", "inserted", "removed", "unreadable"]
"""What ``verify`` found: a hash that does not match its content, or a record that is not the
one a checkpoint names (``edited``); a record in another's place, chain or order
(``reordered``); a copy of a record, or a block over places already filled (``inserted``);
records missing from the middle or the tail of a chain (``removed``); bytes that are not a
record, or a key in the log that is no block or checkpoint (``unreadable``)."""

CHECKPOINTS: Final = "checkpoints"
"""The `chain` of a problem in the checkpoint chain (writer ids are 16 hex digits)."""

READ_AHEAD: Final = 16
"""Blocks or checkpoints fetched at once."""

GAP_RECHECKS: Final = 256
"""Missing places looked at again, in case a listing raced with appends."""


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """One thing ``verify`` found, in `chain` (a writer id, or :data:`CHECKPOINTS`) at `seq`;
    both None for a key under ``audit/chains/`` or ``audit/checkpoints/`` that is no block or
    checkpoint."""

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
    whole_block: bool = False
    """It stands for a block that could not be read: how many records it held is unknown."""


@dataclass(slots=True)
class _Walk:
    """Where the walk of one writer's chain stands."""

    expected: int = 1
    """The place the next record must have."""
    link: str | None = GENESIS
    """The hash the next record's ``prev`` must be; None when it cannot be known."""
    recent: dict[int, str] = field(default_factory=dict)
    """The hashes at the places walked last: a line that repeats one is a copy."""


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
        late = await self._late_checkpoints(checkpoints, {seq for seq, _ in seen})
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
        walk = _Walk()
        pending = list(listed)
        loaded: dict[int, asyncio.Task[list[bytes] | AuditProblem]] = {}
        try:
            while pending:
                for first, ref in pending[:READ_AHEAD]:
                    if first not in loaded:
                        loaded[first] = asyncio.ensure_future(self._block(writer, first, ref))
                first, _ = pending[0]
                if first > walk.expected:
                    ref = await self._store.stat(keys.audit_block_key(writer, walk.expected))
                    if ref is not None:  # stored after the listing passed its place
                        pending.insert(0, (walk.expected, ref))
                        continue
                    reason = f"block {first} follows record {walk.expected - 1}"
                    problem(_removed(writer, walk.expected, first - 1, reason))
                    walk.link = None
                pending.pop(0)
                block = await loaded.pop(first)
                if isinstance(block, AuditProblem):  # its extent is unknown: up to the next
                    problem(block)
                    yield _Item(first, None, None, None, block, whole_block=True)
                    walk.link = None
                    walk.expected = pending[0][0] if pending else first + 1
                elif first < walk.expected:
                    inserted = _inserted(
                        writer,
                        first,
                        f"block {first} of writer {writer} holds places {first} to "
                        f"{walk.expected - 1} again",
                    )
                    problem(inserted)
                    for index, line in enumerate(block):
                        item = _item(writer, first + index, line, AuditRecord)
                        yield _Item(item.seq, item.model, item.body, item.link, inserted)
                else:
                    for item in self._lines(writer, first, block, walk, links):
                        if item.problem is not None and links:
                            problem(item.problem)
                        yield item
        finally:
            for task in loaded.values():
                task.cancel()

    def _lines(
        self, writer: str, first: int, block: list[bytes], walk: _Walk, links: bool
    ) -> Iterator[_Item]:
        """The records of a block that starts where the walk stands, each with its problem.
        A copy of a record walked already takes no place: the records after it keep theirs."""
        copies = 0
        for index, line in enumerate(block):
            place = first + index - copies
            item = _item(writer, place, line, AuditRecord)
            problem = item.problem or self._hash_problem(item, writer)
            model = item.model
            if (
                problem is None
                and isinstance(model, AuditRecord)
                and model.writer == writer
                and model.seq < place
                and walk.recent.get(model.seq) == model.hash
            ):
                copies += 1
                after = f"record {place - 1}" if place > 1 else "the start"
                message = f"a copy of record {model.seq} of writer {writer} follows {after}"
                yield _Item(place, model, item.body, item.link, _inserted(writer, place, message))
                continue
            if problem is None and links:
                problem = self._place_problem(item, walk.link, writer)
            yield _Item(place, model, item.body, item.link, problem)
            walk.link = item.link if model is not None else None
            walk.expected = place + 1
            if isinstance(model, AuditRecord) and model.seq == place:
                walk.recent[place] = model.hash
                walk.recent.pop(place - MAX_BLOCK_RECORDS, None)

    async def _block(self, writer: str, first: int, ref: ArtifactRef) -> list[bytes] | AuditProblem:
        """The lines of a block, or why it cannot be read."""
        data = await self._fetch(writer, first, ref, MAX_BLOCK_BYTES)
        if isinstance(data, AuditProblem):
            return data
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        what = f"block {first} of writer {writer}"
        if not lines:
            return _unreadable(writer, first, "the block is empty", what=what)
        if len(lines) > MAX_BLOCK_RECORDS:
            reason = f"it holds {len(lines)} lines, over {MAX_BLOCK_RECORDS}"
            return _unreadable(writer, first, reason, what=what)
        return lines

    # -- checks ---------------------------------------------------------------------------------

    def _problem(self, item: _Item, link: str | None) -> AuditProblem | None:
        """What is wrong with a readable checkpoint: its hash, place or link."""
        return self._hash_problem(item, CHECKPOINTS) or self._place_problem(item, link, CHECKPOINTS)

    def _place_problem(self, item: _Item, link: str | None, chain: str) -> AuditProblem | None:
        """What is wrong with where a readable record or checkpoint is: its place, its chain,
        or the hash before it (`link`; None: unknown)."""
        model = item.model
        assert model is not None
        what = _what(chain, item.seq)
        if isinstance(model, AuditRecord) and model.writer != chain:
            return AuditProblem(
                "reordered",
                chain,
                item.seq,
                f"{what} is record {model.seq} of writer {model.writer}: moved between chains",
            )
        if model.seq != item.seq:
            return AuditProblem(
                "reordered", chain, item.seq, f"{what} holds {_what(chain, model.seq)}: moved"
            )
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
    writer: str, named_by: list[tuple[int, Checkpoint]], state: _ChainState | None
) -> list[AuditProblem]:
    """Whether the records the checkpoints `named_by` name are still in `writer`'s chain:
    one problem for the newest gone, one for the first that is not the record named."""
    seq, newest = max(named_by, key=lambda named: named[1].record)
    reason = f"checkpoint {seq} names record {newest.record}"
    if state is None:
        return [_removed(writer, 1, newest.record, f"the whole chain is gone: {reason}")]
    found: list[AuditProblem] = []
    if state.last < newest.record and not state.open_end:
        found.append(_removed(writer, state.last + 1, newest.record, f"rolled back: {reason}"))
    for seq, checkpoint in sorted(named_by, key=lambda named: named[1].record):
        digest = state.hashes.get(checkpoint.record)
        if digest is not None and not hmac.compare_digest(digest, checkpoint.head):
            message = (
                f"{_what(writer, checkpoint.record)} is not the record checkpoint {seq} "
                "names: the chain was replaced from there"
            )
            found.append(AuditProblem("edited", writer, checkpoint.record, message))
            break
    return found


def _against_checkpoints(
    named: dict[tuple[int, str], tuple[str, int]],
    checkpoints: dict[int, tuple[Checkpoint | None, bool]],
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
        found.append(_removed(CHECKPOINTS, end + 1, beyond[0], reason))
    return found


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


def _inserted(chain: str, seq: int, message: str) -> AuditProblem:
    return AuditProblem("inserted", chain, seq, f"{message}: inserted")


def _removed(chain: str, first: int, last: int, reason: str) -> AuditProblem:
    if chain == CHECKPOINTS:
        what = f"checkpoint {first} was" if first == last else f"checkpoints {first} to {last} were"
    else:
        span = f"record {first}" if first == last else f"records {first} to {last}"
        what = f"{span} of writer {chain} {'was' if first == last else 'were'}"
    return AuditProblem("removed", chain, first, f"{what} removed: {reason}")
