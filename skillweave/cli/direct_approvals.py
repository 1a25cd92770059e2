"""Approvals of a run on the direct engine, decided where ``skillweave run`` runs it.

A direct run keeps the approval it waits for in this process
(:meth:`~skillweave.engines.direct.DirectEngine.approve`), out of reach of ``skillweave runs
approve`` and the API. :class:`DirectApprovals` answers each ``approval_requested`` event of
the run: with a terminal (stdin and stderr) it asks ``approve? [y/N]`` after the approval line
and reads the answer in a thread, so the run's event loop goes on; without one it denies at
once, saying why and what to do instead, rather than let the run wait out
``approvals.timeout_seconds``. Either way the decision names this CLI's user
(:func:`~skillweave.cli.audit_writer.cli_actor`). :func:`deciding` is what
:mod:`skillweave.cli.run_command` tells the run's events to.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import termios
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Final

from rich.text import Text

from skillweave.agent import ApprovalDecision
from skillweave.cli.audit_writer import cli_actor
from skillweave.cli.console import err
from skillweave.errors import AgentError

if TYPE_CHECKING:
    from skillweave.agent import AgentEvent
    from skillweave.cli.view import RunOutput
    from skillweave.engines import DirectEngine, Engine

__all__ = ["NO_TERMINAL", "PROMPT", "DirectApprovals", "deciding", "decision_of"]

PROMPT: Final = 'approve? [y/N] (a note after a space, e.g. "n not this one") '
NO_TERMINAL: Final = (
    "a direct run started without a terminal cannot be approved: run it in a terminal, on the "
    "Temporal engine (`skillweave runs approve`), or through the API"
)
_ENDED: Final = "no answer: the terminal's input ended (Ctrl-D)"
_NOTE_CHARS: Final = 2_000  # ApprovalDecision.note's limit
_YES: Final = frozenset({"y", "yes"})


def decision_of(answer: str | None, *, by: str) -> ApprovalDecision:
    """The decision an answer to :data:`PROMPT` makes: ``y``/``yes`` approves, anything else
    (an empty line too) denies; the words after the first are its note. None (the input
    ended) denies, saying so."""
    if answer is None:
        return ApprovalDecision(approved=False, note=_ENDED, by=by)
    word, _, note = answer.strip().partition(" ")
    return ApprovalDecision(approved=word.lower() in _YES, note=note.strip()[:_NOTE_CHARS], by=by)


def deciding(engine: Engine, run_id: str, shown: RunOutput) -> Callable[[AgentEvent], None]:
    """What each event of run `run_id` is told to: `shown`, and first, when `engine` is this
    process's direct engine, a :class:`DirectApprovals` that decides what the run asks (so
    its question ends before the line of a decision made without it)."""
    from skillweave.engines import DirectEngine

    if not isinstance(engine, DirectEngine):
        return shown.event
    approvals = DirectApprovals(engine, run_id, pause=shown.view.paused)

    def told(event: AgentEvent) -> None:
        approvals.event(event)
        shown.event(event)

    return told


def _is_terminal() -> bool:
    """Whether a person can answer here: stdin and stderr are both a terminal."""
    try:
        return sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()
    except (OSError, ValueError):  # a closed stream
        return False


class DirectApprovals:
    """Decides the approvals of run `run_id` on `engine`, this process's direct engine.

    Args:
        engine: the direct engine the run runs on.
        run_id: the run.
        pause: what holds the live view still while the question is asked (its spinner).
        interactive: whether to ask (default: stdin and stderr are a terminal); False denies
            each approval at once with :data:`NO_TERMINAL`.
    """

    def __init__(
        self,
        engine: DirectEngine,
        run_id: str,
        *,
        pause: Callable[[], AbstractContextManager[object]] = nullcontext,
        interactive: bool | None = None,
    ) -> None:
        self.engine = engine
        self.run_id = run_id
        self.pause = pause
        self.interactive = _is_terminal() if interactive is None else interactive
        self._deciding: set[asyncio.Task[None]] = set()
        self._asking: asyncio.Task[None] | None = None
        self._stdin = _Stdin()

    def event(self, event: AgentEvent) -> None:
        """An event of the run, before it is shown: an approval asked starts its decision; one
        decided (or a run ended) while the question is still asked, by its timeout, ends it."""
        if event.kind in ("approval_decided", "run_finished"):
            if self._asking is not None and not self._asking.done():
                err.print()  # before the event's line: it starts a line of its own
                self._asking.cancel()
            return
        if event.kind != "approval_requested":
            return
        task = asyncio.get_running_loop().create_task(self._decide(), name="approval-decision")
        self._deciding.add(task)
        task.add_done_callback(self._deciding.discard)
        if self.interactive:
            self._asking = task

    async def _decide(self) -> None:
        if self.interactive:
            with self.pause():
                err.print(Text(PROMPT, style="bold yellow"), end="")
                answer = await self._stdin.line()
            decision = decision_of(answer, by=cli_actor())
        else:
            err.print(Text(NO_TERMINAL, style="yellow"), soft_wrap=True)
            decision = ApprovalDecision(approved=False, note=NO_TERMINAL, by=cli_actor())
        with contextlib.suppress(AgentError):  # the run ended meanwhile: nothing to decide
            await self.engine.approve(self.run_id, decision)


class _Stdin:
    """Lines of stdin, each read in a daemon thread: the event loop goes on meanwhile, and a
    run that ends first does not wait for the person to answer. A read left unanswered (its
    question ended) answers the next question, since a thread's read cannot be taken back;
    what was typed while nothing was asked (or after a question ended) is dropped."""

    def __init__(self) -> None:
        self._read: asyncio.Future[str | None] | None = None

    async def line(self) -> str | None:
        """The next line, without its end (None: the input ended)."""
        if self._read is None or self._read.done():
            _drop_typed_ahead()
            self._read = self._start()
        return await asyncio.shield(self._read)

    @staticmethod
    def _start() -> asyncio.Future[str | None]:
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[str | None] = loop.create_future()

        def settle(line: str | None) -> None:
            if not answered.done():
                answered.set_result(line)

        def read() -> None:
            try:
                line = sys.stdin.readline()
            except (OSError, ValueError):  # closed under us
                line = ""
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
                loop.call_soon_threadsafe(settle, line.rstrip("\r\n") if line else None)

        threading.Thread(target=read, name="approval-answer", daemon=True).start()
        return answered


def _drop_typed_ahead() -> None:
    """Drop what the terminal holds unread (an Enter pressed while the run ran): it was not an
    answer to the question about to be asked."""
    with contextlib.suppress(OSError, ValueError, termios.error):
        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
