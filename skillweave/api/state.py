"""What the API's routes share: :class:`ApiState`, typed and complete once the app has started,
and :class:`ApiComposition`, what the start-up hooks fill to make it.

``create_api`` (:mod:`skillweave.api.app`) makes an :class:`ApiComposition` when the app
starts, gives it to the hook that opens what the app stands on (``opening``: the engine) and to
the resources' start-up hooks (``open_skills``, ``open_agents``, ``open_runs(engine)``…, in the
router modules), then completes it: :meth:`ApiComposition.complete` makes the
:class:`ApiState` the routes read (through :mod:`skillweave.api.deps`), refusing to start when a
mounted route needs a service no hook opened. A feature an app may be composed without is an
explicit alternative (:class:`~skillweave.api.served_skills.NoSkills`,
:class:`~skillweave.api.run_service.NoRuns`), never a field left None.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Literal

from prometheus_client import CollectorRegistry

from skillweave.api.agent_store import AgentStore
from skillweave.api.environment_builds import EnvironmentBuilds
from skillweave.api.eval_batches import EvalBatches, NoEvals
from skillweave.api.run_service import NoRuns, RunService
from skillweave.api.served_skills import NoSkills, ServedSkills
from skillweave.config import Settings
from skillweave.readiness import Readiness
from skillweave.storage import ArtifactStore
from skillweave.storage.audit import AuditLog

__all__ = ["ApiComposition", "ApiState", "Service", "StartupHook"]

Service = Literal["skills", "runs", "evals"]
"""A service some routes need and an app may be composed without."""

_HOOKS: dict[Service, str] = {
    "skills": "open_skills",
    "runs": "open_runs(engine)",
    "evals": "open_evals(engine)",
}
"""The start-up hook that opens each service."""


@dataclass(frozen=True, kw_only=True)
class ApiState:
    """What the routes share (``request.app.state.api``), complete once the app has started.

    Attributes:
        settings: the configuration.
        store: the artifact store.
        audit: the skill audit log every lifecycle change is recorded in (``AUDIT__``).
        readiness: whether the app serves yet, and what it waits for (``/healthz``).
        skills: the skill library served, or none (agents then know no skill, runs pin none).
        agents: the agent store.
        runs: runs on the configured engine, or none (no run routes are mounted then).
        environment_builds: registration builds of new skill versions.
        evals: eval batches on the engine, or none (no eval routes are mounted then).
    """

    settings: Settings
    store: ArtifactStore
    audit: AuditLog
    readiness: Readiness
    skills: ServedSkills | NoSkills
    agents: AgentStore
    runs: RunService | NoRuns
    environment_builds: EnvironmentBuilds
    evals: EvalBatches | NoEvals = field(default_factory=NoEvals)


@dataclass(kw_only=True)
class ApiComposition:
    """What an app is made of, filled while it starts; :meth:`complete` makes its state.

    Attributes:
        settings: the configuration.
        store: the artifact store (``opening`` may replace it with the engine's).
        readiness: whether the app serves yet.
        resources: what start-up hooks open for the app's lifetime (background tasks), closed
            when it stops.
        skills: the skill library (``open_skills``).
        agents: the agent store (``open_agents``; runs need it first).
        runs: runs on an engine (``open_runs(engine)``).
        metrics: more metrics ``/metrics`` shows (an in-process worker's).
        evals: eval batches on the engine (``open_evals(engine)``).
    """

    settings: Settings
    store: ArtifactStore
    readiness: Readiness
    resources: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)
    skills: ServedSkills | NoSkills = field(default_factory=NoSkills)
    agents: AgentStore | None = None
    runs: RunService | NoRuns = field(default_factory=NoRuns)
    metrics: list[CollectorRegistry] = field(default_factory=list)
    evals: EvalBatches | NoEvals = field(default_factory=NoEvals)

    def served_skills(self, hook: str) -> ServedSkills:
        """The skill library, which `hook` needs opened first.

        Raises:
            RuntimeError: ``open_skills`` has not run.
        """
        if isinstance(self.skills, NoSkills):
            raise RuntimeError(f"the API was composed without open_skills, which {hook} needs")
        return self.skills

    def agent_store(self, hook: str) -> AgentStore:
        """The agent store, which `hook` needs opened first.

        Raises:
            RuntimeError: ``open_agents`` has not run.
        """
        if self.agents is None:
            raise RuntimeError(f"the API was composed without open_agents, which {hook} needs")
        return self.agents

    def complete(self, needs: Collection[Service]) -> ApiState:
        """The app's state, now that every hook has run.

        Args:
            needs: the services the app's routes need.

        Raises:
            RuntimeError: a route needs a service no hook opened (a composition error, named).
        """
        opened: dict[Service, bool] = {
            "skills": isinstance(self.skills, ServedSkills),
            "runs": isinstance(self.runs, RunService),
            "evals": isinstance(self.evals, EvalBatches),
        }
        missing = sorted(need for need in needs if not opened[need])
        if missing:
            hooks = ", ".join(_HOOKS[need] for need in missing)
            raise RuntimeError(f"the API's routes need {hooks}, which it was composed without")
        return ApiState(
            settings=self.settings,
            store=self.store,
            audit=AuditLog.from_settings(
                self.settings.audit, self.store, actor=f"api@{socket.gethostname()}"
            ),
            readiness=self.readiness,
            skills=self.skills,
            # An agent store is a view of the store: one no hook made is made here.
            agents=self.agents if self.agents is not None else AgentStore(self.store),
            runs=self.runs,
            environment_builds=EnvironmentBuilds(self.settings.sandbox),
            evals=self.evals,
        )


StartupHook = Callable[[ApiComposition], Awaitable[None]]
"""A resource's start-up hook: it opens the resource's service into the composition."""
