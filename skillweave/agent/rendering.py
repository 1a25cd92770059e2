"""How a run's step is shown, in every view: one line, a label and a short text.

:func:`event_line` turns an :class:`~skillweave.agent.events.AgentEvent` into a :class:`Line`:
its label (``script``, ``activated``, ``approval?``) and its text, built from the event's
fields in :class:`Part`\\ s that each carry a :data:`Tone` (a terminal colours them, other views
ignore them), plus further lines for a view with room (a script's output artifacts). Every
view takes its rendering from here: the CLI's live view and ``runs logs``
(``skillweave.cli.view``), the API's event stream (``skillweave.api.runs``: the ``text`` of
each event's data), the Temporal UI's details (``workflows.agent``: the last step, as
:meth:`Line.markdown`). A follower's notes are rendered into the same :class:`Line` by
:func:`skillweave.engines.notes.note_line`.

Every kind of :data:`~skillweave.agent.events.EventKind` has its own rendering
(:data:`RENDERED_KINDS`; ``tests/agent/test_rendering.py`` renders each in every view and
fails on a kind without one). A kind this version does not know (a newer server's) is shown
by :func:`generic_line`: its name and its detail, never an error.

Texts are cut to one line here but not escaped: the views that print to a terminal pass every
part through :func:`~skillweave.terminal.terminal_safe`. Pure (no I/O, no clock): the workflow
imports it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from skillweave.agent.disclosure import RUN_SKILL_SCRIPT
from skillweave.agent.events import AgentEvent, EventKind
from skillweave.terminal import counted

__all__ = [
    "RENDERED_KINDS",
    "SUMMARY_CHARS",
    "TEXT_CHARS",
    "VERSION_CHARS",
    "Line",
    "Part",
    "Tone",
    "event_line",
    "first_line",
    "generic_line",
    "markdown_text",
    "one_line",
]

Tone = Literal["plain", "dim", "name", "good", "warn", "bad"]
"""What a part of a line is: ordinary text, secondary, a skill's name, a success, something
that needs a look, a failure."""

TEXT_CHARS: Final = 200
"""A free text (a refusal, a reason, a report) is cut to this many characters."""
SUMMARY_CHARS: Final = 80
"""A person's or the model's words (an answer, a message) are cut to this many."""
VERSION_CHARS: Final = 12
"""A skill version (a sha256) is shown by its first characters."""

_BREAKS: Final = re.compile(r"\s*(?:\r\n|[\r\n\u2028\u2029])+\s*")
_MARKDOWN: Final = re.compile(r"([\\`*_\[\]<>!|~#&])")
"""What a markdown view would read as syntax (links, images, HTML, entities, emphasis, code,
tables)."""


@dataclass(frozen=True)
class Part:
    """A piece of a line's text and what it is."""

    text: str
    tone: Tone = "plain"


