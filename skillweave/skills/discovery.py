"""Finding the skills of one or more library roots: :class:`SkillScanner`.

A scan walks each root once. Every folder holding a ``SKILL.md`` is a skill; a skill folder
inside another is its child (DESIGN §3, skill trees). The walk is bounded: outside skills it
goes at most ``max_depth`` folders deep, it stops after ``max_skills`` skills, a skill with
more than ``max_package_files`` files is refused, hidden folders, ``node_modules`` and caches
are skipped, and a symlinked folder is followed only when it stays inside its root (never
inside a skill, whose package holds regular files only).

While walking it records each skill's files with their mtime and size. That signature keys a
cache of the parsed skill and its version, so an unchanged rescan reads no file and hashes
nothing, and a rescan where nothing changed at all returns the previous result as it was.

Roots are given lowest precedence first: a later root's skill replaces an earlier one of the
same name, with a warning; two skills of one name inside a single root keep the first in walk
(sorted) order, with a warning.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from skillweave.skills._files import SKILL_FILE, is_skipped_dir, is_skipped_file
from skillweave.skills.loader import LoadedSkill, load_skill_file
from skillweave.skills.model import Skill
from skillweave.skills.spec import Diagnostic
from skillweave.skills.versioning import package_version

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_PACKAGE_FILES",
    "DEFAULT_MAX_SKILLS",
    "ScanResult",
    "SkillScanner",
]

logger = logging.getLogger("skillweave.skills")

DEFAULT_MAX_DEPTH: Final = 6
DEFAULT_MAX_SKILLS: Final = 20_000
DEFAULT_MAX_PACKAGE_FILES: Final = 1_000

_Signature = tuple[tuple[str, str, int, int], ...]


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What a scan found.

    Attributes:
        skills: the winning skill of each name, in discovery order (roots in order, each walked
            sorted), with parents and children resolved.
        diagnostics: warnings and refusals, per skill file and for the library as a whole.
        skill_dirs: how many skill folders were seen (including refused and overridden ones).
    """

    skills: dict[str, Skill]
    diagnostics: tuple[Diagnostic, ...] = ()
    skill_dirs: int = 0


@dataclass(slots=True)
class _Found:
    """A skill folder met during the walk, before loading."""

    path: str
    root_index: int
    parent: _Found | None
    files: list[tuple[str, str, int, int]] = field(default_factory=list)
    overflow: bool = False
    loaded: LoadedSkill | None = None
    version: str = ""


@dataclass(slots=True)
class _CacheEntry:
    signature: _Signature
    loaded: LoadedSkill
    version: str


