"""Every manager error crosses HTTP as problem+json and comes back from the sandbox client as
the same error: the manager's handlers and the client share one code vocabulary."""

from __future__ import annotations

import json

import httpx
import pytest
from fastapi import FastAPI, HTTPException

from mcp_manager.problem_answers import install_error_handlers
from skillweave.errors import (
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    ManagerRefusedError,
    PoolExhaustedError,
    SandboxLostError,
    SandboxStartError,
    SkillweaveError,
)
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.sandbox.problems import PROBLEM_JSON, ProblemCode

ID = "wf/script-1"
RAISED: dict[str, SkillweaveError] = {
    "rejected": ExecutionRejectedError(404, "script 'x.py' is not in skill 's'"),
    "conflict": ExecutionConflictError(ID, "used with a different request"),
    "in_progress": ExecutionInProgressError(ID, retry_after=2.4),
    "lost": SandboxLostError(ID, "ConnectError: reset"),
    "refused": SandboxStartError("bubblewrap cannot run here", permanent=True),
    "exhausted": PoolExhaustedError("no sandbox free within 20 s", retry_after=4),
    "store": ManagerRefusedError(
        "this manager works on the store a1, the caller on b2", refused="store", status=409
    ),
}


def _app() -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/sandbox/execute")
    async def execute(body: ExecuteRequest) -> ExecutionResult:
        raise RAISED[body.script]

    @app.get("/sandbox/pool")
    async def pool() -> dict[str, object]:
        raise HTTPException(404, detail="no such thing \udcff")

    return app


def _request(script: str) -> ExecuteRequest:
    return ExecuteRequest(execution_id=ID, run_id="r1", skill="s", version="a" * 64, script=script)


def _client() -> SandboxClient:
    return SandboxClient("http://manager", token="t", transport=httpx.ASGITransport(_app()))


@pytest.mark.parametrize(
    ("script", "error", "message", "code", "status"),
    [
        ("rejected", ExecutionRejectedError, "script 'x.py' is not in skill 's'", "rejected", 404),
        # The detail is the server's whole message, wrapped again: as before problem+json.
        ("conflict", ExecutionConflictError,
         f"execution {ID!r} execution {ID!r} used with a different request", "conflict", 409),
        ("in_progress", ExecutionInProgressError,
         f"execution {ID!r} is running under another manager's claim; retry in 3 s",
         "in_progress", 409),
        ("lost", SandboxLostError,
         f"execution {ID!r}: the sandbox was lost "
         f"(execution {ID!r}: the sandbox was lost (ConnectError: reset))", "sandbox_lost", 502),
        # Refused for good (an operator must act): a permanent start error, not retried.
        ("refused", SandboxStartError, "bubblewrap cannot run here", "sandbox_refused", 500),
        ("exhausted", PoolExhaustedError, "no sandbox free within 20 s", "pool_exhausted", 503),
        # The caller's store, not its request: the operator's, with the manager's address.
        ("store", ManagerRefusedError,
         "the MCP manager at http://manager refuses this worker's store (409): "
         "this manager works on the store a1, the caller on b2", "store_mismatch", 409),
    ],
)  # fmt: skip
async def test_each_error_round_trips_as_the_same_error_and_message(
    script: str, error: type[Exception], message: str, code: str, status: int
) -> None:
    async with _client() as client:
        with pytest.raises(error) as caught:
            await client.execute(_request(script))
    assert type(caught.value) is error
    assert str(caught.value) == message
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(_app()), base_url="http://manager"
    ) as http:
        response = await http.post("/sandbox/execute", json=_request(script).model_dump())
    assert response.status_code == status
    assert response.headers["content-type"] == PROBLEM_JSON
    body = response.json()
    assert body["type"] == ProblemCode(code).type
    assert body["status"] == status
    assert body["error"] == code  # clients before problem+json match on it
    assert body["title"]
    assert body["detail"]


async def test_retry_after_travels_in_the_header_and_the_body() -> None:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(_app()), base_url="http://manager"
    ) as http:
        busy = await http.post("/sandbox/execute", json=_request("in_progress").model_dump())
        full = await http.post("/sandbox/execute", json=_request("exhausted").model_dump())
    assert busy.headers["Retry-After"] == "3"
    assert busy.json()["retry_after"] == 3
    assert full.headers["Retry-After"] == "4"
    assert full.json()["retry_after"] == 4
    async with _client() as client:
        with pytest.raises(PoolExhaustedError) as caught:
            await client.execute(_request("exhausted"))
    assert caught.value.retry_after == 4


async def test_an_invalid_body_is_a_rejection_with_the_failing_fields() -> None:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(_app()), base_url="http://manager"
    ) as http:
        response = await http.post("/sandbox/execute", json={"execution_id": ID})
    assert response.status_code == 422
    body = response.json()
    assert body["type"] == ProblemCode.INVALID_REQUEST.type
    assert body["detail"].startswith("the request is not valid: ")
    assert {"loc": ["body", "run_id"], "msg": "Field required"} in body["errors"]


async def test_json_without_the_json_content_type_is_a_415_naming_the_header() -> None:
    raw = _request("rejected").model_dump_json()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(_app()), base_url="http://manager"
    ) as http:
        response = await http.post(
            "/sandbox/execute", content=raw, headers={"Content-Type": "text/plain"}
        )
    assert response.status_code == 415
    body = response.json()
    assert body["type"] == ProblemCode.INVALID_REQUEST.type
    assert "'Content-Type: application/json'" in body["detail"]


async def test_a_route_refusal_is_problem_json_in_ascii() -> None:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(_app()), base_url="http://manager"
    ) as http:
        response = await http.get("/sandbox/pool")
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM_JSON
    assert response.content.isascii()
    assert json.loads(response.content) == {
        "type": "about:blank",
        "title": "Not found",
        "status": 404,
        "detail": "no such thing \udcff",
    }
