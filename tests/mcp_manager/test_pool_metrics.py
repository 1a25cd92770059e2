"""What the warm pool reports: claims by kind, claimed sandboxes, evictions by reason."""

from __future__ import annotations

import asyncio

from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import WarmPool
from tests.mcp_manager.test_pool import FakeBackend, ProcessBackend


def value(metrics: ManagerMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


async def _pool(backend: FakeBackend, metrics: ManagerMetrics) -> WarmPool:
    pool = WarmPool(
        backend, target=1, maximum=2, claim_timeout=0.3, metrics=metrics, refill_delay=0.01
    )
    await pool.start()
    await pool.wait_ready(timeout=5)
    return pool


async def test_claims_and_claimed_sandboxes_are_reported() -> None:
    metrics = ManagerMetrics()
    pool = await _pool(FakeBackend(), metrics)
    sandbox, warm = await pool.claim()
    assert warm
    assert value(metrics, "skillweave_sandbox_claim_seconds_count", kind="warm") == 1
    assert value(metrics, "skillweave_sandbox_pool_busy") == 1
    await pool.release(sandbox)
    assert value(metrics, "skillweave_sandbox_pool_busy") == 0
    await pool.close()


async def test_a_ready_sandbox_over_the_target_is_evicted_as_surplus() -> None:
    metrics = ManagerMetrics()
    backend = FakeBackend()
    pool = await _pool(backend, metrics)
    sandbox, _ = await pool.claim()
    await pool.wait_ready(timeout=5)  # its replacement is ready
    await pool.unclaim(sandbox)  # nothing ran in it: one too many ready
    assert value(metrics, "skillweave_sandbox_evictions_total", reason="surplus") == 1
    assert value(metrics, "skillweave_sandbox_evictions_total", reason="exited") == 0
    await pool.close()


async def test_a_warm_sandbox_whose_process_died_is_evicted_as_exited() -> None:
    metrics = ManagerMetrics()
    backend = ProcessBackend()
    pool = await _pool(backend, metrics)
    [dead] = backend.created
    dead.process.gone.set()  # type: ignore[union-attr]
    for _ in range(100):
        if value(metrics, "skillweave_sandbox_evictions_total", reason="exited"):
            break
        await asyncio.sleep(0.01)
    assert value(metrics, "skillweave_sandbox_evictions_total", reason="exited") == 1
    # Used sandboxes are destroyed after their run, which is no eviction.
    sandbox, _ = await pool.claim()
    await pool.release(sandbox)
    assert value(metrics, "skillweave_sandbox_evictions_total", reason="surplus") == 0
    await pool.close()
