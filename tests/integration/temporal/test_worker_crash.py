"""A run survives its worker being killed, twice: once during a script run and once during a
model call, and no script runs twice.

The worker is ``skillweave worker`` in a process of its own, killed with SIGKILL and started again;
the MCP manager runs here, in the test process, so it outlives the worker and counts what it
really ran. The run is started and awaited through the ``TemporalEngine`` as any client would.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.api.enums.v1 import EventType, PendingActivityState, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowHistory

from skillweave.agent import AgentSpec
from skillweave.config import Settings
from skillweave.engines import RunRequest
from skillweave.engines.contract import workflow_id
from skillweave.engines.temporal import TemporalEngine
from skillweave.storage.local import LocalArtifactStore
from tests.integration.harness import Manager, eventually
from tests.integration.temporal.harness import TOOLS, Stack, unique

pytestmark = pytest.mark.asyncio(loop_scope="session")

SKILLWEAVE = str(Path(sys.executable).with_name("skillweave"))
"""The ``skillweave`` command of this environment."""

HEARTBEAT_TIMEOUT = 3.0
"""How long a killed worker's activity goes unnoticed before it is retried elsewhere."""

SCRIPT = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
  - tool_calls:
      - {{name: run_skill_script,
         arguments: {{skill: {TOOLS}, script: scripts/slow.py, args: ["2", first]}}}}
  - delay_seconds: 4
    tool_calls:
      - name: run_skill_script
        arguments: {{skill: {TOOLS}, script: scripts/upper.py,
                    inputs: ["{{{{artifact:first.txt}}}}"]}}
    expect: {{tool_results: [{{not_error: true, contains: "slept 2 s as first"}}]}}
  - say: "Done: {{{{artifact:upper.txt}}}}"
    expect: {{tool_results: [{{not_error: true, contains: "characters upper-cased"}}]}}
"""


class WorkerProcess:
    """``skillweave worker`` in a process of its own: started, killed, started again.

    Args:
        env: its whole environment (the ``WORKFLOW__``, ``SANDBOX__``, ``STORAGE__`` and
            ``MODEL__`` settings).
        skill_dirs: the skill library (``--dir``).
        logs: where each start's output goes (and its working directory).
    """

    def __init__(
        self, client: Client, env: dict[str, str], skill_dirs: list[Path], logs: Path
    ) -> None:
        self.client = client
        self.env = env
        self.skill_dirs = skill_dirs
        self.logs = logs
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0

    async def start(self) -> None:
        """Start a worker and wait until it polls its task queue (a poller with its pid)."""
        self.started += 1
        with open(self.logs / f"worker-{self.started}.log", "wb") as out:
            process = subprocess.Popen(
                [SKILLWEAVE, "worker", *(f"--dir={path}" for path in self.skill_dirs)],
                cwd=self.logs,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.process = process
        request = DescribeTaskQueueRequest(
            namespace=self.client.namespace,
            # The roll call: every worker answers it on the configured queue.
            task_queue=TaskQueue(name=self.env["WORKFLOW__TASK_QUEUE"]),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        )

        async def polling() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"the worker exited:\n{self.log()}")
            response = await self.client.workflow_service.describe_task_queue(request)
            return any(p.identity.startswith(f"{process.pid}@") for p in response.pollers)

        await eventually(polling, timeout=30, every=0.1, what="the worker polling")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no goodbye to the server; its activities are just gone."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        assert self.process.returncode == -signal.SIGKILL

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def log(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')}"
            for path in sorted(self.logs.glob("worker-*.log"))
        )


@dataclass
class Rig:
    """A manager in this process, a ``skillweave worker`` process and an engine on its queue."""

    manager: Manager
    worker: WorkerProcess
    engine: TemporalEngine
    store: LocalArtifactStore
    client: Client

    async def start_run(self, task: str) -> str:
        run_id = unique("worker")
        await self.engine.start(
            RunRequest(run_id=run_id, task=task, agent=AgentSpec(skills=(TOOLS,)))
        )
        return run_id

    async def in_flight(self, run_id: str, activity: str) -> bool:
        description = await self.client.get_workflow_handle(workflow_id(run_id)).describe()
        return any(
            pending.activity_type.name == activity
            and pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
            for pending in description.raw_description.pending_activities
        )

    async def script_running(self, run_id: str) -> bool:
        return (
            await self.in_flight(run_id, "run_skill_script")
            and (await self.manager.pool())["busy"] > 0
        )


@contextlib.asynccontextmanager
async def worker_rig(
    stack: Stack,
    skill_dirs: list[Path],
    tmp_path: Path,
    model_script: str,
    **env: str,
) -> AsyncIterator[Rig]:
    """A :class:`Rig` whose worker's model replays `model_script`; `env` adds settings."""
    token = secrets.token_urlsafe(16)
    settings = Settings(
        _env_file=None, sandbox={"manager_token": SecretStr(token), "pool_target": 2}
    )
    store = LocalArtifactStore(tmp_path / "store")
    script = tmp_path / "model.yaml"
    script.write_text(model_script, encoding="utf-8")
    task_queue = unique("worker")
    async with AsyncExitStack() as exits:
        manager = await exits.enter_async_context(Manager.serving(settings, store=store))
        worker = WorkerProcess(
            stack.client,
            {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "WORKFLOW__TEMPORAL_ADDRESS": stack.temporal_address,
                "WORKFLOW__TASK_QUEUE": task_queue,
                "WORKFLOW__WORKER_HEARTBEAT_SECONDS": "0.5",
                # The worker's limits are the ones its runs run under.
                "WORKFLOW__HEARTBEAT_TIMEOUT_SECONDS": str(HEARTBEAT_TIMEOUT),
                "WORKFLOW__ACTIVITY_MAX_ATTEMPTS": "5",
                "SANDBOX__MANAGER_URL": manager.url,
                "SANDBOX__MANAGER_TOKEN": token,
                "STORAGE__LOCAL_DIR": str(store.root),
                "MODEL__PROVIDER": "scripted",
                "MODEL__NAME": str(script),
                **env,
            },
            skill_dirs,
            tmp_path,
        )
        exits.callback(worker.stop)
        engine = TemporalEngine(stack.client, task_queue=task_queue, poll_seconds=0.1, store=store)
        await worker.start()
        try:
            yield Rig(manager, worker, engine, store, stack.client)
        except BaseException:
            print(worker.log())
            raise


