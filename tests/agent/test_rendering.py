"""Every kind is shown by every view (issue 40): each event kind of the one definition
(``EventKind``) and each note kind (``FollowKind``), with realistic fields, rendered in the
CLI's live view, ``runs logs``, the API's event stream (and read back by the CLI's client of
it) and the Temporal UI's details. A kind added without a rendering of its own fails here
(its example is built from every field, so the tests run for it). A kind a view does not
know (a newer server's) is shown by its name and detail in every view, never an error.

The MCP front door is not here: it runs skills' scripts for MCP clients and starts no runs,
so it never sees an event or a note (its tool results are its own, ``tests/mcp_manager``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any, get_args

import pytest
from rich.console import Console
from typer.testing import CliRunner

from skillweave.agent.events import EVENT_KINDS, AgentEvent, EventKind
from skillweave.agent.rendering import RENDERED_KINDS, Line, event_line, generic_line
from skillweave.api.run_events import server_sent_events as api_sse
from skillweave.cli import app, runs
from skillweave.cli.remote_runs import _sse as client_sse
from skillweave.cli.view import LABEL_CHARS, EventView
from skillweave.engines.base import RunRequest
from skillweave.engines.contract import AgentWorkflowInput
from skillweave.engines.notes import RENDERED_NOTES, FollowKind, FollowNote, note_line
from skillweave.engines.retries import RetryNotice
from skillweave.llm.messages import Usage
from skillweave.storage.base import ArtifactRef
from skillweave.terminal import terminal_safe
from skillweave.waiting import Waiting
from workflows import agent as workflow_module
from workflows.agent import AgentWorkflow

RUN = "run-20261206-052000-0a1b2c3d"
VERSION = "3f" * 32
OUTPUT = ArtifactRef(key=f"runs/{RUN}/outputs/report.md", size=2048, sha256="0" * 64)

_REALISTIC: dict[str, dict[str, Any]] = {
    "run_started": {"turn": 0, "detail": "12 skills in the catalog"},
    "preloaded": {"turn": 0, "skill": "data-toolkit", "detail": "auto_load"},
    "model_called": {
        "detail": "2 tool calls",
        "usage": Usage(input_tokens=1234, output_tokens=56),
        "model": "openai:gpt-4o-mini",
    },
    "skill_activated": {
        "skill": "csv-profiler",
        "version": VERSION,
        "detail": "sub-skills: csv-cleaner",
        "tools_registered": ("profile_csv",),
    },
    "resource_read": {
        "skill": "csv-profiler",
        "tool": "read_skill_resource",
        "detail": "references/stats-format.md",
    },
    "skills_searched": {"tool": "search_skills", "detail": "count the words of a text"},
    "script_ran": {
        "skill": "csv-profiler",
        "tool": "profile_csv",
        "detail": "scripts/profile_csv.py",
        "status": "succeeded",
        "duration_ms": 412,
        "artifacts": (OUTPUT,),
    },
    "tool_refused": {
        "tool": "run_skill_script",
        "detail": "Activate the skill 'pdf' before running its scripts.",
    },
    "compacted": {"detail": "3 older tool outputs elided to refs"},
    "message_received": {"detail": "Also count the rows, please.\nThanks."},
    "answered": {"detail": "The file has 20 rows.\n\nDetails follow."},
    "approval_requested": {"skill": "deploy-tool", "detail": "deploy-tool/scripts/ship.py prod"},
    "approval_decided": {
        "skill": "deploy-tool",
        "status": "denied",
        "detail": "deploy-tool/scripts/ship.py prod: denied (not today)",
    },
    "skill_drafted": {
        "skill": "word-count",
        "version": VERSION,
        "tool": "create_skill",
        "status": "kept",
        "detail": "Kept your skill word-count: 1 of 1 examples passed.",
    },
    "skill_published": {
        "skill": "word-count",
        "version": VERSION,
        "tool": "publish_skill",
        "status": "published",
        "detail": "Published word-count; later runs can find it.",
    },
    "run_finished": {
        "turn": 5,
        "status": "completed",
        "detail": "answered",
        "usage": Usage(input_tokens=5000, output_tokens=300),
    },
}
"""What each kind carries when the loop emits it."""

_EVERY_FIELD: dict[str, Any] = {
    "skill": "a-skill",
    "version": VERSION,
    "tool": "a_tool",
    "detail": "what happened, in a line",
    "status": "succeeded",
    "duration_ms": 7,
    "usage": Usage(input_tokens=1, output_tokens=1),
    "model": "scripted:x",
    "artifacts": (OUTPUT,),
    "tools_registered": ("a_tool",),
}
"""A kind with no example above (one just added) still gets an event, with every field."""

EVENT_KIND_NAMES: tuple[str, ...] = get_args(EventKind)
NOTE_KIND_NAMES: tuple[str, ...] = get_args(FollowKind)


def example(kind: str) -> AgentEvent:
    fields = {"turn": 3, **_REALISTIC.get(kind, _EVERY_FIELD)}
    return AgentEvent(kind=kind, run_id=RUN, at=1.0e9, **fields)


def note(kind: str) -> FollowNote:
    notice = RetryNotice(
        call="model openai:gpt-4o-mini", attempt=2, attempts=8, wait_seconds=4.0, cause="HTTP 503"
    )
    if kind == "retrying":
        return FollowNote.retrying(RUN, notice, task_queue="skillweave")
    if kind == "waiting":
        waiting = Waiting(
            on="manager",
            detail="cannot reach the MCP manager at http://127.0.0.1:9: connection refused",
            since=datetime(2026, 12, 6, 7, 31, 2, tzinfo=UTC),
            call="script csv-profiler/scripts/profile_csv.py",
        )
        return FollowNote.waiting_on(RUN, waiting, task_queue="skillweave")
    return FollowNote(
        kind=kind,  # type: ignore[arg-type]
        run_id=RUN,
        task_queue="skillweave",
        waited_seconds=12.0,
        dropped=3,
        detail="what the follower was told",
    )


EVENTS = [example(kind) for kind in EVENT_KIND_NAMES]
NOTES = [note(kind) for kind in NOTE_KIND_NAMES]


def shown_event(event: AgentEvent) -> str:
    """What the live view's line must say: the label in its column, then the text."""
    line = event_line(event)
    return terminal_safe(line.label).ljust(LABEL_CHARS - 1) + " " + terminal_safe(line.text)


