"""The sandbox benchmark stays runnable: --quick runs every table against real processes.

Timings are not asserted (shared machines are noisy); docs/BENCHMARKS.md holds the numbers.
"""

from __future__ import annotations

import pytest

from bench.sandbox_bench import main

pytestmark = pytest.mark.timeout(300)


def test_quick_sandbox_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    for title in ("Sandbox latency", "Throughput", "Targets"):
        assert title in out
    assert "isolation: bubblewrap" in out
