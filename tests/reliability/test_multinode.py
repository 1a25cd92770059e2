"""Multi-node: concurrent runs on a deployment spread over several "machines" finish right
while a worker and a manager are killed mid-script.

The deployment, every part a real process: a Temporal dev server and a ``moto_server`` S3
endpoint shared by all; two ``skillweave manager`` processes (their own ports and
``SANDBOX__MANAGER_ID``, one token, one store, local warm pools); two ``skillweave worker``
processes on one task queue, the first using the first manager, the second the second; and a
client node whose ``skillweave run --engine temporal --json`` processes run the runs, one
process a run, all at once. Each node has its own home, temp folder, working directory, copy
of the skill library and copy of the model scripts; a model profile (``unmet``) names a
script by each node's own path, as a deployment configures a model on every machine.

Each run activates the test skill and runs ``scripts/slow.py`` in a chain of steps, then
answers with the last one's artifact; one more run, on the ``unmet`` model, runs one step and
then fails (its model expects what the step never prints). The first worker is SIGKILLed
while its manager runs a script, the second manager while it runs one (more kills of each
under ``make soak``); each is started again (same port, same id).

What must hold: every ``skillweave run`` exits by its run's outcome (0 and the right answer,
1 for the run built to fail); every step of every run has exactly one stored execution
result, successful; both workers ran activities; a third node reads a run's outputs from the
store (``skillweave runs artifacts``); both pools settle with no claim left open, and no
executor outlives its manager.

Nothing is timed by the clock: the kills wait for the runs' progress (stored step results)
and for a script in flight on the target's manager, a reserve run is started when no run has
steps ahead, and waits fail when progress stalls, not after a fixed time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from skillweave.cli.exits import EXIT_PROBLEM
from skillweave.engines.contract import workflow_id
from skillweave.storage import ArtifactRef, S3ArtifactStore
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, start_dev_server, unique, write_test_skills
from tests.moto import free_port, moto_server
from tests.reliability.conftest import scale
from tests.reliability.stack import (
    SKILLWEAVE,
    Service,
    executors_of,
    manager_service,
    pool_of,
    steps_script,
    worker_service,
)

# The last resort only: the waits below fail as soon as progress stalls.
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(scale(900, 3600))]

RUNS = scale(6, 16)
"""Runs that must complete; one more is built to fail."""
STEPS = 3
STEP_SECONDS = scale(0.5, 1.0)
POOL_TARGET = 2
POOL_MAX = 4
CLAIM_LEASE_SECONDS = 3
"""Short, with a short clock skew, so that a killed manager's claims lapse fast."""
CLOCK_SKEW_SECONDS = 1
POLL_SECONDS = 0.1
STALL_SECONDS = 240.0
"""How long the runs may go without a step stored or a run ended (a kill's restart and the
retries after it included) before the test fails."""
BUCKET = "skillweave-multinode"
ACCESS_KEY = "multinode-access"
SECRET_KEY = "multinode-secret-do-not-log"
REGION = "us-east-1"
KILLS = scale(
    ["worker-1", "manager-2"],
    ["worker-1", "manager-2", "worker-2", "manager-1", "worker-1", "manager-2"],
)
"""SIGKILLs in order, each mid-script. Worker N while manager N runs a script for it: the
activity is retried on a worker (maybe the other, on the other manager) and finds the
script's one result (in progress, then stored). Manager N while it runs one: its claim
lapses, and the retry runs the script again on a fresh sandbox, of either manager."""
UNMET = "unmet"
"""The model profile of the run built to fail."""
NEVER_PRINTED = "a line no step prints"


def unmet_script() -> str:
    """The model of the run built to fail: one step, then an expectation it cannot meet."""
    return (
        "turns:\n"
        f"  - tool_calls: [{{name: activate_skill, arguments: {{name: {TOOLS}}}}}]\n"
        f"  - tool_calls: [{{name: run_skill_script, arguments: {{skill: {TOOLS}, "
        f'script: scripts/slow.py, args: ["{STEP_SECONDS}", step1]}}}}]\n'
        f'  - say: "never said"\n'
        f'    expect: {{tool_results: [{{contains: "{NEVER_PRINTED}"}}]}}\n'
    )


