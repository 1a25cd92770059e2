"""``POST /v1/skills/{name}/rollback`` with ``"gate": true`` over real HTTP, its batch on the
API's direct engine (the scripted model, a fake sandbox): a version whose evals keep the
current one's pass rate is made current, one that loses it is refused (409, both pass rates
and the report in its detail) and stays stored, not current; gate options are checked."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import skill_evals, skill_versions, skills
from skillweave.api.app import create_api
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.skills import Admissions, SkillRegistry, build_package
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox
from tests.conftest import write_skill

TOKEN = "gate-token"
EVALS = json.dumps(
    {
        "evals": [
            {
                "id": 1,
                "prompt": "Greet me",
                "checks": [{"type": "answer_contains", "text": "hello"}],
            }
        ]
    }
)
PLAYBOOK = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: greeter}}]
  - say: "{{last_result}}"
"""


@dataclass
class Api:
    client: httpx.AsyncClient
    store: LocalArtifactStore
    versions: dict[str, str]


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        skills={"dirs": [str(tmp_path / "library")], "uploaded_dir": str(tmp_path / "up")},
    )
    (tmp_path / "library").mkdir()
    store = LocalArtifactStore(tmp_path / "store")
    versions = {}
    for word in ("hello", "goodbye"):  # goodbye is current
        folder = write_skill(
            tmp_path / word / "greeter",
            description="Greets people. Use when someone asks to be greeted.",
            body=f"# Greeter\n\nAlways answer: {word}.\n",
            files={"evals/evals.json": EVALS},
        )
        admissions = Admissions(settings.skills, store)
        record = await StoredSkills(store).add_package(
            build_package(folder), check=admissions.check
        )
        await admissions.keep("greeter")
        versions[word] = record.latest
    services = AgentServices(
        settings=settings,
        registry=SkillRegistry({}),
        store=store,
        provider=ScriptedProvider.from_yaml(PLAYBOOK),
        model="scripted",
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )
    engine = DirectEngine(services)
    app = create_api(
        settings,
        store=store,
        routers=[skills.router, skill_versions.router, skill_evals.router],
        on_startup=[skills.open_skills, skill_evals.open_evals(engine)],
    )
    async with LoopbackServer(app) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=120) as client:
            yield Api(client, store, versions)


async def _current(api: Api) -> str:
    record = await StoredSkills(api.store).get("greeter")
    assert record is not None
    return record.latest


async def test_a_gated_rollback_passes_then_a_worse_one_is_refused(api: Api) -> None:
    back = await api.client.post("/v1/skills/greeter/rollback", json={"gate": True})
    assert back.status_code == 200, back.text
    assert back.json()["version"] == api.versions["hello"]
    assert await _current(api) == api.versions["hello"]

    worse = api.versions["goodbye"]
    refused = await api.client.post(
        "/v1/skills/greeter/rollback", json={"version": worse[:12], "gate": True}
    )

    assert refused.status_code == 409, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    detail = refused.json()["detail"]
    assert f"greeter {worse[:12]} was not made current: its evals pass 0%" in detail
    assert "against 100% with the current" in detail
    assert "report: evals/greeter/eval-" in detail
    assert await _current(api) == api.versions["hello"]


async def test_a_tolerance_lets_it_through(api: Api) -> None:
    await api.client.post("/v1/skills/greeter/rollback", json={})  # hello current, ungated
    worse = api.versions["goodbye"]
    answer = await api.client.post(
        "/v1/skills/greeter/rollback",
        json={"version": worse, "gate": True, "gate_tolerance": 1.0},
    )
    assert answer.status_code == 200, answer.text
    assert await _current(api) == worse


async def test_gate_options_are_checked(api: Api) -> None:
    unknown = await api.client.post(
        "/v1/skills/greeter/rollback", json={"gate": True, "model": "nope:nothing"}
    )
    assert unknown.status_code == 422, unknown.text
    bad = await api.client.post(
        "/v1/skills/greeter/rollback", json={"gate": True, "gate_tolerance": 2}
    )
    assert bad.status_code == 422
    assert await _current(api) == api.versions["goodbye"]  # nothing changed
