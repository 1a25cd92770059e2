"""The egress of one execution: :class:`EgressProxy`, an HTTP forward proxy for ``http://``
requests and ``CONNECT`` tunnels for TLS (what it guarantees is told in the package's
docstring).

It serves one connection at a time as one request and one record: its dialer (``_dialer``)
judges and opens the way upstream, its relay (``_relay``) moves the bytes, both under the
execution's caps (``_caps``). The gateway (``_gateway``) hands it the connections that carry its
grant; :meth:`EgressProxy.serve_tcp` serves one proxy alone (tests, the benchmark).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from mcp_manager.egress._caps import Caps
from mcp_manager.egress._connection import (
    DRAIN_SECONDS,
    close_connection,
    method_of,
    read_or_refusal,
)
from mcp_manager.egress._context import EgressContext, bound_headers
from mcp_manager.egress._dialer import Dialer, Resolver
from mcp_manager.egress._http import (
    HttpRefusal,
    ProxyRequest,
    RequestBody,
    RequestHead,
    parse_request,
    upstream_head,
)
from mcp_manager.egress._log import EgressRecord, Entry, emit
from mcp_manager.egress._relay import Relay
from skillweave.sandbox import IDEMPOTENCY_HEADER, idempotency_key

__all__ = ["EgressProxy"]

logger = logging.getLogger("skillweave.egress")


class EgressProxy:
    """The egress of one execution (see the package docstring).

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
        self._caps = Caps(context)
        self._dialer = Dialer(context, self._caps, resolver=resolver)
        self._relay = Relay(self._caps)
        self._requests = 0  # plain-HTTP requests forwarded: the idempotency keys' counter
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    # --- serving ---------------------------------------------------------------------------

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
            await asyncio.wait(self._handlers, timeout=DRAIN_SECONDS)
            for task in self._handlers:
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    # --- one client connection -------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await read_or_refusal(reader)
        if head is None:
            await close_connection(writer)
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
        entry = Entry()
        refused: HttpRefusal | None = None
        try:
            if isinstance(head, HttpRefusal):
                entry.method = method_of(head.seen)
                raise head
            entry.method = method_of(head.raw)
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
            await close_connection(writer, refused, reader=reader)

    async def _tunnel(
        self,
        request: ProxyRequest,
        early: bytes,
        entry: Entry,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        upstream_reader, upstream_writer = await self._dialer.open(request.host, request.port)
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
        sent, received = await self._relay.tunnel(reader, writer, upstream_reader, upstream_writer)
        entry.bytes_out += sent
        entry.bytes_in = received
        entry.allowed, entry.reason = True, "tunnel closed"

    async def _forward(
        self, request: ProxyRequest, body: RequestBody, entry: Entry, writer: asyncio.StreamWriter
    ) -> None:
        """Send `request` upstream re-serialised, its body re-framed, then relay the
        response; the client's stream is not read past the request's end."""
        upstream_reader, upstream_writer = await self._dialer.open(request.host, request.port)
        try:
            injected = bound_headers(self.context, request.host, request.port)
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
            await self._relay.exchange(body, entry, writer, upstream_reader, upstream_writer)
        finally:
            upstream_writer.close()
            with contextlib.suppress(Exception):
                await upstream_writer.wait_closed()

    def _record(self, entry: Entry) -> None:
        context = self.context
        emit(
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
