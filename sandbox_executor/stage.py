"""`Stage`: the waiting process of a warm sandbox, started before any request, given one order.

`Stage.start` runs the launcher (``_launcher``: the sandbox user), bubblewrap when the
executor isolates (or the launcher's own ``namespaces`` mode), and the stage program inside
(``_stage_program``, a copy bound at `STAGE_PATH`), which waits for one order on stdin. Under
bubblewrap, ``Popen`` itself does the launcher's steps between fork and exec (`_launch`); in
the other modes, while the executor has a single thread (`single_threaded`), they run there
as Python instead of as a program of their own. Called by the executor's attempts
(``attempts``), which make a stage ready ahead of each request; ``runner`` then runs the
order on it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

from sandbox_executor import _launcher
from sandbox_executor._stage_program import set_limits
from sandbox_executor.errors import ExecutorError
from sandbox_executor.isolation import IsolationPlan, contained_argv, sandbox_view
from sandbox_executor.limits import tmpfs_bytes
from sandbox_executor.run_order import NODE_PROXY, NODE_PROXY_PATH, base_env, stage_python
from sandbox_executor.sandbox_user import SandboxUser, launcher_argv, setpriv
from sandbox_executor.workspace import READ_ONLY_DIRS, Workspace
from skillweave.sandbox import ExecutionLimits

__all__ = ["STAGE_PATH", "STAGE_PROGRAM", "Stage", "single_threaded"]

_STAGE_START_SECONDS: Final = 15.0
STAGE_PATH: Final = "/run/skillweave/stage.py"
"""Where the stage program is copied into a contained sandbox (bubblewrap or namespaces)."""
STAGE_PROGRAM: Final = Path(__file__).with_name("_stage_program.py")
"""The stage program; the executor runs a copy of it that the sandbox user can read."""


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
    isolates, then ``python3 _stage_program.py`` in stage mode) and returns once the stage reports
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
            launcher: A copy of the stage program (`STAGE_PROGRAM`) the sandbox user can read.

        Raises:
            ExecutorError: It did not start, or not in `timeout` seconds.
        """
        spec = _StageSpec(workspace, plan, user, etc_dir, launcher, limits)
        ready_read, ready_write = os.pipe()
        # The syscall filter, read by bwrap or the namespaces launcher from this descriptor.
        seccomp_fd = os.open(plan.seccomp, os.O_RDONLY | os.O_CLOEXEC) if plan.seccomp else -1
        launch: _Launch | None = None
        try:
            launch = _launch(spec, ready_write, seccomp_fd)
            popen = subprocess.Popen(
                launch.argv,
                preexec_fn=launch.prepare,  # noqa: PLW1509 - only with a single thread: _launch
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=base_env(workspace, plan),
                cwd=workspace.root.parent if plan.contained else workspace.root,
                start_new_session=True,
                pass_fds=(ready_write, *launch.fds, *([seccomp_fd] if seccomp_fd >= 0 else [])),
                **launch.options,
            )
        finally:
            os.close(ready_write)
            if seccomp_fd >= 0:
                os.close(seccomp_fd)
            for fd in launch.fds if launch is not None else ():
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


@dataclass(frozen=True)
class _Launch:
    """How ``Popen`` starts a stage: its command, the descriptors it must inherit besides the
    ready pipe and the filter (the caller closes them), and the launcher's steps between fork
    and exec, as Python (`prepare`) or as ``Popen``'s own options (`options`)."""

    argv: list[str]
    fds: tuple[int, ...] = ()
    prepare: Callable[[], None] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


def _launch(spec: _StageSpec, ready_fd: int, seccomp_fd: int) -> _Launch:
    """How to start the stage of `spec`.

    The launcher's steps before its exec (umask, limits, the sandbox user, death with the
    executor) take a program start of their own, about 10 ms of CPU. Under bubblewrap,
    ``Popen`` and ``setpriv`` do them (`_native_steps`), so nothing runs in the child's copy
    of the executor's memory (Python there, as `prepare`, touches its pages: about 10 ms of
    CPU a stage against 4, measured from a 68 MB process), and the child shares it (vfork)
    until bubblewrap starts. Otherwise, while the executor has a single thread (its start-up,
    when its first stage starts), running them as Python between fork and exec is safe, so
    they run there (``_launcher.prepare``, the same code) and the launcher is skipped; the
    namespaces mode, which builds its view in the launcher, always runs it.
    """
    launch, command, fds = _stage_launch(spec, ready_fd, seccomp_fd)
    if spec.plan.isolation == "bubblewrap":
        before, options = _native_steps(launch)
        return _Launch([*before, *command], fds, options=options)
    if "namespaces" not in launch and single_threaded():
        return _Launch(command, fds, prepare=functools.partial(_launcher.prepare, launch))
    return _Launch([*launcher_argv(json.dumps(launch)), *command], fds)


def _native_steps(launch: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The launcher's steps (``_launcher.prepare``) for bubblewrap, as a command to put before
    it and ``Popen`` options: the umask; the sandbox user, when the executor is root; death
    with the executor is bubblewrap's own ``--die-with-parent``. The limits are set on the
    executor itself, whose children inherit them: a core file size of 0 (it never writes one
    either).

    The sandbox user is taken by util-linux's ``setpriv`` in front of bubblewrap (every uid and
    gid the user's, no supplementary group: ``setgroups([])``, then the group, then the user,
    as ``_launcher`` drops), so that ``Popen`` starts it with ``vfork``. ``Popen``'s own
    ``user``, ``group`` and ``extra_groups`` make it ``fork`` the whole executor instead, which
    copies its page tables and write-protects its memory: every page the executor writes after
    that faults once more, about 5 ms of CPU a stage (docs/BENCHMARKS.md, issue 47). Without a
    ``setpriv`` a root executor can trust (:func:`~sandbox_executor.sandbox_user.setpriv`),
    ``Popen``'s options do it."""
    set_limits(cast(dict[str, int], launch["rlimits"]))
    options: dict[str, Any] = {"umask": 0o022}
    uid, gid = launch["uid"], launch["gid"]
    if not isinstance(uid, int) or os.geteuid() != 0:
        return [], options
    group = gid if isinstance(gid, int) else uid
    tool = setpriv()
    if tool is not None:
        return [tool, "--reuid", str(uid), "--regid", str(group), "--clear-groups", "--"], options
    return [], options | {"user": uid, "group": group, "extra_groups": []}


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
