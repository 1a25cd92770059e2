"""The split of the suite by cost holds: ``slow`` is registered, every test that starts real
servers is ``slow`` (so ``make test-fast`` leaves it out), and the two make targets select what
they say. The rules live in tests/conftest.py."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO, TESTS, is_slow_path

ALWAYS_SLOW = ("integration", "reliability")
"""Folders under tests/ whose every test starts real servers or processes."""


def _pytest_args(target: str) -> str:
    """What the Makefile's `target` passes to pytest."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(target)}:.*\n(?:\t.*\n)*?\t.* -m pytest(.*)\n", makefile, re.M)
    assert match, f"the Makefile's {target} target runs no pytest"
    return match.group(1).strip()


def test_slow_is_a_registered_marker(pytestconfig: pytest.Config) -> None:
    names = [line.split(":", 1)[0].strip() for line in pytestconfig.getini("markers")]
    assert "slow" in names
    assert "integration" in names


@pytest.mark.parametrize("folder", ALWAYS_SLOW)
def test_every_test_file_of_a_real_server_folder_is_slow(folder: str) -> None:
    files = sorted((TESTS / folder).rglob("test_*.py"))
    assert files, f"no tests under tests/{folder}"
    assert [f for f in files if not is_slow_path(f)] == []


def test_benchmarks_are_slow() -> None:
    benchmarks = sorted(TESTS.rglob("test_*bench*.py"))
    assert TESTS / "test_bench.py" in benchmarks
    assert [f for f in benchmarks if not is_slow_path(f)] == []


def test_no_collected_integration_test_misses_the_slow_mark(request: pytest.FixtureRequest) -> None:
    """Over what this session collected: under ``-m "not slow"`` an integration test that got
    in fails here; in a full run, every one must carry the mark."""
    unmarked = [
        item.nodeid
        for item in request.session.items
        if item.get_closest_marker("integration") is not None
        and item.get_closest_marker("slow") is None
    ]
    assert unmarked == []


def test_make_test_runs_everything_and_test_fast_leaves_slow_out() -> None:
    assert _pytest_args("test") == ""
    assert _pytest_args("test-fast") == '-m "not slow"'
