"""Walking one library root for skill folders, within bounds: :class:`RootWalker`.

Every folder holding a ``SKILL.md`` is a skill; a skill folder inside another is its child.
Outside skills the walk goes at most ``max_depth`` folders deep; it stops after
``max_skills`` skills; a skill with more than ``max_package_files`` files is marked as
overflowing (the cache refuses to load it); hidden folders (unless asked for), VCS metadata,
``node_modules`` and caches are skipped; a symlinked folder is followed only when it stays
inside its root, and never inside a skill (whose package holds regular files only). Each
folder's mtime is recorded for the cheap rescan (``_cache``). Called by ``SkillScanner`` and
by the hidden-skills hint (``_hidden``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Final

from skillweave.skills.discovery._found import FoundSkill
from skillweave.skills.files import SKILL_FILE, is_skipped_dir, is_skipped_file
from skillweave.skills.spec import Diagnostic

__all__ = ["RootWalker"]

logger = logging.getLogger("skillweave.skills")

_VCS_DIRS: Final = frozenset({".git", ".hg", ".svn"})
"""Hidden folders never walked, even with ``include_hidden``: they hold no skills."""


class RootWalker:
    """Finds the skill folders of a root.

    Args:
        max_depth: how deep to look for skills outside skill folders.
        max_skills: stop once `found` holds this many skill folders.
        max_package_files: mark a skill with more files than this as overflowing.
    """

    def __init__(self, *, max_depth: int, max_skills: int, max_package_files: int) -> None:
        self.max_depth = max_depth
        self.max_skills = max_skills
        self.max_package_files = max_package_files

    def walk(
        self,
        root: Path,
        index: int,
        found: list[FoundSkill],
        dirs_seen: list[tuple[str, int]],
        out: list[Diagnostic],
        *,
        include_hidden: bool,
    ) -> int:
        """Walk one root, appending the skill folders it holds to `found`; returns how many
        hidden folders outside skills were skipped (0 when `include_hidden`)."""
        real_root = os.path.realpath(root)
        visited = {real_root}
        skipped_hidden = 0
        # The hot loop of a scan: it meets every folder and file of the library once.
        stat, scandir = os.stat, os.scandir
        # (directory, depth below root, owning skill, path prefix inside the owner's package,
        # reached through a symlink)
        stack: list[tuple[str, int, FoundSkill | None, str, bool]] = [
            (str(root), 0, None, "", False)
        ]
        while stack:
            directory, depth, owner, prefix, linked = stack.pop()
            dirs: list[os.DirEntry[str]] = []
            hidden: list[os.DirEntry[str]] = []
            files: list[os.DirEntry[str]] = []
            is_skill = False
            try:
                # Stat before listing: a change during the listing then shows up next time.
                dirs_seen.append((directory, stat(directory).st_mtime_ns))
                with scandir(directory) as iterator:
                    for entry in iterator:
                        name = entry.name
                        if entry.is_dir():
                            if not is_skipped_dir(name):
                                dirs.append(entry)
                            elif name[0] == "." and name not in _VCS_DIRS:
                                hidden.append(entry)
                        elif entry.is_file(follow_symlinks=False):
                            files.append(entry)
                            if name == SKILL_FILE:
                                is_skill = True
            except OSError as exc:
                out.append(Diagnostic(directory, "library", f"cannot be read: {exc.strerror}"))
                continue
            if is_skill:
                if len(found) >= self.max_skills:
                    return skipped_hidden
                owner = FoundSkill(directory, index, owner, linked=linked)
                prefix = ""
                found.append(owner)
            if owner is not None:
                if not owner.overflow:
                    self._record(owner, files, prefix)
            elif hidden:  # outside skills only: a skill's package never holds hidden folders
                if include_hidden:
                    dirs += hidden
                else:
                    skipped_hidden += len(hidden)
            if len(dirs) > 1:
                dirs.sort(key=_entry_name, reverse=True)  # reversed: the stack pops in name order
            for entry in dirs:
                link = entry.is_symlink()
                if link:
                    if owner is not None or not _follow(entry.path, real_root, visited):
                        continue
                elif owner is None and depth >= self.max_depth:
                    continue
                stack.append(
                    (entry.path, depth + 1, owner, f"{prefix}{entry.name}/", linked or link)
                )
        return skipped_hidden

    def _record(self, owner: FoundSkill, files: list[os.DirEntry[str]], prefix: str) -> None:
        """Add one folder's package files to `owner`, noting when it has too many."""
        records = owner.files
        for entry in files:
            name = entry.name
            if not is_skipped_file(name):
                info = entry.stat()
                records.append((prefix + name, entry.path, info.st_mtime_ns, info.st_size))
        owner.overflow = len(records) > self.max_package_files


def _follow(path: str, real_root: str, visited: set[str]) -> bool:
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
