"""Waiting is visible (issue 41 item 5), against real components: a worker whose manager URL is
dead (a free loopback port nothing listens on, ``SANDBOX__QUEUE_SECONDS`` long) holds its
script step, and every view names what it waits for and since when, within a bounded time:
the engine's follower (a ``waiting`` note, read on Temporal from the pending activity's
heartbeat details), ``engine.waiting`` and the API's ``GET /v1/runs/{id}`` (``waiting``), the
API's event stream (the note and its ``text``), and real ``skillweave runs show`` and
``runs logs`` subprocesses, on Temporal and through the API. On the direct engine the same
note and the same ``waiting`` of the API's run. A step no worker takes (the only worker runs
no activities) waits for a worker, and says so."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from mcp_manager.server import LoopbackServer
from skillweave.agent import AgentSpec
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.run_schemas import Run
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.config import Settings
from skillweave.engines import AgentServices, DirectEngine, RunRequest
from skillweave.engines.contract import ActivityTimeouts, workflow_id
from skillweave.engines.notes import FollowNote, note_line
from skillweave.engines.temporal import TemporalEngine
from skillweave.llm.scripted import ScriptedProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from skillweave.storage.store_id import store_identity
from tests.agent.harness import sample_library
from tests.integration.harness import eventually
from tests.integration.temporal.harness import start_dev_server, unique
from workflows.worker import build_worker

pytestmark = pytest.mark.timeout(240)

TOKEN = "waiting-visible-token"
SCRIPT = """
turns:
  - tool_calls: [{name: activate_skill, arguments: {name: toolkit}}]
  - tool_calls: [{name: activate_skill, arguments: {name: profiler}}]
  - tool_calls:
      - {name: run_skill_script,
         arguments: {skill: profiler, script: scripts/count.py, args: [scripts/count.py]}}
  - say: done
"""
CALL = "script profiler/scripts/count.py"
LIMITS = "limits: model 600 s, script 900 s, heartbeat 5 s, others 120 s, 3 attempts (the worker's)"
"""What ``runs show`` says of the held run's limits: its worker's (``build_worker(limits=…)``)."""
SEEN_WITHIN = 60.0
"""A wait is told this soon (a heartbeat's round trip and a follower's poll, on a busy host)."""


def _dead_url() -> str:
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@contextlib.asynccontextmanager
async def _services(tmp_path: Path, store: LocalArtifactStore) -> AsyncIterator[AgentServices]:
    manager = _dead_url()
    settings = Settings(
        _env_file=None,
        sandbox={"manager_url": manager, "manager_token": SecretStr(TOKEN), "queue_seconds": 600},
    )
    async with SandboxClient(manager, token=TOKEN) as sandbox:
        yield AgentServices(
            settings=settings,
            registry=sample_library(tmp_path / "skills"),
            store=store,
            provider=ScriptedProvider.from_yaml(SCRIPT),
            model="scripted",
            sandbox=sandbox,
        )


async def _first_wait(followed: AsyncIterator[Any], *, on: str) -> FollowNote:
    """The first ``waiting`` note of a follower on `on`, within :data:`SEEN_WITHIN`."""
    async with asyncio.timeout(SEEN_WITHIN):
        async for item in followed:
            if isinstance(item, FollowNote) and item.kind == "waiting":
                assert item.waiting is not None
                if item.waiting.on == on:
                    return item
    raise AssertionError(f"the run ended before it waited for {on}")


def _is_manager_wait(wait: dict[str, Any] | Any) -> None:
    data = wait if isinstance(wait, dict) else wait.model_dump(mode="json")
    assert data["on"] == "manager", data
    assert data["call"] == CALL, data
    assert "127.0.0.1" in data["detail"], data


@contextlib.asynccontextmanager
async def _api(engine: Any, store: LocalArtifactStore) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(_env_file=None, api={"token": SecretStr(TOKEN)})
    app = create_api(
        settings, store=store, routers=[runs_router], on_startup=[open_agents, open_runs(engine)]
    )
    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        ) as client,
    ):
        yield client


async def _streamed_wait(client: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    """The first ``waiting`` event of the run's SSE stream (a note: no ``id:``)."""
    async with (
        asyncio.timeout(SEEN_WITHIN),
        client.stream("GET", f"/v1/runs/{run_id}/events") as response,
    ):
        kind = ""
        async for line in response.aiter_lines():
            assert not line.startswith("id:") or kind != "waiting"
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: ") and kind == "waiting":
                return json.loads(line.removeprefix("data: "))
    raise AssertionError("the stream ended without a waiting note")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__", "SKILLS__"))
        and not key.startswith("SKILLWEAVE_API_")
    }
    return {**base, "STORAGE__LOCAL_DIR": str(tmp_path / "store"), **extra}