class Node:
    """One machine of the deployment: its own home, temp folder and working directory, its
    copy of the skill library and of the model scripts, and its logs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for folder in (self.home, self.tmp, self.work):
            folder.mkdir(parents=True)
        self.skills = write_test_skills(root / "skills")
        self.steps_model = root / "models" / "steps.yaml"
        self.unmet_model = root / "models" / "unmet.yaml"
        self.steps_model.parent.mkdir()
        self.steps_model.write_text(steps_script(STEPS, STEP_SECONDS), encoding="utf-8")
        self.unmet_model.write_text(unmet_script(), encoding="utf-8")

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def work(self) -> Path:
        return self.root / "work"

    def env(self, shared: dict[str, str], **settings: str) -> dict[str, str]:
        """The node's whole environment: its own folders, the deployment's `shared`
        settings, and `settings` of its own."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "SKILLS__DIRS": json.dumps([str(self.skills)]),
            f"MODEL__PROFILES__{UNMET.upper()}__PROVIDER": "scripted",
            f"MODEL__PROFILES__{UNMET.upper()}__NAME": str(self.unmet_model),
            **shared,
            **settings,
        }


class Cluster:
    """The deployment as processes: two managers, two workers (worker N uses manager N),
    a client node and a reader node, over one dev server and one S3 endpoint."""

    def __init__(
        self, root: Path, env: WorkflowEnvironment, store: S3ArtifactStore, endpoint: str
    ) -> None:
        self.env = env
        self.store = store
        self.token = secrets.token_urlsafe(16)
        self.task_queue = unique("multinode")
        temporal = {
            "WORKFLOW__EXECUTION_ENGINE": "temporal",
            "WORKFLOW__TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
            "WORKFLOW__TASK_QUEUE": self.task_queue,
        }
        s3 = {
            "STORAGE__BACKEND": "s3",
            "STORAGE__S3_ENDPOINT": endpoint,
            "STORAGE__S3_BUCKET": BUCKET,
            "STORAGE__S3_ACCESS_KEY": ACCESS_KEY,
            "STORAGE__S3_SECRET_KEY": SECRET_KEY,
            "STORAGE__S3_SECURE": "false",
            "STORAGE__S3_REGION": REGION,
        }
        self.urls: list[str] = []
        self.managers: list[Service] = []
        self.workers: list[Service] = []
        for number in (1, 2):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            name = f"manager-{number}"
            node = Node(root / name)
            manager_env = node.env(
                s3,
                SANDBOX__MANAGER_TOKEN=self.token,
                SANDBOX__HOST="127.0.0.1",
                SANDBOX__PORT=str(port),
                SANDBOX__MANAGER_ID=name,
                SANDBOX__POOL_TARGET=str(POOL_TARGET),
                SANDBOX__POOL_MAX=str(POOL_MAX),
                SANDBOX__CLAIM_LEASE_SECONDS=str(CLAIM_LEASE_SECONDS),
                SANDBOX__CLOCK_SKEW_SECONDS=str(CLOCK_SKEW_SECONDS),
            )
            self.urls.append(url)
            self.managers.append(
                manager_service(manager_env, node.root, url, self.token, name=name, cwd=node.work)
            )
            name = f"worker-{number}"
            node = Node(root / name)
            worker_env = node.env(
                {**s3, **temporal},
                SANDBOX__MANAGER_TOKEN=self.token,
                SANDBOX__MANAGER_URL=url,
                WORKFLOW__WORKER_HEARTBEAT_SECONDS="0.5",
                MODEL__PROVIDER="scripted",
                MODEL__NAME=str(node.steps_model),
            )
            self.workers.append(
                worker_service(
                    worker_env, node.root, env.client, [node.skills], name=name, cwd=node.work
                )
            )
        self.client = Node(root / "client")
        self.client_env = self.client.env(
            {**s3, **temporal},
            # Retried soon when a worker dies under an activity; many tries, for the kills.
            WORKFLOW__HEARTBEAT_TIMEOUT_SECONDS="3",
            WORKFLOW__ACTIVITY_TIMEOUT_SECONDS="30",
            WORKFLOW__ACTIVITY_MAX_ATTEMPTS="40",
        )
        self.agent = self.client.work / "agent.yaml"
        self.agent.write_text(f"name: multinode\nskills: [{TOOLS}]\n", encoding="utf-8")
        self.reader = Node(root / "reader")
        self.reader_env = self.reader.env(s3)

    def target(self, name: str) -> tuple[Service, str]:
        """The service called `name` and the URL of the manager whose scripts it serves
        (worker N uses manager N)."""
        (service,) = [service for service in self.services if service.name == name]
        return service, self.urls[int(name.rpartition("-")[2]) - 1]

    @property
    def services(self) -> list[Service]:
        return [*self.managers, *self.workers]

    def logs(self) -> str:
        return "\n".join(service.log() for service in self.services)


