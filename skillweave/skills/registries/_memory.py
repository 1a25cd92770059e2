"""What this process remembers of registries (:data:`MEMORY`): the verified listings it has
read and the rankers built over them, shared by every :class:`Registries` of the process (the
API makes one per request; a worker one per run), bounded, least recently used first out.

A listing is remembered under where it is read from, the key it must be signed by, the cache
folder and the trusted keys it was verified with (another set of keys verifies otherwise);
freshness is the caller's, by the time it was read. A ranker is remembered under the listings
it was built over, and holds them, so that what it ranks is what it was built from. Called by
the search (``_registries``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from typing import Final

from skillweave.skills.registries._listing import Listing
from skillweave.skills.registries._ranking import Ranker

__all__ = ["MEMORY", "ProcessMemory"]

_LISTINGS: Final = 64
_RANKERS: Final = 8


class ProcessMemory:
    """Listings and rankers, bounded (least recently used first out), safe across threads."""

    def __init__(self, *, listings: int = _LISTINGS, rankers: int = _RANKERS) -> None:
        self._lock = threading.Lock()
        self._listings: OrderedDict[Hashable, tuple[datetime, Listing]] = OrderedDict()
        self._rankers: OrderedDict[Hashable, tuple[Sequence[Listing], Ranker]] = OrderedDict()
        self._limits = (listings, rankers)

    def listing(self, key: Hashable) -> tuple[datetime, Listing] | None:
        """The listing remembered under `key` and when it was read; None when none is."""
        with self._lock:
            found = self._listings.get(key)
            if found is not None:
                self._listings.move_to_end(key)
            return found

    def keep(self, key: Hashable, read_at: datetime, listing: Listing) -> None:
        """Remember `listing`, read at `read_at`, under `key`."""
        with self._lock:
            self._listings[key] = (read_at, listing)
            self._listings.move_to_end(key)
            while len(self._listings) > self._limits[0]:
                self._listings.popitem(last=False)

    def ranker(
        self, key: Hashable, listings: Sequence[Listing], make: Callable[[], Ranker]
    ) -> Ranker:
        """The ranker over `listings` remembered under `key`, made by `make` when none is."""
        full = (key, tuple(id(listing) for listing in listings))
        with self._lock:
            found = self._rankers.get(full)
            if found is not None:
                self._rankers.move_to_end(full)
                return found[1]
        ranker = make()  # outside the lock: it may take a second
        with self._lock:
            self._rankers[full] = (tuple(listings), ranker)
            while len(self._rankers) > self._limits[1]:
                self._rankers.popitem(last=False)
        return ranker


MEMORY: Final = ProcessMemory()
"""This process's memory of registries."""
