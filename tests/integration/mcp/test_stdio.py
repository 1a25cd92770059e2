"""``skillweave mcp`` over stdio, with the official ``mcp`` client starting it as MCP desktop
clients do: the same tools, a tree activated parent then child, a resource, a script run (in
a local warm pool the command starts) whose output file comes back, and a refused run."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.integration.mcp.conftest import write_library
from tests.integration.mcp.test_http import text_of
from tests.moto import free_port, moto_server

pytestmark = pytest.mark.timeout(120)


async def test_the_library_over_stdio(tmp_path: Path) -> None:
    library = write_library(tmp_path)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "SKILLS__DIRS": f'["{library}"]',
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__UPLOADED_DIR": str(tmp_path / "uploaded"),
    }
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "skillweave.cli", "mcp"], env=env, cwd=str(tmp_path)
    )
    async with Client(command) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"list_skills", "activate_skill", "run_skill_script"} <= tools
        catalog = text_of(await client.call_tool("list_skills", {}))
        assert 'name="text-tools"' in catalog

        refused = await client.call_tool(
            "run_skill_script", {"skill": "reverser", "script": "scripts/reverse.py"}
        )
        assert refused.is_error
        assert "Skill 'reverser' is not active" in text_of(refused)

        await client.call_tool("activate_skill", {"name": "text-tools"})
        child = await client.call_tool("activate_skill", {"name": "reverser"})
        assert "# Reverser" in text_of(child)
        rules = await client.read_resource("skill://style-guide/references/rules.md")
        assert rules.contents[0].text == "Short sentences. No jargon.\n"

        ran = await client.call_tool(
            "run_skill_script", {"skill": "reverser", "script": "scripts/reverse.py"}
        )
        assert not ran.is_error, text_of(ran)
        [output] = [c for c in ran.content if isinstance(c, types.EmbeddedResource)]
        assert output.resource.text == "hello from the child"[::-1]
    # The artifacts went to the configured store, under the session's run.
    assert list((tmp_path / "store").rglob("reversed.txt"))
    # The door anchored its last audit records (activations, the run) as it stopped.
    report = await AuditLog(LocalArtifactStore(tmp_path / "store")).verify()
    assert report.intact, report.problems
    assert report.records >= 3
    assert report.unanchored == 0


async def test_the_stdio_door_waits_for_a_store_not_up_yet(tmp_path: Path) -> None:
    """Started before its S3 store (as a desktop client may start it before the store's
    container), ``skillweave mcp`` says once on stderr that it waits, and serves once the
    store answers; it does not exit."""
    library = write_library(tmp_path)
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "SKILLS__DIRS": f'["{library}"]',
        "STORAGE__BACKEND": "s3",
        "STORAGE__S3_ENDPOINT": f"127.0.0.1:{port}",
        "STORAGE__S3_BUCKET": "mcp-waits",
        "STORAGE__S3_ACCESS_KEY": "access",
        "STORAGE__S3_SECRET_KEY": "secret-not-logged",
        "STORAGE__S3_CREATE_BUCKET": "true",
    }
    errors = tmp_path / "mcp.err"
    # stderr to a file (the client keeps stdin/stdout for the protocol).
    command = StdioServerParameters(
        command="/bin/sh",
        args=["-c", f'exec "{sys.executable}" -m skillweave.cli mcp 2>>"{errors}"'],
        env=env,
        cwd=str(tmp_path),
    )

    async def said() -> str:
        return errors.read_text(encoding="utf-8") if errors.exists() else ""

    async def served() -> set[str]:
        async with Client(command) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    serving = asyncio.create_task(served())
    deadline = asyncio.get_running_loop().time() + 90
    while "waiting for the S3 store" not in await said():
        assert not serving.done(), (serving, await said())
        assert asyncio.get_running_loop().time() < deadline, await said()
        await asyncio.sleep(0.1)
    (tmp_path / "moto").mkdir()
    with moto_server(tmp_path / "moto", port=port):
        tools = await asyncio.wait_for(serving, timeout=90)
    assert {"list_skills", "activate_skill", "run_skill_script"} <= tools
    text = await said()
    assert text.count("waiting for the S3 store") == 1, text
    assert "is up after" in text, text
    assert "Traceback" not in text, text
