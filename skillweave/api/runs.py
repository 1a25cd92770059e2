"""``/v1/runs``: start an agent's job, follow it live, talk to it, stop it, fetch its files.

A run is a job of the configured engine (given to :func:`open_runs` by whoever
composes the API: ``skillweave api``), started from a stored agent (``/v1/agents``) with the
user's input and optional files. The files are stored under the run (``runs/{id}/inputs/``)
before the job starts; the run's record (``runs/{id}/run.json``) keeps the agent as it was, so
changing or deleting the agent later does not change the run. The agent's skills are pinned when
the run starts: each at the version the library holds then (its package put in the store), so
uploading a new version, or deleting the skill, while the run goes on does not change what the
run activates, reads or runs. No skill vanishes silently: a run whose agent lists a skill that
is deleted, disabled, or whose name now resolves to another source than the listing shows
(shadowed) is refused with a 409 naming the skill and the reason, and nothing is started.

``GET /v1/runs/{id}/events`` is Server-Sent Events: one event per step of the job (``event:``
its kind, ``data:`` the JSON event, ``id:`` its position from 1), ending after
``job_finished``. A client that reconnects with ``Last-Event-ID: N`` gets the events after
the N-th. Comments (``: keep-alive``) keep idle connections open through proxies.

On the temporal engine the stream outlives the job's workers. Notes of the stream, not steps
of the job, come without an ``id:`` (so ``Last-Event-ID`` stays on the last step), with a JSON
``data:`` of ``kind``, ``job_id``, ``task_queue``, ``waited_seconds`` and ``dropped``:
``waiting_for_worker`` while no worker answers (at most every 5 s, the stream goes on),
``worker_answered`` when one does again, ``events_dropped`` when steps older than the
workflow's window were not read. After ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS`` without a
worker the stream ends with ``worker_wait_expired`` (``detail`` and ``last_event_id`` too):
the run may still be running; reconnect with ``Last-Event-ID`` to follow it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Any, Final

from fastapi import APIRouter, Depends, File, Form, Header, Response, UploadFile, status
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from skillweave.agent.events import AgentEvent
from skillweave.agent.spec import PinnedSkill
from skillweave.api.agents import Agent, AgentStore
from skillweave.api.app import ApiState, provided, state_of
from skillweave.api.problems import ApiProblem, problem, problem_response
from skillweave.api.records import read_record
from skillweave.engines.base import Engine, JobRequest, JobResult
from skillweave.errors import (
    AgentError,
    ConfigError,
    InvalidKeyError,
    PackageError,
    SkillNotFoundError,
    SkillUnavailableError,
    SkillweaveError,
)
from skillweave.llm.factory import describe_model, resolve_model
from skillweave.sandbox.packages import publish_skill
from skillweave.skills import Skill, SkillRegistry
from skillweave.skills.names import is_scope
from skillweave.skills.stored import StoredSkill
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef

__all__ = ["Run", "RunSummary", "open_runs", "router"]

_KEEP_ALIVE_SECONDS: Final = 15.0
_MAX_FILES: Final = 32


class Run(BaseModel):
    """A run as stored and returned."""

    id: str
    agent_id: str
    agent: Agent = Field(description="The agent as it was when the run started.")
    input: str
    inputs: list[ArtifactRef] = Field(default_factory=list)
    skills: list[PinnedSkill] | None = Field(
        default=None,
        description="The skills the run uses, at the versions they had when it started.",
    )
    model: str | None = Field(
        default=None,
        description=(
            "The model the agent names, as provider:name (with its profile); None: the default"
            " model of the engine that runs it. Each model_called event names the model that"
            " answered."
        ),
    )
    created_at: datetime
    status: str = Field(default="running", description="running, or how the job ended.")
    result: JobResult | None = None


class RunSummary(BaseModel):
    """A run as listed: from the run records (direct engine) or Temporal visibility."""

    id: str
    status: str
    agent: str | None = Field(default=None, description="The agent's name.")
    created_at: datetime
    closed_at: datetime | None = None


class RunPage(BaseModel):
    items: list[RunSummary]
    total: int | None = Field(description="None when the listing is a page of visibility.")
    limit: int
    offset: int


class Message(BaseModel):
    text: str = Field(min_length=1, max_length=32_000)


class Artifact(BaseModel):
    path: str = Field(description="Path under the run: inputs/…, executions/…/outputs/…")
    size: int
    sha256: str


class RunService:
    """Runs over one engine, their records in the store."""

    def __init__(self, state: ApiState, engine: Engine, agents: AgentStore) -> None:
        self.state = state
        self.engine = engine
        self.agents = agents
        self._results: dict[str, JobResult] = {}
        self._watchers: set[asyncio.Task[None]] = set()

    async def start(self, agent_id: str, text: str, files: list[UploadFile]) -> Run:
        agent = await self.agents.get(agent_id)  # its id or its slug
        if agent is None:
            raise ApiProblem(422, f"no agent {agent_id!r}", title="Unknown agent")
        if len(files) > _MAX_FILES:
            raise ApiProblem(422, f"at most {_MAX_FILES} files per run")
        model = self._model_of(agent)
        pinned = await self._pin(agent)
        run_id = f"run-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"
        names = [_file_name(upload) for upload in files]
        if len(set(names)) != len(names):
            raise ApiProblem(422, "two files have the same name")
        store = self.state.store
        inputs = []
        for name, upload in zip(names, files, strict=True):
            inputs.append(
                await store.put_bytes(
                    keys.run_input_key(run_id, name),
                    await upload.read(),
                    content_type=upload.content_type or "application/octet-stream",
                )
            )
        run = Run(
            id=run_id,
            agent_id=agent.id,
            agent=agent,
            input=text,
            inputs=inputs,
            skills=None if pinned is None else list(pinned),
            model=model,
            created_at=datetime.now(UTC),
        )
        await self._save(run)
        spec = agent.to_spec().model_copy(update={"pinned": pinned})
        await self.engine.start(
            JobRequest(job_id=run_id, task=text, agent=spec, inputs=tuple(inputs))
        )
        watcher = asyncio.create_task(self._record_end(run))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return run

    def _model_of(self, agent: Agent) -> str | None:
        """The model the agent names, as the run record shows it (None: the default); it
        must still resolve (settings may have changed since the agent was made)."""
        if not agent.model_id:
            return None
        try:
            profile = resolve_model(self.state.settings.model, agent.model_id)
        except ConfigError as exc:
            raise ApiProblem(422, f"the agent's model_id: {exc}", title="Unknown model") from None
        return describe_model(profile, agent.model_id)

    async def _pin(self, agent: Agent) -> tuple[PinnedSkill, ...] | None:
        """The agent's skills (their trees too) at their current versions, each package put
        in the store, so that the run sees them whatever the library holds later. A skill the
        agent lists must be there, enabled, and resolve to the owner the listing shows
        (:meth:`_check_available`); inside its tree, disabled skills and the trees under them
        are left out, as a job would not see them.

        Raises:
            SkillUnavailableError: a listed skill is deleted, disabled or shadowed.
        """
        registry = self.state.registry
        if registry is None:  # an API composed without the skills routes: nothing to pin
            return None
        listed: list[str] = []
        for entry in dict.fromkeys(agent.skill_ids):
            if is_scope(entry):  # a namespace: what it holds now (its disabled skills left out)
                held = [name for name in registry.resolve(entry) if registry.is_enabled(name)]
                if not held:
                    raise SkillUnavailableError(
                        entry,
                        reason="deleted",
                        detail="no enabled skill is in that namespace any more; change the "
                        "agent's skill_ids",
                    )
                listed += held
            else:
                listed.append(registry.canonical(entry) or entry)
        listed = list(dict.fromkeys(listed))
        await self._check_available(registry, listed)
        try:
            view = registry.restricted(listed)
        except SkillNotFoundError as exc:  # pragma: no cover - checked just above
            raise SkillUnavailableError(
                exc.name, reason="deleted", detail="no skill of that name exists any more"
            ) from None

        def visible(skill: Skill) -> bool:
            if not view.is_enabled(skill.name):
                return False
            if skill.name in listed:  # listed itself: a root of the run, whatever its parent
                return True
            return skill.parent is not None and visible(view.get(skill.parent))

        pinned = []
        for skill in view:
            if visible(skill):
                try:
                    await publish_skill(self.state.store, skill)
                except (PackageError, InvalidKeyError) as exc:
                    raise ApiProblem(
                        409,
                        f"the agent's skill {skill.name!r} cannot be packaged for a run: {exc}",
                        title="Skill cannot run",
                    ) from None
                pinned.append(
                    PinnedSkill(name=skill.name, version=skill.version, parent=skill.parent)
                )
        return tuple(pinned)

    async def _check_available(self, registry: SkillRegistry, names: list[str]) -> None:
        """Refuse the run when a skill the agent lists would not be the one the listing shows.

        Raises:
            SkillUnavailableError: the first listed skill that is deleted, disabled or shadowed.
        """
        stored = self.state.stored_skills
        for name in names:
            record = await stored.get(name) if stored is not None else None
            refusal = _unavailable(name, registry, record)
            if refusal is not None:
                raise refusal

    async def _record_end(self, run: Run) -> None:
        result = await self.engine.result(run.id)
        self._results[run.id] = result
        await self._save(run.model_copy(update={"status": result.status, "result": result}))

    async def _save(self, run: Run) -> None:
        await self.state.store.put_bytes(
            keys.run_record_key(run.id),
            run.model_dump_json().encode(),
            content_type="application/json",
        )

    async def get(self, run_id: str) -> Run:
        try:
            data = await read_record(self.state.store, keys.run_record_key(run_id))
        except InvalidKeyError:
            data = None
        if data is None:
            raise ApiProblem(404, f"no run {run_id!r}")
        run = Run.model_validate_json(data)
        if run.result is not None:
            return run
        result = self._results.get(run_id)
        if result is not None:
            return run.model_copy(update={"status": result.status, "result": result})
        describe = getattr(self.engine, "describe", None)
        if describe is not None:  # temporal: the job may have ended while no API watched it
            with contextlib.suppress(AgentError):
                row = await describe(run_id)
                if row.status != "running":
                    result = await self.engine.result(run_id)
                    self._results[run_id] = result
                    return run.model_copy(update={"status": result.status, "result": result})
        return run

    async def list(self, *, limit: int, offset: int) -> RunPage:
        """Newest first: Temporal's visibility on the temporal engine (every job, also those
        started from the CLI), else the run records."""
        list_jobs = getattr(self.engine, "list_jobs", None)
        if list_jobs is not None:
            rows = await list_jobs(limit=offset + limit)
            items = [
                RunSummary(
                    id=row.job_id,
                    status=row.status,
                    agent=row.agent,
                    created_at=row.start_time,
                    closed_at=row.close_time,
                )
                for row in rows[offset:]
            ]
            return RunPage(items=items, total=None, limit=limit, offset=offset)
        runs = []
        for ref in await self.state.store.list("runs/"):
            if ref.key.endswith("/run.json") and ref.key.count("/") == 2:
                data = await read_record(self.state.store, ref.key)
                if data is not None:
                    runs.append(Run.model_validate_json(data))
        runs.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        # A run whose end this API saw but whose record is still being written is listed
        # as it ended, as GET /v1/runs/{id} shows it.
        items = [
            RunSummary(
                id=r.id,
                status=self._results[r.id].status if r.id in self._results else r.status,
                agent=r.agent.name,
                created_at=r.created_at,
            )
            for r in runs[offset : offset + limit]
        ]
        return RunPage(items=items, total=len(runs), limit=limit, offset=offset)

    async def close(self) -> None:
        for watcher in list(self._watchers):
            watcher.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)


def _unavailable(
    name: str, registry: SkillRegistry, record: StoredSkill | None
) -> SkillUnavailableError | None:
    """Why the skill `name` an agent lists cannot be given to a run, or None when it can.

    The listing (``/v1/skills``) shows `name` as a directory skill or as the uploaded skill
    `record`; the run gets what the registry resolves `name` to. They must be the same owner.
    """
    change = "change the agent's skill_ids"
    if name in registry:
        skill = registry.get(name)
        owner = registry.owner_of(name)
        if owner.kind == "directory" and record is not None:
            return SkillUnavailableError(
                name,
                reason="shadowed",
                detail=f"the directory skill at {skill.path} and the uploaded skill {name!r} both"
                " claim the name, and runs would get the directory one; delete the upload or"
                f" {change}",
            )
        if owner.kind == "uploaded" and owner.source != name:
            # The name now belongs to a child of another upload: not the skill the agent listed.
            if record is not None and not record.enabled:
                return _disabled_upload(name)
            gone = "deleted" if record is None else "shadowed"
            return SkillUnavailableError(
                name,
                reason=gone,
                detail=f"the skill the agent listed is {gone}; the name now resolves to a child"
                f" skill of {owner}; {change}",
            )
        if not registry.is_enabled(name):
            why = (
                "SKILLS__DISABLED or its own `enabled: false`"
                if owner.kind == "directory"
                else "its own `enabled: false`"
            )
            return SkillUnavailableError(
                name, reason="disabled", detail=f"it is switched off ({why}); {change}"
            )
        return None
    if record is not None and not record.enabled:
        return _disabled_upload(name)
    holder = registry.claimant(name)
    if holder is not None:
        return SkillUnavailableError(
            name,
            reason="shadowed",
            detail=f"the name resolves to the skill {holder.name!r} of"
            f" {registry.owner_of(holder.name)} (names are compared case-insensitively);"
            f" {change}",
        )
    if record is not None:
        return SkillUnavailableError(
            name,
            reason="shadowed",
            detail=f"the uploaded skill is not served: another source owns its name; {change}",
        )
    return SkillUnavailableError(
        name, reason="deleted", detail=f"no skill of that name exists any more; {change}"
    )


def _disabled_upload(name: str) -> SkillUnavailableError:
    return SkillUnavailableError(
        name,
        reason="disabled",
        detail=f"the uploaded skill is switched off; enable it (PATCH /v1/skills/{name}) or"
        " change the agent's skill_ids",
    )


def _file_name(upload: UploadFile) -> str:
    name = (upload.filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    if not name or name in (".", "..") or "\0" in name:
        raise ApiProblem(422, f"file name {upload.filename!r} is not usable")
    return name


def open_runs(engine: Engine) -> Any:
    """A startup hook that serves runs on `engine` (the agents hook must run first)."""

    async def hook(state: ApiState) -> None:
        state.runs = RunService(state, engine, provided(state.agents, "open_agents"))

    return hook


async def _runs(state: Annotated[ApiState, Depends(state_of)]) -> RunService:
    return provided(state.runs, "open_runs")


Runs = Annotated[RunService, Depends(_runs)]

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
        return await runs.start(agent_id, input, files)
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
    limit: int = 50,
    offset: int = 0,
) -> RunPage:
    """Runs, newest first."""
    limit, offset = max(1, min(limit, 200)), max(0, offset)
    return await runs.list(limit=limit, offset=offset)


@router.get("/{run_id}")
async def get_run(run_id: str, runs: Runs) -> Run:
    """One run: its agent, input, files, and how it ended (once it has)."""
    return await runs.get(run_id)


@router.post("/{run_id}/messages", status_code=status.HTTP_202_ACCEPTED)
async def send_message(run_id: str, body: Message, runs: Runs) -> dict[str, bool]:
    """A follow-up message for a running job (taken before its next model call)."""
    run = await runs.get(run_id)
    try:
        await runs.engine.send(run.id, body.text)
    except AgentError as exc:
        raise ApiProblem(409, str(exc)) from None
    return {"accepted": True}


@router.post("/{run_id}/cancel", status_code=status.HTTP_202_ACCEPTED)
async def cancel_run(run_id: str, runs: Runs) -> dict[str, bool]:
    """Stop a run; its result says cancelled."""
    run = await runs.get(run_id)
    if run.result is not None:
        raise ApiProblem(409, f"run {run_id!r} has ended ({run.status})")
    await runs.engine.cancel(run.id)
    return {"cancelled": True}


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def run_events(
    run_id: str,
    runs: Runs,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """The run's events as Server-Sent Events, resumable with Last-Event-ID."""
    run = await runs.get(run_id)
    try:
        after = max(0, int(last_event_id)) if last_event_id else 0
    except ValueError:
        raise ApiProblem(400, "Last-Event-ID must be a number") from None
    return StreamingResponse(
        _sse(runs.engine, run.id, after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _sse(engine: Engine, run_id: str, after: int) -> AsyncIterator[bytes]:
    follow = getattr(engine, "follow", None)
    events: Any
    if follow is not None:  # temporal: from the N-th event itself, with notes between events
        events = follow(run_id, after=after).__aiter__()
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
            done, _ = await asyncio.wait({next_event}, timeout=_KEEP_ALIVE_SECONDS)
            if not done:
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
                yield f"event: {event.kind}\ndata: {event.model_dump_json()}\n\n".encode()
                continue
            position += 1
            if position <= after:
                continue
            data = event.model_dump_json()
            yield f"id: {position}\nevent: {event.kind}\ndata: {data}\n\n".encode()
    finally:
        if next_event is not None:
            next_event.cancel()
        with contextlib.suppress(Exception):
            await events.aclose()  # type: ignore[attr-defined]


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
        "job_id": exc.job_id,
        "task_queue": exc.task_queue,
        "waited_seconds": exc.waited_seconds,
        "last_event_id": position,
        "detail": f"{exc}; reconnect with Last-Event-ID: {position} to follow it again",
    }
    return f"event: worker_wait_expired\ndata: {json.dumps(data)}\n\n".encode()


@router.get("/{run_id}/artifacts")
async def list_artifacts(run_id: str, runs: Runs) -> list[Artifact]:
    """The run's files: its inputs and every file its scripts wrote."""
    run = await runs.get(run_id)
    prefix = keys.run_prefix(run.id)
    return [
        Artifact(path=ref.key.removeprefix(prefix), size=ref.size, sha256=ref.sha256)
        for ref in await runs.state.store.list(prefix)
        if "/inputs/" in ref.key or "/outputs/" in ref.key
    ]


@router.get("/{run_id}/artifacts/{path:path}", response_class=Response)
async def get_artifact(run_id: str, path: str, runs: Runs) -> Response:
    """One of the run's files (see the listing for the paths)."""
    run = await runs.get(run_id)
    if "/inputs/" not in f"/{path}" and "/outputs/" not in f"/{path}":
        raise ApiProblem(404, f"no artifact {path!r} in run {run_id!r}")
    try:
        key = keys.validate_key(f"{keys.run_prefix(run.id)}{path}")
        ref = await runs.state.store.stat(key)
    except InvalidKeyError:
        ref = None
    if ref is None:
        raise ApiProblem(404, f"no artifact {path!r} in run {run_id!r}")
    data = await runs.state.store.get_bytes(ref)
    return Response(data, media_type=ref.content_type or "application/octet-stream")
