"""Writing uploaded skills into a folder a ``SkillScanner`` reads: :class:`Materializer`.

``StoredSkills.materialize`` (called by ``skills.library``) hands it the enabled records and a
way to read their packages; the folder then holds each skill's latest version at
``dest/<name>/`` beside an ``UPLOADED_ROOT_MARKER``, so discovery knows it for uploads. A
folder already at its latest version is kept, others are extracted beside it and swapped
in, and skills no longer wanted are removed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from skillweave.skills.files import SKILL_FILE, iter_package_files
from skillweave.skills.names import UPLOADED_ROOT_MARKER
from skillweave.skills.package import PackageLimits, extract_package
from skillweave.skills.versioning import package_version

__all__ = ["Materializer", "ReadPackage"]

ReadPackage = Callable[[str, str], Awaitable[bytes]]
"""Reads the stored ZIP of ``(name, version)``."""


class Materializer:
    """Keeps a folder holding the latest version of each wanted skill.

    Args:
        limits: what one package may hold (extraction refuses more).
    """

    def __init__(self, limits: PackageLimits) -> None:
        self.limits = limits

    async def materialize(
        self, dest: Path, wanted: Mapping[str, str], read_package: ReadPackage
    ) -> Path:
        """Write each of `wanted` (name → latest version) to ``dest/<name>/`` and remove the
        rest of `dest`'s skills.

        Returns:
            `dest`.
        """
        await asyncio.to_thread(_prepare_dest, dest)
        for name, latest in wanted.items():
            current = await asyncio.to_thread(_folder_version, dest / name)
            if current == latest:
                continue
            data = await read_package(name, latest)
            await asyncio.to_thread(self._install, data, dest, name)
        await asyncio.to_thread(_prune, dest, set(wanted))
        return dest

    def _install(self, data: bytes, dest: Path, name: str) -> None:
        """Extract a package beside ``dest/<name>`` and swap it in."""
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=dest))
        try:
            extract_package(data, staging, limits=self.limits)
            target = dest / name
            if target.exists():
                shutil.rmtree(target)
            (staging / name).rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _folder_version(folder: Path) -> str | None:
    if not (folder / SKILL_FILE).is_file():
        return None
    files = iter_package_files(folder, include_children=True)
    return package_version((relative, entry.path) for relative, entry in files)


def _prepare_dest(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    (dest / UPLOADED_ROOT_MARKER).touch()
    for leftover in dest.glob(".staging-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _prune(dest: Path, keep: set[str]) -> None:
    for entry in os.scandir(dest):
        stale = not entry.name.startswith(".") and entry.name not in keep
        if stale and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