async def _skillweave(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skillweave.cli",
        *args,
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


def _one_line(text: str) -> str:
    return " ".join(text.split())


async def test_a_script_step_held_by_a_dead_manager_is_named_in_every_view_on_temporal(
    tmp_path: Path,
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    env = await start_dev_server(store)
    try:
        async with _services(tmp_path, store) as services:
            base = unique("tq")
            worker = build_worker(
                env.client,
                services,
                task_queue=base,
                store_id=await store_identity(store),
                heartbeat_seconds=0.5,
                limits=ActivityTimeouts(heartbeat_seconds=5, max_attempts=3),
            )
            async with worker:
                engine = TemporalEngine(env.client, task_queue=base, poll_seconds=0.05, store=store)
                run_id = await engine.start(
                    RunRequest(run_id=unique("held"), task="Count.", agent=AgentSpec())
                )
                try:
                    note = await _first_wait(engine.follow(run_id), on="manager")
                    _is_manager_wait(note.waiting)
                    assert note_line(note).text.startswith(
                        f"{CALL}: waiting for the MCP manager since "
                    )
                    [wait] = await engine.waiting(run_id)
                    assert wait == note.waiting

                    async with _api(engine, store) as client:
                        run = (await client.get(f"/v1/runs/{run_id}")).json()
                        assert run["status"] == "running", run
                        [shown] = run["waiting"]
                        _is_manager_wait(shown)
                        streamed = await _streamed_wait(client, run_id)
                        _is_manager_wait(streamed["waiting"])
                        assert streamed["text"].startswith(
                            f"waiting · {CALL}: waiting for the MCP manager since "
                        )

                        # The CLI, on the Temporal server and through the API.
                        cli = _env(
                            tmp_path,
                            WORKFLOW__TEMPORAL_ADDRESS=env.client.service_client.config.target_host,
                            WORKFLOW__TASK_QUEUE=base,
                        )
                        said = f"waiting: {CALL}: waiting for the MCP manager since "
                        code, out, err = await _skillweave(tmp_path, cli, "runs", "show", run_id)
                        assert code == 0, out + err
                        assert said in _one_line(out), out
                        assert LIMITS in _one_line(out), out  # the worker's, not the client's
                        code, out, err = await _skillweave(
                            tmp_path, cli, "runs", "show", run_id, "--json"
                        )
                        assert code == 0, out + err
                        _is_manager_wait(json.loads(out)["waiting"][0])
                        limits = json.loads(out)["limits"]
                        assert (limits["heartbeat_seconds"], limits["max_attempts"]) == (5, 3)
                        code, out, err = await _skillweave(tmp_path, cli, "runs", "logs", run_id)
                        assert code == 0, out + err
                        assert f"waiting · {CALL}: waiting for the MCP manager since" in (
                            _one_line(err)
                        ), err
                        remote = {
                            **cli,
                            "SKILLWEAVE_API_URL": str(client.base_url),
                            "SKILLWEAVE_API_TOKEN": TOKEN,
                        }
                        code, out, err = await _skillweave(tmp_path, remote, "runs", "show", run_id)
                        assert code == 0, out + err
                        assert said in _one_line(out), out + err
                        assert LIMITS in _one_line(out), out + err  # from the API's /status
                finally:
                    await engine.client.get_workflow_handle(workflow_id(run_id)).terminate("done")
    finally:
        await env.shutdown()


async def test_a_step_no_worker_takes_waits_for_a_worker(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    env = await start_dev_server(store)
    try:
        async with _services(tmp_path, store) as services:
            base = unique("tq")
            # The only worker runs workflows and no activities: the first step is never taken.
            worker = build_worker(
                env.client,
                services,
                task_queue=base,
                store_id=await store_identity(store),
                no_remote_activities=True,
            )
            async with worker:
                engine = TemporalEngine(env.client, task_queue=base, poll_seconds=0.05, store=store)
                run_id = await engine.start(
                    RunRequest(run_id=unique("untaken"), task="Count.", agent=AgentSpec())
                )
                try:
                    note = await _first_wait(engine.follow(run_id), on="worker")
                    wait = note.waiting
                    assert wait is not None
                    assert wait.detail.startswith("no worker has taken it from task queue '")
                    assert base in wait.detail
                    assert note_line(note).text.startswith(
                        f"{wait.call}: waiting for a worker since "
                    )
                    assert [found.on for found in await engine.waiting(run_id)] == ["worker"]
                finally:
                    await engine.client.get_workflow_handle(workflow_id(run_id)).terminate("done")
    finally:
        await env.shutdown()


async def test_a_run_no_worker_of_its_store_takes_is_named_by_runs_show(tmp_path: Path) -> None:
    """Started while no worker polls its store's queue, nothing of the run moves, and no
    worker can answer its status: ``engine.waiting`` and ``runs show`` still say, from the
    server's description, that no worker has taken its next step, since when and where."""
    store = LocalArtifactStore(tmp_path / "store")
    env = await start_dev_server(store)
    try:
        base = unique("tq")
        engine = TemporalEngine(env.client, task_queue=base, poll_seconds=0.05, store=store)
        run_id = await engine.start(
            RunRequest(run_id=unique("unpolled"), task="Count.", agent=AgentSpec())
        )
        routed = f"{base}@{await store_identity(store)}"
        try:

            async def told() -> list[Any]:
                return await engine.waiting(run_id)

            waits = await eventually(told, timeout=SEEN_WITHIN, what="a wait for a worker")
            (wait,) = waits
            assert wait.on == "worker"
            assert (
                wait.detail == f"no worker has taken the run's next step from task queue {routed!r}"
            )
            address = env.client.service_client.config.target_host
            code, out, err = await _skillweave(
                tmp_path,
                _env(
                    tmp_path,
                    WORKFLOW__TEMPORAL_ADDRESS=address,
                    WORKFLOW__TASK_QUEUE=base,
                    WORKFLOW__EXECUTION_ENGINE="temporal",
                ),
                "runs",
                "show",
                run_id,
            )
            assert code != 0, out
            said = _one_line(err)
            assert "waiting: the run: waiting for a worker since " in said, err
            assert f"no worker has taken the run's next step from task queue {routed!r}" in said
            assert "no worker answered" in said, err
        finally:
            await engine.client.get_workflow_handle(workflow_id(run_id)).terminate("done")
    finally:
        await env.shutdown()


async def test_the_direct_engine_names_the_dead_manager_to_followers_and_the_api(
    tmp_path: Path,
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    async with _services(tmp_path, store) as services:
        engine = DirectEngine(services)
        run_id = await engine.start(
            RunRequest(run_id=unique("direct-held"), task="Count.", agent=AgentSpec())
        )
        try:
            note = await _first_wait(engine.follow(run_id), on="manager")
            _is_manager_wait(note.waiting)
            assert [note.waiting] == await engine.waiting(run_id)
            async with _api(engine, store) as client:
                # The API's record of the run, as it keeps one for each run it starts (after
                # its start-up, which marks the runs of an earlier process as lost).
                record = Run(
                    id=run_id,
                    agent_id=None,
                    agent=None,
                    input="Count.",
                    created_at=note.waiting.since,
                )
                await store.put_bytes(
                    keys.run_record_key(run_id), record.model_dump_json().encode()
                )
                run = (await client.get(f"/v1/runs/{run_id}")).json()
                [shown] = run["waiting"]
                _is_manager_wait(shown)
                streamed = await _streamed_wait(client, run_id)
                assert streamed["text"].startswith(f"waiting · {CALL}: waiting for the MCP manager")
        finally:
            await engine.cancel(run_id)
        assert await engine.waiting(run_id) == []
