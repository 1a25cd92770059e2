"""Isolation fails closed: both contained modes hide the host, the filter holds, and a host
without bubblewrap gets the namespaces fallback (shown here by hiding bwrap in a mount
namespace), never an uncontained script.

Each case runs a real executor process and hostile scripts; the review's examples were a
script reading the manager's environment from /proc, reaching a loopback service, reading
host files, and a background process surviving its run to capture a later one.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from skillweave.sandbox.models import ExecutorResult
from tests.integration.conftest import RunningExecutor, StartExecutor
from tests.sandbox_executor.support import (
    AUTH,
    assert_eventually,
    execute_form,
    make_package,
    processes_with,
)

CONTAINED = ["bubblewrap", "namespaces"]


def _hidden_bwrap() -> tuple[str, ...]:
    """A command prefix that runs the executor in a mount namespace where the bwrap binary is
    /dev/null (as on a host without bubblewrap)."""
    if os.geteuid() != 0:
        pytest.skip("hiding bwrap needs a mount namespace of root's")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return ()  # there is no bubblewrap to hide
    real = os.path.realpath(bwrap)
    return ("unshare", "--mount", "--propagation", "private", "sh", "-c",
            f'mount --bind /dev/null "{real}" && exec "$0" "$@"')  # fmt: skip


def _start(start_executor: StartExecutor, isolation: str) -> RunningExecutor:
    if isolation == "bubblewrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed; the namespaces cases run instead")
    if isolation == "hidden-bwrap":
        executor = start_executor(isolation="auto", prefix=_hidden_bwrap())
        assert executor.client.get("/healthz").json()["isolation"] == "namespaces"
        return executor
    executor = start_executor(isolation=isolation)
    assert executor.client.get("/healthz").json()["isolation"] == isolation
    return executor


def _run(executor: RunningExecutor, script: str, *args: str) -> ExecutorResult:
    response = executor.client.post(
        "/execute",
        headers=AUTH,
        **execute_form(
            {"script": "probe.py", "args": list(args)}, make_package({"probe.py": script})
        ),
    )
    assert response.status_code == 200, response.text
    return ExecutorResult.model_validate(response.json())


MODES = [*CONTAINED, "hidden-bwrap"]

_PEEK = """\
import json, os, socket, sys
secret, port, host_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
leaked = []
for pid in pids:
    for name in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as file:
                if secret.encode() in file.read():
                    leaked.append(f"{pid}/{name}")
        except OSError:
            pass
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    loopback = "connected"
except OSError as exc:
    loopback = type(exc).__name__
try:
    with open(host_file) as file:
        host = "read " + file.read()
except OSError as exc:
    host = type(exc).__name__
print(json.dumps({"pids": pids, "leaked": leaked, "loopback": loopback, "host": host,
                  "uid": os.getuid(), "hostname": socket.gethostname()}))
"""


@pytest.mark.parametrize("isolation", MODES)
def test_processes_environments_loopback_and_host_files_are_out_of_reach(
    start_executor: StartExecutor, isolation: str, tmp_path: Path
) -> None:
    executor = _start(start_executor, isolation)
    secret = f"MANAGER-SECRET-{uuid.uuid4().hex}"
    host_file = tmp_path / "host.txt"
    host_file.write_text("host file", encoding="utf-8")
    host_file.chmod(0o644)
    tmp_path.chmod(0o755)
    # A host process with a secret in its environment and command line, as the manager is.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", secret],
        env={**os.environ, "MODEL__API_KEY": secret},
    )
    try:
        with socket.create_server(("127.0.0.1", 0)) as listener:
            port = listener.getsockname()[1]
            result = _run(executor, _PEEK, secret, str(port), str(host_file))
            listener.settimeout(0.2)
            with pytest.raises(TimeoutError):
                listener.accept()
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["leaked"] == []
    assert holder.pid not in seen["pids"] or max(seen["pids"]) < 10
    assert max(seen["pids"]) < 10, seen["pids"]  # a pid namespace of its own
    assert seen["loopback"] != "connected"
    assert seen["host"] == "FileNotFoundError"
    assert seen["hostname"] == "sandbox"
    assert seen["uid"] != 0
    assert executor.alive()


_CREDENTIALS = """\
import json
seen = {}
with open("/proc/self/status") as status:
    for line in status:
        name, _, value = line.partition(":")
        if name in ("Uid", "Gid", "Groups", "CapPrm", "CapEff", "CapAmb"):
            seen[name] = value.split()
