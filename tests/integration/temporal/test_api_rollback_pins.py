"""The API's door to pins and rollback on both engines (issue 45, must show): an agent made
over the API pins the newer of two uploaded versions (``skill_ids: ["name@PREFIX"]``); while
its run waits for the model, ``POST /v1/skills/{name}/rollback`` makes the older current; the
run activates, reads and runs the newer; the next run of an agent naming the skill gets the
older. Real HTTP, store, manager, sandboxes; Temporal through the dev server and a worker."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.api.skill_versions import router as versions_router
from skillweave.api.skills import open_skills, serve_uploaded_skills
from skillweave.api.skills import router as skills_router
from skillweave.config import ModelSettings, Settings
from tests.api.test_runs import (
    PINNED_RUN,
    greeter_package,
    make_agent,
    upload_greeter,
    what_the_run_used,
)
from tests.integration.temporal.harness import EngineKind, Stack, open_engine

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(180)]

TOKEN = "api-rollback-token"


@contextlib.asynccontextmanager
async def api_client(
    kind: EngineKind, stack: Stack, script: str, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    async with open_engine(kind, stack, script) as harness:
        assert harness.services is not None
        settings = Settings(
            _env_file=None,
            api={"token": SecretStr(TOKEN)},
            model=ModelSettings(provider="scripted", name="harness.yaml"),
            skills={"dirs": [], "uploaded_dir": str(tmp_path / "uploaded")},
        )
        app = create_api(
            settings,
            store=stack.store,
            routers=[skills_router, versions_router, agents_router, runs_router],
            on_startup=[
                open_skills,
                serve_uploaded_skills(harness.services),
                open_agents,
                open_runs(harness.engine),
            ],
        )
        async with (
            LoopbackServer(app) as server,
            httpx.AsyncClient(
                base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
            ) as client,
        ):
            yield client


async def test_a_rollback_over_the_api_leaves_a_pinned_run_its_version(
    engine_kind: EngineKind, stack: Stack, tmp_path: Path
) -> None:
    name = f"greeter-{uuid.uuid4().hex[:8]}"
    script = PINNED_RUN.replace("delay_seconds: 1.5", "delay_seconds: 4").replace("greeter", name)
    async with api_client(engine_kind, stack, script, tmp_path) as client:
        older = await upload_greeter(client, greeter_package(tmp_path, "v1", name))
        newer = await upload_greeter(client, greeter_package(tmp_path, "v2", name))
        pinned = await make_agent(client, name=f"pinned {name}", skill_ids=[f"{name}@{newer[:8]}"])
        follows = await make_agent(client, name=f"follows {name}", skill_ids=[name])

        run = await client.post("/v1/runs/", data={"agent_id": pinned, "input": "Hi."})
        assert run.status_code == 201, run.text
        rolled = await client.post(f"/v1/skills/{name}/rollback")
        assert rolled.status_code == 200, rolled.text
        assert rolled.json()["version"] == older
        used = await what_the_run_used(client, run.json()["id"])
        assert used == (newer, "v2", "reference of v2")

        later = await client.post("/v1/runs/", data={"agent_id": follows, "input": "Hi."})
        assert later.status_code == 201, later.text
        assert await what_the_run_used(client, later.json()["id"]) == (
            older,
            "v1",
            "reference of v1",
        )
