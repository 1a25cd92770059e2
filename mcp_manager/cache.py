"""A bounded cache that forgets the least recently used entry first: :class:`BoundedCache`.

The manager keeps a few things in memory that it could fetch or compute again (skill
packages by store key, dependency specs by skill version, MCP sessions by session id); each
must stay bounded however long the manager runs. ``executions`` and ``mcp_server`` use it.

Written by hand: it is an ``OrderedDict`` and one loop. ``functools.lru_cache`` caches
function calls, not values put in from outside, and bounds only the count; ``cachetools`` is
not a dependency, and its ``LRUCache`` refuses a value larger than the whole bound, where the
package cache wants to keep the newest package however large it is (the run about to start
needs it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _one(_: object) -> int:
    return 1


class BoundedCache(Generic[K, V]):
    """Values by key, at most `max_entries` of them and at most `max_weight` in all.

    Reading a value makes it the most recently used; putting one in forgets the least recently
    used until both bounds hold again, but never the value just put in (a value heavier than
    `max_weight` is kept alone until the next one comes).

    Args:
        max_entries: how many values at most (None: no bound on the count).
        max_weight: how much in all at most, each value weighing ``weigh(value)`` (None: no
            bound on the weight).
        weigh: a value's weight (default: 1 each).
    """

    def __init__(
        self,
        *,
        max_entries: int | None = None,
        max_weight: int | None = None,
        weigh: Callable[[V], int] = _one,
    ) -> None:
        if max_entries is not None and max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._max_entries = max_entries
        self._max_weight = max_weight
        self._weigh = weigh
        self._weight = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    @property
    def weight(self) -> int:
        """The weight of the values kept now."""
        return self._weight

    def get(self, key: K) -> V | None:
        """The value of `key` (now the most recently used), or None."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """Keep `value` under `key` (replacing what was there), then forget the least recently
        used values until the bounds hold."""
        self.pop(key)
        self._entries[key] = value
        self._weight += self._weigh(value)
        while len(self._entries) > 1 and self._over():
            _, dropped = self._entries.popitem(last=False)
            self._weight -= self._weigh(dropped)

    def pop(self, key: K) -> V | None:
        """Forget `key`; its value, or None when it was not kept."""
        value = self._entries.pop(key, None)
        if value is not None:
            self._weight -= self._weigh(value)
        return value

    def clear(self) -> None:
        """Forget every value."""
        self._entries.clear()
        self._weight = 0

    def _over(self) -> bool:
        if self._max_entries is not None and len(self._entries) > self._max_entries:
            return True
        return self._max_weight is not None and self._weight > self._max_weight
