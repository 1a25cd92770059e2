"""The manager client maps HTTP answers to the error tree, including a lost sandbox."""

from __future__ import annotations

import httpx
import pytest

from skillweave.errors import (
    ExecutionConflictError,
    ExecutionRejectedError,
    PoolExhaustedError,
    SandboxError,
    SandboxLostError,
)
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest

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
    ],
)
async def test_statuses_map_to_typed_errors(status: int, body: object, error: type) -> None:
    async with _client(status, body, {"Retry-After": "2"}) as client:
        with pytest.raises(error) as caught:
            await client.execute(REQUEST)
    assert type(caught.value) is error
    if error is SandboxLostError:
        assert caught.value.execution_id == "wf/script-1"
