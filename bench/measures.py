"""What every benchmark here measures the same way: percentiles, and waiting on progress.

- :func:`percentile` is the nearest-rank percentile (the smallest value with at least the given
  fraction of values at or below it). The benchmarks used two roundings before; one rule now.
- :func:`until_settled` waits until a condition holds, and fails only when what it watches
  stops changing for a while short of it, never after a fixed time: on a loaded machine slow is
  not stuck (sandboxes and pods may take minutes to start).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

__all__ = ["percentile", "until_settled"]


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` at `fraction` (0.95 for p95)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


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
