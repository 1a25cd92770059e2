"""What a finished eval job left behind, read once for grading: :class:`JobEvidence`.

:func:`gather_evidence` reads a run's record from the store: its answer, its transcript as
readable text (the task, the assistant's text and tool calls with their arguments, the tool
results), the scripts it ran (skill, script, status, exit code) and the files it wrote under
``outputs/``. The checks (:mod:`skillweave.evals.checks`) judge the evidence; the grader
(:mod:`skillweave.evals.grading`) is shown it and must quote it. ``EvalServices.grade_eval_job``
calls it.

Everything here was written by a model, a script or a skill, so it is hostile: every read is
capped (the ``Final`` constants below), an output file is decoded with replacement and a
binary one is named but not inlined, and a record that cannot be read is left out with a note
rather than failing the grade.
"""

from __future__ import annotations

import json
import re
from contextlib import aclosing
from dataclasses import dataclass
from typing import Final

from pydantic import ValidationError

from skillweave.agent import execution_key
from skillweave.agent.disclosure import OWN_TOOLS, RUN_SKILL_SCRIPT
from skillweave.engines import RunResult, TranscriptRecord, read_transcript_record
from skillweave.errors import SkillweaveError
from skillweave.evals.suite import output_name
from skillweave.llm import Message
from skillweave.sandbox import ExecutionRecord, ExecutionResult
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = [
    "MAX_ENTRY_CHARS",
    "MAX_OUTPUT_BYTES",
    "MAX_OUTPUT_FILES",
    "MAX_TRANSCRIPT_CHARS",
    "MAX_TRANSCRIPT_ENTRIES",
    "JobEvidence",
    "OutputFile",
    "ScriptRun",
    "gather_evidence",
]

MAX_TRANSCRIPT_ENTRIES: Final = 2_000
"""Transcript records read; a longer run's later records are left out (noted)."""
MAX_ENTRY_CHARS: Final = 8_000
"""Characters of one message (or a tool call's arguments) kept in the transcript text."""
MAX_TRANSCRIPT_CHARS: Final = 200_000
"""The transcript text in all: beyond it the middle entries are left out (noted)."""
MAX_OUTPUT_FILES: Final = 20
"""Output files read; the others are named in a note."""
MAX_OUTPUT_BYTES: Final = 1024 * 1024
"""Bytes read of one output file (the rest is not read: a check sees only these)."""
MAX_RECORD_BYTES: Final = 4 * 1024 * 1024
"""A transcript record or stored execution result larger than this is not read."""
_BINARY_SNIFF: Final = 8192
_RAN: Final = re.compile(r"^status: (?P<status>[a-z_]+) \(exit code (?P<code>-?\d+|None)")
"""The first line of a script's result as ``sandbox.render_result`` writes it (a script
that was refused has no such line: it did not run)."""


@dataclass(frozen=True, slots=True)
class ScriptRun:
    """A script the run ran (to completion or not).

    Attributes:
        skill: the skill whose script it is ("" when unknown).
        script: its path in the skill (``scripts/convert.py``; "" when unknown).
        tool: the tool the model called (``run_skill_script`` or an executable skill's).
        status: how it ended (``succeeded``, ``failed``, ``timed_out``…).
        exit_code: its exit status, None when it has none.
    """

    skill: str
    script: str
    tool: str
    status: str
    exit_code: int | None

    def line(self) -> str:
        """``unit-converter/scripts/convert.py (succeeded, exit 0)``."""
        name = f"{self.skill or '?'}/{self.script}" if self.script else self.tool
        return f"{name} ({self.status}, exit {self.exit_code})"


@dataclass(frozen=True, slots=True)
class OutputFile:
    """A file the run wrote under ``outputs/``.

    Attributes:
        name: its path under ``outputs/`` (``report.md``).
        size: its size in bytes.
        text: its first :data:`MAX_OUTPUT_BYTES` decoded (replacement for bad UTF-8); None
            for a binary file (a NUL byte near its start), which is named only.
        complete: whether `text` is the whole file.
    """

    name: str
    size: int
    text: str | None
    complete: bool = True


