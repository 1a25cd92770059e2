"""Containment, end to end: a real executor process per test, hostile scripts, real limits.

Every case must come back as a structured result while the executor stays alive, and leave no
process of the sandbox behind.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillweave.sandbox.models import ExecutorResult
from tests.conftest import REPO
from tests.integration.conftest import RunningExecutor, StartExecutor
from tests.sandbox_executor.support import (
    AUTH,
    TOKEN,
    assert_eventually,
    descendant_uids,
    execute_form,
    living_processes,
    make_package,
    processes_with,
)

MIB = 1024 * 1024


def _post(
    executor: RunningExecutor,
    request: dict[str, Any],
    files: dict[str, str],
    *,
    inputs: dict[str, bytes] | None = None,
    client: httpx.Client | None = None,
) -> ExecutorResult:
    response = (client or executor.client).post(
        "/execute", headers=AUTH, **execute_form(request, make_package(files), inputs)
    )
    assert response.status_code == 200, response.text
    return ExecutorResult.model_validate(response.json())


def _in_background(
    executor: RunningExecutor, request: dict[str, Any], files: dict[str, str]
) -> Future[ExecutorResult]:
    """Start an /execute on its own client and thread; returns the future result."""
    pool = ThreadPoolExecutor(max_workers=1)
    client = httpx.Client(base_url=executor.base_url, timeout=120)

    def call() -> ExecutorResult:
        try:
            return _post(executor, request, files, client=client)
        finally:
            client.close()

    future = pool.submit(call)
    pool.shutdown(wait=False)
    return future


CONTAINED = ["bubblewrap", "namespaces"]


def _contained(start_executor: StartExecutor, isolation: str) -> RunningExecutor:
    """An executor in a contained mode (bubblewrap only where it is installed)."""
    if isolation == "bubblewrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed; the namespaces case runs instead")
    executor = start_executor(isolation=isolation)
    assert executor.client.get("/healthz").json()["isolation"] == isolation
    return executor


def test_ready_report_and_auth_over_real_http(executor: RunningExecutor) -> None:
    output = executor.stdout_path.read_text()
    assert f"EXECUTOR_READY port={executor.port}" in output
    assert TOKEN not in output
    assert executor.client.get("/healthz").json()["status"] == "ready"
    assert executor.client.get("/files/stdout").status_code == 401


@pytest.mark.parametrize("isolation", ["auto", "namespaces", "none"])
def test_infinite_loop_times_out_and_the_whole_tree_dies(
    start_executor: StartExecutor, isolation: str
) -> None:
    executor = start_executor(isolation=isolation)
    script = """\
import os, subprocess, sys
print(os.getuid(), flush=True)
loop = [sys.executable, "-c", "while True: pass"]
subprocess.Popen(loop)
subprocess.Popen(loop, start_new_session=True)  # leaves the process group
while True:
    pass
"""
    started = time.monotonic()
    result = _post(
        executor, {"script": "loop.py", "limits": {"timeout_seconds": 2}}, {"loop.py": script}
    )
    elapsed = time.monotonic() - started
    assert result.timed_out
    assert result.exit_code is None
    assert 1900 <= result.duration_ms < 4000
    assert elapsed < 6
    uid = int(result.stdout.split()[0])
    assert uid != 0
    assert_eventually(lambda: not living_processes(uid), what=f"no process of uid {uid} left")
    assert executor.alive()


def test_memory_bomb_fails_and_the_executor_survives(executor: RunningExecutor) -> None:
    script = "blob = bytearray(2 * 1024 ** 3)\nprint('allocated', len(blob))\n"
    result = _post(
        executor, {"script": "bomb.py", "limits": {"memory_mb": 256}}, {"bomb.py": script}
    )
    assert result.exit_code not in (0, None)
    assert "MemoryError" in result.stderr
    assert "allocated" not in result.stdout
    assert not result.timed_out
    assert executor.alive()


@pytest.mark.parametrize("isolation", ["auto", "namespaces", "none"])
def test_fork_bomb_is_capped_and_cleaned_up(start_executor: StartExecutor, isolation: str) -> None:
    executor = start_executor(isolation=isolation)
    script = """\
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
    # The warm sandbox runs before the request, as the sandbox user: that is the uid to watch.
    uids = descendant_uids(executor.process.pid) - {0}
    assert len(uids) == 1, f"the warm sandbox runs as one non-root uid, not {uids}"
    (uid,) = uids
    request = {"script": "forkbomb.py", "limits": {"max_processes": 32, "timeout_seconds": 3}}
    future = _in_background(executor, request, {"forkbomb.py": script})
    most = 0
    while not future.done():
        # Not counted: the executor's own sweep, which becomes the uid to kill(-1) its rest.
        sweep = set(processes_with('"mode": "kill"'))
        most = max(most, len(set(living_processes(uid)) - sweep))
        time.sleep(0.02)
    result = future.result()
    assert result.timed_out or result.exit_code != 0
    assert most > 8, "the fork bomb never showed up"
    # 32 for the script, plus bubblewrap's monitor and reaper when it is there.
    assert 0 < most <= 34, f"{most} processes of the sandbox uid at once"
    assert_eventually(lambda: not living_processes(uid), what=f"no process of uid {uid} left")
    assert executor.alive()


