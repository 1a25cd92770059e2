"""Chaos: runs keep running while the worker, the MCP manager and sandbox executors are killed
(SIGKILL, in a seeded random order and at seeded moments, several times each) and started
again.

Everything is a real process: the Temporal dev server, ``skillweave worker``, ``skillweave
manager`` and the executors it starts. Each run activates the test skill and runs a few slow
scripts in a chain, then answers with the last one's artifact. Every run must finish with the
right answer and outputs, every step's script must have one stored, successful execution (a
script interrupted by a kill runs again only because nothing of that run was kept), the pool
must return to its target with nothing claimed, and no executor may outlive the stack.

Nothing here is timed by the clock, so the test holds on a loaded machine: kills wait for the
runs' progress (stored step results), each lands while a run still has steps to run (a reserve
run is started first when none has), only kills that hit a live process count, and every
kill planned must have been made. Waits fail when progress stalls, not after a fixed time.
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
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from skillweave.agent import AgentSpec
from skillweave.engines import RunRequest, RunResult
from skillweave.engines.temporal import TemporalEngine
from skillweave.storage.local import LocalArtifactStore
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, start_dev_server, unique, write_test_skills
from tests.reliability.conftest import scale
from tests.reliability.stack import (
    executors_of,
    kill_pid,
    manager_service,
    worker_service,
)

# The last resort only: the waits below fail as soon as progress stalls.
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(scale(900, 3600))]

RUNS = scale(6, 20)
STEPS = 3
STEP_SECONDS = scale(0.4, 1.0)
POOL_TARGET = 2
KILLS = scale(
    {"worker": 1, "manager": 1, "executor": 2},
    {"worker": 3, "manager": 3, "executor": 8},
)
SEED = int(os.environ.get("SKILLWEAVE_CHAOS_SEED", "7"))
STALL_SECONDS = 240.0
"""How long the runs may go without a step stored or a run finished (a kill's restart and
the retries after it included) before the test fails."""


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
                # The workers' limits are the ones the runs run under.
                "WORKFLOW__HEARTBEAT_TIMEOUT_SECONDS": "3",
                "WORKFLOW__ACTIVITY_MAX_ATTEMPTS": "40",
                "SANDBOX__MANAGER_URL": self.manager_url,
                "MODEL__PROVIDER": "scripted",
                "MODEL__NAME": str(script),
            },
            root,
            env.client,
            [skills],
        )
        self.executor_kills = 0

    async def act(self, target: str, rng: random.Random) -> None:
        """Kill `target` once (and start the service again): a live process, or none counts."""
        if target == "executor":
            await self._kill_an_executor(rng)
            return
        service = self.worker if target == "worker" else self.manager
        service.kill()
        await asyncio.sleep(rng.uniform(0.1, 1.0))
        await service.start()

    async def _kill_an_executor(self, rng: random.Random) -> None:
        """SIGKILL one live executor of the running manager (a warm or a busy one), waiting
        for the pool to have one; one that exits under our hand is not a kill: pick again."""
        assert self.manager.process is not None
        manager = [self.manager.process.pid]

        async def killed() -> bool:
            pids = executors_of(manager)
            return bool(pids) and kill_pid(rng.choice(pids))

        await eventually(killed, timeout=STALL_SECONDS, every=0.1, what="an executor to kill")
        self.executor_kills += 1

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


class Runs:
    """The runs under test: started, followed to their results, and their progress as the
    store shows it (one stored result per step, by run)."""

    def __init__(self, engine: TemporalEngine, store: LocalArtifactStore) -> None:
        self.engine = engine
        self.store = store
        self.ids: list[str] = []
        self._results: list[asyncio.Task[RunResult]] = []
        self._stored: dict[str, str] = {}  # result key -> its run

    async def start(self) -> str:
        run_id = unique(f"chaos-{len(self.ids)}")
        await self.engine.start(
            RunRequest(
                run_id=run_id,
                task="Take the steps, then say where the last output is.",
                agent=AgentSpec(skills=(TOOLS,)),
            )
        )
        self.ids.append(run_id)
        self._results.append(asyncio.create_task(self.engine.result(run_id)))
        return run_id

    def finished(self) -> int:
        """Runs whose result is in; a run that raised fails the test here and now."""
        done = [task for task in self._results if task.done()]
        for task in done:
            task.result()
        return len(done)

    async def stored(self) -> dict[str, int]:
        """Steps with a stored result, by run (result records are written once: each key is
        read once)."""
        for ref in await self.store.list("executions/"):
            if ref.key.endswith(".json") and ref.key not in self._stored:
                record = json.loads(await self.store.get_bytes(ref))
                self._stored[ref.key] = str(record["result"]["run_id"])
        return {run: list(self._stored.values()).count(run) for run in self.ids}

    async def progress(self) -> int:
        return sum((await self.stored()).values())

    async def with_steps_ahead(self) -> list[str]:
        """Runs with two steps or more still to store: steps of a run run one after another,
        so each has a step not even started, and cannot finish within a kill's delay."""
        stored = await self.stored()
        return [run for run in self.ids if stored[run] <= STEPS - 2]

    async def wait(self, *, steps: int | None = None) -> None:
        """Until `steps` steps are stored (all runs finished, when None). Fails when neither
        a step is stored nor a run finishes for STALL_SECONDS: a loaded machine is slow, not
        stuck."""
        seen = (-1, -1)
        deadline = time.monotonic() + STALL_SECONDS
        while True:
            finished, stored = self.finished(), await self.progress()
            if finished == len(self.ids) or (steps is not None and stored >= steps):
                return
            if (finished, stored) != seen:
                seen, deadline = (finished, stored), time.monotonic() + STALL_SECONDS
            elif time.monotonic() > deadline:
                raise AssertionError(
                    f"no progress for {STALL_SECONDS:g} s: {stored} steps stored, "
                    f"{finished} of {len(self.ids)} runs finished"
                )
            await asyncio.sleep(0.1)

    async def results(self) -> list[RunResult]:
        await self.wait()
        return [task.result() for task in self._results]

    def cancel(self) -> None:
        for task in self._results:
            task.cancel()


