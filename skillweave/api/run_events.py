"""``GET /v1/runs/{id}/events`` as a stream of bytes: Server-Sent Events of a run's steps.

One event per step of the run (``event:`` its kind, ``data:`` the JSON event with ``text``, the
line the CLI shows for it; ``id:`` its position from 1), ending after ``run_finished`` (or, not
following, once no new event comes for a moment). Notes of the stream (waiting for a worker…)
come without an ``id:``, so a client that reconnects with ``Last-Event-ID`` resumes after the
last step it got; comments (``: keep-alive``) keep idle connections open through proxies. The
run routes (:mod:`skillweave.api.runs`) serve :func:`server_sent_events`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from collections.abc import AsyncIterator
from typing import Any, Final

from pydantic import BaseModel

from skillweave.agent import AgentEvent, Line, event_line, generic_line
from skillweave.engines import Engine, note_line
from skillweave.errors import SkillweaveError

__all__ = ["server_sent_events"]

_KEEP_ALIVE_SECONDS: Final = 15.0
_CAUGHT_UP_SECONDS: Final = 0.5
"""Without ``follow``, the event stream ends once no new event came for this long."""


async def server_sent_events(
    engine: Engine, run_id: str, after: int, *, until_finished: bool = True
) -> AsyncIterator[bytes]:
    """The events of the run `run_id` after the `after`-th, as Server-Sent Events (see the
    module docstring); with `until_finished` False, it ends once no new event comes."""
    follow = getattr(engine, "follow", None)
    # Without until_finished the temporal follower stops by itself; other engines' streams
    # end once no event is ready.
    caught_up = not until_finished and follow is None
    events: Any
    if follow is not None:  # temporal: from the N-th event itself, with notes between events
        events = follow(run_id, after=after, until_finished=until_finished).__aiter__()
        position = after
    elif _resumes(engine):  # the engine starts after the N-th event itself
        events = engine.events(run_id, after=after).__aiter__()  # type: ignore[call-arg]
        position = after
    else:
        events = engine.events(run_id).__aiter__()
        position = 0
    next_event: asyncio.Future[Any] | None = None
    try:
        while True:
            if next_event is None:
                next_event = asyncio.ensure_future(events.__anext__())
            wait = _CAUGHT_UP_SECONDS if caught_up else _KEEP_ALIVE_SECONDS
            done, _ = await asyncio.wait({next_event}, timeout=wait)
            if not done:
                if caught_up:
                    return
                yield b": keep-alive\n\n"
                continue
            try:
                event = next_event.result()
            except StopAsyncIteration:
                return
            except SkillweaveError as exc:
                yield _gave_up(exc, position) or f"event: error\ndata: {str(exc)!r}\n\n".encode()
                return
            next_event = None
            if not isinstance(event, AgentEvent):
                # A note of the stream (waiting for a worker…): no id, so a client that
                # reconnects resumes after the last step it got.
                data = _data(event, note_line(event))
                yield f"event: {event.kind}\ndata: {data}\n\n".encode()
                continue
            position += 1
            if position <= after:
                continue
            data = _data(event, event_line(event))
            yield f"id: {position}\nevent: {event.kind}\ndata: {data}\n\n".encode()
    finally:
        if next_event is not None:
            next_event.cancel()
        with contextlib.suppress(Exception):
            await events.aclose()  # type: ignore[attr-defined]


def _data(item: BaseModel, line: Line) -> str:
    """An event's (or note's) ``data:``: its fields, and ``text``, the line views show."""
    data = {**item.model_dump(mode="json"), "text": line.plain()}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))  # as model_dump_json


def _resumes(engine: Engine) -> bool:
    return "after" in inspect.signature(engine.events).parameters


def _gave_up(exc: SkillweaveError, position: int) -> bytes | None:
    """The stream's last event when it gave up waiting for a worker (temporal), else None."""
    if getattr(exc, "waited_seconds", None) is None:  # not a follower's give-up
        return None
    # Imported only here: the direct engine's API need not load temporalio.
    from skillweave.engines.temporal import NoWorkerError

    if not isinstance(exc, NoWorkerError):
        return None
    data = {
        "kind": "worker_wait_expired",
        "run_id": exc.run_id,
        "task_queue": exc.task_queue,
        "waited_seconds": exc.waited_seconds,
        "last_event_id": position,
        "detail": f"{exc}; reconnect with Last-Event-ID: {position} to follow it again",
    }
    data["text"] = generic_line("worker_wait_expired", str(data["detail"])).plain()
    return f"event: worker_wait_expired\ndata: {json.dumps(data)}\n\n".encode()
