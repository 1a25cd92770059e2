"""Hot reload through both MCP transports (issue 25): a running manager (streamable HTTP) and a
running ``skillweave mcp`` (stdio) see directory skills added, changed and removed within a
few seconds, without a restart; a session keeps the version it activated."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from skillweave.skills import build_package
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager
from tests.integration.mcp.conftest import TOKEN, mcp_settings

pytestmark = pytest.mark.timeout(120)

RELOAD = 0.2
SEEN_WITHIN = 10.0  # seconds: generous for a loaded machine; a reload is every 0.2 s


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def notes(root: Path, word: str) -> Path:
    return write_skill(
        root / "notes",
        description=f"Team notes ({word}). Use when the team's notes are needed.",
        files={"references/notes.md": f"The word is {word}.\n"},
    )


async def listed_eventually(client: Client, holds: Callable[[str], bool]) -> str:
    """The catalog once `holds` is true of it (within :data:`SEEN_WITHIN`)."""
    deadline = time.monotonic() + SEEN_WITHIN
    while True:
        catalog = text_of(await client.call_tool("list_skills", {}))
        if holds(catalog):
            return catalog
        if time.monotonic() > deadline:
            raise AssertionError(f"the library did not change in time; catalog:\n{catalog}")
        await _pause()


async def _pause() -> None:
    await asyncio.sleep(0.05)


async def exercise(
    client: Client,
    library: Path,
    second: Callable[[], contextlib.AbstractAsyncContextManager[Client]],
) -> None:
    """Added, changed and removed skills reach `client`; a session keeps what it activated."""
    assert 'name="notes"' not in text_of(await client.call_tool("list_skills", {}))
    notes(library, "first")
    await listed_eventually(client, lambda text: "Team notes (first)" in text)
    await client.call_tool("activate_skill", {"name": "notes"})

    notes(library, "second")  # changed: a new version
    await listed_eventually(client, lambda text: "Team notes (second)" in text)
    kept = await client.call_tool(
        "read_skill_resource", {"skill": "notes", "path": "references/notes.md"}
    )
    assert "The word is first." in text_of(kept), text_of(kept)  # pinned at activation
    async with second() as other:
        await other.call_tool("activate_skill", {"name": "notes"})
        fresh = await other.call_tool(
            "read_skill_resource", {"skill": "notes", "path": "references/notes.md"}
        )
        assert "The word is second." in text_of(fresh)

    shutil.rmtree(library / "notes")
    await listed_eventually(client, lambda text: 'name="notes"' not in text)
    kept = await client.call_tool(
        "read_skill_resource", {"skill": "notes", "path": "references/notes.md"}
    )
    assert "The word is first." in text_of(kept)  # still, from the store


async def test_a_running_manager_sees_the_library_change(tmp_path: Path) -> None:
    library = tmp_path / "library"
    write_skill(library / "style-guide", description="House style. Use when writing.")
    settings = mcp_settings(tmp_path, library).model_copy(deep=True)
    settings.skills.reload_seconds = RELOAD
    store = LocalArtifactStore(tmp_path / "store")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with Manager.serving(settings, store=store, publish=True) as manager:

        @contextlib.asynccontextmanager
        async def session() -> AsyncIterator[Client]:
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                Client(streamable_http_client(f"{manager.url}/mcp", http_client=http)) as client,
            ):
                yield client

        async with session() as client:
            await exercise(client, library, session)


async def test_a_running_stdio_server_sees_the_library_change(tmp_path: Path) -> None:
    library = tmp_path / "library"
    write_skill(library / "style-guide", description="House style. Use when writing.")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "SKILLS__DIRS": json.dumps([str(library)]),
        "SKILLS__RELOAD_SECONDS": str(RELOAD),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__UPLOADED_DIR": str(tmp_path / "uploaded"),
    }
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "skillweave.cli", "mcp"], env=env, cwd=str(tmp_path)
    )

    def second() -> contextlib.AbstractAsyncContextManager[Client]:
        return Client(command)  # another stdio server: a session of its own

    async with Client(command) as client:
        await exercise(client, library, second)


async def test_a_running_manager_offers_the_store_skills_and_runs_their_scripts(
    tmp_path: Path,
) -> None:
    """The manager's MCP door is one door among the others: the skills installed, uploaded or
    published into the store are offered beside the directory skills, and reach a running
    manager within the reload period, as they reach every other door."""
    library = tmp_path / "library"
    write_skill(library / "style-guide", description="House style. Use when writing.")
    settings = mcp_settings(tmp_path, library).model_copy(deep=True)
    settings.skills.reload_seconds = RELOAD
    store = LocalArtifactStore(tmp_path / "store")
    stored = StoredSkills(store)
    script = "import pathlib\npathlib.Path('outputs').mkdir(exist_ok=True)\n"
    script += "pathlib.Path('outputs/n.txt').write_text('7')\nprint('counted 7')\n"
    before = write_skill(
        tmp_path / "packages" / "counter",
        description="Counts things. Use when a count is needed.",
        files={"scripts/count.py": script},
    )
    await stored.add_package(build_package(before))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        Manager.serving(settings, store=store, publish=True) as manager,
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{manager.url}/mcp", http_client=http)) as client,
    ):
        catalog = text_of(await client.call_tool("list_skills", {}))
        assert 'name="counter"' in catalog, catalog
        assert 'name="style-guide"' in catalog, catalog
        await client.call_tool("activate_skill", {"name": "counter"})
        ran = await client.call_tool(
            "run_skill_script", {"skill": "counter", "script": "scripts/count.py"}
        )
        assert "counted 7" in text_of(ran), text_of(ran)

        later = write_skill(
            tmp_path / "packages" / "greeter", description="Greets. Use when greeting."
        )
        await stored.add_package(build_package(later))  # while it runs: seen within the period
        await listed_eventually(client, lambda text: 'name="greeter"' in text)
        await stored.set_enabled("greeter", False)
        await listed_eventually(client, lambda text: 'name="greeter"' not in text)
