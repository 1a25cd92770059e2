"""``/v1/runs``: start an agent's run, follow it live, talk to it, approve or stop it, fetch its
files.

A run is what a user starts, through any door; the engine (given to :func:`open_runs` by whoever
composes the API: ``skillweave api``) calls it a run, with the same id (``run-…``,
:mod:`skillweave.engines.run_id`). Here a run is started from a stored agent (``/v1/agents``)
with the user's input and optional files. The files are stored under the run (``runs/{id}/inputs/``)
before the run starts; the run's record (``runs/{id}/run.json``) keeps the agent as it was, so
changing or deleting the agent later does not change the run. The agent's skills are pinned when
the run starts: each at the version the library holds then (its package put in the store), so
uploading a new version, or deleting the skill, while the run goes on does not change what the
run activates, reads or runs. No skill vanishes silently: a run whose agent lists a skill that
is deleted, disabled, or whose name now resolves to another source than the listing shows
(shadowed) is refused with a 409 naming the skill and the reason, and nothing is started.

Every run on the engine is served, not only those started here. On the temporal engine a run
started by another door (``skillweave run``, ``demo``, any Temporal client) has no record: the
listing reads Temporal's visibility, and ``GET /v1/runs/{id}`` (and every route under it) is
made from the workflow (its start request in history, its status from the server; no worker
needed). On the direct engine runs live in this process: when the API starts, a record still
``running`` is one whose run died with the previous process, and it is marked ``failed`` with a
reason that says so (:data:`LOST_REASON`), so that it is never shown running for ever.

``GET /v1/runs/{id}/events`` is Server-Sent Events: one event per step of the run (``event:``
its kind, ``data:`` the JSON event, ``id:`` its position from 1), ending after
``run_finished`` (with ``?follow=false``: after the events there are now). A client that
reconnects with ``Last-Event-ID: N`` gets the events after the N-th. Comments
(``: keep-alive``) keep idle connections open through proxies. ``GET /v1/runs/{id}/status`` is
what the run does now (temporal: phase, turn, usage, the approval it waits on, and ``limits``:
the timeouts and attempts its steps run under, its worker's, once the run has asked for them);
``POST /v1/runs/{id}/approvals`` decides that approval, ``POST /v1/runs/{id}/cancel`` stops it.
``GET /v1/runs/{id}`` of a running run has ``waiting``: what its steps wait for now (``on``: a
manager, a worker, a free sandbox…; ``detail``; ``since``; ``call``), read from the engine
(temporal: the workflow's pending activities, no worker needed; direct: the run's current wait).

On the temporal engine the stream outlives the run's workers. Notes of the stream, not steps
of the run, come without an ``id:`` (so ``Last-Event-ID`` stays on the last step), with a JSON
``data:`` of ``kind``, ``run_id``, ``task_queue``, ``waited_seconds`` and ``dropped``:
``waiting_for_worker`` while no worker answers (at most every 5 s, the stream goes on),
``worker_answered`` when one does again, ``events_dropped`` when steps older than the
workflow's window were not read. On either engine, ``waiting`` tells what a step waits for
(``waiting``: ``on``, ``detail``, ``since``, ``call``; ``detail``: the line, "script x/y.py:
waiting for the MCP manager since 07:31:02 UTC (0 s): …"), when it begins and every 30 s
while it lasts. On either engine, ``retrying`` tells each retry of a model or
sandbox call (``retry``: ``call``, ``attempt``, ``attempts``, ``wait_seconds``, ``cause``;
``detail``: the line, "model openai:x: attempt 2 of 8 failed: HTTP 503 Service Unavailable;
retrying in 2.0 s"). After ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS`` without a
worker the stream ends with ``worker_wait_expired`` (``detail`` and ``last_event_id`` too):
the run may still be running; reconnect with ``Last-Event-ID`` to follow it again.

Every ``data:`` also has ``text``: the line the CLI shows for it, ``label · text``
(``skillweave.agent.rendering.event_line``, ``skillweave.engines.notes.note_line``), so a
client shows every kind, a newer one too, without a table of its own.

The routes are here; the services under them are :mod:`skillweave.api.run_service` and its
parts (launcher, reader, control, artifacts, records), :mod:`skillweave.api.skill_pins` and
:mod:`skillweave.api.run_events`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Header, Query, Response, UploadFile, status
from fastapi.responses import JSONResponse, StreamingResponse

from skillweave.api.deps import Runs
from skillweave.api.problems import ApiProblem, problem, problem_response
from skillweave.api.run_events import server_sent_events
from skillweave.api.run_schemas import Approval, Artifact, Cancel, Message, Run, RunPage
from skillweave.api.run_service import RunService
from skillweave.api.state import ApiComposition, StartupHook
from skillweave.engines import Engine, RunView
from skillweave.errors import SkillUnavailableError

__all__ = ["open_runs", "router"]


def open_runs(engine: Engine) -> StartupHook:
    """A startup hook that serves runs on `engine` (after ``open_agents``, and after
    ``open_skills`` when the app serves skills); on the direct engine it first marks the runs
    an earlier process left running as lost."""

    async def hook(parts: ApiComposition) -> None:
        runs = RunService(
            engine,
            store=parts.store,
            model=parts.settings.model,
            agents=parts.agent_store("open_runs"),
            skills=parts.skills,
        )
        await runs.mark_lost()
        parts.resources.push_async_callback(runs.close)  # its watchers stop with the app
        parts.runs = runs

    return hook


router = APIRouter(prefix="/v1/runs", tags=["runs"])


@router.post(
    "/",
    status_code=status.HTTP_201_CREATED,
    response_model=Run,
    responses={
        409: problem_response(
            "A skill the agent lists is deleted, disabled or shadowed; `errors` holds one entry"
            " with `skill` and `reason` (deleted, disabled or shadowed)"
        )
    },
)
async def start_run(
    runs: Runs,
    agent_id: Annotated[str, Form(max_length=64)],
    input: Annotated[str, Form(min_length=1, max_length=32_000)],
    files: Annotated[list[UploadFile], File(description="Input files for the run.")] = [],  # noqa: B006
) -> Run | JSONResponse:
    """Start a run of an agent on the configured engine (multipart form: agent_id, input,
    files)."""
    try:
        return await runs.launcher.start(agent_id, input, files)
    except SkillUnavailableError as exc:
        entry = {
            "loc": ["agent", "skill_ids"],
            "msg": str(exc),
            "skill": exc.name,
            "reason": exc.reason,
        }
        return problem(409, str(exc), title="Agent's skill unavailable", errors=[entry])


@router.get("/")
async def list_runs(
    runs: Runs,
    *,
    limit: int = 50,
    offset: int = 0,
    agent: Annotated[str | None, Query(max_length=200, description="Only this agent's.")] = None,
    phase: Annotated[
        str | None, Query(max_length=40, description="Only runs in this phase (e.g. completed).")
    ] = None,
    skill: Annotated[
        str | None, Query(max_length=200, description="Only runs with this skill active.")
    ] = None,
) -> RunPage:
    """Runs, newest first: every run on the engine, whichever door started it."""
    limit, offset = max(1, min(limit, 200)), max(0, offset)
    return await runs.reader.list(limit=limit, offset=offset, agent=agent, phase=phase, skill=skill)


@router.get("/{run_id}")
async def get_run(run_id: str, runs: Runs) -> Run:
    """One run: its agent, input, files, what it waits for while it runs, and how it ended
    (once it has)."""
    return await runs.reader.with_waiting(await runs.reader.get(run_id))


@router.get(
    "/{run_id}/status",
    responses={
        409: problem_response("The engine keeps no status view (direct)"),
        503: problem_response("No worker answered (temporal); the run may still be running"),
    },
)
async def run_status(run_id: str, runs: Runs) -> RunView:
    """What the run does now: phase, turn, usage, the approval it waits on, the limits its
    steps run under (its worker's) (temporal)."""
    return await runs.reader.status(run_id)


@router.post("/{run_id}/messages", status_code=status.HTTP_202_ACCEPTED)
async def send_message(run_id: str, body: Message, runs: Runs) -> dict[str, bool]:
    """A follow-up message for a run that is running (taken before its next model call)."""
    await runs.control.send(await runs.reader.get(run_id), body.text)
    return {"accepted": True}


@router.post("/{run_id}/cancel", status_code=status.HTTP_202_ACCEPTED)
async def cancel_run(run_id: str, runs: Runs, body: Cancel | None = None) -> dict[str, bool]:
    """Stop a run and wait until it has stopped; its result says cancelled (with the
    reason, on the temporal engine)."""
    await runs.control.cancel(await runs.reader.get(run_id), (body or Cancel()).reason)
    return {"cancelled": True}


@router.post(
    "/{run_id}/approvals",
    status_code=status.HTTP_202_ACCEPTED,
    responses={409: problem_response("The run waits on no approval, or has ended")},
)
async def approve_run(run_id: str, body: Approval, runs: Runs) -> dict[str, bool]:
    """Approve (or deny) the script run the run is waiting on."""
    run = await runs.reader.get(run_id)
    await runs.control.decide(run, approved=body.approved, note=body.note)
    return {"approved": body.approved}


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def run_events(
    run_id: str,
    runs: Runs,
    last_event_id: Annotated[str | None, Header()] = None,
    follow: Annotated[
        bool, Query(description="false: end after the events there are now, not at the end.")
    ] = True,
) -> StreamingResponse:
    """The run's events as Server-Sent Events, resumable with Last-Event-ID."""
    run = await runs.reader.get(run_id)
    try:
        after = max(0, int(last_event_id)) if last_event_id else 0
    except ValueError:
        raise ApiProblem(400, "Last-Event-ID must be a number") from None
    return StreamingResponse(
        server_sent_events(runs.engine, run.id, after, until_finished=follow),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/{run_id}/artifacts")
async def list_artifacts(run_id: str, runs: Runs) -> list[Artifact]:
    """The run's files: its inputs and every file its scripts wrote."""
    return await runs.artifacts.list(await runs.reader.get(run_id))


@router.get("/{run_id}/artifacts/{path:path}", response_class=Response)
async def get_artifact(run_id: str, path: str, runs: Runs) -> Response:
    """One of the run's files (see the listing for the paths)."""
    ref, data = await runs.artifacts.read(await runs.reader.get(run_id), path)
    return Response(data, media_type=ref.content_type or "application/octet-stream")
