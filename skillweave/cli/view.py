"""What a run shows: the live view of its events, its UI link, and how it ended.

:class:`EventView` prints one line per event, with a spinner on a terminal that says what the
run waits for; :func:`print_result` the answer, usage, status and reason, output artifacts and
copied files; :class:`RunOutput` picks between them and JSON lines (``--json``) for ``run``,
``demo`` and ``run --agent ag-…``. ``runs logs`` prints :meth:`EventView.line` too, and both
print a follower's notes (waiting for a worker, a call being retried, a step waiting for a
manager or a free sandbox) with
:meth:`EventView.note_line`. What each line says is not decided here: an event's line is
:func:`skillweave.agent.rendering.event_line`'s, a note's
:func:`skillweave.engines.notes.note_line`'s (the same words the API's event stream and the
Temporal UI show); this module lays them out (turn, label column, colours by tone). A kind
this version does not know is shown by its name and detail, never an error. Every text of a
run (model text, tool names and arguments, skill names, script and error messages, artifact
keys made of script file names) is shown through :func:`~skillweave.terminal.terminal_safe`,
in a ``rich.text.Text``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Final

from rich.console import Console
from rich.panel import Panel
from rich.status import Status
from rich.text import Text

from skillweave.agent import Line, Tone, event_line
from skillweave.cli.console import err, out
from skillweave.engines import note_line
from skillweave.terminal import counted, terminal_safe, terminal_safe_json

if TYPE_CHECKING:
    from skillweave.agent import AgentEvent
    from skillweave.cli.agent_run import FinishedRun
    from skillweave.engines import FollowNote

__all__ = ["EventView", "RunOutput", "print_result"]


class RunOutput:
    """What a run shows: its events (live view or JSON lines), its UI link, its result.

    Args:
        as_json: JSON lines on stdout (each event, then the result) instead of the live view
            on stderr and the result on stdout.
        out_dir: where the run's outputs are copied (the result's JSON line lists them).
    """

    def __init__(self, *, as_json: bool, out_dir: Path | None) -> None:
        self.as_json = as_json
        self.out_dir = out_dir
        self.view = EventView(err)
        self.reported = False

    def live(self) -> AbstractContextManager[object]:
        """The live view (a spinner on a terminal) while the run runs."""
        return nullcontext() if self.as_json else self.view

    def event(self, event: AgentEvent) -> None:
        """One event of the run."""
        if self.as_json:
            sys.stdout.write(terminal_safe_json(event.model_dump_json()) + "\n")
            sys.stdout.flush()
        else:
            self.view(event)

    def note(self, note: FollowNote) -> None:
        """A follower's note (waiting for a worker…): in the live view, or on stderr beside
        JSON lines (stdout keeps only events and the result)."""
        if self.as_json:
            err.print(EventView.note_line(note), soft_wrap=True)
        else:
            self.view.note(note)

    def started(self, ui_link: str | None) -> None:
        """The run has started: its page in the Temporal UI, when it has one."""
        if self.as_json or ui_link is None:
            return
        err.print(Text(f"Temporal UI: {ui_link}", style="dim"), soft_wrap=True)

    def report(self, done: FinishedRun) -> None:
        """How the run ended (once)."""
        self.reported = True
        if not self.as_json:
            print_result(done, out=out)
            return
        line = {"kind": "result", **done.result.model_dump(mode="json")}
        if self.out_dir is not None:
            line["copied"] = [str(path) for path in done.copied]
        if done.ui_url is not None:
            line["ui_url"] = done.ui_url
        sys.stdout.write(terminal_safe_json(json.dumps(line, ensure_ascii=False)) + "\n")


def _tokens(count: int) -> str:
    return f"{count:,}"


class EventView:
    """The live view of a run on `console`: one line per event, and on a terminal a spinner
    that says what the run is waiting for. Use as a context manager around the run."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._status: Status | None = None

    def __enter__(self) -> EventView:
        if self.console.is_terminal:
            self._status = self.console.status("starting the run…", spinner="dots")
            self._status.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The spinner stopped within (a question asked on the terminal), started after."""
        status = self._status
        if status is None:
            yield
            return
        status.stop()
        try:
            yield
        finally:
            if self._status is status:
                status.start()

    def __call__(self, event: AgentEvent) -> None:
        self.console.print(self.line(event), soft_wrap=True)
        if self._status is not None:
            self._status.update(self._waiting(event))

    def note(self, note: FollowNote) -> None:
        """A note of the follower between events: a line, and the spinner says so."""
        self.console.print(self.note_line(note), soft_wrap=True)
        if self._status is None:
            return
        if note.kind == "waiting_for_worker":
            self._status.update(f"waiting for a worker ({note.waited_seconds:.0f} s)…")
        elif note.kind == "worker_answered":
            self._status.update("a worker answered; following the run…")
        elif note.kind == "retrying" and note.retry is not None:
            retry = note.retry
            when = "" if retry.wait_seconds is None else f" in {retry.wait_seconds:.1f} s"
            self._status.update(
                Text(terminal_safe(f"{retry.call}: attempt {retry.attempt + 1}{when}…"))
            )
        elif note.kind == "waiting" and note.waiting is not None:
            wait = note.waiting
            call = f"{wait.call}: " if wait.call else ""
            self._status.update(Text(terminal_safe(f"{call}waiting for {wait.on}…")))

    @staticmethod
    def note_line(note: FollowNote) -> Text:
        """A follower's note as one line (:func:`~skillweave.engines.notes.note_line`): not an
        event of the run, so no turn."""
        line = note_line(note)
        text = Text()
        text.append(terminal_safe(line.label), style=_LABEL_STYLES[line.tone])
        if line.parts:
            text.append(" · ")
            _append_parts(text, line)
        return text

    @staticmethod
    def _waiting(event: AgentEvent) -> str:
        if event.kind == "model_called":
            if event.detail == "answer":
                return "finishing…"
            return f"turn {event.turn}: running the tool calls…"
        if event.kind == "run_finished":
            return "closing…"
        if event.kind == "approval_requested":
            return "waiting for a decision on the approval…"
        return f"turn {event.turn + 1}: waiting for the model…"

    @staticmethod
    def line(event: AgentEvent) -> Text:
        """One event as one line (:func:`~skillweave.agent.rendering.event_line`): the turn,
        what happened, its details; a script's output artifacts on lines of their own."""
        line = event_line(event)
        text = Text()
        text.append(f"turn {event.turn:>2}  ", style="dim")
        label = terminal_safe(line.label)
        text.append(label.ljust(LABEL_CHARS - 1) + " ", style=_LABEL_STYLES[line.tone])
        _append_parts(text, line)
        for more in line.more:
            text.append(f"\n{_INDENT}{terminal_safe(more)}")
        return text


