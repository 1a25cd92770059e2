"""The sandbox benchmark's pure parts: a run's rate and CPU per execution, and the verdicts of
the throughput targets against bare ``python3`` (issue 47). The benchmark itself runs in
``tests/integration/test_sandbox_bench.py``."""

from __future__ import annotations

import pytest

from bench.processes import reaped_cpu_seconds
from bench.sandbox_bench import (
    RATE_AT_4,
    Rate,
    cpu_ceiling,
    per_execution,
    throughput_verdicts,
)

STAT = (
    "4242 ((my) zygote) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 700 300 20 0 9 0 "
    "12345 1048576 4096 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0"
)


def test_rate_and_cpu_are_per_execution() -> None:
    assert per_execution(executions=100, seconds=4.0, cpu_seconds=5.0) == Rate(25.0, 50.0)


def test_throughput_targets_are_the_rate_and_its_share_of_bare_python() -> None:
    met = throughput_verdicts(45.0, 160.0)
    assert [ok for _, _, ok in met] == [True, True]
    assert met[1][1] == "0.28× (45.0 ÷ 160.0)"
    slow, small = throughput_verdicts(RATE_AT_4 - 1, 200.0)
    assert not slow[2]
    assert not small[2]
    assert small[1].startswith("0.20×")


def test_a_floor_that_measured_nothing_misses_the_share() -> None:
    _, share = throughput_verdicts(50.0, 0.0)
    assert not share[2]


def test_reaped_cpu_is_read_after_the_command_name() -> None:
    assert reaped_cpu_seconds(STAT, 100) == 10.0
    with pytest.raises(ValueError, match="not a /proc/<pid>/stat line"):
        reaped_cpu_seconds("4242 (python) S 1 2 3 4 5 6 7 8 9 10 11 12 13", 100)


def test_the_cpu_ceiling_is_what_the_cores_allow_each_path() -> None:
    line = cpu_ceiling(80.0, 12.5, 2)
    assert "sandbox 80.0 ms, bare python3 12.5 ms" in line
    assert "at most 25 and 160 executions/s (0.16×)" in line
