"""The MCP front door behaves like a run, against a real manager (real sandboxes, real pool):
an executable skill's tools appear in the session once it is activated and run with
``--run-json``, and a run that finds the pool full waits for a sandbox instead of failing."""

from __future__ import annotations

import asyncio
import contextlib
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager
from tests.integration.mcp.conftest import TOKEN, mcp_settings, write_library

pytestmark = pytest.mark.timeout(120)

SHOUT = textwrap.dedent(
    """
    import json, pathlib, sys
    if sys.argv[1:2] == ["--help-json"]:
        print(json.dumps({"name": "shout", "description": "Upper-case a word into outputs/.",
                          "input_schema": {"type": "object",
                                           "properties": {"word": {"type": "string"}},
                                           "required": ["word"]}}))
        sys.exit(0)
    args = json.loads(sys.argv[sys.argv.index("--run-json") + 1])
    pathlib.Path("outputs").mkdir(exist_ok=True)
    pathlib.Path("outputs/shout.txt").write_text(args["word"].upper())
    print("shouted", args["word"])
    """
)


Connect = Callable[[], contextlib.AbstractAsyncContextManager[Client]]


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.fixture
async def connect(tmp_path: Path) -> AsyncIterator[Connect]:
    library = write_library(tmp_path)
    write_skill(
        library / "shouter",
        description="Shouts words. Use when a word must be loud.",
        extra="metadata:\n  type: executable",
        files={"scripts/shout.py": SHOUT},
    )
    write_skill(
        library / "sleeper",
        description="Sleeps a while. Use when testing a busy pool.",
        files={"scripts/sleep.py": "import time\ntime.sleep(3)\nprint('slept')\n"},
    )
    settings = mcp_settings(tmp_path, library).model_copy(deep=True)
    settings.sandbox.pool_target = 1
    settings.sandbox.pool_max = 1
    settings.sandbox.claim_timeout_seconds = 0.2
    settings.sandbox.queue_seconds = 60
    store = LocalArtifactStore(tmp_path / "store")
    async with Manager.serving(settings, store=store, publish=True) as manager:

        @contextlib.asynccontextmanager
        async def session() -> AsyncIterator[Client]:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                Client(streamable_http_client(f"{manager.url}/mcp", http_client=http)) as client,
            ):
                yield client

        yield session


async def test_an_executable_skill_adds_its_tools_to_the_session(connect: Connect) -> None:
    async with connect() as client, connect() as other:
        assert "shout" not in {t.name for t in (await client.list_tools()).tools}
        activated = await client.call_tool("activate_skill", {"name": "shouter"})
        assert "Tools registered by this skill: shout." in text_of(activated)
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["shout"].input_schema["required"] == ["word"]
        assert "shout" not in {t.name for t in (await other.list_tools()).tools}

        ran = await client.call_tool("shout", {"word": "hello"})
        assert not ran.is_error, text_of(ran)
        assert "shouted hello" in text_of(ran)
        [output] = [c for c in ran.content if isinstance(c, types.EmbeddedResource)]
        assert output.resource.text == "HELLO"


async def test_arguments_that_do_not_match_a_tools_schema_are_refused_before_it_runs(
    connect: Connect,
) -> None:
    """As in a run (``disclosure.arguments_refusal``): nothing reaches a sandbox."""
    async with connect() as client:
        await client.call_tool("activate_skill", {"name": "shouter"})
        for arguments, says in (
            ({"word": 5}, "'word': 5 is not of type 'string'"),
            ({}, "'word' is a required property"),
        ):
            refused = await client.call_tool("shout", arguments)
            assert refused.is_error
            assert says in text_of(refused), text_of(refused)
            assert "shouted" not in text_of(refused)
        extra = await client.call_tool("list_skills", {"query": "x", "verbose": True})
        assert extra.is_error
        assert "'verbose' was unexpected" in text_of(extra), text_of(extra)


async def test_a_run_that_finds_the_pool_full_waits_for_a_sandbox(connect: Connect) -> None:
    async with connect() as first, connect() as second:
        await first.call_tool("activate_skill", {"name": "sleeper"})
        await second.call_tool("activate_skill", {"name": "style-guide"})

        async def quick() -> types.CallToolResult:
            await asyncio.sleep(0.5)  # the sleeper holds the only sandbox by then
            return await second.call_tool(
                "run_skill_script", {"skill": "style-guide", "script": "references/rules.md"}
            )

        slow, waited = await asyncio.gather(
            first.call_tool("run_skill_script", {"skill": "sleeper", "script": "scripts/sleep.py"}),
            quick(),
        )
        assert not slow.is_error, text_of(slow)
        assert "no sandbox" not in text_of(waited)
        assert "exit code" in text_of(waited)  # it ran (the file is not a program: it fails)
