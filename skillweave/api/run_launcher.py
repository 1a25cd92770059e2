"""Starting runs: a stored agent's run with the user's input and files, on the model it names.

:class:`RunLauncher` stores the input files under the run (``runs/{id}/inputs/``), pins the
agent's skills (:mod:`skillweave.api.skill_pins`), picks the model that runs the run, writes the
run's record (which keeps the agent as it was) and starts the run on the engine; then it watches
the run to write its record again when it ends. Made by the run service
(:mod:`skillweave.api.run_service`), called by ``POST /v1/runs``.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Final

from fastapi import UploadFile

from skillweave.api.agent_store import Agent, AgentStore
from skillweave.api.problems import ApiProblem
from skillweave.api.run_records import RunRecords
from skillweave.api.run_schemas import Run
from skillweave.api.skill_pins import SkillPins
from skillweave.config import ModelSettings
from skillweave.engines import AgentServices, Engine, RunRequest, new_run_id
from skillweave.errors import AgentError, ConfigError
from skillweave.llm import (
    default_model_name,
    default_model_problem,
    describe_model,
    resolve_model,
)
from skillweave.storage import ArtifactStore, keys

__all__ = ["RunLauncher"]

_MAX_FILES: Final = 32


class RunLauncher:
    """Starts runs on one engine and records how they end."""

    def __init__(
        self,
        engine: Engine,
        *,
        store: ArtifactStore,
        model: ModelSettings,
        agents: AgentStore,
        records: RunRecords,
        pins: SkillPins,
    ) -> None:
        self._engine = engine
        self._store = store
        self._model_settings = model
        self._agents = agents
        self._records = records
        self._pins = pins
        self._watchers: set[asyncio.Task[None]] = set()

    async def start(self, agent_id: str, text: str, files: list[UploadFile]) -> Run:
        """Start a run of the agent `agent_id` (its id or its slug) on `text`, with `files` as
        its inputs (stored under the run first); the run as started.

        Raises:
            ApiProblem: 422, no such agent, bad files, or no model to run it.
            SkillUnavailableError: a skill the agent lists is deleted, disabled or shadowed.
        """
        agent = await self._agents.get(agent_id)  # its id or its slug
        if agent is None:
            raise ApiProblem(422, f"no agent {agent_id!r}", title="Unknown agent")
        if len(files) > _MAX_FILES:
            raise ApiProblem(422, f"at most {_MAX_FILES} files per run")
        named, model = await self._model_of(agent)
        pinned = await self._pins.pin(agent)
        run_id = new_run_id()
        names = [_file_name(upload) for upload in files]
        if len(set(names)) != len(names):
            raise ApiProblem(422, "two files have the same name")
        store = self._store
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
        await self._records.save(run)
        spec = agent.to_spec().model_copy(update={"pinned": pinned, "model": named})
        await self._engine.start(
            RunRequest(run_id=run_id, task=text, agent=spec, inputs=tuple(inputs))
        )
        watcher = asyncio.create_task(self._record_end(run))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return run

    async def _model_of(self, agent: Agent) -> tuple[str | None, str]:
        """The model that runs the agent's run: as the run names it and as the run record
        shows it (``provider:name``). It is the agent's model_id, which must resolve here now
        (settings may have changed since the agent was made), else the engine's default: on
        the temporal engine this API's (``MODEL__*``), else the one default every worker
        polling the task queue names (its identity says it), named to the run explicitly
        (``llm.factory.default_model_name``, so that the worker runs exactly that model or
        refuses); on the direct engine the one it opened. No default: refused (422)."""
        model = self._model_settings
        if agent.model_id:
            try:
                profile = resolve_model(model, agent.model_id)
            except ConfigError as exc:
                raise ApiProblem(
                    422, f"the agent's model_id: {exc}", title="Unknown model"
                ) from None
            return agent.model_id, describe_model(profile, agent.model_id)
        local: AgentServices | None = getattr(self._engine, "services", None)
        if local is None:  # the temporal engine: its workers hold the model's keys
            missing = default_model_problem(model, runs_here=False)
            if missing is not None:
                return await self._workers_default(missing)
        elif local.provider is None:
            missing = default_model_problem(model) or "it could not be opened"
        else:  # the direct engine: its runs run here, on its default
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
        read = getattr(self._engine, "worker_default_models", None)
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

    async def _record_end(self, run: Run) -> None:
        await self._records.ended(run, await self._engine.result(run.id))

    async def close(self) -> None:
        """Stop watching the runs started here (their records stay as they are)."""
        for watcher in list(self._watchers):
            watcher.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)


def _file_name(upload: UploadFile) -> str:
    name = (upload.filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    if not name or name in (".", "..") or "\0" in name:
        raise ApiProblem(422, f"file name {upload.filename!r} is not usable")
    return name
