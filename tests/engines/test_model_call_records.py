"""A model call stores the records it carries (the loop's messages, the reads riding with it)
while the model answers, and returns only once every one is on disk; a record that cannot be
stored fails the call (the engines retry it), and a read of another run or of a later seq is
refused before anything is stored.
"""

from __future__ import annotations

import asyncio
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
from skillweave.errors import AgentError, StorageError
from skillweave.llm.messages import Message, ModelRequest, ModelResponse
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, sample_library

GUIDE = "# Guide\nCounting is easy.\n"


class _HeldStore(LocalArtifactStore):
    """A local store whose writes of transcript records wait until `release` is set."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.release = asyncio.Event()
        self.held: list[str] = []
        self.fail = False

    async def append_record(self, log: str, seq: int, data: bytes) -> None:
        if seq != 3:  # the reply's is not held
            self.held.append(f"{log}#{seq}")
            await self.release.wait()
            if self.fail:
                raise StorageError("the disk is full", key=log)
        await super().append_record(log, seq, data)


class _Seeing:
    """A model that answers at once and keeps what it was shown."""

    name = "scripted"

    def __init__(self) -> None:
        self.shown: list[ModelRequest] = []
        self._inner = ScriptedProvider.from_yaml("turns:\n  - say: first\n  - say: seen\n")

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.shown.append(request)
        return await self._inner.complete(request)

    async def aclose(self) -> None:
        return None


async def _services(tmp_path: Path) -> tuple[AgentServices, _HeldStore, _Seeing, str]:
    registry = sample_library(tmp_path / "skills")
    store = _HeldStore(tmp_path / "store")
    model = _Seeing()
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


async def test_the_records_are_stored_while_the_model_answers_and_on_disk_at_the_end(
    tmp_path: Path,
) -> None:
    services, store, model, version = await _services(tmp_path)
    calling = asyncio.create_task(services.invoke_model(_call(version)))

    async def shown() -> None:
        while not model.shown:
            await asyncio.sleep(0.01)

    # The model was shown every record (the read's text too) while none was on disk yet...
    await asyncio.wait_for(shown(), timeout=10)
    assert [m.text for m in model.shown[0].messages] == ["Count.", "Reading.", GUIDE]
    assert len(store.held) == 3
    # ...and the call did not return before they were.
    await asyncio.sleep(0.2)
    assert not calling.done()
    store.release.set()
    turn = await asyncio.wait_for(calling, timeout=10)

    assert turn.message.text == "seen"
    (read,) = turn.reads
    assert (read.seq, read.chars, read.is_error) == (2, len(GUIDE), False)
    for seq in range(4):
        assert await read_transcript_record(store, "r", seq) is not None, seq


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