@dataclass(frozen=True)
class Line:
    """One step (or note) as every view shows it.

    Attributes:
        label: what happened, in a word or two (``script``, ``approval?``).
        tone: the label's.
        parts: the text, in pieces, each one line.
        more: further lines for a view with room (each a script's output artifact).
    """

    label: str
    tone: Tone = "plain"
    parts: tuple[Part, ...] = ()
    more: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The text after the label, one line."""
        return "".join(part.text for part in self.parts)

    def plain(self) -> str:
        """``label · text``: the line for a view without colours (the API's ``text``)."""
        return f"{self.label} · {self.text}" if self.text else self.label

    def markdown(self) -> str:
        """:meth:`plain` with markdown's syntax escaped: the line for a view that renders
        markdown (the Temporal UI), where a run's text must not become a link or an image."""
        return markdown_text(self.plain())


def markdown_text(text: str) -> str:
    """`text` with markdown's syntax escaped, for a view that renders markdown (the Temporal
    UI): a run's text (a script's arguments, a registry's source) never becomes markup."""
    return _MARKDOWN.sub(r"\\\1", text)


def one_line(text: str, limit: int = TEXT_CHARS) -> str:
    """`text` on one line (its line breaks a space), cut to `limit` characters with ``…``."""
    flat = _BREAKS.sub(" ", text.strip())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def first_line(text: str, limit: int = SUMMARY_CHARS) -> str:
    """The first line of `text`, cut to `limit` characters with ``…``."""
    stripped = text.strip()
    first = stripped.splitlines()[0].strip() if stripped else ""
    return first if len(first) <= limit else first[:limit] + "…"


def generic_line(kind: str, detail: str = "") -> Line:
    """A step or note of a kind this version does not know: its name and what it says."""
    return Line(one_line(kind, SUMMARY_CHARS), parts=_parts(Part(one_line(detail))))


def event_line(event: AgentEvent) -> Line:
    """How every view shows `event` (:func:`generic_line` for a kind it does not know)."""
    render = _RENDERINGS.get(event.kind)  # type: ignore[call-overload]
    if render is None:
        return generic_line(event.kind, event.detail)
    return render(event)


def _parts(*parts: Part | None) -> tuple[Part, ...]:
    return tuple(part for part in parts if part is not None and part.text)


def _then(text: str | None, tone: Tone = "plain") -> Part | None:
    """`` · text`` on one line, or nothing when there is no text."""
    shown = one_line(text or "")
    return Part(f" · {shown}", tone) if shown else None


def _name(skill: str | None) -> Part:
    return Part(one_line(skill or "", SUMMARY_CHARS), "name")


def _version(version: str | None) -> Part | None:
    return Part(f" @ {one_line(version[:VERSION_CHARS])}", "dim") if version else None


def _started(event: AgentEvent) -> Line:
    return Line("started", parts=_parts(Part(one_line(event.detail))))


def _preloaded(event: AgentEvent) -> Line:
    return Line(
        "preloaded",
        "name",
        _parts(_name(event.skill), _then(event.detail, "dim")),
    )


def _model_called(event: AgentEvent) -> Line:
    usage = event.usage
    tokens = (
        None
        if usage is None
        else _then(f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens", "dim")
    )
    return Line(
        "model", parts=_parts(Part(one_line(event.detail)), tokens, _then(event.model, "dim"))
    )


def _skill_activated(event: AgentEvent) -> Line:
    tools = ", ".join(event.tools_registered)
    return Line(
        "activated",
        "name",
        _parts(
            _name(event.skill),
            _version(event.version),
            _then(event.detail),
            _then(f"tools: {tools}" if tools else None),
        ),
    )


def _resource_read(event: AgentEvent) -> Line:
    return Line("read", parts=_parts(Part(one_line(f"{event.skill}/{event.detail}"))))


def _skills_searched(event: AgentEvent) -> Line:
    return Line("searched", parts=_parts(Part(repr(one_line(event.detail, SUMMARY_CHARS)))))


def _script_ran(event: AgentEvent) -> Line:
    ok = event.status == "succeeded"
    as_tool = event.tool and event.tool != RUN_SKILL_SCRIPT
    return Line(
        "script",
        parts=_parts(
            Part(one_line(f"{event.skill} {event.detail}")),
            Part(f" (as {one_line(event.tool or '', SUMMARY_CHARS)})") if as_tool else None,
            _then(event.status, "good" if ok else "bad"),
            _then(f"{event.duration_ms} ms" if event.duration_ms is not None else None, "dim"),
        ),
        more=tuple(
            one_line(f"→ {ref.key} ({counted(ref.size, 'byte')})") for ref in event.artifacts
        ),
    )


def _tool_refused(event: AgentEvent) -> Line:
    return Line("refused", "warn", _parts(Part(one_line(f"{event.tool}: {event.detail}"), "warn")))


def _compacted(event: AgentEvent) -> Line:
    return Line("compacted", parts=_parts(Part(one_line(event.detail))))


def _message_received(event: AgentEvent) -> Line:
    return Line("message", parts=_parts(Part(first_line(event.detail), "dim")))


def _answered(event: AgentEvent) -> Line:
    return Line("answered", "good", _parts(Part(first_line(event.detail), "dim")))


def _approval_requested(event: AgentEvent) -> Line:
    return Line(
        "approval?",
        "warn",
        _parts(Part(one_line(event.detail)), _then("waiting for a decision", "dim")),
    )


def _approval_decided(event: AgentEvent) -> Line:
    approved = event.status == "approved"
    tone: Tone = "good" if approved else "warn"
    return Line("approval", parts=_parts(Part(one_line(event.detail), tone)))


def _skill_drafted(event: AgentEvent) -> Line:
    return _authored("drafted", event, ok=event.status == "kept")


def _skill_published(event: AgentEvent) -> Line:
    return _authored("published", event, ok=event.status == "published")


def _authored(label: str, event: AgentEvent, *, ok: bool) -> Line:
    """A skill the run wrote or asked for: its name and version, kept (published, checked,
    installed) or not, and why."""
    return Line(
        label,
        "name",
        _parts(
            _name(event.skill),
            _version(event.version),
            _then(event.status, "good" if ok else "bad"),
            _then(first_line(event.detail, TEXT_CHARS)),
        ),
    )


def _registry_searched(event: AgentEvent) -> Line:
    return Line("registries", parts=_parts(Part(one_line(event.detail))))


def _skill_requested(event: AgentEvent) -> Line:
    """A registry skill the run asked for: checked (a person is asked next) or refused."""
    return _authored("requested", event, ok=event.status == "checked")


def _skill_installed(event: AgentEvent) -> Line:
    return _authored("installed", event, ok=event.status == "installed")


def _run_finished(event: AgentEvent) -> Line:
    ok = event.status == "completed"
    return Line(
        "finished",
        parts=_parts(
            Part(one_line(event.status or ""), "good" if ok else "bad"), _then(event.detail)
        ),
    )


_RENDERINGS: Final[dict[EventKind, Callable[[AgentEvent], Line]]] = {
    "run_started": _started,
    "preloaded": _preloaded,
    "model_called": _model_called,
    "skill_activated": _skill_activated,
    "resource_read": _resource_read,
    "skills_searched": _skills_searched,
    "script_ran": _script_ran,
    "tool_refused": _tool_refused,
    "compacted": _compacted,
    "message_received": _message_received,
    "answered": _answered,
    "approval_requested": _approval_requested,
    "approval_decided": _approval_decided,
    "skill_drafted": _skill_drafted,
    "skill_published": _skill_published,
    "registry_searched": _registry_searched,
    "skill_requested": _skill_requested,
    "skill_installed": _skill_installed,
    "run_finished": _run_finished,
}

RENDERED_KINDS: Final[frozenset[str]] = frozenset(_RENDERINGS)
"""The kinds with a rendering of their own (every kind, a test says)."""
