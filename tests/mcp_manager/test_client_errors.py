"""The manager client maps HTTP answers to the error tree, including a lost sandbox: by the
problem's code, and by the bare ``error`` of a manager before problem+json."""

from __future__ import annotations

import httpx
import pytest

from skillweave.errors import (
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    PoolExhaustedError,
    SandboxError,
    SandboxLostError,
    SandboxStartError,
)
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.problems import Problem, ProblemCode

REQUEST = ExecuteRequest(
    execution_id="wf/script-1", run_id="r1", skill="s", version="a" * 64, script="scripts/a.py"
)


def _client(status: int, body: object, headers: dict[str, str] | None = None) -> SandboxClient:
    def answer(_: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body, headers=headers)

    return SandboxClient("http://manager", token="t", transport=httpx.MockTransport(answer))


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (502, {"detail": "reset", "error": "sandbox_lost"}, SandboxLostError),
        (502, {"detail": "bad gateway"}, SandboxError),
        (503, {"detail": "full"}, PoolExhaustedError),
        (409, {"detail": "raced"}, ExecutionConflictError),
        (404, {"detail": "no such skill"}, ExecutionRejectedError),
        (500, ["not", "an", "object"], SandboxError),
        # a manager before problem+json: the bare code
        (409, {"detail": "busy", "error": "in_progress"}, ExecutionInProgressError),
        # problem+json: the code is in the type (the bare member is ignored when it is too)
        (502, {"type": ProblemCode.SANDBOX_LOST.type, "title": "t", "status": 502},
         SandboxLostError),
        (409, {"type": ProblemCode.IN_PROGRESS.type, "title": "t", "status": 409},
         ExecutionInProgressError),
        (409, {"type": ProblemCode.CONFLICT.type, "title": "t", "status": 409},
         ExecutionConflictError),
        (500, {"type": ProblemCode.SANDBOX_REFUSED.type, "title": "t", "status": 500},
         SandboxStartError),
        (500, {"detail": "no bubblewrap", "error": "sandbox_refused"}, SandboxStartError),
        (422, {"type": ProblemCode.INVALID_REQUEST.type, "title": "t", "status": 422},
         ExecutionRejectedError),
        # a code this client does not know: read by the status
        (409, {"type": "urn:skillweave:problem:new_kind", "title": "t", "status": 409},
         ExecutionConflictError),
    ],
)  # fmt: skip
async def test_statuses_map_to_typed_errors(status: int, body: object, error: type) -> None:
    async with _client(status, body, {"Retry-After": "2"}) as client:
        with pytest.raises(error) as caught:
            await client.execute(REQUEST)
    assert type(caught.value) is error
    if error is SandboxLostError:
        assert caught.value.execution_id == "wf/script-1"


async def test_retry_after_comes_from_the_header_first_then_the_body() -> None:
    body = Problem.coded(
        ProblemCode.POOL_EXHAUSTED, status=503, title="t", detail="full", retry_after=7
    ).body()
    async with _client(503, body) as client:
        with pytest.raises(PoolExhaustedError) as caught:
            await client.execute(REQUEST)
    assert caught.value.retry_after == 7
    async with _client(503, body, {"Retry-After": "2"}) as client:
        with pytest.raises(PoolExhaustedError) as caught:
            await client.execute(REQUEST)
    assert caught.value.retry_after == 2


async def test_an_in_progress_answer_of_an_old_manager_keeps_its_retry_after() -> None:
    old = {"detail": "execution is running", "error": "in_progress"}
    async with _client(409, old, {"Retry-After": "12"}) as client:
        with pytest.raises(ExecutionInProgressError) as caught:
            await client.execute(REQUEST)
    assert caught.value.retry_after == 12
    assert caught.value.execution_id == "wf/script-1"


async def test_a_refused_sandbox_is_a_permanent_start_error() -> None:
    body = {"type": ProblemCode.SANDBOX_REFUSED.type, "title": "t", "status": 500,
            "detail": "sandboxes cannot start: bubblewrap is missing"}  # fmt: skip
    async with _client(500, body) as client:
        with pytest.raises(SandboxStartError) as caught:
            await client.execute(REQUEST)
    assert caught.value.permanent
    assert str(caught.value) == "sandboxes cannot start: bubblewrap is missing"


@pytest.mark.parametrize("header", ["nan", "inf", "-inf", "-5", "1e999"])
async def test_a_retry_after_no_clock_can_wait_falls_back(header: str) -> None:
    body = Problem.coded(
        ProblemCode.POOL_EXHAUSTED, status=503, title="t", detail="full", retry_after=7
    ).body()
    async with _client(503, body, {"Retry-After": header}) as client:
        with pytest.raises(PoolExhaustedError) as caught:
            await client.execute(REQUEST)
    assert caught.value.retry_after == 7
    async with _client(503, {"detail": "full"}, {"Retry-After": header}) as client:
        with pytest.raises(PoolExhaustedError) as caught:
            await client.execute(REQUEST)
    assert caught.value.retry_after == 5
