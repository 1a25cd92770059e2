"""The whole skill library: :class:`SkillLibrary`, the directory roots and the store's skills.

A library is the configured directory roots (``SKILLS__DIRS``, or roots given instead, e.g.
``--dir``) and, when it is given the artifact store, the store's skills (installed with
``skills install``, uploaded over the API, published by agents: ``stored.StoredSkills``).
The store's enabled skills are materialized into a folder of this process's own
(:func:`owned_folder`: ``SKILLS__UPLOADED_DIR/ROLE-PID``) and scanned beside the directories,
so one precedence and ownership rule holds for both: discovery's (that folder carries
``names.UPLOADED_ROOT_MARKER``: a stored skill never shadows a directory skill), which the
store's name ownership mirrors when a package is stored.

:meth:`SkillLibrary.reload` is the one refresh, and it is cheap when nothing changed: one stat
of the store's generation marker (``keys.SKILLS_GENERATION_KEY``, rewritten by every change of
a record), the records read again only when it moved (and every
``SKILLS__UPLOADED_REFRESH_SECONDS``, for writers that do not write it), a package fetched only
when its version is not the one already in the folder, then the scanner's cached rescan.
:func:`~skillweave.skills.reload.reloading` calls it every ``SKILLS__RELOAD_SECONDS``.
:meth:`SkillLibrary.entries` lists every skill with its source and state, the store's disabled
and held skills too (which are not materialized).

Callers: every door (the CLI's ``cli.library``, ``compose``, ``worker``, ``dev``, ``mcp``,
the API's ``api.skills``, the manager's MCP front door), the manager's execution service
(directories only: the versions secrets bind to), and the engines' services (a published
skill is served at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from skillweave.config import BUNDLED, Settings, SkillsSettings
from skillweave.errors import ConfigError
from skillweave.skills.discovery import ScanResult, SkillScanner
from skillweave.skills.model import Skill
from skillweave.skills.package import PackageLimits
from skillweave.skills.registry import SkillRegistry
from skillweave.skills.selection import resolve_strategy
from skillweave.skills.stored import StoredSkill, StoredSkills, store_source
from skillweave.storage import ArtifactStore

__all__ = [
    "LibraryEntry",
    "SkillLibrary",
    "SkillSource",
    "SkillState",
    "configured_roots",
    "owned_folder",
    "package_limits",
    "process_folder",
    "source_of",
    "state_of",
]

SkillSource = Literal["directory", "installed", "uploaded", "agent"]
"""Where a skill of the library comes from: a directory root, or the store, where it was
installed (from git, a ZIP or a folder), uploaded over the API, or published by an agent."""

SkillState = Literal["enabled", "held", "disabled"]
"""Whether runs may use it: enabled, held off until an operator approves it (its scan said
so), or switched off (``SKILLS__DISABLED``, or the store's switch)."""

_DEFAULT_DIRS: Final = frozenset({BUNDLED, "./.agents/skills", "~/.skillweave/skills"})
"""Roots that may be missing even when ``SKILLS__DIRS`` names them: the built-in defaults."""


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    """One skill of the library as a listing shows it.

    Attributes:
        name: its name.
        description: what it does.
        version: its version (the store's latest for a store skill).
        source: where it comes from.
        state: whether runs may use it.
        skill: the skill as runs see it; None for a store skill that is not served (held or
            disabled ones are not materialized).
        record: its record in the store (a child of a stored package: its top's).
    """

    name: str
    description: str
    version: str
    source: SkillSource
    state: SkillState
    skill: Skill | None = None
    record: StoredSkill | None = None


def source_of(record: StoredSkill) -> SkillSource:
    """Where a store skill's latest version came from (``stored.store_source``)."""
    return store_source(record)


def state_of(record: StoredSkill) -> SkillState:
    """A store skill's state, from its record."""
    if record.enabled:
        return "enabled"
    return "held" if record.held else "disabled"


def package_limits(settings: SkillsSettings) -> PackageLimits:
    """What one package may hold, from the ``skills`` settings."""
    return PackageLimits(
        max_files=settings.package_max_files,
        max_bytes=settings.package_max_bytes,
        max_ratio=settings.package_max_ratio,
    )


def configured_roots(settings: SkillsSettings) -> list[Path]:
    """The roots of ``SKILLS__DIRS``, lowest precedence first, each checked: the entry point
    of a command a user starts (the CLI's) calls this, so that a typo is not "no skills".

    Raises:
        ConfigError: a root the user set (not a built-in default) is not a folder.
    """
    roots = settings.resolved_dirs()
    if "dirs" in settings.model_fields_set:
        missing = [
            entry
            for entry, root in zip(settings.dirs, roots, strict=True)
            if entry not in _DEFAULT_DIRS and not root.is_dir()
        ]
        if missing:
            raise ConfigError(
                f"SKILLS__DIRS: not a directory: {', '.join(missing)} (create it, or leave it"
                " out of SKILLS__DIRS)"
            )
    return roots


def process_folder(root: Path, role: str) -> Path:
    """This process's folder under `root` (``ROLE-PID``), after removing the folders of
    processes that are gone (a killed worker leaves its own, and its ``.pinned`` one)."""
    root = root.expanduser()
    if root.is_dir():
        for folder in root.iterdir():
            pid = folder.name.removesuffix(".pinned").rpartition("-")[2]
            if folder.is_dir() and pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(folder, ignore_errors=True)
    return root / f"{role}-{os.getpid()}"


@contextlib.contextmanager
def owned_folder(settings: Settings, role: str) -> Iterator[Settings]:
    """`settings` with this process's own folder for the store's skills
    (:func:`process_folder` under ``SKILLS__UPLOADED_DIR``), and so ``ROLE-PID.pinned`` for
    the pinned versions it unpacks: processes on one host never unpack into each other's.
    Both are removed when the context ends."""
    dest = process_folder(settings.skills.uploaded_dir, role)
    skills = settings.skills.model_copy(update={"uploaded_dir": dest})
    own = settings.model_copy(update={"skills": skills})
    try:
        yield own
    finally:
        shutil.rmtree(dest, ignore_errors=True)
        shutil.rmtree(own.skills.pinned_dir, ignore_errors=True)


class SkillLibrary:
    """The skill library: directory roots, and the store's skills when given the store.

    Args:
        settings: the ``skills`` settings section.
        dirs: roots to use instead of ``SKILLS__DIRS`` (lowest precedence first).
        store: the artifact store whose skills belong to the library too (None: directories
            only, as the manager's library).
        folder: where the store's enabled skills are materialized: this process's own
            (:func:`owned_folder`); default ``settings.uploaded_dir``.
    """

    def __init__(
        self,
        settings: SkillsSettings,
        *,
        dirs: Sequence[Path] | None = None,
        store: ArtifactStore | None = None,
        folder: Path | None = None,
    ) -> None:
        self.settings = settings
        # A missing root is an empty one here; the commands a user starts check theirs first.
        self._roots = list(dirs) if dirs is not None else settings.resolved_dirs()
        self.stored = (
            StoredSkills(store, limits=package_limits(settings)) if store is not None else None
        )
        self.folder = (folder or settings.uploaded_dir).expanduser() if store is not None else None
        self.scanner = SkillScanner(
            [*self._roots, self.folder] if self.folder is not None else self._roots,
            max_depth=settings.max_depth,
            max_skills=settings.max_skills,
            max_package_files=settings.package_max_files,
            include_hidden=settings.include_hidden,
        )
        self._registry: SkillRegistry | None = None
        self._result: ScanResult | None = None
        self._lock = threading.Lock()  # a reload and an upload may rescan at once
        self._reloading = asyncio.Lock()
        self._records: tuple[StoredSkill, ...] = ()
        self._generation: str | None = None
        self._read_at = -math.inf  # when the records were last read (monotonic)
        resolve_strategy(settings.selection)  # a strategy this install cannot run: say so now

    @property
    def roots(self) -> list[Path]:
        """The directory roots, lowest precedence first."""
        return list(self._roots)

    @property
    def registry(self) -> SkillRegistry | None:
        """The registry of the last :meth:`refresh` or :meth:`reload` (None before the
        first)."""
        return self._registry

    @property
    def records(self) -> tuple[StoredSkill, ...]:
        """The store's records as the last :meth:`reload` read them, every state."""
        return self._records

    def refresh(self) -> SkillRegistry:
        """Rescan the folders and return the current registry (the same object when nothing
        changed); the store is not read (:meth:`reload` does). Safe to call from several
        threads: one scan at a time."""
        with self._lock:
            result = self.scanner.scan()
            if self._registry is None or result is not self._result:
                self._result = result
                self._registry = SkillRegistry.from_scan(
                    result, disabled=self.settings.disabled, selection=self.settings.selection
                )
            return self._registry

    async def reload(self) -> SkillRegistry:
        """Bring the store's changes into the folder (when there is a store), rescan, and
        return the current registry (the same object when nothing changed)."""
        async with self._reloading:
            if self.stored is not None and self.folder is not None:
                await self._sync(self.stored, self.folder)
            return await asyncio.to_thread(self.refresh)

    async def _sync(self, stored: StoredSkills, folder: Path) -> None:
        """Read the records again when the marker moved (or a while passed) and materialize
        what changed; unchanged versions stay in the folder untouched."""
        generation = await stored.generation()
        now = time.monotonic()
        fresh = now - self._read_at < self.settings.uploaded_refresh_seconds
        if fresh and generation == self._generation and folder.is_dir():
            return
        # The marker is read before the records: a change in between is seen next time.
        records = tuple(await stored.list())
        if records != self._records or not folder.is_dir():
            await stored.materialize(folder, records=records)
        self._records, self._generation, self._read_at = records, generation, now

    def entries(self) -> list[LibraryEntry]:
        """Every skill of the library, in display order (each tree's skills after its root),
        with its source and state; then the store's skills that are not served (held or
        disabled). Empty before the first :meth:`refresh`."""
        registry = self._registry
        if registry is None:
            return []
        records = {record.name: record for record in self._records}
        out: list[LibraryEntry] = []
        served: set[str] = set()

        def add(skill: Skill) -> None:
            owner = registry.owner_of(skill.name)
            record = records.get(owner.source) if owner.kind == "uploaded" else None
            if record is not None:
                served.add(record.name)
            out.append(
                LibraryEntry(
                    name=skill.name,
                    description=skill.description,
                    version=skill.version,
                    source=source_of(record) if record is not None else "directory",
                    state="enabled" if registry.is_enabled(skill.name) else "disabled",
                    skill=skill,
                    record=record,
                )
            )
            for child in registry.children_of(skill.name):
                add(child)

        for root in registry.roots():
            add(root)
        for record in self._records:
            if record.name not in served and not record.enabled:
                out.append(
                    LibraryEntry(
                        name=record.name,
                        description=record.description,
                        version=record.latest,
                        source=source_of(record),
                        state=state_of(record),
                        record=record,
                    )
                )
        return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
