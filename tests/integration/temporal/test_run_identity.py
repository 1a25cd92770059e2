"""One run identity on Temporal: a run started by any door is found by every other.

The rig is ``skillweave worker`` in a process of its own (``test_worker_crash``), the API is
served here over the rig's task queue and store, and every ``skillweave runs …`` command runs as
a subprocess, as a user types it: once against the Temporal server directly, once through the
API (``SKILLWEAVE_API_URL``). A run the API started is shown, logged, listed and its files
fetched by the CLI on Temporal; a run ``skillweave run`` started is listed and shown by
``GET /v1/runs/``; a run another client started is approved and another cancelled through the
API's door.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.agent import AgentSpec
from skillweave.agent.spec import ApprovalOptions
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.api.skills import open_skills
from skillweave.api.skills import router as skills_router
from skillweave.config import ModelSettings, Settings
from skillweave.engines import RunRequest
from tests.api.test_runs import make_agent
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, Stack, unique
from tests.integration.temporal.test_followers_outlive_workers import cli_env
from tests.integration.temporal.test_worker_crash import SKILLWEAVE, Rig, worker_rig

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(300)]

TOKEN = "run-identity-token"
NOTE = "note after 0 s\n"
"""What the run's script writes to ``outputs/note.txt``."""
SCRIPT = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
  - tool_calls:
      - {{name: run_skill_script,
         arguments: {{skill: {TOOLS}, script: scripts/slow.py, args: ["0", note]}}}}
  - say: "Done."