@pytest_asyncio.fixture(loop_scope="module")
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    (tmp_path / "moto").mkdir()
    with moto_server(tmp_path / "moto") as endpoint:
        store = S3ArtifactStore(
            endpoint=endpoint,
            bucket=BUCKET,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region=REGION,
        )
        # Made once here: every process would otherwise race to create it.
        await store.ensure_bucket()
        env = await start_dev_server(store)
        stack = Cluster(tmp_path, env, store, endpoint)
        try:
            await asyncio.gather(*(manager.start() for manager in stack.managers))
            await asyncio.gather(*(worker.start() for worker in stack.workers))
            yield stack
        finally:
            for service in stack.services:
                service.stop()
            await env.shutdown()
            await store.aclose()


@dataclass
class Run:
    """One ``skillweave run`` process of the client: one run."""

    number: int
    fails: bool
    """Built to fail (the ``unmet`` model)."""
    process: subprocess.Popen[bytes]
    out: Path
    err: Path

    def outcome(self) -> dict[str, Any]:
        """The result line of ``--json``: the run's id, status, answer, outputs..."""
        for line in reversed(self.out.read_text(errors="replace").splitlines()):
            with contextlib.suppress(ValueError):
                result = json.loads(line)
                if isinstance(result, dict) and result.get("kind") == "result":
                    return result
        raise AssertionError(f"run {self.number} printed no result:\n{self.show()}")

    def show(self) -> str:
        return (
            f"--- run {self.number} (exit {self.process.returncode})\n"
            f"{self.out.read_text(errors='replace')[-3000:]}\n"
            f"{self.err.read_text(errors='replace')[-3000:]}"
        )


