"""The MCP front door's test library and a real manager serving it on loopback: a skill tree
(a parent with a child that has a script writing an output file), a plain skill with a
reference file, and an official ``mcp`` client factory over streamable HTTP."""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager

TOKEN = "mcp-front-door-token"

REVERSE = textwrap.dedent(
    """
    import pathlib, sys
    source = pathlib.Path('inputs') / sys.argv[1] if len(sys.argv) > 1 else None
    text = source.read_text() if source else 'hello from the child'
    pathlib.Path('outputs').mkdir(exist_ok=True)
    pathlib.Path('outputs/reversed.txt').write_text(text[::-1])
    print('wrote', len(text), 'characters')
    """
)


def write_library(root: Path) -> Path:
    """A library: ``text-tools`` (a parent) holding ``reverser`` (a script), and
    ``style-guide`` (a reference file)."""
    library = root / "library"
    write_skill(
        library / "text-tools",
        description="Tools for working on text files. Use when transforming text.",
        body="# Text tools\nActivate a sub-skill for the run.\n",
    )
    write_skill(
        library / "text-tools" / "reverser",
        description="Reverses text files. Use when text must be reversed.",
        body="# Reverser\nRun scripts/reverse.py [input file name].\n",
        files={"scripts/reverse.py": REVERSE},
    )
    write_skill(
        library / "style-guide",
        description="The house writing style. Use when writing prose for the team.",
        body="# Style guide\nRead references/rules.md.\n",
        files={"references/rules.md": "Short sentences. No jargon.\n"},
    )
    return library


def mcp_settings(root: Path, library: Path) -> Settings:
    return Settings(
        _env_file=None,
        sandbox={"manager_token": SecretStr(TOKEN), "pool_target": 1, "pool_max": 4},
        skills={"dirs": [str(library)], "uploaded_dir": str(root / "uploaded")},
        storage={"local_dir": str(root / "store")},
    )


@dataclass
class FrontDoor:
    """A manager serving the MCP front door, and how to reach it."""

    url: str
    store: LocalArtifactStore
    connect: Callable[..., contextlib.AbstractAsyncContextManager[Client]]


@pytest.fixture
async def front_door(tmp_path: Path) -> AsyncIterator[FrontDoor]:
    settings = mcp_settings(tmp_path, write_library(tmp_path))
    store = LocalArtifactStore(tmp_path / "store")
    async with Manager.serving(settings, store=store, publish=True) as manager:
        url = f"{manager.url}/mcp"

        @contextlib.asynccontextmanager
        async def connect(token: str | None = TOKEN, **options: Any) -> AsyncIterator[Client]:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                Client(streamable_http_client(url, http_client=http), **options) as client,
            ):
                yield client

        yield FrontDoor(url=url, store=store, connect=connect)
