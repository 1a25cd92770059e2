"""The benchmark stays runnable: its --quick mode runs every table on small libraries.

Timings are not asserted here (shared machines are noisy); docs/BENCHMARKS.md holds the numbers.
"""

from __future__ import annotations

import pytest

from bench.skills_bench import main


def test_quick_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    for title in ("1. Scan time", "2. Catalog size", "3. Relevance", "Targets"):
        assert title in out
    assert "ESTIMATE" not in out  # the offline tokenizer is installed with the dev extra