"""
"""Every run: activate the tools, run one script (it writes a file), answer. A run that needs
approval waits at the script."""


@dataclass
class Doors:
    """The rig, the API over it, and the environments of a CLI on each door."""

    rig: Rig
    api: httpx.AsyncClient
    url: str
    temporal_env: dict[str, str]
    api_env: dict[str, str]
    cwd: Path

    async def cli(self, *args: str, through_api: bool = False) -> tuple[int, str, str]:
        """``skillweave ARGS`` in a subprocess: exit code, stdout, stderr."""
        process = await asyncio.create_subprocess_exec(
            SKILLWEAVE,
            *args,
            cwd=self.cwd,
            env=self.api_env if through_api else self.temporal_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), 120)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        return process.returncode or 0, out.decode(), err.decode()

    async def ok(self, *args: str, through_api: bool = False) -> str:
        code, out, err = await self.cli(*args, through_api=through_api)
        assert code == 0, f"skillweave {' '.join(args)} exited {code}\n{out}\n{err}"
        return out

    async def record(self, run_id: str) -> dict[str, Any]:
        response = await self.api.get(f"/v1/runs/{run_id}")
        assert response.status_code == 200, response.text
        return response.json()

    async def ended(self, run_id: str) -> dict[str, Any]:
        async def done() -> dict[str, Any] | None:
            record = await self.record(run_id)
            return record if record["result"] is not None else None

        return await eventually(done, timeout=90, what=f"run {run_id} to end")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def doors(
    stack: Stack, skill_dirs: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Doors]:
    root = tmp_path_factory.mktemp("run-identity")
    async with worker_rig(stack, skill_dirs, root, SCRIPT) as rig:
        settings = Settings(
            _env_file=None,
            api={"token": SecretStr(TOKEN)},
            model=ModelSettings(provider="scripted", name=str(root / "model.yaml")),
            skills={"dirs": [str(d) for d in skill_dirs], "uploaded_dir": str(root / "up")},
        )
        app = create_api(
            settings,
            store=rig.store,
            routers=[skills_router, agents_router, runs_router],
            on_startup=[open_skills, open_agents, open_runs(rig.engine)],
        )
        async with (
            LoopbackServer(app) as server,
            httpx.AsyncClient(
                base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120
            ) as client,
        ):
            temporal_env = cli_env(rig, SKILLS__DIRS=json.dumps([str(d) for d in skill_dirs]))
            temporal_env.pop("SKILLWEAVE_API_URL", None)
            api_env = {
                **temporal_env,
                "SKILLWEAVE_API_URL": server.url,
                "SKILLWEAVE_API_TOKEN": TOKEN,
                # Through the API nothing of Temporal is needed: an address nobody serves.
                "WORKFLOW__TEMPORAL_ADDRESS": "127.0.0.1:9",
            }
            yield Doors(rig, client, server.url, temporal_env, api_env, root)


async def start_api_run(doors: Doors, *, text: str = "Write a note.") -> str:
    agent_id = await make_agent(doors.api, name=unique("noter"), skill_ids=[TOOLS])
    started = await doors.api.post(
        "/v1/runs/",
        data={"agent_id": agent_id, "input": text},
        files={"files": ("brief.txt", b"the brief\n", "text/plain")},
    )
    assert started.status_code == 201, started.text
    return started.json()["id"]


async def start_waiting_run(doors: Doors) -> str:
    """A run another client started (no API record), waiting for approval of its script."""
    run_id = unique("run-client")
    spec = AgentSpec(name="careful", skills=(TOOLS,), approvals=ApprovalOptions(skills=(TOOLS,)))
    await doors.rig.engine.start(RunRequest(run_id=run_id, task="Write a note.", agent=spec))

    async def waiting() -> bool:
        return (await doors.rig.engine.status(run_id)).awaiting_approval is not None

    await eventually(waiting, timeout=60, what="the approval request")
    return run_id


@pytest.mark.parametrize("through_api", [False, True], ids=["temporal", "api"])
async def test_a_run_the_api_started_is_shown_logged_listed_and_its_files_fetched(
    doors: Doors, through_api: bool
) -> None:
    run_id = await start_api_run(doors)
    assert run_id.startswith("run-")
    await doors.ended(run_id)

    shown = json.loads(await doors.ok("runs", "show", run_id, "--json", through_api=through_api))
    assert shown["id"] == run_id
    if through_api:  # the record, with the engine's status view
        assert shown["status"] == "completed"
        assert shown["view"]["status"] == "completed"
        assert shown["view"]["script_runs"] == 1
    else:
        assert shown["status"] == "completed"
        assert shown["script_runs"] == 1
    text = await doors.ok("runs", "show", run_id, through_api=through_api)
    assert f"run {run_id}" in text
    assert "completed" in text

    logs = await doors.ok("runs", "logs", run_id, through_api=through_api)
    assert "started" in logs.splitlines()[0]
    assert "finished" in logs.splitlines()[-1]
    followed = await doors.cli("runs", "logs", run_id, "--follow", through_api=through_api)
    assert followed[0] == 0, followed
    lines = await doors.ok("runs", "logs", run_id, "--json", through_api=through_api)
    kinds = [json.loads(line)["kind"] for line in lines.splitlines()]
    assert kinds[0] == "run_started"
    assert kinds[-1] == "run_finished"
    assert "script_ran" in kinds

    files = json.loads(
        await doors.ok("runs", "artifacts", run_id, "--json", through_api=through_api)
    )
    by_kind = {(row["kind"], row["path"].rsplit("/", 1)[-1]) for row in files}
    assert by_kind == {("input", "brief.txt"), ("output", "note.txt")}
    [note] = [row["path"] for row in files if row["kind"] == "output"]
    fetched = await doors.ok("runs", "artifacts", run_id, note, through_api=through_api)
    assert fetched == NOTE
    target = doors.cwd / f"note-{through_api}.txt"
    await doors.ok("runs", "artifacts", run_id, note, "--to", str(target), through_api=through_api)
    assert target.read_text() == NOTE
    code, _, err = await doors.cli(
        "runs", "artifacts", run_id, "inputs/nothing.txt", through_api=through_api
    )
    assert code == 1, err
    assert "nothing.txt" in err

    async def listed() -> bool:
        rows = json.loads(
            await doors.ok("runs", "list", "--limit", "200", "--json", through_api=through_api)
        )
        return run_id in [row["id"] for row in rows]

    await eventually(listed, timeout=30, what="the run in the listing")


async def test_a_run_skillweave_run_started_is_listed_and_shown_by_the_api(doors: Doors) -> None:
    brief = doors.cwd / "cli-brief.txt"
    brief.write_text("from the command line\n")
    spec = doors.cwd / "agent.yaml"
    spec.write_text(f"name: cli-noter\nskills: [{TOOLS}]\n")
    code, out, err = await doors.cli(
        "run", "Write a note.", "--engine", "temporal", "--agent", str(spec), "--file", str(brief),
        "--json",
    )  # fmt: skip
    assert code == 0, f"{out}\n{err}"
    result = json.loads(out.splitlines()[-1])
    run_id = result["run_id"]
    assert run_id.startswith("run-")

    record = await doors.record(run_id)
    assert record["id"] == run_id
    assert record["agent_id"] is None
    assert record["agent"] is None
    assert record["agent_name"] == "cli-noter"
    assert record["input"] == "Write a note."
    assert [ref["key"].rsplit("/", 1)[-1] for ref in record["inputs"]] == ["cli-brief.txt"]
    assert record["status"] == "completed"
    assert record["result"]["script_runs"] == 1

    async def listed() -> dict[str, Any] | None:
        page = (await doors.api.get("/v1/runs/", params={"limit": 200})).json()
        return next((item for item in page["items"] if item["id"] == run_id), None)

    item = await eventually(listed, timeout=30, what="the run in GET /v1/runs/")
    assert item["agent"] == "cli-noter"
    filtered = (await doors.api.get("/v1/runs/", params={"agent": "cli-noter"})).json()
    assert [i["id"] for i in filtered["items"]] == [run_id]

    artifacts = (await doors.api.get(f"/v1/runs/{run_id}/artifacts")).json()
    names = sorted(a["path"].rsplit("/", 1)[-1] for a in artifacts)
    assert names == ["cli-brief.txt", "note.txt"]
    status = await doors.api.get(f"/v1/runs/{run_id}/status")
    assert status.status_code == 200, status.text
    assert status.json()["phase"] == "completed"
    assert (await doors.api.get("/v1/runs/run-nobody-started")).status_code == 404


async def test_a_run_another_client_started_is_approved_through_the_api(doors: Doors) -> None:
    run_id = await start_waiting_run(doors)
    shown = await doors.ok("runs", "show", run_id, through_api=True)
    assert "waiting for approval" in " ".join(shown.split())
    denied_early = await doors.api.post(f"/v1/runs/{run_id}/approvals", json={"approved": "maybe"})
    assert denied_early.status_code == 422

    out = await doors.ok("runs", "approve", run_id, "--note", "fine", through_api=True)
    assert f"approved: run {run_id}" in out
    record = await doors.ended(run_id)
    assert record["status"] == "completed"
    assert record["result"]["script_runs"] == 1
    again = await doors.cli("runs", "approve", run_id, through_api=True)
    assert again[0] == 1
    assert "has ended" in again[2]
    logs = await doors.ok("runs", "logs", run_id, "--json")
    decided = [json.loads(line) for line in logs.splitlines()]
    assert [e["status"] for e in decided if e["kind"] == "approval_decided"] == ["approved"]


async def test_a_waiting_run_is_cancelled_through_the_api_with_its_reason(doors: Doors) -> None:
    run_id = await start_waiting_run(doors)
    out = await doors.ok("runs", "cancel", run_id, "--reason", "not needed", through_api=True)
    assert out.startswith(f"run {run_id}: cancelled"), out
    assert "not needed" in out
    shown = json.loads(await doors.ok("runs", "show", run_id, "--json"))
    assert shown["status"] == "cancelled"


async def test_a_bad_run_id_fails_closed_on_both_doors(doors: Doors) -> None:
    for through_api in (False, True):
        code, _, err = await doors.cli(
            "runs", "show", "run-nobody-started", through_api=through_api
        )
        assert code == 1, err
        assert "no run 'run-nobody-started'" in err
        assert len(err.strip().splitlines()) == 1, err
    code, _, err = await doors.cli("runs", "show", "..", through_api=True)
    assert code == 2, err
    assert "not a run id" in err
    code, _, err = await doors.cli(
        "runs", "artifacts", "run-x", "inputs/../../../v1/agents", through_api=True
    )
    assert code == 2, err
    assert "is not a file of a run" in err