@dataclass(frozen=True, slots=True)
class JobEvidence:
    """What one eval job's run left behind (see the module docstring).

    Attributes:
        status: how the run ended.
        answer: its final answer ("" when it gave none).
        transcript: the transcript as readable text.
        scripts: the scripts it ran, in order.
        outputs: its output files (the last written of each name), in order.
        notes: what was left out or could not be read, one line each.
    """

    status: str
    answer: str
    transcript: str
    scripts: tuple[ScriptRun, ...] = ()
    outputs: tuple[OutputFile, ...] = ()
    notes: tuple[str, ...] = ()

    def output(self, path: str) -> OutputFile | None:
        """The output file `path` names (``report.md`` or ``outputs/report.md``), or None."""
        name = output_name(path)
        return next((file for file in self.outputs if file.name == name), None)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(file.name for file in self.outputs)


async def gather_evidence(store: ArtifactStore, result: RunResult) -> JobEvidence:
    """The evidence of the run `result` describes, read from `store` (bounded; see the
    module docstring). Never raises for what a run wrote; a store that fails raises."""
    notes: list[str] = []
    messages = await _messages(store, result, notes)
    transcript = _render(messages, notes)
    scripts = await _scripts(store, result.run_id, messages)
    outputs = await _outputs(store, result.outputs, notes)
    return JobEvidence(
        status=result.status,
        answer=result.answer or "",
        transcript=transcript,
        scripts=scripts,
        outputs=outputs,
        notes=tuple(notes),
    )


async def _read(store: ArtifactStore, key: str) -> bytes | None:
    ref = await store.stat(key)
    if ref is None or ref.size > MAX_RECORD_BYTES:
        return None
    return await store.get_bytes(ref)


async def _messages(
    store: ArtifactStore, result: RunResult, notes: list[str]
) -> list[tuple[int, Message]]:
    entries = min(result.transcript_entries, MAX_TRANSCRIPT_ENTRIES)
    if result.transcript_entries > entries:
        notes.append(
            f"the transcript's last {result.transcript_entries - entries} entries were not read"
        )
    messages: list[tuple[int, Message]] = []
    unreadable = 0
    for seq in range(entries):
        data = await read_transcript_record(store, result.run_id, seq)
        try:
            if data is None or len(data) > MAX_RECORD_BYTES:
                raise ValueError("missing")
            messages.append((seq, TranscriptRecord.model_validate_json(data).message))
        except (ValueError, ValidationError):
            unreadable += 1
    if unreadable:
        notes.append(f"{unreadable} transcript entries are missing or unreadable")
    return messages


def _clip(text: str, limit: int = MAX_ENTRY_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… {len(text) - limit} more characters not shown]"


def _entry(message: Message) -> str:
    match message.role:
        case "tool":
            error = " (error)" if message.is_error else ""
            head = f"[tool result: {message.tool_name or '?'}{error}]"
        case role:
            head = f"[{role}]"
    lines = [head]
    if message.text:
        lines.append(_clip(message.text))
    for call in message.tool_calls:
        arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
        lines.append(f"→ calls {call.name} {_clip(arguments)}")
    return "\n".join(lines)


def _render(messages: list[tuple[int, Message]], notes: list[str]) -> str:
    """The messages as text, the middle ones left out when over :data:`MAX_TRANSCRIPT_CHARS`
    (the task and the end of a run matter most)."""
    entries = [_entry(message) for _, message in messages]
    if sum(len(entry) + 2 for entry in entries) <= MAX_TRANSCRIPT_CHARS:
        return "\n\n".join(entries)
    head: list[str] = []
    used = 0
    for entry in entries:
        if used + len(entry) > MAX_TRANSCRIPT_CHARS // 3:
            break
        head.append(entry)
        used += len(entry) + 2
    tail: list[str] = []
    for entry in reversed(entries[len(head) :]):
        if used + len(entry) > MAX_TRANSCRIPT_CHARS:
            break
        tail.insert(0, entry)
        used += len(entry) + 2
    left_out = len(entries) - len(head) - len(tail)
    notes.append(f"{left_out} transcript entries in the middle are not shown (too long)")
    return "\n\n".join([*head, f"[… {left_out} entries not shown …]", *tail])


