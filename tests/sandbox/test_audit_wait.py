"""A run the manager refused because it cannot store the run's audit record (503
``audit_unavailable``) is an infrastructure wait, like a manager that is not ready: the
client raises :class:`AuditUnavailableError` (never a result), and a step waits for the
store, 1 s doubling up to 10 s but never sooner than the Retry-After, told once as a wait on
the store whose line names the cause, until the budget. The real manager answering it, and a
step that goes on when the store is back: tests/integration/manager/test_audit_unavailable.py."""

from __future__ import annotations

import httpx
import pytest

from skillweave.engines.retries import classify
from skillweave.errors import AuditUnavailableError, ManagerNotReadyError, SandboxError
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.problems import PROBLEM_JSON, Problem, ProblemCode
from skillweave.sandbox.queue import queued
from skillweave.waiting import WAITING, Waiting
from tests.sandbox.test_queue import FakeTime, attempts

DETAIL = (
    "the audit log cannot be written (cannot write 1 audit record(s) to the store: disk full):"
    " the script was not started; ask again once the store is back"
)
LINE = f"the MCP manager at http://manager: {DETAIL}"
REQUEST = ExecuteRequest(
    execution_id="wf/script-1", run_id="r1", skill="s", version="a" * 64, script="scripts/a.py"
)


def _answering(headers: dict[str, str], retry_after: float | None = 2) -> SandboxClient:
    problem = Problem.coded(
        ProblemCode.AUDIT_UNAVAILABLE,
        status=503,
        title="Audit log unavailable",
        detail=DETAIL,
        retry_after=retry_after,
    )

    def answer(_: httpx.Request) -> httpx.Response:
        return httpx.Response(
            503,
            json=problem.body(),
            headers={"Content-Type": PROBLEM_JSON, **headers},
        )

    return SandboxClient("http://manager", token="t", transport=httpx.MockTransport(answer))


async def test_the_client_reads_it_as_the_audit_unavailable_not_a_full_pool() -> None:
    async with _answering({"Retry-After": "3"}) as client:
        with pytest.raises(AuditUnavailableError) as caught:
            await client.execute(REQUEST)
    assert str(caught.value) == LINE
    assert caught.value.retry_after == 3  # the header first
    assert classify(caught.value).again  # past the wait: the engine's retries
    async with _answering({}, retry_after=4) as client:
        with pytest.raises(AuditUnavailableError) as from_body:
            await client.execute(REQUEST)
    assert from_body.value.retry_after == 4
    assert ProblemCode.of("audit_unavailable") is ProblemCode.AUDIT_UNAVAILABLE


async def test_a_step_waits_on_the_store_with_the_cause_then_gives_up_at_the_budget() -> None:
    time = FakeTime()
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    try:
        async with _answering({"Retry-After": "2"}) as client:
            with pytest.raises(AuditUnavailableError):
                await queued(
                    lambda: client.execute(REQUEST),
                    queue_seconds=20,
                    call="script s/scripts/a.py",
                    clock=time.clock,
                    sleep=time.sleep,
                    jitter=lambda: 1.0,
                )
    finally:
        WAITING.reset(reporting)
    assert time.slept == [2, 2, 4, 8, 4]  # the Retry-After, then the back-off, to the budget
    begun, ended = said
    assert isinstance(begun, Waiting)
    assert (begun.on, begun.detail, begun.call) == ("store", LINE, "script s/scripts/a.py")
    assert "waiting for the artifact store since" in begun.line()
    assert "disk full" in begun.line()
    assert ended is None


async def test_a_manager_starting_then_a_store_failing_is_one_wait_whose_cause_changes() -> None:
    time = FakeTime()
    starting = ManagerNotReadyError("the MCP manager at http://m is starting: waiting for S3")
    attempt, calls = attempts(
        starting, AuditUnavailableError(LINE, retry_after=2), SandboxError("other"), "ran"
    )
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    try:
        with pytest.raises(SandboxError, match="other"):  # not waited for: goes through
            await queued(
                attempt, queue_seconds=60, clock=time.clock, sleep=time.sleep, jitter=lambda: 1.0
            )
    finally:
        WAITING.reset(reporting)
    assert len(calls) == 3
    assert time.slept == [1, 2]  # one back-off for both: 1 s, then 2 s (and the Retry-After)
    first, second, ended = said
    assert isinstance(first, Waiting)
    assert isinstance(second, Waiting)
    assert (first.on, second.on) == ("manager", "store")
    assert second.detail == LINE
    assert second.since == first.since
    assert ended is None
