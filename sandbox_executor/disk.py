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
"""A workspace with more entries than this counts as over any budget (a walk must end)."""


def usage(root: Path, *, skip: Iterable[str] = ()) -> int:
    """Apparent bytes of every file under `root`, symlinks not followed; the top-level
    folders named in `skip` are left out. A folder that vanishes mid-walk counts as empty."""
    skipped = set(skip)
    total = 0
    entries = 0
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as found:
                for entry in found:
                    entries += 1
                    if entries > _MAX_ENTRIES:
                        return 1 << 62
                    if folder == root and entry.name in skipped:
                        continue
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(info.st_mode):
                        pending.append(Path(entry.path))
                    else:
                        total += info.st_size
        except OSError:
            continue
    return total


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