class SkillScanner:
    """Scans skill library roots, caching what has not changed since the last scan.

    Args:
        roots: library roots, lowest precedence first. Missing roots are skipped quietly
            (the default roots need not exist).
        max_depth: how deep to look for skills outside skill folders.
        max_skills: stop after this many skill folders.
        max_package_files: refuse a skill with more files than this.
    """

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_skills: int = DEFAULT_MAX_SKILLS,
        max_package_files: int = DEFAULT_MAX_PACKAGE_FILES,
    ) -> None:
        self.roots = [Path(root).expanduser().absolute() for root in roots]
        self.max_depth = max_depth
        self.max_skills = max_skills
        self.max_package_files = max_package_files
        self._cache: dict[str, _CacheEntry] = {}
        self._last: tuple[tuple[tuple[str, _Signature], ...], ScanResult] | None = None

    def scan(self) -> ScanResult:
        """Walk every root and return the skills found (from cache where unchanged)."""
        diagnostics: list[Diagnostic] = []
        found: list[_Found] = []
        for index, root in enumerate(self.roots):
            if len(found) >= self.max_skills:
                break
            self._walk(root, index, found, diagnostics)
        if len(found) >= self.max_skills:
            where = str(self.roots[0]) if len(self.roots) == 1 else "skills"
            message = f"stopped after {self.max_skills} skills (skills.max_skills); rest not loaded"
            diagnostics.append(Diagnostic(where, "library", message))

        fingerprint = tuple((f.path, _signature(f)) for f in found)
        if self._last is not None and self._last[0] == fingerprint and not diagnostics:
            return self._last[1]

        cache: dict[str, _CacheEntry] = {}
        for item in found:
            self._load(item, cache, diagnostics)
        self._cache = cache
        result = _resolve(found, self.roots, diagnostics)
        self._last = (fingerprint, result)
        for diagnostic in result.diagnostics:
            logger.warning("%s", diagnostic)
        return result

    def _load(self, item: _Found, cache: dict[str, _CacheEntry], out: list[Diagnostic]) -> None:
        skill_file = os.path.join(item.path, SKILL_FILE)
        if item.overflow:
            message = f"has more than {self.max_package_files} files; not loaded"
            out.append(Diagnostic(skill_file, "package", message, fatal=True))
            return
        signature = _signature(item)
        entry = self._cache.get(item.path)
        if entry is None or entry.signature != signature:
            loaded = load_skill_file(Path(skill_file))
            version = ""
            if loaded.skill is not None:
                version = package_version((rel, absolute) for rel, absolute, _, _ in item.files)
            entry = _CacheEntry(signature, loaded, version)
        cache[item.path] = entry
        item.loaded, item.version = entry.loaded, entry.version
        out.extend(entry.loaded.diagnostics)

    def _walk(self, root: Path, index: int, found: list[_Found], out: list[Diagnostic]) -> None:
        if not root.is_dir():
            return
        real_root = os.path.realpath(root)
        visited = {real_root}
        # (directory, depth below root, owning skill, path prefix inside the owner's package)
        stack: list[tuple[str, int, _Found | None, str]] = [(str(root), 0, None, "")]
        while stack:
            directory, depth, owner, prefix = stack.pop()
            dirs: list[os.DirEntry[str]] = []
            files: list[os.DirEntry[str]] = []
            is_skill = False
            try:
                with os.scandir(directory) as iterator:
                    for entry in iterator:
                        if entry.is_dir():
                            if not is_skipped_dir(entry.name):
                                dirs.append(entry)
                        elif entry.is_file(follow_symlinks=False):
                            files.append(entry)
                            is_skill = is_skill or entry.name == SKILL_FILE
            except OSError as exc:
                out.append(Diagnostic(directory, "library", f"cannot be read: {exc.strerror}"))
                continue
            if is_skill:
                if len(found) >= self.max_skills:
                    return
                owner = _Found(directory, index, owner)
                prefix = ""
                found.append(owner)
            if owner is not None and not owner.overflow:
                for entry in files:
                    if not is_skipped_file(entry.name):
                        stat = entry.stat()
                        record = (prefix + entry.name, entry.path, stat.st_mtime_ns, stat.st_size)
                        owner.files.append(record)
                owner.overflow = len(owner.files) > self.max_package_files
            if len(dirs) > 1:
                dirs.sort(key=_entry_name, reverse=True)  # reversed: the stack pops in name order
            for entry in dirs:
                if entry.is_symlink():
                    if owner is not None or not self._follow(entry.path, real_root, visited):
                        continue
                elif owner is None and depth >= self.max_depth:
                    continue
                stack.append((entry.path, depth + 1, owner, f"{prefix}{entry.name}/"))

    def _follow(self, path: str, real_root: str, visited: set[str]) -> bool:
        real = os.path.realpath(path)
        if real in visited:
            return False
        if os.path.commonpath([real, real_root]) != real_root:
            logger.info("not following %s: it leads outside %s", path, real_root)
            return False
        visited.add(real)
        return True


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _signature(item: _Found) -> _Signature:
    # Walk order, not sorted: an unchanged folder lists in the same order, and a reordered one
    # merely costs a reload. Versions sort their input, so they never depend on this order.
    return tuple(item.files)


def _resolve(found: list[_Found], roots: list[Path], out: list[Diagnostic]) -> ScanResult:
    """Apply precedence between duplicates and link parents and children."""
    winners: dict[str, _Found] = {}
    for item in found:
        if item.loaded is None or item.loaded.skill is None:
            continue
        name = item.loaded.skill.name
        previous = winners.get(name)
        if previous is None:
            winners[name] = item
            continue
        here = os.path.join(item.path, SKILL_FILE)
        there = os.path.join(previous.path, SKILL_FILE)
        if os.path.realpath(item.path) == os.path.realpath(previous.path):
            # The same folder reached through a symlink: one skill, kept under its real path.
            if os.path.realpath(item.path) == item.path:
                winners[name] = item
            continue
        if previous.root_index == item.root_index:
            message = f"duplicate skill name {name!r}; {there} is kept, this one is ignored"
            out.append(Diagnostic(here, "name", message))
        else:
            message = f"skill {name!r} overrides the one in {roots[previous.root_index]}"
            out.append(Diagnostic(here, "name", message))
            del winners[name]  # re-insert so that order follows the overriding root
            winners[name] = item

    by_path = {item.path: name for name, item in winners.items()}
    parents: dict[str, str | None] = {}
    children: dict[str, list[str]] = {name: [] for name in winners}
    for name, item in winners.items():
        ancestor = item.parent
        while ancestor is not None and ancestor.path not in by_path:
            ancestor = ancestor.parent  # a refused or overridden parent: attach to the next one up
        parent_name = by_path[ancestor.path] if ancestor is not None else None
        parents[name] = parent_name
        if parent_name is not None:
            children[parent_name].append(name)

    skills: dict[str, Skill] = {}
    for name, item in winners.items():
        loaded = item.loaded.skill if item.loaded is not None else None
        if loaded is None:  # pragma: no cover - winners hold loaded skills only
            continue
        skills[name] = replace(
            loaded,
            version=item.version,
            parent=parents[name],
            children=tuple(sorted(children[name])),
            source=roots[item.root_index],
        )
    return ScanResult(skills=skills, diagnostics=tuple(out), skill_dirs=len(found))
