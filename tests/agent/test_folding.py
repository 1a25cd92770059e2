"""Transcript folding and the compaction boundary: the state stays small, the model's view right.

``AgentState`` keeps only a window of transcript entries (older settled ones are folded into
counters) and one compaction boundary, ``elide_before``; a model call rebuilds what it shows
from the store with the rule "an elidable output below ``elide_before`` is elided". These tests
check that the rule and the state never disagree: first on random sequences of entries,
compactions and folds (pure, with hypothesis), then on a long run through the direct engine,
where every model call is compared with the stored transcript.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from hypothesis import given, settings, target
from hypothesis import strategies as st

from skillweave.agent import AgentSpec, Budgets, compact
from skillweave.agent.state import (
    COMPACTABLE,
    FOLD_AT,
    AgentState,
    EntryKind,
    TranscriptEntry,
    elidable,
)
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.llm.messages import Message, ModelRequest, ModelResponse
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, RecordingProvider, sample_library
from tests.transcripts import stored_records

KINDS: tuple[EntryKind, ...] = (
    "task",
    "user",
    "assistant",
    "skill",
    "resource",
    "script",
    "tool",
    "note",
)
_ROLES: dict[str, Literal["user", "assistant", "tool"]] = {
    "task": "user",
    "user": "user",
    "assistant": "assistant",
}

# --- (a) the rule holds after any sequence of appends, compactions and folds ----------------

_entry = st.tuples(
    st.sampled_from(KINDS),
    st.integers(min_value=0, max_value=4_000),  # chars
    st.integers(min_value=0, max_value=300),  # summary length
)
# A turn's worth of entries at a time, so that windows pass FOLD_AT and folding happens.
_append = st.tuples(st.just("append"), st.lists(_entry, min_size=1, max_size=12))
_compact = st.tuples(
    st.just("compact"),
    st.integers(min_value=1_000, max_value=30_000),  # transcript_chars budget
    st.integers(min_value=0, max_value=4),  # keep_recent_outputs
)
_fold = st.tuples(st.just("fold"))
_ops = st.lists(st.one_of(_append, _compact, _fold), min_size=12, max_size=40)


def _seen_chars(entry: TranscriptEntry, elide_before: int) -> int:
    """What a model call carries for `entry`, by the rule the runtime rebuilds views with."""
    if elidable(entry) and entry.seq < elide_before:
        return len(entry.summary)
    return entry.chars


@settings(max_examples=100, deadline=None)
@given(_ops)
def test_the_elided_set_is_exactly_the_elidable_entries_below_the_boundary(
    ops: list[tuple[Any, ...]],
) -> None:
    state = AgentState(run_id="prop", task="t")
    ever: dict[int, TranscriptEntry] = {}  # every entry, as last seen (folded ones stay)
    for op in ops:
        match op:
            case ("append", entries):
                for kind, chars, summary_length in entries:
                    state.transcript.append(
                        TranscriptEntry(
                            seq=state.next_seq,
                            role=_ROLES.get(kind, "tool"),
                            kind=kind,
                            chars=chars,
                            summary="s" * summary_length,
                        )
                    )
            case ("compact", budget, keep):
                state.budgets = Budgets(transcript_chars=budget, keep_recent_outputs=keep)
                compact(state)
                window = state.transcript
                if state.visible_chars() > budget:
                    # Over budget only when nothing more may go: every output still shown
                    # in full is kept (one of the latest `keep`) or would not get shorter.
                    pending = [e for e in window if e.kind in COMPACTABLE]
                    pending = [e for e in pending if not e.elided]
                    movable = pending[:-keep] if keep else pending
                    assert not any(elidable(e) for e in movable)
            case ("fold",):
                before = (state.visible_chars(), state.next_seq)
                window = list(state.transcript)
                folded = state.fold()
                assert (state.visible_chars(), state.next_seq) == before
                assert state.transcript == window[folded:]
                if len(window) <= FOLD_AT:
                    assert folded == 0
                else:
                    assert len(state.transcript) >= FOLD_AT // 2
                # The latest outputs compaction must keep stay in the window.
                keep = state.budgets.keep_recent_outputs
                outputs = [e for e in window if e.kind in COMPACTABLE and not e.elided]
                if keep:
                    assert all(e in state.transcript for e in outputs[-keep:])
        for entry in state.transcript:
            ever[entry.seq] = entry
        assert state.folded + len(state.transcript) == len(ever) == state.next_seq
        assert [e.seq for e in state.transcript] == list(range(state.folded, state.next_seq))
        # The window's flags follow the rule; folded entries have no flags, only the rule
        # (checked through the visible size below, which counts them by it).
        window_elided = {e.seq for e in state.transcript if e.elided}
        assert window_elided == {
            e.seq for e in state.transcript if elidable(e) and e.seq < state.elide_before
        }
        assert state.visible_chars() == sum(
            _seen_chars(e, state.elide_before) for e in ever.values()
        )
    target(float(state.folded), label="entries folded")  # steer towards long, folding runs


def test_folding_keeps_recent_outputs_and_compaction_elides_the_folded_ones_first() -> None:
    state = AgentState(run_id="fold", task="t", budgets=Budgets(keep_recent_outputs=1))
    for seq in range(FOLD_AT):
        kind = "resource" if seq == 3 else "user"
        state.transcript.append(
            TranscriptEntry(
                seq=seq,
                role="tool" if kind == "resource" else "user",
                kind=kind,
                chars=500,
                summary="x" if kind == "resource" else "",
            )
        )
    assert state.fold() == 0  # a window of FOLD_AT entries is kept whole
    latest = TranscriptEntry(seq=FOLD_AT, role="tool", kind="resource", chars=500, summary="y")
    state.transcript.append(latest)
    before = state.visible_chars()

    folded = state.fold()
    assert folded == FOLD_AT + 1 - FOLD_AT // 2
    assert latest in state.transcript  # the latest output stays where compaction keeps it
    assert (state.pending_outputs, state.pending_last_seq) == (1, 3)
    assert state.visible_chars() == before

    # Over budget: the folded output (seq 3) goes first, as the oldest; the latest is kept.
    state.budgets = Budgets(transcript_chars=before - 10, keep_recent_outputs=1)
    assert compact(state) == 1
    assert state.elide_before == 4
    assert state.visible_chars() == before - 499
    assert state.pending_outputs == 0
    assert not state.transcript[-1].elided


# --- (b) a long run: bounded state, and every model call sees the rule's view ---------------

TURNS = 150
PAGE = "a line of the notes page, long enough to be worth eliding\n" * 40  # 2,320 characters


class _Snapshots(RecordingProvider):
    """Records, on every model call, the run's live state as the call sees it."""

    def __init__(self, inner: ScriptedProvider) -> None:
        super().__init__(inner)
        self.engine: DirectEngine | None = None
        self.run_id = ""
        self.states: list[AgentState] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        assert self.engine is not None
        self.states.append(self.engine.state(self.run_id).model_copy(deep=True))
        return await super().complete(request)


