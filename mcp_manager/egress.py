"""The egress proxy (DESIGN §6): the only way a sandboxed script reaches the network.

One :class:`EgressProxy` serves one execution of one skill (:class:`EgressContext`): an HTTP
forward proxy for ``http://`` requests and ``CONNECT`` tunnels for TLS. The manager's
:class:`EgressGateway` is the one listener for all runs and hands each connection to the proxy
of the run whose grant it carries (:meth:`EgressProxy.serve_tcp` serves one alone, for tests
and the benchmark). The manager's :class:`EgressService` holds the approvals, the credential
bindings, the gateway and the audit log.

What the proxy guarantees, and how:

- **Strict HTTP.** A connection carries one request. Its head is read within a bound (431
  past it) and parsed strictly (``mcp_manager._egress_http``, on h11): a bare CR or LF,
  obs-fold, a control character, a duplicate or conflicting ``Host``, ``Content-Length`` or
  ``Transfer-Encoding``, both of the last two, a request-line host other than the ``Host``
  header's, a host that is not a plain ASCII name or address, user info, or anything h11
  cannot parse is answered ``400`` in one line. A ``CONNECT`` target is ``host:port`` only.
- **Judged before it is looked up.** The name and port are judged first
  (``skillweave.sandbox.egress.decide_destination``: declared by the skill, approved by an
  operator, for this version), then the caps; only an approved name is resolved (the
  `resolver`), and every address it resolves to must be public unless approved as private
  (``decide_addresses``). The proxy connects to the address it checked, so the answer cannot
  change in between (no DNS rebinding), and no DNS query ever carries an unjudged name.
- **Re-serialised upstream.** A plain-HTTP request goes upstream as the proxy writes it:
  origin-form target, ``Host`` the judged destination, the end-to-end headers only (hop-by-hop
  ones, those the ``Connection`` header lists and ``Proxy-Authorization`` dropped), the body
  re-framed from h11's reading of it, and ``Connection: close``. Nothing after the request's
  end is read from the client, so a pipelined or smuggled second request goes nowhere; the
  response is relayed back as it comes, and the connection closes.
- **Credentials stay with the proxy.** A destination with a bound credential
  (:class:`CredentialBinding`) gets its header on that one re-serialised request, its value
  filled from the skill's secrets here: the script never holds it, and a header of that name
  the script sent is replaced. A ``CONNECT`` tunnel is opaque (TLS end to end), so nothing is
  added to it: header injection needs plain HTTP.
- **Everything is recorded.** Per execution there are caps (:class:`EgressLimits`):
  connections, bytes each way together, requests per second (``429`` saying which, or the
  connection closed). Every request, refused (400, 403, 407 at the gateway, 408 for a head
  that does not arrive in time, 429, 431, 502) or not, has exactly one :class:`EgressRecord`,
  sent to `audit` (the manager stores them with the run and logs them; one without a live
  grant is logged only).

Hand-written around h11: no proxy library both judges every connection by our policy before
any lookup and connects to the address it judged; h11 reads the HTTP, this module decides.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import io
import logging
import re
import secrets
import time
import zipfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from mcp_manager._egress_http import (
    HttpRefusal,
    ProxyRequest,
    RequestBody,
    RequestHead,
    parse_request,
    read_head,
    upstream_head,
)
from mcp_manager.metrics import ManagerMetrics
from skillweave.config import CredentialBinding, EgressApproval, EgressLimits, EgressSettings
from skillweave.errors import SkillFormatError
from skillweave.sandbox.approvals import NetworkApprovals
from skillweave.sandbox.bindings import check_bound_names, configured_for
from skillweave.sandbox.egress import (
    IDEMPOTENCY_HEADER,
    Destination,
    Verdict,
    decide_addresses,
    decide_destination,
    declared_destinations,
    idempotency_key,
    parse_destination,
)
from skillweave.sandbox.models import EgressGrant, ExecuteRequest
from skillweave.skills.files import SKILL_FILE
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.storage import keys
from skillweave.storage.base import ArtifactStore

__all__ = [
    "EgressContext",
    "EgressGateway",
    "EgressProxy",
    "EgressRecord",
    "EgressService",
    "Resolver",
    "declared_network",
]

logger = logging.getLogger("skillweave.egress")

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Resolves a host name and port to addresses (the proxy's own DNS)."""

