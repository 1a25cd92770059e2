"""``/v1/agents`` takes what an agent spec takes: ``approvals``, ``authoring`` and
``acquisition`` are made, read back, changed field by field and mapped into the run's spec; a
record stored before they existed still loads (with the spec's defaults); bad values and an
acquisition naming a registry ``SKILLS__REGISTRIES`` does not have are refused (422) with
nothing stored."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.agent import AcquisitionOptions, ApprovalOptions, AuthoringOptions
from skillweave.api import create_api
from skillweave.api.agent_store import Agent, AgentStore
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.skills import open_skills
from skillweave.config import Settings
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

TOKEN = "agent-options-token"

REGISTRIES = [
    {"kind": "index", "location": "/nowhere/team.json", "name": "team"},
    {"kind": "index", "location": "/nowhere/lab.json", "name": "lab"},
]

ASKING = {
    "name": "asker",
    "instruction": "Find what you lack.",
    "skill_ids": ["csv-tools"],
    "approvals": {"skills": ["csv-tools"], "timeout_seconds": 60},
    "authoring": {"enabled": True, "max_drafts": 2},
    "acquisition": {"enabled": True, "registries": ["lab"], "max_installs": 2, "offer": "always"},
}


def _settings(tmp_path: Path, registries: list[dict[str, str]]) -> Settings:
    library = tmp_path / "skills"
    write_skill(library / "csv-tools", description="Profile CSV files.")
    return Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        skills={
            "dirs": [str(library)],
            "uploaded_dir": str(tmp_path / "uploaded"),
            "registries": registries,
        },
    )


@pytest.fixture
async def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


async def served_agents(
    tmp_path: Path, store: LocalArtifactStore, registries: list[dict[str, str]]
) -> AsyncIterator[httpx.AsyncClient]:
    """The agents API (a library holding csv-tools; `registries` as SKILLS__REGISTRIES) on a
    loopback port, and a client with its token (``tests/cli/test_agents_create.py`` too)."""
    app = create_api(
        _settings(tmp_path, registries),
        store=store,
        routers=[agents_router],
        on_startup=[open_skills, open_agents],
    )
    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}
        ) as client,
    ):
        yield client


@pytest.fixture
async def api(tmp_path: Path, store: LocalArtifactStore) -> AsyncIterator[httpx.AsyncClient]:
    """The agents API on a server whose SKILLS__REGISTRIES labels 'team' and 'lab'."""
    async for client in served_agents(tmp_path, store, REGISTRIES):
        yield client


@pytest.fixture
async def bare_api(tmp_path: Path, store: LocalArtifactStore) -> AsyncIterator[httpx.AsyncClient]:
    """The agents API on a server with no registries."""
    async for client in served_agents(tmp_path, store, []):
        yield client


def _problem(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    return response.json()["detail"]


async def test_an_agent_takes_approvals_authoring_and_acquisition_and_its_run_gets_them(
    api: httpx.AsyncClient, store: LocalArtifactStore
) -> None:
    made = await api.post("/v1/agents/", json=ASKING)
    assert made.status_code == 201, made.text
    read = (await api.get(f"/v1/agents/{made.json()['id']}")).json()
    assert read["approvals"] == {"skills": ["csv-tools"], "timeout_seconds": 60}
    assert read["authoring"] == {"enabled": True, "max_drafts": 2}
    assert read["acquisition"] == {
        "enabled": True,
        "registries": ["lab"],
        "max_installs": 2,
        "offer": "always",
    }

    agent = await AgentStore(store).get(read["id"])
    assert agent is not None
    spec = agent.to_spec()
    assert spec.approvals == ApprovalOptions(skills=("csv-tools",), timeout_seconds=60)
    assert spec.authoring == AuthoringOptions(enabled=True, max_drafts=2)
    assert spec.acquisition == AcquisitionOptions(
        enabled=True, registries=("lab",), max_installs=2, offer="always"
    )


async def test_unset_they_are_the_specs_defaults(api: httpx.AsyncClient) -> None:
    made = await api.post("/v1/agents/", json={"name": "plain", "instruction": "Help."})
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["approvals"] == ApprovalOptions().model_dump(mode="json")
    assert body["authoring"] == {"enabled": False, "max_drafts": 5}
    assert body["acquisition"] == AcquisitionOptions().model_dump(mode="json")
    assert body["acquisition"]["enabled"] is False


async def test_a_patch_changes_only_the_fields_it_gives(api: httpx.AsyncClient) -> None:
    agent_id = (await api.post("/v1/agents/", json=ASKING)).json()["id"]
    changed = await api.patch(f"/v1/agents/{agent_id}", json={"acquisition": {"max_installs": 5}})
    assert changed.status_code == 200, changed.text
    acquisition = changed.json()["acquisition"]
    assert acquisition == {
        "enabled": True,
        "registries": ["lab"],
        "max_installs": 5,
        "offer": "always",
    }
    assert changed.json()["authoring"] == {"enabled": True, "max_drafts": 2}

    changed = await api.patch(f"/v1/agents/{agent_id}", json={"authoring": {"enabled": False}})
    assert changed.json()["authoring"] == {"enabled": False, "max_drafts": 2}
    assert changed.json()["acquisition"]["max_installs"] == 5  # untouched
    again = (await api.get(f"/v1/agents/{agent_id}")).json()
    assert again["authoring"]["enabled"] is False
    assert again["approvals"]["skills"] == ["csv-tools"]

    # The one rule for every object of an agent: limits too.
    limits = {"max_turns": 12, "max_script_runs": 4}
    await api.patch(f"/v1/agents/{agent_id}", json={"limits": limits})
    changed = await api.patch(f"/v1/agents/{agent_id}", json={"limits": {"max_turns": 3}})
    assert changed.json()["limits"]["max_turns"] == 3
    assert changed.json()["limits"]["max_script_runs"] == 4


async def test_a_record_stored_before_these_fields_still_loads(
    api: httpx.AsyncClient, store: LocalArtifactStore
) -> None:
    old = {
        "id": "ag-00000000000000aa",
        "name": "Old Agent",
        "description": "",
        "instruction": "From before.",
        "model_id": None,
        "skill_ids": ["csv-tools"],
        "catalog_mode": None,
        "limits": {},
        "follow_up_seconds": 0,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    await store.put_bytes(keys.agent_key(old["id"]), json.dumps(old).encode())
    read = await api.get(f"/v1/agents/{old['id']}")
    assert read.status_code == 200, read.text
    assert read.json()["acquisition"]["enabled"] is False
    assert read.json()["authoring"]["enabled"] is False
    spec = Agent.model_validate(old).to_spec()
    assert (spec.approvals, spec.authoring, spec.acquisition) == (
        ApprovalOptions(),
        AuthoringOptions(),
        AcquisitionOptions(),
    )
    changed = await api.patch(f"/v1/agents/{old['id']}", json={"acquisition": {"enabled": True}})
    assert changed.status_code == 200, changed.text
    assert changed.json()["acquisition"]["registries"] is None  # all of them


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("acquisition", {"enabled": True, "max_installs": 0}, "max_installs"),
        ("acquisition", {"enabled": True, "max_installs": 21}, "max_installs"),
        ("acquisition", {"offer": "sometimes"}, "offer"),
        ("acquisition", {"enabled": True, "registry": "lab"}, "registry"),
        ("authoring", {"max_drafts": 51}, "max_drafts"),
        ("authoring", {"enabled": "perhaps"}, "enabled"),
        ("approvals", {"timeout_seconds": 0}, "timeout_seconds"),
        ("approvals", {"skills": "csv-tools", "who": "me"}, "who"),
    ],
)
async def test_bad_values_are_refused_and_nothing_is_stored(
    api: httpx.AsyncClient, field: str, value: dict[str, object], named: str
) -> None:
    refused = await api.post("/v1/agents/", json={**ASKING, field: value})
    assert named in _problem(refused, 422)
    assert (await api.get("/v1/agents/")).json()["total"] == 0

    agent_id = (await api.post("/v1/agents/", json=ASKING)).json()["id"]
    before = (await api.get(f"/v1/agents/{agent_id}")).json()
    assert named in _problem(await api.patch(f"/v1/agents/{agent_id}", json={field: value}), 422)
    assert (await api.get(f"/v1/agents/{agent_id}")).json() == before


async def test_a_registry_label_the_server_lacks_is_refused_naming_the_labels_it_has(
    api: httpx.AsyncClient,
) -> None:
    asking_elsewhere = {**ASKING, "acquisition": {"enabled": True, "registries": ["lab", "acme"]}}
    detail = _problem(await api.post("/v1/agents/", json=asking_elsewhere), 422)
    assert "no registry labelled 'acme' in SKILLS__REGISTRIES" in detail
    assert "configured: 'team', 'lab'" in detail
    assert (await api.get("/v1/agents/")).json()["total"] == 0

    # Off, its registries are not searched: nothing to refuse.
    off = {**ASKING, "acquisition": {"enabled": False, "registries": ["acme"]}}
    made = await api.post("/v1/agents/", json=off)
    assert made.status_code == 201, made.text
    # Turned on by a patch, the acquisition as it would be stored is checked.
    agent_id = made.json()["id"]
    turned_on = await api.patch(f"/v1/agents/{agent_id}", json={"acquisition": {"enabled": True}})
    assert "'acme'" in _problem(turned_on, 422)
    assert (await api.get(f"/v1/agents/{agent_id}")).json()["acquisition"]["enabled"] is False
    fixed = await api.patch(
        f"/v1/agents/{agent_id}", json={"acquisition": {"enabled": True, "registries": ["team"]}}
    )
    assert fixed.status_code == 200, fixed.text
    assert fixed.json()["acquisition"]["registries"] == ["team"]


async def test_acquisition_on_a_server_with_no_registries_is_refused(
    bare_api: httpx.AsyncClient,
) -> None:
    asking_anywhere = {**ASKING, "acquisition": {"enabled": True}}
    detail = _problem(await bare_api.post("/v1/agents/", json=asking_anywhere), 422)
    assert "SKILLS__REGISTRIES lists no registry" in detail
    assert "turn acquisition off" in detail
    plain = {**ASKING, "acquisition": {"enabled": False}}
    assert (await bare_api.post("/v1/agents/", json=plain)).status_code == 201
