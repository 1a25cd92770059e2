"""``/v1/skills/{name}/network`` (issue 26): what a skill declares, and approving it over HTTP,
pinned to a version; only declared destinations may be approved; the settings' approval wins."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api, network, skills
from skillweave.config import Settings
from skillweave.sandbox.approvals import NetworkApprovals
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

DECLARES = 'metadata:\n  network:\n    "api.example.com:443": reads the sales figures'


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, LocalArtifactStore]]:
    library = tmp_path / "library"
    write_skill(library / "sales", description="Sales. Use for sales.", extra=DECLARES)
    write_skill(library / "pinned", description="Pinned. Use for pins.", extra=DECLARES)
    write_skill(library / "offline", description="No network. Use offline.")
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr("t")},
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded")},
        sandbox={"egress": {"approvals": {"pinned": {"destinations": ["api.example.com:443"]}}}},
    )
    store = LocalArtifactStore(tmp_path / "store")
    app = create_api(
        settings,
        store=store,
        routers=[skills.router, network.router],
        on_startup=[skills.open_skills],
    )
    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(base_url=server.url, headers={"Authorization": "Bearer t"}) as client,
    ):
        yield client, store


async def test_a_declared_destination_is_approved_pinned_and_withdrawn(served) -> None:
    client, store = served
    view = (await client.get("/v1/skills/sales/network")).json()
    assert view["declared"] == [
        {"destination": "api.example.com:443", "reason": "reads the sales figures"}
    ]
    assert view["approval"] is None

    put = await client.put(
        "/v1/skills/sales/network", json={"destinations": ["api.example.com:443"]}
    )
    assert put.status_code == 200, put.text
    assert put.json()["approved_by"] == "api"
    assert put.json()["approval"]["version"] == view["version"]  # pinned to the current one
    approval, source = await NetworkApprovals(store).of("sales")
    assert (approval is not None, source) == (True, "api")  # what the manager reads

    assert (await client.delete("/v1/skills/sales/network")).status_code == 204
    assert (await client.get("/v1/skills/sales/network")).json()["approval"] is None
    # Both are in the audit log (issue 27).
    records = [r async for r in AuditLog(store).read(event="network_approval")]
    assert [(r.skill, r.details["decision"]) for r in records] == [
        ("sales", "approved"),
        ("sales", "withdrawn"),
    ]
    assert records[0].details["destinations"] == ["api.example.com:443"]


@pytest.mark.parametrize(
    ("skill", "body", "status", "says"),
    [
        ("sales", {"destinations": ["evil.example.net:443"]}, 422, "is not among"),
        ("sales", {"destinations": ["api.example.com:80"]}, 422, "is not among"),
        ("sales", {"destinations": ["not a host"]}, 422, "not a host name"),
        ("offline", {"destinations": ["api.example.com:443"]}, 422, "is not among"),
        ("pinned", {"destinations": ["api.example.com:443"]}, 409, "in the manager's settings"),
        ("ghost", {"destinations": ["api.example.com:443"]}, 404, "no skill"),
    ],
)
async def test_what_cannot_be_approved_is_refused_and_says_why(
    served, skill: str, body: dict, status: int, says: str
) -> None:
    client, store = served
    refused = await client.put(f"/v1/skills/{skill}/network", json=body)
    assert refused.status_code == status, refused.text
    assert says in refused.json()["detail"]
    assert await store.list("catalog/network/") == []
