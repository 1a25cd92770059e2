"""`FollowNote`: what a follower of a run is told between its events, on either engine.

Notes are not steps of the run: they are not kept with its events, have no index (the API's
event stream sends them without an ``id``, so a client that reconnects resumes after the last
step it got), and each says something about the moment it is told. Followers yield them between
events: :meth:`skillweave.engines.temporal.TemporalEngine.follow` (waiting for a worker, a
worker answering again, events dropped from the workflow's window, a retry or a wait read from
a pending activity) and :meth:`skillweave.engines.direct.DirectEngine.follow` (a retry or a wait,
as it happens).
Every view shows them as :func:`note_line` renders them (the one place, in the
:class:`~skillweave.agent.rendering.Line` events are rendered into): the CLI's live view and
``runs logs`` (``skillweave.cli.view``), and the API's SSE stream (``skillweave.api.runs``).
A kind this version does not know is shown by its name and its detail.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from datetime import datetime
from typing import Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from skillweave.agent import AgentEvent, Line, Part, generic_line, one_line
from skillweave.engines.retries import RetryNotice
from skillweave.terminal import counted
from skillweave.waiting import Waiting

__all__ = [
    "RENDERED_NOTES",
    "WAIT_RETELL_SECONDS",
    "FollowKind",
    "FollowNote",
    "WaitsTold",
    "events_only",
    "note_line",
]

FollowKind = Literal[
    "waiting_for_worker", "worker_answered", "events_dropped", "retrying", "waiting"
]


class FollowNote(BaseModel):
    """What a follower of a run should know that is not an event of the run.

    ``waiting_for_worker``: no worker has answered for ``waited_seconds`` (repeated while it
    lasts; ``pollers``: how many workers poll the task queue all the same, so the one that held
    the run stopped answering and another takes it over); ``worker_answered``: one answered
    again after ``waited_seconds``;
    ``events_dropped``: ``dropped`` events older than the workflow's window were not read;
    ``retrying``: a call failed and will be tried again (``retry``; ``detail`` says it in one
    line); ``waiting``: a step waits (for a manager, a worker, a free sandbox…: ``waiting``;
    ``detail`` is its line when told), told when it begins and again now and then while it
    lasts; nothing says it ended, the next event or note does.
    """

    model_config = ConfigDict(frozen=True)

    kind: FollowKind | str
    run_id: str
    task_queue: str = Field(default="", description="Where the run's workers poll (temporal).")
    waited_seconds: float = Field(default=0.0, description="How long no worker has answered.")
    pollers: int = Field(
        default=0,
        description="waiting_for_worker: workers polling the task queue lately all the same.",
    )
    dropped: int = Field(default=0, description="Events no longer kept (events_dropped).")
    retry: RetryNotice | None = Field(
        default=None, description="retrying: which call failed, attempt n of N, the wait, why."
    )
    detail: str = Field(default="", description="retrying, waiting: the note in one line.")
    waiting: Waiting | None = Field(
        default=None, description="waiting: what the step waits for, why, since when."
    )

    @field_validator("kind")
    @classmethod
    def _listed_when_made(cls, kind: str, info: ValidationInfo) -> str:
        # Made here: one of ours. Read from JSON: maybe a newer server's, shown by its name.
        if info.mode == "python" and kind not in get_args(FollowKind):
            raise ValueError(f"{kind!r} is not a note kind: list it in FollowKind")
        return kind

    @classmethod
    def retrying(cls, run_id: str, notice: RetryNotice, *, task_queue: str = "") -> FollowNote:
        """The note of a retry of one of `run_id`'s calls."""
        return cls(
            kind="retrying",
            run_id=run_id,
            task_queue=task_queue,
            retry=notice,
            detail=notice.line(),
        )

    @classmethod
    def waiting_on(cls, run_id: str, waiting: Waiting, *, task_queue: str = "") -> FollowNote:
        """The note of a wait of one of `run_id`'s steps."""
        return cls(
            kind="waiting",
            run_id=run_id,
            task_queue=task_queue,
            waiting=waiting,
            detail=waiting.line(),
        )


def note_line(note: FollowNote) -> Line:
    """How every view shows `note`: not a step of the run, so no turn."""
    render = _RENDERINGS.get(note.kind)
    return generic_line(note.kind, note.detail) if render is None else render(note)


def _waiting(note: FollowNote) -> Line:
    if note.pollers:
        # After a worker is killed, queries go to its own (sticky) queue until the server
        # gives the run to the task queue, where the others poll.
        said = (
            f"the worker holding the run has not answered for {note.waited_seconds:.0f} s; "
            f"task queue {note.task_queue!r} has {counted(note.pollers, 'worker')} polling: one "
            "takes the run over when the server moves it"
        )
    else:
        said = (
            f"none answered on task queue {note.task_queue!r} for {note.waited_seconds:.0f} s; "
            "the run goes on when one polls"
        )
    return Line("waiting for a worker", "warn", (Part(one_line(said)),))


def _answered(note: FollowNote) -> Line:
    return Line(
        "a worker answered", parts=(Part(f"after {note.waited_seconds:.0f} s without one", "dim"),)
    )


def _dropped(note: FollowNote) -> Line:
    dropped = counted(note.dropped, "earlier event")
    return Line("dropped", "dim", (Part(f"{dropped} no longer kept", "dim"),))


def _retrying(note: FollowNote) -> Line:
    said = note.retry.line() if note.retry is not None else note.detail
    return Line("retrying", "warn", (Part(one_line(said)),))


def _waiting_on(note: FollowNote) -> Line:
    # The line as it was when told ("(40 s)": how long it had lasted then).
    said = note.detail or (note.waiting.line() if note.waiting is not None else "")
    return Line("waiting", "warn", (Part(one_line(said)),))


_RENDERINGS: Final[dict[str, Callable[[FollowNote], Line]]] = {
    "waiting_for_worker": _waiting,
    "worker_answered": _answered,
    "events_dropped": _dropped,
    "retrying": _retrying,
    "waiting": _waiting_on,
}

RENDERED_NOTES: Final[frozenset[str]] = frozenset(_RENDERINGS)
"""The note kinds with a rendering of their own (every :data:`FollowKind`, a test says)."""


WAIT_RETELL_SECONDS: Final = 30.0
"""A wait that lasts is told again this often, so that a live view shows it goes on."""


class WaitsTold:
    """The one rule of when a wait is told, on either engine: once when it begins (a wait is
    what its step waits on, why, and since when), then again every :data:`WAIT_RETELL_SECONDS`
    while it lasts. Its end is not told: the next event or note says it.

    Args:
        clock: monotonic seconds (tests pass a fake).
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._told: dict[tuple[str, str, str, datetime], float] = {}

    def due(self, waiting: Waiting, *, step: str = "") -> bool:
        """Whether `waiting` (of `step`, when a follower reads several) is to be told now;
        True counts it told."""
        key = (step, waiting.on, waiting.detail, waiting.since)
        now = self._clock()
        last = self._told.get(key)
        if last is not None and now - last < WAIT_RETELL_SECONDS:
            return False
        self._told[key] = now
        return True


async def events_only(
    followed: AsyncGenerator[AgentEvent | FollowNote, None],
) -> AsyncIterator[AgentEvent]:
    """A follower's items without its notes: the run's events (each engine's ``events``);
    the follower is closed when this is."""
    async with contextlib.aclosing(followed) as items:
        async for item in items:
            if isinstance(item, AgentEvent):
                yield item
