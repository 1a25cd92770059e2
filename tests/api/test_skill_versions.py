"""``GET /v1/skills/{name}/versions`` and ``POST /v1/skills/{name}/rollback`` over real HTTP
(issue 45, part 4): every version listed with who uploaded it (the API's actor), a rollback
made and audited with the API's actor, and each refusal a problem+json answer that changes
nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import skill_versions, skills
from skillweave.api.app import create_api
from skillweave.config import Settings
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.api.conftest import DIRECTORY_SKILL, TOKEN, Api, _settings
from tests.skills.failing_audit import AuditWritesFail

DESCRIPTION = "Greets people. Use when someone says hello."


def skill_md(word: str) -> str:
    return f"---\nname: greet\ndescription: {DESCRIPTION}\n---\n# Hello\n\nSay {word}.\n"


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    store = AuditWritesFail(tmp_path / "store")
    settings = _settings(tmp_path)
    app = create_api(
        settings,
        store=store,
        routers=[skills.router, skill_versions.router],
        on_startup=[skills.open_skills],
    )
    async with LoopbackServer(app) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers) as client:
            yield Api(client, server.url, store)


async def two_versions(api: Api) -> tuple[str, str]:
    found = []
    for word in ("hi", "hello"):
        body = {"name": "greet", "description": DESCRIPTION, "content": skill_md(word)}
        answer = await api.client.post("/v1/skills/", json=body)
        assert answer.status_code == 201, answer.text
        found.append(answer.json()["latest"])
    return found[0], found[1]


async def test_versions_are_listed_newest_first_with_the_apis_actor(api: Api) -> None:
    older, newer = await two_versions(api)
    answer = await api.client.get("/v1/skills/greet/versions")
    assert answer.status_code == 200, answer.text
    listed = answer.json()
    assert (listed["name"], listed["kind"], listed["current"]) == ("greet", "uploaded", newer)
    assert [v["version"] for v in listed["versions"]] == [newer, older]
    assert [v["current"] for v in listed["versions"]] == [True, False]
    assert all(v["actor"].startswith("api@") for v in listed["versions"])
    assert all(v["scan"]["summary"] == "no findings" for v in listed["versions"])
    assert all(v["signature"]["status"] == "unsigned" for v in listed["versions"])

    directory = (await api.client.get(f"/v1/skills/{DIRECTORY_SKILL}/versions")).json()
    assert (directory["kind"], directory["rollback"], len(directory["versions"])) == (
        "directory",
        False,
        1,
    )
    assert directory["folder"].endswith(DIRECTORY_SKILL)
    missing = await api.client.get("/v1/skills/ghost/versions")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"


async def test_a_rollback_is_made_audited_and_seen_by_the_library(api: Api) -> None:
    older, newer = await two_versions(api)
    answer = await api.client.post("/v1/skills/greet/rollback")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "name": "greet",
        "previous": newer,
        "version": older,
        "changed": True,
        "enabled": True,
        "held": False,
    }
    detail = (await api.client.get("/v1/skills/greet")).json()
    assert detail["version"] == older
    [record] = [r async for r in AuditLog(api.store).read(event="rollback")]
    assert record.actor is not None
    assert record.actor.startswith("api@")
    assert (record.details["from"], record.details["to"]) == (newer, older)

    same = await api.client.post("/v1/skills/greet/rollback", json={"version": older[:8]})
    assert same.status_code == 200
    assert same.json()["changed"] is False
    back = await api.client.post("/v1/skills/greet/rollback", json={"version": newer.upper()})
    assert back.json()["version"] == newer


async def test_each_refusal_is_a_problem_and_changes_nothing(api: Api) -> None:
    older, newer = await two_versions(api)
    cases = [
        ("greet", {"version": "deadbeef"}, 404, f"its versions: {newer[:12]}, {older[:12]}"),
        ("greet", {"version": "abc"}, 422, "string should have at least"),
        ("greet", {"version": "zzzzzzzz"}, 422, "is not a valid version"),
        ("ghost", None, 404, "ghost"),
        (DIRECTORY_SKILL, None, 409, "versioned by its folder"),
    ]
    for name, body, status, says in cases:
        answer = await api.client.post(f"/v1/skills/{name}/rollback", json=body)
        assert answer.status_code == status, (name, body, answer.text)
        assert answer.headers["content-type"] == "application/problem+json"
        assert says.lower() in answer.text.lower(), answer.text
    assert isinstance(api.store, AuditWritesFail)
    api.store.failing = True
    refused = await api.client.post("/v1/skills/greet/rollback")
    assert refused.status_code == 503
    assert refused.json()["error"] == "audit_unavailable"
    api.store.failing = False
    assert (await api.client.get("/v1/skills/greet")).json()["version"] == newer


async def test_a_version_todays_trust_policy_refuses_is_refused(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    settings = _settings(tmp_path)
    app = create_api(
        settings,
        store=store,
        routers=[skills.router, skill_versions.router],
        on_startup=[skills.open_skills],
    )
    async with LoopbackServer(app) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers) as client:
            older, _ = await two_versions(Api(client, server.url, store))
    refusing = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        skills={**settings.skills.model_dump(mode="json"), "trust": {"unsigned": "refuse"}},
    )
    app = create_api(
        refusing,
        store=store,
        routers=[skills.router, skill_versions.router],
        on_startup=[skills.open_skills],
    )
    async with LoopbackServer(app) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers) as client:
            answer = await client.post("/v1/skills/greet/rollback", json={"version": older})
    assert answer.status_code == 403, answer.text
    assert "not signed" in answer.json()["detail"]
