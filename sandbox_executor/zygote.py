"""``python -m sandbox_executor.zygote``: the local pool's executor factory.

Starting a sandbox executor as a new interpreter costs about 0.4 s of imports (FastAPI,
uvicorn, pydantic) before its sandbox even starts. The manager's local backend instead starts
this zygote once per pool: it imports the executor, probes the isolation once (see
``isolation.settle_isolation``), and then forks one fresh executor per sandbox. Each executor
is still made for one execution and destroyed after it; only the cost of making it changes.

Why a forked executor is as fresh as a started one:

- The zygote is single-threaded and has never served a request, run a script or read a token,
  and holds no sandbox uid (its probe's is given back, unmarked, so its next holder sweeps it):
  what an executor inherits is the state of a process that only imported modules and probed.
  It refuses to fork at all if it finds a second thread.
- Everything that belongs to one sandbox is made after the fork, in the child: its own
  session and process group, its token (read from a file in its own folder, which only the
  manager and it can read, then removed), its sandbox uid, folder, seccomp filter file, warm
  stage, listening socket and event loop. Siblings share nothing of that; the memory they
  share with the zygote is copy-on-write.
- Scripts never run in the executor's process in any case: they run in the stage, a new
  interpreter the executor starts through the launcher and bubblewrap (exec, new namespaces,
  the sandbox uid), exactly as before.

The protocol is ``skillweave.sandbox.zygote_protocol`` (JSON lines on stdin and stdout). The
zygote reaps its executors and reports each exit; it signals an executor only while it has not
reaped it, so a signal can never reach a process that took over a reaped executor's pid. It
dies with the manager (``--parent-pid``), and its executors die with it. End of stdin: every
executor is killed and reaped, then the zygote exits.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import select
import signal
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from sandbox_executor import __main__ as executor_main
from sandbox_executor.errors import ExecutorError
from sandbox_executor.executor import folders_parent
from sandbox_executor.isolation import probe_isolation, settle_isolation
from sandbox_executor.server import preload
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.stage import single_threaded
from skillweave.errors import ConfigError
from skillweave.sandbox import EXECUTOR_FOLDER_PREFIX, SOCKET_NAME, sweep_leftovers
from skillweave.sandbox import zygote_protocol as protocol

__all__ = ["main"]

_READ_BYTES: Final = 65536
_PR_SET_NAME: Final = 15
ZYGOTE_NAME: Final = "sw-zygote"
EXECUTOR_NAME: Final = "sw-executor"
"""What ``ps`` and ``top`` show as the command name (``/proc/PID/comm``) of the zygote and of
each executor it forked: their command lines are all the zygote's."""
SWEEPER_NAME: Final = "sw-sweeper"
"""The same, for the child that removes what killed executors left (:meth:`_Zygote.serve`)."""


def _name_process(name: str) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_NAME, name.encode("ascii"), 0, 0, 0)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox_executor.zygote",
        description="Fork one-shot skillweave sandbox executors on order (the local pool's).",
    )
    parser.add_argument("--parent-pid", type=int, default=None, help="die with this process")
    parser.add_argument(
        "--start-niceness", type=int, default=0, help="each executor starts at this niceness"
    )
    parser.add_argument(
        "--log-level", default="info", choices=("debug", "info", "warning", "error")
    )
    parser.add_argument("--log-format", default="text", choices=("text", "json"))
    return parser


def _settle(settings: ExecutorSettings) -> str:
    """Probe the isolation once (:func:`probe_isolation`) and settle it for every executor
    forked from here. Returns the mode."""
    plan = probe_isolation(settings)
    settle_isolation(settings, plan)
    return plan.isolation


