"""Running one script: the warm stage, the order, its limits, its captured streams.

A sandbox is started before its request: `Stage.start` runs the launcher (the sandbox user),
bubblewrap when the executor isolates, and the stage program inside, which waits for one
order on stdin. `check_request` refuses a bad request before any file is touched;
`build_order` picks the interpreter by extension and says what the stage must do;
`ScriptRunner` hands the order over and watches it to its end, its wall timeout or a
cancellation, and always leaves no process behind. Arguments travel as a list, never through
a shell.

The environment is scrubbed: a fixed base (``PATH``, ``HOME``, ``PWD``, ``LANG``, ``TMPDIR``,
``PYTHONPATH`` and ``NODE_PATH`` at the skill root, then its prepared environment when it has
one (``deps/python``, ``deps/node/node_modules``), ``PYTHONDONTWRITEBYTECODE``,
``PYTHONUNBUFFERED``) plus the request's ``env``. Request names must match
``[A-Z_][A-Z0-9_]*`` and may not override the base nor set what changes how the interpreters
and the loader start (``LD_*``, ``PYTHON*``, ``NODE_*``, ``BASH_*``, ``ENV``, ``SHELL``...). The
script is untrusted anyway, so this is not a security boundary; it keeps the contract that
the executor alone decides how a script starts, and a typo cannot silently break it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import hashlib
import json
import os
import select
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, Literal

from sandbox_executor import _launcher
from sandbox_executor.disk import watch as watch_disk
from sandbox_executor.errors import ExecutorError, RequestRejectedError
from sandbox_executor.identity import SandboxUser, launcher_argv
from sandbox_executor.isolation import (
    SANDBOX_PATH,
    SANDBOX_WORKSPACE,
    IsolationPlan,
    contained_argv,
    sandbox_view,
)
from sandbox_executor.limits import rlimits_for, tmpfs_bytes
from sandbox_executor.workspace import READ_ONLY_DIRS, Workspace
from skillweave.errors import ExecutionRejectedError
from skillweave.sandbox.egress import EGRESS_SOCKET, STAGE_EGRESS_VARIABLE, proxy_environment
from skillweave.sandbox.models import (
    ExecutionLimits,
    ExecutorFile,
    ExecutorRequest,
    Isolation,
)
from skillweave.sandbox.validation import check_run

__all__ = [
    "INTERPRETERS",
    "STAGE_PATH",
    "Capture",
    "RunOrder",
    "RunOutcome",
    "ScriptRunner",
    "Stage",
    "base_env",
    "build_order",
    "check_request",
    "single_threaded",
    "stage_python",
]

INTERPRETERS: Final = {
    ".py": "python3",
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".sh": "bash",
}
_PREFERRED: Final = {"python3": "/usr/bin/python3"}
_DRAIN_GRACE_SECONDS: Final = 2.0
_STAGE_START_SECONDS: Final = 15.0
_PIPE_CAPACITY: Final = 65536
"""Linux's default pipe buffer: what a write into an empty pipe takes without blocking."""
STAGE_PATH: Final = "/run/skillweave/stage.py"
NODE_PROXY: Final = Path(__file__).with_name("node_proxy.js")
"""Node's fetch through the egress proxy, for Node versions that ignore the proxy variables."""
NODE_PROXY_PATH: Final = "/run/skillweave/node-proxy.js"
"""Where the stage program is copied into a contained sandbox (bubblewrap or namespaces)."""


def check_request(request: ExecutorRequest) -> tuple[str, ...]:
    """Refuse what no package can make runnable; return the script's path parts (the rules
    of ``skillweave.sandbox.validation``, which the manager applies before it claims a run).

    Raises:
        RequestRejectedError: Bad script path, environment or arguments.
    """
    try:
        return check_run(script=request.script, args=request.args, env=request.env)
    except ExecutionRejectedError as exc:
        raise RequestRejectedError(exc.reason) from None


def base_env(workspace: Workspace, plan: IsolationPlan) -> dict[str, str]:
    """The fixed base of every script's environment (the request's ``env`` joins it)."""
    isolated = plan.contained
    root = SANDBOX_WORKSPACE if isolated else str(workspace.root)
    python_path = [f"{root}/skill"]
    node_path = [f"{root}/skill"]
    # The skill's prepared environment, when the request brought one (see fill_workspace).
    if (workspace.deps / "python").is_dir():
        python_path.append(f"{root}/deps/python")
    if (workspace.deps / "node" / "node_modules").is_dir():
        node_path.append(f"{root}/deps/node/node_modules")
    return {
        "PATH": SANDBOX_PATH,
        "HOME": root,
        "PWD": root,
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp" if isolated else str(workspace.tmp),
        "PYTHONPATH": ":".join(python_path),
        "NODE_PATH": ":".join(node_path),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }


