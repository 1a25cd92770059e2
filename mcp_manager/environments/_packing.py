"""Packing a finished build: what it left checked, measured and written as the tar.gz.

:func:`pack` checks ``python/`` and ``node/`` (regular files and folders only, at most
``max_bytes`` of them) and writes the archive with :data:`ENVIRONMENT_MANIFEST`; the builder
(``_builder``) calls it once the installers are done. :func:`tree_bytes` measures a running
build for the build sandbox (``_sandbox``), which stops one that writes too much.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from mcp_manager.environments._failure import BuildFailed

__all__ = ["ENVIRONMENT_MANIFEST", "MAX_BUILD_DEPTH", "pack", "tree_bytes"]

ENVIRONMENT_MANIFEST: Final = "skillweave-environment.json"
"""The archive member that says what the environment is (spec digest, runtime, platform)."""

MAX_BUILD_DEPTH: Final = 128
"""Folder levels below ``python/`` or ``node/`` a build may leave (nested ``node_modules``
stay far below it); a deeper tree fails the build."""


def _walk_build(root: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Every entry under `root` (not `root` itself, never following a symlink): per folder,
    its subfolders then its other entries, each in name order, before what lies below
    them (the order ``os.walk`` gave). Iterative, since a build's scripts may have left a
    tree of any depth (``os.walk`` recurses).

    Raises:
        BuildFailed: a tree deeper than :data:`MAX_BUILD_DEPTH`, or an entry the system refuses
            to read (a path too long).
    """
    pending: list[tuple[Path, int]] = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        folders: list[tuple[Path, os.stat_result]] = []
        others: list[tuple[Path, os.stat_result]] = []
        try:
            with os.scandir(folder) as found:
                names = sorted(entry.name for entry in found)
            for name in names:
                path = folder / name
                with contextlib.suppress(FileNotFoundError):
                    info = path.lstat()
                    (folders if stat.S_ISDIR(info.st_mode) else others).append((path, info))
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise BuildFailed(
                f"the build made an entry under {root.name}/ that cannot be read ({exc.strerror});"
                " an environment holds packages, not such trees"
            ) from None
        if folders and depth + 1 > MAX_BUILD_DEPTH:
            raise BuildFailed(
                f"the build made a tree deeper than {MAX_BUILD_DEPTH} levels under {root.name}/;"
                " an environment holds packages, not such trees"
            )
        yield from folders
        yield from others
        pending.extend((path, depth + 1) for path, _ in reversed(folders))


def tree_bytes(root: Path) -> int:
    """Bytes of the regular files under `root` (not following symlinks).

    Raises:
        BuildFailed: a tree too deep to measure (:func:`_walk_build`): the build stops there.
    """
    return sum(info.st_size for _, info in _walk_build(root) if stat.S_ISREG(info.st_mode))


def pack(build: Path, archive: Path, manifest: dict[str, object], max_bytes: int) -> None:
    """Check what the build left and pack ``python/`` and ``node/`` with the manifest.

    An environment holds regular files and folders only (the executor unpacks nothing else):
    a symlink, device, fifo or socket fails the build rather than being dropped silently, and
    hard links are stored as separate files.

    Raises:
        BuildFailed: an entry that is not a file or folder, or more than `max_bytes` of files.
    """
    entries: list[tuple[Path, str, os.stat_result]] = []
    total = 0
    for top in ("python", "node"):
        root = build / top
        if not root.is_dir():
            continue
        for path, info in _walk_build(root):
            relative = path.relative_to(build).as_posix()
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
            elif stat.S_ISLNK(info.st_mode):
                raise BuildFailed(
                    f"the build left a symlink, {relative} -> {os.readlink(path)}; "
                    "environments hold files and folders only"
                )
            elif not stat.S_ISDIR(info.st_mode):
                raise BuildFailed(f"the build left {relative}, which is not a file or a folder")
            entries.append((path, relative, info))
    if total > max_bytes:
        raise BuildFailed(
            f"the environment is {total} bytes unpacked, more than max_bytes "
            f"(sandbox.environments.max_bytes = {max_bytes})"
        )
    manifest = {**manifest, "bytes": total, "entries": len(entries)}
    data = json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"
    mtime = int(time.time())

    def member(name: str, mode: int, kind: bytes, size: int = 0) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.mode = mode & 0o755  # no setuid, setgid, sticky, group- or world-writable bits
        info.size = size
        info.mtime = mtime
        return info

    with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
        tar.addfile(
            member(ENVIRONMENT_MANIFEST, 0o644, tarfile.REGTYPE, len(data)), io.BytesIO(data)
        )
        for path, relative, info in entries:
            if stat.S_ISDIR(info.st_mode):
                tar.addfile(member(relative, info.st_mode | 0o700, tarfile.DIRTYPE))
                continue
            with path.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                tar.addfile(member(relative, info.st_mode | 0o600, tarfile.REGTYPE, size), handle)
