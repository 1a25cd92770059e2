"""Skill versions: the sha256 of a skill's package.

A version is computed over the package's files sorted by relative path; each file contributes
its path, its size and its bytes, so renaming, moving or editing any file changes the version
while mtimes and filesystem order do not. The workflow pins this at activation, so a running
run never sees a skill change under it. Discovery calls :func:`package_version` with the file
list it already walked; :func:`skill_version` walks on its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from skillweave.skills.files import iter_package_files, read_bytes

__all__ = ["contents_version", "package_version", "skill_version"]


def package_version(
    files: Iterable[tuple[str, str]], *, preloaded: Mapping[str, bytes] | None = None
) -> str:
    """The version of a package given ``(relative posix path, absolute path)`` pairs.

    Args:
        files: the package's files.
        preloaded: contents already read, by absolute path (discovery has read SKILL.md).
    """

    def contents() -> Iterator[tuple[str, bytes]]:
        for relative, absolute in sorted(files):
            content = preloaded.get(absolute) if preloaded else None
            yield relative, content if content is not None else read_bytes(absolute)

    return contents_version(contents())


def contents_version(files: Iterable[tuple[str, bytes]]) -> str:
    """The version of a package given ``(relative posix path, bytes)`` pairs in path order:
    the one digest every version is (a folder's, a ZIP's read in memory)."""
    digest = hashlib.sha256()
    for relative, content in files:
        digest.update(f"{relative}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


def skill_version(skill_dir: Path) -> str:
    """The version of the skill folder `skill_dir` (child skills excluded)."""
    return package_version((rel, entry.path) for rel, entry in iter_package_files(skill_dir))
