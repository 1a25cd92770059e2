"""Every change the API makes is in the audit log, recorded before it is made: while the log
cannot be written, each is refused with 503 ``audit_unavailable`` (Retry-After, one line naming
the cause) and nothing is changed; once it can, the same requests go through and the log
verifies (issue 42, item 2). Served over real HTTP on a loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api, network, skills
from skillweave.config import Settings
from skillweave.sandbox.problems import PROBLEM_JSON, ProblemCode
from skillweave.skills import build_package
from skillweave.storage.audit import AuditLog
from tests.conftest import write_skill
from tests.skills.failing_audit import AuditWritesFail, everything_but_the_log

DECLARES = 'metadata:\n  network:\n    "api.example.com:443": reads the figures'
HELD = Path(__file__).parents[1] / "data" / "scan" / "malicious" / "hosts-manager"


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: The {name} skill. Use it to test.\n---\n# Do\n"


@dataclass
class Served:
    client: httpx.AsyncClient
    store: AuditWritesFail
    sources: Path


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    library = tmp_path / "library"
    write_skill(library / "sales", description="Sales. Use for sales.", extra=DECLARES)
    write_skill(library / "billing", description="Billing. Use for bills.", extra=DECLARES)
    sources = tmp_path / "sources"
    write_skill(sources / "installed-tool", description="A tool. Use it to test installs.")
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr("t")},
        skills={
            "dirs": [str(library)],
            "uploaded_dir": str(tmp_path / "uploaded"),
            "install_sources": [f"{sources}/*"],
        },
    )
    store = AuditWritesFail(tmp_path / "store")
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
        yield Served(client, store, sources)


def zipped(folder: Path) -> dict[str, tuple[str, bytes, str]]:
    return {"file": ("skill.zip", build_package(folder), "application/zip")}


async def test_while_the_log_cannot_be_written_every_change_is_refused_and_none_made(
    served: Served, tmp_path: Path
) -> None:
    client, store = served.client, served.store
    # Before: an upload to switch and delete, one held for approval, an approved network.
    kept = await client.post(
        "/v1/skills/", json={"name": "kept", "description": "Kept.", "content": skill_md("kept")}
    )
    assert kept.status_code == 201, kept.text
    held = await client.post("/v1/skills/upload", files=zipped(HELD))
    assert held.status_code == 201, held.text
    assert held.json()["held"] is True
    approved = await client.put(
        "/v1/skills/sales/network", json={"destinations": ["api.example.com:443"]}
    )
    assert approved.status_code == 200, approved.text
    other = write_skill(tmp_path / "zips" / "zipped", description="Zipped. Use it to test.")

    store.failing = True
    before = await everything_but_the_log(store)
    records = [r async for r in AuditLog(store).read()]
    attempts = {
        "upload as text": client.post(
            "/v1/skills/",
            json={"name": "fresh", "description": "Fresh.", "content": skill_md("fresh")},
        ),
        "upload as ZIP": client.post("/v1/skills/upload", files=zipped(other)),
        "install": client.post(
            "/v1/skills/install", json={"source": str(served.sources / "installed-tool")}
        ),
        "disable": client.patch("/v1/skills/kept", json={"enabled": False}),
        "approve (enable a held skill)": client.patch(
            "/v1/skills/hosts-manager", json={"enabled": True}
        ),
        "delete": client.delete("/v1/skills/kept"),
        "approve a network": client.put(
            "/v1/skills/billing/network", json={"destinations": ["api.example.com:443"]}
        ),
        "withdraw a network": client.delete("/v1/skills/sales/network"),
    }
    for what, request in attempts.items():
        answer = await request
        assert answer.status_code == 503, f"{what}: {answer.status_code} {answer.text}"
        assert answer.headers["content-type"] == PROBLEM_JSON, what
        assert answer.headers["retry-after"] == "2", what
        problem = answer.json()
        assert problem["type"] == ProblemCode.AUDIT_UNAVAILABLE.type, what
        assert problem["error"] == "audit_unavailable", what
        assert problem["retry_after"] == 2, what
        assert problem["detail"] == (
            "the audit log cannot record this change (the artifact store answered SlowDown),"
            " so nothing was changed; try again in 2 s, or once the store takes writes again"
        ), what
    assert store.refused >= len(attempts)
    assert await everything_but_the_log(store) == before  # nothing changed
    assert [r async for r in AuditLog(store).read()] == records  # nothing recorded
    listed = {s["name"]: s for s in (await client.get("/v1/skills/")).json()["items"]}
    assert {"fresh", "zipped", "installed-tool"}.isdisjoint(listed)
    assert (listed["kept"]["enabled"], listed["hosts-manager"]["enabled"]) == (True, False)

    # Once the log can be written, the same changes go through, recorded, and the log verifies.
    store.failing = False
    assert (await client.patch("/v1/skills/hosts-manager", json={"enabled": True})).is_success
    assert (await client.delete("/v1/skills/kept")).status_code == 204
    assert (await client.delete("/v1/skills/sales/network")).status_code == 204
    after = [(r.event, r.skill) async for r in AuditLog(store).read()]
    assert after[len(records) :] == [
        ("enable", "hosts-manager"),
        ("remove", "kept"),
        ("network_approval", "sales"),
    ]
    report = await AuditLog(store).verify()
    assert not report.problems, report.problems


async def test_the_api_anchors_its_last_records_when_it_stops(tmp_path: Path) -> None:
    """Records written less than a checkpoint interval apart are anchored only when the API
    stops (its lifespan closes the log): then ``verify`` finds none unanchored."""
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr("t")},
        skills={"dirs": [str(tmp_path / "none")], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    store = AuditWritesFail(tmp_path / "store")
    app = create_api(
        settings, store=store, routers=[skills.router], on_startup=[skills.open_skills]
    )
    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(base_url=server.url, headers={"Authorization": "Bearer t"}) as client,
    ):
        body = {"name": "kept", "description": "Kept.", "content": skill_md("kept")}
        assert (await client.post("/v1/skills/", json=body)).status_code == 201
        assert (await client.patch("/v1/skills/kept", json={"enabled": False})).is_success
        assert (await AuditLog(store).verify()).unanchored > 0  # written within a second
    report = await AuditLog(store).verify()
    assert (report.records, report.unanchored, report.problems) == (4, 0, ())
