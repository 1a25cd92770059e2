"""Waiting for a full pool (ask again after each Retry-After, jittered) and for a manager that
takes no connection or refuses this worker (1 s, doubling, up to 10 s), until the budget; each
wait told as a `Waiting` when it begins, when its cause changes, and `None` when it ends."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from skillweave.errors import (
    ExecutionInProgressError,
    ManagerRefusedError,
    ManagerUnreachableError,
    PoolExhaustedError,
    SandboxError,
)
from skillweave.sandbox.queue import queued
from skillweave.waiting import WAITING, Waiting


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
    """Down or restarting (nothing was sent): asked again after 1, 2, 4, 8, then 10 s; the
    wait is told once as it begins (a Temporal activity's heartbeat carries it from then on),
    and its end once."""
    time = FakeTime()
    down = ManagerUnreachableError("cannot reach the MCP manager at http://m:8090: ConnectError")
    attempt, calls = attempts(*[down] * 6, "ran")
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    try:
        result = await queued(
            attempt,
            queue_seconds=600,
            call="script s/scripts/a.py",
            clock=time.clock,
            sleep=time.sleep,
            jitter=lambda: 1.0,
        )
    finally:
        WAITING.reset(reporting)
    assert result == "ran"
    assert len(calls) == 7
    assert time.slept == [1, 2, 4, 8, 10, 10]
    begun, ended = said
    assert isinstance(begun, Waiting)
    assert (begun.on, begun.detail, begun.call) == ("manager", str(down), "script s/scripts/a.py")
    assert ended is None


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


REFUSED = ManagerRefusedError(
    "missing or wrong bearer token", refused="token", status=401, url="http://m:8090"
)


async def test_a_refused_token_is_waited_for_like_a_manager_down_then_goes_through(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A manager restarted with another token refuses the worker until an operator restarts
    it right: the step waits (1 s doubling to 10 s), logs the cause once, and goes on."""
    time = FakeTime()
    attempt, calls = attempts(*[REFUSED] * 5, "ran")
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    try:
        with caplog.at_level(logging.WARNING, logger="skillweave.sandbox.queue"):
            result = await queued(
                attempt,
                queue_seconds=600,
                clock=time.clock,
                sleep=time.sleep,
                jitter=lambda: 1.0,
            )
    finally:
        WAITING.reset(reporting)
    assert result == "ran"
    assert len(calls) == 6
    assert time.slept == [1, 2, 4, 8, 10]
    waiting, ended = said
    assert ended is None
    assert isinstance(waiting, Waiting)
    assert waiting.on == "manager"
    assert waiting.detail == (
        "the MCP manager at http://m:8090 refuses this worker's token (401): "
        "SANDBOX__MANAGER_TOKEN must be the manager's"
    )
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1  # once per wait, not per attempt
    assert "SANDBOX__MANAGER_TOKEN must be the manager's" in warned[0].getMessage()


async def test_a_refusal_past_the_budget_goes_to_the_engine_and_the_wait_is_over() -> None:
    time = FakeTime()
    attempt, calls = attempts(*[REFUSED] * 10)
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    try:
        with pytest.raises(ManagerRefusedError):
            await queued(
                attempt, queue_seconds=5, clock=time.clock, sleep=time.sleep, jitter=lambda: 1.0
            )
    finally:
        WAITING.reset(reporting)
    assert time.slept == [1, 2, 2]
    assert len(calls) == 4
    assert [type(one) for one in said] == [Waiting, type(None)]


async def test_a_changed_cause_is_told_again_with_the_same_since() -> None:
    """Down, then up with another token, then a full pool: one wait, told three times with
    its first `since`, ended once."""
    time = FakeTime()
    down = ManagerUnreachableError("cannot reach the MCP manager")
    attempt, _ = attempts(
        down, down, REFUSED, REFUSED, PoolExhaustedError("full", retry_after=3), "ran"
    )
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    try:
        await queued(
            attempt, queue_seconds=600, clock=time.clock, sleep=time.sleep, jitter=lambda: 1.0
        )
    finally:
        WAITING.reset(reporting)
    assert said[-1] is None
    told = [one for one in said if one is not None]
    assert [(one.on, one.detail) for one in told] == [
        ("manager", str(down)),
        ("manager", str(REFUSED)),
        ("sandbox", "full"),
    ]
    assert len({one.since for one in told}) == 1
    assert told[0].since <= datetime.now(UTC)


async def test_a_call_that_goes_through_at_once_tells_nothing() -> None:
    attempt, _ = attempts("ran")
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    try:
        assert await queued(attempt, queue_seconds=600) == "ran"
    finally:
        WAITING.reset(reporting)
    assert said == []
