"""The packed environment a run is sent with: its skill version's declared dependencies and
the operator's base environment, built once (``mcp_manager.environments``) and stored.

:class:`RunEnvironments` is asked by the run's preparation (``_preparation``) for a run's
environment, and by ``ExecutionService.prepare_environment`` (``POST /sandbox/environments``)
for a version's, ahead of its first run; :class:`PreparedEnvironment` is that answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Final

from pydantic import BaseModel, Field

from mcp_manager.cache import BoundedCache
from mcp_manager.environments import EnvironmentBuilder
from mcp_manager.metrics import ManagerMetrics
from skillweave.errors import (
    ConfigError,
    DependencyError,
    ExecutionRejectedError,
    SkillEnvironmentError,
)
from skillweave.sandbox import ExecuteRequest
from skillweave.skills.dependencies import DependencySpec, base_environment, package_dependencies
from skillweave.storage import ArtifactStore

__all__ = ["BASE_ENVIRONMENT", "PreparedEnvironment", "RunEnvironments"]

logger = logging.getLogger("skillweave.manager")

_SPEC_CACHE: Final = 1024
"""Dependency specs kept, by skill version (a version is its content: never stale)."""

BASE_ENVIRONMENT: Final = "skillweave-base"
"""Whose environment the base alone is, in the store's keys. A skill of that name shares the
folder harmlessly: keys end in the digest of what is installed, so one key is one content."""


class PreparedEnvironment(BaseModel):
    """``POST /sandbox/environments``: a skill version's environment, ready."""

    skill: str
    version: str
    dependencies: dict[str, object]
    needed: bool = Field(description="False: the skill declares no dependencies.")
    built: bool = Field(description="True: built now; False: it was ready (or not needed).")
    bytes: int = Field(description="Size of the packed environment sent with each run.")
    seconds: float = Field(description="How long preparing took (a build, or a lookup).")


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A skill version's packed environment, and whether this request built it."""

    data: bytes
    built: bool


def _base_environment(environments: EnvironmentBuilder | None) -> DependencySpec:
    """The operator's base environment (``sandbox.environments.base_python``, ``base_node``).

    Raises:
        ConfigError: a base requirement is invalid (the setting is named).
    """
    if environments is None:
        return DependencySpec()
    settings = environments.settings
    try:
        return base_environment(settings.base_python, settings.base_node)
    except DependencyError as exc:
        raise ConfigError(f"sandbox.environments (SANDBOX__ENVIRONMENTS__BASE_*): {exc}") from None


class RunEnvironments:
    """The environments runs are sent with, over the manager's builder.

    Args:
        builder: builds and stores environments; None: dependencies are not provided.
        store: where built environments are stored.
        metrics: the manager's metrics (builds, and how long preparing took).

    Raises:
        ConfigError: the operator's base environment is invalid.
    """

    def __init__(
        self, builder: EnvironmentBuilder | None, *, store: ArtifactStore, metrics: ManagerMetrics
    ) -> None:
        self._builder = builder
        self._store = store
        self._metrics = metrics
        self._base = _base_environment(builder)
        self._specs: BoundedCache[str, DependencySpec] = BoundedCache(max_entries=_SPEC_CACHE)

    def check_provided(self) -> None:
        """Refuse when this manager prepares no environments.

        Raises:
            ExecutionRejectedError: 409.
        """
        self._required()

    def _required(self) -> EnvironmentBuilder:
        if self._builder is None:
            raise ExecutionRejectedError(409, "this manager does not prepare environments")
        return self._builder

    async def aclose(self) -> None:
        """Cancel the builds going on."""
        if self._builder is not None:
            await self._builder.aclose()

    async def of_run(self, request: ExecuteRequest, package: bytes) -> bytes | None:
        """The packed environment a run of `request` is sent with; None: it needs none.

        Raises:
            ExecutionRejectedError: 422, the dependencies cannot be used.
        """
        if self._builder is None:
            return None
        spec = await self._spec(self._builder, version=request.version, package=package)
        prepared = await self._environment(skill=request.skill, version=request.version, spec=spec)
        return prepared.data if prepared is not None else None

    async def prepare(self, skill: str, version: str, package: bytes) -> PreparedEnvironment:
        """Build (once) the environment of an admitted skill version, as its first run would.

        Raises:
            ExecutionRejectedError: 422, its dependencies cannot be used (a declaration, a
                failed build naming the package, or builds switched off); 409 this manager
                prepares none.
        """
        builder = self._required()
        started = time.perf_counter()
        spec = await self._spec(builder, version=version, package=package)
        prepared = await self._environment(skill=skill, version=version, spec=spec)
        return PreparedEnvironment(
            skill=skill,
            version=version,
            dependencies=spec.with_base(self._base).to_json(),
            needed=prepared is not None,
            built=prepared is not None and prepared.built,
            bytes=len(prepared.data) if prepared is not None else 0,
            seconds=round(time.perf_counter() - started, 3),
        )

    async def _spec(
        self, builder: EnvironmentBuilder, *, version: str, package: bytes
    ) -> DependencySpec:
        """What the skill version declares, read once per version.

        Raises:
            ExecutionRejectedError: 422, the declaration cannot be used.
        """
        spec = self._specs.get(version)
        if spec is None:
            try:
                spec = await asyncio.to_thread(
                    package_dependencies,
                    package,
                    max_dependencies=builder.settings.max_dependencies,
                    infer=builder.settings.infer_imports,
                )
            except DependencyError as exc:
                raise ExecutionRejectedError(422, str(exc)) from exc
            self._specs.put(version, spec)
        return spec

    async def _environment(
        self, *, skill: str, version: str, spec: DependencySpec
    ) -> _Prepared | None:
        """The packed environment of the skill's dependencies and the operator's base
        environment, built on first use; None when there are none (or this manager provides
        none). It is stored under the skill and the digest of what it installs, so a new
        version with the same dependencies reuses it, and a change of the base or of
        inference is a new one; the base alone (a skill that needs nothing else) is one
        environment for every such skill, built once.

        Raises:
            ExecutionRejectedError: the dependencies cannot be used (a bad or conflicting
                declaration, a failed build, builds off and none prebuilt); nothing ran and
                the id stays free, so the run can be asked again once that is fixed.
        """
        if self._builder is None:
            return None
        full = spec.with_base(self._base)
        if full.empty:
            return None
        owner = BASE_ENVIRONMENT if spec.empty else skill
        started = time.perf_counter()
        try:
            prepared = await self._builder.ensure(owner, full.digest(), full)
        except (DependencyError, SkillEnvironmentError) as exc:
            if not spec.inferred:
                raise ExecutionRejectedError(422, str(exc)) from exc
            # Inference is a convenience: where no environment can be had for what was
            # inferred (builds off, no build sandbox), run as without it.
            logger.warning(
                "skill %s: no environment with the packages inferred from its imports (%s): %s;"
                " running with its declared dependencies only",
                skill,
                ", ".join(spec.inferred),
                exc,
            )
            return await self._environment(skill=skill, version=version, spec=spec.declared())
        if prepared is None:
            return None
        if prepared.built:
            self._metrics.environment_builds.inc()
        data = await self._store.get_bytes(prepared.ref)
        self._metrics.environment_seconds.labels(built=str(prepared.built).lower()).observe(
            time.perf_counter() - started
        )
        return _Prepared(data, prepared.built)