def test_stdout_flood_is_truncated_inline_and_served_in_full(executor: RunningExecutor) -> None:
    script = """\
import sys
chunk = b"x" * (1024 * 1024)
for _ in range(100):
    sys.stdout.buffer.write(chunk)
"""
    started = time.monotonic()
    result = _post(
        executor,
        {"script": "flood.py", "limits": {"max_output_bytes": 65536}},
        {"flood.py": script},
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout_truncated
    assert result.stdout == "x" * 65536
    assert result.full_stdout is not None
    assert result.full_stdout.name == "stdout"
    assert result.full_stdout.size == 100 * MIB

    digest = hashlib.sha256()
    received = 0
    with executor.client.stream("GET", "/files/stdout", headers=AUTH) as response:
        assert response.status_code == 200
        assert int(response.headers["content-length"]) == 100 * MIB
        for chunk in response.iter_bytes():
            received += len(chunk)
            digest.update(chunk)
    assert received == 100 * MIB
    assert digest.hexdigest() == result.full_stdout.sha256
    assert time.monotonic() - started < 10
    assert executor.alive()


@pytest.mark.parametrize("isolation", CONTAINED)
def test_network_is_unreachable(start_executor: StartExecutor, isolation: str) -> None:
    executor = _contained(start_executor, isolation)
    script = """\
import socket, sys
for host, port in [("127.0.0.1", int(sys.argv[1])), ("192.0.2.1", 80)]:
    try:
        socket.create_connection((host, port), timeout=2).close()
        print("connected", host)
    except OSError as exc:
        print("blocked", host, type(exc).__name__)
"""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        result = _post(executor, {"script": "net.py", "args": [str(port)]}, {"net.py": script})
        listener.settimeout(0.2)
        with pytest.raises(TimeoutError):
            listener.accept()
    assert result.exit_code == 0, result.stderr
    assert "connected" not in result.stdout
    assert result.stdout.count("blocked") == 2
    assert executor.alive()


@pytest.mark.parametrize("isolation", CONTAINED)
def test_host_files_are_out_of_view(
    start_executor: StartExecutor, isolation: str, tmp_path: Path
) -> None:
    executor = _contained(start_executor, isolation)
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret", encoding="utf-8")
    secret.chmod(0o644)
    targets = [
        str(secret),
        "/etc/shadow",
        str(REPO / "sandbox_executor" / "app.py"),
        str(REPO),
        "/root",
        "/home",
        str(tmp_path),
    ]
    script = """\
import json, os, sys
report = {}
for path in sys.argv[1:]:
    try:
        with open(path, "rb") as file:
            report[path] = "read: " + file.read(40).decode("utf-8", "replace")
    except OSError as exc:
        report[path] = ("exists " if os.path.exists(path) else "") + type(exc).__name__
listing = {"root": sorted(os.listdir("/")), "tmp": os.listdir("/tmp")}
listing["run"] = [f"{top}/{name}" for top, _, names in os.walk("/run") for name in names]
print(json.dumps({"report": report, **listing}))
"""
    result = _post(executor, {"script": "peek.py", "args": targets}, {"peek.py": script})
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    for path, outcome in seen["report"].items():
        assert outcome == "FileNotFoundError", f"{path}: {outcome}"
    assert "host secret" not in result.stdout
    assert set(seen["root"]) <= {
        "bin",
        "dev",
        "etc",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "proc",
        "run",
        "tmp",
        "usr",
        "workspace",
    }
    assert seen["tmp"] == []
    # The sandbox's own stage program, and the Node preload of runs with network egress.
    assert seen["run"] == ["/run/skillweave/node-proxy.js", "/run/skillweave/stage.py"]
    assert executor.alive()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_script_runs(executor: RunningExecutor) -> None:
    script = """\
const fs = require("fs");
const text = fs.readFileSync("inputs/a.txt", "utf8");
fs.writeFileSync("outputs/n.txt", text.toUpperCase());
console.log("node", process.version, text);
"""
    result = _post(executor, {"script": "run.js"}, {"run.js": script}, inputs={"a.txt": b"abc"})
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("node v")
    assert [(f.name, f.size) for f in result.outputs] == [("outputs/n.txt", 3)]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_memory_is_limited(executor: RunningExecutor) -> None:
    script = "const kept = [];\nfor (;;) kept.push(Buffer.alloc(16 * 1024 * 1024, 1));\n"
    result = _post(
        executor,
        {"script": "bomb.mjs", "limits": {"memory_mb": 128, "timeout_seconds": 15}},
        {"bomb.mjs": script},
    )
    assert result.exit_code not in (0, None), result.stderr
    # The loop never ends by itself: only the limit stops it. How node dies depends on which
    # allocation meets the limit first: a RangeError from Buffer.alloc (exit 1), V8's fatal
    # "Allocation failed - JavaScript heap out of memory" or a C++ std::bad_alloc (134), or now
    # and then a SIGSEGV (139) with nothing on stderr.
    assert not result.timed_out
    assert executor.alive()


def _sleeper(marker: str) -> str:
    """A script that waits on a child whose command line holds `marker`."""
    child = f"[sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}]"
    return f"import subprocess, sys, time\nsubprocess.Popen({child})\ntime.sleep(60)\n"


def test_delete_cancels_a_running_script_within_two_seconds(executor: RunningExecutor) -> None:
    marker = f"sleeper_{uuid.uuid4().hex}"
    future = _in_background(executor, {"script": "sleeper.py"}, {"sleeper.py": _sleeper(marker)})
    assert_eventually(lambda: bool(processes_with(marker)), timeout=10, what="script started")
    assert executor.client.get("/healthz").json()["status"] == "busy"

    started = time.monotonic()
    cancel = executor.client.delete("/execute", headers=AUTH)
    result = future.result(timeout=10)
    elapsed = time.monotonic() - started
    assert cancel.json() == {"cancelled": True, "status": "done"}
    assert result.cancelled
    assert not result.timed_out
    assert result.exit_code is None
    assert elapsed < 2, f"cancel took {elapsed:.2f}s"
    assert not processes_with(marker)
    assert executor.alive()


def test_sigterm_kills_the_running_script_and_exits(executor: RunningExecutor) -> None:
    marker = f"sleeper_{uuid.uuid4().hex}"
    future = _in_background(executor, {"script": "sleeper.py"}, {"sleeper.py": _sleeper(marker)})
    assert_eventually(lambda: bool(processes_with(marker)), timeout=10, what="script started")
    folder_count = len(list(Path("/tmp").glob("skillweave-executor-*")))

    started = time.monotonic()
    executor.process.terminate()
    executor.process.wait(timeout=10)
    assert time.monotonic() - started < 5
    assert not processes_with(marker)
    assert len(list(Path("/tmp").glob("skillweave-executor-*"))) < folder_count
    # The pending call ends one way or the other (a cancelled result or a closed connection).
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    assert done.wait(timeout=10)
