"""Multi-node, misconfigured: a deployment where some processes are set up wrong still runs
every run right, writes nothing where it must not, and names each mistake in one line where
an operator looks (the process's own log, ``doctor`` with its settings).

The deployment, every part a real process, each node with its own home and working folder:

- started **in reverse order**: manager 1 and worker 1 (store A, the right one) first, while
  neither S3 (``moto_server``) nor the Temporal dev server is up; both wait, their health
  endpoints say what for, and they serve once S3 and Temporal come up;
- worker 2 works on **another store** (bucket B) on the same task queue, its scripts run
  in-process: no run of store A may reach it, and nothing may be written into B;
- a worker on bucket B pointed at manager 1 (on A) can tell at start that it is wrong: it
  refuses to start, in one line naming both stores;
- worker 3 uses manager 2, which is **restarted with another token** after the worker
  started: its script steps wait on the refusal (never a tool result the model reads) until
  manager 2 is restarted with the right one;
- worker 4's manager URL is **dead** (nothing listens there): its script steps wait, say so,
  and move on to a right worker;
- a client on a **store no worker uses** (bucket C) is refused before anything starts.

What must hold: every run of the client completes with the right answer; store B holds no
run, transcript or execution of theirs; each misconfiguration is named in one line in its
process's log and by ``doctor`` run with that process's settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from skillweave.storage import ArtifactRef, S3ArtifactStore
from tests.integration.harness import eventually
from tests.integration.temporal.harness import TOOLS, start_dev_server, unique, write_test_skills
from tests.moto import free_port, moto_server
from tests.reliability.conftest import scale
from tests.reliability.stack import SKILLWEAVE, START_SECONDS, Service, pool_of, steps_script

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.slow,
    pytest.mark.timeout(scale(900, 2400)),
]

RUNS = scale(6, 12)
STEPS = 2
STEP_SECONDS = 0.3
ACCESS_KEY = "misconfigured-access"
SECRET_KEY = "misconfigured-secret-do-not-log"
REGION = "us-east-1"
RIGHT, OTHER, UNUSED = "skillweave-right", "skillweave-other", "skillweave-unused"
QUEUE_SECONDS = "4"
"""How long a worker holds a script step for a manager that does not take it before the step
goes back to Temporal's retries (and maybe to another worker)."""
RUN_SECONDS = 600.0


class Node:
    """One machine: its own home, temp and working folders, skills and model script."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for folder in (root / "home", root / "tmp", root / "work"):
            folder.mkdir(parents=True)
        self.work = root / "work"
        self.skills = write_test_skills(root / "skills")
        self.model = root / "steps.yaml"
        self.model.write_text(steps_script(STEPS, STEP_SECONDS), encoding="utf-8")

    def env(self, **settings: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root / "home"),
            "TMPDIR": str(self.root / "tmp"),
            "SKILLS__DIRS": json.dumps([str(self.skills)]),
            **settings,
        }


async def _healthy(url: str) -> bool:
    """The process's health endpoint says it is ready."""
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            response = await http.get(f"{url}/healthz")
    except httpx.HTTPError:
        return False
    return response.status_code == 200 and response.json().get("ready", True) is True


async def _health(url: str) -> tuple[int, dict[str, object]] | None:
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            response = await http.get(f"{url}/healthz")
    except httpx.HTTPError:
        return None
    with contextlib.suppress(ValueError):
        return response.status_code, response.json()
    return response.status_code, {}