_CHUNK: Final = 64 * 1024
_CONNECT_SECONDS: Final = 10.0
_DRAIN_SECONDS: Final = 5.0
_LINGER_SECONDS: Final = 0.5
_HEAD_SECONDS: Final = 30.0
"""How long a client may take to send its request head (408 past it)."""
_LINGER_BYTES: Final = 1024 * 1024
_SECRET_REFERENCE: Final = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")
_TITLES: Final = {
    400: "Bad Request",
    403: "Forbidden",
    407: "Proxy Authentication Required",
    408: "Request Timeout",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    502: "Bad Gateway",
}


def _rendered(binding: CredentialBinding, secrets: Mapping[str, str]) -> str | None:
    """The header's value with the skill's secrets filled in; None when one is missing."""
    missing = [name for name in _SECRET_REFERENCE.findall(binding.value) if name not in secrets]
    if missing:
        return None
    return _SECRET_REFERENCE.sub(lambda m: secrets[m.group(1)], binding.value)


@dataclass(frozen=True, slots=True)
class EgressContext:
    """Whose egress a proxy serves: one execution of one skill version, and its rules."""

    run_id: str
    execution_id: str
    skill: str
    version: str
    declared: tuple[Destination, ...]
    approval: EgressApproval | None
    credentials: tuple[CredentialBinding, ...] = ()
    secrets: Mapping[str, str] = field(default_factory=dict)
    limits: EgressLimits = field(default_factory=EgressLimits)


class EgressRecord(BaseModel):
    """One connection or request the proxy saw (the audit log's line)."""

    model_config = ConfigDict(frozen=True)

    at: float = Field(description="Seconds since the epoch.")
    run_id: str
    execution_id: str
    skill: str
    kind: str = Field(description="connect (a CONNECT tunnel) or request (plain HTTP)")
    destination: str
    method: str = ""
    path: str = ""
    bytes_out: int = 0
    bytes_in: int = 0
    allowed: bool
    reason: str
    status: int | None = Field(
        default=None,
        description="The status the proxy answered itself (a refusal); none when relayed.",
    )


@dataclass(slots=True)
class _Entry:
    """The audit record of one request, filled in as it is served (one per request)."""

    kind: str = "request"
    destination: str = ""
    method: str = ""
    path: str = ""
    bytes_out: int = 0
    bytes_in: int = 0
    allowed: bool = False
    reason: str = "the connection closed before an answer"
    status: int | None = None
    answered: bool = False  # response bytes reached the client: no refusal can follow


class _Caps:
    """One execution's caps (:class:`EgressLimits`): connections, requests per second, and
    bytes both ways together."""

    def __init__(self, context: EgressContext) -> None:
        self._context = context
        self._connections = 0
        self._bytes = 0
        self._recent: list[float] = []

    def admit(self, verdict: Verdict) -> Verdict:
        """`verdict` if one more connection is within the caps (then counted), else a
        refusal naming the cap."""
        limits = self._context.limits
        now = time.monotonic()
        self._recent = [t for t in self._recent if now - t < 1.0]
        if self._connections >= limits.max_connections:
            return Verdict(False, f"the execution's cap of {limits.max_connections} connections")
        if len(self._recent) >= limits.max_requests_per_second:
            rate = limits.max_requests_per_second
            return Verdict(False, f"the execution's cap of {rate:g} requests per second")
        if self._bytes >= limits.max_bytes:
            return Verdict(False, f"the execution's cap of {limits.max_bytes} bytes")
        self._connections += 1
        self._recent.append(now)
        return verdict

    def count(self, size: int) -> bool:
        """Count `size` bytes against the cap; False once past it."""
        self._bytes += size
        if self._bytes > self._context.limits.max_bytes:
            logger.warning(
                "egress of %s closed: over %d bytes",
                self._context.execution_id,
                self._context.limits.max_bytes,
            )
            return False
        return True


