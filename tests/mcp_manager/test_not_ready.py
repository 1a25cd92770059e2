"""A manager still waiting for its store at start answers every route 503 ``not_ready`` (with
Retry-After and what it waits for), and the sandbox client reads it as the manager not being
ready: a :class:`ManagerNotReadyError` (one of the unreachable manager's errors), waited for
like a manager that is down and told as such, never as a full pool. A real process started
before its S3 is tests/integration/cli/test_manager_not_ready.py."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from mcp_manager.deps import State
from mcp_manager.problem_answers import install_error_handlers
from skillweave.engines.retries import classify
from skillweave.errors import (
    ManagerNotReadyError,
    ManagerUnreachableError,
    PoolExhaustedError,
)
from skillweave.readiness import Readiness
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.sandbox.problems import PROBLEM_JSON, ProblemCode
from skillweave.sandbox.queue import queued
from skillweave.waiting import WAITING, Waiting
from tests.sandbox.test_queue import FakeTime, attempts

STORE_WAIT = "the S3 store at 127.0.0.1:9: ConnectError: connection refused"
LINE = (
    f"the MCP manager at http://manager is starting: waiting for {STORE_WAIT} (its /healthz says)"
)
REQUEST = ExecuteRequest(
    execution_id="wf/script-1", run_id="r1", skill="s", version="a" * 64, script="scripts/a.py"
)


def _starting_app() -> FastAPI:
    """The manager's routes' state and error answers, before its store answered."""
    app = FastAPI()
    install_error_handlers(app)
    readiness = Readiness()
    readiness.waits("store", STORE_WAIT)
    app.state.manager = None
    app.state.readiness = readiness

    @app.post("/sandbox/execute")
    async def execute(body: ExecuteRequest, state: State) -> ExecutionResult:
        raise AssertionError("not reached while the manager starts")

    @app.get("/sandbox/pool")
    async def pool(state: State) -> dict[str, object]:
        raise AssertionError("not reached while the manager starts")

    return app


def _client() -> SandboxClient:
    transport = httpx.ASGITransport(_starting_app())
    return SandboxClient("http://manager", token="t", transport=transport)


async def test_a_starting_manager_answers_not_ready_with_what_it_waits_for() -> None:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(_starting_app()), base_url="http://manager"
    ) as http:
        answer = await http.post("/sandbox/execute", json=REQUEST.model_dump(mode="json"))
    assert answer.status_code == 503
    assert answer.headers["content-type"] == PROBLEM_JSON
    assert answer.headers["retry-after"] == "2"
    assert answer.json() == {
        "type": "urn:skillweave:problem:not_ready",
        "title": "Manager not ready",
        "status": 503,
        "detail": f"waiting for {STORE_WAIT}",
        "error": "not_ready",
        "retry_after": 2,
    }


async def test_the_client_reads_it_as_the_manager_not_ready_not_a_full_pool() -> None:
    async with _client() as client:
        with pytest.raises(ManagerNotReadyError) as caught:
            await client.execute(REQUEST)
        with pytest.raises(ManagerNotReadyError) as on_pool:
            await client.pool()
    assert isinstance(caught.value, ManagerUnreachableError)
    assert not isinstance(caught.value, PoolExhaustedError)
    assert str(caught.value) == LINE
    assert str(on_pool.value) == LINE
    assert classify(caught.value).again  # past the wait: the engine's retries


async def test_an_uncoded_503_is_still_a_full_pool() -> None:
    """A manager before ``not_ready`` (or a proxy) says nothing more: read by its status."""

    def answer(_: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"detail": "full"})

    async with SandboxClient(
        "http://manager", token="t", transport=httpx.MockTransport(answer)
    ) as client:
        with pytest.raises(PoolExhaustedError):
            await client.execute(REQUEST)
    assert ProblemCode.of("not_ready") is ProblemCode.NOT_READY


async def test_a_step_waits_for_a_starting_manager_as_for_one_that_is_down() -> None:
    """Told on ``manager`` with the client's line, at the manager's back-off (1 s doubling),
    until the budget; then the error goes through."""
    time = FakeTime()
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    try:
        async with _client() as client:
            with pytest.raises(ManagerNotReadyError):
                await queued(
                    lambda: client.execute(REQUEST),
                    queue_seconds=10,
                    call="script s/scripts/a.py",
                    clock=time.clock,
                    sleep=time.sleep,
                    jitter=lambda: 1.0,
                )
    finally:
        WAITING.reset(reporting)
    assert time.slept == [1, 2, 4, 3]
    begun, ended = said
    assert isinstance(begun, Waiting)
    assert (begun.on, begun.detail, begun.call) == ("manager", LINE, "script s/scripts/a.py")
    assert ended is None


async def test_a_manager_that_comes_up_starting_is_told_again_with_the_same_since() -> None:
    """Down, then starting (waiting for its store), then running: one wait whose cause changes
    (told twice, ``since`` kept), then its end."""
    time = FakeTime()
    down = ManagerUnreachableError("cannot reach the MCP manager at http://m: ConnectError")
    attempt, calls = attempts(down, ManagerNotReadyError(LINE), "ran")
    said: list[Waiting | None] = []
    reporting = WAITING.set(said.append)
    try:
        result = await queued(
            attempt, queue_seconds=60, clock=time.clock, sleep=time.sleep, jitter=lambda: 1.0
        )
    finally:
        WAITING.reset(reporting)
    assert (result, len(calls)) == ("ran", 3)
    first, second, ended = said
    assert isinstance(first, Waiting)
    assert isinstance(second, Waiting)
    assert (first.on, second.on) == ("manager", "manager")
    assert (first.detail, second.detail) == (str(down), LINE)
    assert second.since == first.since
    assert ended is None
