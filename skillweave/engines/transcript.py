"""`TranscriptRecorder`: a run's transcript in the artifact store, one record per message.

A record is the message, and for a tool output the summary that replaces it once compacted.
Where the store keeps record logs (``RecordLogStore``: the local store), a run's records are
appended to its one log (``runs/{run}/transcript``): no file is created a record. Elsewhere
(S3) each is an object at its own key (``runs/{run}/transcript/{seq:08d}.json``); a record
missing from the log is looked for there too (a run an earlier release wrote). Every side
effect that produces a message writes it here (``AgentServices``' collaborators and
``SkillAuthoring``: a tool result through :meth:`TranscriptRecorder.tool_result`), and a model
call reads the records it needs back through a bounded cache of immutable entries, so neither
the loop's state nor a workflow's history carries transcript text.

Durability: a record is on disk before the call that stores it returns (the Temporal engine's
activities hand the workflow only its ref, so it must outlive any crash once they return),
except for the runs registered with :meth:`TranscriptRecorder.write_behind` (the direct
engine's: such a run lives in its process and dies with it). Their records are published at
once, as every record is (every reader sees them; a crash of the process loses none), made
durable by a background thread while the run goes on, and all of them before
:meth:`TranscriptRecorder.settle` returns, which the run awaits before it tells its end. So a
crash of the machine loses no record of a run that was told finished; mid-run it loses the run
(as it always did: the next API marks it failed) and at most its last moments' records.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

from pydantic import BaseModel, ConfigDict

from skillweave.agent import SUMMARY_MAX_CHARS, TranscriptWrite
from skillweave.errors import ArtifactNotFoundError
from skillweave.llm import Message
from skillweave.storage import (
    ArtifactStore,
    RecordLogStore,
    WriteBehind,
    deferred_durability,
    keys,
)

__all__ = [
    "CACHE_BYTES",
    "ToolCall",
    "TranscriptRecord",
    "TranscriptRecorder",
    "clip",
    "read_transcript_record",
    "tool_record",
]

CACHE_BYTES: Final = 64 * 1024 * 1024
"""The records a recorder keeps in memory by default (encoded size)."""


def clip(text: str, limit: int = SUMMARY_MAX_CHARS) -> str:
    """`text` cut to `limit` characters, an ellipsis saying so (a tool result's summary)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ToolCall(Protocol):
    """The request of a tool the model called: where its result goes in which transcript."""

    @property
    def run_id(self) -> str: ...

    @property
    def seq(self) -> int: ...

    @property
    def tool_call_id(self) -> str: ...


class TranscriptRecord(BaseModel):
    """One stored transcript entry: the message, and for a tool output its summary."""

    model_config = ConfigDict(frozen=True)

    message: Message
    summary: str = ""

    def seen(self, *, elided: bool) -> Message:
        """The message as a model call sees it: the summary instead when elided and shorter."""
        if elided and self.summary and len(self.summary) < len(self.message.text):
            return self.message.model_copy(update={"text": self.summary})
        return self.message


_Where = tuple[str, int]
"""A record's run and sequence number: its cache key (cheaper to make than its store key, on
every model call's read of the transcript)."""


class _TranscriptCache:
    """Immutable transcript records by where they are, least recently used dropped beyond a
    byte budget."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._bytes = 0
        self._items: OrderedDict[_Where, tuple[TranscriptRecord, int]] = OrderedDict()

    def get(self, key: _Where) -> TranscriptRecord | None:
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key: _Where, record: TranscriptRecord, size: int) -> None:
        """Keep `record` at `key`, in place of what was there (a step run again stores its
        record again: the newest is the one the run goes on with)."""
        replaced = self._items.pop(key, None)
        if replaced is not None:
            self._bytes -= replaced[1]
        self._items[key] = (record, size)
        self._bytes += size
        while self._bytes > self._budget and len(self._items) > 1:
            _, (_, dropped) = self._items.popitem(last=False)
            self._bytes -= dropped


class TranscriptRecorder:
    """Writes and reads the transcripts of the runs of one store.

    Args:
        store: where the records live.
        cache_bytes: how much of them to keep in memory (the encoded records).
    """

    def __init__(self, store: ArtifactStore, *, cache_bytes: int = CACHE_BYTES) -> None:
        self._store = store
        self._logs = store if isinstance(store, RecordLogStore) else None
        self._cache = _TranscriptCache(cache_bytes)
        self._behind: dict[str, WriteBehind] = {}

    def write_behind(self, run_id: str) -> None:
        """Store `run_id`'s records without waiting for the disk, until :meth:`settle`."""
        self._behind.setdefault(run_id, WriteBehind())

    async def settle(self, run_id: str) -> None:
        """Until every record of `run_id` is on disk; then its records wait for the disk
        again (nothing to do for a run not registered with :meth:`write_behind`).

        Raises:
            StorageError: one could not be made durable.
        """
        behind = self._behind.pop(run_id, None)
        if behind is not None:
            await behind.flush()

    async def store_message(
        self, run_id: str, seq: int, message: Message, *, summary: str = ""
    ) -> int:
        """Store `message` at `seq` of `run_id`'s transcript; its length in characters."""
        return await self.store(run_id, seq, TranscriptRecord(message=message, summary=summary))

    async def store(self, run_id: str, seq: int, record: TranscriptRecord) -> int:
        """Store `record` at `seq` of `run_id`'s transcript; its message's length in characters."""
        await self.store_all(run_id, {seq: record})
        return len(record.message.text)

    async def store_all(self, run_id: str, records: Mapping[int, TranscriptRecord]) -> None:
        """Store `records` (by seq) in `run_id`'s transcript, all on disk when this returns:
        one append (one write, one flush) where the store keeps record logs, else an object
        each, written together."""
        if not records:
            return
        encoded = {seq: record.model_dump_json().encode() for seq, record in records.items()}
        with deferred_durability(self._behind.get(run_id)):
            if self._logs is not None:
                await self._logs.append_records(
                    keys.transcript_log(run_id),
                    [(keys.transcript_seq(seq), data) for seq, data in encoded.items()],
                )
            else:
                await asyncio.gather(
                    *(
                        self._store.put_bytes(
                            keys.transcript_key(run_id, seq), data, content_type="application/json"
                        )
                        for seq, data in encoded.items()
                    )
                )
        for seq, record in records.items():
            self._cache.put((run_id, seq), record, len(encoded[seq]))

    async def load(self, run_id: str, seq: int) -> TranscriptRecord:
        """The record at `seq` of `run_id`'s transcript.

        Raises:
            ArtifactNotFoundError: there is none.
        """
        cached = self._cache.get((run_id, seq))
        if cached is not None:
            return cached
        data = await read_transcript_record(self._store, run_id, seq)
        if data is None:
            raise ArtifactNotFoundError(keys.transcript_key(run_id, seq))
        record = TranscriptRecord.model_validate_json(data)
        self._cache.put((run_id, seq), record, len(data))
        return record

    async def record(self, writes: Sequence[TranscriptWrite], *, run_id: str) -> None:
        """Store messages the loop made itself (in one append)."""
        await self.store_all(
            run_id, {write.seq: TranscriptRecord(message=write.message) for write in writes}
        )

    async def tool_result(
        self, call: ToolCall, *, tool: str, text: str, summary: str, error: bool = False
    ) -> int:
        """Store the result of `call` (a call of `tool`) where the run expects it: `text`, and
        the `summary` that replaces it once compacted; its length in characters."""
        record = tool_record(call, tool=tool, text=text, summary=summary, error=error)
        return await self.store(call.run_id, call.seq, record)


async def read_transcript_record(store: ArtifactStore, run_id: str, seq: int) -> bytes | None:
    """The stored bytes of record `seq` of `run_id`'s transcript, verified: from the run's log
    where the store keeps record logs, else (or when the log has none: a run an earlier
    release wrote) from its object; None when there is none."""
    if isinstance(store, RecordLogStore):
        data = await store.read_record(keys.transcript_log(run_id), keys.transcript_seq(seq))
        if data is not None:
            return data
    ref = await store.stat(keys.transcript_key(run_id, seq))
    return None if ref is None else await store.get_bytes(ref)


def tool_record(
    call: ToolCall, *, tool: str, text: str, summary: str, error: bool = False
) -> TranscriptRecord:
    """The record of `call`'s result (a call of `tool`): `text`, and the `summary` that replaces
    it once compacted."""
    message = Message(
        role="tool", text=text, tool_call_id=call.tool_call_id, tool_name=tool, is_error=error
    )
    return TranscriptRecord(message=message, summary=summary)
