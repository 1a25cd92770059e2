"""Followers outlive workers: `skillweave run --engine temporal`, `skillweave runs logs --follow`
and the API's Server-Sent Events keep following a run while its worker is killed, say that they
wait for a worker, and end by the run's outcome once a new worker has finished it. A follower
bounded by ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS`` gives up with its own exit code (the CLI) or
last event (SSE), saying the run may still be running, and following it again works.

The worker is ``skillweave worker`` in a process of its own (the rig of ``test_worker_crash``),
killed with SIGKILL while the model thinks; the CLI commands run as subprocesses, as a user
types them; the API is served here over the rig's task queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from temporalio.service import RPCError

from mcp_manager.server import LoopbackServer
from skillweave.api import create_api
from skillweave.api.agents import open_agents
from skillweave.api.agents import router as agents_router
from skillweave.api.runs import open_runs
from skillweave.api.runs import router as runs_router
from skillweave.api.skills import open_skills
from skillweave.api.skills import router as skills_router
from skillweave.cli.exits import EXIT_NO_WORKER
from skillweave.config import Settings
from skillweave.engines.contract import store_task_queue, workflow_id
from skillweave.engines.temporal import TemporalEngine
from skillweave.storage.store_id import store_identity
from tests.api.test_runs import make_agent
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, Stack
from tests.integration.temporal.test_worker_crash import Rig, worker_rig

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(240)]

ANSWER = "All done, whichever worker finished it."
SCRIPT = f"""
turns:
  - delay_seconds: 5
    say: "{ANSWER}"
