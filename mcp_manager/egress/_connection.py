"""One client connection to the egress proxy, at its two ends: reading its request head within
a time bound (:func:`read_or_refusal`), and answering a refusal and closing with a linger
(:func:`close_connection`).

Called by the gateway (``_gateway``), which reads a head to find its grant, and by the proxy
(``_proxy``), which serves it; the head itself is read by ``_http``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final

from mcp_manager.egress._http import CHUNK_BYTES, HttpRefusal, RequestHead, read_head

__all__ = ["DRAIN_SECONDS", "close_connection", "method_of", "read_or_refusal"]

DRAIN_SECONDS: Final = 5.0
"""How long connections in flight may take to finish when their egress closes, and a tunnel's
other side once one side has closed."""
_LINGER_SECONDS: Final = 0.5
_HEAD_SECONDS: Final = 30.0
"""How long a client may take to send its request head (408 past it)."""
_LINGER_BYTES: Final = 1024 * 1024
_TITLES: Final = {
    400: "Bad Request",
    403: "Forbidden",
    407: "Proxy Authentication Required",
    408: "Request Timeout",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    502: "Bad Gateway",
}


async def read_or_refusal(reader: asyncio.StreamReader) -> RequestHead | HttpRefusal | None:
    """The connection's request head, the refusal of one that could not be read (to be
    recorded by whoever serves it), or None when the client went before a byte."""
    seen = bytearray()
    try:
        return await asyncio.wait_for(read_head(reader, seen), timeout=_HEAD_SECONDS)
    except HttpRefusal as refusal:
        return refusal
    except TimeoutError:
        reason = f"no complete request head within {_HEAD_SECONDS:g} seconds"
        return HttpRefusal(408, reason, seen=bytes(seen))
    except (ConnectionError, OSError) as exc:
        if not seen:
            return None
        return HttpRefusal(
            400, f"the connection was lost within the request head ({exc})", seen=bytes(seen)
        )


def method_of(head: bytes) -> str:
    """The request's method as far as it reads as one (for a refusal's record)."""
    method = head.split(b" ", 1)[0][:24]
    return method.decode("ascii") if method.isalpha() and method.isascii() else ""


async def close_connection(
    writer: asyncio.StreamWriter,
    refused: HttpRefusal | None = None,
    *,
    reader: asyncio.StreamReader | None = None,
) -> None:
    """Answer `refused`, if given, and close. With the client's `reader`, the close lingers:
    the proxy's end is shut first and what the client still sends (the rest of a refused
    head, a second request) is read and dropped for a moment, so that the kernel does not
    reset the connection over unread bytes before the client has read its answer."""
    if refused is not None:
        await _answer(writer, refused.status, refused.reason)
    if reader is not None and writer.can_write_eof() and not writer.is_closing():
        with contextlib.suppress(OSError, RuntimeError):
            writer.write_eof()
        with contextlib.suppress(OSError, TimeoutError, asyncio.LimitOverrunError):
            await asyncio.wait_for(_discard(reader), timeout=_LINGER_SECONDS)
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()


async def _discard(reader: asyncio.StreamReader) -> None:
    left = _LINGER_BYTES
    while left > 0 and (chunk := await reader.read(CHUNK_BYTES)):
        left -= len(chunk)


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    """A one-line text/plain answer of the proxy's own, then the connection closes."""
    body = (" ".join(reason.split()) + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {_TITLES.get(status, 'Refused')}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    with contextlib.suppress(ConnectionError, OSError):
        writer.write(head + body)
        await writer.drain()
