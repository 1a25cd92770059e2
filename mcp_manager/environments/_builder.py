"""Finding or building a skill version's environment once: :class:`EnvironmentBuilder`.

The manager's ``executions`` asks :meth:`EnvironmentBuilder.ensure` for the environment of a
skill version that declares dependencies; the builder checks the spec (``_requirements``),
names the key from the executor's interpreters (``_toolchain``), and when the store lacks it,
has it built once, under a claim, by the workshop (``_workshop``): the installers
(``_installers``) run pip and npm in the build sandbox (``_sandbox``), packing (``_packing``)
checks and archives what they left. The builder composes these collaborators; it holds only
the in-flight builds of this process and the claim across managers.

**Once.** Concurrent requests for one key in this process share one build (a task that no
caller's cancellation stops). Across managers sharing a store, the builder first wins a claim
(``put_if_absent`` of ``.claim``) and renews it while it builds, with the same ``claims``
machinery as script executions; the others poll until the environment or a failure record
appears. A claim not renewed for a lease (its manager stopped) is superseded by the next
attempt (``.claim.2``…), claimed atomically again; once the build is over, the claims are
withdrawn. A failed build writes ``.failed``; the requests
that waited on it raise its error, and a later request builds again (the index may have been
down). The log of the last build is kept under the log key, whether it succeeded or not.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mcp_manager.claims import Claims
from mcp_manager.environments._installers import Installers
from mcp_manager.environments._requirements import check_python, check_spec
from mcp_manager.environments._sandbox import BuildSandbox
from mcp_manager.environments._toolchain import Toolchain
from mcp_manager.environments._workshop import BuildKeys, BuildWorkshop
from skillweave.config import EnvironmentSettings
from skillweave.errors import EnvironmentBuildError, EnvironmentUnavailableError
from skillweave.skills.dependencies import DependencySpec
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = ["Environment", "EnvironmentBuilder"]


@dataclass(frozen=True, slots=True)
class Environment:
    """A skill version's stored environment.

    Attributes:
        key: the store key of the packed environment (``environments/…/{platform}.tar.gz``).
        ref: its ref (size and sha256 of the tar.gz).
        built: True when this call built it; False when it was in the store already or
            another request (in this process or another manager) built it.
    """

    key: str
    ref: ArtifactRef
    built: bool


class EnvironmentBuilder:
    """Finds or builds the environment of a skill version (see the module docstring).

    Args:
        settings: ``sandbox.environments``: the index, extra options, limits, the switch.
        store: where environments, their logs and the build claims live.
        runtime: the executor image's runtime in keys; default ``cp{major}{minor}`` of
            `python`, plus ``-node{major}`` when node is found.
        platform: the executor's platform in keys; default `python`'s
            ``sysconfig.get_platform()`` (``linux-x86_64``).
        python: the executor's interpreter; pip runs as ``python -m pip``, so wheels fit it.
        node: the executor's node; default ``node`` on ``PATH``. npm is taken from its
            folder, else from ``PATH``.
        bwrap: the bubblewrap binary of the build sandbox.
        work_dir: where build folders are made (default: the system temp folder).
        claim_lease: how long a build claim lives unrenewed (the builder renews it four
            times as often); a lapsed claim's build is taken over by the next request.
    """

    def __init__(
        self,
        settings: EnvironmentSettings,
        store: ArtifactStore,
        *,
        runtime: str | None = None,
        platform: str | None = None,
        python: str = sys.executable,
        node: str | None = None,
        bwrap: str = "bwrap",
        work_dir: Path | None = None,
        claim_lease: float = 20.0,
    ) -> None:
        self._settings = settings
        self._store = store
        self._toolchain = Toolchain(python=python, node=node, runtime=runtime, platform=platform)
        self._sandbox = BuildSandbox(settings, self._toolchain, bwrap)
        installers = Installers(settings, self._toolchain, self._sandbox)
        self._workshop = BuildWorkshop(settings, store, installers, work_dir=work_dir)
        self._claims = Claims(store, lease=claim_lease, holder="builder")
        self._inflight: dict[str, asyncio.Task[Environment]] = {}
        self.builds = 0
        """How many builds this builder ran (succeeded or failed)."""

    @property
    def settings(self) -> EnvironmentSettings:
        """The ``sandbox.environments`` settings this builder follows."""
        return self._settings

    async def aclose(self) -> None:
        """Stop the builds in flight (their sandboxes are killed, their claims withdrawn)."""
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def ensure(self, skill: str, version: str, spec: DependencySpec) -> Environment | None:
        """The stored environment of `skill` under `version` (the manager passes the digest of
        what `spec` installs, so one key is one content), built first when it is missing.

        Concurrent calls for one key in this process share one build; across managers a
        claim in the store makes the others wait for it.

        Returns:
            None when `spec` declares nothing, else the environment.

        Raises:
            DependencyError: the spec has more than ``max_dependencies`` entries, an entry
                that is not a plain requirement, or a ``requires_python`` the interpreter
                does not meet (checked before anything else happens).
            EnvironmentUnavailableError: it is not built and ``builds`` is off.
            EnvironmentBuildError: the build failed (the message names the package when
                pip or npm said which; the log is under ``log_key``), or cannot run here.
        """
        if spec.empty:
            return None
        check_spec(skill, spec, self._settings.max_dependencies)
        if spec.requires_python:
            interpreter = await self._toolchain.interpreter(skill)
            check_python(skill, spec.requires_python, interpreter)
        names = await self._keys(skill, version)
        found = await self._store.stat(names.environment)
        if found is not None:
            return Environment(names.environment, found, built=False)
        if not self._settings.builds:
            raise EnvironmentUnavailableError(
                f"the environment of {skill!r} (dependencies {version[:12]}, {names.runtime}, "
                f"{names.platform}) is not built, and builds are off "
                "(sandbox.environments.builds); build it where builds are allowed"
            )
        task = self._inflight.get(names.environment)
        first = task is None
        if task is None:
            task = asyncio.create_task(self._obtain(names, spec))
            self._inflight[names.environment] = task
            task.add_done_callback(self._forget(names.environment))
        environment = await asyncio.shield(task)
        if environment.built and not first:
            return Environment(environment.key, environment.ref, built=False)
        return environment

    def _forget(self, key: str) -> Callable[[asyncio.Task[Environment]], None]:
        def done(task: asyncio.Task[Environment]) -> None:
            if self._inflight.get(key) is task:
                del self._inflight[key]
            if not task.cancelled():
                task.exception()  # retrieved: every waiter re-raises it itself

        return done

    # --- identity: the key's runtime and platform -------------------------------------------

    async def _keys(self, skill: str, version: str) -> BuildKeys:
        runtime, platform = await self._toolchain.names(skill)
        return BuildKeys(
            environment=keys.environment_key(skill, version, runtime, platform),
            log=keys.environment_log_key(skill, version, runtime, platform),
            failure=keys.environment_failure_key(skill, version, runtime, platform),
            skill=skill,
            version=version,
            runtime=runtime,
            platform=platform,
        )

    # --- once: the claim across managers ----------------------------------------------------

    async def _obtain(self, names: BuildKeys, spec: DependencySpec) -> Environment:
        """Build under a claim, or wait for whoever holds it (see the module docstring)."""
        await self._sandbox.check(names.skill)
        # A failure recorded before this request started is history: this request builds
        # again. One that appears while it waits is the build it waited for.
        past_failure = await self._workshop.failure(names)
        past_build = past_failure.get("build") if past_failure else None
        ready = await self._finished(names, past_build)
        if ready is not None:
            return ready

        async def held(_: float) -> None:  # another manager builds it: look again soon
            await asyncio.sleep(min(1.0, self._claims.lease / 4))

        def interrupted() -> Exception:
            return EnvironmentBuildError(
                names.skill,
                f"its build was interrupted {self._claims.max_attempts} times (managers "
                f"stopped while building); remove {names.claim(1)}* to try again",
                log_key=names.log,
            )

        claim = await self._claims.acquire(
            names.claim,
            settled=lambda: self._finished(names, past_build),
            wait=held,
            exhausted=interrupted,
            what=f"environment {names.environment}",
        )
        if isinstance(claim, Environment):
            return claim
        try:
            # The build may have finished between the last look and the claim.
            ready = await self._finished(names, past_build)
            if ready is not None:
                return ready
            async with self._claims.renewing(claim):
                self.builds += 1
                ref = await self._workshop.build(names, spec)
                return Environment(names.environment, ref, built=True)
        finally:
            await self._claims.release(claim)

    async def _finished(self, names: BuildKeys, past_build: object) -> Environment | None:
        """The environment when it is stored; raises a failure newer than this request."""
        found = await self._store.stat(names.environment)
        if found is not None:
            return Environment(names.environment, found, built=False)
        failure = await self._workshop.failure(names)
        if failure is not None and failure.get("build") != past_build:
            package = failure.get("package")
            raise EnvironmentBuildError(
                names.skill,
                str(failure.get("reason", "the build failed")),
                package=package if isinstance(package, str) else None,
                log_key=names.log,
            )
        return None
