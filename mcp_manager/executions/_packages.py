"""The skill packages that runs carry: read from the store by ref, kept in memory by version.

:class:`Packages` is asked by the run's preparation (``_preparation``) and by
``ExecutionService.prepare_environment``; :class:`SkillPackage` is what they get, which
admission (``_admission``) checks against the version it is stored under.
"""

from __future__ import annotations

import asyncio
import io
import zipfile
from dataclasses import dataclass
from typing import Final

from mcp_manager.cache import BoundedCache
from skillweave.errors import ExecutionRejectedError, PackageError
from skillweave.skills import archive_version
from skillweave.storage import ArtifactRef, ArtifactStore

__all__ = ["Packages", "SkillPackage"]

_PACKAGE_CACHE_BYTES: Final = 128 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SkillPackage:
    """A skill package kept in memory: its hash (checked against the store's ref), its bytes,
    the paths inside it, and the version its files hash to (``archive_version``), which must be
    the version it is stored under."""

    sha256: str
    data: bytes
    names: frozenset[str]
    version: str


def _package_names(package: bytes) -> set[str]:
    """Paths inside the package, relative to the skill folder (one top folder is stripped)."""
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and all("/" in n for n in names):
        return {n.split("/", 1)[1] for n in names}
    return set(names)


class Packages:
    """The packages of the skill versions this manager runs, kept for their next run.

    Args:
        store: where packages are published (``keys.skill_package_key``).
    """

    def __init__(self, store: ArtifactStore) -> None:
        self._store = store
        # Newest first kept, even alone over the bound: the run about to start needs it.
        self._kept: BoundedCache[str, SkillPackage] = BoundedCache(
            max_weight=_PACKAGE_CACHE_BYTES, weigh=lambda package: len(package.data)
        )

    async def get(self, ref: ArtifactRef) -> SkillPackage:
        """A package's bytes and file names, kept for the next run of the same version.

        A version is the hash of the package's content, so a kept package is never stale; the
        store is still asked first (the caller stats the key), so an unpublished version is
        refused as before.

        Raises:
            ExecutionRejectedError: 409, the stored bytes are not a package that can run.
        """
        kept = self._kept.get(ref.key)
        if kept is not None and kept.sha256 == ref.sha256:
            return kept
        data = await self._store.get_bytes(ref)
        try:
            _, version = await asyncio.to_thread(archive_version, data)
        except PackageError as exc:
            raise ExecutionRejectedError(
                409, f"{ref.key}: not a package that can run: {exc}"
            ) from None
        package = SkillPackage(ref.sha256, data, frozenset(_package_names(data)), version)
        self._kept.put(ref.key, package)
        return package