print(json.dumps(seen))
"""


@pytest.mark.parametrize("isolation", MODES)
def test_a_script_holds_the_sandbox_users_credentials_and_nothing_else(
    start_executor: StartExecutor, isolation: str
) -> None:
    """Every uid and gid (real, effective, saved, file system) the sandbox user's, no
    supplementary group of the executor's (it runs with one here), no capability: however
    the stage dropped to it."""
    if os.geteuid() != 0:
        pytest.skip("only a root executor drops to a sandbox user")
    with_a_group = ("setpriv", "--groups", "4242", "--")
    if isolation == "hidden-bwrap":
        executor = start_executor(isolation="auto", prefix=(*with_a_group, *_hidden_bwrap()))
    else:
        if isolation == "bubblewrap" and shutil.which("bwrap") is None:
            pytest.skip("bubblewrap is not installed; the namespaces cases run instead")
        executor = start_executor(isolation=isolation, prefix=with_a_group)
    expected = "namespaces" if isolation == "hidden-bwrap" else isolation
    assert executor.client.get("/healthz").json()["isolation"] == expected
    result = _run(executor, _CREDENTIALS)
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert len(set(seen["Uid"])) == 1, seen
    assert len(set(seen["Gid"])) == 1, seen
    assert seen["Uid"][0] != "0"
    assert seen["Gid"][0] != "0"
    assert seen["Groups"] == [], seen
    assert all(int(seen[name][0], 16) == 0 for name in ("CapPrm", "CapEff", "CapAmb")), seen


_LEAVE_BEHIND = """\
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["/bin/sleep", "300", sys.argv[1]])
    os._exit(0)
time.sleep(0.2)
print("left a daemon behind")
"""


@pytest.mark.parametrize("isolation", MODES)
def test_a_background_process_does_not_outlive_its_run(
    start_executor: StartExecutor, isolation: str
) -> None:
    executor = _start(start_executor, isolation)
    marker = f"marker-{uuid.uuid4().hex}"
    result = _run(executor, _LEAVE_BEHIND, marker)
    assert result.exit_code == 0, result.stderr
    assert "left a daemon behind" in result.stdout
    assert_eventually(lambda: processes_with(marker) == [], timeout=5, what="the daemon to be gone")


_SYSCALLS = """\
import ctypes, errno, json, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def call(*args):
    result = libc.syscall(*args)
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
numbers = {"x86_64": {"keyctl": 250, "io_uring_setup": 425, "mount": 165, "ptrace": 101,
                      "bpf": 321, "perf_event_open": 298},
           "aarch64": {"keyctl": 219, "io_uring_setup": 425, "mount": 40, "ptrace": 117,
                       "bpf": 280, "perf_event_open": 241}}[os.uname().machine]
numbers.update(pidfd_getfd=438, process_madvise=440)  # EBADF, were they let through
report = {name: call(number, 0, 0, 0, 0, 0) for name, number in numbers.items()}
unshared = libc.unshare(0x10000000)
report["unshare_user"] = "ok" if unshared == 0 else errno.errorcode[ctypes.get_errno()]
for name, family, kind, proto in [("vsock", 40, socket.SOCK_STREAM, 0),
                                  ("netlink_audit", 16, socket.SOCK_RAW, 9),
                                  ("packet", 17, socket.SOCK_RAW, 0),
                                  ("netlink_route", 16, socket.SOCK_RAW, 0),
                                  ("inet", 2, socket.SOCK_STREAM, 0)]:
    try:
        socket.socket(family, kind, proto).close()
        report[name] = "ok"
    except OSError as exc:
        report[name] = errno.errorcode.get(exc.errno, str(exc.errno))
pid = os.fork()
if pid == 0:
    os._exit(7)