async def _scripts(
    store: ArtifactStore, run_id: str, messages: list[tuple[int, Message]]
) -> tuple[ScriptRun, ...]:
    """The scripts the run ran: each tool result that says a script ran (``run_skill_script``
    or an executable skill's own tool: any tool but the loop's others), named by the
    execution the manager stored for it, else by the call's arguments (``run_skill_script``)
    or by its tool alone (an executable tool whose execution is not in this store)."""
    calls = {
        call.id: call.arguments
        for _, message in messages
        if message.role == "assistant"
        for call in message.tool_calls
    }
    runs: list[ScriptRun] = []
    for seq, message in messages:
        tool = message.tool_name or ""
        ran = _RAN.match(message.text) if message.role == "tool" else None
        if ran is None or (tool in OWN_TOOLS and tool != RUN_SKILL_SCRIPT):
            continue  # not a script's result (a refused script did not run)
        stored = await _execution(store, run_id, seq)
        if stored is not None:
            runs.append(
                ScriptRun(stored.skill, stored.script, tool, stored.status, stored.exit_code)
            )
            continue
        code = ran.group("code")
        arguments = calls.get(message.tool_call_id or "", {}) if tool == RUN_SKILL_SCRIPT else {}
        skill, script = arguments.get("skill"), arguments.get("script")
        runs.append(
            ScriptRun(
                skill=skill if isinstance(skill, str) else "",
                script=script if isinstance(script, str) else "",
                tool=tool,
                status=ran.group("status"),
                exit_code=None if code == "None" else int(code),
            )
        )
    return tuple(runs)


async def _execution(store: ArtifactStore, run_id: str, seq: int) -> ExecutionResult | None:
    try:
        data = await _read(store, keys.execution_result_key(execution_key(run_id, seq)))
        if data is None:
            return None
        stored = ExecutionRecord.model_validate_json(data).result
    except (ValueError, ValidationError, SkillweaveError):
        return None
    return stored if stored.run_id == run_id else None


async def _outputs(
    store: ArtifactStore, refs: tuple[ArtifactRef, ...], notes: list[str]
) -> tuple[OutputFile, ...]:
    latest: dict[str, ArtifactRef] = {}
    for ref in refs:
        _, marker, encoded = ref.key.partition("/outputs/")
        if marker:
            name = keys.decode_output_path(encoded)
            latest.pop(name, None)  # a file written again is the later one, in its place
            latest[name] = ref
    named = list(latest.items())
    if len(named) > MAX_OUTPUT_FILES:
        rest = ", ".join(name for name, _ in named[MAX_OUTPUT_FILES:][:20])
        notes.append(f"{len(named) - MAX_OUTPUT_FILES} more output files not read: {rest}")
    files = []
    for name, ref in named[:MAX_OUTPUT_FILES]:
        head = await _head(store, ref)
        binary = b"\0" in head[:_BINARY_SNIFF]
        files.append(
            OutputFile(
                name=name,
                size=ref.size,
                text=None if binary else head.decode("utf-8", errors="replace"),
                complete=ref.size <= MAX_OUTPUT_BYTES,
            )
        )
    return tuple(files)


async def _head(store: ArtifactStore, ref: ArtifactRef) -> bytes:
    """The first :data:`MAX_OUTPUT_BYTES` of `ref` (a whole small file is hash-checked)."""
    if ref.size <= MAX_OUTPUT_BYTES:
        return await store.get_bytes(ref)
    chunks: list[bytes] = []
    size = 0
    async with aclosing(store.stream(ref)) as stream:  # type: ignore[type-var]
        async for chunk in stream:
            chunks.append(chunk)
            size += len(chunk)
            if size >= MAX_OUTPUT_BYTES:
                break
    return b"".join(chunks)[:MAX_OUTPUT_BYTES]
