"""Skill libraries written for other agent clients, through the MCP front door (issue 25): the
Lazy-Skills library ``tests/data/compat/lazy`` served by a real manager, its root ``execute.py``
a tool named by its schema, its arguments checked before a sandbox is spent."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from skillweave.storage.local import LocalArtifactStore
from tests.integration.harness import Manager
from tests.integration.mcp.conftest import TOKEN, mcp_settings

pytestmark = pytest.mark.timeout(120)

LAZY = Path(__file__).parents[2] / "data" / "compat" / "lazy"


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[Manager]:
    settings = mcp_settings(tmp_path, LAZY)
    store = LocalArtifactStore(tmp_path / "store")
    async with Manager.serving(settings, store=store, publish=True) as manager:
        yield manager


@contextlib.asynccontextmanager
async def connected(manager: Manager) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{manager.url}/mcp", http_client=http)) as client,
    ):
        yield client


async def test_lazy_skills_tools_are_named_by_their_schemas_and_checked_first(
    manager: Manager,
) -> None:
    async with connected(manager) as client:
        await _lazy_session(manager, client)


async def _lazy_session(manager: Manager, client: Client) -> None:
    listed = text_of(await client.call_tool("list_skills", {}))
    assert all(name in listed for name in ("web_scraper", "docs_search", "notes_search"))

    activated = await client.call_tool("activate_skill", {"name": "web_scraper"})
    assert "Tools registered by this skill: web_scraper." in text_of(activated)
    for name in ("docs_search", "notes_search"):
        assert not (await client.call_tool("activate_skill", {"name": name})).is_error
    tools = {tool.name for tool in (await client.list_tools()).tools}
    assert {"web_scraper", "search", "notes_search__search"} <= tools

    before = await manager.executions()
    refused = await client.call_tool("web_scraper", {"html": "<a href='/x'>", "max_links": 0})
    assert refused.is_error
    assert "'max_links': 0 is less than the minimum of 1" in text_of(refused), text_of(refused)
    assert await manager.executions() == before  # no sandbox spent on it

    ran = await client.call_tool("web_scraper", {"html": "<title>T</title><a href='/x'>x</a>"})
    assert not ran.is_error, text_of(ran)
    assert json.dumps({"title": "T", "links": ["/x"]}) in text_of(ran)
    docs = await client.call_tool("search", {"query": "deploy"})
    notes = await client.call_tool("notes_search__search", {"query": "deploy"})
    assert "make release" in text_of(docs)
    assert "Tuesdays" in text_of(notes)
    assert await manager.executions() == before + 3
