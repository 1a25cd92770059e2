"""The configured skill registries, searched together (:class:`Registries`).

``skills.registries`` lists them in order. A search reads each (concurrently): an ``index``
or ``marketplace`` registry's listing comes from this process's memory or the cache
(``_cache``) while fresh (``skills.registry_cache_seconds``), else it is read again
(``_readers``), verified (``_listing``) and kept; an ``api`` registry is asked the query
itself and its hits relayed under this registry's label, their signatures checked here
against this side's trusted keys. The candidates are ranked together (``_ranking``).

A registry that cannot be read never breaks the others: the search answers from the rest
and says which could not be read in :attr:`RegistryResults.problems` (:meth:`results`;
:meth:`search` and :meth:`find` log them as warnings). An index or marketplace registry that
cannot be read is answered from its last listing for at most a day, marked stale; a listing
refused by verification is never kept, nor stood in for.

Called by ``skillweave skills find`` (``cli.registry``), ``GET /v1/registry/search``
(``api.registry``) and agent acquisition.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import assert_never

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from skillweave.config import RegistrySource, SkillsSettings
from skillweave.errors import ConfigError, RegistryError
from skillweave.skills.registries._cache import STALE_LIMIT, ListingCache
from skillweave.skills.registries._hits import MAX_HITS, RegistryHit, RegistryResults
from skillweave.skills.registries._listing import Listing, checked_entry, verified_listing
from skillweave.skills.registries._memory import MEMORY
from skillweave.skills.registries._ranking import Candidate, Ranker
from skillweave.skills.registries._readers import list_marketplace, read_index, search_api
from skillweave.skills.selection import resolve_strategy
from skillweave.skills.signing import trusted_keys
from skillweave.storage import ArtifactStore

__all__ = ["Registries"]

log = logging.getLogger("skillweave.skills.registries")

_API_FIND_HITS = 20  # an api registry is asked for a name's best hits, then matched exactly


class Registries:
    """The registries of ``skills.registries``, searched together.

    Args:
        settings: ``skills`` (the registries, their cache, trust, selection, scan policy).
        store: the artifact store (reserved for listings kept in the store; unused now).
        now: the clock (tests).
    """

    def __init__(
        self,
        settings: SkillsSettings,
        *,
        store: ArtifactStore | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._now = now or (lambda: datetime.now(UTC))
        self._cache = ListingCache(settings.registry_cache_dir)
        self._trusted: dict[str, Ed25519PublicKey] | None = None

    @property
    def sources(self) -> tuple[RegistrySource, ...]:
        """The configured registries, in order."""
        return tuple(self._settings.registries)

    async def results(
        self, query: str, *, top_k: int = 5, registry: str | None = None, relay: bool = True
    ) -> RegistryResults:
        """Search every registry (or the one labelled `registry`) for `query`.

        Args:
            query: what the skill should do.
            top_k: at most this many hits (0 to :data:`MAX_HITS`).
            registry: only the registry with this label.
            relay: ask ``api`` registries too; False when answering another API's relay
                (``_readers.RELAY_HEADER``), so that two APIs listing each other never loop.

        Raises:
            ConfigError: `registry` names none configured, `top_k` is out of range, or a
                trusted key is malformed.
        """
        if not 0 <= top_k <= MAX_HITS:
            raise ConfigError(f"top_k must be between 0 and {MAX_HITS}, not {top_k}")
        sources = [s for s in self._chosen(registry) if relay or s.kind != "api"]
        read = await asyncio.gather(*(self._offer(s, query, top_k) for s in sources))
        candidates = [c for found, _, _ in read for c in found]
        problems = [p for _, said, _ in read for p in said]
        strategy = resolve_strategy(self._settings.selection)
        listings = [listing for _, _, listing in read if listing is not None]
        if any(source.kind == "api" for source in sources):  # its hits change with the query
            ranker = Ranker(candidates, strategy=strategy)
        else:  # the same listings: the ranker built over them before
            key = (strategy, tuple(self._identity(s) for s in sources))
            ranker = MEMORY.ranker(key, listings, lambda: Ranker(candidates, strategy=strategy))
        hits = ranker.rank(query, top_k=top_k)
        return RegistryResults(query=query, hits=hits, problems=problems)

    async def search(
        self, query: str, top_k: int = 5, *, registry: str | None = None
    ) -> list[RegistryHit]:
        """The `top_k` skills most relevant to `query`, best first; registries that could
        not be read are logged as warnings (:meth:`results` returns them)."""
        found = await self.results(query, top_k=top_k, registry=registry)
        for problem in found.problems:
            log.warning("%s", problem)
        return found.hits

    async def find(self, name: str, *, registry: str | None = None) -> RegistryHit | None:
        """The skill named exactly `name` in the first registry (in the settings' order, or
        the one labelled `registry`) that lists it; None when none does."""
        for source in self._chosen(registry):
            found, problems, _ = await self._offer(source, name, _API_FIND_HITS)
            for problem in problems:
                log.warning("%s", problem)
            for candidate in found:
                if candidate.entry.name == name:
                    return RegistryHit(
                        entry=candidate.entry,
                        registry=candidate.registry,
                        score=1.0,
                        verified=candidate.verified,
                        stale=candidate.stale,
                    )
        return None

    async def listing(self, source: RegistrySource) -> Listing:
        """What an ``index`` or ``marketplace`` registry lists, verified: from memory or the
        cache while fresh, else read again; its last listing (stale, at most a day old) when
        it cannot be read.

        Raises:
            RegistryError: it cannot be read (and has no usable last listing), or its listing
                is refused.
        """
        now = self._now()
        fresh = timedelta(seconds=self._settings.registry_cache_seconds)
        remembered = MEMORY.listing(self._identity(source))
        if remembered is not None and now - remembered[0] < fresh:
            return remembered[1]
        cached = self._cache.read(source)
        if cached is not None and cached.age(now) < fresh:
            try:
                listing = verified_listing(cached.data, source, trusted=self._keys())
            except RegistryError as exc:  # a damaged or outdated cache: read it again
                log.warning("ignoring the cached listing: %s", exc)
            else:
                MEMORY.keep(self._identity(source), cached.read_at, listing)
                return listing
        try:
            data = await self._read(source)
        except RegistryError as exc:
            if cached is None or cached.age(now) > STALE_LIMIT:
                raise
            try:
                listing = verified_listing(cached.data, source, trusted=self._keys())
            except RegistryError:
                raise exc from None
            minutes = int(cached.age(now).total_seconds() // 60)
            said = f"{exc}; answering from its listing of {minutes} minutes ago (stale)"
            return replace(listing, stale=True, problems=(*listing.problems, said))
        listing = verified_listing(data, source, trusted=self._keys())  # refused: never kept
        self._cache.write(source, data, now=now)
        MEMORY.keep(self._identity(source), now, listing)
        return listing

    def _chosen(self, registry: str | None) -> Sequence[RegistrySource]:
        sources = self.sources
        if registry is None:
            return sources
        chosen = [source for source in sources if source.label == registry]
        if not chosen:
            labels = ", ".join(repr(source.label) for source in sources) or "none"
            raise ConfigError(
                f"no registry labelled {registry!r} in SKILLS__REGISTRIES; configured: {labels}"
            )
        return chosen

    async def _offer(
        self, source: RegistrySource, query: str, top_k: int
    ) -> tuple[list[Candidate], list[str], Listing | None]:
        """What `source` offers for `query`, its problems, and the listing it comes from (an
        index or marketplace); a registry that cannot be read offers nothing and says why."""
        try:
            match source.kind:
                case "index" | "marketplace":
                    listing = await self.listing(source)
                    offered = [
                        Candidate(listed.entry, source.label, listed.verified, listing.stale)
                        for listed in listing.entries
                    ]
                    return offered, list(listing.problems), listing
                case "api":
                    found, problems = await self._relayed(source, query, top_k)
                    return found, problems, None
                case _:
                    assert_never(source.kind)
        except RegistryError as exc:
            return [], [str(exc)], None

    async def _relayed(
        self, source: RegistrySource, query: str, top_k: int
    ) -> tuple[list[Candidate], list[str]]:
        answer = await search_api(source, query, top_k=max(top_k, 1))
        keys = self._keys()
        offered: list[Candidate] = []
        problems = [f"registry {source.label!r} says: {p}" for p in answer.problems]
        for hit in answer.hits:
            listed, problem = checked_entry(hit.entry, registry=source.label, trusted=keys)
            if listed is not None:
                offered.append(Candidate(listed.entry, source.label, listed.verified, hit.stale))
            if problem is not None:
                problems.append(problem)
        return offered, problems

    async def _read(self, source: RegistrySource) -> bytes:
        if source.kind == "marketplace":
            return await list_marketplace(source, self._settings)
        return await read_index(source)

    def _identity(self, source: RegistrySource) -> Hashable:
        """What a listing is remembered under in this process: where it is read from, the
        key it must be signed by, the cache and the keys it was verified with."""
        settings = self._settings
        trust = tuple(sorted(settings.trust.keys.items()))
        return source.kind, source.location, source.key, str(settings.registry_cache_dir), trust

    def _keys(self) -> dict[str, Ed25519PublicKey]:
        if self._trusted is None:
            self._trusted = trusted_keys(self._settings.trust)
        return self._trusted
