"""Fake upstreams for the egress tests, on loopback: an "external API" that wants a bearer
token, and a lenient "paste" service that keeps every byte it receives."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field


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


@dataclass
class Upstream:
    port: int = 0
    connections: list[bytearray] = field(default_factory=list)
    """Every byte each connection received, as received."""
    heads: list[bytes] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)


_HEAD_END = re.compile(rb"\r?\n\r?\n")


async def _read_chunked(reader: asyncio.StreamReader, buffer: bytes, seen: bytearray) -> bytes:
    body = b""
    while True:
        while b"\r\n" not in buffer:
            buffer += await _more(reader, seen)
        size_line, _, buffer = buffer.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        while len(buffer) < size + 2:
            buffer += await _more(reader, seen)
        body, buffer = body + buffer[:size], buffer[size + 2 :]
        if size == 0:
            return body


async def _more(reader: asyncio.StreamReader, seen: bytearray) -> bytes:
    chunk = await reader.read(65536)
    if not chunk:
        raise ConnectionError("closed")
    seen += chunk
    return chunk


@contextlib.asynccontextmanager
async def storing_upstream() -> AsyncIterator[Upstream]:
    """A lenient "paste" service: ``POST`` stores the body, ``GET .../read`` answers every body
    stored so far; requests are read one after another on a connection (a head ends at a
    blank line, LF or CRLF; a body by Content-Length or chunked) until one says close."""
    upstream = Upstream()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen = bytearray()
        upstream.connections.append(seen)
        buffer = b""
        try:
            while True:
                found = _HEAD_END.search(buffer)
                if found is None:
                    buffer += await _more(reader, seen)
                    continue
                head, buffer = buffer[: found.start()], buffer[found.end() :]
                upstream.heads.append(head)
                if re.search(rb"(?im)^transfer-encoding:\s*chunked", head):
                    body = await _read_chunked(reader, buffer, seen)
                    buffer = b""
                else:
                    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                    size = int(length.group(1)) if length else 0
                    while len(buffer) < size:
                        buffer += await _more(reader, seen)
                    body, buffer = buffer[:size], buffer[size:]
                if body:
                    upstream.bodies.append(body)
                target = head.split(b" ")[1] if b" " in head else b""
                answer = b"|".join(upstream.bodies) if target.endswith(b"/read") else b"stored"
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(answer), answer)
                )
                await writer.drain()
                if re.search(rb"(?im)^connection:\s*close", head):
                    return
        except (ConnectionError, ValueError, IndexError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    upstream.port = int(server.sockets[0].getsockname()[1])
    try:
        yield upstream
    finally:
        server.close()
        await server.wait_closed()
