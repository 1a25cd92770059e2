"""``/v1/runs``: start an agent's run, follow it live, talk to it, approve or stop it, fetch its
files.

A run is what a user starts, through any door; the engine (given to :func:`open_runs` by whoever
composes the API: ``skillweave api``) calls it a job, with the same id (``run-…``,
:mod:`skillweave.engines.run_id`). Here a run is started from a stored agent (``/v1/agents``)
with the user's input and optional files. The files are stored under the run (``runs/{id}/inputs/``)
before the job starts; the run's record (``runs/{id}/run.json``) keeps the agent as it was, so
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
``job_finished`` (with ``?follow=false``: after the events there are now). A client that
reconnects with ``Last-Event-ID: N`` gets the events after the N-th. Comments
(``: keep-alive``) keep idle connections open through proxies. ``GET /v1/runs/{id}/status`` is
what the run does now (temporal: phase, turn, usage, the approval it waits on, and ``limits``:
the timeouts and attempts its steps run under, its worker's, once the run has asked for them);
``POST /v1/runs/{id}/approvals`` decides that approval, ``POST /v1/runs/{id}/cancel`` stops it.
``GET /v1/runs/{id}`` of a running run has ``waiting``: what its steps wait for now (``on``: a
manager, a worker, a free sandbox…; ``detail``; ``since``; ``call``), read from the engine
(temporal: the workflow's pending activities, no worker needed; direct: the job's current wait).

On the temporal engine the stream outlives the run's workers. Notes of the stream, not steps
of the run, come without an ``id:`` (so ``Last-Event-ID`` stays on the last step), with a JSON
``data:`` of ``kind``, ``job_id``, ``task_queue``, ``waited_seconds`` and ``dropped``:
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
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Final, get_args

from fastapi import APIRouter, Depends, File, Form, Header, Query, Response, UploadFile, status
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from skillweave.agent.events import AgentEvent
from skillweave.agent.rendering import Line, event_line, generic_line
from skillweave.agent.runtime import ApprovalDecision
from skillweave.agent.spec import PinnedSkill
from skillweave.api.agents import Agent, AgentStore
from skillweave.api.app import ApiState, provided, state_of
from skillweave.api.problems import ApiProblem, problem, problem_response
from skillweave.api.records import read_record
from skillweave.engines.base import Engine, JobRequest, JobResult
from skillweave.engines.contract import JobView, Phase
from skillweave.engines.notes import note_line
from skillweave.engines.run_id import new_run_id
from skillweave.engines.services import AgentServices
from skillweave.errors import (
    AgentError,
    ConfigError,
    InvalidKeyError,
    PackageError,
    SkillNotFoundError,
    SkillUnavailableError,
    SkillweaveError,
)
from skillweave.llm.factory import (
    default_model_name,
    default_model_problem,
    describe_model,
    resolve_model,
)
from skillweave.sandbox.packages import publish_skill
from skillweave.skills import Skill, SkillRegistry
from skillweave.skills.names import is_scope
from skillweave.skills.stored import StoredSkill
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef
from skillweave.waiting import Waiting

__all__ = ["LOST_REASON", "Run", "RunSummary", "open_runs", "router"]

logger = logging.getLogger("skillweave.api")

_KEEP_ALIVE_SECONDS: Final = 15.0
_CAUGHT_UP_SECONDS: Final = 0.5
"""Without ``follow``, the event stream ends once no new event came for this long."""
_MAX_FILES: Final = 32
_STATUS_TIMEOUT: Final = timedelta(seconds=5)
"""How long ``GET /v1/runs/{id}/status`` waits for a worker to answer (temporal)."""
LOST_REASON: Final = (
    "lost: the API restarted while it ran; direct-engine runs do not survive a restart — "
    "use the temporal engine (WORKFLOW__EXECUTION_ENGINE=temporal)"
)
"""Why a direct-engine run that was running when its API stopped ended."""


class Run(BaseModel):
    """A run as stored and returned."""

    id: str
    agent_id: str | None = Field(
        description="The stored agent it ran; None for a run another door started (the CLI)."
    )
    agent: Agent | None = Field(
        description="The agent as it was when the run started; None for a run another door "
        "started (agent_name names its agent)."
    )
    agent_name: str | None = Field(
        default=None,
        description="The agent's name as the engine knows it (a stored agent's slug), as the "
        "listing shows it.",
    )
    input: str
    inputs: list[ArtifactRef] = Field(default_factory=list)
    skills: list[PinnedSkill] | None = Field(
        default=None,
        description="The skills the run uses, at the versions they had when it started.",
    )
    model: str | None = Field(
        default=None,
        description=(
            "The model that runs it, as provider:name (with its profile): the one the agent"
            " names, else the API's default model, given to the job by name. None only for a"
            " run another door started without naming one (its worker's default runs it)."
            " Each model_called event names the model that answered."
        ),
    )
    created_at: datetime
    status: str = Field(default="running", description="running, or how the run ended.")
    result: JobResult | None = None
    waiting: list[Waiting] = Field(
        default_factory=list,
        description="What the running run's steps wait for now (a manager, a worker, a free "
        "sandbox…) and since when; empty when nothing waits. Not stored: read when asked.",
    )


class Approval(BaseModel):
    """What ``POST /v1/runs/{id}/approvals`` takes: the decision on the script run the run
    waits on."""

    approved: bool
    note: str = Field(default="", max_length=2_000, description="Why (the model sees it).")


class Cancel(BaseModel):
    """What ``POST /v1/runs/{id}/cancel`` may take."""

    reason: str = Field(
        default="cancelled by the user", min_length=1, max_length=500, description="Why."
    )


class RunSummary(BaseModel):
    """A run as listed: from the run records (direct engine) or Temporal visibility (every
    run on the namespace, whichever door started it)."""

    id: str
    status: str
    agent: str | None = Field(default=None, description="The agent's name.")
    created_at: datetime
    closed_at: datetime | None = None
    phase: str | None = Field(
        default=None, description="What it does now, or how it ended (temporal engine)."
    )
    turns: int | None = None
    tokens: int | None = None
    active_skills: list[str] = Field(default_factory=list)


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
        named, model = await self._model_of(agent)
        pinned = await self._pin(agent)
        run_id = new_run_id()
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
            agent_name=agent.slug,
            input=text,
            inputs=inputs,
            skills=None if pinned is None else list(pinned),
            model=model,
            created_at=datetime.now(UTC),
        )
        await self._save(run)
        spec = agent.to_spec().model_copy(update={"pinned": pinned, "model": named})
        await self.engine.start(
            JobRequest(job_id=run_id, task=text, agent=spec, inputs=tuple(inputs))
        )
        watcher = asyncio.create_task(self._record_end(run))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return run

    async def _model_of(self, agent: Agent) -> tuple[str | None, str]:
        """The model that runs the agent's job: as the job names it and as the run record
        shows it (``provider:name``). It is the agent's model_id, which must resolve here now
        (settings may have changed since the agent was made), else the engine's default: on
        the temporal engine this API's (``MODEL__*``), else the one default every worker
        polling the task queue names (its identity says it), named to the job explicitly
        (``llm.factory.default_model_name``, so that the worker runs exactly that model or
        refuses); on the direct engine the one it opened. No default: refused (422)."""
        model = self.state.settings.model
        if agent.model_id:
            try:
                profile = resolve_model(model, agent.model_id)
            except ConfigError as exc:
                raise ApiProblem(
                    422, f"the agent's model_id: {exc}", title="Unknown model"
                ) from None
            return agent.model_id, describe_model(profile, agent.model_id)
        local: AgentServices | None = getattr(self.engine, "services", None)
        if local is None:  # the temporal engine: its workers hold the model's keys
            missing = default_model_problem(model, runs_here=False)
            if missing is not None:
                return await self._workers_default(missing)
        elif local.provider is None:
            missing = default_model_problem(model) or "it could not be opened"
        else:  # the direct engine: its jobs run here, on its default
            if local.models is None:  # a process of one model: nothing else to run
                return None, local.provider.name
            model, missing = local.models.settings, None
        if missing is not None:
            raise ApiProblem(
                422,
                f"the agent names no model (model_id) and this server has no default model"
                f" ({missing}): give the agent a model_id, a profile of"
                " MODEL__PROFILES__<NAME>__* or PROVIDER:NAME",
                title="No model",
            )
        return default_model_name(model), f"{model.provider}:{model.name}"

    async def _workers_default(self, missing: str) -> tuple[str, str]:
        """The default model of the workers of the temporal engine's task queue, when they all
        name the same one (this API has none: `missing` says why).

        Raises:
            ApiProblem: 422 when no worker names one or they disagree; 503 when the task
                queue cannot be read.
        """
        read = getattr(self.engine, "worker_default_models", None)
        try:
            defaults = sorted(await read()) if read is not None else []
        except AgentError as exc:
            raise ApiProblem(503, str(exc), title="Temporal unavailable") from None
        if len(defaults) == 1:
            return default_model_name(defaults[0]), defaults[0]
        workers = (
            f"the workers polling its task queue disagree ({', '.join(defaults)})"
            if defaults
            else "no worker polling its task queue has one"
        )
        raise ApiProblem(
            422,
            f"the agent names no model (model_id), this server has no default model"
            f" ({missing}) and {workers}: give the agent a model_id, a profile of"
            " MODEL__PROFILES__<NAME>__* or PROVIDER:NAME",
            title="No model",
        )

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
            run.model_dump_json(exclude={"waiting"}).encode(),
            content_type="application/json",
        )

    async def get(self, run_id: str) -> Run:
        """The run `run_id`: its record, with how it ended once it has; on the temporal
        engine a run without a record (another door started it) is made from its workflow.

        Raises:
            ApiProblem: 404, there is no such run.
        """
        try:
            data = await read_record(self.state.store, keys.run_record_key(run_id))
        except InvalidKeyError:  # not a run id: nothing to ask the engine about either
            raise ApiProblem(404, f"no run {run_id!r}") from None
        if data is None:
            run = await self._from_engine(run_id)
            if run is None:
                raise ApiProblem(404, f"no run {run_id!r}")
            return run
        run = Run.model_validate_json(data)
        if run.result is not None:
            return run
        return await self._ended(run)

    async def _ended(self, run: Run) -> Run:
        """`run` as it ended, when it has (known here, or said by the temporal engine)."""
        result = self._results.get(run.id)
        if result is not None:
            return run.model_copy(update={"status": result.status, "result": result})
        describe = getattr(self.engine, "describe", None)
        if describe is not None:  # temporal: the run may have ended while no API watched it
            with contextlib.suppress(AgentError):
                row = await describe(run.id)
                if row.status != "running":
                    result = await self.engine.result(run.id)
                    self._results[run.id] = result
                    return run.model_copy(update={"status": result.status, "result": result})
        return run

    async def _from_engine(self, run_id: str) -> Run | None:
        """A run this API has no record of, from the temporal engine: its start request (from
        the workflow's history) and how it ended; None when the engine does not know it."""
        describe = getattr(self.engine, "describe", None)
        request_of = getattr(self.engine, "request", None)
        if describe is None or request_of is None:  # direct: every run of it has a record
            return None
        try:
            row = await describe(run_id)
            request: JobRequest = await request_of(run_id)
        except AgentError:
            return None
        spec = request.agent
        run = Run(
            id=run_id,
            agent_id=None,
            agent=None,
            agent_name=spec.name,
            input=request.task,
            inputs=list(request.inputs),
            skills=None if spec.pinned is None else list(spec.pinned),
            model=spec.model,
            created_at=row.start_time,
        )
        return await self._ended(run)

    async def with_waiting(self, run: Run) -> Run:
        """`run` with what its steps wait for now, while it runs: the engine's ``waiting``
        (temporal: from the workflow's pending activities; direct: the job's current wait).
        An engine that cannot say leaves it empty."""
        waiting = getattr(self.engine, "waiting", None)
        if run.result is not None or waiting is None:
            return run
        try:
            found: list[Waiting] = await waiting(run.id)
        except SkillweaveError as exc:
            logger.debug("cannot read what run %s waits for: %s", run.id, exc)
            return run
        return run.model_copy(update={"waiting": found})

    async def status(self, run_id: str) -> JobView:
        """What the run does now (the temporal engine's ``status`` query).

        Raises:
            ApiProblem: 404 no such run; 409 the engine keeps no status (direct); 503 no
                worker answered.
        """
        run = await self.get(run_id)
        status = getattr(self.engine, "status", None)
        if status is None:
            raise ApiProblem(
                409,
                "the direct engine keeps no status of a run: follow its events "
                f"(GET /v1/runs/{run.id}/events)",
            )
        try:
            return await status(run.id, timeout=_STATUS_TIMEOUT)
        except AgentError as exc:
            if getattr(exc, "task_queue", None) is not None:  # NoWorkerError: a worker may come
                raise ApiProblem(503, str(exc), title="No worker answered") from None
            raise ApiProblem(409, str(exc)) from None

    async def list(
        self,
        *,
        limit: int,
        offset: int,
        agent: str | None = None,
        phase: str | None = None,
        skill: str | None = None,
    ) -> RunPage:
        """Newest first: Temporal's visibility on the temporal engine (every run, also those
        started from the CLI or another client), else the run records.

        Raises:
            ApiProblem: 422, a filter the listing cannot apply.
        """
        list_jobs = getattr(self.engine, "list_jobs", None)
        if list_jobs is not None:
            try:
                rows = await list_jobs(agent=agent, phase=phase, skill=skill, limit=offset + limit)
            except ConfigError as exc:
                raise ApiProblem(422, str(exc)) from None
            items = [
                RunSummary(
                    id=row.job_id,
                    status=row.status,
                    agent=row.agent,
                    created_at=row.start_time,
                    closed_at=row.close_time,
                    phase=row.phase,
                    turns=row.turns,
                    tokens=row.tokens,
                    active_skills=list(row.active_skills),
                )
                for row in rows[offset:]
            ]
            return RunPage(items=items, total=None, limit=limit, offset=offset)
        if skill is not None:
            raise ApiProblem(
                422, "skill: the direct engine's runs cannot be listed by active skill"
            )
        phases = get_args(Phase)
        if phase is not None and phase not in phases:
            raise ApiProblem(422, f"phase: {phase!r} is not a phase (one of {', '.join(phases)})")
        summaries = []
        for run in await self._records():
            status = self._results[run.id].status if run.id in self._results else run.status
            name = run.agent_name or (run.agent.slug if run.agent is not None else None)
            if agent is not None and agent not in (name, run.agent_id):
                continue
            # Without a status view, a running run's phase is unknown: only how it ended.
            if phase is not None and status != phase:
                continue
            # A run whose end this API saw but whose record is still being written is listed
            # as it ended, as GET /v1/runs/{id} shows it.
            summaries.append(
                RunSummary(
                    id=run.id,
                    status=status,
                    agent=name,
                    created_at=run.created_at,
                    phase=None if status == "running" else status,
                )
            )
        items = summaries[offset : offset + limit]
        return RunPage(items=items, total=len(summaries), limit=limit, offset=offset)

    async def _records(self) -> list[Run]:
        """Every run record in the store, newest first."""
        runs = []
        for ref in await self.state.store.list("runs/"):
            if ref.key.endswith("/run.json") and ref.key.count("/") == 2:
                data = await read_record(self.state.store, ref.key)
                if data is not None:
                    runs.append(Run.model_validate_json(data))
        runs.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return runs

    async def mark_lost(self) -> list[str]:
        """On an engine whose runs live in this process (direct), end every record still
        ``running``: no run of this process owns it, so it died with an earlier one. Called
        once when the API starts; returns the ids marked."""
        if getattr(self.engine, "describe", None) is not None:  # temporal: runs outlive the API
            return []
        lost = []
        for run in await self._records():
            if run.status != "running" or run.result is not None or run.id in self._results:
                continue
            result = JobResult(job_id=run.id, status="failed", reason=LOST_REASON)
            await self._save(run.model_copy(update={"status": "failed", "result": result}))
            lost.append(run.id)
        if lost:
            logger.warning(
                "marked %d run(s) of an earlier API process as lost: %s", len(lost), ", ".join(lost)
            )
        return lost

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
    """A startup hook that serves runs on `engine` (the agents hook must run first); on the
    direct engine it first marks the runs an earlier process left running as lost."""

    async def hook(state: ApiState) -> None:
        runs = RunService(state, engine, provided(state.agents, "open_agents"))
        await runs.mark_lost()
        state.resources.push_async_callback(runs.close)  # its watchers stop with the app
        state.runs = runs

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
    return await runs.list(limit=limit, offset=offset, agent=agent, phase=phase, skill=skill)


@router.get("/{run_id}")
async def get_run(run_id: str, runs: Runs) -> Run:
    """One run: its agent, input, files, what it waits for while it runs, and how it ended
    (once it has)."""
    return await runs.with_waiting(await runs.get(run_id))


@router.get(
    "/{run_id}/status",
    responses={
        409: problem_response("The engine keeps no status view (direct)"),
        503: problem_response("No worker answered (temporal); the run may still be running"),
    },
)
async def run_status(run_id: str, runs: Runs) -> JobView:
    """What the run does now: phase, turn, usage, the approval it waits on, the limits its
    steps run under (its worker's) (temporal)."""
    return await runs.status(run_id)


@router.post("/{run_id}/messages", status_code=status.HTTP_202_ACCEPTED)
async def send_message(run_id: str, body: Message, runs: Runs) -> dict[str, bool]:
    """A follow-up message for a run that is running (taken before its next model call)."""
    run = await runs.get(run_id)
    try:
        await runs.engine.send(run.id, body.text)
    except AgentError as exc:
        raise ApiProblem(409, str(exc)) from None
    return {"accepted": True}


@router.post("/{run_id}/cancel", status_code=status.HTTP_202_ACCEPTED)
async def cancel_run(run_id: str, runs: Runs, body: Cancel | None = None) -> dict[str, bool]:
    """Stop a run and wait until it has stopped; its result says cancelled (with the
    reason, on the temporal engine)."""
    run = await runs.get(run_id)
    if run.result is not None:
        raise ApiProblem(409, f"run {run_id!r} has ended ({run.status})")
    cancel: Any = runs.engine.cancel
    try:
        if "reason" in inspect.signature(cancel).parameters:
            await cancel(run.id, reason=(body or Cancel()).reason)
        else:
            await cancel(run.id)
    except AgentError as exc:
        raise ApiProblem(409, str(exc)) from None
    return {"cancelled": True}


@router.post(
    "/{run_id}/approvals",
    status_code=status.HTTP_202_ACCEPTED,
    responses={409: problem_response("The run waits on no approval, or has ended")},
)
async def approve_run(run_id: str, body: Approval, runs: Runs) -> dict[str, bool]:
    """Approve (or deny) the script run the run is waiting on."""
    run = await runs.get(run_id)
    if run.result is not None:
        raise ApiProblem(409, f"run {run_id!r} has ended ({run.status})")
    decision = ApprovalDecision(approved=body.approved, note=body.note, by="the API")
    try:
        await runs.engine.approve(run.id, decision)
    except AgentError as exc:
        raise ApiProblem(409, str(exc)) from None
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
    run = await runs.get(run_id)
    try:
        after = max(0, int(last_event_id)) if last_event_id else 0
    except ValueError:
        raise ApiProblem(400, "Last-Event-ID must be a number") from None
    return StreamingResponse(
        _sse(runs.engine, run.id, after, until_finished=follow),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _sse(
    engine: Engine, run_id: str, after: int, *, until_finished: bool = True
) -> AsyncIterator[bytes]:
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
        "job_id": exc.job_id,
        "task_queue": exc.task_queue,
        "waited_seconds": exc.waited_seconds,
        "last_event_id": position,
        "detail": f"{exc}; reconnect with Last-Event-ID: {position} to follow it again",
    }
    data["text"] = generic_line("worker_wait_expired", str(data["detail"])).plain()
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
