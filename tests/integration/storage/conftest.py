"""A real S3 endpoint for the storage tests: one ``moto_server`` process per session on loopback."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from minio import Minio

STARTUP_TIMEOUT_SECONDS = 20.0
ACCESS_KEY = "skillweave-test-access"
SECRET_KEY = "skillweave-test-secret-do-not-log"
REGION = "us-east-1"


def _moto_server() -> str:
    beside_python = Path(sys.executable).parent / "moto_server"
    found = str(beside_python) if beside_python.exists() else shutil.which("moto_server")
    if found is None:
        pytest.fail("moto_server is not installed (pip install 'moto[server]')")
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=0.5):
            return True
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``127.0.0.1:{port}`` of a moto S3 server, started once and terminated at the end."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("moto") / "moto_server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [_moto_server(), "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
        while not _answers(f"http://127.0.0.1:{port}/moto-api/"):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"moto_server did not start on port {port}:\n{tail}")
            time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def bucket() -> str:
    """A fresh bucket name per test (the store creates it on first use)."""
    return f"sw-test-{uuid.uuid4().hex[:16]}"


@pytest.fixture
def raw_client(moto_endpoint: str) -> Iterator[Minio]:
    """A plain minio client on the same server, to act behind the store's back."""
    http = urllib3.PoolManager()
    client = Minio(
        moto_endpoint,
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
        secure=False,
        region=REGION,
        http_client=http,
    )
    yield client
    http.clear()