report["fork"] = os.waitpid(pid, 0)[1] >> 8
print(json.dumps(report))
"""


@pytest.mark.parametrize("isolation", CONTAINED)
def test_the_syscall_filter_refuses_kernel_surfaces_scripts_do_not_need(
    start_executor: StartExecutor, isolation: str
) -> None:
    executor = _start(start_executor, isolation)
    result = _run(executor, _SYSCALLS)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    for name in ("keyctl", "mount", "ptrace", "bpf", "perf_event_open", "unshare_user"):
        assert report[name] == "EPERM", (name, report)
    for name in ("pidfd_getfd", "process_madvise"):  # stealing or steering another's
        assert report[name] == "EPERM", (name, report)
    assert report["io_uring_setup"] == "ENOSYS"
    for name in ("vsock", "netlink_audit", "packet"):
        assert report[name] == "EAFNOSUPPORT", (name, report)
    assert report["netlink_route"] == "ok"  # getifaddrs() needs it
    assert report["inet"] == "ok"
    assert report["fork"] == 7


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("isolation", MODES)
def test_node_runs_under_the_filter(start_executor: StartExecutor, isolation: str) -> None:
    executor = _start(start_executor, isolation)
    script = (
        "const fs = require('fs'); fs.writeFileSync('outputs/n.txt', 'x');"
        "console.log(Object.keys(require('os').networkInterfaces()).join(','));"
    )
    response = executor.client.post(
        "/execute",
        headers=AUTH,
        **execute_form({"script": "n.js"}, make_package({"n.js": script})),
    )
    result = ExecutorResult.model_validate(response.json())
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "lo"


def test_bubblewrap_required_but_missing_refuses_to_start_with_one_line(tmp_path: Path) -> None:
    prefix = _hidden_bwrap()
    if not prefix:
        pytest.skip("bubblewrap is not installed: the unit test covers a missing binary")
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "sandbox_executor", "--port", "0"],
        env={
            "PATH": os.environ["PATH"],
            "EXECUTOR__TOKEN": "t",
            "EXECUTOR__ISOLATION": "bubblewrap",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr
    assert any("bubblewrap" in line and "install" in line for line in lines), done.stderr


def test_none_mode_is_announced(start_executor: StartExecutor) -> None:
    executor = start_executor(isolation="none")
    assert executor.client.get("/healthz").json()["isolation"] == "none"
    assert "ISOLATION IS OFF" in executor.stdout_path.read_text()


def test_an_unknown_mode_refuses_to_start() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sandbox_executor", "--port", "0"],
        env={"PATH": os.environ["PATH"], "EXECUTOR__TOKEN": "t", "EXECUTOR__ISOLATION": "rlimits"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "EXECUTOR__ISOLATION" in done.stderr or "isolation" in done.stderr


_FILL = """\
import os, sys
chunk = b"x" * (1024 * 1024)
for index in range(int(sys.argv[1])):
    with open(f"outputs/part-{index}.bin", "wb") as file:
        file.write(chunk)
print("wrote everything")
"""

_SPARSE = """\
with open("outputs/sparse.bin", "wb") as file:
    file.truncate(641 * 1024 * 1024)
print("made a sparse file")
"""


def _run_limited(executor: RunningExecutor, script: str, *args: str) -> ExecutorResult:
    # Files may be large (RLIMIT_FSIZE is per file); the workspace as a whole may not.
    limits = {"max_disk_mb": 16, "max_file_mb": 1024}
    request = {"script": "fill.py", "args": list(args), "limits": limits}
    response = executor.client.post(
        "/execute", headers=AUTH, **execute_form(request, make_package({"fill.py": script}))
    )
    assert response.status_code == 200, response.text
    return ExecutorResult.model_validate(response.json())


def test_a_run_over_its_disk_budget_is_stopped_and_keeps_no_outputs(
    executor: RunningExecutor,
) -> None:
    result = _run_limited(executor, _FILL, "4096")  # 4 GiB if nothing stopped it
    assert "wrote everything" not in result.stdout
    assert result.exit_code is None  # killed
    assert not result.timed_out
    assert result.outputs == []
    assert result.error is not None
    assert "disk budget of 16 MiB" in result.error
    assert executor.alive() or executor.process.poll() is not None


def test_sparse_files_count_by_their_apparent_size(executor: RunningExecutor) -> None:
    result = _run_limited(executor, _SPARSE)
    assert "made a sparse file" in result.stdout, result.stderr
    assert result.outputs == []
    assert result.error is not None
    assert "disk budget" in result.error


def test_a_run_within_its_budget_keeps_its_outputs(executor: RunningExecutor) -> None:
    result = _run_limited(executor, _FILL, "8")
    assert result.exit_code == 0, result.stderr
    assert result.error is None
    assert len(result.outputs) == 8


_CONVERT = ["unit-converter", "scripts/convert.py", "--"]
_CONVERT_ARGS = ["--run-json", '{"value": 3, "from_unit": "MB", "to_unit": "KiB"}']


def _cli(prefix: tuple[str, ...], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`skillweave sandbox run` as a user types it, with its own manager and local pool."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "skillweave.cli", "sandbox", "run", *_CONVERT,
         *_CONVERT_ARGS],
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
            "COLUMNS": "200",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip


def test_without_bubblewrap_the_cli_runs_scripts_contained_by_namespaces(tmp_path: Path) -> None:
    prefix = _hidden_bwrap()
    done = _cli(prefix, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "isolation namespaces" in done.stdout + done.stderr


def test_a_mode_that_cannot_be_set_up_fails_at_once_with_what_to_install(tmp_path: Path) -> None:
    prefix = _hidden_bwrap()
    if not prefix:
        pytest.skip("bubblewrap is not installed: nothing to hide")
    started = time.monotonic()
    done = _cli(prefix, tmp_path, SANDBOX__ISOLATION="bubblewrap")
    assert done.returncode != 0
    assert time.monotonic() - started < 45  # not after the claim timeout (60 s)
    assert "Traceback" not in done.stderr
    error_lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1, done.stderr
    assert "install bubblewrap" in error_lines[0]