async def test_a_run_survives_its_worker_killed_in_a_script_run_and_in_a_model_call(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    async with worker_rig(stack, skill_dirs, tmp_path, SCRIPT) as rig:
        manager, worker, engine, store = rig.manager, rig.worker, rig.engine, rig.store
        run_id = await rig.start_run("Sleep on it, then upper-case what you wrote.")
        handle = stack.client.get_workflow_handle(workflow_id(run_id))

        async def script_running() -> bool:
            return await rig.script_running(run_id)

        def in_flight(activity: str) -> Awaitable[bool]:
            return rig.in_flight(run_id, activity)

        # 1. Killed while the first script sleeps in its sandbox.
        await eventually(script_running, timeout=30, what="the first script running")
        worker.kill()
        await worker.start()
        # 2. Killed while the model thinks (4 s) about the first script's result.
        await eventually(
            lambda: _after_first_script(manager), timeout=30, what="the first script done"
        )
        await eventually(
            lambda: in_flight("invoke_model"), timeout=30, what="the model call in flight"
        )
        worker.kill()
        await worker.start()
        result = await engine.result(run_id)
        history = await handle.fetch_history()
        ran = await manager.executions()
        succeeded = await manager.executions("succeeded")
        deduplicated = await manager.deduplicated()
        claims = [ref for ref in await store.list("executions/") if ref.key.endswith(".claim")]

    assert worker.started == 3
    assert result.status == "completed", result.reason
    assert result.script_runs == 2
    first, upper = result.outputs
    assert await store.get_bytes(first) == b"first after 2 s\n"
    assert await store.get_bytes(upper) == b"FIRST AFTER 2 S\n"
    assert result.answer == f"Done: {upper.key}"
    # Each script ran exactly once, although the first one's activity ran twice: the retry
    # reached the manager under the same idempotency key and got the first run's result.
    assert (ran, succeeded) == (2, 2)
    assert len(claims) == 2
    assert deduplicated >= 1
    # The kills really hit those two calls: each was retried on the new worker.
    attempts = _final_attempts(history)
    assert max(attempts["run_skill_script"]) >= 2, attempts
    assert max(attempts["invoke_model"]) >= 2, attempts


DRAIN_SCRIPT = f"""
turns:
  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]
  - tool_calls:
      - {{name: run_skill_script,
         arguments: {{skill: {TOOLS}, script: scripts/slow.py, args: ["3", drained]}}}}
  - say: "Done: {{{{artifact:drained.txt}}}}"
    expect: {{tool_results: [{{not_error: true, contains: "slept 3 s as drained"}}]}}
"""


async def test_a_worker_stopped_with_sigterm_lets_its_script_step_finish(
    stack: Stack, skill_dirs: list[Path], tmp_path: Path
) -> None:
    """Draining: SIGTERM stops the worker polling at once, but the script step it is running
    finishes (within WORKFLOW__WORKER_DRAIN_SECONDS) and is reported, not cancelled and run
    again; the run completes on the next worker with the script run once."""
    async with worker_rig(
        stack, skill_dirs, tmp_path, DRAIN_SCRIPT, WORKFLOW__WORKER_DRAIN_SECONDS="20"
    ) as rig:
        run_id = await rig.start_run("Sleep on it.")
        await eventually(lambda: rig.script_running(run_id), timeout=30, what="the script running")
        process = rig.worker.process
        assert process is not None
        process.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(process.wait, 30)
        # Gone only once its step finished: the run succeeded, none was cancelled.
        assert code == 0, rig.worker.log()
        assert await rig.manager.executions("succeeded") == 1
        assert await rig.manager.executions("cancelled") == 0
        assert "stopped: worker" in rig.worker.log()  # its last line (cli.in_flight)
        await rig.worker.start()
        result = await rig.engine.result(run_id)
        assert result.status == "completed", result.reason
        assert await rig.manager.executions() == 1  # not run again by the second worker


async def _after_first_script(manager: Manager) -> bool:
    return await manager.executions("succeeded") >= 1


def _final_attempts(history: WorkflowHistory) -> dict[str, list[int]]:
    """The attempt each activity of the history ended on, by activity name."""
    names: dict[int, str] = {}
    attempts: dict[str, list[int]] = {}
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attributes = event.activity_task_scheduled_event_attributes
            names[event.event_id] = attributes.activity_type.name
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attributes = event.activity_task_started_event_attributes
            name = names[attributes.scheduled_event_id]
            attempts.setdefault(name, []).append(attributes.attempt)
    return attempts
