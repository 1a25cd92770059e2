"""One environment made in a build folder, and what its build leaves in the store:
:class:`BuildWorkshop`.

For the builder (``_builder``), once it holds the build's claim: a fresh folder under the work
folder, the installers (``_installers``) run into it, packing (``_packing``) checks and archives
the result, and the store gets the archive, the build's log (kept whether it succeeded or not)
or a failure record (``.failed``: reason, culprit package, log key), which the builder reads
back while it waits for another manager's build. The folder is removed whatever happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Final

from mcp_manager.environments._build_log import read_log
from mcp_manager.environments._failure import BuildFailed
from mcp_manager.environments._installers import Installers
from mcp_manager.environments._packing import pack
from skillweave.config import EnvironmentSettings
from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    EnvironmentBuildError,
    StorageError,
)
from skillweave.skills import remove_tree
from skillweave.skills.dependencies import DependencySpec
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = ["BuildKeys", "BuildWorkshop"]

logger = logging.getLogger("skillweave.manager")

_JSON: Final = "application/json"


@dataclass(frozen=True, slots=True)
class BuildKeys:
    """Where one environment and what its build leaves live in the store, and what names it."""

    environment: str
    log: str
    failure: str
    skill: str
    version: str
    runtime: str
    platform: str

    def claim(self, attempt: int) -> str:
        """The key of the build's `attempt`-th claim."""
        return keys.environment_claim_key(
            self.skill, self.version, self.runtime, self.platform, attempt
        )


class BuildWorkshop:
    """Builds one environment at a time in a fresh folder (see the module docstring).

    Args:
        settings: ``sandbox.environments``: the build's time and size limits.
        store: where environments, their logs and failure records live.
        installers: pip and npm in the build sandbox.
        work_dir: where build folders are made (default: the system temp folder).
    """

    def __init__(
        self,
        settings: EnvironmentSettings,
        store: ArtifactStore,
        installers: Installers,
        *,
        work_dir: Path | None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._installers = installers
        self._work_dir = work_dir

    async def failure(self, names: BuildKeys) -> dict[str, object] | None:
        """The failure record of the last build of `names`, if one failed (and is readable)."""
        return await self._read_json(names.failure)

    async def _read_json(self, key: str) -> dict[str, object] | None:
        ref = await self._store.stat(key)
        if ref is None:
            return None
        with contextlib.suppress(ArtifactNotFoundError, ArtifactIntegrityError, ValueError):
            record = json.loads(await self._store.get_bytes(ref))
            if isinstance(record, dict):
                return record
        return None

    async def build(self, names: BuildKeys, spec: DependencySpec) -> ArtifactRef:
        """Build, pack and store the environment `names` says, from `spec`; the caller holds
        its claim.

        Raises:
            EnvironmentBuildError: the build failed; its failure record and log are stored.
        """
        started = time.perf_counter()
        base = self._work_dir or Path(tempfile.gettempdir())
        await asyncio.to_thread(base.mkdir, parents=True, exist_ok=True)
        folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="skillweave-env-", dir=base))
        log_path = folder / "build.log"
        try:
            try:
                with log_path.open("ab") as log:
                    archive = await self._build_in(folder, log, names, spec)
            except BuildFailed as failure:
                await self._keep_log(log_path, names.log)
                record = {
                    "build": uuid.uuid4().hex,
                    "reason": failure.reason,
                    "package": failure.package,
                    "log_key": names.log,
                    "at": time.time(),
                }
                await self._store.put_bytes(
                    names.failure, json.dumps(record).encode(), content_type=_JSON
                )
                logger.warning("environment %s: build failed: %s", names.environment, failure)
                raise EnvironmentBuildError(
                    names.skill, failure.reason, package=failure.package, log_key=names.log
                ) from None
            await self._keep_log(log_path, names.log)
            # A builder whose claim lapsed (paused, not stopped) may have stored it meanwhile:
            # keep its bytes, which readers may already hold the ref of.
            ref = await self._store.stat(names.environment) or await self._store.put_file(
                names.environment, str(archive), content_type="application/gzip"
            )
            await self._store.delete(names.failure)
        finally:
            await asyncio.to_thread(remove_tree, folder)
        logger.info(
            "environment %s built in %.1f s (%d bytes packed)",
            names.environment,
            time.perf_counter() - started,
            ref.size,
        )
        return ref

    async def _build_in(
        self, folder: Path, log: IO[bytes], names: BuildKeys, spec: DependencySpec
    ) -> Path:
        """Install `spec` into ``folder/build`` in the sandbox, check it and pack it."""
        build = folder / "build"
        for part in ("home", "tmp"):
            (build / part).mkdir(parents=True)
        deadline = asyncio.get_running_loop().time() + self._settings.build_timeout_seconds
        skipped = await self._installers.install(
            build, log, skill=names.skill, spec=spec, deadline=deadline
        )
        manifest = {
            "format": 1,
            "skill": names.skill,
            "version": names.version,
            "runtime": names.runtime,
            "platform": names.platform,
            "spec_digest": spec.digest(),
            "python": list(spec.python),
            "node": dict(spec.node),
            "inferred": list(spec.inferred),
            "skipped": skipped,
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        archive = folder / "environment.tar.gz"
        await asyncio.to_thread(pack, build, archive, manifest, self._settings.max_bytes)
        return archive

    async def _keep_log(self, path: Path, key: str) -> None:
        try:
            data = await asyncio.to_thread(read_log, path)
            await self._store.put_bytes(key, data, content_type="text/plain; charset=utf-8")
        except (OSError, StorageError) as exc:  # the build's outcome matters more than its log
            logger.warning("build log %s not kept: %s", key, exc)
