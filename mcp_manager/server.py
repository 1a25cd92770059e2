"""Serving the manager: ``run_manager`` (``skillweave manager``) and :class:`LoopbackServer`,
which serves an app on a free loopback port inside the running event loop (used by
``skillweave sandbox run`` when no manager is configured, by the benchmarks and by the tests)."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Final, Self

import uvicorn
from starlette.types import ASGIApp

from mcp_manager.app import create_app
from skillweave.config import Settings
from skillweave.errors import SandboxStartError

__all__ = ["LoopbackServer", "run_manager"]

_POLL_SECONDS: Final = 0.01


def run_manager(settings: Settings) -> None:
    """Serve the MCP manager on ``settings.sandbox.host:port`` until interrupted."""
    app = create_app(settings)
    # log_config=None: uvicorn's records go to the process's handler (its format, its
    # redaction), not to handlers of uvicorn's own.
    uvicorn.run(
        app,
        host=settings.sandbox.host,
        port=settings.sandbox.port,
        log_level="info",
        log_config=None,
    )


class LoopbackServer:
    """`app` served by uvicorn on 127.0.0.1 and a port the OS picks, as a task of this loop."""

    def __init__(self, app: ASGIApp) -> None:
        self._server = uvicorn.Server(
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
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()  # re-raises what stopped it, if anything did
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
        await self._task
        self._task = None

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
