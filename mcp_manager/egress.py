"""The egress proxy (DESIGN §6): the only way a sandboxed script reaches the network.

One :class:`EgressProxy` serves one execution of one skill (:class:`EgressContext`): an HTTP
forward proxy for ``http://`` requests and ``CONNECT`` tunnels for TLS. The manager's
:class:`EgressGateway` is the one listener for all runs and hands each connection to the proxy
of the run whose grant it carries (:meth:`EgressProxy.serve_tcp` serves one alone, for tests
and the benchmark). Every connection is judged by
``skillweave.sandbox.egress.decide``: the destination must be declared by the skill and approved
by an operator, and the name must resolve to public addresses (or be approved as private). The
proxy resolves the name itself and connects to the address it checked, so the answer cannot
change in between (no DNS rebinding). A refused connection gets ``403`` with the reason in one
line, which curl, urllib and requests show.

Plain-HTTP requests to a destination with a bound credential (:class:`CredentialBinding`) get
its header added on the way out, its value filled from the skill's secrets here: the script
never holds it, and a header of that name the script sent is replaced. A ``CONNECT`` tunnel is
opaque (TLS end to end), so nothing can be added to it: header injection needs plain HTTP.

Per execution there are caps (:class:`EgressLimits`): connections, bytes each way together, and
requests per second; a request over a cap is refused with ``429`` or the tunnel closed, saying
which cap. One :class:`EgressRecord` per connection and per request goes to `audit` (the
manager stores them with the run and logs them).

Hand-written: no proxy library both judges every connection by our policy before it is made
and connects to the address it judged; the HTTP it needs (a request head, a tunnel, one request
per connection with ``Connection: close``) is small.
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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from mcp_manager.metrics import ManagerMetrics
from skillweave.config import CredentialBinding, EgressApproval, EgressLimits, EgressSettings
from skillweave.errors import SkillFormatError
from skillweave.sandbox.approvals import NetworkApprovals
from skillweave.sandbox.egress import (
    IDEMPOTENCY_HEADER,
    Destination,
    Verdict,
    decide,
    declared_destinations,
    idempotency_key,
    parse_destination,
)
from skillweave.sandbox.models import EgressGrant, ExecuteRequest
from skillweave.skills.files import SKILL_FILE
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.names import name_key
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

_MAX_HEAD_BYTES: Final = 64 * 1024
_CHUNK: Final = 64 * 1024
_CONNECT_SECONDS: Final = 10.0
_DRAIN_SECONDS: Final = 5.0
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
_SECRET_REFERENCE: Final = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


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


class _Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


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
        resolver: the DNS lookup (default: the system's); tests give their own.
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
        self._connections = 0
        self._requests = 0  # plain-HTTP requests forwarded: the idempotency keys' counter
        self._bytes = 0
        self._recent: list[float] = []
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
        head = await _head_or_close(reader, writer)
        if head is not None:
            await self.serve(head, reader, writer)

    async def serve(
        self, head: _Head, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Serve one client connection whose request head was read; closes it."""
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
        refused: _Refused | None = None
        try:
            if head[0] == "CONNECT":
                await self._tunnel(head[1], reader, writer)
            else:
                await self._forward(head, reader, writer)
        except _Refused as exc:
            refused = exc
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            await _close(writer, refused)

    def _judge(
        self, *, kind: str, host: str, port: int, addresses: Sequence[str], method: str, path: str
    ) -> Verdict:
        context = self.context
        verdict = decide(
            skill=context.skill,
            version=context.version,
            host=host,
            port=port,
            addresses=addresses,
            declared=context.declared,
            approval=context.approval,
        )
        if verdict.allowed:
            verdict = self._within_limits(verdict)
        if not verdict.allowed:
            self._record(
                kind=kind,
                destination=f"{host}:{port}",
                method=method,
                path=path,
                allowed=False,
                reason=verdict.reason,
            )
        return verdict

    def _within_limits(self, verdict: Verdict) -> Verdict:
        limits = self.context.limits
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

    async def _open(
        self, host: str, port: int, *, kind: str, method: str, path: str
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        addresses = await self._resolve(host, port)
        verdict = self._judge(
            kind=kind, host=host, port=port, addresses=addresses, method=method, path=path
        )
        if not verdict.allowed:
            status = 429 if "cap of" in verdict.reason else 403
            raise _Refused(status, f"skillweave egress refused {host}:{port}: {verdict.reason}")
        try:
            return await asyncio.wait_for(
                asyncio.open_connection(addresses[0], port), timeout=_CONNECT_SECONDS
            )
        except (OSError, TimeoutError) as exc:
            raise _Refused(502, f"cannot connect to {host}:{port}: {exc}") from None

    async def _tunnel(
        self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        host, port = _host_port(target, default=443)
        upstream_reader, upstream_writer = await self._open(
            host, port, kind="connect", method="CONNECT", path=""
        )
        try:
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await writer.drain()
        except BaseException:
            upstream_writer.close()  # the client went before the tunnel: close what it opened
            raise
        sent, received = await self._relay(reader, writer, upstream_reader, upstream_writer)
        self._record(
            kind="connect",
            destination=f"{host}:{port}",
            method="CONNECT",
            bytes_out=sent,
            bytes_in=received,
            allowed=True,
            reason="tunnel closed",
        )

    async def _forward(
        self,
        head: _Head,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        method, target, version, headers = head
        url = urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            raise _Refused(400, "give the proxy an absolute http:// URL (https goes by CONNECT)")
        host, port = url.hostname.lower(), url.port or 80
        path = url.path or "/"
        if url.query:
            path += f"?{url.query}"
        upstream_reader, upstream_writer = await self._open(
            host, port, kind="request", method=method, path=path
        )
        try:
            injected = self._credentials(host, port)
        except BaseException:
            upstream_writer.close()
            raise
        kept = [
            (name, value)
            for name, value in headers
            if name.lower() not in _HOP_BY_HOP and name.lower() not in injected
        ]
        self._requests += 1
        if not any(name.lower() == IDEMPOTENCY_HEADER.lower() for name, _ in kept):
            # The same on every attempt of the run, for APIs that honour one (a run may
            # start again after its manager died).
            key = idempotency_key(self.context.execution_id, self._requests)
            kept.append((IDEMPOTENCY_HEADER, key))
        lines = [f"{method} {path} {version}"]
        lines += [f"{name}: {value}" for name, value in kept]
        lines += [f"{name}: {value}" for name, value in injected.values()]
        lines.append("Connection: close")
        upstream_writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        sent, received = await self._relay(reader, writer, upstream_reader, upstream_writer)
        self._record(
            kind="request",
            destination=f"{host}:{port}",
            method=method,
            path=path[:512],
            bytes_out=sent,
            bytes_in=received,
            allowed=True,
            reason="forwarded" + (" with a bound credential" if injected else ""),
        )

    def _credentials(self, host: str, port: int) -> dict[str, tuple[str, str]]:
        """The headers bound to this destination, by lower-case name: (name, value)."""
        found: dict[str, tuple[str, str]] = {}
        for binding in self.context.credentials:
            if parse_destination(binding.destination).matches(host, port):
                value = _rendered(binding, self.context.secrets)
                if value is not None:
                    found[binding.header.lower()] = (binding.header, value)
        return found

    async def _relay(
        self,
        client_reader: asyncio.StreamReader,
        client_writer: asyncio.StreamWriter,
        upstream_reader: asyncio.StreamReader,
        upstream_writer: asyncio.StreamWriter,
    ) -> tuple[int, int]:
        """Copy both ways until either side closes; bytes each way (capped by max_bytes)."""
        counts = [0, 0]

        async def pipe(
            source: asyncio.StreamReader, sink: asyncio.StreamWriter, index: int
        ) -> None:
            try:
                while chunk := await source.read(_CHUNK):
                    counts[index] += len(chunk)
                    self._bytes += len(chunk)
                    if self._bytes > self.context.limits.max_bytes:
                        logger.warning(
                            "egress of %s closed: over %d bytes",
                            self.context.execution_id,
                            self.context.limits.max_bytes,
                        )
                        return
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

    def _record(self, **fields: object) -> None:
        context = self.context
        record = EgressRecord(
            at=time.time(),
            run_id=context.run_id,
            execution_id=context.execution_id,
            skill=context.skill,
            **fields,  # type: ignore[arg-type]
        )
        logger.info(
            "egress %s %s %s %s: %s",
            record.skill,
            record.kind,
            record.destination,
            "allowed" if record.allowed else "refused",
            record.reason,
        )
        self._audit(record)


class EgressGateway:
    """The manager's one listener for every execution's egress: a connection names its
    execution by the token of its grant (``Proxy-Authorization: Bearer TOKEN``, which the
    sandbox's side adds and the proxy never passes on), and that execution's
    :class:`EgressProxy` judges it. A connection without a live grant gets ``407``.

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
        head = await _head_or_close(reader, writer)
        if head is None:
            return
        given = next((v for n, v in head[3] if n.lower() == "proxy-authorization"), "")
        token = given.removeprefix("Bearer ").strip()
        proxy = next((p for t, p in self._proxies.items() if hmac.compare_digest(t, token)), None)
        if proxy is None:
            await _close(writer, _Refused(407, "no egress is granted to this connection"))
            return
        await proxy.serve(head, reader, writer)


_Head = tuple[str, str, str, list[tuple[str, str]]]
"""A request head: method, target, HTTP version, headers."""


async def _read_head(reader: asyncio.StreamReader) -> _Head | None:
    """The request head (None: the client closed first).

    Raises:
        _Refused: too large, or not an HTTP/1.x request.
    """
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise _Refused(431, "the request head is too large") from None
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    if len(raw) > _MAX_HEAD_BYTES:
        raise _Refused(431, "the request head is too large")
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _Refused(400, "not an HTTP/1.x proxy request")
    headers = []
    for line in lines[1:]:
        if line:
            name, sep, value = line.partition(":")
            if not sep:
                raise _Refused(400, f"a malformed header line: {line[:60]!r}")
            headers.append((name.strip(), value.strip()))
    return parts[0].upper(), parts[1], parts[2], headers


async def _head_or_close(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> _Head | None:
    """The connection's request head; None once the connection is answered and closed (a
    refused head) or was closed by the client first."""
    try:
        head = await _read_head(reader)
    except _Refused as refused:
        await _close(writer, refused)
        return None
    if head is None:
        await _close(writer)
    return head


async def _close(writer: asyncio.StreamWriter, refused: _Refused | None = None) -> None:
    if refused is not None:
        await _answer(writer, refused.status, refused.reason)
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()


def _host_port(target: str, *, default: int) -> tuple[str, int]:
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        host, _, port = target.rpartition(":") if ":" in target else (target, "", "")
    if port and not port.isdigit():
        raise _Refused(400, f"not a host:port: {target[:80]!r}")
    return host.lower(), int(port) if port else default


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    titles = {
        400: "Bad Request",
        403: "Forbidden",
        429: "Too Many Requests",
        431: "Request Header Fields Too Large",
        502: "Bad Gateway",
    }
    body = (reason + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {titles.get(status, 'Refused')}\r\n"
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
        self._credentials = {name_key(k): tuple(v) for k, v in settings.credentials.items()}
        self._runs: dict[str, tuple[str, str]] = {}  # token -> (run id, execution id)

    async def start(self) -> None:
        """Listen where the settings say (``gateway_host``, ``gateway_port``)."""
        await self._gateway.start(self.settings.gateway_host, self.settings.gateway_port)

    async def aclose(self) -> None:
        await self._gateway.aclose()

    async def approval_of(self, skill: str) -> EgressApproval | None:
        """The operator's approval of `skill`'s network: the settings', else one made over
        the API (names compared as names are)."""
        approval, _ = await self._approvals.of(skill)
        return approval

    def bound_secrets(self, skill: str) -> set[str]:
        """The names of `skill`'s secrets bound to a destination: the proxy's, never the
        script's."""
        return {
            name
            for binding in self._credentials.get(name_key(skill), ())
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
            credentials=self._credentials.get(name_key(request.skill), ()),
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
        self._records.setdefault(record.execution_id, []).append(record)
        if self._metrics is not None:
            outcome = "allowed" if record.allowed else "refused"
            self._metrics.egress.labels(skill=record.skill, outcome=outcome).inc()
