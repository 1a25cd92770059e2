"""One-shot under concurrency: nothing one execution leaves behind is seen by another.

Executors are forked from the pool's zygote, so making a sandbox is cheap; what a sandbox is
must not change: each execution gets its own, and it is destroyed after. Here several
executions run at once and back to back on a pool of four, each one looking for what the
others left (files in its working folder, outputs, /tmp, /dev/shm and its home; processes it
can see) and then leaving its own traces, including a daemon in a session of its own.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.integration.harness import StartManager, eventually
from tests.integration.manager.test_manager import pool_back_at_target

pytestmark = pytest.mark.timeout(180)

RUNS = 16
CONCURRENCY = 4


def _host_processes_with(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and "pytest" not in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


async def test_no_file_or_process_crosses_executions_under_concurrency(
    start_manager: StartManager,
) -> None:
    manager = await start_manager(pool_target=CONCURRENCY, pool_max=CONCURRENCY)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def run(n: int) -> dict[str, list[str]]:
        async with gate:
            result = await manager.client.execute(
                manager.request("scripts/residue.py", execution_id=f"one-shot/{n}", args=[str(n)])
            )
        assert result.status == "succeeded", result
        assert [output.path for output in result.outputs] == [f"residue-{n}"]
        seen: dict[str, list[str]] = json.loads(result.stdout)
        return seen

    everything_seen = await asyncio.gather(*(run(n) for n in range(RUNS)))

    for seen in everything_seen:
        assert seen == {
            ".": [],
            "outputs": [],
            "/tmp": [],
            "/dev/shm": [],
            seen_home(seen): [],
            "processes": [],
        }
    await pool_back_at_target(manager)
    assert manager.backend.runs == RUNS
    # The daemons did not outlive their sandboxes.
    await eventually(lambda: not _host_processes_with("residue-"), timeout=10)


def seen_home(seen: dict[str, list[str]]) -> str:
    """The home folder the script reported (whatever the sandbox sets HOME to)."""
    [home] = set(seen) - {".", "outputs", "/tmp", "/dev/shm", "processes"}
    return home