class Runs:
    """The client's runs, and the runs' progress as the store shows it."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.all: list[Run] = []
        self.stored: dict[str, int] = {}
        """Stored step results by run."""
        self._run_of: dict[str, str] = {}  # result key -> its run

    def start(self, *, fails: bool = False) -> Run:
        client = self.cluster.client
        number = len(self.all) + 1
        out, err = client.root / f"run-{number}.out", client.root / f"run-{number}.err"
        model = ["--model", UNMET] if fails else []
        argv = [SKILLWEAVE, "run", "--engine", "temporal", "--json", "--agent"]
        argv += [str(self.cluster.agent), *model, f"Take the steps ({number})."]
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen(
                argv,
                cwd=client.work,
                env=self.cluster.client_env,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
            )
        run = Run(number, fails, process, out, err)
        self.all.append(run)
        return run

    def finished(self) -> int:
        return sum(run.process.poll() is not None for run in self.all)

    async def refresh(self) -> int:
        """Read the step results stored since the last call (a result record is written once:
        each key is read once) into :attr:`stored`; returns the steps stored in all."""
        for ref in await self.cluster.store.list("executions/"):
            if ref.key.endswith(".json") and ref.key not in self._run_of:
                record = json.loads(await self.cluster.store.get_bytes(ref))
                run = str(record["result"]["run_id"])
                self._run_of[ref.key] = run
                self.stored[run] = self.stored.get(run, 0) + 1
        return self.steps

    @property
    def steps(self) -> int:
        """Steps stored in all, as of the last :meth:`refresh`."""
        return len(self._run_of)

    def ahead(self) -> int:
        """Runs (of those that complete) with two steps or more still to store, as of the
        last :meth:`refresh`: their steps run one after another, so each has a step not even
        started. The run built to fail stores one step at most, so no run with more is it."""
        near_end = sum(count >= STEPS - 1 for count in self.stored.values())
        return sum(not run.fails for run in self.all) - near_end

    async def until(self, done: Callable[[], Awaitable[bool]], what: str) -> None:
        """Until `done` (asked after each :meth:`refresh`); fails when no step is stored and
        no run ends for STALL_SECONDS (a loaded machine is slow, not stuck)."""
        seen = (-1, -1)
        deadline = time.monotonic() + STALL_SECONDS
        while True:
            now = (self.finished(), await self.refresh())
            if await done():
                return
            if now != seen:
                seen, deadline = now, time.monotonic() + STALL_SECONDS
            elif time.monotonic() > deadline:
                raise AssertionError(
                    f"no progress for {STALL_SECONDS:g} s waiting for {what}: {now[1]} steps "
                    f"stored, {now[0]} of {len(self.all)} runs ended"
                )
            await asyncio.sleep(POLL_SECONDS)

    async def wait(self, *, steps: int | None = None) -> None:
        """Until `steps` steps are stored (every run ended, when None)."""

        async def done() -> bool:
            if self.finished() == len(self.all):
                return True
            return steps is not None and self.steps >= steps

        await self.until(done, f"{steps} steps stored" if steps else "every run to end")

    def stop(self) -> None:
        for run in self.all:
            if run.process.poll() is None:
                run.process.kill()
                run.process.wait(timeout=30)


@dataclass(frozen=True)
class Kill:
    """A kill made: its target, the steps stored then, the runs with steps ahead, and the
    scripts its manager was running."""

    target: str
    stored: int
    runs_ahead: int
    busy: int


async def kill_mid_script(
    cluster: Cluster, runs: Runs, service: Service, manager_url: str, *, after_steps: int
) -> Kill:
    """Once `after_steps` steps are stored, SIGKILL `service` while the manager at
    `manager_url` runs a script (the manager itself, or the worker that uses it) and a run has
    steps ahead (a reserve run is started when none has), then start it again."""
    await runs.wait(steps=after_steps)
    busy = 0

    async def mid_script() -> bool:
        nonlocal busy
        if runs.ahead() == 0:
            runs.start()
            return False
        pool = await pool_of(manager_url, cluster.token)
        busy = pool["busy"] if pool is not None else 0
        return busy >= 1

    await runs.until(mid_script, f"a script on {manager_url} to kill {service.name} under")
    stored, ahead = runs.steps, runs.ahead()
    service.kill()
    await service.start()
    return Kill(service.name, stored, ahead, busy)


async def run_artifacts(cluster: Cluster, run: str, dest: Path) -> tuple[int, str, str]:
    """``skillweave runs artifacts RUN --out DEST --json`` on the reader node."""
    process = await asyncio.create_subprocess_exec(
        SKILLWEAVE,
        "runs",
        "artifacts",
        run,
        "--out",
        str(dest),
        "--json",
        cwd=cluster.reader.work,
        env=cluster.reader_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


async def activity_workers(cluster: Cluster, runs: list[str]) -> dict[str, int]:
    """Activities each worker ran to their end, from the runs' histories (the identity of
    an activity's started event is its worker's, ``PID@HOST``)."""
    by_pid = {pid: worker.name for worker in cluster.workers for pid in worker.pids}
    counts = dict.fromkeys((worker.name for worker in cluster.workers), 0)
    for run in runs:
        history = await cluster.env.client.get_workflow_handle(workflow_id(run)).fetch_history()
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                identity = event.activity_task_started_event_attributes.identity
                pid = int(identity.partition("@")[0]) if identity[:1].isdigit() else -1
                if pid in by_pid:
                    counts[by_pid[pid]] += 1
    return counts


async def pool_settles(url: str, token: str) -> None:
    """Until the manager's pool has nothing claimed or starting and is back at its target."""
    pool: dict[str, Any] | None = None

    async def settled() -> bool:
        nonlocal pool
        pool = await pool_of(url, token)
        if pool is None:
            return False
        return pool["busy"] == pool["starting"] == 0 and pool["ready"] == POOL_TARGET

    try:
        await eventually(settled, timeout=STALL_SECONDS, every=0.5, what=f"{url} settled")
    except AssertionError:
        raise AssertionError(f"the pool of {url} did not settle: {pool}") from None


