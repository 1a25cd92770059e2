"""The kubernetes pool makes pods ahead of demand (issue 23): with a slow pod start injected
in the test kubelet, pod creations overlap with each other and with the runs, bounded by the
pool's maximum, and the surplus goes once the load stops.

Timings are not asserted (shared machines are noisy): the API server's record of every pod
(created, first Ready, deleted) says how many pods were being created at once.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from tests.integration.harness import Manager, StartManager, eventually
from tests.integration.kubernetes.cluster import FakeCluster, in_creation_peak
from tests.integration.kubernetes.conftest import NAMESPACE, pool_pods, warm_ready

pytestmark = pytest.mark.timeout(240)

START_DELAY = 0.5
"""The kubelet's delay before it starts a pod's executor: pods take longer to start than a
trivial script takes to run, as in a real cluster."""


async def _run_back_to_back(manager: Manager, *, clients: int, runs: int) -> list[str]:
    """`clients` callers running a script one after another, `runs` runs in all; the working
    folder each run saw."""
    numbers = itertools.count()
    folders: list[str] = []

    async def caller() -> None:
        while (n := next(numbers)) < runs:
            request = manager.request("scripts/where.py", execution_id=f"load/{n}")
            result = await manager.client.execute(request)
            assert result.status == "succeeded", result
            folders.append(result.stdout.strip())

    await asyncio.gather(*(caller() for _ in range(clients)))
    return folders


async def test_sustained_load_creates_pods_ahead_of_the_callers_and_gives_the_surplus_back(
    start_manager: StartManager, cluster: FakeCluster
) -> None:
    """Two callers running scripts back to back, each run waiting for its pod: the pool
    creates more pods at once than there are callers (one replacement per claim would keep
    at most two in creation), never more than its maximum, one pod per run; once the callers
    stop, it deletes what it made ahead and is back at its target."""
    cluster.set_start_delay(START_DELAY)
    manager = await start_manager(target=1, maximum=6)
    await manager.state.pool.wait_ready(timeout=60)
    recorder = cluster.record_pods(NAMESPACE)
    try:
        folders = await _run_back_to_back(manager, clients=2, runs=16)
        lives = recorder.lives()
    finally:
        recorder.stop()
    assert len(set(folders)) == 16  # a pod of its own for every run
    peak = in_creation_peak(lives)
    assert 2 < peak <= 6, f"{peak} pods in creation at once"
    assert len(lives) >= 16 - 1  # the warm pod at the start served one run
    await eventually(
        lambda: len(pool_pods(cluster)) == 1 and len(warm_ready(cluster)) == 1,
        timeout=60,
        what="the pool back at its target of 1",
    )


async def test_a_burst_is_served_in_batches_of_the_maximum(
    start_manager: StartManager, cluster: FakeCluster
) -> None:
    """Six claims at once on an empty pool whose maximum is three: three pods are created
    side by side (not one after another), the other claims wait for the next batch, and no
    more than three pods are ever being created."""
    cluster.set_start_delay(START_DELAY)
    manager = await start_manager(target=0, maximum=3)
    recorder = cluster.record_pods(NAMESPACE)
    try:
        requests = [
            manager.request("scripts/where.py", execution_id=f"burst/{n}") for n in range(6)
        ]
        results = await asyncio.gather(*(manager.client.execute(r) for r in requests))
        lives = recorder.lives()
    finally:
        recorder.stop()
    assert [r.status for r in results] == ["succeeded"] * 6
    assert len({r.stdout for r in results}) == 6
    assert in_creation_peak(lives) == 3
    first_ready = min(life.ready for life in lives if life.ready is not None)
    assert sum(1 for life in lives if life.created < first_ready) == 3  # one batch, together
    await eventually(lambda: pool_pods(cluster) == [], timeout=60, what="the pool empty again")