"""
"""One slow model call: the worker is killed while it thinks, a new one thinks again."""

RUN = ("run", "Think, then say you are done.", "--engine", "temporal")
LOGS = ("runs", "logs")
WAITING = "waiting for a worker"
TOKEN = "followers-token"


@dataclass
class Command:
    """A ``skillweave`` command in a subprocess, its output read as it comes."""

    process: asyncio.subprocess.Process
    stdout: str = ""
    stderr: str = ""
    readers: list[asyncio.Task[None]] = field(default_factory=list)

    @classmethod
    async def start(cls, *args: str, env: dict[str, str], cwd: Path) -> Command:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "skillweave.cli",
            *args,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        command = cls(process)
        command.readers = [
            asyncio.create_task(command._read(process.stdout, "stdout")),
            asyncio.create_task(command._read(process.stderr, "stderr")),
        ]
        return command

    async def _read(self, stream: asyncio.StreamReader | None, name: str) -> None:
        assert stream is not None
        while line := await stream.readline():
            setattr(self, name, getattr(self, name) + line.decode(errors="replace"))

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def says(self, text: str) -> bool:
        """Whether `text` is in its stderr (words joined: rich wraps long lines)."""
        return text in " ".join(self.stderr.split())

    async def wait(self, timeout: float = 120) -> int:
        code = await asyncio.wait_for(self.process.wait(), timeout)
        await asyncio.gather(*self.readers)
        return code

    async def stop(self) -> None:
        if self.running:
            self.process.send_signal(signal.SIGKILL)
        await self.process.wait()
        await asyncio.gather(*self.readers, return_exceptions=True)

    def __str__(self) -> str:
        return f"--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def cli_env(rig: Rig, **settings: str) -> dict[str, str]:
    """The environment of a CLI on the rig's server, task queue and store (the run's model
    calls are retried a heartbeat timeout after their worker died: the worker's, in
    `worker_rig`)."""
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEL__", "WORKFLOW__", "SANDBOX__", "STORAGE__", "SKILLS__"))
    }
    return {
        **base,
        "WORKFLOW__TEMPORAL_ADDRESS": rig.worker.env["WORKFLOW__TEMPORAL_ADDRESS"],
        "WORKFLOW__TASK_QUEUE": rig.worker.env["WORKFLOW__TASK_QUEUE"],
        "STORAGE__LOCAL_DIR": str(rig.store.root),
        "SKILLS__DIRS": '["bundled"]',
        **settings,
    }


async def kill_while_the_model_thinks(rig: Rig, run_id: str) -> None:
    async def thinking() -> bool:
        try:
            return await rig.in_flight(run_id, "invoke_model")
        except RPCError:  # `run` prints the run id before it starts the workflow
            return False

    await eventually(thinking, timeout=60, what="the model call")
    rig.worker.kill()


@contextlib.asynccontextmanager
async def stopping(command: Command) -> AsyncIterator[Command]:
    try:
        yield command
    except BaseException:
        print(command)
        raise
    finally:
        await command.stop()


async def test_run_on_temporal_waits_for_a_new_worker_and_exits_by_the_outcome(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    async with worker_rig(stack, skill_dirs, tmp_path, SCRIPT) as rig:
        command = await Command.start(*RUN, env=cli_env(rig), cwd=tmp_path)
        async with stopping(command):
            run_id = await eventually(lambda: _run_id(command), timeout=60, what="the run id")
            await kill_while_the_model_thinks(rig, run_id)
            # The old follower exited 1 here, at its first query no worker answered.
            await eventually(lambda: command.says(WAITING), timeout=60, what="the note")
            await eventually(
                lambda: command.stderr.count(WAITING) >= 2, timeout=60, what="a second note"
            )
            assert command.running
            # The queue the run is on: the configured one routed to its store.
            routed = store_task_queue(
                rig.worker.env["WORKFLOW__TASK_QUEUE"], await store_identity(rig.store)
            )
            assert command.says(f"task queue {routed!r}")
            await rig.worker.start()
            code = await command.wait()
            assert code == 0, command
            assert ANSWER in command.stdout
            [status] = [line for line in command.stdout.splitlines() if f"(run {run_id})" in line]
            assert status.startswith("completed"), status
            assert command.says("a worker answered")


async def test_runs_logs_follows_through_a_worker_restart_and_exits_by_the_outcome(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    """Started while the run has no worker (one was killed while the model thought): the
    old command failed at its first query; this one waits, then reads every event."""
    async with worker_rig(stack, skill_dirs, tmp_path, SCRIPT) as rig:
        run_id = await rig.start_run("Think, then say you are done.")
        await kill_while_the_model_thinks(rig, run_id)
        command = await Command.start(*LOGS, run_id, "--follow", env=cli_env(rig), cwd=tmp_path)
        async with stopping(command):
            await eventually(lambda: command.says(WAITING), timeout=60, what="the note")
            await eventually(
                lambda: command.stderr.count(WAITING) >= 2, timeout=60, what="a second note"
            )
            assert command.running
            await rig.worker.start()
            code = await command.wait()
        assert code == 0, command
        lines = command.stdout.splitlines()
        assert "started" in lines[0]
        assert "finished" in lines[-1]
        assert "completed" in lines[-1]
        assert command.says("a worker answered")
        assert (await rig.engine.result(run_id)).status == "completed"


async def test_runs_logs_follow_exits_1_for_a_run_that_did_not_complete(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    async with worker_rig(stack, skill_dirs, tmp_path, SCRIPT) as rig:
        run_id = await rig.start_run("Think, then say you are done.")
        await eventually(lambda: rig.in_flight(run_id, "invoke_model"), what="the model call")
        await stack.client.get_workflow_handle(workflow_id(run_id)).terminate("by the test")
        followed = await Command.start(*LOGS, run_id, "--follow", env=cli_env(rig), cwd=tmp_path)
        read = await Command.start(*LOGS, run_id, env=cli_env(rig), cwd=tmp_path)
        async with stopping(followed), stopping(read):
            assert await followed.wait() == 1, str(followed)
            assert await read.wait() == 0, str(read)  # a read of the events, not a follower
        # Closed without the run saying how: the workflow's history says.
        assert followed.says(f"run {run_id}: failed: terminated"), str(followed)


async def test_a_bounded_wait_gives_up_with_its_own_exit_code_and_says_how_to_follow_again(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    async with worker_rig(stack, skill_dirs, tmp_path, SCRIPT) as rig:
        env = cli_env(rig, WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS="3")
        command = await Command.start(*RUN, env=env, cwd=tmp_path)
        async with stopping(command):
            run_id = await eventually(lambda: _run_id(command), timeout=60, what="the run id")
            await kill_while_the_model_thinks(rig, run_id)
            code = await command.wait()
        assert code == EXIT_NO_WORKER, command
        assert code not in (0, 1, 2, 130)
        assert command.says(f"run {run_id!r}: no worker answered for"), command
        assert command.says("the run may still be running"), command
        assert command.says(f"skillweave runs logs {run_id} --follow"), command
        assert command.says("WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS"), command
        assert ANSWER not in command.stdout
        # It was still running: a new worker finishes it, and following it again as the
        # message says ends with its outcome.
        await rig.worker.start()
        again = await Command.start(
            "runs", "logs", run_id, "--follow", env=cli_env(rig), cwd=tmp_path
        )
        async with stopping(again):
            assert await again.wait() == 0, again
        assert "completed" in again.stdout
        assert (await rig.engine.result(run_id)).status == "completed"


# --- the API's Server-Sent Events -------------------------------------------------------------


@dataclass
class Stream:
    """A run's Server-Sent Events, read in the background into `events` (each a dict of its
    fields, `data` decoded)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    status: int | None = None

    async def read(self, client: httpx.AsyncClient, url: str, last_event_id: str = "") -> None:
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        async with client.stream("GET", url, headers=headers) as response:
            self.status = response.status_code
            current: dict[str, Any] = {}
            async for line in response.aiter_lines():
                if line.startswith(":"):
                    continue
                if not line:
                    if current:
                        self.events.append(current)
                    current = {}
                    continue
                name, _, value = line.partition(": ")
                current[name] = json.loads(value) if name == "data" else value

    def kinds(self) -> list[str]:
        return [event["event"] for event in self.events]


