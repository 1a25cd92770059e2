"""Which files belong to a skill's package, shared by versioning, packing and resource listing.

A skill's package is every regular file under its folder, except folders that are never part of
a skill (VCS metadata, dependency caches, hidden folders) and, unless asked for, the folders of
child skills (a child is a skill of its own with its own package and version).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Final

SKILL_FILE: Final = "SKILL.md"
SKIPPED_DIRS: Final = frozenset({"node_modules", "__pycache__", "venv", "site-packages"})
SKIPPED_FILE_SUFFIXES: Final = (".pyc", ".pyo")


def is_skipped_dir(name: str) -> bool:
    """True for folders that never belong to a skill: hidden ones, caches, dependencies."""
    return name.startswith(".") or name in SKIPPED_DIRS


def is_skipped_file(name: str) -> bool:
    """True for files that never belong to a skill package: hidden files (``.env`` may hold
    secrets, so it must never reach a model or a sandbox) and compiled bytecode."""
    return name.startswith(".") or name.endswith(SKIPPED_FILE_SUFFIXES)


def iter_package_files(
    root: Path, *, include_children: bool = False
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Yield ``(relative posix path, DirEntry)`` for each file of the package rooted at `root`.

    Symlinks are never followed nor yielded (a package holds regular files only). Order is
    unspecified; callers that need a stable order sort by the relative path.
    """
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if is_skipped_dir(entry.name):
                    continue
                if not include_children and os.path.isfile(os.path.join(entry.path, SKILL_FILE)):
                    continue
                stack.append((entry.path, f"{prefix}{entry.name}/"))
            elif entry.is_file(follow_symlinks=False) and not is_skipped_file(entry.name):
                yield f"{prefix}{entry.name}", entry


_READ_CHUNK: Final = 256 * 1024


def read_bytes(path: str) -> bytes:
    """Read a whole file with plain ``os`` calls.

    A scan reads tens of thousands of small files; skipping the buffered file object that
    ``open()`` builds takes about a third off the cost of each read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunk = os.read(fd, _READ_CHUNK)
        if len(chunk) < _READ_CHUNK:  # a short read of a regular file is its end
            return chunk
        chunks = [chunk]
        while chunk := os.read(fd, _READ_CHUNK):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def remove_tree(path: Path) -> None:
    """Remove a folder tree, also where its folders were made read-only (a sandbox's
    read-only workspace parts, a cached environment, a package that took its own write bits)."""
    if not os.path.lexists(path):
        return
    try:
        shutil.rmtree(path)
    except OSError:
        for folder, _, _ in os.walk(path):
            with contextlib.suppress(OSError):
                os.chmod(folder, 0o700)
        shutil.rmtree(path, ignore_errors=True)
