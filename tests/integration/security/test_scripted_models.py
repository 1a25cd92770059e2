"""A scripted model an API client names (issue 38): the API, as ``skillweave api`` composes it
(:func:`skillweave.cli.api.api_app`, direct engine, a manager of its own), served on loopback.

An agent's ``model_id: "scripted:<path>"`` is a script inside ``MODEL__SCRIPTS_DIR`` or
refused, and the refusal reads the same for a file that exists outside (``/etc/passwd``), one
that does not, a ``..`` path and a symlink leading out: a client cannot probe the server's
files with it. A script inside the folder makes an agent whose runs replay it. Without the
folder (the default) every such name is refused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.cli.api import api_app
from skillweave.config import Settings
from tests.api.test_runs import sse
from tests.integration.harness import eventually

TOKEN: Final = "scripted-models-token"
SCRIPT: Final = "model: {name}\nturns:\n  - say: answered by {name}\n"
pytestmark = pytest.mark.asyncio


@asynccontextmanager
async def served(tmp_path: Path, *, scripts_dir: Path | None) -> AsyncIterator[httpx.AsyncClient]:
    default = tmp_path / "default.yaml"
    default.write_text(SCRIPT.format(name="the-default"), encoding="utf-8")
    (tmp_path / "skills").mkdir(exist_ok=True)
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        workflow={"execution_engine": "direct"},  # the API runs its runs itself
        model={"provider": "scripted", "name": str(default), "scripts_dir": scripts_dir},
        storage={"local_dir": str(tmp_path / "store")},
        sandbox={"pool_target": 0},
        skills={"dirs": [str(tmp_path / "skills")], "uploaded_dir": str(tmp_path / "uploaded")},
    )
    async with (
        api_app(settings) as app,
        LoopbackServer(app) as server,
        httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        ) as client,
    ):
        yield client


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    """(the scripts folder with inside.yaml and a symlink out, a valid script outside it)."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "inside.yaml").write_text(SCRIPT.format(name="inside"), encoding="utf-8")
    outside = tmp_path / "outside.yaml"
    outside.write_text(SCRIPT.format(name="outside"), encoding="utf-8")
    (scripts / "link-out.yaml").symlink_to(outside)
    return scripts, outside


async def _refusals(client: httpx.AsyncClient, names: list[str]) -> dict[str, str]:
    """The detail of each 422 that creating (and changing) an agent naming `names` gave."""
    made = await client.post("/v1/agents/", json={"name": "plain", "instruction": "Go."})
    assert made.status_code == 201, made.text
    plain = made.json()["id"]
    said: dict[str, str] = {}
    for name in names:
        body: dict[str, Any] = {"name": "probe", "instruction": "Go.", "model_id": name}
        created = await client.post("/v1/agents/", json=body)
        changed = await client.patch(f"/v1/agents/{plain}", json={"model_id": name})
        for response in (created, changed):
            assert response.status_code == 422, (name, response.text)
            assert response.headers["content-type"] == "application/problem+json"
        assert created.json()["detail"] == changed.json()["detail"], name
        said[name] = created.json()["detail"]
    return said


async def test_a_scripted_model_id_is_a_script_in_the_folder_and_refusals_are_alike(
    tmp_path: Path,
) -> None:
    scripts, outside = _planted(tmp_path)
    hostile = [
        "scripted:/etc/passwd",
        "scripted:/nonexistent",
        "scripted:../x",
        "scripted:../outside.yaml",
        f"scripted:{outside}",
        "scripted:link-out.yaml",
        "scripted:nosuch.yaml",
    ]
    async with served(tmp_path, scripts_dir=scripts) as client:
        said = await _refusals(client, hostile)
        assert len(set(said.values())) == 1, said
        assert "MODEL__SCRIPTS_DIR" in said["scripted:/etc/passwd"]
        assert "passwd" not in said["scripted:/etc/passwd"]

        body = {"name": "inside", "instruction": "Go.", "model_id": "scripted:inside.yaml"}
        created = await client.post("/v1/agents/", json=body)
        assert created.status_code == 201, created.text
        run = await client.post(
            "/v1/runs/", data={"agent_id": created.json()["id"], "input": "Who answers?"}
        )
        assert run.status_code == 201, run.text
        assert run.json()["model"] == f"scripted:{(scripts / 'inside.yaml').resolve()}"
        await sse(client, f"/v1/runs/{run.json()['id']}/events")

        async def ended() -> dict[str, Any] | None:
            record: dict[str, Any] = (await client.get(f"/v1/runs/{run.json()['id']}")).json()
            return record if record["status"] != "running" else None

        record = await eventually(ended, timeout=30)
        assert record["status"] == "completed", record
        assert record["result"]["answer"] == "answered by inside"


async def test_without_the_folder_every_scripted_model_id_is_refused_alike(
    tmp_path: Path,
) -> None:
    scripts, _ = _planted(tmp_path)
    names = [
        "scripted:/etc/passwd",
        "scripted:/nonexistent",
        "scripted:../x",
        f"scripted:{scripts / 'inside.yaml'}",  # a real script: still not by a request
    ]
    async with served(tmp_path, scripts_dir=None) as client:
        said = await _refusals(client, names)
        assert len(set(said.values())) == 1, said
        assert "this server has none set" in said["scripted:/etc/passwd"]
        # The server's own default model still runs an agent that names none.
        made = await client.post("/v1/agents/", json={"name": "own", "instruction": "Go."})
        run = await client.post("/v1/runs/", data={"agent_id": made.json()["id"], "input": "Hi"})
        assert run.status_code == 201, run.text
