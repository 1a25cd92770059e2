"""The API's door to installs an agent asks for (issue 45, part 3), on both engines: an agent
stored over the API (``POST /v1/agents/`` with ``acquisition`` on) runs from
``POST /v1/runs/``; its (scripted) model searches its library, finds a skill in a registry of
a local git repository and asks for it; the test reads the request (origin, version, scan,
signature) in its event and, on Temporal, in ``GET /v1/runs/{id}/status``, and approves it with
``POST /v1/runs/{id}/approvals``; the skill is installed, activated and its script runs in a
sandbox, its output in the run's answer. Real HTTP, store, manager, sandboxes; Temporal
through the dev server and a worker of its own.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.api.skills import open_skills, serve_uploaded_skills
from skillweave.api.skills import router as skills_router
from skillweave.config import ModelSettings, Settings
from skillweave.skills.stored import StoredSkills
from tests.api.test_runs import sse
from tests.engines.registry_skills import LABEL
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, EngineKind, Stack, open_engine
from tests.integration.temporal.test_acquisition import (
    asking,
    install_records,
    registry_of,
    with_registry,
)

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(180)]

TOKEN = "api-acquisition-token"


@contextlib.asynccontextmanager
async def api_client(
    kind: EngineKind,
    stack: Stack,
    script: str,
    *,
    skill_dirs: list[Path],
    registries: dict[str, object],
    tmp_path: Path,
) -> AsyncIterator[httpx.AsyncClient]:
    """The API (skills, agents, runs) over an engine of `kind` whose model replays `script`;
    the API and the engine both read `registries` as their SKILLS__REGISTRIES."""
    async with open_engine(kind, with_registry(stack, registries), script) as harness:
        assert harness.services is not None
        settings = Settings(
            _env_file=None,
            api={"token": SecretStr(TOKEN)},
            model=ModelSettings(provider="scripted", name="harness.yaml"),
            skills={
                "dirs": [str(d) for d in skill_dirs],
                "uploaded_dir": str(tmp_path / "uploaded"),
                **registries,
            },
        )
        app = create_api(
            settings,
            store=stack.store,
            routers=[skills_router, agents_router, runs_router],
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


async def test_an_agent_stored_over_the_api_asks_for_a_registry_skill_and_uses_it(
    engine_kind: EngineKind, stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    name = f"tally-api-{engine_kind}-{uuid.uuid4().hex[:6]}"
    registries, _ = registry_of(tmp_path, name)
    async with api_client(
        engine_kind,
        stack,
        asking(name, approved=True),
        skill_dirs=skill_dirs,
        registries=registries,
        tmp_path=tmp_path,
    ) as api:
        made = await api.post(
            "/v1/agents/",
            json={
                "name": f"asker {name}",
                "instruction": "Use a skill for every task; ask for one you lack.",
                "skill_ids": [TOOLS],  # its pins do not name the registry skill
                "catalog_mode": "auto",
                "acquisition": {"enabled": True, "registries": [LABEL]},
            },
        )
        assert made.status_code == 201, made.text
        assert made.json()["acquisition"]["enabled"] is True
        started = await api.post(
            "/v1/runs/",
            data={"agent_id": made.json()["id"], "input": "How many words is 'one two three'?"},
        )
        assert started.status_code == 201, started.text
        run_id = started.json()["id"]

        version = await _read_the_request(api, run_id, name, engine_kind)

        decided = await api.post(
            f"/v1/runs/{run_id}/approvals", json={"approved": True, "note": "looks fine"}
        )
        assert decided.status_code < 300, decided.text
        events = await sse(api, f"/v1/runs/{run_id}/events")
        run = (await api.get(f"/v1/runs/{run_id}")).json()

    assert events[-1]["data"]["status"] == "completed", events[-1]
    assert "tally: 3" in run["result"]["answer"]
    [installed] = [e["data"] for e in events if e["event"] == "skill_installed"]
    assert installed["status"] == "installed"
    assert installed["version"].startswith(version)
    assert [e["data"]["skill"] for e in events if e["event"] == "skill_activated"] == [name]
    assert [e["data"]["status"] for e in events if e["event"] == "script_ran"] == ["succeeded"]
    stored = await StoredSkills(stack.store).get(name)
    assert stored is not None
    assert stored.latest == installed["version"]
    assert await install_records(stack.store, name) == ["install"]


async def _read_the_request(
    api: httpx.AsyncClient, run_id: str, name: str, kind: EngineKind
) -> str:
    """The version of `name` the run asks to install (its first 12 hex digits, at least), read
    as its approver reads it, with the origin, scan and signature: in the run's
    ``approval_requested`` event, and on Temporal in ``GET /v1/runs/{id}/status`` (the direct
    engine keeps no status)."""
    events = await sse(
        api,
        f"/v1/runs/{run_id}/events",
        until=lambda e: e["event"] in ("approval_requested", "run_finished"),
    )
    said = events[-1]["data"]["detail"]
    assert events[-1]["event"] == "approval_requested", said
    assert f"install the skill {name} version " in said
    assert f"from {LABEL} (" in said
    assert "scan: " in said
    assert "signature: unsigned" in said
    shown = re.search(r"version ([0-9a-f]{12,64}) ", said)
    assert shown is not None, said
    if kind == "direct":
        return shown.group(1)

    async def asked() -> dict[str, Any] | None:
        status = await api.get(f"/v1/runs/{run_id}/status")
        assert status.status_code == 200, status.text
        return status.json()["awaiting_approval"]

    waiting = await eventually(asked, timeout=60, what="the install waiting for approval")
    assert (waiting["action"], waiting["skill"]) == ("install", name)
    origin = waiting["origin"]
    assert (origin["registry"], origin["path"]) == (LABEL, f"skills/{name}")
    assert origin["commit"]
    assert waiting["version"].startswith(shown.group(1))
    assert len(waiting["version"]) == 64
    assert waiting["report"]  # the scan, for the approver
    assert waiting["decision"] in ("clean", "warn")
    assert waiting["signature"] == "unsigned"
    return waiting["version"]
