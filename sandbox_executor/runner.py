"""Running one script: `ScriptRunner` hands a stage its order and watches it to its end.

The end is the script's own, its wall timeout, a cancellation or its disk budget; whichever,
no process is left behind (the group, then the sandbox user's sweep) and the streams are
captured to the last byte the pipes give (``capture``). The stage (``stage``) and the order
(``run_order``) are made before; the executor (``executor``) calls `ScriptRunner.run` and
reads the `RunOutcome`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from sandbox_executor.capture import DRAIN_GRACE_SECONDS, Capture, capture_pipe, close_pipes
from sandbox_executor.disk import watch as watch_disk
from sandbox_executor.run_order import RunOrder
from sandbox_executor.sandbox_user import SandboxUser
from sandbox_executor.stage import Stage
from skillweave.sandbox import ExecutionLimits, Isolation

__all__ = ["RunOutcome", "ScriptRunner"]

_PIPE_CAPACITY: Final = 65536
"""Linux's default pipe buffer: what a write into an empty pipe takes without blocking."""


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
            await capture_pipe(loop, popen.stdout, stdout),
            await capture_pipe(loop, popen.stderr, stderr),
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
                await asyncio.wait({exited}, timeout=DRAIN_GRACE_SECONDS)
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
            await close_pipes(pipes)
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
