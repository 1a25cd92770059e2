"""A real S3 endpoint for tests: ``moto_server`` on a free loopback port (the storage suite's
session server, the multi-node reliability test's)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

__all__ = ["free_port", "moto_server"]

MOTO_START_SECONDS = 60.0
"""How long ``moto_server`` may take to answer after its start, on a loaded machine."""


@contextlib.contextmanager
def moto_server(logs: Path, *, port: int | None = None) -> Iterator[str]:
    """A ``moto_server`` S3 endpoint on `port` (default: a free loopback port), logging to
    ``logs/moto_server.log``: yields its ``127.0.0.1:PORT``, terminated at the end. A port
    chosen up front lets processes be told the endpoint before it is up."""
    beside_python = Path(sys.executable).with_name("moto_server")
    command = str(beside_python) if beside_python.exists() else shutil.which("moto_server")
    assert command is not None, "moto_server is not installed (pip install 'moto[server]')"
    port = port or free_port()
    log_path = logs / "moto_server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [command, "-H", "127.0.0.1", "-p", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + MOTO_START_SECONDS
        while not _answers(f"http://127.0.0.1:{port}/moto-api/"):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise AssertionError(f"moto_server did not start on port {port}:\n{tail}")
            time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def free_port() -> int:
    """A loopback port free now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=0.5).status_code < 500
    except httpx.HTTPError:
        return False