def shown_note(item: FollowNote) -> str:
    return terminal_safe(note_line(item).plain())


# --- one definition, a rendering of each kind ---------------------------------------------------


def test_the_kinds_are_defined_once() -> None:
    assert frozenset(EVENT_KIND_NAMES) == EVENT_KINDS
    assert len(EVENT_KIND_NAMES) == len(EVENT_KINDS)  # no kind listed twice


@pytest.mark.parametrize("kind", EVENT_KIND_NAMES)
def test_every_event_kind_has_a_rendering_of_its_own(kind: str) -> None:
    event = example(kind)
    line = event_line(event)
    assert kind in RENDERED_KINDS, f"{kind!r} has no rendering: add one to agent/rendering.py"
    assert line.label, line
    assert line.text, line
    assert "\n" not in line.plain()
    assert "\n" not in line.markdown()


@pytest.mark.parametrize("kind", NOTE_KIND_NAMES)
def test_every_note_kind_has_a_rendering_of_its_own(kind: str) -> None:
    item = note(kind)
    line = note_line(item)
    assert kind in RENDERED_NOTES, f"{kind!r} has no rendering: add one to engines/notes.py"
    assert line.label, line
    assert line.text, line
    assert "\n" not in line.plain()


def test_nothing_is_rendered_that_is_not_a_kind() -> None:
    assert RENDERED_KINDS == EVENT_KINDS
    assert frozenset(NOTE_KIND_NAMES) == RENDERED_NOTES


# --- every view ---------------------------------------------------------------------------------


def test_the_live_view_shows_every_kind() -> None:
    console = Console(width=400, record=True, color_system=None)
    with EventView(console) as view:
        for event in EVENTS:
            view(event)
        for item in NOTES:
            view.note(item)
    printed = console.export_text()
    for event in EVENTS:
        assert shown_event(event) in printed, event.kind
    assert f"→ {OUTPUT.key} (2,048 bytes)" in printed  # a script's outputs, on lines below
    for item in NOTES:
        assert shown_note(item) in printed, item.kind


class _Engine:
    """A Temporal engine as ``runs logs`` and the API's stream follow it: every event of the
    examples, every note between them."""

    def __init__(self, events: list[AgentEvent], notes: list[FollowNote]) -> None:
        self._events = events
        self._notes = notes

    async def follow(
        self, run_id: str, *, after: int = 0, until_finished: bool = True
    ) -> AsyncIterator[AgentEvent | FollowNote]:
        for index, event in enumerate(self._events[after:]):
            if index < len(self._notes):
                yield self._notes[index]
            yield event

    async def events(self, run_id: str, *, after: int = 0) -> AsyncIterator[AgentEvent]:
        for event in self._events[after:]:
            yield event


def _in_order(events: list[AgentEvent]) -> list[AgentEvent]:
    """The examples with ``run_finished`` last (a follower stops there)."""
    return sorted(events, key=lambda event: event.kind == "run_finished")


def test_runs_logs_shows_every_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _Engine(_in_order(EVENTS), NOTES)
    monkeypatch.setattr(runs, "_on_engine", lambda work: asyncio.run(work(engine)))
    result = CliRunner().invoke(app, ["runs", "logs", RUN])
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stdout.split())
    for event in EVENTS:
        assert " ".join(shown_event(event).split()) in said, event.kind
    noted = " ".join(result.stderr.split())
    for item in NOTES:
        assert " ".join(shown_note(item).split()) in noted, item.kind


