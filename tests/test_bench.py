"""The benchmark stays runnable: its --quick mode runs every table on small libraries.

Timings are not asserted here (shared machines are noisy); docs/BENCHMARKS.md holds the numbers.
The benchmarks wait on progress, not on short clocks, and the time limit is generous: on a
machine that another CPU-heavy process shares they are slower, and must still pass.
"""

from __future__ import annotations

import pytest

from bench.skills_bench import main
from tests.mcp_manager.environment_support import bwrap_works

pytestmark = pytest.mark.timeout(900)


def test_quick_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    for title in ("1. Scan time", "2. Catalog size", "3. Relevance", "Targets"):
        assert title in out
    assert "ESTIMATE" not in out  # the offline tokenizer is installed with the dev extra


def test_quick_selection_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.selection_bench import main as selection_main

    assert selection_main(["--quick"]) == 0
    out = capsys.readouterr().out
    for title in (
        "1. Selection",
        "2b. Strategies",
        "2c. Auto catalog",
        "2d. Preload",
        "3. Catalog",
    ):
        assert title in out
    for strategy in ("keyword", "bm25", "embeddings", "hybrid"):
        assert strategy in out
    assert "ESTIMATE" not in out


def test_the_selection_benchmark_sources_are_valid_and_large_enough() -> None:
    from bench.data.make_library import library_of, load_benchmark

    benchmark = load_benchmark()  # raises on any problem: bad names, copied words, unknown labels
    assert len(benchmark.skills) >= 1_000
    assert len(benchmark.requests) >= 2 * 600
    assert any(skill.children for skill in benchmark.skills)  # trees
    small = library_of(benchmark, 300)
    assert len(small.skills) == 300
    assert {s.name for s in small.skills} <= {s.name for s in library_of(benchmark, 1_000).skills}
    splits = {r.split for r in small.requests}
    assert splits == {"validation", "heldout"}


@pytest.mark.skipif(not bwrap_works(), reason="environment builds need bubblewrap")
def test_quick_environments_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.environments_bench import main as environments_main

    assert environments_main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "first-use build" in out
    for label in ("python: 2 small wheels", "node: 2 small packages"):
        assert label in out


def test_quick_egress_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.egress_bench import main as egress_main

    assert egress_main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "through the proxy" in out
    assert "41 requests recorded" in out


def test_quick_scan_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.scan_bench import main as scan_main

    assert scan_main(["--quick"]) == 0
    out = capsys.readouterr().out
    for title in ("1. Detection per rule class", "2. Findings per severity", "3. Scan time"):
        assert title in out


def test_quick_registry_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.registry_bench import main as registry_main

    assert registry_main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "Registry search" in out
    assert "1,000" in out


@pytest.mark.slow
def test_a_small_evals_benchmark_runs_a_batch_on_the_direct_engine(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench.evals_bench import main as evals_main

    assert evals_main(["--evals", "3", "--engines", "direct", "--delay", "0"]) == 0
    out = capsys.readouterr().out
    assert "3-eval batch" in out
    row = next(line for line in out.splitlines() if "direct" in line)
    assert " 3 " in row, out
    assert "100%" in row, out