@dataclass(frozen=True)
class Kill:
    """A kill made: its target, the steps stored then, and the runs that had steps ahead."""

    target: str
    stored: int
    runs_ahead: int


async def _unleash(chaos: Chaos, rng: random.Random, runs: Runs) -> list[Kill]:
    """Kill each target the planned number of times, in a seeded random order, spread over
    the runs' progress: the i-th of n kills waits until i/(n+1) of the steps before the runs'
    last ones have a stored result, then lands a random moment later. Every kill lands while
    a run has at least two steps ahead: when none has (the runs ran ahead of the kills, as a
    loaded machine may make them), a reserve run is started first. So every planned kill is
    made while runs run, however fast or slow the machine."""
    plan = [target for target, count in KILLS.items() for _ in range(count)]
    rng.shuffle(plan)
    before_last = RUNS * (STEPS - 1)
    made: list[Kill] = []
    for number, target in enumerate(plan, start=1):
        await runs.wait(steps=before_last * number // (len(plan) + 1))
        if not await runs.with_steps_ahead():
            await runs.start()
        ahead, stored = len(await runs.with_steps_ahead()), await runs.progress()
        await asyncio.sleep(rng.uniform(0, STEP_SECONDS / 2))
        await chaos.act(target, rng)
        made.append(Kill(target, stored, ahead))
    return made


async def _execution_records(store: LocalArtifactStore, runs: set[str]) -> list[dict[str, object]]:
    records = []
    for ref in await store.list("executions/"):
        if ref.key.endswith(".json"):
            record = json.loads(await store.get_bytes(ref))
            if record["result"]["run_id"] in runs:
                records.append(record["result"])
    return records


async def test_runs_finish_right_while_processes_are_killed(
    chaos: Chaos, figures: Callable[..., None]
) -> None:
    rng = random.Random(SEED)
    engine = TemporalEngine(
        chaos.env.client, task_queue=chaos.task_queue, poll_seconds=0.2, store=chaos.store
    )
    runs = Runs(engine, chaos.store)
    started = time.monotonic()
    try:
        for _ in range(RUNS):
            await runs.start()
        kills = await _unleash(chaos, rng, runs)
        results = await runs.results()
    except BaseException:
        runs.cancel()
        print(chaos.logs())
        raise
    elapsed = time.monotonic() - started
    ids = runs.ids

    failures = [r for r in results if r.status != "completed"]
    records = await _execution_records(chaos.store, set(ids))
    succeeded = [r for r in records if r["status"] == "succeeded"]
    figures(
        runs=len(ids),
        kills=chaos.kills,
        scripts_run=len(succeeded),
        scripts_expected=len(ids) * STEPS,
        failures=len(failures),
        steps_per_second=len(ids) * STEPS / elapsed,
        note=(
            f"kills: worker {chaos.worker.kills}, manager {chaos.manager.kills}, executor "
            f"{chaos.executor_kills} (seed {SEED}), at steps stored "
            f"{', '.join(f'{k.target} {k.stored}' for k in kills)}; "
            f"{len(ids) - RUNS} reserve runs; {elapsed:.0f} s"
        ),
    )
    assert not failures, [(r.run_id, r.reason) for r in failures]
    # Every planned kill was made, on a live process, while a run had steps ahead.
    assert sorted(k.target for k in kills) == sorted(t for t, n in KILLS.items() for _ in range(n))
    assert all(k.runs_ahead >= 1 for k in kills), kills
    assert chaos.worker.kills == KILLS["worker"]
    assert chaos.manager.kills == KILLS["manager"]
    assert chaos.executor_kills == KILLS["executor"]
    for result in results:
        assert result.script_runs == STEPS
        assert len(result.outputs) == STEPS
        for step, ref in enumerate(result.outputs, start=1):
            assert ref.key.startswith(f"runs/{result.run_id}/")
            text = (await chaos.store.get_bytes(ref)).decode()
            assert text == f"step{step} after {STEP_SECONDS:g} s\n"
        assert result.answer == f"Done: {result.outputs[-1].key}"
    # One stored, successful execution per step of every run: none lost, none doubled.
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
            await eventually(
                settled, timeout=STALL_SECONDS, every=0.5, what="the pool back at its target"
            )
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
        lambda: not executors_of(chaos.manager.pids), timeout=60, what="no executor left"
    )
