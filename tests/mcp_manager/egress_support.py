"""A fake "external API" for the egress tests: HTTP on loopback that wants a bearer token."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


@contextlib.asynccontextmanager
async def external_api(token: str, *, heads: list[str] | None = None) -> AsyncIterator[int]:
    """Serve on a free loopback port (yielded): 200 ``figures for PATH`` for a request with
    ``Authorization: Bearer TOKEN``, 401 ``who?`` otherwise; one request per connection. Each
    request's head joins `heads`, when given."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            if heads is not None:
                heads.append(head)
            path = head.split(" ", 2)[1]
            authorized = f"authorization: bearer {token}".lower() in head.lower()
            status, body = ("200 OK", f"figures for {path}") if authorized else ("401 No", "who?")
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
                f"\r\n{body}".encode()
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went first
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield int(server.sockets[0].getsockname()[1])
    finally:
        server.close()
        await server.wait_closed()
