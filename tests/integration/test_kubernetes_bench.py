"""The kubernetes pool benchmark stays runnable: --quick runs its table against the fake
cluster (kmock + the test kubelet) and the local pool.

Timings are not asserted (shared machines are noisy); docs/BENCHMARKS.md holds the numbers.
The benchmark waits on progress, not on short clocks, and the time limit is generous: on a
machine that another CPU-heavy process shares it is slower, and must still pass.
"""

from __future__ import annotations

import pytest

from bench.kubernetes_bench import main

pytestmark = pytest.mark.timeout(900)


def test_quick_kubernetes_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "Claim-to-result latency" in out
    for row in ("kubernetes warm", "kubernetes cold", "local warm", "local cold"):
        assert row in out
    assert "faster than cold" in out
