"""An API agent's ``name@VERSION`` skill ids (issue 45, part 4), over real HTTP on the direct
engine with a real manager and sandboxes: a run of an agent that pins the newer version keeps
it while the skill is rolled back under it (``POST /v1/skills/{name}/rollback``); the next run
of an unpinned agent gets the older version, the pinned agent's still the newer; a pin the
store cannot satisfy is refused when the agent is made."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
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
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.skills import SkillRegistry
from skillweave.storage.local import LocalArtifactStore
from tests.api.test_runs import (
    PINNED_RUN,
    greeter_package,
    make_agent,
    upload_greeter,
    what_the_run_used,
)
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(180)

TOKEN = "pins-test-token"
WAITING_RUN = PINNED_RUN.replace("delay_seconds: 1.5", "delay_seconds: 4")


@asynccontextmanager
async def api_with_versions(tmp_path: Path, script: str) -> AsyncIterator[httpx.AsyncClient]:
    manager_token = secrets.token_urlsafe(16)
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        sandbox={"manager_token": SecretStr(manager_token), "pool_target": 1, "pool_max": 4},
        skills={"dirs": [], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    store = LocalArtifactStore(tmp_path / "store")
    registry = SkillRegistry({})
    async with AsyncExitStack() as stack:
        manager = await stack.enter_async_context(
            Manager.serving(settings, store=store, registry=registry, publish=True)
        )
        services = AgentServices(
            settings=settings,
            registry=registry,
            store=store,
            provider=ScriptedProvider.from_yaml(script),
            model="scripted",
            sandbox=manager.client,
        )
        app = create_api(
            settings,
            store=store,
            routers=[skills_router, versions_router, agents_router, runs_router],
            on_startup=[
                open_skills,
                serve_uploaded_skills(services),
                open_agents,
                open_runs(DirectEngine(services)),
            ],
        )
        server = await stack.enter_async_context(LoopbackServer(app))
        yield await stack.enter_async_context(
            httpx.AsyncClient(
                base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
            )
        )


async def start(client: httpx.AsyncClient, agent_id: str) -> dict[str, object]:
    started = await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})
    assert started.status_code == 201, started.text
    return started.json()


async def test_a_pinned_run_keeps_its_version_through_a_rollback(tmp_path: Path) -> None:
    async with api_with_versions(tmp_path, WAITING_RUN) as client:
        older = await upload_greeter(client, greeter_package(tmp_path, "v1"))
        newer = await upload_greeter(client, greeter_package(tmp_path, "v2"))
        pinned = await make_agent(client, name="pinned", skill_ids=[f"greeter@{newer[:10]}"])
        follows = await make_agent(client, name="follows", skill_ids=["greeter"])

        running = await start(client, pinned)
        assert running["skills"] == [{"name": "greeter", "version": newer, "parent": None}]
        rolled = await client.post("/v1/skills/greeter/rollback")  # while the model thinks
        assert rolled.status_code == 200, rolled.text
        assert (rolled.json()["previous"], rolled.json()["version"]) == (newer, older)
        assert await what_the_run_used(client, str(running["id"])) == (
            newer,
            "v2",
            "reference of v2",
        )

        after = await start(client, follows)
        assert await what_the_run_used(client, str(after["id"])) == (
            older,
            "v1",
            "reference of v1",
        )
        again = await start(client, pinned)
        assert await what_the_run_used(client, str(again["id"])) == (
            newer,
            "v2",
            "reference of v2",
        )


async def test_a_pin_the_store_cannot_satisfy_is_refused(tmp_path: Path) -> None:
    async with api_with_versions(tmp_path, WAITING_RUN) as client:
        newer = await upload_greeter(client, greeter_package(tmp_path, "v1"))
        for ids, status, says in (
            (["greeter@deadbeef"], 422, "unknown skill ids: greeter@deadbeef"),
            (["ghost@deadbeef"], 422, "unknown skill ids: ghost@deadbeef"),
            (["greeter@xyz"], 422, "is not a valid version"),
        ):
            made = await client.post(
                "/v1/agents/", json={"name": "a", "instruction": "x", "skill_ids": ids}
            )
            assert made.status_code == status, made.text
            assert says in made.text
        agent = await make_agent(client, skill_ids=[f"greeter@{newer}"])
        assert (await client.patch("/v1/skills/greeter", json={"enabled": False})).is_success
        refused = await client.post("/v1/runs/", data={"agent_id": agent, "input": "Hi."})
        assert refused.status_code == 409
        assert "disabled" in refused.json()["detail"]
