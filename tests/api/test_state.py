"""The app's state is complete once it has started: a mounted route whose service no start-up
hook opened stops the start-up with the hook named, instead of failing each request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi import APIRouter
from pydantic import SecretStr

from skillweave.api import create_api, network
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import router as runs_router
from skillweave.config import Settings
from skillweave.storage.local import LocalArtifactStore


def _settings(tmp_path: Path) -> Settings:
    return Settings(
        _env_file=None,
        api={"token": SecretStr("t")},
        skills={"dirs": [], "uploaded_dir": str(tmp_path / "uploaded")},
    )


@pytest.mark.parametrize(
    ("routers", "hook"),
    [([runs_router], "open_runs(engine)"), ([network.router], "open_skills")],
)
async def test_a_route_without_its_service_stops_the_start_up(
    tmp_path: Path, routers: list[APIRouter], hook: str
) -> None:
    app = create_api(
        _settings(tmp_path),
        store=LocalArtifactStore(tmp_path / "store"),
        routers=routers,
        on_startup=[open_agents],
    )
    with pytest.raises(RuntimeError, match=f"need {re.escape(hook)}"):
        async with app.router.lifespan_context(app):
            pass


async def test_agents_need_no_skill_library(tmp_path: Path) -> None:
    app = create_api(
        _settings(tmp_path),
        store=LocalArtifactStore(tmp_path / "store"),
        routers=[agents_router],
        on_startup=[open_agents],
    )
    async with app.router.lifespan_context(app):
        assert await app.state.api.skills.references(["a", "a", "b"]) == ([], ["a", "b"])
