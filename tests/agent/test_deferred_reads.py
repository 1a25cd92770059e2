"""A resource read deferred to the next model call (issue 47): the loop answers
``read_skill_resource`` with an entry counted at the most the read can answer, the next
``invoke_model`` does the read before it reads the transcript back and answers its size, and
neither compaction nor folding passes the entry until then. A read that might push that model
call past the transcript budget is done at once instead (so compaction elides what it always
did), and a read still deferred when the run ends is done then. The Temporal side (the worker's
say, a rolling deploy) is ``tests/integration/temporal/test_reads_ride.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillweave.agent import AgentSpec, Budgets, compact
from skillweave.agent.effect_models import ReadResourceInput, ToolOutcome
from skillweave.agent.journal import Journal
from skillweave.agent.state import FOLD_AT, AgentState, TranscriptEntry
from skillweave.config import Settings
from skillweave.engines import (
    AgentServices,
    DirectEngine,
    RunRequest,
    RunResult,
    read_transcript_record,
)
from skillweave.llm.scripted import ScriptedProvider
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, RecordingProvider, sample_library

GUIDE = "# Guide\nCounting is easy.\n"  # toolkit/profiler/references/guide.md (the harness's)


def _read(seq: int, path: str = "references/guide.md") -> ReadResourceInput:
    return ReadResourceInput(
        run_id="r", skill="profiler", version="v" * 64, path=path, seq=seq, tool_call_id=f"c{seq}"
    )


def _outcome(seq: int, chars: int) -> ToolOutcome:
    return ToolOutcome(seq=seq, chars=chars, summary=f"[read {chars}]")


# --- the journal and the state ----------------------------------------------------------------


def test_a_deferred_read_counts_its_bound_until_its_model_call_answers_its_size() -> None:
    state = AgentState(run_id="r", task="t")
    journal = Journal(lambda: 0.0, None)
    state.transcript.append(TranscriptEntry(seq=0, role="user", kind="task", chars=10))
    journal.defer_read(state, _read(1), chars=5_000)
    journal.defer_read(state, _read(2), chars=5_000)

    assert state.next_seq == 3
    assert state.visible_chars() == 10_010
    assert [e.deferred for e in state.transcript] == [False, True, True]
    reads = journal.take_reads()
    assert [r.seq for r in reads] == [1, 2]
    assert journal.take_reads() == ()

    journal.settle_reads(state, reads, (_outcome(1, 26), _outcome(2, 40)))
    assert [(e.chars, e.summary, e.deferred) for e in state.transcript[1:]] == [
        (26, "[read 26]", False),
        (40, "[read 40]", False),
    ]
    assert state.visible_chars() == 76


def test_outcomes_that_are_not_the_reads_asked_for_stop_the_run() -> None:
    """A runtime that did not do the reads (a hole in the transcript) is not papered over."""
    state = AgentState(run_id="r", task="t")
    journal = Journal(lambda: 0.0, None)
    journal.defer_read(state, _read(0), chars=100)
    reads = journal.take_reads()
    with pytest.raises(RuntimeError, match=r"answered reads at seqs \[\], asked for \[0\]"):
        journal.settle_reads(state, reads, ())
    with pytest.raises(RuntimeError, match="expected 1"):
        journal.defer_read(state, _read(5), chars=100)


def test_folding_and_compaction_never_pass_a_deferred_read() -> None:
    budgets = Budgets(transcript_chars=1_000, keep_recent_outputs=0)
    state = AgentState(run_id="r", task="t", budgets=budgets)
    journal = Journal(lambda: 0.0, None)
    at = 20
    for seq in range(at):
        state.transcript.append(
            TranscriptEntry(seq=seq, role="tool", kind="tool", chars=500, summary="s")
        )
    journal.defer_read(state, _read(at), chars=100)
    for seq in range(at + 1, FOLD_AT + 20):
        state.transcript.append(
            TranscriptEntry(seq=seq, role="tool", kind="tool", chars=500, summary="s")
        )

    compact(state)
    # Everything before the deferred read was elided, nothing from it on.
    assert state.elide_before == at
    assert all(e.elided for e in state.transcript[:at])
    assert not any(e.elided for e in state.transcript[at:])
    assert len(state.transcript) - FOLD_AT // 2 > at  # the rule would fold past it
    assert state.fold() == at  # but folding stops at it
    assert state.transcript[0].deferred


# --- through the direct engine ---------------------------------------------------------------


async def _run(
    tmp_path: Path, script: str, *, budgets: Budgets | None = None, big: int = 0
) -> tuple[RunResult, RecordingProvider, list[Any], LocalArtifactStore]:
    """`script` on the direct engine over the harness's library (with a file of `big`
    characters beside the guide), the ``read_skill_resource`` calls made on their own kept."""
    registry = sample_library(tmp_path / "skills")
    if big:
        (tmp_path / "skills" / "toolkit" / "profiler" / "references" / "big.md").write_text(
            "x" * big
        )
        registry = sample_library(tmp_path / "skills")
    store = LocalArtifactStore(tmp_path / "store")
    provider = RecordingProvider(ScriptedProvider.from_yaml(script))
    services = AgentServices(
        settings=Settings(_env_file=None),
        registry=registry,
        store=store,
        provider=provider,
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    alone: list[Any] = []
    read_alone = services.read_skill_resource

    async def counted(request: ReadResourceInput) -> ToolOutcome:
        alone.append(request)
        return await read_alone(request)

    services.read_skill_resource = counted  # type: ignore[method-assign]
    engine = DirectEngine(services)
    agent = AgentSpec(limits=budgets) if budgets else AgentSpec()
    await engine.start(RunRequest(run_id="deferred", task="Read.", agent=agent))
    return await engine.result("deferred"), provider, alone, store


ACTIVATE = """
  - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
  - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
