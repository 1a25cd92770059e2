"""The API served over real HTTP on a loopback port, with a local store and a skill library."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import skills
from skillweave.api.app import create_api
from skillweave.config import Settings
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

TOKEN = "t"
DIRECTORY_SKILL = "dir-skill"


@dataclass
class Api:
    """A served API: a client with the token, the base URL and the store behind it."""

    client: httpx.AsyncClient
    url: str
    store: LocalArtifactStore


def _settings(tmp_path: Path, **api: Any) -> Settings:
    library = tmp_path / "library"
    write_skill(
        library / DIRECTORY_SKILL,
        description="A directory skill. Use when testing.",
        files={"references/notes.md": "notes\n"},
    )
    return Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN), **api},
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded")},
    )


async def _serve(settings: Settings, store: LocalArtifactStore) -> AsyncIterator[Api]:
    app = create_api(
        settings, store=store, routers=[skills.router], on_startup=[skills.open_skills]
    )
    async with LoopbackServer(app) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers) as client:
            yield Api(client, server.url, store)


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    """The skills API with default limits."""
    store = LocalArtifactStore(tmp_path / "store")
    async for served in _serve(_settings(tmp_path), store):
        yield served


@pytest.fixture
async def small_api(tmp_path: Path) -> AsyncIterator[Api]:
    """The skills API with the smallest body limits the settings allow."""
    store = LocalArtifactStore(tmp_path / "store")
    settings = _settings(tmp_path, max_json_bytes=1024, max_upload_bytes=1024)
    async for served in _serve(settings, store):
        yield served
