"""How many pods the kubernetes pool creates ahead of claims: claim rate × pod start time,
measured as claims and pods come (Little's law), on a clock the test steps by hand."""

from __future__ import annotations

import pytest

from mcp_manager.kubernetes._demand import Demand


def _with_start_time(seconds: float) -> Demand:
    demand = Demand()
    demand.creating("pod-0", 100.0)
    demand.ready("pod-0", 100.0 + seconds)
    return demand


def test_the_start_time_is_learned_from_our_pods_becoming_ready() -> None:
    demand = Demand()
    assert demand.start_seconds is None
    demand.ready("not-ours", 5.0)  # a pod it did not create (or saw created) teaches nothing
    assert demand.start_seconds is None
    demand.creating("a", 10.0)
    demand.ready("a", 12.0)
    assert demand.start_seconds == 2.0
    demand.creating("b", 20.0)
    demand.ready("b", 26.0)  # slower now: the estimate moves toward it, smoothed
    assert 2.0 < demand.start_seconds < 6.0
    demand.ready("b", 40.0)  # seen Ready again: counted once
    assert 2.0 < demand.start_seconds < 6.0


def test_no_pod_ahead_before_a_start_time_is_known() -> None:
    demand = Demand()
    for n in range(20):
        demand.claimed(0.1 * n)
    assert demand.rate(2.0) > 1
    assert demand.ahead(2.0) == 0


def test_a_steady_stream_gets_rate_times_start_time_in_creation() -> None:
    demand = _with_start_time(1.5)
    now = 200.0
    for n in range(41):  # 4 claims a second for 10 s
        now = 200.0 + 0.25 * n
        demand.claimed(now)
    assert demand.rate(now) == pytest.approx(4.0)
    assert demand.ahead(now) == 6  # 4/s × 1.5 s


def test_one_caller_waiting_for_each_pod_gets_none_ahead() -> None:
    """Each claim waits a whole start time for its pod: fewer than one claim per start time,
    so the pool stays cold (a target of 0 means none idle), however long it goes on."""
    demand = _with_start_time(1.5)
    now = 200.0
    for n in range(30):
        now = 200.0 + 1.6 * n
        demand.claimed(now)
        assert demand.ahead(now) == 0, n


def test_a_one_off_burst_gets_about_half_of_it_ahead_and_then_none() -> None:
    demand = _with_start_time(1.0)
    for _ in range(10):
        demand.claimed(300.0)
    assert 0 < demand.ahead(300.0) <= 5
    assert demand.ahead(305.0) <= 2  # fading as the burst recedes
    assert demand.ahead(311.0) == 0  # out of the window: no demand left


def test_creations_that_never_became_ready_are_forgotten() -> None:
    demand = Demand()
    demand.creating("stuck", 10.0)
    demand.creating("gone", 11.0)
    demand.creating("fresh", 50.0)
    demand.gone("gone")
    demand.forget_before(40.0)
    demand.ready("stuck", 60.0)
    demand.ready("gone", 60.0)
    assert demand.start_seconds is None
    demand.ready("fresh", 51.0)
    assert demand.start_seconds == 1.0
