"""An MCP client gives a script files of its own (issue 25): ``input_files`` inline over HTTP,
and by local path over stdio (inside the folders ``skillweave mcp --files-root`` allows), to
``run_skill_script`` and to a skill's tool; what is not a file it may give is refused first."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager
from tests.integration.mcp.conftest import TOKEN, mcp_settings

pytestmark = pytest.mark.timeout(120)

COUNT = textwrap.dedent(
    """
    import json, pathlib, sys
    if sys.argv[1:2] == ["--help-json"]:
        print(json.dumps({"name": "count_bytes", "description": "Sizes of the input files.",
                          "input_schema": {"type": "object", "properties": {}}}))
        sys.exit(0)
    found = {p.name: p.stat().st_size for p in sorted(pathlib.Path("inputs").rglob("*"))
             if p.is_file()}
    first = pathlib.Path("inputs/notes.txt")
    print(json.dumps({"sizes": found,
                      "first": first.read_text().splitlines()[0] if first.exists() else None}))
    """
)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def library(root: Path) -> Path:
    write_skill(
        root / "counter",
        description="Counts the bytes of input files. Use when files must be measured.",
        extra="metadata:\n  type: executable",
        files={"scripts/count.py": COUNT},
    )
    return root


@contextlib.asynccontextmanager
async def over_http(tmp_path: Path, *, max_bytes: int | None = None) -> AsyncIterator[Client]:
    settings = mcp_settings(tmp_path, library(tmp_path / "library")).model_copy(deep=True)
    if max_bytes is not None:
        settings.sandbox.mcp_input_max_bytes = max_bytes
    store = LocalArtifactStore(tmp_path / "store")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        Manager.serving(settings, store=store, publish=True) as manager,
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{manager.url}/mcp", http_client=http)) as client,
    ):
        await client.call_tool("activate_skill", {"name": "counter"})
        yield client


async def test_inline_files_reach_a_script_and_a_skill_tool_over_http(tmp_path: Path) -> None:
    binary = bytes(range(256))
    files = [
        {"name": "notes.txt", "content": "first line\nsecond\n"},
        {"name": "data/blob.bin", "content_base64": base64.b64encode(binary).decode()},
    ]
    async with over_http(tmp_path) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        files_schema = tools["run_skill_script"].input_schema["properties"]["input_files"]
        assert "or a local path" not in files_schema["description"]  # not over HTTP
        ran = await client.call_tool(
            "run_skill_script",
            {"skill": "counter", "script": "scripts/count.py", "input_files": files},
        )
        assert not ran.is_error, text_of(ran)
        said = {"sizes": {"blob.bin": 256, "notes.txt": 18}, "first": "first line"}
        assert json.dumps(said) in text_of(ran), text_of(ran)
        tool = await client.call_tool("count_bytes", {"input_files": files[:1]})
        assert not tool.is_error, text_of(tool)
        assert '"notes.txt": 18' in text_of(tool)


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ({"name": "a.txt", "path": "/etc/hostname"}, "a local path works only over stdio"),
        ({"name": "a.txt", "content_base64": "not base64!"}, "is not valid base64"),
        ({"name": "../escape.txt", "content": "x"}, "input_files[0].name"),
        ({"name": "a.txt"}, "give exactly one of content, content_base64 or path"),
        ({"name": "a.txt", "content": "x", "content_base64": "eA=="}, "exactly one of"),
        ({"name": "big.txt", "content": "x" * 65}, "at most 64 (SANDBOX__MCP_INPUT_MAX_BYTES)"),
        ({"content": "x"}, "input_files[0]: no name"),
    ],
)
async def test_what_is_not_a_file_the_client_may_give_is_refused(
    tmp_path: Path, item: dict[str, str], says: str
) -> None:
    async with over_http(tmp_path, max_bytes=64) as client:
        refused = await client.call_tool(
            "run_skill_script",
            {"skill": "counter", "script": "scripts/count.py", "input_files": [item]},
        )
        assert refused.is_error
        assert says in text_of(refused), text_of(refused)


async def test_local_paths_over_stdio_inside_the_allowed_folder_only(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("from disk\n")
    (tmp_path / "secret.txt").write_text("not for scripts\n")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "SKILLS__DIRS": json.dumps([str(library(tmp_path / "library"))]),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__UPLOADED_DIR": str(tmp_path / "uploaded"),
    }
    command = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillweave.cli", "mcp", "--files-root", str(work)],
        env=env,
        cwd=str(tmp_path),
    )
    async with Client(command) as client:
        await client.call_tool("activate_skill", {"name": "counter"})
        ran = await client.call_tool(
            "run_skill_script",
            {
                "skill": "counter",
                "script": "scripts/count.py",
                "input_files": [{"name": "notes.txt", "path": str(work / "notes.txt")}],
            },
        )
        assert not ran.is_error, text_of(ran)
        assert '"first": "from disk"' in text_of(ran)
        for outside in (tmp_path / "secret.txt", work / ".." / "secret.txt"):
            refused = await client.call_tool(
                "run_skill_script",
                {
                    "skill": "counter",
                    "script": "scripts/count.py",
                    "input_files": [{"name": "s.txt", "path": str(outside)}],
                },
            )
            assert refused.is_error
            assert "is outside the allowed folders" in text_of(refused)