@dataclass(frozen=True)
class RunOrder:
    """What the stage of a warm sandbox is told to run (see ``_launcher``, stage mode).

    `kind` is ``python`` when the stage's own, already started interpreter runs the script,
    ``exec`` when the stage execs `argv` (node, bash, an executable file).
    """

    kind: Literal["python", "exec"]
    argv: list[str]
    env: dict[str, str]
    rlimits: dict[str, int]
    cwd: str

    def encode(self) -> bytes:
        """The wire form the stage reads (see ``_launcher``): NUL-separated fields.

        Raises:
            RequestRejectedError: A value cannot be a command-line or environment string.
        """
        fields = [self.kind, self.cwd, str(len(self.rlimits))]
        for name, value in self.rlimits.items():
            fields += [name, str(value)]
        fields += [str(len(self.argv)), *self.argv, str(len(self.env))]
        for name, value in self.env.items():
            fields += [name, value]
        try:
            return b"\0".join(os.fsencode(field) for field in fields)
        except UnicodeEncodeError as exc:
            raise RequestRejectedError(
                "args or env hold a character that cannot be passed to a program"
            ) from exc


def _script_file(workspace: Workspace, parts: tuple[str, ...], script: str) -> os.stat_result:
    """Stat the script inside the skill, refusing a symlink anywhere on the way."""
    path = workspace.skill
    info: os.stat_result | None = None
    for part in parts:
        path = path / part
        try:
            info = path.lstat()
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise RequestRejectedError(f"script {script!r} is not in the skill package") from exc
        if stat.S_ISLNK(info.st_mode):
            raise RequestRejectedError(f"script {script!r}: a symlink would escape the package")
    assert info is not None
    if not stat.S_ISREG(info.st_mode):
        raise RequestRejectedError(f"script {script!r} is not a file of the skill package")
    return info


def _interpreter(name: str) -> str:
    preferred = _PREFERRED.get(name)
    if preferred and os.access(preferred, os.X_OK):
        return preferred
    found = shutil.which(name, path=SANDBOX_PATH)
    if found is None:
        raise RequestRejectedError(f"no {name} interpreter on this executor ({SANDBOX_PATH})")
    return found


def stage_python() -> str:
    """The interpreter a warm sandbox's stage runs on (and Python scripts run in).

    Raises:
        ExecutorError: There is no python3 on the sandbox's PATH.
    """
    try:
        return _interpreter("python3")
    except RequestRejectedError as exc:
        raise ExecutorError(exc.detail) from None


