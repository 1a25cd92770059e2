"""Reading runs: one run (its record, or on the temporal engine its workflow), what it waits
for, what it does now, and the listing of every run on the engine.

Every run on the engine is served, not only those started here: on the temporal engine a run
another door started has no record, and is made from its workflow (its start request in
history, its status from the server; no worker needed). :class:`RunReader` is made by the run
service (:mod:`skillweave.api.run_service`) and called by the run routes.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import timedelta
from typing import Final, get_args

from skillweave.api.problems import ApiProblem
from skillweave.api.run_records import RunRecords
from skillweave.api.run_schemas import Run, RunPage, RunSummary
from skillweave.engines import Engine, Phase, RunRequest, RunView
from skillweave.errors import AgentError, ConfigError, InvalidKeyError, SkillweaveError
from skillweave.waiting import Waiting

__all__ = ["RunReader"]

logger = logging.getLogger("skillweave.api")

_STATUS_TIMEOUT: Final = timedelta(seconds=5)
"""How long ``GET /v1/runs/{id}/status`` waits for a worker to answer (temporal)."""


class RunReader:
    """Reads the runs of one engine: their records, else the engine itself."""

    def __init__(self, engine: Engine, records: RunRecords) -> None:
        self._engine = engine
        self._records = records

    async def get(self, run_id: str) -> Run:
        """The run `run_id`: its record, with how it ended once it has; on the temporal
        engine a run without a record (another door started it) is made from its workflow.

        Raises:
            ApiProblem: 404, there is no such run.
        """
        try:
            run = await self._records.read(run_id)
        except InvalidKeyError:  # not a run id: nothing to ask the engine about either
            raise ApiProblem(404, f"no run {run_id!r}") from None
        if run is None:
            run = await self._from_engine(run_id)
            if run is None:
                raise ApiProblem(404, f"no run {run_id!r}")
            return run
        if run.result is not None:
            return run
        return await self._ended(run)

    async def _ended(self, run: Run) -> Run:
        """`run` as it ended, when it has (known here, or said by the temporal engine)."""
        result = self._records.result(run.id)
        if result is not None:
            return run.model_copy(update={"status": result.status, "result": result})
        describe = getattr(self._engine, "describe", None)
        if describe is not None:  # temporal: the run may have ended while no API watched it
            with contextlib.suppress(AgentError):
                row = await describe(run.id)
                if row.status != "running":
                    return self._records.seen_end(run, await self._engine.result(run.id))
        return run

    async def _from_engine(self, run_id: str) -> Run | None:
        """A run this API has no record of, from the temporal engine: its start request (from
        the workflow's history) and how it ended; None when the engine does not know it."""
        describe = getattr(self._engine, "describe", None)
        request_of = getattr(self._engine, "request", None)
        if describe is None or request_of is None:  # direct: every run of it has a record
            return None
        try:
            row = await describe(run_id)
            request: RunRequest = await request_of(run_id)
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
        (temporal: from the workflow's pending activities; direct: the run's current wait).
        An engine that cannot say leaves it empty."""
        waiting = getattr(self._engine, "waiting", None)
        if run.result is not None or waiting is None:
            return run
        try:
            found: list[Waiting] = await waiting(run.id)
        except SkillweaveError as exc:
            logger.debug("cannot read what run %s waits for: %s", run.id, exc)
            return run
        return run.model_copy(update={"waiting": found})

    async def status(self, run_id: str) -> RunView:
        """What the run does now (the temporal engine's ``status`` query).

        Raises:
            ApiProblem: 404 no such run; 409 the engine keeps no status (direct); 503 no
                worker answered.
        """
        run = await self.get(run_id)
        status = getattr(self._engine, "status", None)
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
        list_runs = getattr(self._engine, "list_runs", None)
        if list_runs is not None:
            try:
                rows = await list_runs(agent=agent, phase=phase, skill=skill, limit=offset + limit)
            except ConfigError as exc:
                raise ApiProblem(422, str(exc)) from None
            items = [
                RunSummary(
                    id=row.run_id,
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
        for run in await self._records.all():
            ended = self._records.result(run.id)
            status = ended.status if ended is not None else run.status
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
