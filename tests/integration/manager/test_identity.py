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
