"""``GET /v1/skills/{name}/versions`` names the registry a version was found in (an install an
agent asked for, or one ``skills find`` printed), in its origin and in its words."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from mcp_manager.server import LoopbackServer
from skillweave.api import skill_versions, skills
from skillweave.api.app import create_api
from skillweave.skills.install import install_skills, parse_source
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.api.conftest import TOKEN, Api, _settings
from tests.conftest import write_skill


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    store = LocalArtifactStore(tmp_path / "store")
    app = create_api(
        _settings(tmp_path),
        store=store,
        routers=[skills.router, skill_versions.router],
        on_startup=[skills.open_skills],
    )
    async with LoopbackServer(app) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers) as client:
            yield Api(client, server.url, store)


async def test_a_version_from_a_registry_names_it(api: Api, tmp_path: Path) -> None:
    write_skill(tmp_path / "src" / "pdf-tools")
    source = str(tmp_path / "src")
    await install_skills(
        StoredSkills(api.store), parse_source(source), only=("pdf-tools",), registry="team"
    )

    answer = await api.client.get("/v1/skills/pdf-tools/versions")
    assert answer.status_code == 200, answer.text
    [version] = answer.json()["versions"]
    assert version["origin"]["registry"] == "team"
    assert version["source"] == f"{source} (registry team, path pdf-tools)"
