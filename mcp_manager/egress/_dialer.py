"""The proxy's way out: :class:`Dialer` judges a destination (its name and port first, then
the caps, then the addresses an approved name resolves to) and connects to the address it
judged, so the answer cannot change in between (no DNS rebinding) and no DNS query carries an
unjudged name. :data:`Resolver` is the DNS lookup it is given (the system's by default).

Called by the proxy (``_proxy``) for every tunnel and request; the policy is
``skillweave.sandbox.egress_policy``'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

from mcp_manager.egress._caps import Caps
from mcp_manager.egress._context import EgressContext
from mcp_manager.egress._http import HttpRefusal
from skillweave.sandbox import decide_addresses, decide_destination

__all__ = ["Dialer", "Resolver"]

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Resolves a host name and port to addresses (the proxy's own DNS)."""

_CONNECT_SECONDS: Final = 10.0


async def _resolve(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    try:
        found = await loop.getaddrinfo(host, port, type=1)  # SOCK_STREAM
    except OSError:
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in found))


class Dialer:
    """Judges and opens one execution's connections upstream.

    Args:
        context: the execution, its skill's declaration and approval.
        caps: the execution's caps (a connection admitted is counted).
        resolver: the DNS lookup (default: the system's), asked only for approved names.
    """

    def __init__(
        self, context: EgressContext, caps: Caps, *, resolver: Resolver | None = None
    ) -> None:
        self._context = context
        self._caps = caps
        self._resolve = resolver or _resolve

    async def admit(self, host: str, port: int) -> str:
        """Judge `host`:`port` (the name first, then the caps, then the addresses it resolves
        to); returns the address to connect to.

        Raises:
            HttpRefusal: 403 (the policy) or 429 (a cap), with the reason.
        """
        context = self._context
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

    async def open(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Admit `host`:`port` and connect to the address judged.

        Raises:
            HttpRefusal: 403 or 429 (refused), 502 (the connection failed).
        """
        address = await self.admit(host, port)
        try:
            return await asyncio.wait_for(
                asyncio.open_connection(address, port), timeout=_CONNECT_SECONDS
            )
        except (OSError, TimeoutError) as exc:
            raise HttpRefusal(502, f"cannot connect to {host}:{port}: {exc}") from None
