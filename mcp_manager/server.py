"""Serving the manager: ``run_manager`` (``skillweave manager``) and :class:`LoopbackServer`,
which serves an app on a free loopback port inside the running event loop (used by the
benchmarks and the tests); :func:`loopback_manager` is a manager served so, whose id names the
port it listens on (the in-process manager of ``run``, ``dev``, ``demo``, ``sandbox run``:
``skillweave.cli.compose.open_manager``)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Final, Self

import uvicorn
from starlette.types import ASGIApp

from mcp_manager.app import create_app
from skillweave.config import Settings
from skillweave.errors import SandboxStartError
from skillweave.readiness import Readiness

__all__ = ["LoopbackServer", "loopback_manager", "run_manager"]

_POLL_SECONDS: Final = 0.01
_STARTUP_FAILURE: Final = 3
"""The exit status of a manager whose start-up failed (uvicorn's own)."""


def run_manager(settings: Settings) -> None:
    """Serve the MCP manager on ``settings.sandbox.host:port`` until interrupted. It serves
    (``/healthz`` 503) while it waits for its store at start-up.

    Raises:
        SkillweaveError: what stopped its start-up for good after it had begun to wait (a
            store that refuses it, once it answers), for the caller to say in one line.
    """
    app = create_app(settings)
    # log_config=None: uvicorn's records go to the process's handler (its format, its
    # redaction), not to handlers of uvicorn's own.
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=settings.sandbox.host,
            port=settings.sandbox.port,
            log_level="info",
            log_config=None,
        )
    )
    readiness: Readiness = app.state.readiness

    def stop(_: BaseException) -> None:
        server.should_exit = True

    readiness.on_failure(stop)
    server.run()
    if readiness.failure is not None:
        raise readiness.failure
    if not server.started:  # the start-up failed (said in the log): as uvicorn.run ends
        raise SystemExit(_STARTUP_FAILURE)


def loopback_manager(settings: Settings, **options: Any) -> LoopbackServer:
    """A manager (:func:`~mcp_manager.app.create_app` with `options`) to serve on 127.0.0.1 and
    a port the OS picks now, before the app is made: its settings say that address, so its
    id (``SandboxSettings.manager_identity``: host name and port, unless ``manager_id`` names
    it), in its claims, logs, ``/healthz`` and metrics, is the port it really listens on."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        sandbox = settings.sandbox.model_copy(update={"host": "127.0.0.1", "port": port})
        app = create_app(settings.model_copy(update={"sandbox": sandbox}), **options)
    except BaseException:
        listener.close()
        raise
    return LoopbackServer(app, listener=listener)


class _Embedded(uvicorn.Server):
    """A server inside a process that has its own way to stop: it takes no signal. uvicorn's
    own would catch SIGINT and SIGTERM (stopping the manager under the run that uses it) and
    raise them again once stopped, after the process's handlers had put them to use."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class LoopbackServer:
    """`app` served by uvicorn on 127.0.0.1 and a port the OS picks, as a task of this loop
    (or on `listener`, a socket bound already, which the server then owns). It takes no
    signal: the process that runs it stops it (``skillweave.cli.signals``)."""

    def __init__(self, app: ASGIApp, *, listener: socket.socket | None = None) -> None:
        self._listener = listener
        self._server = _Embedded(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=0,
                log_level="warning",
                lifespan="on",
                log_config=None,  # the process's logging, not uvicorn's own handlers
            )
        )
        self._task: asyncio.Task[None] | None = None
        self.url = ""

    async def start(self) -> str:
        """Start serving (the app's lifespan included) and return the base URL.

        Raises:
            SandboxStartError: the server stopped before it started accepting.
        """
        sockets = [self._listener] if self._listener is not None else None
        self._task = serving = asyncio.create_task(self._server.serve(sockets=sockets))
        while not self._server.started:
            if serving.done():
                self._task = None
                if self._listener is not None:
                    self._listener.close()
                serving.result()  # re-raises what stopped it, if anything did
                raise SandboxStartError("the in-process server did not start")
            await asyncio.sleep(_POLL_SECONDS)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        """Stop serving and wait for the app's shutdown; idempotent."""
        if self._task is None:
            return
        self._server.should_exit = True
        try:
            await self._task
        finally:
            self._task = None
            if self._listener is not None:
                self._listener.close()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