LABEL_CHARS: Final = 11
"""The label's column, its space included (``turn  3  activated  pdf``)."""
_INDENT: Final = " " * (len("turn 99  ") + LABEL_CHARS)
_LABEL_STYLES: Final[dict[Tone, str]] = {
    "plain": "bold",
    "dim": "dim",
    "name": "bold cyan",
    "good": "bold green",
    "warn": "bold yellow",
    "bad": "bold red",
}
_PART_STYLES: Final[dict[Tone, str]] = {
    "plain": "",
    "dim": "dim",
    "name": "cyan",
    "good": "green",
    "warn": "yellow",
    "bad": "bold red",
}


def _append_parts(text: Text, line: Line) -> None:
    """A line's parts, each with its tone's style and its control characters escaped: they
    are model, script and server text."""
    for part in line.parts:
        text.append(terminal_safe(part.text), style=_PART_STYLES[part.tone])


def print_result(run: FinishedRun, *, out: Console) -> None:
    """The answer (in a panel), usage, status and reason, output artifacts, copied files;
    the model's and scripts' text with its control characters escaped."""
    result = run.result
    if result.answer:
        out.print(
            Panel(Text(terminal_safe(result.answer.strip())), title="answer", title_align="left")
        )
    usage = result.usage
    out.print(
        Text(
            terminal_safe(
                f"{counted(result.turns, 'turn')} · {counted(usage.input_tokens, 'token')} in"
                f" / {_tokens(usage.output_tokens)} out · "
                f"{counted(result.script_runs, 'script run')} · "
                f"model {run.model}"
            )
        ),
        soft_wrap=True,
    )
    ok = result.status == "completed"
    status = Text()
    status.append(result.status, style="bold green" if ok else "bold red")
    if result.reason:
        status.append(terminal_safe(f": {result.reason}"), style="" if ok else "red")
    status.append(f" (run {terminal_safe(result.run_id)})", style="dim")
    out.print(status, soft_wrap=True)
    if result.outputs:
        out.print("output artifacts:")
        for ref in result.outputs:
            shown = f"  {ref.key} ({counted(ref.size, 'byte')})"
            out.print(Text(terminal_safe(shown)), soft_wrap=True)
        if run.store_root is not None:
            shown = f"  in the store at {run.store_root}"
            out.print(Text(terminal_safe(shown), style="dim"), soft_wrap=True)
    for path in run.copied:
        out.print(Text(terminal_safe(f"copied → {path}")), soft_wrap=True)
    if run.ui_url is not None:
        out.print(Text(terminal_safe(f"Temporal UI: {run.ui_url}")), soft_wrap=True)
