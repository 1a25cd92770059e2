"""The manager client maps HTTP answers to the error tree, including a lost sandbox: by the
problem's code, and by the bare ``error`` of a manager before problem+json. What an operator
must fix (a refused token, another store, a 5xx) is never a rejection the model reads."""

from __future__ import annotations

import httpx
import pytest

from skillweave.engines.retries import classify
from skillweave.errors import (
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    ManagerRefusedError,
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


TOKEN_LINE = (
    "the MCP manager at http://manager refuses this worker's token ({status}): "
    "SANDBOX__MANAGER_TOKEN must be the manager's"
)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        # the manager's gate: 401 problem+json, no code
        (401, {"type": "about:blank", "title": "Unauthorized", "status": 401,
               "detail": "missing or wrong bearer token"}),
        (401, {"detail": "missing or wrong bearer token"}),  # a manager before problem+json
        (403, {"detail": "forbidden"}),  # a proxy in between
        (403, "<html>Forbidden</html>"),
    ],
)  # fmt: skip
async def test_a_refused_token_is_the_operators_not_a_rejection(status: int, body: object) -> None:
    """Infrastructure, never a tool result: one line that names the setting to fix."""
    async with _client(status, body) as client:
        with pytest.raises(ManagerRefusedError) as caught:
            await client.execute(REQUEST)
    assert not isinstance(caught.value, ExecutionRejectedError)
    assert caught.value.refused == "token"
    assert str(caught.value) == TOKEN_LINE.format(status=status)
    assert classify(caught.value).again  # retried once the wait is spent


async def test_the_managers_own_403_rejection_stays_a_rejection() -> None:
    """An input of another run is the model's to fix: a tool result, as before."""
    body = Problem.coded(
        ProblemCode.REJECTED, status=403, title="t", detail="input 'x' does not belong to run"
    ).body()
    async with _client(403, body) as client:
        with pytest.raises(ExecutionRejectedError):
            await client.execute(REQUEST)


async def test_a_manager_on_another_store_refuses_the_caller_not_the_request() -> None:
    detail = "this manager works on the store a1, the caller on b2: give every process …"
    body = Problem.coded(ProblemCode.STORE_MISMATCH, status=409, title="t", detail=detail).body()
    async with _client(409, body) as client:
        with pytest.raises(ManagerRefusedError) as caught:
            await client.execute(REQUEST)
    assert caught.value.refused == "store"
    assert str(caught.value) == (
        f"the MCP manager at http://manager refuses this worker's store (409): {detail}"
    )
    assert classify(caught.value).again


@pytest.mark.parametrize("status", [500, 502, 504])
async def test_a_5xx_without_a_code_is_infrastructure(status: int) -> None:
    async with _client(status, {"detail": "boom"}) as client:
        with pytest.raises(SandboxError) as caught:
            await client.execute(REQUEST)
    assert not isinstance(caught.value, ExecutionRejectedError)
    assert classify(caught.value).again


async def test_a_refused_token_on_cancel_and_pool_is_the_same_error() -> None:
    async with _client(401, {"detail": "missing or wrong bearer token"}) as client:
        with pytest.raises(ManagerRefusedError):
            await client.cancel("wf/script-1")
        with pytest.raises(ManagerRefusedError):
            await client.pool()
