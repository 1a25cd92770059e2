"""Moving an admitted connection's bytes, under the execution's caps (``_caps``):
:class:`Relay` passes a plain-HTTP request's body up and its response down at once
(:meth:`Relay.exchange`), or copies a ``CONNECT`` tunnel both ways (:meth:`Relay.tunnel`).

Called by the proxy (``_proxy``) once a connection upstream is open.
"""

from __future__ import annotations

import asyncio
import contextlib

from mcp_manager.egress._caps import Caps
from mcp_manager.egress._connection import DRAIN_SECONDS
from mcp_manager.egress._http import CHUNK_BYTES, HttpRefusal, RequestBody
from mcp_manager.egress._log import Entry

__all__ = ["Relay"]


class Relay:
    """Moves one execution's bytes, each chunk counted against its caps."""

    def __init__(self, caps: Caps) -> None:
        self._caps = caps

    async def exchange(
        self,
        body: RequestBody,
        entry: Entry,
        client: asyncio.StreamWriter,
        upstream_reader: asyncio.StreamReader,
        upstream: asyncio.StreamWriter,
    ) -> None:
        """The body up (as parsed), the response down (raw: upstream was told to close), at
        once, since an upstream may answer before the body's end; `entry` counts both.

        Raises:
            HttpRefusal: 429 when the body goes past the byte cap (it is cut there), or the
                body's own refusal.
        """

        async def send() -> None:
            async for frame in body.frames():
                if not self._caps.count(len(frame)):  # the body is cut: the request refused
                    cap = self._caps.max_bytes
                    raise HttpRefusal(
                        429, f"the request's body is past the execution's cap of {cap} bytes"
                    )
                entry.bytes_out += len(frame)
                upstream.write(frame)
                await upstream.drain()

        async def receive() -> None:
            while chunk := await upstream_reader.read(CHUNK_BYTES):
                if not self._caps.count(len(chunk)):
                    entry.reason += f"; closed at the cap of {self._caps.max_bytes} bytes"
                    return
                entry.bytes_in += len(chunk)
                entry.answered = True
                client.write(chunk)
                await client.drain()

        up = asyncio.create_task(send())
        down = asyncio.create_task(receive())
        try:
            done, _ = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
            failed = up.exception() if up in done else None
            if failed is not None:
                raise failed
            await down  # the response, to its end (the upstream closes: Connection: close)
        finally:
            for task in (up, down):
                task.cancel()
            await asyncio.gather(up, down, return_exceptions=True)

    async def tunnel(
        self,
        client_reader: asyncio.StreamReader,
        client_writer: asyncio.StreamWriter,
        upstream_reader: asyncio.StreamReader,
        upstream_writer: asyncio.StreamWriter,
    ) -> tuple[int, int]:
        """A tunnel: copy both ways until either side closes; bytes each way (capped by
        max_bytes)."""
        counts = [0, 0]

        async def pipe(
            source: asyncio.StreamReader, sink: asyncio.StreamWriter, index: int
        ) -> None:
            try:
                while chunk := await source.read(CHUNK_BYTES):
                    if not self._caps.count(len(chunk)):
                        return
                    counts[index] += len(chunk)
                    sink.write(chunk)
                    await sink.drain()
            except (ConnectionError, OSError):
                return
            finally:
                if sink.can_write_eof():
                    with contextlib.suppress(OSError, RuntimeError):
                        sink.write_eof()

        up = asyncio.create_task(pipe(client_reader, upstream_writer, 0))
        down = asyncio.create_task(pipe(upstream_reader, client_writer, 1))
        try:
            # One side done (its end was passed on): the other gets a moment to finish.
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
            await asyncio.wait({up, down}, timeout=DRAIN_SECONDS)
        finally:
            for task in (up, down):
                task.cancel()
            upstream_writer.close()
            with contextlib.suppress(Exception):
                await upstream_writer.wait_closed()
        return counts[0], counts[1]
