"""Services start in any order (issue 41 item 3): a ``skillweave worker`` started before
Temporal and S3, a ``skillweave manager`` started before S3 and a ``skillweave api`` started
before Temporal do not exit: each warns once, waits with back-off, answers 503 on ``/healthz``
naming what it waits for (and 503 + Retry-After on its routes), then 200 once it is up; a run
then runs on the worker. A configuration that can never work still stops at once, in one line.
Real processes: the ``skillweave`` command, ``moto_server`` and the Temporal dev server, both
started late on ports chosen up front."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from skillweave.storage.local import LocalArtifactStore
from tests.integration.temporal.harness import start_dev_server, unique
from tests.moto import free_port, moto_server

pytestmark = pytest.mark.timeout(300)

TOKEN = "the-token-of-this-test"
PROBLEM_JSON = "application/problem+json"


def environment(tmp_path: Path, **values: str) -> dict[str, str]:
    """A whole environment: this machine's PATH, a home of the test's, an empty library, a
    scripted model that says hello, and `values`."""
    script = tmp_path / "model.yaml"
    script.write_text("turns: [{say: hello from the late stack}]\n")
    (tmp_path / "no-skills").mkdir(exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "no-skills")]),
        "SANDBOX__ISOLATION": "none",
        "MODEL__NAME": str(script),
        **values,
    }


def s3_settings(endpoint: str) -> dict[str, str]:
    return {
        "STORAGE__BACKEND": "s3",
        "STORAGE__S3_ENDPOINT": endpoint,
        "STORAGE__S3_BUCKET": "late-bucket",
        "STORAGE__S3_ACCESS_KEY": "testing",
        "STORAGE__S3_SECRET_KEY": "testing",
        "STORAGE__S3_CREATE_BUCKET": "true",  # moto starts empty
    }


@contextmanager
def service(env: dict[str, str], logs: Path, *argv: str) -> Iterator[subprocess.Popen[bytes]]:
    """``skillweave ARGV`` running (its stdout and stderr in `logs`), stopped at the end."""
    with (logs / "out.txt").open("wb") as out, (logs / "err.txt").open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "skillweave.cli", *argv],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def said(logs: Path) -> str:
    return (logs / "out.txt").read_text(errors="replace") + (logs / "err.txt").read_text(
        errors="replace"
    )


async def health_until(
    url: str,
    process: subprocess.Popen[bytes],
    logs: Path,
    check: Callable[[httpx.Response], bool],
    *,
    seconds: float = 90,
) -> httpx.Response:
    """The first answer of `url` that passes `check`, while `process` keeps running."""
    deadline = time.monotonic() + seconds
    last: httpx.Response | str = "no answer"
    async with httpx.AsyncClient(timeout=5) as client:
        while time.monotonic() < deadline:
            assert process.poll() is None, f"exited {process.returncode}:\n{said(logs)}"
            try:
                answer = await client.get(url)
            except httpx.HTTPError as exc:
                last = repr(exc)
            else:
                if check(answer):
                    return answer
                last = answer
            await asyncio.sleep(0.3)
    shown = last.text if isinstance(last, httpx.Response) else last
    raise AssertionError(f"{url}: never as expected; last {shown}\n{said(logs)}")


def waits_for(*names: str) -> Callable[[httpx.Response], bool]:
    def check(answer: httpx.Response) -> bool:
        if answer.status_code != 503:
            return False
        body = answer.json()
        return body["ready"] is False and {w["on"] for w in body["waiting_for"]} == set(names)

    return check


@dataclass(frozen=True)
class LateStore:
    """A ``skillweave manager`` started before its S3 store, waiting for it."""

    base: str
    endpoint: str
    s3_port: int
    process: subprocess.Popen[bytes]
    logs: Path
    waiting: httpx.Response
    """Its ``/healthz`` while it waits for the store."""


@asynccontextmanager
async def manager_before_s3(tmp_path: Path) -> AsyncIterator[LateStore]:
    """A manager on an S3 endpoint nothing listens on yet (start it with ``moto_server(...,
    port=late.s3_port)``), once its ``/healthz`` says it waits for the store."""
    s3_port, port = free_port(), free_port()
    endpoint = f"127.0.0.1:{s3_port}"
    env = environment(
        tmp_path,
        SANDBOX__PORT=str(port),
        SANDBOX__MANAGER_TOKEN=TOKEN,
        SANDBOX__POOL_TARGET="1",
        **s3_settings(endpoint),
    )
    logs = tmp_path / "manager"
    logs.mkdir()
    base = f"http://127.0.0.1:{port}"
    with service(env, logs, "manager") as manager:
        waiting = await health_until(f"{base}/healthz", manager, logs, waits_for("store"))
        yield LateStore(base, endpoint, s3_port, manager, logs, waiting)


def is_ready(answer: httpx.Response) -> bool:
    return answer.status_code == 200 and answer.json()["ready"] is True


def warned_once(text: str, what: str) -> None:
    assert text.count(f"waiting for {what}") == 1, text
    assert "retrying with back-off" in text, text


async def test_a_worker_started_before_temporal_and_s3_waits_then_runs_a_run(
    tmp_path: Path,
) -> None:
    temporal_port, s3_port, health_port = free_port(), free_port(), free_port()
    address, endpoint = f"127.0.0.1:{temporal_port}", f"127.0.0.1:{s3_port}"
    env = environment(
        tmp_path,
        WORKFLOW__TEMPORAL_ADDRESS=address,
        WORKFLOW__TASK_QUEUE=unique("late"),
        OBSERVABILITY__WORKER_METRICS_PORT=str(health_port),
        **s3_settings(endpoint),
    )
    logs = tmp_path / "worker"
    logs.mkdir()
    healthz = f"http://127.0.0.1:{health_port}/healthz"
    with service(env, logs, "worker") as worker:
        first = await health_until(healthz, worker, logs, waits_for("temporal", "store"))
        details = " ".join(w["detail"] for w in first.json()["waiting_for"])
        assert f"Temporal at {address}" in details, details
        assert endpoint in details, details
        env_server = await start_dev_server(
            LocalArtifactStore(tmp_path / "unused"), port=temporal_port
        )
        try:
            await health_until(healthz, worker, logs, waits_for("store"))
            with moto_server(tmp_path, port=s3_port):
                await health_until(healthz, worker, logs, is_ready)
                text = said(logs)
                warned_once(text, f"Temporal at {address}")
                warned_once(text, "the S3 store at")
                assert f"Temporal at {address} is up after" in text, text
                assert "Traceback" not in text, text
                metrics = httpx.get(f"http://127.0.0.1:{health_port}/metrics", timeout=5)
                assert "skillweave_model_calls" in metrics.text
                run = await asyncio.to_thread(
                    subprocess.run,
                    [
                        sys.executable,
                        "-m",
                        "skillweave.cli",
                        "run",
                        "Say hello.",
                        "--engine",
                        "temporal",
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                )
                assert run.returncode == 0, run.stdout + run.stderr + said(logs)
                assert "hello from the late stack" in run.stdout, run.stdout
        finally:
            await env_server.shutdown()


async def test_a_manager_started_before_s3_waits_without_a_traceback(tmp_path: Path) -> None:
    async with manager_before_s3(tmp_path) as late:
        base, endpoint, s3_port = late.base, late.endpoint, late.s3_port
        manager, logs, waiting = late.process, late.logs, late.waiting
        assert waiting.json()["status"] == "starting"
        assert endpoint in waiting.json()["waiting_for"][0]["detail"]
        refused = httpx.post(
            f"{base}/sandbox/execute",
            json={},
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=5,
        )
        assert refused.status_code == 503, refused.text
        assert refused.headers["content-type"].startswith(PROBLEM_JSON)
        assert int(refused.headers["retry-after"]) > 0
        assert "waiting for the S3 store" in refused.json()["detail"]
        with moto_server(tmp_path, port=s3_port):
            ready = await health_until(f"{base}/healthz", manager, logs, is_ready)
            body = ready.json()
            assert body["status"] == "ok", body
            assert body["store_id"], body
            assert body["manager_id"], body
            pool = httpx.get(
                f"{base}/sandbox/pool", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5
            )
            assert pool.status_code == 200, pool.text
        errors = (logs / "err.txt").read_text(errors="replace")
        assert "Traceback" not in errors, errors
        warned_once(errors, "the S3 store at")
        assert "is up after" in errors, errors


async def test_the_api_started_before_temporal_waits_then_serves(tmp_path: Path) -> None:
    temporal_port, port = free_port(), free_port()
    address = f"127.0.0.1:{temporal_port}"
    env = environment(
        tmp_path,
        WORKFLOW__TEMPORAL_ADDRESS=address,
        STORAGE__LOCAL_DIR=str(tmp_path / "store"),
        API__PORT=str(port),
        API__TOKEN=TOKEN,
    )
    logs = tmp_path / "api"
    logs.mkdir()
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with service(env, logs, "api") as api:
        await health_until(f"{base}/healthz", api, logs, waits_for("temporal"))
        refused = httpx.get(f"{base}/v1/runs/", headers=auth, timeout=5)
        assert refused.status_code == 503, refused.text
        assert refused.headers["content-type"].startswith(PROBLEM_JSON)
        assert int(refused.headers["retry-after"]) > 0
        assert f"Temporal at {address}" in refused.json()["detail"]
        assert httpx.get(f"{base}/v1/runs/", timeout=5).status_code == 401  # the token first
        env_server = await start_dev_server(
            LocalArtifactStore(tmp_path / "store"), port=temporal_port
        )
        try:
            await health_until(f"{base}/healthz", api, logs, is_ready)
            runs = httpx.get(f"{base}/v1/runs/", headers=auth, timeout=5)
            assert runs.status_code == 200, runs.text
        finally:
            await env_server.shutdown()
    text = said(logs)
    warned_once(text, f"Temporal at {address}")
    assert "Traceback" not in text, text


@pytest.mark.parametrize("command", ["worker", "api"])
def test_an_address_that_can_never_work_stops_at_once_in_one_line(
    tmp_path: Path, command: str
) -> None:
    env = environment(
        tmp_path,
        WORKFLOW__TEMPORAL_ADDRESS="not-an-address",
        STORAGE__LOCAL_DIR=str(tmp_path / "store"),
        API__TOKEN=TOKEN,
        API__PORT=str(free_port()),
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "skillweave.cli", command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0, done.stdout + done.stderr
    assert time.monotonic() - started < 30
    errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, done.stderr
    assert "'not-an-address' is not HOST:PORT" in errors[0], done.stderr
    assert "waiting for" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
