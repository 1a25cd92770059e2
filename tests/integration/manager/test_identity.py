"""Every manager has a stable id (issue 28, part 2): ``SANDBOX__MANAGER_ID``, by default its
host name and port; it names the manager in its claims, and /healthz and the metrics show it."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("configured", [None, "manager-east-1"])
async def test_a_manager_says_its_id(tmp_path: Path, configured: str | None) -> None:
    sandbox: dict[str, object] = {"manager_token": SecretStr("t" * 16)}
    if configured is not None:
        sandbox["manager_id"] = configured
    settings = Settings(_env_file=None, sandbox=sandbox)
    store = LocalArtifactStore(tmp_path / "store")
    async with Manager.serving(settings, store=store) as manager:
        async with httpx.AsyncClient() as client:
            health = (await client.get(f"{manager.url}/healthz")).json()
        expected = configured or f"{socket.gethostname()}:{settings.sandbox.port}"
        info = await manager.metric("skillweave_manager_info", manager_id=expected)

    assert health["manager_id"] == expected
    assert info == 1


async def test_a_manager_refuses_a_run_for_another_store(tmp_path: Path) -> None:
    """/healthz names the manager's store and script limit (what workers compare); a request
    from a process on another store is refused before anything is looked up."""
    settings = Settings(
        _env_file=None, sandbox={"manager_token": SecretStr("t" * 16), "timeout_seconds": 42}
    )
    store = LocalArtifactStore(tmp_path / "store")
    own = await store_identity(store)
    request = {
        "execution_id": "run-1/script-1",
        "run_id": "run-1",
        "skill": "absent",
        "version": "0" * 64,
        "script": "x.py",
    }
    async with Manager.serving(settings, store=store) as manager:
        headers = {"Authorization": f"Bearer {'t' * 16}"}
        async with httpx.AsyncClient(base_url=manager.url, headers=headers) as client:
            health = (await client.get("/healthz")).json()
            foreign = await client.post(
                "/sandbox/execute", json={**request, "store_id": "0123456789abcdef"}
            )
            ours = await client.post("/sandbox/execute", json={**request, "store_id": own})

    assert health["store_id"] == own
    assert health["script_timeout_seconds"] == 42
    assert foreign.status_code == 409
    assert f"works on the store {own}, the caller on 0123456789abcdef" in foreign.json()["detail"]
    assert ours.status_code == 404  # past the check: the skill is not published
