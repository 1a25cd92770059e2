"""A run through the control-plane API, in the engines' terms: its events and the stream's
notes (:func:`events`), how it ended (:func:`wait_for_result`), what it does now
(:func:`run_view`), a message and the reply to it (:func:`ask`), a cancel, and a whole run
started, followed and its outputs downloaded (:func:`run_remote`, ``run --agent ag-…``).

The Server-Sent Events of a run (the lines :meth:`~skillweave.cli.remote.RemoteApi.event_lines`
gives) are parsed here by hand: the format is a few lines of text, and httpx-sse is not a
dependency. A dropped stream is resumed with ``Last-Event-ID``; the stream's notes (waiting for
a worker…) come out as the Temporal follower's :class:`~skillweave.engines.notes.FollowNote`,
and its giving up as its ``NoWorkerError``, so a remote follower ends as a local one does.
Called by `run --agent` (:mod:`skillweave.cli.run_command`) and the API door of every `runs` command
(:mod:`skillweave.cli.runs`).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import httpx

from skillweave.agent import AgentEvent
from skillweave.cli.agent_run import FinishedRun
from skillweave.cli.artifacts import download_outputs
from skillweave.cli.remote import RemoteApi, RemoteApiError
from skillweave.engines import FollowNote, RunResult
from skillweave.errors import SkillweaveError

if TYPE_CHECKING:
    from skillweave.engines import Reply, RunView

__all__ = ["ask", "cancel", "events", "run_remote", "run_view", "wait_for_result"]

_EVENT_RECONNECTS: Final = 5
_RESULT_WAIT_SECONDS: Final = 30.0
"""After ``run_finished`` the server records the result; wait this long for it."""


def events(
    api: RemoteApi, run_id: str, *, after: int = 0, follow: bool = True
) -> Iterator[AgentEvent | FollowNote]:
    """The run's events after the `after`-th until ``run_finished`` (without `follow`: those
    there are now), the stream's notes between them, reconnecting with ``Last-Event-ID`` when
    the stream drops.

    Raises:
        NoWorkerError: the API's stream gave up waiting for a worker (temporal).
        RemoteApiError: the API refused, failed, or could not be reached again.
    """
    seen, failures = after, 0
    while True:
        try:
            with api.event_lines(run_id, after=seen, follow=follow) as lines:
                for kind, data, event_id in _sse(lines):
                    if kind == "error":
                        raise RemoteApiError(f"the run's event stream failed: {data}")
                    if kind == "worker_wait_expired":
                        raise _no_worker(run_id, data)
                    failures = 0
                    if not event_id:  # a note of the stream, not a step of the run (a
                        # newer server's kind too: every view shows it by its name)
                        yield FollowNote.model_validate_json(data)
                        continue
                    seen = int(event_id) if event_id.isdigit() else seen + 1
                    event = AgentEvent.model_validate_json(data)
                    yield event
                    if event.kind == "run_finished":
                        return
            return  # the server ended the stream: the run has finished, or caught up
        except (httpx.TransportError, httpx.DecodingError) as exc:
            failures += 1
            if failures > _EVENT_RECONNECTS:
                raise RemoteApiError(f"lost the run's events from {api.url}: {exc}") from None
            time.sleep(min(0.5 * 2**failures, 8.0))


def wait_for_result(api: RemoteApi, run_id: str) -> RunResult:
    """How the run ended, once the API has recorded it (it may lag its last event)."""
    deadline = time.monotonic() + _RESULT_WAIT_SECONDS
    pause = 0.05
    while True:
        record = api.get_run(run_id)
        if record.get("result") is not None:
            return RunResult.model_validate(record["result"])
        if time.monotonic() > deadline:
            raise RemoteApiError(f"run {run_id} finished but the API has not recorded its result")
        time.sleep(pause)
        pause = min(pause * 2, 1.0)


def run_view(api: RemoteApi, run_id: str) -> tuple[dict[str, Any], RunView | None, str]:
    """The run's record, its status view when the API's engine gives one, and why not."""
    from skillweave.engines import RunView  # loads temporalio: `run --agent` needs none

    record = api.get_run(run_id)
    try:
        return record, RunView.model_validate(api.run_status(run_id)), ""
    except RemoteApiError as exc:
        if exc.status not in (409, 503):
            raise
        return record, None, exc.detail


def ask(api: RemoteApi, run_id: str, text: str) -> Reply:
    """A message through the API and the run's next answer (the API's message route takes
    the message; its event stream brings the answer, its status view the whole text)."""
    from skillweave.engines import Reply  # loads temporalio: `run --agent` needs none

    seen = sum(1 for item in events(api, run_id, follow=False) if isinstance(item, AgentEvent))
    api.send_message(run_id, text)
    for item in events(api, run_id, after=seen):
        if not isinstance(item, AgentEvent):
            continue
        if item.kind == "answered":
            answer = item.detail
            with contextlib.suppress(RemoteApiError):  # else (direct) the event's summary
                answer = api.run_status(run_id).get("answer") or answer
            return Reply(run_id=run_id, text=answer, turn=item.turn, status="running")
        if item.kind == "run_finished":
            status = item.status or "failed"
            return Reply(run_id=run_id, turn=item.turn, status=status, reason=item.detail or None)
    record = api.get_run(run_id)
    reason = (record.get("result") or {}).get("reason")
    return Reply(run_id=run_id, turn=0, status=record["status"], reason=reason)


def cancel(api: RemoteApi, run_id: str, *, reason: str) -> RunResult:
    """Cancel the run and return how it ended, once the API has recorded it."""
    api.cancel(run_id, reason=reason)
    return wait_for_result(api, run_id)


def run_remote(
    api: RemoteApi,
    *,
    agent_id: str,
    task: str,
    files: Sequence[Path],
    out_dir: Path | None,
    on_start: Callable[[dict[str, Any]], None],
    on_event: Callable[[AgentEvent], None],
    on_note: Callable[[FollowNote], None] | None = None,
) -> FinishedRun:
    """Start a run of `agent_id`, follow its events to the end, fetch how it ended and
    download its output files into `out_dir`.

    Args:
        on_start: given the run's record once it is started (its ``id``, ``agent``…).
        on_event: given each event as it arrives.
        on_note: given each note of the stream (waiting for a worker…); None: dropped.
    """
    run = api.start_run(agent_id, task, files)
    on_start(run)
    for item in events(api, run["id"]):
        if isinstance(item, AgentEvent):
            on_event(item)
        elif on_note is not None:
            on_note(item)
    result = wait_for_result(api, run["id"])
    copied = download_outputs(api, run["id"], out_dir) if out_dir is not None else []
    model = run["agent"].get("model_id") or "the API's model"
    return FinishedRun(result=result, model=model, copied=tuple(copied))


def _no_worker(run_id: str, data: str) -> SkillweaveError:
    """The stream's last event when it gave up waiting for a worker, as the local follower's
    error (so the CLI ends with the same exit code and hint)."""
    # Only here is temporalio needed: a remote follower does not load it otherwise.
    from skillweave.engines.temporal import NoWorkerError

    try:
        note = json.loads(data)
        return NoWorkerError(
            str(note.get("run_id") or run_id),
            task_queue=str(note["task_queue"]),
            waited_seconds=float(note["waited_seconds"]),
        )
    except (ValueError, KeyError, TypeError):
        return RemoteApiError(f"the run's event stream gave up waiting for a worker: {data}")


def _sse(lines: Iterator[str]) -> Iterator[tuple[str, str, str]]:
    """(event, data, id) of each Server-Sent Event; comments skipped."""
    kind, data, event_id = "message", [], ""
    for line in lines:
        if not line:
            if data:
                yield kind, "\n".join(data), event_id
            kind, data, event_id = "message", [], ""
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            kind = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            event_id = value
