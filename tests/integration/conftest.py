"""Real executor processes for integration tests (`python -m sandbox_executor --port 0`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO
from tests.sandbox_executor.support import TOKEN

_START_TIMEOUT_SECONDS = 20.0


@dataclass
class RunningExecutor:
    """A started executor: its process, where it listens, and a client on it."""

    process: subprocess.Popen[bytes]
    port: int
    stdout_path: Path
    client: httpx.Client

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        """The process runs and answers /healthz."""
        if self.process.poll() is not None:
            return False
        return self.client.get("/healthz").status_code == 200


StartExecutor = Callable[..., RunningExecutor]


@pytest.fixture
def start_executor(tmp_path: Path) -> Iterator[StartExecutor]:
    """Start executors as real subprocesses; each is killed (and waited for) at the end."""
    started: list[RunningExecutor] = []

    def start(
        *,
        isolation: str = "auto",
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
        prefix: tuple[str, ...] = (),
    ) -> RunningExecutor:
        """An executor with `isolation`; `env` adds to (or overrides) its environment, `args`
        to its command line (later options win), `prefix` runs before it (e.g. a mount
        namespace hiding a binary)."""
        index = len(started)
        ready_file = tmp_path / f"ready-{index}.json"
        stdout_path = tmp_path / f"executor-{index}.out"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "EXECUTOR__TOKEN": TOKEN,
            "EXECUTOR__ISOLATION": isolation,
            **(env or {}),
        }
        with open(stdout_path, "wb") as out:
            process = subprocess.Popen(
                [
                    *prefix,
                    sys.executable,
                    "-m",
                    "sandbox_executor",
                    "--port",
                    "0",
                    "--ready-file",
                    str(ready_file),
                    "--log-level",
                    "warning",
                    *args,
                ],
                cwd=REPO,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + _START_TIMEOUT_SECONDS
        while not ready_file.exists():
            if process.poll() is not None:
                raise AssertionError(
                    f"executor exited with {process.returncode}: {stdout_path.read_text()}"
                )
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"executor not ready in {_START_TIMEOUT_SECONDS}s")
            time.sleep(0.02)
        ready = json.loads(ready_file.read_text())
        assert ready["pid"] == process.pid
        client = httpx.Client(base_url=f"http://127.0.0.1:{ready['port']}", timeout=60)
        executor = RunningExecutor(process, ready["port"], stdout_path, client)
        started.append(executor)
        return executor

    yield start
    for executor in started:
        executor.client.close()
        if executor.process.poll() is None:
            executor.process.terminate()
            try:
                executor.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                executor.process.kill()
                executor.process.wait()


@pytest.fixture
def executor(start_executor: StartExecutor) -> RunningExecutor:
    """One executor with the default (auto) isolation."""
    return start_executor()
