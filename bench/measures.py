"""What every benchmark here measures the same way: percentiles, and waiting on progress.

- :func:`percentile` is the nearest-rank percentile (the smallest value with at least the given
  fraction of values at or below it). The benchmarks used two roundings before; one rule now.
- :func:`step_verdicts` holds skillweave's p50 step against the fastest peer's at each run
  length, for the benchmarks that race the peers (``peers_bench``, ``inprocess_bench``).
- :func:`until_settled` waits until a condition holds, and fails only when what it watches
  stops changing for a while short of it, never after a fixed time: on a loaded machine slow is
  not stuck (sandboxes and pods may take minutes to start).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

__all__ = ["StepVerdict", "percentile", "step_verdicts", "until_settled"]

OURS: Final = "skillweave"


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` at `fraction` (0.95 for p95)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


class _StepRow(Protocol):
    """A framework's figures at one run length, as the peer benchmarks tabulate them."""

    @property
    def framework(self) -> str: ...

    @property
    def steps(self) -> int: ...

    @property
    def step_p50(self) -> float: ...


@dataclass(frozen=True)
class StepVerdict:
    """skillweave against the fastest peer at one run length (by p50 step), and the target."""

    steps: int
    skillweave_p50: float
    peer: str
    peer_p50: float
    target: float

    @property
    def ratio(self) -> float:
        """skillweave's p50 step ÷ the fastest peer's."""
        return self.skillweave_p50 / self.peer_p50

    @property
    def met(self) -> bool:
        """Whether the ratio is within the target."""
        return self.ratio <= self.target


def step_verdicts(rows: Iterable[_StepRow], *, target: float) -> list[StepVerdict]:
    """One :class:`StepVerdict` per run length that has skillweave and at least one peer."""
    by_length: dict[int, dict[str, _StepRow]] = defaultdict(dict)
    for row in rows:
        by_length[row.steps][row.framework] = row
    found = []
    for steps, framed in sorted(by_length.items()):
        peers = [row for name, row in framed.items() if name != OURS]
        if OURS not in framed or not peers:
            continue
        fastest = min(peers, key=lambda row: row.step_p50)
        ours = framed[OURS].step_p50
        found.append(StepVerdict(steps, ours, fastest.framework, fastest.step_p50, target))
    return found


async def until_settled(
    read: Callable[[], Awaitable[Mapping[str, Any]]],
    done: Callable[[Mapping[str, Any]], bool],
    *,
    stall_seconds: float,
    what: str,
) -> None:
    """Until ``done(await read())``. Fails only when the value read stops changing for
    `stall_seconds` short of it.

    Raises:
        RuntimeError: it stopped changing short of done; names `what` and the last value.
    """
    seen: Mapping[str, Any] = {}
    deadline = time.monotonic() + stall_seconds
    while True:
        value = dict(await read())
        if done(value):
            return
        if value != seen:
            seen, deadline = value, time.monotonic() + stall_seconds
        elif time.monotonic() > deadline:
            raise RuntimeError(f"{what} stopped changing for {stall_seconds:g} s: {value}")
        await asyncio.sleep(0.05)
