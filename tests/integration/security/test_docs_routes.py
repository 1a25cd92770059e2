"""The API documentation routes (issue 38): ``/openapi.json``, ``/docs``, ``/redoc`` and the
Swagger UI's ``/docs/oauth2-redirect`` need the bearer token on the control API and on the MCP
manager, unless the service's setting opens them (``API__DOCS_OPEN``,
``SANDBOX__MANAGER_DOCS_OPEN``); ``/healthz`` needs none either way, and opening the documents
opens nothing else. Both services are served for real on loopback. The sandbox executor, the
third service, serves no documentation at all: not even with its token.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final

import httpx
import pytest
import pytest_asyncio
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.app import create_api
from skillweave.config import Settings
from skillweave.storage.local import LocalArtifactStore
from tests.integration.conftest import StartExecutor
from tests.integration.harness import Manager
from tests.sandbox_executor.support import AUTH as EXECUTOR_AUTH

API_TOKEN: Final = "docs-api-token"
MANAGER_TOKEN: Final = "docs-manager-token"
DOCUMENTS: Final = ("/openapi.json", "/docs", "/redoc", "/docs/oauth2-redirect")
ASYNC = pytest.mark.asyncio(loop_scope="module")


@dataclass(frozen=True)
class Served:
    """A service on loopback: its URL, its token, and a route that is never open."""

    name: str
    url: str
    token: str
    closed: str


@pytest_asyncio.fixture(
    scope="module", loop_scope="module", params=[False, True], ids=["default", "opened"]
)
async def services(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[bool, list[Served]]]:
    """The control API and the MCP manager, with the documents closed (the default) or opened
    by their settings."""
    opened: bool = request.param
    root = tmp_path_factory.mktemp("docs")
    (root / "skills").mkdir()
    docs = {"docs_open": True} if opened else {}
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(API_TOKEN), **docs},
        sandbox={
            "manager_token": SecretStr(MANAGER_TOKEN),
            "pool_target": 0,
            **({"manager_docs_open": True} if opened else {}),
        },
        skills={"dirs": [str(root / "skills")], "uploaded_dir": str(root / "uploaded")},
    )
    store = LocalArtifactStore(root / "store")
    api = create_api(settings, store=store, routers=[agents_router], on_startup=[open_agents])
    async with (
        Manager.serving(settings, store=store) as manager,
        LoopbackServer(api) as served_api,
    ):
        yield (
            opened,
            [
                Served("api", served_api.url, API_TOKEN, "/v1/agents/"),
                Served("manager", manager.url, MANAGER_TOKEN, "/sandbox/pool"),
            ],
        )


@ASYNC
async def test_the_documents_need_the_token_unless_the_setting_opens_them(
    services: tuple[bool, list[Served]],
) -> None:
    opened, served = services
    for service in served:
        auth = {"Authorization": f"Bearer {service.token}"}
        async with httpx.AsyncClient(base_url=service.url, timeout=10) as http:
            for path in DOCUMENTS:
                anonymous = await http.get(path)
                wrong = await http.get(path, headers={"Authorization": "Bearer wrong"})
                with_token = await http.get(path, headers=auth)
                where = f"{service.name} {path}"
                assert with_token.status_code == 200, where
                for refused in (wrong, anonymous):
                    if opened:
                        assert refused.status_code == 200, where
                        assert refused.content == with_token.content, where
                    else:
                        assert refused.status_code == 401, where
                        assert refused.headers["www-authenticate"] == "Bearer", where
                        assert refused.headers["content-type"] == "application/problem+json"
                        assert b"openapi" not in refused.content.lower(), where
            document = (await http.get("/openapi.json", headers=auth)).json()
            assert service.closed in document["paths"], service.name
            # /healthz is open either way; the setting opens nothing but the documents.
            assert (await http.get("/healthz")).status_code == 200, service.name
            assert (await http.get(service.closed)).status_code == 401, service.name
            assert (await http.get("/metrics")).status_code == 401, service.name
            assert (await http.get(service.closed, headers=auth)).status_code == 200


def test_the_settings_are_off_by_default() -> None:
    settings = Settings(_env_file=None)
    assert settings.api.docs_open is False
    assert settings.sandbox.manager_docs_open is False


def test_the_settings_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("API__DOCS_OPEN", "true")
    monkeypatch.setenv("SANDBOX__MANAGER_DOCS_OPEN", "1")
    settings = Settings(_env_file=None)
    assert (settings.api.docs_open, settings.sandbox.manager_docs_open) == (True, True)


def test_the_executor_serves_no_documentation(start_executor: StartExecutor) -> None:
    executor = start_executor()
    base = f"http://127.0.0.1:{executor.port}"
    for path in DOCUMENTS:
        assert httpx.get(f"{base}{path}").status_code == 401, path
        assert httpx.get(f"{base}{path}", headers=EXECUTOR_AUTH).status_code == 404, path
    assert httpx.get(f"{base}/healthz").status_code == 200
