"""The MCP front door over a manager that refuses its token: an MCP client gets an error
result naming the setting to fix, never text that reads as the script's outcome; and the
door's requests name its store, so a manager on another store refuses them."""

from __future__ import annotations

from pathlib import Path

import httpx
from mcp import Client

from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest
from skillweave.storage.store_id import store_identity
from tests.mcp_manager.test_mcp_server import front_door, text_of


def _refusing(seen: list[ExecuteRequest]) -> SandboxClient:
    """A client of a manager whose gate refuses every token (its 401 problem+json)."""

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(ExecuteRequest.model_validate_json(request.content))
        body = {"type": "about:blank", "title": "Unauthorized", "status": 401,
                "detail": "missing or wrong bearer token"}  # fmt: skip
        return httpx.Response(401, json=body, headers={"WWW-Authenticate": "Bearer"})

    return SandboxClient("http://manager:8090", token="t", transport=httpx.MockTransport(answer))


async def test_a_refused_token_is_an_error_result_that_names_the_setting(tmp_path: Path) -> None:
    seen: list[ExecuteRequest] = []
    client = _refusing(seen)
    mcp = front_door(tmp_path, client.execute, sandbox={"queue_seconds": 0})
    async with Client(mcp.server) as session:
        await session.call_tool("activate_skill", {"name": "style-guide"})
        ran = await session.call_tool(
            "run_skill_script", {"skill": "style-guide", "script": "references/rules.md"}
        )
    await client.aclose()
    assert ran.is_error
    text = text_of(ran)
    assert text == (
        "No script ran; an operator must act: the MCP manager at http://manager:8090 refuses "
        "this worker's token (401): SANDBOX__MANAGER_TOKEN must be the manager's"
    )
    assert "bearer token" not in text
    (request,) = seen
    assert request.store_id == await store_identity(mcp.store)
