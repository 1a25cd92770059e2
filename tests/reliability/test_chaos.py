"""Chaos: jobs keep running while the worker, the MCP manager and sandbox executors are killed
(SIGKILL, at seeded random moments, several times each) and started again.

Everything is a real process: the Temporal dev server, ``skillweave worker``, ``skillweave
manager`` and the executors it starts. Each job activates the test skill and runs a few slow
scripts in a chain, then answers with the last one's artifact. Every job must finish with the
right answer and outputs, every step's script must have one stored, successful execution (a
script interrupted by a kill runs again only because nothing of that run was kept), the pool
must return to its target with nothing claimed, and no executor may outlive the stack.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from skillweave.agent import AgentSpec
from skillweave.engines import JobRequest, JobResult
from skillweave.engines.contract import ActivityTimeouts
from skillweave.engines.temporal import TemporalEngine
from skillweave.storage.local import LocalArtifactStore
from tests.integration.temporal.harness import (
    TOOLS,
    eventually,
    start_dev_server,
    unique,
    write_test_skills,
)
from tests.reliability.conftest import scale
from tests.reliability.stack import (
    executors_of,
    kill_pid,
    manager_service,
    worker_service,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(scale(300, 3600))]

JOBS = scale(6, 20)
STEPS = 3
STEP_SECONDS = scale(0.4, 1.0)
POOL_TARGET = 2
KILLS = scale(
    {"worker": 1, "manager": 1, "executor": 2},
    {"worker": 3, "manager": 3, "executor": 8},
)
SEED = int(os.environ.get("SKILLWEAVE_CHAOS_SEED", "7"))


def model_script() -> str:
    turns = [f"  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]"]
    for step in range(1, STEPS + 1):
        turn = (
            f"  - tool_calls: [{{name: run_skill_script, arguments: {{skill: {TOOLS}, "
            f'script: scripts/slow.py, args: ["{STEP_SECONDS}", step{step}]}}}}]'
        )
        if step > 1:
            previous = f"as step{step - 1}"
            turn += f'\n    expect: {{tool_results: [{{not_error: true, contains: "{previous}"}}]}}'
        turns.append(turn)
    turns.append(
        f'  - say: "Done: {{{{artifact:step{STEPS}.txt}}}}"\n'
        f'    expect: {{tool_results: [{{not_error: true, contains: "as step{STEPS}"}}]}}'
    )
    return "turns:\n" + "\n".join(turns) + "\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Chaos:
    """The stack as processes, and the kills done to it."""

    def __init__(self, root: Path, env: WorkflowEnvironment, store: LocalArtifactStore) -> None:
        self.root = root
        self.env = env
        self.store = store
        self.token = secrets.token_urlsafe(16)
        port = free_port()
        self.manager_url = f"http://127.0.0.1:{port}"
        self.task_queue = unique("chaos")
        skills = write_test_skills(root / "skills")
        script = root / "model.yaml"
        script.write_text(model_script(), encoding="utf-8")
        common = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root),
            "STORAGE__LOCAL_DIR": str(store.root),
            "SANDBOX__MANAGER_TOKEN": self.token,
            "SKILLS__DIRS": json.dumps([str(skills)]),
        }
        self.manager = manager_service(
            {
                **common,
                "SANDBOX__HOST": "127.0.0.1",
                "SANDBOX__PORT": str(port),
                "SANDBOX__POOL_TARGET": str(POOL_TARGET),
                "SANDBOX__POOL_MAX": "8",
                # A killed manager's claims lapse after this: short, so that a test run is too.
                "SANDBOX__CLAIM_LEASE_SECONDS": "4",
            },
            root,
            self.manager_url,
            self.token,
        )
        self.worker = worker_service(
            {
                **common,
                "WORKFLOW__TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
                "WORKFLOW__TASK_QUEUE": self.task_queue,
                "WORKFLOW__WORKER_HEARTBEAT_SECONDS": "0.5",
                "SANDBOX__MANAGER_URL": self.manager_url,
                "MODEL__PROVIDER": "scripted",
                "MODEL__NAME": str(script),
            },
            root,
            env.client,
            [skills],
        )
        self.executor_kills = 0
        self.done: list[str] = []

    async def act(self, target: str, rng: random.Random) -> None:
        if target == "executor":
            pids = executors_of(self.manager.pids)
            if pids and kill_pid(rng.choice(pids)):
                self.executor_kills += 1
            return
        service = self.worker if target == "worker" else self.manager
        service.kill()
        await asyncio.sleep(rng.uniform(0.1, 1.0))
        await service.start()

    @property
    def kills(self) -> int:
        return self.worker.kills + self.manager.kills + self.executor_kills

    def logs(self) -> str:
        return f"{self.worker.log()}\n{self.manager.log()}"


@pytest_asyncio.fixture(loop_scope="module")
async def chaos(tmp_path: Path) -> AsyncIterator[Chaos]:
    store = LocalArtifactStore(tmp_path / "store")
    env = await start_dev_server(store)
    stack = Chaos(tmp_path, env, store)
    try:
        await stack.manager.start()
        await stack.worker.start()
        yield stack
    finally:
        stack.worker.stop()
        stack.manager.stop()
        await env.shutdown()


async def _run_jobs(engine: TemporalEngine, ids: list[str]) -> list[JobResult]:
    for job_id in ids:
        await engine.start(
            JobRequest(
                job_id=job_id,
                task="Take the steps, then say where the last output is.",
                agent=AgentSpec(skills=(TOOLS,)),
            )
        )
    return list(await asyncio.gather(*(engine.result(job_id) for job_id in ids)))


async def _unleash(chaos: Chaos, rng: random.Random, jobs: asyncio.Task[object]) -> None:
    """Kill each target the planned number of times, in a seeded random order, spread over
    the jobs' progress: the i-th kill waits until i/(n+1) of all steps have a stored result,
    then lands a random moment into the next step. Tying kills to progress (rather than to
    the clock) makes every planned kill happen while jobs still run, however fast the
    machine."""
    plan = [target for target, count in KILLS.items() for _ in range(count)]
    rng.shuffle(plan)
    total = JOBS * STEPS
    for number, target in enumerate(plan, start=1):
        threshold = total * number // (len(plan) + 1)

        async def reached(threshold: int = threshold) -> bool:
            finished = [r for r in await chaos.store.list("executions/") if r.key.endswith(".json")]
            return jobs.done() or len(finished) >= threshold

        await eventually(reached, timeout=scale(120, 600), every=0.1, what=f"{threshold} steps")
        if jobs.done():
            return
        await asyncio.sleep(rng.uniform(0, STEP_SECONDS / 2))
        await chaos.act(target, rng)


async def _execution_records(store: LocalArtifactStore, runs: set[str]) -> list[dict[str, object]]:
    records = []
    for ref in await store.list("executions/"):
        if ref.key.endswith(".json"):
            record = json.loads(await store.get_bytes(ref))
            if record["result"]["run_id"] in runs:
                records.append(record["result"])
    return records


async def test_jobs_finish_right_while_processes_are_killed(
    chaos: Chaos, figures: Callable[..., None]
) -> None:
    rng = random.Random(SEED)
    engine = TemporalEngine(
        chaos.env.client,
        task_queue=chaos.task_queue,
        timeouts=ActivityTimeouts(heartbeat_seconds=3.0, max_attempts=40),
        poll_seconds=0.2,
    )
    ids = [unique(f"chaos-{n}") for n in range(JOBS)]
    started = time.monotonic()
    jobs = asyncio.create_task(_run_jobs(engine, ids))
    try:
        await _unleash(chaos, rng, jobs)
        results = await asyncio.wait_for(jobs, timeout=scale(240, 1800))
    except BaseException:
        jobs.cancel()
        print(chaos.logs())
        raise
    elapsed = time.monotonic() - started

    failures = [r for r in results if r.status != "completed"]
    records = await _execution_records(chaos.store, set(ids))
    succeeded = [r for r in records if r["status"] == "succeeded"]
    figures(
        jobs=JOBS,
        kills=chaos.kills,
        scripts_run=len(succeeded),
        scripts_expected=JOBS * STEPS,
        failures=len(failures),
        steps_per_second=JOBS * STEPS / elapsed,
        note=(
            f"kills: worker {chaos.worker.kills}, manager {chaos.manager.kills}, executor "
            f"{chaos.executor_kills} (seed {SEED}); {elapsed:.0f} s"
        ),
    )
    assert not failures, [(r.job_id, r.reason) for r in failures]
    assert chaos.worker.kills == KILLS["worker"]
    assert chaos.manager.kills == KILLS["manager"]
    for result in results:
        assert result.script_runs == STEPS
        assert len(result.outputs) == STEPS
        for step, ref in enumerate(result.outputs, start=1):
            assert ref.key.startswith(f"runs/{result.job_id}/")
            text = (await chaos.store.get_bytes(ref)).decode()
            assert text == f"step{step} after {STEP_SECONDS:g} s\n"
        assert result.answer == f"Done: {result.outputs[-1].key}"
    # One stored, successful execution per step of every job: none lost, none doubled.
    per_run: dict[str, int] = {}
    for record in succeeded:
        per_run[str(record["run_id"])] = per_run.get(str(record["run_id"]), 0) + 1
    assert per_run == dict.fromkeys(ids, STEPS)

    # The pool is back at its target, nothing claimed; no claim is left without its result.
    async with httpx.AsyncClient(
        base_url=chaos.manager_url, headers={"Authorization": f"Bearer {chaos.token}"}
    ) as http:
        seen: list[dict[str, object]] = []

        async def settled() -> bool:
            pool = (await http.get("/sandbox/pool")).json()
            seen.append(pool)
            return pool["busy"] == 0 and pool["starting"] == 0 and pool["ready"] == POOL_TARGET

        try:
            await eventually(settled, timeout=30, every=0.5, what="the pool back at its target")
        except AssertionError:
            raise AssertionError(f"the pool is not back at its target: {seen[-1]}") from None
    keys = {ref.key for ref in await chaos.store.list("executions/")}
    open_claims = [
        key for key in keys if ".claim" in key and f"{key.partition('.claim')[0]}.json" not in keys
    ]
    assert open_claims == []

    # Stopped, the stack leaves no executor behind (nor did the killed managers).
    chaos.worker.stop()
    chaos.manager.stop()
    await eventually(
        lambda: not executors_of(chaos.manager.pids), timeout=20, what="no executor left"
    )