class Deployment:
    """The processes, their settings and the stores, as the docstring draws them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.token = secrets.token_urlsafe(16)
        self.task_queue = unique("misconfigured")
        self.s3_port = free_port()
        self.temporal_port = free_port()
        self.endpoint = f"127.0.0.1:{self.s3_port}"
        self.temporal = {
            "WORKFLOW__EXECUTION_ENGINE": "temporal",
            "WORKFLOW__TEMPORAL_ADDRESS": f"127.0.0.1:{self.temporal_port}",
            "WORKFLOW__TASK_QUEUE": self.task_queue,
        }
        self.services: list[Service] = []
        self.manager_urls: dict[str, str] = {}
        self.health: dict[str, str] = {}
        self.envs: dict[str, dict[str, str]] = {}

    def s3(self, bucket: str) -> dict[str, str]:
        return {
            "STORAGE__BACKEND": "s3",
            "STORAGE__S3_ENDPOINT": self.endpoint,
            "STORAGE__S3_BUCKET": bucket,
            "STORAGE__S3_ACCESS_KEY": ACCESS_KEY,
            "STORAGE__S3_SECRET_KEY": SECRET_KEY,
            "STORAGE__S3_SECURE": "false",
            "STORAGE__S3_REGION": REGION,
            # moto starts empty, after the first services: one may find a bucket before the
            # test makes it (ensure_bucket), and would stop on a missing one.
            "STORAGE__S3_CREATE_BUCKET": "true",
        }

    def store(self, bucket: str) -> S3ArtifactStore:
        return S3ArtifactStore(
            endpoint=self.endpoint,
            bucket=bucket,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region=REGION,
        )

    def manager(self, name: str, *, token: str) -> Service:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        node = Node(self.root / name)
        env = node.env(
            **self.s3(RIGHT),
            SANDBOX__MANAGER_TOKEN=token,
            SANDBOX__HOST="127.0.0.1",
            SANDBOX__PORT=str(port),
            SANDBOX__MANAGER_ID=name,
            SANDBOX__POOL_TARGET="1",
            SANDBOX__POOL_MAX="3",
        )
        self.manager_urls[name] = url
        self.envs[name] = env

        async def ready(_: subprocess.Popen[bytes]) -> bool:
            pool = await pool_of(url, token)
            return pool is not None and pool["ready"] + pool["busy"] >= 1

        service = Service(name, ["manager"], env, node.root, ready, cwd=node.work)
        self.services.append(service)
        return service

    def worker(self, name: str, *, bucket: str, manager_url: str | None) -> Service:
        node = Node(self.root / name)
        metrics = free_port()
        sandbox = (
            {"SANDBOX__MANAGER_URL": manager_url, "SANDBOX__MANAGER_TOKEN": self.token}
            if manager_url
            else {"SANDBOX__POOL_TARGET": "1"}
        )
        env = node.env(
            **self.s3(bucket),
            **self.temporal,
            **sandbox,
            SANDBOX__QUEUE_SECONDS=QUEUE_SECONDS,
            OBSERVABILITY__WORKER_METRICS_PORT=str(metrics),
            WORKFLOW__WORKER_HEARTBEAT_SECONDS="0.5",
            WORKFLOW__HEARTBEAT_TIMEOUT_SECONDS="5",
            WORKFLOW__ACTIVITY_MAX_ATTEMPTS="60",
            MODEL__PROVIDER="scripted",
            MODEL__NAME=str(node.model),
        )
        health = f"http://127.0.0.1:{metrics}"
        self.health[name] = health
        self.envs[name] = env

        async def ready(_: subprocess.Popen[bytes]) -> bool:
            return await _healthy(health)

        argv = ["worker", f"--dir={node.skills}"]
        service = Service(name, argv, env, node.root, ready, cwd=node.work)
        self.services.append(service)
        return service

    def client(self, name: str, *, bucket: str) -> tuple[Node, dict[str, str]]:
        node = Node(self.root / name)
        env = node.env(**self.s3(bucket), **self.temporal)
        self.envs[name] = env
        return node, env

    def logs(self) -> str:
        return "\n".join(service.log() for service in self.services)


async def _run(
    argv: list[str], env: dict[str, str], cwd: Path, *, timeout: float = RUN_SECONDS
) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        SKILLWEAVE,
        *argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        out, err = await process.communicate()
        raise AssertionError(
            f"skillweave {' '.join(argv)} did not end in {timeout:g} s:\n{out!r}\n{err!r}"
        ) from None
    assert process.returncode is not None
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def _one_line_naming(text: str, *words: str) -> str:
    """The one line of `text` naming every one of `words` (case-insensitive)."""
    lines = [line for line in text.splitlines() if all(w.lower() in line.lower() for w in words)]
    assert lines, f"no line names {words!r} in:\n{text[-4000:]}"
    return lines[0]


@pytest_asyncio.fixture(loop_scope="module")
async def deployment(tmp_path: Path) -> AsyncIterator[Deployment]:
    stack = Deployment(tmp_path)
    try:
        yield stack
    finally:
        for service in stack.services:
            service.stop()


async def test_misconfigured_processes_never_fail_corrupt_or_silently_hold_a_run(
    deployment: Deployment, tmp_path: Path
) -> None:
    d = deployment
    (tmp_path / "moto").mkdir()
    manager_1 = d.manager("manager-1", token=d.token)
    worker_1 = d.worker("worker-1", bucket=RIGHT, manager_url=d.manager_urls["manager-1"])

    # --- reverse order: the right manager and worker first, S3 and Temporal not up --------
    for service in (manager_1, worker_1):
        service.starts += 1
        with open(service.logs / f"{service.name}-{service.starts}.log", "wb") as out:
            service.process = subprocess.Popen(
                [SKILLWEAVE, *service.argv],
                cwd=service.cwd,
                env=service.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        service.pids.append(service.process.pid)

    async def waiting_for_dependencies() -> bool:
        for service in (manager_1, worker_1):
            assert service.process is not None
            if service.process.poll() is not None:
                raise AssertionError(f"{service.name} exited instead of waiting:\n{service.log()}")
        # Both serve their health while they wait: 503 from each says they are waiting.
        worker = await _health(d.health["worker-1"])
        manager = await _health(d.manager_urls["manager-1"])
        return all(h is not None and h[0] == 503 for h in (worker, manager))

    await eventually(
        waiting_for_dependencies, timeout=START_SECONDS, what="worker-1 and manager-1 waiting"
    )
    status, said = await _health(d.health["worker-1"]) or (0, {})
    assert status == 503, said
    assert said.get("ready") is False, said

    with moto_server(tmp_path / "moto", port=d.s3_port):
        stores = {bucket: d.store(bucket) for bucket in (RIGHT, OTHER, UNUSED)}
        for store in stores.values():
            await store.ensure_bucket()
        env: WorkflowEnvironment = await start_dev_server(
            stores[RIGHT],  # type: ignore[arg-type]
            port=d.temporal_port,
        )
        try:
            await _runs_run_right_around_the_misconfigured(d, manager_1, worker_1, stores)
        except BaseException:
            print(d.logs())
            raise
        finally:
            for service in d.services:
                service.stop()
            await env.shutdown()
            for store in stores.values():
                await store.aclose()


async def _runs_run_right_around_the_misconfigured(
    d: Deployment, manager_1: Service, worker_1: Service, stores: dict[str, S3ArtifactStore]
) -> None:
    # The waiting pair comes up by itself once its dependencies do.
    for service in (manager_1, worker_1):

        async def serving(service: Service = service) -> bool:
            assert service.process is not None
            if service.process.poll() is not None:
                raise AssertionError(f"{service.name} exited:\n{service.log()}")
            return await service.ready(service.process)

        await eventually(serving, timeout=START_SECONDS, what=f"{service.name} serving")
    assert "Traceback" not in manager_1.log(), manager_1.log()

    # Manager 2 takes the deployment's token at first: worker 3 starts past its checks.
    manager_2 = d.manager("manager-2", token=d.token)
    await manager_2.start()
    worker_2 = d.worker("worker-2", bucket=OTHER, manager_url=None)
    worker_3 = d.worker("worker-3", bucket=RIGHT, manager_url=d.manager_urls["manager-2"])
    dead = f"http://127.0.0.1:{free_port()}"
    worker_4 = d.worker("worker-4", bucket=RIGHT, manager_url=dead)
    await asyncio.gather(worker_2.start(), worker_3.start(), worker_4.start())

    # A worker on bucket B with manager 1 (on A) can tell: it refuses to start, in one line.
    wrong = Node(d.root / "worker-wrong")
    wrong_env = wrong.env(
        **d.s3(OTHER),
        **d.temporal,
        SANDBOX__MANAGER_URL=d.manager_urls["manager-1"],
        SANDBOX__MANAGER_TOKEN=d.token,
        MODEL__PROVIDER="scripted",
        MODEL__NAME=str(wrong.model),
    )
    code, out, err = await _run(
        ["worker", f"--dir={wrong.skills}"], wrong_env, wrong.work, timeout=120
    )
    assert code != 0, out + err
    _one_line_naming(err, "store", "STORAGE__")

    # Manager 2 is restarted with another token: worker 3's token is now the wrong one.
    manager_2.stop()
    manager_2.env = {**manager_2.env, "SANDBOX__MANAGER_TOKEN": "another-" + d.token}
    other_token = manager_2.env["SANDBOX__MANAGER_TOKEN"]
    manager_2.ready = _pool_ready(d.manager_urls["manager-2"], other_token)
    await manager_2.start()

    # A client on a store no worker uses is refused before anything starts.
    lost, lost_env = d.client("client-unused", bucket=UNUSED)
    agent = lost.work / "agent.yaml"
    agent.write_text(f"name: misconfigured\nskills: [{TOOLS}]\n", encoding="utf-8")
    code, out, err = await _run(
        ["run", "--engine", "temporal", "--json", "--agent", str(agent), "Take the steps."],
        {**lost_env, "MODEL__PROVIDER": "scripted", "MODEL__NAME": str(lost.model)},
        lost.work,
        timeout=120,
    )
    assert code != 0, out + err
    _one_line_naming(err, "store", "worker")

    # The client's runs, all at once.
    node, client_env = d.client("client", bucket=RIGHT)
    agent = node.work / "agent.yaml"
    agent.write_text(f"name: misconfigured\nskills: [{TOOLS}]\n", encoding="utf-8")
    runs = [
        _run(
            ["run", "--engine", "temporal", "--json", "--agent", str(agent), f"Steps ({n})."],
            client_env,
            node.work,
        )
        for n in range(RUNS)
    ]
    running = asyncio.ensure_future(asyncio.gather(*runs))

    # Worker 3 names the refusal in its log; then manager 2 gets the right token back.
    await eventually(
        lambda: "SANDBOX__MANAGER_TOKEN" in worker_3.log() or running.done(),
        timeout=RUN_SECONDS,
        what="worker-3 naming the refused token",
    )
    manager_2.stop()
    manager_2.env = {**manager_2.env, "SANDBOX__MANAGER_TOKEN": d.token}
    manager_2.ready = _pool_ready(d.manager_urls["manager-2"], d.token)
    await manager_2.start()

    results = await running
    right = stores[RIGHT]
    for code, out, err in results:
        assert code == 0, out[-3000:] + err[-3000:]
        result = [json.loads(line) for line in out.splitlines() if line.startswith("{")][-1]
        assert result["status"] == "completed", result
        assert result["script_runs"] == STEPS, result
        outputs = [ArtifactRef.model_validate(o) for o in result["outputs"]]
        assert [ref.key.rpartition("/")[2] for ref in outputs] == [
            f"step{step}.txt" for step in range(1, STEPS + 1)
        ]
        for step, ref in enumerate(outputs, start=1):
            assert (await right.get_bytes(ref)).decode() == f"step{step} after {STEP_SECONDS:g} s\n"
        assert result["answer"] == f"Done: {outputs[-1].key}"
        # The model never read a refusal as its script's result.
        assert "bearer token" not in out.lower(), out

    # Nothing of theirs in store B: no run, transcript or execution.
    written = [ref.key for ref in await stores[OTHER].list("")]
    theirs = [k for k in written if k.startswith(("runs/", "executions/", "transcript"))]
    assert theirs == [], theirs

    # Each mistake is named in one line where the operator looks: the process's own log...
    _one_line_naming(worker_1.log(), "waiting", "temporal")
    _one_line_naming(manager_1.log(), "waiting", "store")
    _one_line_naming(worker_2.log(), "other workers", d.task_queue)
    _one_line_naming(worker_3.log(), "SANDBOX__MANAGER_TOKEN")
    _one_line_naming(worker_4.log(), "waiting", "manager")
    # ... and `doctor` with that process's settings.
    doctors = {
        "worker-2": ("store",),
        "worker-3": ("token",),
        "worker-4": ("cannot reach",),
    }
    manager_2.stop()
    manager_2.env = {**manager_2.env, "SANDBOX__MANAGER_TOKEN": "another-" + d.token}
    manager_2.ready = _pool_ready(d.manager_urls["manager-2"], other_token)
    await manager_2.start()
    for name, words in doctors.items():
        code, out, err = await _run(["doctor"], d.envs[name], d.root / name / "work", timeout=180)
        assert code != 0 or "warn" in out + err, (name, out, err)
        _one_line_naming(out + err, *words)
    # A client that sets a worker's limit is told it has no effect there.
    code, out, err = await _run(
        ["doctor"],
        {**client_env, "WORKFLOW__SCRIPT_TIMEOUT_SECONDS": "2.5"},
        node.work,
        timeout=180,
    )
    _one_line_naming(out + err, "WORKFLOW__SCRIPT_TIMEOUT_SECONDS", "worker")


def _pool_ready(url: str, token: str) -> Callable[[subprocess.Popen[bytes]], Awaitable[bool]]:
    """Ready once the manager at `url` takes `token` and has a sandbox up."""

    async def ready(_: subprocess.Popen[bytes]) -> bool:
        pool = await pool_of(url, token)
        return pool is not None and pool["ready"] + pool["busy"] >= 1

    return ready