def _runs_on_stage_python(path: Path) -> bool:
    """An executable whose ``#!`` line names the stage's python3 with no options."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        first = os.read(fd, 256).split(b"\n", 1)[0]
    finally:
        os.close(fd)
    words = first.removeprefix(b"#!").split() if first.startswith(b"#!") else []
    if words[:1] == [b"/usr/bin/env"]:
        words = words[1:]
        if words != [b"python3"]:
            return False
        found = shutil.which("python3", path=SANDBOX_PATH)
        return found is not None and os.path.realpath(found) == os.path.realpath(stage_python())
    return len(words) == 1 and os.path.realpath(words[0]) == os.path.realpath(stage_python())


def build_order(
    request: ExecutorRequest,
    *,
    script_parts: tuple[str, ...],
    workspace: Workspace,
    plan: IsolationPlan,
    user: SandboxUser | None,
    proxy_port: int | None = None,
) -> RunOrder:
    """The order that runs the request's script in its filled `workspace`.

    A ``.py`` file (or an executable whose ``#!`` line is the stage's python3) runs in the
    stage's interpreter; ``.js``/``.mjs``/``.cjs`` with node, ``.sh`` with bash; any other
    executable file runs directly. A run with egress finds the proxy variables: a contained
    sandbox's stage starts the forwarder to the executor's bridge; without one, `proxy_port`
    is where the executor's bridge listens on loopback (no port: no network is offered).

    Raises:
        RequestRejectedError: The script is missing, escapes the package, or has a type with
            no interpreter and no executable bit.
    """
    info = _script_file(workspace, script_parts, request.script)
    suffix = os.path.splitext(script_parts[-1])[1].lower()
    isolated = plan.contained
    root = Path(SANDBOX_WORKSPACE) if isolated else workspace.root
    script_path = str(root.joinpath("skill", *script_parts))
    kind: Literal["python", "exec"] = "exec"
    if suffix == ".py":
        kind, argv = "python", [script_path]
    elif suffix in INTERPRETERS:
        argv = [_interpreter(INTERPRETERS[suffix]), script_path]
    elif info.st_mode & 0o111:
        argv = [script_path]
        if _runs_on_stage_python(workspace.skill.joinpath(*script_parts)):
            kind = "python"
    else:
        known = ", ".join(INTERPRETERS)
        raise RequestRejectedError(
            f"script {request.script!r}: unsupported type {suffix or '(no extension)'!r};"
            f" use {known}, or mark the file executable"
        )
    egress: dict[str, str] = {}
    if request.egress is not None and isolated:
        # The stage starts the forwarder to this socket; the script sees the proxy variables.
        socket = f"{SANDBOX_WORKSPACE}/{EGRESS_SOCKET}"
        egress = {**proxy_environment(), STAGE_EGRESS_VARIABLE: socket}
        # Node's fetch before Node 22.21/24 ignores the proxy variables: a preload fixes it.
        egress["NODE_OPTIONS"] = f"--require {NODE_PROXY_PATH}"
    elif request.egress is not None and proxy_port is not None:
        # No sandbox of our own (a pod's executor): the executor serves the proxy itself.
        egress = {**proxy_environment(proxy_port), "NODE_OPTIONS": f'--require "{NODE_PROXY}"'}
    order = RunOrder(
        kind=kind,
        argv=[*argv, *request.args],
        env={**base_env(workspace, plan), **request.env, **egress},
        rlimits=rlimits_for(
            request.limits, isolation=plan.isolation, dedicated_user=user is not None
        ),
        cwd=str(root),
    )
    order.encode()  # refuses what cannot travel, before anything runs
    return order


@dataclass(frozen=True)
class _StageSpec:
    workspace: Workspace
    plan: IsolationPlan
    user: SandboxUser | None
    etc_dir: Path
    launcher: Path
    limits: ExecutionLimits


class Stage:
    """The waiting process of a warm sandbox: started before any request, given one order.

    `start` runs the whole chain (launcher, the sandbox user, bubblewrap when the executor
    isolates, then ``python3 _launcher.py`` in stage mode) and returns once the stage reports
    ready, so "ready" means the sandbox exists and only the script is left to start. The
    bubblewrap mounts are sized for the `limits` it was started with; `fits` says whether a
    request's limits can use it.
    """

    def __init__(self, popen: subprocess.Popen[bytes], limits: ExecutionLimits) -> None:
        self.popen = popen
        self.limits = limits

    @classmethod
    def start(
        cls,
        *,
        workspace: Workspace,
        plan: IsolationPlan,
        user: SandboxUser | None,
        etc_dir: Path,
        launcher: Path,
        limits: ExecutionLimits,
        timeout: float = _STAGE_START_SECONDS,
    ) -> Stage:
        """Start the stage and wait until it is ready (blocking; run it in a thread).

        Args:
            launcher: A copy of ``_launcher.py`` the sandbox user can read.

        Raises:
            ExecutorError: It did not start, or not in `timeout` seconds.
        """
        spec = _StageSpec(workspace, plan, user, etc_dir, launcher, limits)
        ready_read, ready_write = os.pipe()
        # The syscall filter, read by bwrap or the namespaces launcher from this descriptor.
        seccomp_fd = os.open(plan.seccomp, os.O_RDONLY | os.O_CLOEXEC) if plan.seccomp else -1
        fds: tuple[int, ...] = ()
        try:
            argv, prepare, fds = _stage_command(spec, ready_write, seccomp_fd)
            popen = subprocess.Popen(
                argv,
                preexec_fn=prepare,  # noqa: PLW1509 - only with a single thread: _stage_command
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=base_env(workspace, plan),
                cwd=workspace.root.parent if plan.contained else workspace.root,
                start_new_session=True,
                pass_fds=(ready_write, *fds, *([seccomp_fd] if seccomp_fd >= 0 else [])),
            )
        finally:
            os.close(ready_write)
            if seccomp_fd >= 0:
                os.close(seccomp_fd)
            for fd in fds:
                os.close(fd)
        stage = cls(popen, limits)
        try:
            readable, _, _ = select.select([ready_read], [], [], timeout)
            signal_byte = os.read(ready_read, 1) if readable else b""
        finally:
            os.close(ready_read)
        if signal_byte != b"R":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(popen.pid, signal.SIGKILL)
            assert popen.stderr is not None
            message = popen.stderr.read(4096).decode("utf-8", "replace").strip().splitlines()
            stage.kill()
            why = message[-1] if message else f"exit {popen.returncode}"
            if not readable:
                why = f"not ready after {timeout:.0f} s"
            raise ExecutorError(f"the sandbox did not start: {why}")
        return stage

    def fits(self, limits: ExecutionLimits) -> bool:
        """Whether a request with `limits` may run here (the mounts are sized for memory)."""
        return tmpfs_bytes(limits) == tmpfs_bytes(self.limits)

    def kill(self) -> bool:
        """Kill the stage's process group and reap it (blocking briefly).

        Returns:
            Whether it was still running (so killed here, not ended by itself). A stage that
            ended by itself took its pid namespace along; one killed here leaves the rest of
            its namespace dying for a moment after it is reaped.
        """
        running = self.popen.poll() is None  # once reaped, its pid may belong to another
        if running:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        return running


def single_threaded() -> bool:
    """Whether this process runs one thread only (Python's, and any a library started): when
    running Python between fork and exec is safe (the first stage here, every fork of the
    zygote)."""
    return threading.active_count() == 1 and len(os.listdir("/proc/self/task")) == 1


def _stage_command(
    spec: _StageSpec, ready_fd: int, seccomp_fd: int
) -> tuple[list[str], Callable[[], None] | None, tuple[int, ...]]:
    """The stage's command, the steps to run between fork and exec, if any, and the
    descriptors it must inherit besides `ready_fd` and `seccomp_fd` (the caller closes them).

    The launcher's steps before its exec (limits, the sandbox user, death with the executor)
    take a program start of their own, about 10 ms of CPU. While the executor has a single
    thread (its start-up, when its first stage starts), running them between fork and exec
    is safe, so they run there instead (``_launcher.prepare``, the same code) and the launcher
    is skipped; the namespaces mode, which builds its view in the launcher, always runs it.
    """
    launch, command, fds = _stage_launch(spec, ready_fd, seccomp_fd)
    if "namespaces" not in launch and single_threaded():
        return command, functools.partial(_launcher.prepare, launch), fds
    return [*launcher_argv(json.dumps(launch)), *command], None, fds


def _stage_launch(
    spec: _StageSpec, ready_fd: int, seccomp_fd: int
) -> tuple[dict[str, object], list[str], tuple[int, ...]]:
    python = stage_python()
    stage_spec = ["stage", str(ready_fd)]
    contained: dict[str, object] = {}
    fds: tuple[int, ...] = ()
    if spec.plan.contained:
        view = sandbox_view(
            etc_dir=spec.etc_dir,
            limits=spec.limits,
            workspace=spec.workspace.root,
            read_only=list(READ_ONLY_DIRS),
            files=[(spec.launcher, STAGE_PATH), (NODE_PROXY, NODE_PROXY_PATH)],
        )
        launched = contained_argv(
            spec.plan, view, command=[python, STAGE_PATH, *stage_spec], seccomp_fd=seccomp_fd
        )
        command, contained, fds = launched.argv, launched.spec, launched.fds
    else:
        command = [python, str(spec.launcher), *stage_spec]
    launch = {
        "mode": "exec",
        # The request's limits are set by the stage itself, from its order.
        "rlimits": {"RLIMIT_CORE": 0},
        "uid": spec.user.uid if spec.user else None,
        "gid": spec.user.gid if spec.user else None,
        "parent": os.getpid(),
        **contained,
    }
    return launch, command, fds


class Capture:
    """One captured stream: kept whole on disk up to a cap, hashed as it is written."""

    def __init__(self, path: Path, *, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.size = 0
        self.dropped = 0
        self._digest = hashlib.sha256()
        self._file = open(path, "xb")  # noqa: SIM115 - closed by close(), after the drain

    def write(self, chunk: bytes) -> None:
        room = self.max_bytes - self.size
        kept = chunk[:room] if len(chunk) > room else chunk
        if kept:
            self._file.write(kept)
            self._digest.update(kept)
            self.size += len(kept)
        self.dropped += len(chunk) - len(kept)

    def close(self) -> None:
        self._file.close()

    def describe(self, name: str) -> ExecutorFile:
        return ExecutorFile(name=name, size=self.size, sha256=self._digest.hexdigest())

    def head(self, limit: int) -> tuple[str, bool]:
        """The first `limit` bytes as text (UTF-8, errors replaced) and whether that is all."""
        with open(self.path, "rb") as file:
            data = file.read(limit)
        truncated = self.size > len(data) or self.dropped > 0
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        # Not final when cut: a character split at the cut is left out, not turned into U+FFFD.
        return decoder.decode(data, final=not truncated), truncated


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended.

    `exit_code` is None when the executor killed it (timeout, cancel), 128 + N when a signal N
    did (as a shell and bwrap report it, whatever the isolation).
    """

    exit_code: int | None
    timed_out: bool
    cancelled: bool
    duration_ms: int
    swept: bool = False
    disk_exceeded: bool = False


class ScriptRunner:
    """Runs one order on a stage; `cancel` (synchronous, any time) kills it at once.

    The stage is a plain ``subprocess.Popen`` watched through a pidfd, with its pipes read by
    asyncio read-pipe transports: asyncio's own subprocess ``wait()`` also waits for the pipes
    to close, which a grandchild that left the process group can hold open forever.
    """

    def __init__(self, *, user: SandboxUser | None, isolation: Isolation) -> None:
        self._user = user
        self._isolation = isolation
        self._popen: subprocess.Popen[bytes] | None = None
        self._reaped = False
        self._cancel = asyncio.Event()
        self.cancelled = False

    def cancel(self) -> None:
        """Kill the script's process group now and make `run` answer ``cancelled``."""
        self.kill()
        self._cancel.set()

    def kill(self) -> None:
        """`cancel` without touching asyncio objects: safe in a signal handler.

        The dead group leader ends `run`, which then answers ``cancelled``.
        """
        self.cancelled = True
        self._kill_group()

    def _kill_group(self) -> None:
        # The launcher started a new session: its pid is the group. Under bubblewrap the group
        # is bwrap, whose death takes the pid namespace and everything in it along. Until the
        # leader is reaped its pid (so the group id) cannot be reused.
        if self._popen is not None and not self._reaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._popen.pid, signal.SIGKILL)

    async def run(
        self,
        stage: Stage,
        order: RunOrder,
        *,
        limits: ExecutionLimits,
        stdout: Capture,
        stderr: Capture,
        disk: Sequence[tuple[Path, tuple[str, ...]]] = (),
    ) -> RunOutcome:
        """Run to the end, the wall timeout, a cancel or its disk budget (`disk`: the folders
        it writes to, with top-level names to leave out); no process of it survives the
        call."""
        popen = stage.popen
        self._popen = popen
        if self.cancelled:
            self._kill_group()
        loop = asyncio.get_running_loop()
        assert popen.stdin is not None
        assert popen.stdout is not None
        assert popen.stderr is not None
        pipes = [
            await _capture_pipe(loop, popen.stdout, stdout),
            await _capture_pipe(loop, popen.stderr, stderr),
        ]
        exited = _exit_of(loop, popen.pid)
        cancelled = asyncio.ensure_future(self._cancel.wait())
        over_budget = _disk_watch(disk, limits)
        started = time.monotonic()
        timed_out = False
        disk_exceeded = False
        swept = False
        try:
            data = order.encode()
            if len(data) <= _PIPE_CAPACITY:  # fits the empty pipe: the write cannot block
                _send(popen.stdin, data)
            else:
                await asyncio.to_thread(_send, popen.stdin, data)
            await asyncio.wait(
                {exited, cancelled, over_budget},
                timeout=limits.timeout_seconds,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if not exited.done():
                disk_exceeded = over_budget.done() and not over_budget.cancelled()
                timed_out = not self.cancelled and not disk_exceeded
                self._kill_group()
                await asyncio.wait({exited}, timeout=_DRAIN_GRACE_SECONDS)
        finally:
            duration_ms = int((time.monotonic() - started) * 1000)
            cancelled.cancel()
            over_budget.cancel()
            # Whatever happened (even this task being cancelled), nothing may stay behind:
            # the group, then whatever of the sandbox user left it, then the pipes. Under
            # bubblewrap a script that ended by itself took its pid namespace along (the
            # kernel kills what is left in it before bwrap can exit), so the sweep of the
            # sandbox user is only needed when it was killed or is not in a namespace.
            self._kill_group()
            killed = timed_out or self.cancelled or disk_exceeded or not exited.done()
            in_namespace = self._isolation in ("bubblewrap", "namespaces")
            if self._user is not None and (killed or not in_namespace):
                await asyncio.to_thread(self._user.kill_all)
                swept = True
            await _close_pipes(pipes)
            # Once the pidfd said it exited, reaping it cannot block.
            reaped = exited.done() and not exited.cancelled()
            returncode = popen.wait() if reaped else await asyncio.to_thread(popen.wait)
            self._reaped = True
            exited.cancel()
            stdout.close()
            stderr.close()
        killed = timed_out or self.cancelled or disk_exceeded
        if returncode < 0:
            # Killed by a signal: report it as a shell (and bwrap) would, 128 + N.
            returncode = 128 - returncode
        return RunOutcome(
            exit_code=None if killed else returncode,
            timed_out=timed_out,
            cancelled=self.cancelled,
            duration_ms=duration_ms,
            swept=swept,
            disk_exceeded=disk_exceeded,
        )


def _disk_watch(
    disk: Sequence[tuple[Path, tuple[str, ...]]], limits: ExecutionLimits
) -> asyncio.Future[object]:
    """Resolves once the run wrote more than its disk budget (never, with no folders)."""
    if not disk:
        return asyncio.ensure_future(asyncio.Event().wait())
    return asyncio.ensure_future(watch_disk(list(disk), limits.max_disk_mb * 1024 * 1024))


def _send(pipe: IO[bytes], data: bytes) -> None:
    """Give the stage its order and close its stdin (a stage that already died is reported
    by its exit, not here)."""
    with contextlib.suppress(BrokenPipeError):
        pipe.write(data)
    with contextlib.suppress(BrokenPipeError):
        pipe.close()


class _CaptureProtocol(asyncio.Protocol):
    """Writes what a pipe delivers to its `Capture`; `closed` resolves at EOF."""

    def __init__(self, capture: Capture, closed: asyncio.Future[None]) -> None:
        self._capture = capture
        self.closed = closed

    def data_received(self, data: bytes) -> None:
        self._capture.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def _capture_pipe(
    loop: asyncio.AbstractEventLoop, pipe: IO[bytes], capture: Capture
) -> tuple[asyncio.BaseTransport, _CaptureProtocol]:
    protocol = _CaptureProtocol(capture, loop.create_future())
    transport, _ = await loop.connect_read_pipe(lambda: protocol, pipe)
    return transport, protocol


async def _close_pipes(pipes: list[tuple[asyncio.BaseTransport, _CaptureProtocol]]) -> None:
    """Let the pipes run dry; a pipe still held open after the grace period is cut."""
    closed = [protocol.closed for _, protocol in pipes]
    await asyncio.wait(closed, timeout=_DRAIN_GRACE_SECONDS)
    for transport, protocol in pipes:
        if not protocol.closed.done():
            transport.close()
    await asyncio.wait(closed, timeout=_DRAIN_GRACE_SECONDS)


def _exit_of(loop: asyncio.AbstractEventLoop, pid: int) -> asyncio.Future[None]:
    """Resolves when `pid` has exited, without reaping it (its group id stays reserved)."""
    future: asyncio.Future[None] = loop.create_future()
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        # No pidfd (old kernel): a thread waits, without reaping (WNOWAIT).
        waiting = asyncio.ensure_future(
            asyncio.to_thread(os.waitid, os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        )
        waiting.add_done_callback(lambda _: future.done() or future.set_result(None))
        return future

    def on_exit() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        if not future.done():
            future.set_result(None)

    def on_cancel(_: asyncio.Future[None]) -> None:
        if future.cancelled():
            loop.remove_reader(pidfd)
            with contextlib.suppress(OSError):
                os.close(pidfd)

    loop.add_reader(pidfd, on_exit)
    future.add_done_callback(on_cancel)
    return future
