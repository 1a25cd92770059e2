"""The executor's side of a run's network egress: :class:`EgressBridge`.

A sandbox has a network namespace of its own with nothing but a loopback. A run that may reach
the network (its request carries an ``EgressGrant``) gets a forwarder inside the sandbox,
started by the stage, listening on ``127.0.0.1:3128`` there; it relays each connection to a
Unix socket in the run's workspace (``skillweave.sandbox.egress_policy.EGRESS_SOCKET``). The bridge
serves that socket from outside the sandbox. An executor without a sandbox of its own
(isolation ``none``: a Kubernetes pod, whose network namespace is the boundary and whose
NetworkPolicy lets it reach only the manager's gateway) serves a free loopback port instead.
Either way the bridge relays each connection to the manager's egress proxy, adding the grant's
token as ``Proxy-Authorization`` after the request line, so that the proxy knows whose
connection it is. The script never sees the token; the proxy judges every connection
(``mcp_manager.egress``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Final

from skillweave.sandbox import EgressGrant

__all__ = ["EgressBridge"]

logger = logging.getLogger("sandbox_executor")

_LINE_MAX: Final = 16 * 1024
_CHUNK: Final = 64 * 1024
_CONNECT_SECONDS: Final = 10.0


class EgressBridge:
    """Relays the sandbox's egress socket to the manager's proxy, for one run."""

    def __init__(self, grant: EgressGrant) -> None:
        self.grant = grant
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, path: Path) -> None:
        """Serve `path` (its folder made here, not writable by the sandbox user)."""
        path.parent.mkdir(mode=0o755, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        self._server = await asyncio.start_unix_server(self._handle, path=str(path))
        path.chmod(0o666)  # the sandbox user connects; only this run's workspace holds it

    async def start_loopback(self) -> int:
        """Serve a free port of 127.0.0.1 and return it: for an executor without a sandbox of
        its own, whose network namespace is the pod's (the script's proxy variables name it)."""
        self._server = await asyncio.start_server(self._handle, host="127.0.0.1", port=0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        upstream: asyncio.StreamWriter | None = None
        try:
            line = await reader.readuntil(b"\r\n")
            if len(line) > _LINE_MAX:
                return
            up_reader, upstream = await asyncio.wait_for(
                asyncio.open_connection(self.grant.host, self.grant.port),
                timeout=_CONNECT_SECONDS,
            )
            upstream.write(line + f"Proxy-Authorization: Bearer {self.grant.token}\r\n".encode())
            await asyncio.gather(_pipe(reader, upstream), _pipe(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            if upstream is None:
                writer.write(
                    b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 37\r\nConnection: close\r\n"
                    b"\r\nthe egress proxy cannot be reached\r\n"
                )
                with contextlib.suppress(OSError):
                    await writer.drain()
        finally:
            for end in (writer, upstream):
                if end is not None:
                    end.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(_CHUNK):
            sink.write(chunk)
            await sink.drain()
    except (OSError, ConnectionError):
        return
    finally:
        if sink.can_write_eof():
            with contextlib.suppress(OSError, RuntimeError):
                sink.write_eof()
