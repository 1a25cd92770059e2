"""The worker memory benchmark's pure parts: its scenarios (parsed from the command line, and
the tuning each gives the worker subprocess as ``skillweave worker`` reads it), the RSS per
cached run and the growth of the cache's counters between two scrapes. The measuring itself
needs a dev server and minutes: ``bench/worker_memory_bench.py --quick`` is its smoke run."""

from __future__ import annotations

import argparse
from dataclasses import replace

import pytest

from bench.worker_memory_bench import (
    METRICS,
    SCENARIOS,
    Measured,
    Scenario,
    growth,
    per_cached_run_kib,
)
from skillweave.config import Settings


def test_a_scenario_parses_from_cache_and_jobs_and_optional_slots_and_pollers() -> None:
    assert Scenario.parse("100:1000") == Scenario(cache=100, jobs=1000)
    assert Scenario.parse("0:5:10:2") == Scenario(cache=0, jobs=5, slots=10, pollers=2)


@pytest.mark.parametrize("text", ["100", "a:b", "100:0", "-1:10", "1:2:3:4:5", "10:10:0"])
def test_a_malformed_scenario_is_refused_with_the_shape_to_give(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="CACHE:JOBS"):
        Scenario.parse(text)


def test_the_default_scenarios_include_a_cache_smaller_than_the_runs() -> None:
    assert {s.jobs for s in SCENARIOS} >= {50, 200, 1000}
    assert any(s.cache < s.jobs for s in SCENARIOS)


def test_a_scenarios_tuning_is_what_the_worker_reads_from_its_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable, value in (
        Scenario(cache=100, jobs=1000, slots=10, pollers=3).environment().items()
    ):
        monkeypatch.setenv(variable, value)
    workflow = Settings(_env_file=None).workflow
    assert workflow.worker_max_cached_workflows == 100
    assert workflow.worker_max_concurrent_workflow_tasks == 10
    assert (workflow.worker_workflow_pollers, workflow.worker_activity_pollers) == (3, 3)


def test_unset_slots_and_pollers_leave_the_defaults() -> None:
    assert Scenario(cache=5, jobs=10).environment() == {
        "WORKFLOW__WORKER_MAX_CACHED_WORKFLOWS": "5"
    }
    assert Scenario(cache=5, jobs=10).label() == "cache 5"
    assert Scenario(cache=5, jobs=10, pollers=2).label() == "cache 5 · pollers 2"


MEASURED = Measured(
    scenario=Scenario(cache=100, jobs=1000),
    rss_ready=120_000,
    rss_warm=130_000,
    rss_parked=150_000,
    rss_peak=160_000,
    cached=100,
    park_seconds=1.0,
    park_worker_cpu=1.0,
    resume_seconds=1.0,
    resume_worker_cpu=1.0,
    resume_server_cpu=1.0,
    parking={},
    resuming={},
    answered=1000,
)


def test_the_rss_per_cached_run_is_over_the_warm_baseline_per_run_the_cache_holds() -> None:
    assert per_cached_run_kib(MEASURED) == 200.0  # (150 000 - 130 000) / 100
    assert per_cached_run_kib(replace(MEASURED, cached=0)) is None


def test_counters_grow_between_scrapes_and_an_absent_one_is_zero() -> None:
    evictions, misses = METRICS["evictions"], METRICS["misses"]
    before = {evictions: 3.0, "temporal_sticky_cache_size": 50.0}
    after = {evictions: 10.0, misses: 4.0, "temporal_sticky_cache_size": 0.0}
    assert growth(before, after) == {"evictions": 7.0, "misses": 4.0}
