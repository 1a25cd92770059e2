"""`FollowNote`: what a follower of a job is told between its events, on either engine.

Notes are not steps of the job: they are not kept with its events, have no index (the API's
event stream sends them without an ``id``, so a client that reconnects resumes after the last
step it got), and each says something about the moment it is told. Followers yield them between
events: :meth:`skillweave.engines.temporal.TemporalEngine.follow` (waiting for a worker, a
worker answering again, events dropped from the workflow's window, a retry read from a pending
activity) and :meth:`skillweave.engines.direct.DirectEngine.follow` (a retry, as it happens).
Every view shows them as :func:`note_line` renders them (the one place, in the
:class:`~skillweave.agent.rendering.Line` events are rendered into): the CLI's live view and
``runs logs`` (``skillweave.cli.view``), and the API's SSE stream (``skillweave.api.runs``).
A kind this version does not know is shown by its name and its detail.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from skillweave.agent.events import AgentEvent
from skillweave.agent.rendering import Line, Part, generic_line, one_line
from skillweave.engines.retries import RetryNotice
from skillweave.terminal import counted

__all__ = ["RENDERED_NOTES", "FollowKind", "FollowNote", "events_only", "note_line"]

FollowKind = Literal["waiting_for_worker", "worker_answered", "events_dropped", "retrying"]


class FollowNote(BaseModel):
    """What a follower of a job should know that is not an event of the job.

    ``waiting_for_worker``: no worker has answered for ``waited_seconds`` (repeated while it
    lasts); ``worker_answered``: one answered again after ``waited_seconds``;
    ``events_dropped``: ``dropped`` events older than the workflow's window were not read;
    ``retrying``: a call failed and will be tried again (``retry``; ``detail`` says it in one
    line).
    """

    model_config = ConfigDict(frozen=True)

    kind: FollowKind | str
    job_id: str
    task_queue: str = Field(default="", description="Where the job's workers poll (temporal).")
    waited_seconds: float = Field(default=0.0, description="How long no worker has answered.")
    dropped: int = Field(default=0, description="Events no longer kept (events_dropped).")
    retry: RetryNotice | None = Field(
        default=None, description="retrying: which call failed, attempt n of N, the wait, why."
    )
    detail: str = Field(default="", description="retrying: the note in one line.")

    @field_validator("kind")
    @classmethod
    def _listed_when_made(cls, kind: str, info: ValidationInfo) -> str:
        # Made here: one of ours. Read from JSON: maybe a newer server's, shown by its name.
        if info.mode == "python" and kind not in get_args(FollowKind):
            raise ValueError(f"{kind!r} is not a note kind: list it in FollowKind")
        return kind

    @classmethod
    def retrying(cls, job_id: str, notice: RetryNotice, *, task_queue: str = "") -> FollowNote:
        """The note of a retry of one of `job_id`'s calls."""
        return cls(
            kind="retrying",
            job_id=job_id,
            task_queue=task_queue,
            retry=notice,
            detail=notice.line(),
        )


def note_line(note: FollowNote) -> Line:
    """How every view shows `note`: not a step of the run, so no turn."""
    render = _RENDERINGS.get(note.kind)
    return generic_line(note.kind, note.detail) if render is None else render(note)


def _waiting(note: FollowNote) -> Line:
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


_RENDERINGS: Final[dict[str, Callable[[FollowNote], Line]]] = {
    "waiting_for_worker": _waiting,
    "worker_answered": _answered,
    "events_dropped": _dropped,
    "retrying": _retrying,
}

RENDERED_NOTES: Final[frozenset[str]] = frozenset(_RENDERINGS)
"""The note kinds with a rendering of their own (every :data:`FollowKind`, a test says)."""


async def events_only(
    followed: AsyncGenerator[AgentEvent | FollowNote, None],
) -> AsyncIterator[AgentEvent]:
    """A follower's items without its notes: the job's events (each engine's ``events``);
    the follower is closed when this is."""
    async with contextlib.aclosing(followed) as items:
        async for item in items:
            if isinstance(item, AgentEvent):
                yield item