class _Zygote:
    """The order loop: one thread, `select` over stdin and a SIGCHLD wake-up pipe."""

    def __init__(self, args: argparse.Namespace, settings: ExecutorSettings) -> None:
        self._args = args
        self._settings = settings
        # Every executor's flags, parsed once here: a fork adds only its own two files.
        self._executor_args = executor_main.parser().parse_args(
            [
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--start-niceness",
                str(args.start_niceness),
                "--log-level",
                args.log_level,
                "--log-format",
                args.log_format,
            ]
        )
        self._children: dict[int, str] = {}  # pid → sandbox id, until reaped
        self._sweeper: int | None = None  # the leftovers' sweeper, until reaped
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wake-up fd fires
        signal.set_wakeup_fd(self._wake_write, warn_on_full_buffer=False)

    def serve(self, isolation: str) -> None:
        self._sweep_leftovers()
        self._report(protocol.Ready(pid=os.getpid(), isolation=isolation))
        pending = b""
        while True:
            readable, _, _ = select.select([0, self._wake_read], [], [])
            if self._wake_read in readable:
                with contextlib.suppress(BlockingIOError):
                    while os.read(self._wake_read, 512):
                        pass
                self._reap()
            if 0 not in readable:
                continue
            chunk = os.read(0, _READ_BYTES)
            if not chunk:
                break
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                self._obey(line)
            if len(pending) > protocol.MAX_LINE_BYTES:
                raise SystemExit("error: an order line is too long")
        self._stop_all()

    def _obey(self, line: bytes) -> None:
        try:
            order = protocol.decode_order(line)
        except ValidationError as exc:
            raise SystemExit(f"error: not an order: {exc.errors()[0]['msg']}") from None
        match order:
            case protocol.Spawn():
                self._spawn(order)
            case protocol.SignalOrder():
                self._signal(order)

    def _spawn(self, order: protocol.Spawn) -> None:
        if not single_threaded():
            self._report(protocol.Refused(id=order.id, error="the zygote is not single-threaded"))
            return
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        zygote = os.getpid()  # the child's parent: it dies with this one, never with init
        try:
            pid = os.fork()
        except OSError as exc:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            self._report(protocol.Refused(id=order.id, error=f"fork failed: {exc.strerror}"))
            return
        if pid == 0:
            code = 1
            try:
                code = self._become_executor(order, blocked, zygote=zygote)
            except BaseException:  # the child must never return to the zygote's loop
                traceback.print_exc()
            finally:
                with contextlib.suppress(BaseException):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        self._children[pid] = order.id
        self._report(protocol.Spawned(id=order.id, pid=pid))

    def _become_executor(
        self, order: protocol.Spawn, mask: set[signal.Signals], *, zygote: int
    ) -> int:
        """In the child: die with the zygote (first: a zygote killed while it forks leaves no
        executor behind; asked after its death, ``getppid()`` would name init, and the child
        would outlive it), shed the zygote's channels and signals, then run one executor."""
        executor_main.die_with(zygote)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.close(self._wake_read)
        os.close(self._wake_write)
        os.setsid()
        _name_process(EXECUTOR_NAME)
        workdir = Path(order.workdir)
        os.chdir(workdir)
        null = os.open(os.devnull, os.O_RDWR)
        errors = os.open("executor.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for fd, target in ((0, null), (1, null), (2, errors)):
            os.dup2(target, fd)
        os.close(null)
        os.close(errors)
        token_file = workdir / protocol.TOKEN_FILE
        token = token_file.read_text(encoding="utf-8").strip()
        token_file.unlink()
        args = argparse.Namespace(**vars(self._executor_args))
        args.ready_file = workdir / "ready.json"
        args.channel = workdir / SOCKET_NAME
        return executor_main.serve(args, settings=self._settings, token=token)

    def _signal(self, order: protocol.SignalOrder) -> None:
        # Only an executor not reaped yet: its pid cannot belong to anyone else.
        for pid, sandbox in self._children.items():
            if sandbox == order.id:
                try:
                    os.killpg(pid, order.signum)
                except ProcessLookupError:  # not its own group leader yet (just forked)
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, order.signum)
                return

    def _sweep_leftovers(self) -> None:
        """Remove the folders of executors killed with an earlier zygote (SIGKILL leaves them;
        a live executor holds its folder's lock, so its folder is never taken:
        ``skillweave.sandbox.leftovers``), in a child of its own: a large sweep does not hold
        up this zygote's start or its first executor."""
        parent = folders_parent(self._executor_args.workdir)
        try:
            pid = os.fork()
        except OSError as exc:  # left for the next zygote's sweep
            print(f"warning: leftovers not swept: {exc}", file=sys.stderr)
            return
        if pid == 0:  # the sweeper: it writes nothing on the protocol's stdout
            status = 1
            try:
                _name_process(SWEEPER_NAME)
                sweep_leftovers(parent, (EXECUTOR_FOLDER_PREFIX,))
                status = 0
            finally:
                os._exit(status)
        self._sweeper = pid

    def _reap(self) -> None:
        while self._children or self._sweeper is not None:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self._sweeper:
                self._sweeper = None
                continue
            sandbox = self._children.pop(pid, None)
            if sandbox is not None:
                code = os.waitstatus_to_exitcode(status)
                self._report(protocol.Exited(id=sandbox, code=code))

    def _stop_all(self) -> None:
        for pid in list(self._children):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in list(self._children):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self._children.clear()

    def _report(
        self, message: protocol.Ready | protocol.Spawned | protocol.Refused | protocol.Exited
    ) -> None:
        data = protocol.encode(message)
        while data:  # a pipe write of a short line is whole; loop for the general case
            data = data[os.write(1, data) :]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.parent_pid is not None:
        executor_main.die_with(args.parent_pid)
    try:
        settings = ExecutorSettings()
    except ValidationError as exc:
        print(f"error: {executor_main.setting_problem(exc)}", file=sys.stderr)
        return protocol.EXIT_REFUSED
    os.environ.pop("EXECUTOR__TOKEN", None)  # executors read their own, never this one
    _name_process(ZYGOTE_NAME)
    preload()
    try:
        isolation = _settle(settings)
    except (ConfigError, ExecutorError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return protocol.EXIT_REFUSED
    _Zygote(args, settings.model_copy(update={"token": None})).serve(isolation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
