"""A manager killed with SIGKILL leaves its pool's folder and its executors' folders in the
temp dir; the next pool on the host removes them, and never what a live pool uses.

For real: the killed manager is a process with a local pool, its zygote and an executor; the
next pool is another (``skillweave.sandbox.leftovers``).
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from mcp_manager import LocalBackend
from skillweave.sandbox.leftovers import FETCH_FILE_PREFIX, LOCK_NAME
from tests.integration.harness import eventually

pytestmark = pytest.mark.timeout(120)

_MANAGER = """
import asyncio, json
from mcp_manager import LocalBackend

async def main():
    backend = LocalBackend(start_timeout=60.0)
    sandbox = await backend.create()
    print(json.dumps({
        "pool": str(sandbox.workdir.parent),
        "executor": str(sandbox.folder),
        "pids": [backend.zygote_pid, sandbox.process.pid],
    }), flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""

HOUR_AGO = time.time() - 3600


def _aged(*paths: Path) -> None:
    for path in paths:
        os.utime(path, (HOUR_AGO, HOUR_AGO))


def _lock_free(folder: Path) -> bool:
    fd = os.open(folder / LOCK_NAME, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def _children_of(pid: int) -> list[str]:
    """The processes whose parent is `pid`, zombies too: each as ``pid state name``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, parent = stat[stat.rindex(")") + 2 :].split()[:2]
        if int(parent) == pid:
            found.append(f"{entry.name} {state} {name}")
    return found


def _killed_manager() -> tuple[Path, Path]:
    """A manager with a pool and one executor, killed with SIGKILL once they run: its pool's
    folder and its executor's, once every one of its processes is gone."""
    with subprocess.Popen(
        [sys.executable, "-c", _MANAGER], stdout=subprocess.PIPE, text=True
    ) as manager:
        assert manager.stdout is not None
        made = json.loads(manager.stdout.readline())
        manager.send_signal(signal.SIGKILL)
        manager.wait(timeout=10)
    return Path(made["pool"]), Path(made["executor"])


async def test_the_next_pool_removes_what_a_killed_manager_left_and_nothing_live() -> None:
    live = LocalBackend(start_timeout=60.0)  # a pool on the same host that keeps running
    try:
        running = await live.create()
        assert running.workdir is not None
        assert running.folder is not None
        pool, executor = await asyncio.to_thread(_killed_manager)
        # The zygote dies with its manager, and its executors with it: then their locks go.
        await eventually(lambda: _lock_free(executor), timeout=30)
        assert pool.is_dir()
        assert executor.is_dir()  # nothing but a sweep removes them
        descriptor, name = tempfile.mkstemp(prefix=FETCH_FILE_PREFIX)  # half a fetch
        os.close(descriptor)  # its lock gone, as with its manager
        fetch = Path(name)
        _aged(pool, executor, fetch, running.workdir.parent, running.folder)

        after = LocalBackend(start_timeout=60.0)
        try:
            # The pool's own sweep, as it is made (in a thread), then its zygote's, once it
            # starts (in a child of its own).
            await eventually(lambda: not pool.exists() and not fetch.exists(), timeout=30)
            assert executor.exists()
            assert await after.settled_isolation() is not None
            await eventually(lambda: not executor.exists(), timeout=30)
            zygote = after.zygote_pid
            assert zygote is not None
            await eventually(lambda: _children_of(zygote) == [], timeout=30)  # reaped, too
            # The live pool's folders are older than a minute too, and locked: kept.
            assert (running.workdir.parent / LOCK_NAME).exists()
            assert (running.folder / LOCK_NAME).exists()
            second = await live.create()  # and the live pool still works
            await live.destroy(second)
        finally:
            await after.close()
        await live.destroy(running)
        assert not running.folder.exists()
    finally:
        await live.close()