def _credentials(context: EgressContext, host: str, port: int) -> dict[str, tuple[str, str]]:
    """The headers bound to `host`:`port` for the execution, by lower-case name: (name,
    value)."""
    found: dict[str, tuple[str, str]] = {}
    for binding in context.credentials:
        if parse_destination(binding.destination).matches(host, port):
            value = _rendered(binding, context.secrets)
            if value is not None:
                found[binding.header.lower()] = (binding.header, value)
    return found


async def _resolve(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    try:
        found = await loop.getaddrinfo(host, port, type=1)  # SOCK_STREAM
    except OSError:
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in found))


class EgressProxy:
    """The egress of one execution (see the module docstring).

    Args:
        context: the execution, its skill's declaration, approval, credentials and caps.
        audit: called with every record.
        resolver: the DNS lookup (default: the system's); tests give their own. It is asked
            only for names the policy approved.
    """

    def __init__(
        self,
        context: EgressContext,
        *,
        audit: Callable[[EgressRecord], None],
        resolver: Resolver | None = None,
    ) -> None:
        self.context = context
        self._audit = audit
        self._resolve = resolver or _resolve
        self._caps = _Caps(context)
        self._requests = 0  # plain-HTTP requests forwarded: the idempotency keys' counter
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    # --- serving ----------------------------------------------------------------------------

    async def serve_tcp(self, host: str = "127.0.0.1") -> int:
        """Listen on a free loopback port; returns it."""
        self._server = await asyncio.start_server(self._handle, host=host, port=0)
        return int(self._server.sockets[0].getsockname()[1])

    async def aclose(self) -> None:
        """Stop listening, let the connections in flight finish (a few seconds at most, so
        that their records are written), and close."""
        if self._server is not None:
            self._server.close()
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=_DRAIN_SECONDS)
            for task in self._handlers:
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    # --- one client connection --------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await _read_or_refusal(reader)
        if head is None:
            await _close(writer)
            return
        await self.serve(head, reader, writer)

    async def serve(
        self,
        head: RequestHead | HttpRefusal,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """Serve one client connection whose request head was read (or refused as it was
        read): one request, one audit record, then the connection is closed."""
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
        entry = _Entry()
        refused: HttpRefusal | None = None
        try:
            if isinstance(head, HttpRefusal):
                entry.method = _method_of(head.seen)
                raise head
            entry.method = _method_of(head.raw)
            request, connection = parse_request(head.raw)
            entry.destination, entry.method = request.destination, request.method
            if request.method == "CONNECT":
                entry.kind = "connect"
                await self._tunnel(request, head.rest, entry, reader, writer)
            else:
                entry.path = request.path[:512]
                body = RequestBody(connection, request, first=head.rest, reader=reader)
                await self._forward(request, body, entry, writer)
        except HttpRefusal as exc:
            entry.allowed, entry.reason, entry.status = False, exc.reason, exc.status
            refused = None if entry.answered else exc
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError, OSError) as exc:
            lost = f"the connection was lost ({str(exc)[:200] or type(exc).__name__})"
            entry.reason = f"{entry.reason}; {lost}" if entry.allowed else lost
        except Exception:  # a fault of the proxy's own: refused, recorded, and logged
            logger.exception("egress of %s failed", self.context.execution_id)
            entry.allowed, entry.status = False, 502
            entry.reason = "the egress proxy failed on this request (its log says why)"
            refused = None if entry.answered else HttpRefusal(502, entry.reason)
        finally:
            self._record(entry)
            await _close(writer, refused, reader=reader)

    async def _admit(self, host: str, port: int) -> str:
        """Judge `host`:`port` (the name first, then the caps, then the addresses it resolves
        to); returns the address to connect to.

        Raises:
            HttpRefusal: 403 (the policy) or 429 (a cap), with the reason.
        """
        context = self.context
        verdict = decide_destination(
            skill=context.skill,
            version=context.version,
            host=host,
            port=port,
            declared=context.declared,
            approval=context.approval,
        )
        status, addresses = 403, []
        if verdict.allowed:
            verdict = self._caps.admit(verdict)
            status = 403 if verdict.allowed else 429
        if verdict.allowed:  # only an approved name is looked up
            addresses = await self._resolve(host, port)
            verdict = decide_addresses(
                verdict, host=host, port=port, addresses=addresses, approval=context.approval
            )
        if not verdict.allowed:
            raise HttpRefusal(status, f"skillweave egress refused {host}:{port}: {verdict.reason}")
        return addresses[0]

    async def _open(
        self, host: str, port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        address = await self._admit(host, port)
        try:
            return await asyncio.wait_for(
                asyncio.open_connection(address, port), timeout=_CONNECT_SECONDS
            )
        except (OSError, TimeoutError) as exc:
            raise HttpRefusal(502, f"cannot connect to {host}:{port}: {exc}") from None

    async def _tunnel(
        self,
        request: ProxyRequest,
        early: bytes,
        entry: _Entry,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        upstream_reader, upstream_writer = await self._open(request.host, request.port)
        try:
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            entry.answered, entry.allowed, entry.reason = True, True, "tunnel open"
            await writer.drain()
            if early:  # what the client sent before the 200: the tunnel's first bytes
                upstream_writer.write(early)
                entry.bytes_out += len(early)
                self._caps.count(len(early))
        except BaseException:
            upstream_writer.close()  # the client went before the tunnel: close what it opened
            raise
        sent, received = await self._relay(reader, writer, upstream_reader, upstream_writer)
        entry.bytes_out += sent
        entry.bytes_in = received
        entry.allowed, entry.reason = True, "tunnel closed"

    async def _forward(
        self, request: ProxyRequest, body: RequestBody, entry: _Entry, writer: asyncio.StreamWriter
    ) -> None:
        """Send `request` upstream re-serialised, its body re-framed, then relay the
        response; the client's stream is not read past the request's end."""
        upstream_reader, upstream_writer = await self._open(request.host, request.port)
        try:
            injected = _credentials(self.context, request.host, request.port)
            added = list(injected.values())
            if not any(n.lower() == IDEMPOTENCY_HEADER.lower() for n, _ in request.headers):
                # The same on every attempt of the run, for APIs that honour one (a run may
                # start again after its manager died).
                added.append(
                    (
                        IDEMPOTENCY_HEADER,
                        idempotency_key(self.context.execution_id, self._requests + 1),
                    )
                )
            upstream_writer.write(upstream_head(request, added=added, replaced=set(injected)))
            self._requests += 1
            entry.allowed = True  # judged and sent; a malformed body still refuses it below
            entry.reason = "forwarded" + (" with a bound credential" if injected else "")
            await self._exchange(body, entry, writer, upstream_reader, upstream_writer)
        finally:
            upstream_writer.close()
            with contextlib.suppress(Exception):
                await upstream_writer.wait_closed()

    async def _exchange(
        self,
        body: RequestBody,
        entry: _Entry,
        client: asyncio.StreamWriter,
        upstream_reader: asyncio.StreamReader,
        upstream: asyncio.StreamWriter,
    ) -> None:
        """The body up (as parsed), the response down (raw: upstream was told to close), at
        once, since an upstream may answer before the body's end."""

        async def send() -> None:
            async for frame in body.frames():
                if not self._caps.count(len(frame)):  # the body is cut: the request refused
                    cap = self.context.limits.max_bytes
                    raise HttpRefusal(
                        429, f"the request's body is past the execution's cap of {cap} bytes"
                    )
                entry.bytes_out += len(frame)
                upstream.write(frame)
                await upstream.drain()

        async def receive() -> None:
            while chunk := await upstream_reader.read(_CHUNK):
                if not self._caps.count(len(chunk)):
                    entry.reason += f"; closed at the cap of {self.context.limits.max_bytes} bytes"
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

    async def _relay(
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
                while chunk := await source.read(_CHUNK):
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
            await asyncio.wait({up, down}, timeout=_DRAIN_SECONDS)
        finally:
            for task in (up, down):
                task.cancel()
            upstream_writer.close()
            with contextlib.suppress(Exception):
                await upstream_writer.wait_closed()
        return counts[0], counts[1]

    def _record(self, entry: _Entry) -> None:
        context = self.context
        _emit(
            self._audit,
            EgressRecord(
                at=time.time(),
                run_id=context.run_id,
                execution_id=context.execution_id,
                skill=context.skill,
                kind=entry.kind,
                destination=entry.destination,
                method=entry.method,
                path=entry.path,
                bytes_out=entry.bytes_out,
                bytes_in=entry.bytes_in,
                allowed=entry.allowed,
                reason=entry.reason,
                status=entry.status,
            ),
        )


def _emit(audit: Callable[[EgressRecord], None], record: EgressRecord) -> None:
    logger.info(
        "egress %s %s %s %s: %s",
        record.skill or "-",
        record.kind,
        record.destination or "-",
        "allowed" if record.allowed else "refused",
        record.reason,
    )
    audit(record)


class EgressGateway:
    """The manager's one listener for every execution's egress: a connection names its
    execution by the token of its grant (``Proxy-Authorization: Bearer TOKEN``, which the
    sandbox's side adds after the request line and the proxy never passes on), and that
    execution's :class:`EgressProxy` judges it. A connection without a live grant gets
    ``407``, recorded without an execution. The grant is looked for in the head as read, even
    one the proxy then refuses, so that the refusal is recorded with its execution.

    Args:
        audit: called with every record of every execution.
        resolver: the DNS lookup (default: the system's).
    """

    def __init__(
        self, *, audit: Callable[[EgressRecord], None], resolver: Resolver | None = None
    ) -> None:
        self._audit = audit
        self._resolver = resolver
        self._proxies: dict[str, EgressProxy] = {}
        self._server: asyncio.AbstractServer | None = None
        self.address: tuple[str, int] | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> tuple[str, int]:
        """Listen on `host`:`port` (0: a free one); returns where."""
        self._server = await asyncio.start_server(self._handle, host=host, port=port)
        bound = self._server.sockets[0].getsockname()
        self.address = (str(bound[0]), int(bound[1]))
        return self.address

    def grant(self, context: EgressContext) -> str:
        """Open egress for one execution; returns the token its connections carry."""
        token = secrets.token_urlsafe(24)
        self._proxies[token] = EgressProxy(context, audit=self._audit, resolver=self._resolver)
        return token

    async def revoke(self, token: str) -> None:
        """Close an execution's egress: no new connection; those in flight finish first
        (a few seconds at most), so that their records are written."""
        proxy = self._proxies.pop(token, None)
        if proxy is not None:
            await proxy.aclose()

    async def aclose(self) -> None:
        for token in list(self._proxies):
            await self.revoke(token)
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await _read_or_refusal(reader)
        if head is None:
            await _close(writer)
            return
        proxy = self._proxy_of(head.raw if isinstance(head, RequestHead) else head.seen)
        if proxy is None:
            refusal = HttpRefusal(407, "no egress is granted to this connection")
            _emit(
                self._audit,
                EgressRecord(
                    at=time.time(),
                    run_id="",
                    execution_id="",
                    skill="",
                    kind="request",
                    destination="",
                    method=_method_of(head.raw if isinstance(head, RequestHead) else head.seen),
                    allowed=False,
                    reason=refusal.reason,
                    status=refusal.status,
                ),
            )
            await _close(writer, refusal, reader=reader)
            return
        await proxy.serve(head, reader, writer)

    def _proxy_of(self, head: bytes) -> EgressProxy | None:
        """The proxy whose grant a ``Proxy-Authorization`` line of `head` carries."""
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() != b"proxy-authorization":
                continue
            token = value.decode("latin-1").strip().removeprefix("Bearer ").strip()
            for granted, proxy in self._proxies.items():
                if hmac.compare_digest(granted.encode(), token.encode("latin-1")):
                    return proxy
        return None


async def _read_or_refusal(
    reader: asyncio.StreamReader,
) -> RequestHead | HttpRefusal | None:
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


def _method_of(head: bytes) -> str:
    """The request's method as far as it reads as one (for a refusal's record)."""
    method = head.split(b" ", 1)[0][:24]
    return method.decode("ascii") if method.isalpha() and method.isascii() else ""


async def _close(
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
    while left > 0 and (chunk := await reader.read(_CHUNK)):
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


def declared_network(package: bytes) -> tuple[Destination, ...]:
    """What the skill in `package` (its ZIP) declares under ``metadata.network``.

    Raises:
        EgressPolicyError: the declaration cannot be read (the entry is named).
    """
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == SKILL_FILE]
        top = min(names, key=lambda n: n.count("/"), default=None)
        if top is None:
            return ()
        text = archive.read(top).decode("utf-8", "replace")
    try:
        data = parse_frontmatter(text, path=SKILL_FILE).data
    except SkillFormatError:
        return ()
    metadata = data.get("metadata")
    return declared_destinations(metadata.get("network") if isinstance(metadata, Mapping) else None)


class EgressService:
    """The manager's egress: the operator's approvals (``sandbox.egress`` and those made over
    the API) and credential bindings, the :class:`EgressGateway`, and the audit log (each
    execution's records stored beside its outputs, ``keys.egress_log_key``, and logged).

    Args:
        settings: ``sandbox.egress``.
        store: where the records go.
        resolver: the DNS lookup (default: the system's).
        metrics: where ``skillweave_egress_connections`` is counted.
    """

    def __init__(
        self,
        settings: EgressSettings,
        *,
        store: ArtifactStore,
        resolver: Resolver | None = None,
        metrics: ManagerMetrics | None = None,
    ) -> None:
        self.settings = settings
        self._store = store
        self._metrics = metrics
        self._records: dict[str, list[EgressRecord]] = {}
        self._gateway = EgressGateway(audit=self._audit, resolver=resolver)
        self._approvals = NetworkApprovals(store, settings)
        check_bound_names("SANDBOX__EGRESS__CREDENTIALS", settings.credentials)  # exact names
        self._credentials = {k: tuple(v) for k, v in settings.credentials.items()}
        self._runs: dict[str, tuple[str, str]] = {}  # token -> (run id, execution id)

    async def start(self) -> None:
        """Listen where the settings say (``gateway_host``, ``gateway_port``)."""
        await self._gateway.start(self.settings.gateway_host, self.settings.gateway_port)

    async def aclose(self) -> None:
        await self._gateway.aclose()

    async def approval_of(self, skill: str) -> EgressApproval | None:
        """The operator's approval of `skill`'s network: the settings', else one made over
        the API, for exactly its canonical name (``sandbox.bindings``)."""
        approval, _ = await self._approvals.of(skill)
        return approval

    def bound_secrets(self, skill: str) -> set[str]:
        """The names of `skill`'s secrets bound to a destination: the proxy's, never the
        script's."""
        return {
            name
            for binding in configured_for(self._credentials, skill) or ()
            for name in _SECRET_REFERENCE.findall(binding.value)
        }

    def open_grant(
        self,
        request: ExecuteRequest,
        *,
        declared: tuple[Destination, ...],
        approval: EgressApproval,
        secrets: Mapping[str, str],
    ) -> EgressGrant:
        """Open the network of one run; its executor bridges the sandbox to the grant."""
        if self._gateway.address is None:
            raise RuntimeError("the egress service was not started")
        context = EgressContext(
            run_id=request.run_id,
            execution_id=request.execution_id,
            skill=request.skill,
            version=request.version,
            declared=declared,
            approval=approval,
            credentials=configured_for(self._credentials, request.skill) or (),
            secrets=secrets,
            limits=self.settings.limits,
        )
        token = self._gateway.grant(context)
        self._records[request.execution_id] = []
        self._runs[token] = (request.run_id, request.execution_id)
        _, port = self._gateway.address
        return EgressGrant(host=self.settings.gateway_address, port=port, token=token)

    async def close_grant(self, token: str) -> None:
        """Close a run's network and store its records."""
        await self._gateway.revoke(token)
        run_id, execution_id = self._runs.pop(token, ("", ""))
        records = self._records.pop(execution_id, [])
        if records:
            data = "".join(record.model_dump_json() + "\n" for record in records).encode()
            try:
                await self._store.put_bytes(
                    keys.egress_log_key(run_id, execution_id),
                    data,
                    content_type="application/x-ndjson",
                )
            except Exception:  # the records are in the log too; the run's result matters more
                logger.warning("egress records of %s not stored", execution_id, exc_info=True)

    def _audit(self, record: EgressRecord) -> None:
        # Stored with a live run; a record of no run (a 407 at the gateway) is logged only.
        stored = self._records.get(record.execution_id)
        if stored is not None:
            stored.append(record)
        if self._metrics is not None:
            outcome = "allowed" if record.allowed else "refused"
            self._metrics.egress.labels(skill=record.skill, outcome=outcome).inc()