async def test_runs_finish_right_across_nodes_while_a_worker_and_a_manager_die(
    cluster: Cluster, figures: Callable[..., None], tmp_path: Path
) -> None:
    runs = Runs(cluster)
    started = time.monotonic()
    try:
        for number in range(RUNS + 1):
            runs.start(fails=number == RUNS // 2)
        before_last = RUNS * (STEPS - 1)
        kills = []
        for number, target in enumerate(KILLS, start=1):
            service, manager_url = cluster.target(target)
            after_steps = before_last * number // (len(KILLS) + 1)
            kills.append(
                await kill_mid_script(cluster, runs, service, manager_url, after_steps=after_steps)
            )
        await runs.wait()
    except BaseException:
        runs.stop()
        print(cluster.logs())
        print("\n".join(run.show() for run in runs.all))
        raise
    elapsed = time.monotonic() - started

    shown = "\n".join(run.show() for run in runs.all)
    outcomes = {run.number: run.outcome() for run in runs.all}
    run_ids = {run.number: str(outcomes[run.number]["run_id"]) for run in runs.all}
    completing = [run for run in runs.all if not run.fails]
    (failing,) = [run for run in runs.all if run.fails]
    records = []
    for ref in await cluster.store.list("executions/"):
        if ref.key.endswith(".json"):
            records.append(json.loads(await cluster.store.get_bytes(ref))["result"])
    succeeded = [r for r in records if r["status"] == "succeeded"]
    unexpected = [run for run in completing if run.process.returncode != 0]
    # A claim of attempt 2 or later: a run's claim lapsed (its manager killed), another ran it.
    taken_over = sum(".claim." in ref.key for ref in await cluster.store.list("executions/"))
    ran = await activity_workers(cluster, list(run_ids.values()))
    figures(
        runs=len(runs.all),
        kills=sum(service.kills for service in cluster.services),
        scripts_run=len(succeeded),
        scripts_expected=len(completing) * STEPS + 1,
        failures=len(unexpected),
        steps_per_second=(len(completing) * STEPS + 1) / elapsed,
        note=(
            f"2 managers, 2 workers, S3 (moto); kills at steps stored "
            f"{', '.join(f'{k.target} {k.stored} ({k.busy} busy)' for k in kills)}; "
            f"{taken_over} claims taken over; activities by worker "
            f"{', '.join(f'{name} {count}' for name, count in ran.items())}; "
            f"{len(completing) - RUNS} reserve runs; 1 run built to fail; {elapsed:.0f} s"
        ),
    )

    # Every `skillweave run` exits by its run's outcome: 0 and the answer, or 1 and why.
    assert not unexpected, shown
    assert failing.process.returncode == EXIT_PROBLEM, failing.show()
    failed = outcomes[failing.number]
    assert failed["status"] == "failed", failed
    assert NEVER_PRINTED in str(failed["reason"]), failed
    for run in completing:
        result = outcomes[run.number]
        assert result["status"] == "completed", run.show()
        assert result["script_runs"] == STEPS
        outputs = [ArtifactRef.model_validate(output) for output in result["outputs"]]
        assert [ref.key.rpartition("/")[2] for ref in outputs] == [
            f"step{step}.txt" for step in range(1, STEPS + 1)
        ]
        for step, ref in enumerate(outputs, start=1):
            assert ref.key.startswith(f"runs/{result['run_id']}/")
            text = (await cluster.store.get_bytes(ref)).decode()
            assert text == f"step{step} after {STEP_SECONDS:g} s\n"
        assert result["answer"] == f"Done: {outputs[-1].key}"

    # Every planned kill was made, on a live process, mid-script, while runs had steps ahead.
    assert {s.name: s.kills for s in cluster.services} == {
        s.name: KILLS.count(s.name) for s in cluster.services
    }
    assert all(k.busy >= 1 and k.runs_ahead >= 1 for k in kills), kills

    # One stored execution result per step of every run, each a success: none lost, none
    # doubled (a script interrupted with its manager ran again only because nothing of that
    # run was kept).
    per_run: dict[str, int] = {}
    for record in records:
        per_run[str(record["run_id"])] = per_run.get(str(record["run_id"]), 0) + 1
    expected = {run_ids[run.number]: STEPS for run in completing}
    expected[run_ids[failing.number]] = 1
    assert per_run == expected
    assert len(succeeded) == len(records), [r for r in records if r["status"] != "succeeded"]

    # Both workers ran activities of the runs.
    assert all(count >= 1 for count in ran.values()), ran

    # Another node reads a run's outputs from the store.
    run = run_ids[completing[0].number]
    dest = tmp_path / "downloaded"
    code, out, err = await run_artifacts(cluster, run, dest)
    assert code == 0, err
    listed = json.loads(out)
    assert sorted(row["path"].rpartition("/")[2] for row in listed if row["kind"] == "output") == [
        f"step{step}.txt" for step in range(1, STEPS + 1)
    ]
    for step in range(1, STEPS + 1):
        text = (dest / f"step{step}.txt").read_text(encoding="utf-8")
        assert text == f"step{step} after {STEP_SECONDS:g} s\n"

    # Both pools settle: nothing claimed, back at their target; no claim is left open.
    for url in cluster.urls:
        await pool_settles(url, cluster.token)
    keys = {ref.key for ref in await cluster.store.list("executions/")}
    open_claims = [
        key for key in keys if ".claim" in key and f"{key.partition('.claim')[0]}.json" not in keys
    ]
    assert open_claims == []

    # Stopped, the managers leave no executor behind (nor did the killed one).
    for service in cluster.services:
        service.stop()
    pids = [pid for service in cluster.managers for pid in service.pids]
    await eventually(lambda: not executors_of(pids), timeout=60, what="no executor left")
