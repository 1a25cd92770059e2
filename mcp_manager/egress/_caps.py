"""One execution's egress caps (``EgressLimits``): :class:`Caps` counts its connections, its
requests per second and its bytes both ways together.

Called by the dialer (``_dialer``), which admits a connection within the caps, and by the
relay (``_relay``) and the proxy (``_proxy``), which count the bytes they pass on.
"""

from __future__ import annotations

import logging
import time

from mcp_manager.egress._context import EgressContext
from skillweave.sandbox import Verdict

__all__ = ["Caps"]

logger = logging.getLogger("skillweave.egress")


class Caps:
    """One execution's caps (:class:`EgressLimits`): connections, requests per second, and
    bytes both ways together."""

    def __init__(self, context: EgressContext) -> None:
        self._context = context
        self._connections = 0
        self._bytes = 0
        self._recent: list[float] = []

    @property
    def max_bytes(self) -> int:
        """The bytes the execution may send and receive, together."""
        return self._context.limits.max_bytes

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
