"""Waiting for a full pool (ask again after each Retry-After, jittered) and for a manager that
takes no connection (1 s, doubling, up to 10 s), until the budget."""

from __future__ import annotations

import pytest

from skillweave.errors import (
    ExecutionInProgressError,
    ManagerUnreachableError,
    PoolExhaustedError,
    SandboxError,
)
from skillweave.sandbox.queue import WAITING, queued


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def attempts(*outcomes: Exception | str):
    calls: list[int] = []

    async def attempt() -> str:
        calls.append(1)
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return attempt, calls


async def test_a_full_pool_and_a_run_elsewhere_are_asked_again_after_retry_after() -> None:
    time = FakeTime()
    attempt, calls = attempts(
        PoolExhaustedError("full", retry_after=4),
        ExecutionInProgressError("e", retry_after=2.0),
        "ran",
    )
    result = await queued(
        attempt, queue_seconds=60, clock=time.clock, sleep=time.sleep, jitter=lambda: 0.5
    )
    assert result == "ran"
    assert len(calls) == 3
    assert time.slept == [2.0, 1.0]  # Retry-After scaled by the jitter


async def test_the_wait_stops_at_the_budget_and_the_error_goes_through() -> None:
    time = FakeTime()
    attempt, calls = attempts(*[PoolExhaustedError("full", retry_after=10)] * 10)
    with pytest.raises(PoolExhaustedError):
        await queued(
            attempt, queue_seconds=25, clock=time.clock, sleep=time.sleep, jitter=lambda: 1.0
        )
    assert time.slept == [10, 10, 5]  # the last wait is cut to what is left
    assert len(calls) == 4


async def test_no_budget_tries_once_and_other_errors_are_not_waited_for() -> None:
    time = FakeTime()
    attempt, calls = attempts(PoolExhaustedError("full", retry_after=1))
    with pytest.raises(PoolExhaustedError):
        await queued(attempt, queue_seconds=0, clock=time.clock, sleep=time.sleep)
    assert len(calls) == 1
    attempt, calls = attempts(SandboxError("lost"))
    with pytest.raises(SandboxError):
        await queued(attempt, queue_seconds=60, clock=time.clock, sleep=time.sleep)
    assert len(calls) == 1
    assert time.slept == []


async def test_the_default_jitter_waits_between_half_and_all_of_retry_after() -> None:
    time = FakeTime()
    attempt, _ = attempts(*[PoolExhaustedError("full", retry_after=10)] * 20, "ran")
    await queued(attempt, queue_seconds=10_000, clock=time.clock, sleep=time.sleep)
    assert all(5 <= waited <= 10 for waited in time.slept)


async def test_a_manager_that_takes_no_connection_is_waited_for_and_the_wait_is_said() -> None:
    """Down or restarting (nothing was sent): asked again after 1, 2, 4, 8, then 10 s, each
    wait told to the context's reporter (a Temporal activity's heartbeat)."""
    time = FakeTime()
    down = ManagerUnreachableError("cannot reach the MCP manager at http://m:8090: ConnectError")
    attempt, calls = attempts(*[down] * 6, "ran")
    said: list[str] = []
    reporting = WAITING.set(said.append)
    try:
        result = await queued(
            attempt, queue_seconds=600, clock=time.clock, sleep=time.sleep, jitter=lambda: 1.0
        )
    finally:
        WAITING.reset(reporting)
    assert result == "ran"
    assert len(calls) == 7
    assert time.slept == [1, 2, 4, 8, 10, 10]
    assert said == [f"waiting for the MCP manager: {down}"] * 6


async def test_a_manager_down_past_the_budget_fails_the_attempt() -> None:
    time = FakeTime()
    down = ManagerUnreachableError("cannot reach the MCP manager")
    attempt, calls = attempts(*[down] * 10)
    with pytest.raises(ManagerUnreachableError):
        await queued(
            attempt, queue_seconds=5, clock=time.clock, sleep=time.sleep, jitter=lambda: 1.0
        )
    assert time.slept == [1, 2, 2]  # the last wait cut to what is left
    assert len(calls) == 4
