"""Skill libraries written for other agent clients, through the MCP front door (issue 25), on a
real manager: the Lazy-Skills library ``tests/data/compat/lazy`` (its root ``execute.py`` a
tool named by its schema, its arguments checked before a sandbox is spent) and the namespaced
``tests/data/compat/namespaces`` (qualified names, a session scoped to ``web.*``), over HTTP
and over stdio, and ``tests/data/compat/allowed`` (``allowed-tools`` limit a session's tools)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from skillweave.storage.local import LocalArtifactStore
from tests.integration.harness import Manager
from tests.integration.mcp.conftest import TOKEN, mcp_settings

pytestmark = pytest.mark.timeout(120)

COMPAT = Path(__file__).parents[2] / "data" / "compat"
LAZY = COMPAT / "lazy"
NAMESPACES = COMPAT / "namespaces"
ALLOWED = COMPAT / "allowed"


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[Manager]:
    settings = mcp_settings(tmp_path, LAZY).model_copy(deep=True)
    settings.skills.dirs = [str(LAZY), str(NAMESPACES), str(ALLOWED)]
    store = LocalArtifactStore(tmp_path / "store")
    async with Manager.serving(settings, store=store, publish=True) as manager:
        yield manager


@contextlib.asynccontextmanager
async def connected(manager: Manager, *, query: str = "") -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    url = f"{manager.url}/mcp{query}"
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
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


async def test_namespaced_skills_by_qualified_name_and_a_session_scoped_by_namespace(
    manager: Manager,
) -> None:
    async with connected(manager) as client:
        listed = text_of(await client.call_tool("list_skills", {}))
        for name in ("formats.pdf.parser", "formats.csv.parser", "scraper", "web_scraper"):
            assert f'name="{name}"' in listed, listed
        # Both parsers, each by its qualified name; a unique skill by its qualified one too.
        for name in ("formats.pdf.parser", "formats.csv.parser", "web.scraper"):
            activated = await client.call_tool("activate_skill", {"name": name})
            assert not activated.is_error, text_of(activated)
        ran = await client.call_tool(
            "run_skill_script", {"skill": "formats.csv.parser", "script": "scripts/parse.py"}
        )
        assert '"parser": "csv"' in text_of(ran), text_of(ran)
        read = await client.call_tool(
            "read_skill_resource", {"skill": "web.scraper", "path": "SKILL.md"}
        )
        assert "# Scraper" in text_of(read)

    async with connected(manager, query="?skills=web.*") as scoped:
        listed = text_of(await scoped.call_tool("list_skills", {}))
        assert 'name="scraper"' in listed
        assert 'name="fetcher"' in listed
        assert "parser" not in listed
        assert "web_scraper" not in listed
        refused = await scoped.call_tool("activate_skill", {"name": "formats.pdf.parser"})
        assert refused.is_error
        assert "cannot be activated now" in text_of(refused)
        found = text_of(await scoped.call_tool("search_skills", {"query": "parse PDF files"}))
        assert "parser" not in found

    async with connected(manager, query="?skills=nowhere.*") as wrong:
        with pytest.raises(Exception, match="name no skill here"):
            await wrong.list_tools()


async def test_skillweave_mcp_over_stdio_serves_only_its_skills_option(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "SKILLS__DIRS": json.dumps([str(NAMESPACES)]),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__UPLOADED_DIR": str(tmp_path / "uploaded"),
    }
    command = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillweave.cli", "mcp", "--skills", "formats.*, notes"],
        env=env,
        cwd=str(tmp_path),
    )
    async with Client(command) as client:
        listed = text_of(await client.call_tool("list_skills", {}))
        assert 'name="formats.pdf.parser"' in listed
        assert 'name="notes"' in listed
        assert "scraper" not in listed
        activated = await client.call_tool("activate_skill", {"name": "formats.pdf.parser"})
        assert "# PDF parser" in text_of(activated)


async def test_allowed_tools_limit_a_sessions_tools(manager: Manager) -> None:
    async with connected(manager) as client:

        async def offered() -> set[str]:
            return {tool.name for tool in (await client.list_tools()).tools}

        await client.call_tool("activate_skill", {"name": "shouter"})
        assert {"shout", "run_skill_script"} <= await offered()
        activated = await client.call_tool("activate_skill", {"name": "deer-report"})
        assert "limits the tools while it is active" in text_of(activated)
        tools = await offered()
        assert "render_report" in tools
        assert not {"shout", "run_skill_script"} & tools
        before = await manager.executions()
        refused = await client.call_tool("shout", {"word": "hi"})
        assert refused.is_error
        assert "not allowed while skills that limit their tools" in text_of(refused)
        assert await manager.executions() == before
        rendered = await client.call_tool("render_report", {"title": "Q3"})
        assert "# Q3" in text_of(rendered), text_of(rendered)

        await client.call_tool("activate_skill", {"name": "pdf-forms"})  # + python scripts
        assert {"shout", "run_skill_script", "render_report"} <= await offered()
        flatten = await client.call_tool(
            "run_skill_script", {"skill": "pdf-forms", "script": "scripts/flatten.sh"}
        )
        assert flatten.is_error
        assert "pdf-forms: scripts *.py" in text_of(flatten)
        filled = await client.call_tool(
            "run_skill_script",
            {"skill": "pdf-forms", "script": "scripts/fill.py", "args": ["name=Ada"]},
        )
        assert "filled name=Ada" in text_of(filled), text_of(filled)
