"""A direct-engine run in flight when its API stops is not shown running for ever: the next
API on the same store marks it ``failed``, its reason saying it was lost with the restart and
what to use instead, in ``GET /v1/runs/{id}``, the listing, and ``skillweave runs show`` /
``runs list`` through ``SKILLWEAVE_API_URL`` (the CLI as a subprocess). A run that ended before
the restart keeps how it ended.

Each API is the real app on loopback over a ``DirectEngine`` whose scripted model thinks for a
minute; no script runs, so the sandbox client points at nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
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
from skillweave.api.run_records import LOST_REASON
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.config import ModelSettings, Settings
from skillweave.engines import AgentServices, DirectEngine
from skillweave.llm.factory import ModelProviders
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.api.test_runs import make_agent

pytestmark = pytest.mark.timeout(120)

TOKEN = "restart-token"
SKILLWEAVE = str(Path(sys.executable).with_name("skillweave"))
SLOW = """
turns:
  - delay_seconds: 60
    say: "Too late."
"""
QUICK = 'turns:\n  - say: "Done."\n'


@asynccontextmanager
async def api(
    store: LocalArtifactStore, scripts: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, DirectEngine]]:
    """The runs API on a direct engine over `store`; agents name their scripted model in
    `scripts` (``scripted:slow.yaml``…)."""
    for name, script in (("slow.yaml", SLOW), ("quick.yaml", QUICK)):
        (scripts / name).write_text(script, encoding="utf-8")
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        model=ModelSettings(provider="scripted", name="quick.yaml", scripts_dir=scripts),
    )
    async with AsyncExitStack() as stack:
        sandbox = SandboxClient("http://127.0.0.1:9", token="unused")
        stack.push_async_callback(sandbox.aclose)
        models = ModelProviders(settings.model)
        stack.push_async_callback(models.aclose)
        services = AgentServices(
            settings=settings,
            registry=SkillRegistry.from_scan(SkillScanner([]).scan()),
            store=store,
            provider=None,
            model=None,
            sandbox=sandbox,
            models=models,
        )
        engine = DirectEngine(services)
        app = create_api(
            settings,
            store=store,
            routers=[agents_router, runs_router],
            on_startup=[open_agents, open_runs(engine)],
        )
        server = await stack.enter_async_context(LoopbackServer(app))
        client = await stack.enter_async_context(
            httpx.AsyncClient(
                base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
            )
        )
        yield client, engine


async def cli(url: str, *args: str) -> tuple[int, str, str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SKILLWEAVE_", "WORKFLOW__"))},
        "SKILLWEAVE_API_URL": url,
        "SKILLWEAVE_API_TOKEN": TOKEN,
    }
    process = await asyncio.create_subprocess_exec(
        SKILLWEAVE,
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode(), err.decode()


async def test_a_run_in_flight_when_the_api_restarts_is_marked_lost(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    async with api(store, scripts) as (client, _):
        agent_id = await make_agent(client, name="quick", model_id="scripted:quick.yaml")
        done = (await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Hi."})).json()

        async def ended() -> bool:
            return (await client.get(f"/v1/runs/{done['id']}")).json()["status"] == "completed"

        for _ in range(200):
            if await ended():
                break
            await asyncio.sleep(0.05)
        assert await ended()
    async with api(store, scripts) as (client, engine):
        agent_id = await make_agent(client, name="slow", model_id="scripted:slow.yaml")
        started = await client.post("/v1/runs/", data={"agent_id": agent_id, "input": "Think."})
        assert started.status_code == 201, started.text
        run_id = started.json()["id"]
        assert (await client.get(f"/v1/runs/{run_id}")).json()["status"] == "running"
    # The app has stopped (its watchers with it); the "process" dies: its run goes with it,
    # its record is not touched.
    await engine.cancel(run_id)

    async with api(store, scripts) as (client, _):
        record = (await client.get(f"/v1/runs/{run_id}")).json()
        assert record["status"] == "failed"
        assert record["result"]["status"] == "failed"
        assert record["result"]["reason"] == LOST_REASON
        assert record["result"]["reason"].startswith("lost: the API restarted while it ran")
        assert "use the temporal engine" in record["result"]["reason"]
        # The run that ended before the restart keeps how it ended.
        assert (await client.get(f"/v1/runs/{done['id']}")).json()["status"] == "completed"
        page = (await client.get("/v1/runs/")).json()
        assert {item["id"]: item["status"] for item in page["items"]} == {
            run_id: "failed",
            done["id"]: "completed",
        }
        cancel = await client.post(f"/v1/runs/{run_id}/cancel")
        assert cancel.status_code == 409  # it has ended

        url = str(client.base_url).rstrip("/")
        code, out, err = await cli(url, "runs", "show", run_id)
        assert code == 0, err
        shown = " ".join(out.split())
        assert f"run {run_id}" in shown
        assert "failed: lost: the API restarted while it ran" in shown
        assert "no live status" in err  # the direct engine keeps no status view
        code, out, err = await cli(url, "runs", "list", "--json")
        assert code == 0, err
        assert {row["id"]: row["status"] for row in json.loads(out)}[run_id] == "failed"
        code, out, err = await cli(url, "runs", "list", "--phase", "failed", "--json")
        assert code == 0, err
        assert [row["id"] for row in json.loads(out)] == [run_id]
