"""The disk budget of one run: what a script wrote to its workspace, by apparent size.

RLIMIT_FSIZE caps each file; this caps them all together (``ExecutionLimits.max_disk_mb``).
Sizes are apparent sizes (``st_size``), not blocks on disk: a sparse file of 0 bytes on disk
that says it is 641 MiB becomes 641 MiB once stored, so it counts as 641 MiB here. The
package, inputs and prepared environment the executor itself put in the workspace are not
counted (they are read-only to the script); ``/tmp`` and ``/dev/shm`` inside a contained
sandbox are tmpfs mounts capped separately.

The executor polls the usage while the script runs and stops it once over (the overshoot is
what a script writes in one poll interval), and checks once more when it ends, so a run over
its budget never hands back outputs. A plain walk (no quota or loop device) because the
executor must work unprivileged in a pod, where neither is available.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Final

__all__ = ["POLL_SECONDS", "usage", "watch"]

POLL_SECONDS: Final = 0.1
_MAX_ENTRIES: Final = 1_000_000
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""A workspace with more entries than this counts as over any budget (a walk must end)."""


def usage(root: Path, *, skip: Iterable[str] = ()) -> int:
    """Apparent bytes of every file under `root`, symlinks not followed; the top-level
    folders named in `skip` are left out. A folder that vanishes mid-walk counts as empty.

    The script may have made the tree thousands of levels deep (paths far over PATH_MAX), so
    the walk is iterative and goes from open folders by name: down with ``openat``, back up
    with ``..``, checked against the folder it came down from (a folder the running script
    moved meanwhile ends this count early; the count after the run, with nothing running,
    is the one that decides whether outputs are kept). Two folders are open at most.
    """
    try:
        folder = os.open(root, _DIR_FLAGS)
    except OSError:
        return 0
    skipped = set(skip)
    total = entries = 0
    # Per folder from `root` down to the open one: its identity and the subfolders left.
    path: list[tuple[tuple[int, int], list[str]]] = []
    try:
        while True:
            inner: list[str] = []
            try:
                with os.scandir(folder) as found:
                    for entry in found:
                        entries += 1
                        if entries > _MAX_ENTRIES:
                            return 1 << 62
                        if not path and entry.name in skipped:
                            continue
                        try:
                            info = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        if stat.S_ISDIR(info.st_mode):
                            inner.append(entry.name)
                        else:
                            total += info.st_size
            except OSError:
                pass
            path.append((_identity(folder), inner))
            while True:
                if path[-1][1]:
                    try:
                        below = os.open(path[-1][1].pop(), _DIR_FLAGS, dir_fd=folder)
                    except OSError:
                        continue
                    os.close(folder)
                    folder = below
                    break
                path.pop()
                if not path:
                    return total
                try:
                    up = os.open("..", _DIR_FLAGS, dir_fd=folder)
                except OSError:
                    return total
                os.close(folder)
                folder = up
                if _identity(folder) != path[-1][0]:
                    return total
    finally:
        os.close(folder)


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


async def watch(roots: list[tuple[Path, tuple[str, ...]]], budget: int) -> int:
    """Poll until the usage of `roots` (folder, top-level names to skip) exceeds `budget`
    bytes; returns the usage then. Runs until cancelled otherwise."""
    while True:
        used = await asyncio.to_thread(_total, roots)
        if used > budget:
            return used
        await asyncio.sleep(POLL_SECONDS)


def _total(roots: list[tuple[Path, tuple[str, ...]]]) -> int:
    return sum(usage(root, skip=skip) for root, skip in roots)