def _size(message: Message) -> int:
    """The characters the loop counts for a message (its transcript entry's ``chars``)."""
    return len(message.text) + sum(
        len(call.name) + len(json.dumps(call.arguments)) for call in message.tool_calls
    )


async def test_a_long_run_keeps_its_state_bounded_and_every_view_follows_the_rule(
    tmp_path: Path,
) -> None:
    sample_library(tmp_path / "skills")
    (tmp_path / "skills" / "notes" / "page.md").write_text(PAGE)
    registry = sample_library(tmp_path / "skills")
    reads = "\n".join(
        "  - tool_calls: [{name: read_skill_resource, arguments: {skill: notes, path: page.md}}]"
        for _ in range(TURNS - 2)
    )
    script = (
        "turns:\n"
        "  - tool_calls: [{name: activate_skill, arguments: {name: notes}}]\n"
        f"{reads}\n"
        "  - say: all read\n"
    )
    store = LocalArtifactStore(tmp_path / "store")
    provider = _Snapshots(ScriptedProvider.from_yaml(script))
    engine = DirectEngine(
        AgentServices(
            settings=Settings(_env_file=None),
            registry=registry,
            store=store,
            provider=provider,
            model="scripted",
            sandbox=FakeSandbox(store),  # type: ignore[arg-type]
        )
    )
    provider.engine, provider.run_id = engine, "long-fold"
    limits = Budgets(max_turns=TURNS, max_tokens=10**9, transcript_chars=1_000)
    await engine.start(
        RunRequest(run_id="long-fold", task="Read it all.", agent=AgentSpec(limits=limits))
    )
    result = await engine.result("long-fold")

    assert result.status == "completed", result.reason
    assert result.turns == TURNS
    states = provider.states
    assert len(states) == TURNS

    # Bounded: the window never holds much more than FOLD_AT entries (it cycles from a fold
    # down to the next), and the serialized state at the late peaks is the size of the first
    # peak, within 5 % (sequence numbers gain a digit, the window holds one more read).
    assert max(len(s.transcript) for s in states) <= FOLD_AT + 3
    assert states[-1].folded > 2 * TURNS - 2 * FOLD_AT
    sizes = [len(s.model_dump_json()) for s in states]
    first_peak = max(sizes[: FOLD_AT // 2 + 2])
    assert max(sizes[TURNS // 2 :]) <= 1.05 * first_peak
    final = engine.state("long-fold")
    assert PAGE[:200] not in final.model_dump_json()

    # Every call: what the model received is the stored transcript under the elision rule,
    # and it is exactly as long as the state says (visible_chars).
    records = list(stored_records(LocalArtifactStore(tmp_path / "store"), "long-fold").values())
    entries: dict[int, TranscriptEntry] = {}
    for call, (state, request) in enumerate(zip(states, provider.requests, strict=True), 1):
        for entry in state.transcript:
            entries[entry.seq] = entry
        assert len(request.messages) == state.next_seq, call
        assert sum(_size(m) for m in request.messages) == state.visible_chars(), call
    last_state, last = states[-1], provider.requests[-1]
    elided = 0
    for seq, message in enumerate(last.messages):
        record, entry = records[seq], entries[seq]
        assert message.role == record["message"]["role"]
        if elidable(entry) and seq < last_state.elide_before:
            elided += 1
            assert message.text == record["summary"], seq
        else:
            assert message.text == record["message"]["text"], seq
    # Nearly every read was elided, the latest ones were not, and the skill's content was kept.
    assert elided >= TURNS - 2 - 3
    assert [m.text == PAGE for m in last.messages[-5::2]] == [False, True, True]
    assert any("Take notes." in m.text for m in last.messages)
