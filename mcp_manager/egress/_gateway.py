"""The manager's one listener for every execution's egress: :class:`EgressGateway` hands each
connection to the proxy (``_proxy``) of the execution whose grant it carries.

Made and driven by the service (``_service``): a grant per execution, revoked when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import secrets
import time
from collections.abc import Callable

from mcp_manager.egress._connection import close_connection, method_of, read_or_refusal
from mcp_manager.egress._context import EgressContext
from mcp_manager.egress._dialer import Resolver
from mcp_manager.egress._http import HttpRefusal, RequestHead
from mcp_manager.egress._log import EgressRecord, emit
from mcp_manager.egress._proxy import EgressProxy

__all__ = ["EgressGateway"]


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
        head = await read_or_refusal(reader)
        if head is None:
            await close_connection(writer)
            return
        proxy = self._proxy_of(head.raw if isinstance(head, RequestHead) else head.seen)
        if proxy is None:
            refusal = HttpRefusal(407, "no egress is granted to this connection")
            emit(
                self._audit,
                EgressRecord(
                    at=time.time(),
                    run_id="",
                    execution_id="",
                    skill="",
                    kind="request",
                    destination="",
                    method=method_of(head.raw if isinstance(head, RequestHead) else head.seen),
                    allowed=False,
                    reason=refusal.reason,
                    status=refusal.status,
                ),
            )
            await close_connection(writer, refusal, reader=reader)
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
