"""Which files belong to a skill's package, shared by versioning, packing and resource listing.

A skill's package is every regular file under its folder, except folders that are never part of
a skill (VCS metadata, dependency caches, hidden folders) and, unless asked for, the folders of
child skills (a child is a skill of its own with its own package and version).

Also `remove_tree`, the one way a folder tree is removed (sandbox workspaces and executor
folders by the executor and the local backend, unpacked packages, environment builds): it
removes trees of any depth and mode, which a script may have shaped to survive.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

logger = logging.getLogger(__name__)

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
            with os.scandir(directory) as found:
                entries = list(found)
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


_DIR_OPEN: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_PATH: Final = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: Path) -> None:
    """Remove a file or a folder tree, whatever its depth, width or modes; best effort (what
    cannot be removed is logged, never raised: callers are clean-ups).

    Trees made by a sandbox's script are hostile: thousands of levels (whose paths are far
    over PATH_MAX), folders without read, write or search bits, symlinks anywhere. So the
    walk is iterative (no recursion to exhaust), works from open folders (``*at`` calls on a
    name, never a long path), holds two folders open at most (it climbs back with ``..``,
    checked against the folder it came down from), follows no symlink, and gives a folder
    of its owner's back the bits it needs (``shutil.rmtree`` and ``os.walk`` recurse).
    """
    try:
        parent = os.open(path.parent, _DIR_OPEN)
    except FileNotFoundError:
        return
    except OSError as exc:
        logger.warning("%s: not removed: %s", path, exc)
        return
    try:
        _remove_at(parent, path.name)
    except OSError as exc:
        logger.warning("%s: not removed: %s", path, exc)
    finally:
        os.close(parent)


def _remove_at(parent: int, name: str) -> None:
    """Remove `name` in the open folder `parent`: a file at once, a folder emptied first."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=parent)
        return
    folder = _open_folder(parent, name)
    # The folders between `parent` and the one open now (their identities and names), so
    # that each climb back up lands where the walk came down from.
    above: list[tuple[int, int]] = [_identity(parent)]
    names: list[str] = [name]
    try:
        while True:
            inner = _clear_files(folder)
            if inner is not None:
                below = _open_folder(folder, inner)
                above.append(_identity(folder))
                names.append(inner)
                os.close(folder)
                folder = below
                continue
            up = os.open("..", _DIR_OPEN, dir_fd=folder)
            if _identity(up) != above[-1]:
                os.close(up)
                raise OSError(f"a folder moved while it was removed (under {name!r})")
            os.close(folder)
            folder = up
            above.pop()
            os.rmdir(names.pop(), dir_fd=folder)
            if not names:
                return
    finally:
        os.close(folder)


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _open_folder(parent: int, name: str) -> int:
    """Open the folder `name` of `parent` (never through a symlink) with the owner's rwx
    bits: a script may have taken them away; an owner can give them back."""
    try:
        folder = os.open(name, _DIR_OPEN, dir_fd=parent)
    except PermissionError:
        handle = os.open(name, _DIR_PATH, dir_fd=parent)
        try:  # a path-only handle cannot fchmod; its /proc link reaches the same inode
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
        finally:
            os.close(handle)
        folder = os.open(name, _DIR_OPEN, dir_fd=parent)
    if os.fstat(folder).st_mode & 0o700 != 0o700:
        with contextlib.suppress(OSError):  # not its owner: root needs no bits anyway
            os.fchmod(folder, 0o700)
    return folder


def _clear_files(folder: int) -> str | None:
    """Unlink everything but folders in the open `folder`; the name of a folder left in it,
    or None once it is empty."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                return entry.name
            os.unlink(entry.name, dir_fd=folder)
    return None