"""
GUIDE_READ = "{name: read_skill_resource, arguments: {skill: profiler, path: references/guide.md}}"


async def test_reads_ride_with_the_next_model_call_which_sees_them(tmp_path: Path) -> None:
    script = f"""
turns:{ACTIVATE}
  - tool_calls: [{GUIDE_READ}, {GUIDE_READ}]
  - say: read twice
    expect: {{tool_results: [{{not_error: true, contains: Counting is easy}}]}}
"""
    result, provider, alone, _ = await _run(tmp_path, script)

    assert result.status == "completed", result.reason
    assert alone == []  # no call of its own: the model call did them
    seen = provider.texts(4)
    assert seen.count(GUIDE) == 2


async def test_a_read_that_might_pass_the_budget_is_done_at_once(tmp_path: Path) -> None:
    """The skill holds a 6,000-character file: under a 5,000-character budget a read of it,
    counted at that, might push the next call past the budget, so it is read at once and
    compaction sees its real size, as it always did."""
    script = f"""
turns:{ACTIVATE}
  - tool_calls: [{GUIDE_READ}]
  - say: read
"""
    result, _, alone, _ = await _run(
        tmp_path, script, budgets=Budgets(transcript_chars=5_000), big=6_000
    )
    assert result.status == "completed", result.reason
    assert [r.path for r in alone] == ["references/guide.md"]

    # With room for the largest file, the same read rides.
    result, _, alone, _ = await _run(
        tmp_path / "roomy", script, budgets=Budgets(transcript_chars=50_000), big=6_000
    )
    assert result.status == "completed", result.reason
    assert alone == []


async def test_a_read_still_deferred_when_the_run_ends_is_done_then(tmp_path: Path) -> None:
    """The turn budget runs out right after a read: no model call comes to do it, so the
    run does it as it ends, and the transcript has no hole."""
    script = f"""
turns:{ACTIVATE}
  - tool_calls: [{GUIDE_READ}]
"""
    result, _, alone, store = await _run(tmp_path, script, budgets=Budgets(max_turns=3))

    assert result.status == "budget_exhausted", result.reason
    (read,) = alone
    stored = await read_transcript_record(store, "deferred", read.seq)
    assert stored is not None
    assert json.loads(stored)["message"]["text"] == GUIDE
