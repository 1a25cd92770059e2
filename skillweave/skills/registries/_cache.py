"""Registry listings kept between reads and between processes (:class:`ListingCache`), under
``skills.registry_cache_dir``, one file per registry (kind and location).

A file holds the listing's bytes as read (an index document, or the index a marketplace was
listed into) and when it was read. It is written only after the listing was parsed and
verified (a listing that failed verification is never kept), atomically; and it is parsed and
verified again when read back: whoever can write the folder can do no more than a registry
could. Freshness is the caller's (``_registries``): fresh for ``skills.registry_cache_seconds``,
and usable, marked stale, for at most :data:`STALE_LIMIT` when the registry cannot be read.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from pydantic import AwareDatetime, BaseModel, ConfigDict, ValidationError

from skillweave.atomic_write import write_atomic
from skillweave.config import RegistrySource
from skillweave.skills.registries._index import MAX_INDEX_BYTES

__all__ = ["STALE_LIMIT", "CachedListing", "ListingCache"]

STALE_LIMIT: Final = timedelta(days=1)
"""How long a listing may stand in for a registry that cannot be read."""

_PRIVATE: Final = 0o600
_FORMAT: Final = 1
_MAX_FILE_BYTES: Final = 2 * MAX_INDEX_BYTES  # the listing as JSON text, escaped

log = logging.getLogger("skillweave.skills.registries")


class _CacheFile(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    format: int
    kind: str
    location: str
    read_at: AwareDatetime
    listing: str


@dataclass(frozen=True, slots=True)
class CachedListing:
    """A listing as it was last read: its bytes and when."""

    data: bytes
    read_at: datetime

    def age(self, now: datetime) -> timedelta:
        """How long ago it was read (never negative)."""
        return max(now - self.read_at, timedelta(0))


class ListingCache:
    """The cached listings in `folder` (created on first write, mode 0700)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder.expanduser()

    def path(self, source: RegistrySource) -> Path:
        """The file of `source`'s listing."""
        digest = hashlib.sha256(f"{source.kind}\0{_where(source)}".encode()).hexdigest()
        return self._folder / f"{source.kind}-{digest[:32]}.json"

    def read(self, source: RegistrySource) -> CachedListing | None:
        """`source`'s listing as last kept; None when none is, or the file is not one (a
        damaged file is ignored: the registry is read again)."""
        where = self.path(source)
        try:
            if where.is_symlink() or where.stat().st_size > _MAX_FILE_BYTES:
                return None
            raw = where.read_bytes()
        except OSError:
            return None
        try:
            kept = _CacheFile.model_validate_json(raw)
        except ValidationError:
            log.warning("ignoring the damaged registry cache file %s", where)
            return None
        if (kept.format, kept.kind, kept.location) != (_FORMAT, source.kind, _where(source)):
            return None
        return CachedListing(data=kept.listing.encode("utf-8"), read_at=kept.read_at)

    def write(self, source: RegistrySource, data: bytes, *, now: datetime | None = None) -> None:
        """Keep `source`'s verified listing `data`, read `now`. A folder that cannot be
        written is logged, not raised: the search goes on without a cache."""
        kept = _CacheFile(
            format=_FORMAT,
            kind=source.kind,
            location=_where(source),
            read_at=(now or datetime.now(UTC)).astimezone(UTC),
            listing=data.decode("utf-8"),
        )
        try:
            self._folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_atomic(self.path(source), kept.model_dump_json().encode("utf-8"), mode=_PRIVATE)
        except OSError as exc:
            log.warning("cannot keep the listing of registry %r: %s", source.label, exc.strerror)


def _where(source: RegistrySource) -> str:
    """Where `source` is read from: a relative path that exists here as its absolute path (the
    same text means another file in another folder); anything else as written."""
    location = source.location
    if "://" not in location and os.path.lexists(os.path.expanduser(location)):
        return os.path.abspath(os.path.expanduser(location))
    return location
