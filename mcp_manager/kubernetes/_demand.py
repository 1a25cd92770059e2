"""How many pods a replica creates ahead of its claims (Little's law): :class:`Demand`.

Plain state, no I/O, on a clock the caller passes (``time.monotonic()``): the pool feeds it its
claims, its supply (``_supply``) the creations, and its view (``_view``) the pods seen Ready.
"""

from __future__ import annotations

import collections
from typing import Final

__all__ = ["Demand"]

_RATE_WINDOW_SECONDS: Final = 10.0
"""The claims a replica's claim rate is read from: those of the last 10 s (or 4 pod start
times, when pods take longer to start): long enough to smooth, short enough to follow."""
_START_SMOOTHING: Final = 0.25
"""Weight of the newest pod start time in the running estimate (an exponential average)."""


class Demand:
    """The pods a replica should have in creation beyond its target (Little's law): its claim
    rate × the time its pods take from the create call to Ready, both measured as they happen.

    The rate is (n - 1) claims over the time since the first of the last n, within the window
    (:data:`_RATE_WINDOW_SECONDS`, at least 4 start times); that time counts as at least half
    the window. So a client running scripts one after another, each claim waiting for its
    pod, gets no pod ahead (fewer than one claim per start time); a steady stream gets rate ×
    start time; a one-off burst of k claims at most about k / 2 (reaped when unused); and the
    rate decays as soon as claims stop. Rounded down: a fraction of a pod is the target's job.
    Claims that wait are the pool's business (:meth:`PodSupply.wanted`), not the rate's.
    Plain state, no I/O: the pool feeds it from its claims and its watch, with `now` from
    ``time.monotonic()``.
    """

    def __init__(self) -> None:
        self.start_seconds: float | None = None
        """The running estimate of a pod's start time; None until one of ours was Ready."""
        self._claims: collections.deque[float] = collections.deque()
        self._born: dict[str, float] = {}

    def claimed(self, now: float) -> None:
        """A claim arrived (whether it finds a pod warm or not)."""
        self._claims.append(now)

    def creating(self, name: str, now: float) -> None:
        """The create call for pod `name` goes out."""
        self._born[name] = now

    def ready(self, name: str, now: float) -> None:
        """Pod `name` was seen Ready: one more start time, if it is one of ours in creation."""
        born = self._born.pop(name, None)
        if born is None:
            return
        took = max(0.0, now - born)
        last = self.start_seconds
        self.start_seconds = took if last is None else last + _START_SMOOTHING * (took - last)

    def gone(self, name: str) -> None:
        """Pod `name` was never created, or is gone before it was Ready."""
        self._born.pop(name, None)

    def forget_before(self, moment: float) -> None:
        """Drop creations from before `moment` (their pods are reaped as never started)."""
        self._born = {name: born for name, born in self._born.items() if born >= moment}

    def rate(self, now: float) -> float:
        """Claims per second, recently (see the class docstring)."""
        start = self.start_seconds or 0.0
        window = max(_RATE_WINDOW_SECONDS, 4 * start)
        while self._claims and self._claims[0] < now - window:
            self._claims.popleft()
        if len(self._claims) < 2:
            return 0.0
        return (len(self._claims) - 1) / max(now - self._claims[0], window / 2)

    def ahead(self, now: float) -> int:
        """Pods to have in creation beyond the target: rate × start time, rounded down."""
        if self.start_seconds is None:
            return 0
        return int(self.rate(now) * self.start_seconds)
