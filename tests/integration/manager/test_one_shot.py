"""One-shot under concurrency: nothing one execution leaves behind is seen by another.

Executors are forked from the pool's zygote, so making a sandbox is cheap; what a sandbox is
must not change: each execution gets its own, and it is destroyed after. The same holds when
an executor serves several executions (``SANDBOX__EXECUTIONS_PER_EXECUTOR``): each still runs
in a fresh workspace and sandbox. Here several
executions run at once and back to back on a pool of four, each one looking for what the
others left (files in its working folder, outputs, /tmp, /dev/shm and its home; processes it
can see) and then leaving its own traces, including a daemon in a session of its own.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mcp_manager.backends import LocalBackend, Sandbox
from tests.integration.harness import Manager, StartManager, eventually
from tests.integration.manager.test_manager import pool_back_at_target

pytestmark = pytest.mark.timeout(180)

RUNS = 16
CONCURRENCY = 4
KEPT = 4


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


async def _no_residue_seen(manager: Manager) -> None:
    """RUNS executions, CONCURRENCY at a time, each finding nothing the others left."""
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


async def test_no_file_or_process_crosses_executions_under_concurrency(
    start_manager: StartManager,
) -> None:
    manager = await start_manager(pool_target=CONCURRENCY, pool_max=CONCURRENCY)
    await _no_residue_seen(manager)
    assert manager.backend.runs == RUNS
    # The daemons did not outlive their sandboxes.
    await eventually(lambda: not _host_processes_with("residue-"), timeout=10)


class _KeptExecutors(LocalBackend):
    """Executors kept for KEPT executions each (``SANDBOX__EXECUTIONS_PER_EXECUTOR``)."""

    def __init__(self) -> None:
        super().__init__(start_timeout=30.0, executions=KEPT)
        self.created = 0

    async def create(self) -> Sandbox:
        sandbox = await super().create()
        self.created += 1
        return sandbox


async def test_nothing_crosses_executions_either_when_an_executor_serves_several(
    start_manager: StartManager,
) -> None:
    backend = _KeptExecutors()
    manager = await start_manager(pool_target=CONCURRENCY, pool_max=CONCURRENCY, backend=backend)
    await _no_residue_seen(manager)
    # Each sandbox was fresh, and yet far fewer executors were made than executions ran.
    assert backend.created <= RUNS // KEPT + CONCURRENCY, backend.created
    await eventually(lambda: not _host_processes_with("residue-"), timeout=10)


def seen_home(seen: dict[str, list[str]]) -> str:
    """The home folder the script reported (whatever the sandbox sets HOME to)."""
    [home] = set(seen) - {".", "outputs", "/tmp", "/dev/shm", "processes"}
    return home
