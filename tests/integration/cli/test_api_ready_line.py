"""``skillweave api``'s ready line comes once it listens: a client that waits for the line (as
scripts and the README harness do) is served at once, never refused a connection."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from skillweave.cli.temporal_server import free_port
from tests.conftest import write_skill
from tests.integration.cli.test_api_without_a_default_model import TOKEN, _env

pytestmark = pytest.mark.timeout(120)

SKILLWEAVE = str(Path(sys.executable).parent / "skillweave")


def test_a_request_right_after_the_ready_line_is_served(tmp_path: Path) -> None:
    port = free_port()
    # A library big enough that the API's start-up (its scan) takes a while after it begins.
    for index in range(400):
        write_skill(tmp_path / "skills" / f"skill-{index}")
    env = _env(tmp_path, API__PORT=str(port), WORKFLOW__EXECUTION_ENGINE="direct")
    env["PYTHONUNBUFFERED"] = "1"  # the line reaches us when it is written
    process = subprocess.Popen(
        [SKILLWEAVE, "api"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 90
        seen = []
        for line in process.stdout:
            seen.append(line)
            if line.startswith("skillweave API on "):
                break
            assert time.monotonic() < deadline, "".join(seen)
        else:
            pytest.fail(f"skillweave api ended before its ready line:\n{''.join(seen)}")
        # At once, no retry: the line promises a listening socket.
        answer = httpx.get(
            f"http://127.0.0.1:{port}/healthz",
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
        assert answer.status_code == 200, answer.text
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
