"""The embedded stack as real processes, for killing: ``skillweave manager`` and
``skillweave worker`` each in a process of its own (started, SIGKILLed, started again on the
same port and task queue), the Temporal dev server of the engine suite, a local store or a
``moto_server`` S3 endpoint (:func:`tests.moto.moto_server`), and the sandbox executors the manager
starts (found by the ``--parent-pid`` they are given). Several managers and workers log apart
by their ``name``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from sandbox_executor.zygote import EXECUTOR_NAME
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS

SKILLWEAVE = str(Path(sys.executable).with_name("skillweave"))
"""The ``skillweave`` command of this environment."""

START_SECONDS = 180.0
"""How long a service may take to serve after a start: an interpreter, its imports and (the
manager) a warm sandbox, on a machine another CPU-heavy process may be sharing."""


class Service:
    """One long-running ``skillweave`` command: started, killed, started again.

    Args:
        name: for its log files (``NAME-N.log`` under `logs`, N counting starts).
        argv: the command after ``skillweave``.
        env: its whole environment.
        ready: awaited after each start; true once the service serves.
        cwd: its working directory (default: `logs`).
    """

    def __init__(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        logs: Path,
        ready: Callable[[subprocess.Popen[bytes]], Awaitable[bool]],
        *,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = argv
        self.env = env
        self.logs = logs
        self.ready = ready
        self.cwd = cwd or logs
        self.process: subprocess.Popen[bytes] | None = None
        self.pids: list[int] = []
        self.starts = 0
        self.kills = 0

    async def start(self) -> None:
        self.starts += 1
        with open(self.logs / f"{self.name}-{self.starts}.log", "wb") as out:
            process = subprocess.Popen(
                [SKILLWEAVE, *self.argv],
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.process = process
        self.pids.append(process.pid)

        async def serving() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"{self.name} exited ({process.returncode}):\n{self.log()}")
            return await self.ready(process)

        await eventually(serving, timeout=START_SECONDS, every=0.1, what=f"{self.name} serving")

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind. Counted only when it killed the running service;
        a service that had exited by itself is a failure, not a kill."""
        process = self.process
        assert process is not None
        if process.poll() is not None:
            raise AssertionError(
                f"{self.name} had exited ({process.returncode}) before its kill:\n{self.log()}"
            )
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        if process.returncode == -signal.SIGKILL:
            self.kills += 1

    def stop(self) -> None:
        """SIGTERM, the way a supervisor stops it (then SIGKILL if it hangs)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-6000:]}"
            for path in sorted(self.logs.glob(f"{self.name}-*.log"))
        )


def manager_service(
    env: dict[str, str],
    logs: Path,
    url: str,
    token: str,
    *,
    name: str = "manager",
    cwd: Path | None = None,
) -> Service:
    """``skillweave manager`` on the port of `url`: ready once it serves and a sandbox of its
    pool has started. Ready or already claimed: while steps wait for sandboxes, each one is
    claimed as it starts, and a pool with one *ready* would mean that the runs had drained."""

    async def ready(_: subprocess.Popen[bytes]) -> bool:
        pool = await pool_of(url, token)
        return pool is not None and pool["ready"] + pool["busy"] >= 1

    return Service(name, ["manager"], env, logs, ready, cwd=cwd)


async def pool_of(url: str, token: str) -> dict[str, Any] | None:
    """The manager's ``GET /sandbox/pool`` (ready, busy, starting...); None while it does not
    answer (killed, or starting)."""
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.get(f"{url}/sandbox/pool", headers=_auth(token))
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    pool: dict[str, Any] = response.json()
    return pool


def worker_service(
    env: dict[str, str],
    logs: Path,
    client: Client,
    skill_dirs: list[Path],
    *,
    name: str = "worker",
    cwd: Path | None = None,
) -> Service:
    """``skillweave worker`` on ``env["WORKFLOW__TASK_QUEUE"]``: ready once it polls (it
    answers the roll call on that queue once it polls its store's)."""
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=env["WORKFLOW__TASK_QUEUE"]),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    )

    async def ready(process: subprocess.Popen[bytes]) -> bool:
        response = await client.workflow_service.describe_task_queue(request)
        return any(p.identity.startswith(f"{process.pid}@") for p in response.pollers)

    argv = ["worker", *(f"--dir={path}" for path in skill_dirs)]
    return Service(name, argv, env, logs, ready, cwd=cwd)


def steps_script(steps: int, step_seconds: float) -> str:
    """A scripted model that activates the test skill, runs ``scripts/slow.py`` `steps`
    times (each step expects the one before to have succeeded: a failed step, or a refusal
    turned into a tool result, fails the run) and answers with the last step's artifact."""
    turns = [f"  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]"]
    for step in range(1, steps + 1):
        turn = (
            f"  - tool_calls: [{{name: run_skill_script, arguments: {{skill: {TOOLS}, "
            f'script: scripts/slow.py, args: ["{step_seconds}", step{step}]}}}}]'
        )
        if step > 1:
            turn += (
                f"\n    expect: {{tool_results: [{{not_error: true, "
                f'contains: "as step{step - 1}"}}]}}'
            )
        turns.append(turn)
    turns.append(
        f'  - say: "Done: {{{{artifact:step{steps}.txt}}}}"\n'
        f'    expect: {{tool_results: [{{not_error: true, contains: "as step{steps}"}}]}}'
    )
    return "turns:\n" + "\n".join(turns) + "\n"


def executors_of(manager_pids: list[int]) -> list[int]:
    """The pids of live sandbox executors started for any of these manager processes.

    An executor is forked from its pool's zygote, so its command line is the zygote's
    (``python -m sandbox_executor.zygote --parent-pid MANAGER``, kept even once the zygote is
    gone and it is another process's child) and its command name says which it is.
    """
    wanted = {str(pid) for pid in manager_pids}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            name = (entry / "comm").read_text().strip()
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state == "Z" or name != EXECUTOR_NAME or b"--parent-pid" not in argv:
            continue
        if argv[argv.index(b"--parent-pid") + 1].decode() in wanted:
            found.append(int(entry.name))
    return found


def kill_pid(pid: int) -> bool:
    """SIGKILL one process; False when it was already gone."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
