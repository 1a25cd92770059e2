"""The kubernetes pool benchmark stays runnable: --quick runs its latency table against the fake
cluster (kmock + the test kubelet) and the local pool, and its sustained-load table against the
fake cluster with a pod start delay.

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


def test_quick_sustained_load_benchmark_reports_a_row_per_delay(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--throughput", "--quick", "--markdown", "--pod-start-delay", "0", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "Sustained load through the kubernetes pool" in out
    rows = [line for line in out.splitlines() if line.startswith("| 0")]
    assert [row.split(" | ")[0] for row in rows] == ["| 0", "| 0.2"]
    for row in rows:
        cells = row.strip("| ").split(" | ")
        assert len(cells) == 13
        assert cells[6].endswith("/8")  # every run of the quick load claimed a pod
