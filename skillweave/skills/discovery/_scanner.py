"""Finding the skills of one or more library roots: :class:`SkillScanner`.

A scan walks each root once (``_walk``: bounded depth and count, skips); a root that yields
no skill but hides some in hidden folders gets a hint (``_hidden``); the skills found are
loaded through the cache (``_cache``), and precedence between sources picks each name's
owner (``_precedence``). Called by ``skills.library`` and ``skills.registry`` (through
``ScanResult``), by strict validation and by the CLI.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from skillweave.skills.discovery._cache import RACY_WINDOW_NS, SkillCache, Snapshot
from skillweave.skills.discovery._found import FoundSkill, ScanResult
from skillweave.skills.discovery._hidden import hidden_skills_hint
from skillweave.skills.discovery._precedence import resolve
from skillweave.skills.discovery._walk import RootWalker
from skillweave.skills.names import UPLOADED_ROOT_MARKER
from skillweave.skills.spec import Diagnostic

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_PACKAGE_FILES",
    "DEFAULT_MAX_SKILLS",
    "SkillScanner",
]

logger = logging.getLogger("skillweave.skills")

DEFAULT_MAX_DEPTH: Final = 6
DEFAULT_MAX_SKILLS: Final = 20_000
DEFAULT_MAX_PACKAGE_FILES: Final = 1_000


class SkillScanner:
    """Scans skill library roots, caching what has not changed since the last scan.

    An unchanged rescan lists no folder and reads no file: it stats the folders and files the
    last walk saw (a folder's mtime changes whenever an entry is added, removed or renamed in
    it) and returns the previous result. Any difference means a full walk, in which skills
    whose files kept their signature are taken from the cache and only changed ones are
    parsed and hashed again.

    Args:
        roots: library roots, lowest precedence first. Missing roots are skipped quietly
            (the default roots need not exist).
        max_depth: how deep to look for skills outside skill folders.
        max_skills: stop after this many skill folders.
        max_package_files: refuse a skill with more files than this.
        include_hidden: also look for skills in hidden folders (outside skills).
    """

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_skills: int = DEFAULT_MAX_SKILLS,
        max_package_files: int = DEFAULT_MAX_PACKAGE_FILES,
        include_hidden: bool = False,
    ) -> None:
        self.roots = [Path(root).expanduser().absolute() for root in roots]
        self.max_depth = max_depth
        self.max_skills = max_skills
        self.max_package_files = max_package_files
        self.include_hidden = include_hidden
        self.full_walks = 0
        self._walker = RootWalker(
            max_depth=max_depth, max_skills=max_skills, max_package_files=max_package_files
        )
        self._cache = SkillCache(max_package_files=max_package_files)
        self._snapshot: Snapshot | None = None

    def scan(self) -> ScanResult:
        """Return the skills of the roots, walking and loading only what changed."""
        with _gc_paused():
            snapshot = self._snapshot
            if snapshot is not None and snapshot.trusted and snapshot.still_valid():
                return snapshot.result
            return self._full_scan(snapshot)

    def _full_scan(self, previous: Snapshot | None) -> ScanResult:
        self.full_walks += 1
        started = time.time_ns()
        diagnostics: list[Diagnostic] = []
        found: list[FoundSkill] = []
        dirs: list[tuple[str, int]] = []
        missing: list[str] = []
        uploaded: set[int] = set()
        for index, root in enumerate(self.roots):
            if len(found) >= self.max_skills:
                break
            if not root.is_dir():
                missing.append(str(root))
                continue
            if (root / UPLOADED_ROOT_MARKER).is_file():
                uploaded.add(index)
            before = len(found)
            skipped_hidden = self._walker.walk(
                root, index, found, dirs, diagnostics, include_hidden=self.include_hidden
            )
            no_skills = len(found) == before
            if skipped_hidden and no_skills:
                hint = hidden_skills_hint(self._walker, root, index, dirs)
                if hint is not None:
                    diagnostics.append(hint)
        if len(found) >= self.max_skills:
            where = str(self.roots[0]) if len(self.roots) == 1 else "skills"
            message = f"stopped after {self.max_skills} skills (skills.max_skills); rest not loaded"
            diagnostics.append(Diagnostic(where, "library", message))
        walk_diagnostics = tuple(diagnostics)

        unchanged = self._cache.load_all(found, diagnostics, started)
        paths = tuple(item.path for item in found)
        if (
            previous is not None
            and unchanged
            and previous.paths == paths
            and previous.walk_diagnostics == walk_diagnostics
            and previous.uploaded == uploaded
        ):
            result = previous.result
        else:
            result = resolve(found, self.roots, frozenset(uploaded), diagnostics)
            for diagnostic in result.diagnostics:
                logger.warning("%s", diagnostic)

        horizon = started - RACY_WINDOW_NS
        self._snapshot = Snapshot(
            dirs=tuple(dirs),
            files=tuple((p, mtime, size) for item in found for _, p, mtime, size in item.files),
            missing_roots=tuple(missing),
            paths=paths,
            walk_diagnostics=walk_diagnostics,
            uploaded=frozenset(uploaded),
            result=result,
            trusted=self._cache.trusted and all(m < horizon for _, m in dirs),
        )
        return result


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector. A scan allocates some 10^5 small objects that all
    survive it; generational collections would walk them again and again for nothing (the
    pause saves about a tenth of a cold scan). Reference counting still frees as usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
