"""``/v1/agents`` over real HTTP: create, read, list, change, delete; unknown skills refused
with nothing stored; the token everywhere but /healthz; problem+json errors."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.skills import open_skills
from skillweave.config import Settings
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

TOKEN = "agents-test-token"


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, LocalArtifactStore]]:
    library = tmp_path / "skills"
    write_skill(library / "csv-tools", description="Profile CSV files.")
    write_skill(library / "unit-converter", description="Convert units.")
    write_skill(library / "web_scraper", description="Scrape pages.")  # a Lazy-Skills name
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN), "max_json_bytes": 4096},
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded")},
        model={
            "provider": "openai",
            "name": "gpt-4o-mini",
            "api_key": SecretStr("sk-test-key"),
            "profiles": {
                "local": {"provider": "openai", "name": "qwen", "base_url": LOCAL_URL},
                "claude": {"provider": "anthropic", "name": "claude-sonnet-4-5"},
            },
        },
    )
    store = LocalArtifactStore(tmp_path / "store")

    app = create_api(
        settings, store=store, routers=[agents_router], on_startup=[open_skills, open_agents]
    )
    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}
        ) as client,
    ):
        yield client, store


LOCAL_URL = "http://127.0.0.1:9/v1"

AGENT = {
    "name": "analyst",
    "instruction": "Profile the user's data.",
    "model_id": "openai:gpt-4o-mini",
    "skill_ids": ["csv-tools", "unit-converter"],
    "catalog_mode": "auto",
    "limits": {"max_turns": 12},
}


def _is_problem(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert body["title"]
    return body


async def test_an_agent_is_made_read_listed_changed_and_deleted(api) -> None:
    client, store = api
    made = await client.post("/v1/agents/", json=AGENT)
    assert made.status_code == 201, made.text
    agent = made.json()
    assert agent["id"].startswith("ag-")
    assert agent["skill_ids"] == ["csv-tools", "unit-converter"]
    assert agent["limits"]["max_turns"] == 12
    assert await store.stat(keys.agent_key(agent["id"])) is not None

    assert (await client.get(f"/v1/agents/{agent['id']}")).json() == agent
    page = (await client.get("/v1/agents/", params={"q": "ANAL"})).json()
    assert [a["id"] for a in page["items"]] == [agent["id"]]
    assert page["total"] == 1

    changed = await client.patch(
        f"/v1/agents/{agent['id']}", json={"skill_ids": ["csv-tools"], "model_id": None}
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["skill_ids"] == ["csv-tools"]
    assert changed.json()["model_id"] is None
    assert changed.json()["instruction"] == AGENT["instruction"]  # untouched fields stay

    assert (await client.delete(f"/v1/agents/{agent['id']}")).status_code == 204
    _is_problem(await client.get(f"/v1/agents/{agent['id']}"), 404)
    _is_problem(await client.delete(f"/v1/agents/{agent['id']}"), 404)
    assert await store.list(keys.AGENTS_PREFIX) == []


async def test_skills_named_as_other_clients_name_them_can_be_given(api) -> None:
    client, _ = api
    made = await client.post("/v1/agents/", json={**AGENT, "skill_ids": ["web_scraper"]})
    assert made.status_code == 201, made.text
    assert made.json()["skill_ids"] == ["web_scraper"]


async def test_unknown_skill_ids_are_refused_by_name_and_nothing_is_stored(api) -> None:
    client, store = api
    body = _is_problem(
        await client.post(
            "/v1/agents/", json={**AGENT, "skill_ids": ["csv-tools", "no-such", "nor-this"]}
        ),
        422,
    )
    assert "no-such" in body["detail"]
    assert "nor-this" in body["detail"]
    assert await store.list(keys.AGENTS_PREFIX) == []
    made = (await client.post("/v1/agents/", json=AGENT)).json()
    body = _is_problem(
        await client.patch(f"/v1/agents/{made['id']}", json={"skill_ids": ["ghost"]}), 422
    )
    assert "ghost" in body["detail"]
    assert (await client.get(f"/v1/agents/{made['id']}")).json()["skill_ids"] == AGENT["skill_ids"]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"name": "   "}, "name"),
        ({"name": "tab\there"}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"instruction": ""}, "instruction"),
        ({"catalog_mode": "sometimes"}, "catalog_mode"),
        ({"limits": {"max_turns": 0}}, "max_turns"),
        ({"skill_ids": ["a/b"]}, "skill_ids"),
    ],
)
async def test_invalid_fields_are_named(api, change: dict, named: str) -> None:
    client, store = api
    body = _is_problem(await client.post("/v1/agents/", json={**AGENT, **change}), 422)
    assert named in body["detail"]
    assert await store.list(keys.AGENTS_PREFIX) == []


async def test_names_are_unique_and_nulls_cannot_clear_required_fields(api) -> None:
    client, _ = api
    first = (await client.post("/v1/agents/", json=AGENT)).json()
    _is_problem(await client.post("/v1/agents/", json=AGENT), 409)
    other = (await client.post("/v1/agents/", json={**AGENT, "name": "other"})).json()
    _is_problem(await client.patch(f"/v1/agents/{other['id']}", json={"name": "analyst"}), 409)
    body = _is_problem(await client.patch(f"/v1/agents/{first['id']}", json={"name": None}), 422)
    assert "name" in body["detail"]


async def test_an_oversized_body_is_413_before_it_is_read(api) -> None:
    client, store = api
    body = _is_problem(
        await client.post("/v1/agents/", json={**AGENT, "description": "x" * 5000}), 413
    )
    assert "4,096-byte limit" in body["detail"]
    assert await store.list(keys.AGENTS_PREFIX) == []


async def test_the_token_is_required_everywhere_but_health(api) -> None:
    client, _ = api
    made = (await client.post("/v1/agents/", json=AGENT)).json()
    routes = [
        ("POST", "/v1/agents/"),
        ("GET", "/v1/agents/"),
        ("GET", f"/v1/agents/{made['id']}"),
        ("PATCH", f"/v1/agents/{made['id']}"),
        ("DELETE", f"/v1/agents/{made['id']}"),
    ]
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
        async with httpx.AsyncClient(base_url=str(client.base_url), headers=headers) as anon:
            for method, url in routes:
                response = await anon.request(method, url, json=AGENT)
                _is_problem(response, 401)
                assert response.headers["www-authenticate"] == "Bearer"
            assert (await anon.get("/healthz")).json() == {"status": "ok", "ready": True}
    assert (await client.get(f"/v1/agents/{made['id']}")).status_code == 200  # still there


async def test_the_openapi_document_describes_the_routes(api) -> None:
    client, _ = api
    document = (await client.get("/openapi.json")).json()
    assert {"/v1/agents/", "/v1/agents/{agent_id}", "/healthz"} <= set(document["paths"])
    assert "401" in document["paths"]["/v1/agents/"]["post"]["responses"]


@pytest.mark.parametrize(
    ("model_id", "named"),
    [
        ("nosuch", "unknown model profile 'nosuch' (configured: claude, local)"),
        ("claude", "model profile 'claude' needs an API key: set MODEL__PROFILES__CLAUDE__API_KEY"),
        # The default's key is OpenAI's: it is not sent to Anthropic.
        ("anthropic:claude-haiku-4-5", "are not sent to anthropic"),
        ("mistral:large", "unknown provider 'mistral'"),
    ],
)
async def test_an_agent_whose_model_does_not_resolve_is_refused_naming_it(
    api: tuple[httpx.AsyncClient, LocalArtifactStore], model_id: str, named: str
) -> None:
    client, _ = api
    made = await client.post("/v1/agents/", json={**AGENT, "model_id": model_id})
    assert made.status_code == 422, made.text
    assert named in made.json()["detail"]
    assert (await client.get("/v1/agents/")).json()["total"] == 0

    good = (await client.post("/v1/agents/", json=AGENT)).json()
    changed = await client.patch(f"/v1/agents/{good['id']}", json={"model_id": model_id})
    assert changed.status_code == 422, changed.text
    assert named in changed.json()["detail"]
    assert (await client.get(f"/v1/agents/{good['id']}")).json()["model_id"] == AGENT["model_id"]


async def test_an_agent_may_name_a_profile(
    api: tuple[httpx.AsyncClient, LocalArtifactStore],
) -> None:
    client, _ = api
    made = await client.post("/v1/agents/", json={**AGENT, "model_id": "local"})
    assert made.status_code == 201, made.text
    assert made.json()["model_id"] == "local"


async def test_an_agent_sent_as_a_form_is_a_415_naming_the_header(api) -> None:
    client, _ = api
    response = await client.post(
        "/v1/agents/",
        content=json.dumps(AGENT).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    body = _is_problem(response, 415)
    assert "'Content-Type: application/json'" in body["detail"]
    assert (await client.get("/v1/agents/")).json()["items"] == []


async def test_an_agent_has_a_display_name_and_a_slug_that_stands_for_its_id(api) -> None:
    """As the platform's published examples name agents: "Data Agent"."""
    client, _ = api
    made = await client.post("/v1/agents/", json={**AGENT, "name": "Data Agent"})
    assert made.status_code == 201, made.text
    agent = made.json()
    assert agent["name"] == "Data Agent"
    assert agent["slug"] == "data-agent"
    assert agent["id"].startswith("ag-")

    by_slug = await client.get("/v1/agents/data-agent")
    assert by_slug.status_code == 200, by_slug.text
    assert by_slug.json()["id"] == agent["id"]
    assert (await client.get("/v1/agents/", params={"q": "data-ag"})).json()["total"] == 1

    # The slug is unique: a name with the same slug is taken, whatever its case or spacing.
    body = _is_problem(await client.post("/v1/agents/", json={**AGENT, "name": "data  AGENT"}), 409)
    assert "data-agent" in body["detail"]

    # A rename keeps the slug (it stands for the id); the new name's slug must be free.
    renamed = await client.patch("/v1/agents/data-agent", json={"name": "Sales Agent"})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == "Sales Agent"
    assert renamed.json()["slug"] == "data-agent"

    assert (await client.delete("/v1/agents/data-agent")).status_code == 204
    assert (await client.get(f"/v1/agents/{agent['id']}")).status_code == 404


async def test_an_agent_stored_before_slugs_gets_one_from_its_name(api) -> None:
    client, store = api
    old = {**AGENT} | {
        "name": "legacy.agent",
        "id": "ag-0123456789abcdef",
        "created_at": "2026-11-20T10:00:00Z",
        "updated_at": "2026-11-20T10:00:00Z",
    }
    await store.put_bytes(
        keys.agent_key(old["id"]), json.dumps(old).encode(), content_type="application/json"
    )
    found = await client.get("/v1/agents/legacy-agent")
    assert found.status_code == 200, found.text
    assert found.json()["id"] == old["id"]
    assert found.json()["slug"] == "legacy-agent"
