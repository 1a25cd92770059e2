"""Serving the executor: `run_executor` binds, starts uvicorn and reports where it listens.

A manager spawns many executors at once, so each binds port 0 and reports the port the kernel
chose: ``{"port": N, "pid": P, "folder": F, "isolation": I}`` (F: the executor's own folder,
which the backend removes once the executor is gone, however it ended; I: the isolation its
``/healthz`` reports, so a local backend need not ask; and ``"channel"``: its run channel's
socket, when it listens on one) written atomically to a ready file, and one line
``EXECUTOR_READY port=N`` on stdout, both only once the server accepts connections. SIGTERM or
SIGINT kills a running script at once, then shuts down (the pending /execute answers
``cancelled``) and removes the executor's folder.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Final

import uvicorn
from fastapi import FastAPI

from sandbox_executor.app import create_app, prebuild
from sandbox_executor.executor import Executor
from sandbox_executor.sandbox_user import SandboxUser
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.workspace import rehearse
from skillweave.atomic_write import atomic_file

__all__ = ["READY_LINE", "preload", "run_executor"]

logger = logging.getLogger(__name__)

READY_LINE: Final = "EXECUTOR_READY port={port}"
_LATE_IMPORTS: Final = (
    "concurrent.futures.thread",  # the pool of asyncio.to_thread
    "fastapi.telemetry._runtime",  # FastAPI's lifespan, imported on the first lifespan event
)
"""Modules a forked executor imported on its way to its answer (its ``sys.modules`` after the
run against the zygote's), each about 0.3 ms of unmarshalling in every executor."""
_GRACEFUL_SHUTDOWN_SECONDS: Final = 5


class _ExecutorServer(uvicorn.Server):
    """uvicorn, plus a ready report after startup and an immediate kill on a signal."""

    def __init__(
        self, config: uvicorn.Config, *, executor: Executor, on_ready: Callable[[], None]
    ) -> None:
        super().__init__(config)
        self._executor = executor
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and not self.should_exit:
            self._on_ready()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._executor.kill_now()
        super().handle_exit(sig, frame)


def _bind(host: str, port: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.set_inheritable(False)
    return sock


def _announce(
    *, port: int, ready_file: Path | None, channel: Path | None, executor: Executor
) -> None:
    if ready_file is not None:
        # The folder: for the backend to remove once this process is gone, however it ended.
        # The isolation: what /healthz would say, so a local backend need not ask.
        report: dict[str, object] = {
            "port": port,
            "pid": os.getpid(),
            "folder": str(executor.folder),
            "isolation": executor.isolation,
        }
        if channel is not None:
            report["channel"] = str(channel)
        # Atomic (never read half-written), not durable: it means nothing after a restart.
        with atomic_file(ready_file, durable=False) as out:
            out.write(json.dumps(report).encode())
    print(READY_LINE.format(port=port), flush=True)
    logger.info("executor ready on port %d", port)


def _restore_priority(niceness: int, user: SandboxUser | None) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, 0, niceness)
        if user is not None:  # the warm sandbox, which started at the lower priority too
            os.setpriority(os.PRIO_USER, user.uid, niceness)
    except PermissionError:
        logger.info("staying at the start-up CPU priority: raising it back needs root")


def preload() -> None:
    """Import and build now what serving an executor would on the way: the route table
    (`prebuild`), uvicorn's loop, protocol and lifespan modules (``Config.load`` and
    ``Config.get_loop_factory`` pick them), the modules an executor was seen importing late
    (`_LATE_IMPORTS`), the IDNA codec of address lookups, and a rehearsal of a workspace's
    file work.

    The zygote calls it once, so the executors it forks start with all of it done.
    """
    prebuild()
    config = uvicorn.Config(FastAPI(), log_config=None, lifespan="on")
    config.load()
    config.get_loop_factory()  # imports the event loop's module
    for name in _LATE_IMPORTS:
        with contextlib.suppress(ImportError):  # a library's private module: if it has it
            importlib.import_module(name)
    socket.getaddrinfo("127.0.0.1", 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    "localhost".encode("idna")
    with tempfile.TemporaryDirectory(prefix="skillweave-rehearsal-") as scratch:
        rehearse(Path(scratch) / "rehearsal")


def run_executor(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str,
    ready_file: Path | None = None,
    workdir: Path | None = None,
    settings: ExecutorSettings | None = None,
    log_level: str = "info",
    start_niceness: int = 0,
    channel: Path | None = None,
) -> None:
    """Serve one executor until it is told to stop (SIGTERM/SIGINT).

    A pool starts executors while others run scripts: with `start_niceness`, the start-up (the
    interpreter's imports, the warm sandbox) runs at that lower CPU priority, and the executor
    and its sandbox go back to the normal priority once ready. Going back needs root (or
    CAP_SYS_NICE); without it the executor stays at the lower priority.

    Args:
        host: Address to listen on; loopback by default.
        port: 0 lets the kernel choose a free port, which is then reported.
        token: The manager's bearer token (never printed nor logged).
        ready_file: Where to write ``{"port": N, "pid": P}`` once accepting connections.
        workdir: Where the executor makes its folder (default: the temp dir).
        settings: Default: read from ``EXECUTOR__*`` variables.
        log_level: uvicorn's log level.
        start_niceness: How much to lower the CPU priority while starting (``nice``).
        channel: Where to listen for runs on a Unix socket as well (see
            ``skillweave.sandbox.run_channel``); reported in the ready file when it does.

    Raises:
        ConfigError: No token.
        ExecutorError: The executor cannot start here (see `create_app`).
        OSError: The address cannot be bound.
    """
    normal = os.getpriority(os.PRIO_PROCESS, 0)
    if start_niceness:
        os.nice(start_niceness)
    app = create_app(token=token, workdir=workdir, settings=settings, channel=channel)
    if start_niceness:
        _restore_priority(normal, app.state.executor.user)
    sock = _bind(host, port)
    chosen = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level=log_level,
        log_config=None,  # the process's handler (text or JSON lines), not uvicorn's own
        lifespan="on",
        timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS,
    )
    server = _ExecutorServer(
        config,
        executor=app.state.executor,
        on_ready=lambda: _announce(
            port=chosen,
            ready_file=ready_file,
            channel=app.state.channel,
            executor=app.state.executor,
        ),
    )
    with sock:
        server.run(sockets=[sock])
