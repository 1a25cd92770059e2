"""``skillweave api`` as a user starts it: without a default model it serves (and says, in one
log line, that each run's agent must name its model); a run of an agent that names none is
refused when it is submitted (422 problem+json), a run of one that names its model runs on it;
with a default model, a run's ``model`` names it. And without a Temporal server (the default
engine), it says what to do and waits for one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillweave.cli.temporal_server import free_port
from tests.api.test_runs import sse
from tests.integration.harness import eventually
from tests.reliability.stack import Service

pytestmark = pytest.mark.timeout(180)

TOKEN = "no-default-model-token"
SCRIPT = "model: {name}\nturns:\n  - say: answered by {name}\n"


def _env(root: Path, **values: str) -> dict[str, str]:
    """The whole environment of a fresh set-up: no MODEL__ setting, a store and home of the
    test's, the direct engine (its runs run in the API's process)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root / "home"),
        "STORAGE__LOCAL_DIR": str(root / "store"),
        "SKILLS__DIRS": json.dumps([str(root / "skills")]),
        "SKILLS__UPLOADED_DIR": str(root / "uploaded"),
        "SANDBOX__POOL_TARGET": "0",
        "API__TOKEN": TOKEN,
        **values,
    }


@asynccontextmanager
async def api(root: Path, **values: str) -> AsyncIterator[tuple[httpx.AsyncClient, Service]]:
    """``skillweave api`` on a free port with `values` added, and a client of it."""
    port = free_port()
    (root / "skills").mkdir(exist_ok=True)
    logs = root / f"logs-{port}"
    logs.mkdir()

    async def ready(_: object) -> bool:
        try:
            async with httpx.AsyncClient(timeout=2) as http:
                return (await http.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200
        except httpx.HTTPError:
            return False

    env = _env(root, API__PORT=str(port), **values)
    service = Service("api", ["api"], env, logs, ready)
    await service.start()
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=60,
        ) as client:
            yield client, service
    finally:
        service.stop()


async def _agent(client: httpx.AsyncClient, name: str, **body: Any) -> str:
    made = await client.post("/v1/agents/", json={"name": name, "instruction": "Go.", **body})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


async def _ended(client: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    await sse(client, f"/v1/runs/{run_id}/events")

    async def record() -> dict[str, Any] | None:
        found: dict[str, Any] = (await client.get(f"/v1/runs/{run_id}")).json()
        return found if found["status"] != "running" else None

    return await eventually(record, timeout=60)


async def test_the_api_starts_without_a_default_model_and_refuses_runs_that_name_none(
    tmp_path: Path,
) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "own.yaml").write_text(SCRIPT.format(name="own"), encoding="utf-8")
    async with api(
        tmp_path, WORKFLOW__EXECUTION_ENGINE="direct", MODEL__SCRIPTS_DIR=str(scripts)
    ) as (client, service):
        # The ready line follows the socket's first answer by up to a poll of the server's
        # state: on a loaded host /healthz can answer before it is written.
        def ready_line_said() -> str:
            said = " ".join(service.log().split())
            return said if "skillweave API on" in said else ""

        said = await eventually(ready_line_said, timeout=30, what="the API's ready line")
        # One line, at start-up: what is missing and what each run must do instead.
        assert "no default model is configured (MODEL__PROVIDER, MODEL__NAME); each run must" in (
            said
        )

        bare = await _agent(client, "bare")
        refused = await client.post("/v1/runs/", data={"agent_id": bare, "input": "Hi"})
        assert refused.status_code == 422, refused.text
        assert refused.headers["content-type"] == "application/problem+json"
        problem = refused.json()
        assert problem["title"] == "No model"
        assert problem["detail"].startswith(
            "the agent names no model (model_id) and this server has no default model"
        )
        assert "give the agent a model_id" in problem["detail"]
        assert (await client.get("/v1/runs/")).json()["items"] == []  # nothing was started

        own = await _agent(client, "own", model_id="scripted:own.yaml")
        started = await client.post("/v1/runs/", data={"agent_id": own, "input": "Who?"})
        assert started.status_code == 201, started.text
        assert started.json()["model"] == f"scripted:{(scripts / 'own.yaml').resolve()}"
        record = await _ended(client, started.json()["id"])
        assert record["status"] == "completed", record
        assert record["result"]["answer"] == "answered by own"


async def test_a_run_of_an_agent_that_names_no_model_says_the_default_it_runs_on(
    tmp_path: Path,
) -> None:
    default = tmp_path / "default.yaml"
    default.write_text(SCRIPT.format(name="the-default"), encoding="utf-8")
    async with api(
        tmp_path,
        WORKFLOW__EXECUTION_ENGINE="direct",
        MODEL__PROVIDER="scripted",
        MODEL__NAME=str(default),
    ) as (client, _):
        bare = await _agent(client, "bare")
        started = await client.post("/v1/runs/", data={"agent_id": bare, "input": "Who?"})
        assert started.status_code == 201, started.text
        assert started.json()["model"] == f"scripted:{default}"
        record = await _ended(client, started.json()["id"])
        assert record["model"] == f"scripted:{default}"
        assert record["result"]["answer"] == "answered by the-default"


def test_the_api_without_a_temporal_server_says_what_to_do(tmp_path: Path) -> None:
    """Temporal is the API's default engine too: no server yet, and the API says what to do
    (start one, or the direct engine) in a warning, then waits for it (issue 41: services
    start in any order; tests/integration/cli/test_start_in_any_order.py follows it up)."""
    address = f"127.0.0.1:{free_port()}"
    (tmp_path / "skills").mkdir()
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "skillweave.cli", "api"],
            env=_env(tmp_path, WORKFLOW__TEMPORAL_ADDRESS=address, API__PORT=str(free_port())),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        deadline = time.monotonic() + 60
        while f"waiting for Temporal at {address}" not in errors.read_text():
            assert process.poll() is None, errors.read_text()
            assert time.monotonic() < deadline, errors.read_text()
            time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(timeout=30)
    said = " ".join(errors.read_text().split())
    assert f"warn temporal: cannot reach Temporal at {address}" in said
    assert "Start it with `skillweave dev` in another terminal" in said
    assert "with WORKFLOW__EXECUTION_ENGINE=direct" in said
    assert "Traceback" not in said
