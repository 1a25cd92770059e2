"""The walk of the writers' chains: every stored record, chain by chain in place order, read
ahead a few blocks at a time, each record checked for its hash and (when asked) its place and
link; gaps looked at again before they count as removed, copies and blocks over filled places
found. Used by ``verify`` and ``read`` (:class:`~skillweave.storage.audit._reading.Reader`)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field

from skillweave.storage import keys
from skillweave.storage.audit._findings import AuditProblem, inserted, removed, stray, unreadable
from skillweave.storage.audit._inspection import READ_AHEAD, Inspector, Item, item_of
from skillweave.storage.audit._records import (
    GENESIS,
    MAX_BLOCK_BYTES,
    MAX_BLOCK_RECORDS,
    AuditRecord,
)
from skillweave.storage.base import ArtifactRef

__all__ = ["ChainWalk"]


@dataclass(slots=True)
class _Walk:
    """Where the walk of one writer's chain stands."""

    expected: int = 1
    """The place the next record must have."""
    link: str | None = GENESIS
    """The hash the next record's ``prev`` must be; None when it cannot be known."""
    recent: dict[int, str] = field(default_factory=dict)
    """The hashes at the places walked last: a line that repeats one is a copy."""


class ChainWalk:
    """Reads and checks every writer's chain through `inspector`."""

    def __init__(self, inspector: Inspector) -> None:
        self._inspector = inspector

    async def records(
        self, problem: Callable[[AuditProblem], None], *, links: bool = True
    ) -> AsyncIterator[tuple[str, Item]]:
        """Every stored record, chain by chain in place order; each item's `problem` is its
        own or its chain's (a gap or a broken link is reported to `problem`)."""
        blocks: dict[str, list[tuple[int, ArtifactRef]]] = defaultdict(list)
        for ref in await self._inspector.store.list(keys.AUDIT_CHAINS_PREFIX):
            place = keys.audit_block_place(ref.key)
            if place is None:
                problem(stray(ref.key))
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
    ) -> AsyncIterator[Item]:
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
                    key = keys.audit_block_key(writer, walk.expected)
                    ref = await self._inspector.store.stat(key)
                    if ref is not None:  # stored after the listing passed its place
                        pending.insert(0, (walk.expected, ref))
                        continue
                    reason = f"block {first} follows record {walk.expected - 1}"
                    problem(removed(writer, walk.expected, first - 1, reason))
                    walk.link = None
                pending.pop(0)
                block = await loaded.pop(first)
                if isinstance(block, AuditProblem):  # its extent is unknown: up to the next
                    problem(block)
                    yield Item(first, None, None, None, block, whole_block=True)
                    walk.link = None
                    walk.expected = pending[0][0] if pending else first + 1
                elif first < walk.expected:
                    copy = inserted(
                        writer,
                        first,
                        f"block {first} of writer {writer} holds places {first} to "
                        f"{walk.expected - 1} again",
                    )
                    problem(copy)
                    for index, line in enumerate(block):
                        item = item_of(writer, first + index, line, AuditRecord)
                        yield Item(item.seq, item.model, item.body, item.link, copy)
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
    ) -> Iterator[Item]:
        """The records of a block that starts where the walk stands, each with its problem.
        A copy of a record walked already takes no place: the records after it keep theirs."""
        copies = 0
        for index, line in enumerate(block):
            place = first + index - copies
            item = item_of(writer, place, line, AuditRecord)
            problem = item.problem or self._inspector.hash_problem(item, writer)
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
                yield Item(place, model, item.body, item.link, inserted(writer, place, message))
                continue
            if problem is None and links:
                problem = self._inspector.place_problem(item, walk.link, writer)
            yield Item(place, model, item.body, item.link, problem)
            walk.link = item.link if model is not None else None
            walk.expected = place + 1
            if isinstance(model, AuditRecord) and model.seq == place:
                walk.recent[place] = model.hash
                walk.recent.pop(place - MAX_BLOCK_RECORDS, None)

    async def _block(self, writer: str, first: int, ref: ArtifactRef) -> list[bytes] | AuditProblem:
        """The lines of a block, or why it cannot be read."""
        data = await self._inspector.fetch(writer, first, ref, MAX_BLOCK_BYTES)
        if isinstance(data, AuditProblem):
            return data
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        name = f"block {first} of writer {writer}"
        if not lines:
            return unreadable(writer, first, "the block is empty", name=name)
        if len(lines) > MAX_BLOCK_RECORDS:
            reason = f"it holds {len(lines)} lines, over {MAX_BLOCK_RECORDS}"
            return unreadable(writer, first, reason, name=name)
        return lines
