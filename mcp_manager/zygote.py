"""The manager's end of the executor zygote (``python -m sandbox_executor.zygote``).

:class:`Zygote` starts the zygote, forks executors through it and follows their exits;
:class:`ForkedExecutor` is one of them, with the part of a subprocess's interface the pool
uses (``pid``, ``returncode``, ``wait()``). The protocol and why a forked executor is as fresh
as a started one: ``skillweave.sandbox.zygote_protocol`` and ``sandbox_executor.zygote``.

If the zygote dies, every executor it forked dies with it (``PR_SET_PDEATHSIG``): they are
reported exited with SIGKILL, and the next :meth:`Zygote.spawn` fails; the local backend then
starts a new zygote.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from skillweave.errors import SandboxStartError
from skillweave.sandbox import zygote_protocol as protocol

__all__ = ["ForkedExecutor", "Zygote"]

logger = logging.getLogger("skillweave.manager.zygote")


class ForkedExecutor:
    """One executor process the zygote forked, until it exits."""

    def __init__(self, zygote: Zygote, sandbox_id: str, pid: int) -> None:
        self.zygote = zygote
        self.id = sandbox_id
        self.pid = pid
        self.returncode: int | None = None
        self._exited = asyncio.Event()

    def exited(self, code: int) -> None:
        self.returncode = code
        self._exited.set()

    async def wait(self) -> int:
        await self._exited.wait()
        assert self.returncode is not None
        return self.returncode

    async def stop(self, grace: float) -> None:
        """SIGTERM, then SIGKILL after `grace` seconds; returns once it has exited."""
        for signum, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
            if self.returncode is not None:
                return
            await self.zygote.signal(self, signum)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exited.wait(), wait)


def last_words(errors: Path) -> str:
    """The last line a process wrote to `errors` (without its ``error:`` prefix)."""
    try:
        lines = errors.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        lines = []
    return lines[-1].removeprefix("error: ") if lines else "no message"


class Zygote:
    """A running zygote: forks executors on demand and reports their exits."""

    def __init__(self, process: asyncio.subprocess.Process, errors: Path, isolation: str) -> None:
        self.process = process
        self.isolation = isolation
        self._errors = errors
        self._children: dict[str, ForkedExecutor] = {}
        self._spawning: dict[str, asyncio.Future[ForkedExecutor]] = {}
        self._write_lock = asyncio.Lock()
        self._orphans: set[asyncio.Future[None]] = set()  # forked for a cancelled spawn
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(
        cls,
        *,
        python: str,
        env: Mapping[str, str],
        folder: Path,
        start_niceness: int,
        timeout: float,
    ) -> Zygote:
        """Start the zygote in `folder` and wait until it takes orders.

        Raises:
            SandboxStartError: It exited first (permanent when it refused this host: the
                message says what to install or set) or was not ready in `timeout` seconds.
        """
        errors = folder / "zygote.err"
        with errors.open("wb") as stderr:
            process = await asyncio.create_subprocess_exec(
                python,
                "-m",
                "sandbox_executor.zygote",
                "--parent-pid",
                str(os.getpid()),
                "--start-niceness",
                str(start_niceness),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                env=dict(env),
                cwd=folder,
                start_new_session=True,
                limit=protocol.MAX_LINE_BYTES,
            )
        assert process.stdout is not None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), timeout)
            ready = protocol.decode_report(line) if line else None
        except (TimeoutError, ValidationError, ValueError):
            ready = None
        if not isinstance(ready, protocol.Ready):
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            code = await process.wait()
            if not line:
                raise SandboxStartError(
                    f"the executor zygote exited with code {code}: {last_words(errors)}",
                    permanent=code == protocol.EXIT_REFUSED,
                )
            raise SandboxStartError(f"the executor zygote did not start in {timeout:.0f} s")
        logger.info("executor zygote %d ready (isolation %s)", ready.pid, ready.isolation)
        return cls(process, errors, ready.isolation)

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and not self._reader.done()

    async def spawn(self, sandbox_id: str, workdir: Path) -> ForkedExecutor:
        """Fork an executor for `sandbox_id` in `workdir` (its token file already there).

        Raises:
            SandboxStartError: The zygote refused or is gone.
        """
        if not self.alive:
            raise SandboxStartError(f"the executor zygote is gone: {last_words(self._errors)}")
        future: asyncio.Future[ForkedExecutor] = asyncio.get_running_loop().create_future()
        self._spawning[sandbox_id] = future
        try:
            await self._send(protocol.Spawn(id=sandbox_id, workdir=str(workdir)))
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled() and future.exception() is None:
                stopping = asyncio.ensure_future(future.result().stop(0.0))
                self._orphans.add(stopping)
                stopping.add_done_callback(self._orphans.discard)
            raise
        finally:
            self._spawning.pop(sandbox_id, None)

    async def signal(self, child: ForkedExecutor, signum: int) -> None:
        if self.alive and child.returncode is None:
            await self._send(protocol.SignalOrder(id=child.id, signum=signum))

    async def close(self) -> None:
        """Stop the zygote: it kills and reaps every executor it still has, then exits."""
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 5.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            await self.process.wait()
        await self._reader

    async def _send(self, order: protocol.Spawn | protocol.SignalOrder) -> None:
        assert self.process.stdin is not None
        async with self._write_lock:
            try:
                self.process.stdin.write(protocol.encode(order))
                await self.process.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise SandboxStartError(f"the executor zygote is gone: {exc}") from exc

    async def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            while line := await self.process.stdout.readline():
                self._take(protocol.decode_report(line))
        except (ValidationError, ValueError) as exc:
            logger.error("the executor zygote said something unexpected: %s", exc)
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        finally:
            # Its executors die with it (PR_SET_PDEATHSIG): none is left to wait for.
            for child in self._children.values():
                child.exited(-signal.SIGKILL)
            self._children.clear()
            gone = SandboxStartError(f"the executor zygote is gone: {last_words(self._errors)}")
            for future in self._spawning.values():
                if not future.done():
                    future.set_exception(gone)

    def _take(self, report: protocol.Report) -> None:
        match report:
            case protocol.Spawned(id=sandbox_id, pid=pid):
                child = ForkedExecutor(self, sandbox_id, pid)
                self._children[sandbox_id] = child
                future = self._spawning.get(sandbox_id)
                if future is not None and not future.done():
                    future.set_result(child)
            case protocol.Refused(id=sandbox_id, error=error):
                future = self._spawning.get(sandbox_id)
                if future is not None and not future.done():
                    future.set_exception(SandboxStartError(f"executor not started: {error}"))
            case protocol.Exited(id=sandbox_id, code=code):
                exited = self._children.pop(sandbox_id, None)
                if exited is not None:
                    exited.exited(code)
            case protocol.Ready():
                pass