@contextlib.asynccontextmanager
async def api_on(
    rig: Rig, engine: TemporalEngine, skill_dirs: list[Path], tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """The runs API over `engine` (on the rig's task queue and store)."""
    settings = Settings(
        _env_file=None,
        api={"token": SecretStr(TOKEN)},
        # The worker's default, which the API names to the runs of agents that name none.
        model={"provider": "scripted", "name": rig.worker.env["MODEL__NAME"]},
        skills={"dirs": [str(d) for d in skill_dirs], "uploaded_dir": str(tmp_path / "up")},
    )
    app = create_api(
        settings,
        store=rig.store,
        routers=[skills_router, agents_router, runs_router],
        on_startup=[open_skills, open_agents, open_runs(engine)],
    )
    async with (
        LoopbackServer(app) as server,
        httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        ) as client,
    ):
        yield client


async def start_run(client: httpx.AsyncClient) -> str:
    agent_id = await make_agent(client, name="thinker", skill_ids=[TOOLS])
    response = await client.post(
        "/v1/runs/", data={"agent_id": agent_id, "input": "Think, then say you are done."}
    )
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def test_the_event_stream_notes_the_wait_and_ends_with_the_outcome(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    async with (
        worker_rig(stack, skill_dirs, tmp_path, SCRIPT) as rig,
        api_on(rig, rig.engine, skill_dirs, tmp_path) as client,
    ):
        run_id = await start_run(client)
        stream = Stream()
        reader = asyncio.create_task(stream.read(client, f"/v1/runs/{run_id}/events"))
        try:
            await kill_while_the_model_thinks(rig, run_id)
            await eventually(
                lambda: "waiting_for_worker" in stream.kinds(), timeout=60, what="the note"
            )
            assert not reader.done()
            await rig.worker.start()
            await asyncio.wait_for(reader, 120)
        finally:
            reader.cancel()
        assert stream.status == 200
        kinds = stream.kinds()
        assert kinds[-1] == "run_finished"
        assert stream.events[-1]["data"]["status"] == "completed"
        assert kinds.index("waiting_for_worker") < kinds.index("worker_answered")
        # Notes are not steps: no id, so Last-Event-ID stays on the last step. The killed
        # worker's model call is retried, and that retry is told too.
        notes = [e for e in stream.events if "id" not in e]
        steps = [e for e in stream.events if "id" in e]
        assert {e["event"] for e in notes} <= {"waiting_for_worker", "worker_answered", "retrying"}
        assert {e["event"] for e in steps}.isdisjoint({"waiting_for_worker", "worker_answered"})
        assert steps[0]["event"] == "run_started"
        assert [e["id"] for e in steps] == [str(n) for n in range(1, len(steps) + 1)]
        waiting = next(e for e in notes if e["event"] == "waiting_for_worker")["data"]
        assert waiting["kind"] == "waiting_for_worker"
        assert waiting["run_id"] == run_id
        # The queue the run is on: the configured one, routed to the run's store.
        assert waiting["task_queue"] == rig.engine.task_queue
        assert waiting["task_queue"].startswith(rig.worker.env["WORKFLOW__TASK_QUEUE"] + "@")
        assert waiting["waited_seconds"] > 0


async def test_a_bounded_event_stream_gives_up_with_its_own_event_and_resumes(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    async with worker_rig(stack, skill_dirs, tmp_path, SCRIPT) as rig:
        bounded = TemporalEngine(
            stack.client,
            task_queue=rig.engine.base_task_queue,
            store=rig.store,
            poll_seconds=0.1,
            worker_wait_seconds=3,
        )
        async with api_on(rig, bounded, skill_dirs, tmp_path) as client:
            run_id = await start_run(client)
            stream = Stream()
            reader = asyncio.create_task(stream.read(client, f"/v1/runs/{run_id}/events"))
            try:
                await kill_while_the_model_thinks(rig, run_id)
                await asyncio.wait_for(reader, 60)
            finally:
                reader.cancel()
            assert stream.kinds()[-1] == "worker_wait_expired", stream.events
            expired = stream.events[-1]
            steps = [e for e in stream.events if "id" in e]
            assert "id" not in expired
            assert expired["data"]["last_event_id"] == len(steps)
            assert expired["data"]["run_id"] == run_id
            assert expired["data"]["waited_seconds"] >= 3
            assert "may still be running" in expired["data"]["detail"]
            assert f"Last-Event-ID: {len(steps)}" in expired["data"]["detail"]
            # Still running: a new worker finishes it; a client that reconnects gets the rest.
            await rig.worker.start()
            rest = Stream()
            await asyncio.wait_for(
                rest.read(client, f"/v1/runs/{run_id}/events", last_event_id=str(len(steps))),
                120,
            )
            assert rest.kinds()[-1] == "run_finished"
            assert rest.events[-1]["data"]["status"] == "completed"
            resumed = [e for e in rest.events if "id" in e]  # the steps, notes left out
            assert resumed[0]["id"] == str(len(steps) + 1)
            await stack.client.get_workflow_handle(workflow_id(run_id)).result()


def _run_id(command: Command) -> str | None:
    """The run id `run` prints before it starts the run (``run ID · agent …``)."""
    for line in command.stderr.splitlines():
        if line.startswith("run ") and " · agent " in line:
            return line.split()[1]
    return None
