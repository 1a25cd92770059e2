"""Strict HTTP/1.1 for the egress proxy (``_proxy``): reading a client's request head, judging
it well-formed, and writing the one request the proxy sends upstream. The lowest module of the
package: the connection helpers (``_connection``), the relay (``_relay``) and the proxy read
requests through it.

Why strict: the proxy and the upstream must read the same bytes as the same request, or a
script could make the proxy judge one request while the upstream serves another (a second
Host, a header ending only the upstream sees, a body that is a request of its own) and read
back the credential the proxy adds. So the proxy parses with h11 and refuses, with a one-line
:class:`HttpRefusal` (400), every head that two readers might take differently: a bare CR or
LF anywhere, obs-fold, control characters, duplicate ``Host``/``Content-Length``/
``Transfer-Encoding``, ``Content-Length`` with ``Transfer-Encoding``, a request line whose host
is not the ``Host`` header's, a host that is not a plain ASCII name or address
(``skillweave.sandbox.egress_policy.parse_authority``), and whatever h11 itself cannot parse (h11
alone forgives bare LF and unfolds obs-fold, hence the checks before it).

Nothing the client wrote after its head goes upstream as it was written: :func:`upstream_head`
writes the request line in origin form, ``Host`` set to the judged destination, the end-to-end
headers only and ``Connection: close``; :class:`RequestBody` yields the body's bytes as h11
framed them and the proxy re-frames them (same length, or chunks of its own). Bytes after the
first request's end are never read, so a pipelined or smuggled second request goes nowhere.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final, Literal

import h11

from skillweave.errors import EgressPolicyError
from skillweave.sandbox import parse_authority

__all__ = [
    "CHUNK_BYTES",
    "MAX_HEAD_BYTES",
    "HttpRefusal",
    "ProxyRequest",
    "RequestBody",
    "RequestHead",
    "parse_request",
    "read_head",
    "upstream_head",
]

MAX_HEAD_BYTES: Final = 64 * 1024
"""The largest request head the proxy reads (431 past it)."""
CHUNK_BYTES: Final = 64 * 1024
"""The most read from a stream at once."""
_HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
    }
)
_FRAMING: Final = frozenset({"host", "content-length", "transfer-encoding"})
"""Headers the proxy writes itself: never copied from the client."""
_SINGLE: Final = ("host", "content-length", "transfer-encoding")
_CONTROL: Final = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_FIELD_NAME: Final = re.compile(r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_FIELD_VALUE: Final = re.compile(r"[^\x00-\x08\x0a-\x1f\x7f]*")
_DIGITS: Final = re.compile(rb"[0-9]{1,18}")


class HttpRefusal(Exception):
    """A request the proxy answers itself: `status` and a one-line `reason`. `seen` holds
    the head bytes read so far (the gateway looks for its grant there)."""

    def __init__(self, status: int, reason: str, *, seen: bytes = b"") -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.seen = seen


@dataclass(frozen=True, slots=True)
class RequestHead:
    """A request head as read: its bytes (ending in CRLF CRLF) and what followed it in the
    same reads (the start of the body, or of a tunnel's data)."""

    raw: bytes
    rest: bytes


@dataclass(frozen=True, slots=True)
class ProxyRequest:
    """A well-formed proxy request, as the proxy judges and re-sends it.

    Attributes:
        method: ``CONNECT`` or an HTTP method.
        host: the destination's host (lower case; an IPv6 address without brackets).
        port: the destination's port.
        path: the origin-form target sent upstream (``""`` for ``CONNECT``).
        version: ``1.0`` or ``1.1``.
        headers: the end-to-end headers to forward, as sent (no hop-by-hop, no header the
            ``Connection`` header lists, no ``Host`` and no framing header).
        framing: ``none``, ``length`` (``length`` bytes) or ``chunked``.
        length: the body's length when framed by length.
        proxy_authorization: the first ``Proxy-Authorization`` value (never forwarded).
    """

    method: str
    host: str
    port: int
    path: str
    version: str
    headers: tuple[tuple[str, str], ...]
    framing: Literal["none", "length", "chunked"]
    length: int = 0
    proxy_authorization: str = ""

    @property
    def destination(self) -> str:
        return f"{self.host}:{self.port}"


def has_bare_line_break(data: bytes) -> bool:
    """Whether `data` holds a CR not followed by LF or an LF not preceded by CR (a trailing
    CR may be the first half of a CRLF still to come)."""
    if data.endswith(b"\r"):
        data = data[:-1]
    rest = data.replace(b"\r\n", b"")
    return b"\r" in rest or b"\n" in rest


async def read_head(
    reader: asyncio.StreamReader, buffer: bytearray | None = None
) -> RequestHead | None:
    """Read a request head, at most :data:`MAX_HEAD_BYTES`, into `buffer` (given: what was
    read stays there, should the reading be cancelled); None when the client closed before
    sending anything.

    Raises:
        HttpRefusal: 431 past the bound; 400 for a bare CR or LF (refused as soon as it
            arrives, not waited past) or a connection closed within the head.
    """
    buffer = bytearray() if buffer is None else buffer
    while True:
        end = buffer.find(b"\r\n\r\n")
        head = buffer if end < 0 else buffer[: end + 4]
        if has_bare_line_break(bytes(head)):
            raise HttpRefusal(
                400, "a bare CR or LF in the request head: lines end with CRLF", seen=bytes(head)
            )
        if len(head) > MAX_HEAD_BYTES:
            raise HttpRefusal(
                431, f"the request head is larger than {MAX_HEAD_BYTES} bytes", seen=bytes(head)
            )
        if end >= 0:
            return RequestHead(raw=bytes(head), rest=bytes(buffer[end + 4 :]))
        chunk = await reader.read(CHUNK_BYTES)
        if not chunk:
            if buffer:
                raise HttpRefusal(
                    400, "the connection closed within the request head", seen=bytes(buffer)
                )
            return None
        buffer += chunk


def parse_request(head: bytes) -> tuple[ProxyRequest, h11.Connection]:
    """Judge a head (from :func:`read_head`) well-formed and read it; returns the request and
    the h11 connection that reads its body (:class:`RequestBody`).

    Raises:
        HttpRefusal: 400 with what is wrong, in one line.
    """
    lines = _lines(head)
    connection = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
    try:
        connection.receive_data(head)
        event = connection.next_event()
    except h11.RemoteProtocolError as exc:
        raise HttpRefusal(400, f"not a valid HTTP/1.1 request: {str(exc)[:200]}") from None
    if not isinstance(event, h11.Request):
        raise HttpRefusal(400, "not a complete HTTP/1.1 request head")
    version = event.http_version.decode("ascii")
    if version not in ("1.0", "1.1"):
        raise HttpRefusal(400, f"HTTP/{version} is not spoken here: send HTTP/1.1")
    names = [line.partition(b":")[0].lower().decode("ascii") for line in lines[1:]]
    for single in _SINGLE:
        if names.count(single) > 1:
            raise HttpRefusal(400, f"more than one {single} header")
    fields = {name.decode("ascii"): value for name, value in event.headers}
    if "content-length" in fields and "transfer-encoding" in fields:
        raise HttpRefusal(400, "both Content-Length and Transfer-Encoding: send one")
    if "content-length" in fields and not _DIGITS.fullmatch(_raw_value(lines, b"content-length")):
        raise HttpRefusal(400, "Content-Length must be one number")
    method = event.method.decode("ascii")
    target = event.target.decode("ascii")
    if method == "CONNECT":
        host, port, path = *_authority(target, default_port=None), ""
        if "content-length" in fields or "transfer-encoding" in fields:
            raise HttpRefusal(400, "a CONNECT request carries no body")
        host_default = port
    else:
        host, port, path = _absolute_http(target)
        host_default = 80
    if "host" in fields:
        named = _authority(fields["host"].decode("latin-1"), default_port=host_default)
        if named != (host, port):
            raise HttpRefusal(
                400,
                f"the Host header names {named[0]}:{named[1]}, the request line {host}:{port}",
            )
    listed = {
        token.strip().lower()
        for name, value in event.headers
        if name == b"connection"
        for token in value.decode("latin-1").split(",")
    }
    kept = tuple(
        (name.decode("ascii"), value.decode("latin-1"))
        for name, value in event.headers.raw_items()
        if (lower := name.decode("ascii").lower()) not in _HOP_BY_HOP
        and lower not in _FRAMING
        and lower not in listed
    )
    framing: Literal["none", "length", "chunked"] = "none"
    length = 0
    if "transfer-encoding" in fields:
        framing = "chunked"
    elif "content-length" in fields:
        framing, length = "length", int(fields["content-length"])
    authorization = next(
        (v.decode("latin-1") for n, v in event.headers if n == b"proxy-authorization"), ""
    )
    request = ProxyRequest(
        method=method,
        host=host,
        port=port,
        path=path,
        version=version,
        headers=kept,
        framing=framing,
        length=length,
        proxy_authorization=authorization,
    )
    return request, connection


def _lines(head: bytes) -> list[bytes]:
    """The head's lines, once judged free of what h11 would forgive."""
    lines = head[:-4].split(b"\r\n")
    if has_bare_line_break(head):
        raise HttpRefusal(400, "a bare CR or LF in the request head: lines end with CRLF")
    if any(line[:1] in (b" ", b"\t") for line in lines[1:]):
        raise HttpRefusal(400, "a folded header line (obs-fold): write each header on one line")
    if _CONTROL.search(head[:-4].replace(b"\r\n", b"")):
        raise HttpRefusal(400, "a control character in the request head")
    return lines


def _raw_value(lines: list[bytes], name: bytes) -> bytes:
    for line in lines[1:]:
        field, _, value = line.partition(b":")
        if field.lower() == name:
            return value.strip(b" \t")
    return b""


def _authority(text: str, *, default_port: int | None) -> tuple[str, int]:
    try:
        return parse_authority(text, default_port=default_port)
    except EgressPolicyError as exc:
        raise HttpRefusal(400, f"not a destination: {exc}") from None


def _absolute_http(target: str) -> tuple[str, int, str]:
    """An absolute-form ``http://`` target's host, port and origin-form path."""
    scheme, sep, rest = target.partition("://")
    if not sep or scheme.lower() != "http":
        raise HttpRefusal(
            400, "give the proxy an absolute http:// URL (https goes by CONNECT host:port)"
        )
    if "#" in rest:
        raise HttpRefusal(400, "a request target carries no #fragment")
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, path = rest[:cut], rest[cut:]
    if "@" in authority:
        raise HttpRefusal(400, "user info (user@host) in the URL is refused: send a header")
    if not authority:
        raise HttpRefusal(400, "the URL names no host")
    host, port = _authority(authority, default_port=80)
    if not path.startswith("/"):
        path = "/" + path
    return host, port, path


def upstream_head(
    request: ProxyRequest, *, added: list[tuple[str, str]], replaced: set[str]
) -> bytes:
    """The head the proxy sends upstream for `request`: origin-form target, ``Host`` the
    judged destination, its end-to-end headers but those named in `replaced` (lower case),
    then `added` (the credential and the idempotency key), the body's framing and
    ``Connection: close``.

    Raises:
        HttpRefusal: 502 when an added header is not a valid field (a secret with a line
            break in it, say): nothing is sent.
    """
    host = f"[{request.host}]" if ":" in request.host else request.host
    if request.port != 80:
        host += f":{request.port}"
    fields = [("Host", host)]
    fields += [(n, v) for n, v in request.headers if n.lower() not in replaced]
    for name, value in added:
        if not _FIELD_NAME.fullmatch(name) or not _FIELD_VALUE.fullmatch(value):
            raise HttpRefusal(
                502, f"the proxy's {name} header is not a valid header value; fix the setting"
            )
        fields.append((name, value))
    if request.framing == "length":
        fields.append(("Content-Length", str(request.length)))
    elif request.framing == "chunked":
        fields.append(("Transfer-Encoding", "chunked"))
    fields.append(("Connection", "close"))
    lines = [f"{request.method} {request.path} HTTP/{request.version}"]
    lines += [f"{name}: {value}" for name, value in fields]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class RequestBody:
    """The body of one request, as h11 frames it: the bytes after the head, then the
    client's stream, until the request's end (never past it)."""

    def __init__(
        self,
        connection: h11.Connection,
        request: ProxyRequest,
        *,
        first: bytes,
        reader: asyncio.StreamReader,
    ) -> None:
        self._connection = connection
        self._request = request
        self._pending = first
        self._reader = reader

    async def frames(self) -> AsyncIterator[bytes]:
        """The bytes to send upstream, framed as :func:`upstream_head` said: the data as it
        is for a length, chunks of the proxy's own for chunked (its last chunk included).

        Raises:
            HttpRefusal: 400 for a body h11 cannot read; ConnectionError when the client
                went before the body's end.
        """
        chunked = self._request.framing == "chunked"
        if self._request.framing == "none":
            return
        connection = self._connection
        while True:
            try:
                event = connection.next_event()
            except h11.RemoteProtocolError as exc:
                raise HttpRefusal(400, f"the request body is malformed: {str(exc)[:200]}") from None
            if event is h11.NEED_DATA:
                data = self._pending or await self._reader.read(CHUNK_BYTES)
                self._pending = b""
                if not data:
                    raise ConnectionError("the client closed within the request body")
                connection.receive_data(data)
            elif isinstance(event, h11.Data):
                if event.data and chunked:
                    yield b"%x\r\n%s\r\n" % (len(event.data), event.data)
                elif event.data:
                    yield event.data
            elif isinstance(event, h11.EndOfMessage):
                if chunked:  # the client's trailers are not passed on
                    yield b"0\r\n\r\n"
                return
            else:
                raise HttpRefusal(400, "the request body is malformed")