async def _stream(engine: Any) -> list[tuple[str, str, str]]:
    chunks = [chunk async for chunk in api_sse(engine, RUN, 0, until_finished=False)]
    return list(client_sse(iter(b"".join(chunks).decode().split("\n"))))


async def test_the_event_stream_carries_every_kind_with_its_line() -> None:
    ordered = _in_order(EVENTS)
    sent = await _stream(_Engine(ordered, NOTES))
    events = [(kind, data) for kind, data, event_id in sent if event_id]
    notes = [(kind, data) for kind, data, event_id in sent if not event_id]
    assert [kind for kind, _ in events] == [event.kind for event in ordered]
    for (_, data), event in zip(events, ordered, strict=True):
        assert json.loads(data)["text"] == event_line(event).plain()
        assert AgentEvent.model_validate_json(data) == event  # the CLI's client reads it back
    assert [kind for kind, _ in notes] == [item.kind for item in NOTES]
    for (_, data), item in zip(notes, NOTES, strict=True):
        assert json.loads(data)["text"] == note_line(item).plain()
        assert FollowNote.model_validate_json(data) == item


def _workflow_details(monkeypatch: pytest.MonkeyPatch, events: list[AgentEvent]) -> list[str]:
    """The Temporal UI's current details after each event, as the workflow sets them."""
    details: list[str] = []
    monkeypatch.setattr(workflow_module.workflow, "set_current_details", details.append)
    run = AgentWorkflow(AgentWorkflowInput(request=RunRequest(run_id=RUN, task="Profile it.")))
    for event in events:
        run._on_event(event)
    return details


def test_the_temporal_ui_details_show_every_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    details = _workflow_details(monkeypatch, EVENTS)
    assert len(details) == len(EVENTS)
    for shown, event in zip(details, EVENTS, strict=True):
        assert f"**Last step:** {event_line(event).markdown()}" in shown.split("\n\n"), event.kind


def test_run_text_in_the_ui_details_is_no_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = "![x](https://evil.example/p.png) <img src=x> [link](https://evil.example)"
    event = AgentEvent(kind="answered", run_id=RUN, turn=2, at=0.0, detail=hostile)
    (shown,) = _workflow_details(monkeypatch, [event])
    assert re.search(r"(?<!\\)[!\[\]<>]", shown) is None, shown  # every one escaped
    assert "\\!\\[x\\](https://evil.example/p.png)" in shown


# --- a kind a view does not know ----------------------------------------------------------------


NEWER = json.dumps(
    {"kind": "skill_forked", "run_id": RUN, "turn": 4, "at": 0.0, "detail": "pdf → pdf2"}
)


def test_a_newer_kind_is_read_and_shown_by_its_name_in_every_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    newer = AgentEvent.model_validate_json(NEWER)  # a newer worker's or server's event
    newer_note = FollowNote.model_validate_json(  # a newer server's note, read back
        json.dumps({"kind": "paused", "run_id": RUN, "detail": "by ops"})
    )
    assert event_line(newer) == generic_line("skill_forked", "pdf → pdf2")
    console = Console(width=200, record=True, color_system=None)
    with EventView(console) as view:
        view(newer)
        view.note(newer_note)
    printed = console.export_text()
    assert "skill_forked pdf → pdf2" in printed
    assert "paused · by ops" in printed

    sent = asyncio.run(_stream(_Engine([newer], [newer_note])))
    assert [(kind, json.loads(data)["text"]) for kind, data, _ in sent] == [
        ("paused", "paused · by ops"),
        ("skill_forked", "skill_forked · pdf → pdf2"),
    ]
    (details,) = _workflow_details(monkeypatch, [newer])
    assert "**Last step:** skill\\_forked · pdf → pdf2" in details

    engine = _Engine([newer], [])
    monkeypatch.setattr(runs, "_on_engine", lambda work: asyncio.run(work(engine)))
    logged = CliRunner().invoke(app, ["runs", "logs", RUN])
    assert logged.exit_code == 0, logged.stderr
    assert "skill_forked pdf → pdf2" in logged.stdout


def test_a_kind_made_here_must_be_listed() -> None:
    with pytest.raises(ValueError, match="list it in EventKind"):
        AgentEvent(kind="skill_forked", run_id=RUN, turn=1, at=0.0)
    with pytest.raises(ValueError, match="list it in FollowKind"):
        FollowNote(kind="paused", run_id=RUN)


def test_a_line_is_one_line_whatever_the_run_wrote() -> None:
    event = example("tool_refused").model_copy(update={"detail": "first\nsecond\r\nthird"})
    assert event_line(event).text == "run_skill_script: first second third"
    long = example("run_finished").model_copy(update={"detail": "x" * 500})
    assert len(event_line(long).text) < 250
    assert isinstance(event_line(long), Line)
