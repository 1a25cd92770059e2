"""A finished run's evidence read back from the store: its answer, its transcript as text, the
scripts it ran and its output files, every read capped against a hostile run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillweave.agent.idempotency import execution_key
from skillweave.engines import RunResult
from skillweave.engines.transcript import TranscriptRecorder
from skillweave.evals import evidence as evidence_module
from skillweave.evals.evidence import MAX_OUTPUT_BYTES, gather_evidence
from skillweave.llm import Message
from skillweave.llm.messages import ToolCall
from skillweave.sandbox.models import ExecutionResult
from skillweave.storage import ArtifactRef, keys
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import run_agent

SCRIPT = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
  - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: profiler, script: scripts/count.py, args: [inputs/a.txt],
                    inputs: ["{{artifact:a.txt}}"]}
  - tool_calls:
      - name: run_skill_script
        arguments: {skill: profiler, script: scripts/missing.py}
  - say: "The file has 3 words."
"""


async def test_a_real_run_leaves_its_answer_transcript_scripts_and_outputs(
    tmp_path: Path,
) -> None:
    run = await run_agent(
        tmp_path, SCRIPT, task="Count the words of a.txt", inputs={"a.txt": b"one two three"}
    )
    assert run.result.status == "completed"

    seen = await gather_evidence(run.store, run.result)

    assert seen.answer == "The file has 3 words."
    assert seen.transcript.startswith("[user]\nCount the words of a.txt")
    assert '→ calls run_skill_script {"args": ["inputs/a.txt"]' in seen.transcript
    assert "[tool result: run_skill_script]\nstatus: succeeded (exit code 0" in seen.transcript
    assert "words: 3" in seen.transcript
    # the script that is not in the skill was refused: it did not run
    assert [run.line() for run in seen.scripts] == ["profiler/scripts/count.py (succeeded, exit 0)"]
    [count] = seen.outputs
    assert (count.name, count.text, count.complete) == ("count.txt", "3", True)
    assert seen.output("outputs/count.txt") is count
    assert seen.notes == ()


async def record(store: LocalArtifactStore, run_id: str, *messages: Message) -> RunResult:
    recorder = TranscriptRecorder(store)
    for seq, message in enumerate(messages):
        await recorder.store_message(run_id, seq, message)
    return RunResult(run_id=run_id, status="completed", transcript_entries=len(messages))


async def test_an_executable_tools_script_is_named_by_its_stored_execution(
    tmp_path: Path,
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    calls = (
        ToolCall(id="c1", name="convert_units", arguments={"value": 5}),
        ToolCall(id="c2", name="read_skill_resource", arguments={"path": "x.md"}),
        ToolCall(id="c3", name="shout", arguments={}),
    )
    result = await record(
        store,
        "r1",
        Message(role="user", text="Convert 5 km"),
        Message(role="assistant", tool_calls=calls),
        Message(
            role="tool",
            text="status: failed (exit code 2, 3 ms)\n",
            tool_call_id="c1",
            tool_name="convert_units",
            is_error=True,
        ),
        Message(
            role="tool",
            text="status: succeeded (exit code 0, 1 ms)\n(a reference file that reads so)",
            tool_call_id="c2",
            tool_name="read_skill_resource",
        ),
        Message(
            role="tool",
            text="status: succeeded (exit code 0, 1 ms)\n",
            tool_call_id="c3",
            tool_name="shout",
        ),
    )
    stored = ExecutionResult(
        execution_id=execution_key("r1", 2),
        run_id="r1",
        skill="unit-converter",
        version="v",
        script="scripts/convert.py",
        status="failed",
        exit_code=2,
    )
    manager_record = {"fingerprint": "f", "result": stored.model_dump(mode="json")}
    await store.put_bytes(
        keys.execution_result_key(execution_key("r1", 2)), json.dumps(manager_record).encode()
    )

    seen = await gather_evidence(store, result)

    converted, shouted = seen.scripts
    assert (converted.skill, converted.script, converted.status, converted.exit_code) == (
        "unit-converter",
        "scripts/convert.py",
        "failed",
        2,
    )
    # an executable tool whose execution is not in this store is named by its tool
    assert (shouted.skill, shouted.script, shouted.tool) == ("", "", "shout")
    assert shouted.line() == "shout (succeeded, exit 0)"


async def test_outputs_are_capped_binary_named_only_and_the_latest_of_a_name_kept(
    tmp_path: Path,
) -> None:
    store = LocalArtifactStore(tmp_path / "store")

    async def output(execution: str, name: str, data: bytes) -> ArtifactRef:
        return await store.put_bytes(keys.execution_output_key("r2", execution, name), data)

    first = await output("e1", "report.md", b"old")
    second = await output("e2", "report.md", b"new \xff text")
    big = await output("e2", "big.txt", b"x" * (MAX_OUTPUT_BYTES + 10))
    binary = await output("e2", "chart.png", b"\x89PNG\0\0data")
    odd = await output("e2", "r\u00e9sum\u00e9 1.txt", b"accents")
    result = RunResult(run_id="r2", status="completed", outputs=(first, second, big, binary, odd))

    seen = await gather_evidence(store, result)

    assert seen.output_names == ("report.md", "big.txt", "chart.png", "r\u00e9sum\u00e9 1.txt")
    assert seen.output("report.md").text == "new \ufffd text"  # type: ignore[union-attr]
    cut = seen.output("big.txt")
    assert cut is not None
    assert not cut.complete
    assert len(cut.text or "") == MAX_OUTPUT_BYTES
    assert seen.output("chart.png").text is None  # type: ignore[union-attr]


async def test_too_many_outputs_and_entries_are_left_out_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evidence_module, "MAX_OUTPUT_FILES", 2)
    monkeypatch.setattr(evidence_module, "MAX_TRANSCRIPT_ENTRIES", 3)
    monkeypatch.setattr(evidence_module, "MAX_TRANSCRIPT_CHARS", 100)
    store = LocalArtifactStore(tmp_path / "store")
    refs = [
        await store.put_bytes(keys.execution_output_key("r3", "e", f"f{n}.txt"), b"x")
        for n in range(4)
    ]
    result = await record(
        store,
        "r3",
        Message(role="user", text="the task"),
        Message(role="assistant", text="a" * 200),
        Message(role="assistant", text="the end"),
        Message(role="assistant", text="never read"),
    )
    result = result.model_copy(update={"outputs": tuple(refs), "transcript_entries": 5})

    seen = await gather_evidence(store, result)

    assert seen.output_names == ("f0.txt", "f1.txt")
    assert "never read" not in seen.transcript
    assert seen.transcript.startswith("[user]\nthe task")
    assert seen.transcript.endswith("[assistant]\nthe end")
    assert "entries not shown" in seen.transcript
    assert seen.notes == (
        "the transcript's last 2 entries were not read",
        "1 transcript entries in the middle are not shown (too long)",
        "2 more output files not read: f2.txt, f3.txt",
    )


async def test_a_missing_or_broken_record_is_noted_not_raised(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    result = await record(store, "r4", Message(role="user", text="the task"))
    await store.put_bytes(keys.transcript_key("r4", 1), b"{not json")
    seen = await gather_evidence(store, result.model_copy(update={"transcript_entries": 3}))
    assert seen.transcript == "[user]\nthe task"
    assert seen.notes == ("2 transcript entries are missing or unreadable",)
