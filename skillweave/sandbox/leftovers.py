"""What a killed sandbox process leaves in the temp dir, told from what a live one uses.

A pool (``mcp_manager.backends``), each executor (``sandbox_executor.executor``) and each
fetch of a sandbox's output (``mcp_manager.output_collector``) make an entry in the temp dir
and remove it when they end, however they end, except by SIGKILL (an OOM kill, a killed test
or benchmark), which nothing in the process outlives. So each holds an ``flock`` on its entry
for its whole life: a folder on the :data:`LOCK_NAME` file inside it (:func:`hold_entry`), a file
on itself. The kernel lets go of the lock on any death, so the entry's lock tells a live
owner from a dead one, on any number of pools, managers and executors on one host.

:func:`sweep_leftovers` removes the dead ones: an entry of one of the given prefixes, of this user,
older than a minute (an owner takes its lock just after it makes its entry), whose lock it
can take. It takes the lock before it removes anything, so two sweeps never race, and an
entry without a lock file (one made by a release before this one) is left alone. A pool's
manager sweeps what it makes when the pool is made (in a thread); the zygote sweeps its
executors' folders when it starts (in a child process, in its own temp dir, the one its
executors use): neither start waits for a large sweep. The embedded stack's dev
server (``skillweave.cli.temporal_server``) does the same for its temporary log, a file whose
lock the server's stdout shares, kept a day (a failed start's log is kept for its reader).
"""

from __future__ import annotations

import fcntl
import logging
import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from skillweave.skills import remove_tree

__all__ = [
    "FETCH_FILE_PREFIX",
    "LOCK_NAME",
    "MIN_AGE_SECONDS",
    "POOL_FOLDER_PREFIX",
    "hold_entry",
    "sweep_leftovers",
]

logger = logging.getLogger(__name__)

POOL_FOLDER_PREFIX: Final = "skillweave-pool-"
"""A local pool's folder (its zygote's, its executors' work folders, unpacked environments)."""

FETCH_FILE_PREFIX: Final = "skillweave-fetch-"
"""A file a sandbox's output is fetched into before it is stored."""

LOCK_NAME: Final = ".alive"
"""The file in a folder whose ``flock`` its owner holds for the folder's whole life."""

MIN_AGE_SECONDS: Final = 60.0
"""A younger entry is never swept: its owner may not have taken its lock yet."""


def hold_entry(folder: Path) -> int:
    """Take the life lock of `folder` (just made, and this process's): the descriptor to keep
    open until the folder is removed; closing it (or any death) lets the lock go."""
    fd = os.open(
        folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        raise
    return fd


def sweep_leftovers(
    parent: Path, prefixes: Iterable[str], *, min_age: float = MIN_AGE_SECONDS
) -> list[Path]:
    """Remove what dead owners left in `parent`: each entry named with one of `prefixes`, a
    folder or a file of this process's user (not a symlink), untouched for `min_age` seconds,
    whose lock (a folder's :data:`LOCK_NAME`, a file's own) no process holds.

    Best effort: what cannot be read or removed is logged and left.

    Returns:
        The entries removed.
    """
    names = tuple(prefixes)
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(names)]
    except OSError as exc:
        logger.warning("%s: leftovers not swept: %s", parent, exc)
        return removed
    oldest = time.time() - min_age
    for entry in entries:
        path = Path(entry.path)
        try:
            if _sweep_one(path, oldest):
                removed.append(path)
        except OSError as exc:
            logger.warning("%s: not swept: %s", path, exc)
    if removed:
        logger.info("%s: removed %d entries killed processes left", parent, len(removed))
    return removed


def _sweep_one(path: Path, oldest: float) -> bool:
    """Remove `path` if a dead owner left it (:func:`sweep_leftovers`); whether it was."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False  # its owner removed it meanwhile
    if info.st_uid != os.geteuid() or info.st_mtime > oldest:
        return False
    if stat.S_ISDIR(info.st_mode):
        lock = path / LOCK_NAME
    elif stat.S_ISREG(info.st_mode):
        lock = path
    else:
        return False
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False  # no lock file: not ours to judge
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # its owner lives
        remove_tree(path)
    finally:
        os.close(fd)
    return not os.path.lexists(path)
