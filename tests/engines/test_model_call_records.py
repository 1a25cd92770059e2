"""A model call shows the model the records it carries (the loop's messages, the reads riding
with it) from memory, then stores them with the reply in one append, and returns only once
every one is on disk; when the model fails they are stored all the same; a record that cannot
be stored fails the call (the engines retry it), and a read of another run or of a later seq
is refused before anything is stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from skillweave.agent.effect_models import (
    InvokeModelInput,
    ReadResourceInput,
    TranscriptView,
    TranscriptWrite,
)
from skillweave.config import Settings
from skillweave.engines import AgentServices, read_transcript_record
from skillweave.errors import AgentError, ModelError, StorageError
from skillweave.llm.messages import Message, ModelRequest, ModelResponse
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library

GUIDE = "# Guide\nCounting is easy.\n"


class _HeldStore(LocalArtifactStore):
    """A local store whose appends of transcript records wait until `release` is set, each
    append's seqs kept in `held`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.release = asyncio.Event()
        self.held: list[list[int]] = []
        self.fail = False

    async def append_records(self, log: str, records: Sequence[tuple[int, bytes]]) -> None:
        self.held.append([seq for seq, _ in records])
        await self.release.wait()
        if self.fail:
            raise StorageError("the disk is full", key=log)
        await super().append_records(log, records)


class _Seeing:
    """A model that answers at once (or fails, when `fail` is set) and keeps what it was
    shown, and how many appends the store had seen by then."""

    name = "scripted"

    def __init__(self) -> None:
        self.shown: list[ModelRequest] = []
        self.store: _HeldStore | None = None
        self.appends_seen: list[int] = []
        self.fail = False
        self._inner = ScriptedProvider.from_yaml("turns:\n  - say: first\n  - say: seen\n")

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.shown.append(request)
        assert self.store is not None
        self.appends_seen.append(len(self.store.held))
        if self.fail:
            raise ModelError("the model is down")
        return await self._inner.complete(request)

    async def aclose(self) -> None:
        return None


async def _services(tmp_path: Path) -> tuple[AgentServices, _HeldStore, _Seeing, str]:
    registry = sample_library(tmp_path / "skills")
    store = _HeldStore(tmp_path / "store")
    model = _Seeing()
    model.store = store
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=registry,
        store=store,
        provider=model,  # type: ignore[arg-type]
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    version = registry.get("profiler").version
    return services, store, model, version


def _call(version: str, *, run_id: str = "r", read_seq: int = 2) -> InvokeModelInput:
    return InvokeModelInput(
        run_id="r",
        system="Be brief.",
        tools=(),
        view=TranscriptView(upto=3),
        writes=(
            TranscriptWrite(seq=0, message=Message(role="user", text="Count.")),
            TranscriptWrite(seq=1, message=Message(role="assistant", text="Reading.")),
        ),
        reply_seq=3,
        reads=(
            ReadResourceInput(
                run_id=run_id,
                skill="profiler",
                version=version,
                path="references/guide.md",
                seq=read_seq,
                tool_call_id="c1",
            ),
        ),
    )


async def test_the_records_are_shown_from_memory_then_stored_with_the_reply_in_one_append(
    tmp_path: Path,
) -> None:
    services, store, model, version = await _services(tmp_path)
    calling = asyncio.create_task(services.invoke_model(_call(version)))

    async def appended() -> None:
        while not store.held:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(appended(), timeout=10)
    # The model was shown every record (the read's text too) before any was stored...
    assert [m.text for m in model.shown[0].messages] == ["Count.", "Reading.", GUIDE]
    assert model.appends_seen == [0]
    # ...then all four, the reply's too, went in one append...
    assert store.held == [[0, 1, 2, 3]]
    # ...and the call did not return before it was on disk.
    await asyncio.sleep(0.2)
    assert not calling.done()
    store.release.set()
    turn = await asyncio.wait_for(calling, timeout=10)

    assert turn.message.text == "seen"
    (read,) = turn.reads
    assert (read.seq, read.chars, read.is_error) == (2, len(GUIDE), False)
    for seq in range(4):
        assert await read_transcript_record(store, "r", seq) is not None, seq
    assert store.held == [[0, 1, 2, 3]]


async def test_when_the_model_fails_the_pending_records_are_stored_all_the_same(
    tmp_path: Path,
) -> None:
    services, store, model, version = await _services(tmp_path)
    model.fail = True
    store.release.set()
    with pytest.raises(ModelError, match="the model is down"):
        await services.invoke_model(_call(version))
    assert store.held == [[0, 1, 2]]
    for seq in range(3):
        assert await read_transcript_record(store, "r", seq) is not None, seq
    assert await read_transcript_record(store, "r", 3) is None


async def test_a_record_that_cannot_be_stored_fails_the_call(tmp_path: Path) -> None:
    services, store, _, version = await _services(tmp_path)
    store.fail = True
    store.release.set()
    with pytest.raises(StorageError, match="the disk is full"):
        await services.invoke_model(_call(version))


@pytest.mark.parametrize(("run_id", "read_seq"), [("other", 2), ("r", 3), ("r", 7)])
async def test_a_read_of_another_run_or_a_later_seq_is_refused_before_anything_is_stored(
    tmp_path: Path, run_id: str, read_seq: int
) -> None:
    services, store, model, version = await _services(tmp_path)
    store.release.set()
    with pytest.raises(AgentError, match="cannot do a read"):
        await services.invoke_model(_call(version, run_id=run_id, read_seq=read_seq))
    assert store.held == []
    assert model.shown == []
