"""Ctrl-C on `skillweave dev` or `skillweave worker` with a run in flight (issue 39, item 7):
they stop with no traceback (dev at once, a worker after its drain), and their last line names
the runs left in flight and when they resume. Real subprocesses, as a user types them:
`skillweave dev`, `skillweave worker`, `skillweave run`."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

SLOW = "model: slow\nturns:\n  - say: thinking\n    delay_seconds: 120\n  - say: done\n"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "skills").mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "skills")]),
        **extra,
    }


def _skillweave(*argv: str) -> list[str]:
    return [sys.executable, "-m", "skillweave.cli", *argv]


def _listed(run: str, env: dict[str, str]) -> None:
    """Wait until `skillweave runs list` shows `run` (the server lists a new run a moment
    after it starts)."""
    deadline = time.monotonic() + 30
    while True:
        listed = subprocess.run(
            _skillweave("runs", "list"), env=env, capture_output=True, text=True, check=False
        )
        if run in listed.stdout:
            return
        assert time.monotonic() < deadline, listed.stdout + listed.stderr
        time.sleep(0.5)


@pytest.fixture
def dev(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`skillweave dev` on free ports with a slow scripted model, and its Temporal address."""
    (tmp_path / "slow.yaml").write_text(SLOW, encoding="utf-8")
    argv = _skillweave(
        "dev",
        "--port",
        "0",
        "--ui-port",
        "0",
        "--db-file",
        str(tmp_path / "temporal.db"),
        "--model",
        f"scripted:{tmp_path / 'slow.yaml'}",
    )
    with (tmp_path / "dev.err").open("w") as errors:
        process = subprocess.Popen(
            argv,
            env=_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            cwd=REPO,
            start_new_session=True,
        )
    assert process.stdout is not None
    try:
        shown = ""
        for line in process.stdout:  # until it says it is ready
            shown += line
            if "Ctrl-C stops everything" in line:
                break
        found = re.search(r"Temporal gRPC\s+(127\.0\.0\.1:\d+)", shown)
        assert found, shown + (tmp_path / "dev.err").read_text()
        yield process, found.group(1)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        process.stdout.close()


def test_ctrl_c_on_dev_with_a_run_in_flight_says_what_was_left_running(
    tmp_path: Path, dev: tuple[subprocess.Popen[str], str]
) -> None:
    process, address = dev
    follower = subprocess.Popen(
        _skillweave("run", "--engine", "temporal", "Take your time."),
        env=_env(tmp_path, WORKFLOW__TEMPORAL_ADDRESS=address),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,
    )
    try:
        assert follower.stderr is not None
        said = ""
        for line in follower.stderr:  # the run is started, its model call in flight
            said += line
            if "started" in line:
                break
        run = re.search(r"run-[0-9]{8}-[0-9]{6}-[0-9a-f]{8}", said)
        assert run, said
        assert "started" in said, said
        time.sleep(1.0)

        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        code = process.wait(timeout=60)
        took = time.monotonic() - started
    finally:
        os.killpg(follower.pid, signal.SIGKILL)
        follower.wait(timeout=30)
        follower.stderr.close()

    stderr = (tmp_path / "dev.err").read_text()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert "Exception ignored" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert last == (
        f"stopped: worker, MCP manager, Temporal; 1 run was in flight: {run.group()} (it"
        " resumes at the next `skillweave dev`)"
    ), stderr
    # The activity in flight is cancelled at once, not drained for 30 s, and says so in a line.
    assert took < 20, took
    assert f"invoke_model of run {run.group()} cancelled: this worker is stopping" in stderr, stderr


def test_ctrl_c_on_a_worker_drains_it_then_says_what_was_left_running(
    tmp_path: Path, dev: tuple[subprocess.Popen[str], str]
) -> None:
    """`skillweave worker` (its own in-process manager) on a task queue of its own: Ctrl-C
    says at once how long its activities may still take, drains them, and ends with the runs
    of its queue in flight; no traceback."""
    _, address = dev
    env = _env(
        tmp_path,
        WORKFLOW__TEMPORAL_ADDRESS=address,
        WORKFLOW__TASK_QUEUE="wq",
        WORKFLOW__WORKER_DRAIN_SECONDS="1",
    )
    slow = f"scripted:{tmp_path / 'slow.yaml'}"
    with (tmp_path / "worker.err").open("w") as errors:
        worker = subprocess.Popen(
            _skillweave("worker", "--model", slow),
            env=env,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            cwd=REPO,
            start_new_session=True,
        )
    assert worker.stdout is not None
    follower: subprocess.Popen[str] | None = None
    try:
        for line in worker.stdout:
            if "Ctrl-C stops it" in line:
                break
        follower = subprocess.Popen(
            _skillweave("run", "--engine", "temporal", "Take your time."),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            start_new_session=True,
        )
        assert follower.stderr is not None
        said = ""
        for line in follower.stderr:
            said += line
            if "started" in line:
                break
        run = re.search(r"run-[0-9]{8}-[0-9]{6}-[0-9a-f]{8}", said)
        assert run, said
        assert "started" in said, said
        _listed(run.group(), env)  # the server's list of runs, which the worker asks, has it
        worker.send_signal(signal.SIGINT)
        code = worker.wait(timeout=60)
    finally:
        for process in (worker, follower):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            if process is not None:
                process.wait(timeout=30)
        worker.stdout.close()
        if follower is not None and follower.stderr is not None:
            follower.stderr.close()

    stderr = (tmp_path / "worker.err").read_text()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert (
        "stopping: the activities in flight have 1 s to finish (WORKFLOW__WORKER_DRAIN_SECONDS),"
        " then they are cancelled and retried by another worker"
    ) in stderr
    assert stderr.strip().splitlines()[-1] == (
        f"stopped: worker; 1 run was in flight: {run.group()} (it resumes when a worker on"
        " this store polls task queue 'wq')"
    ), stderr
