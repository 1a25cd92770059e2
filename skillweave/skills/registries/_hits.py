"""What a registry search answers: :class:`RegistryHit` (one listed skill, where it was found,
how well it matched, whether a trusted key signed it) and :class:`RegistryResults` (the hits
and the registries that could not be read).

The same models are the API's answer (``GET /v1/registry/search``) and what an ``api``
registry reads back from another skillweave API (``_readers``), so both ends share one shape.
Made by the search (``_registries``, ``_ranking``); read by ``skills find``, the API route and
agent acquisition.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from skillweave.skills.registries._index import IndexEntry

__all__ = ["MAX_HITS", "RegistryHit", "RegistryResults"]

MAX_HITS = 100
"""The most hits one search answers."""


class RegistryHit(BaseModel):
    """One skill a registry lists that matched a search.

    Attributes:
        entry: the index entry (what to install, its version, signature and scan).
        registry: the label of the registry it was found in (``RegistrySource.label``).
        score: how well it matched, on the selection strategy's scale (higher is better).
        verified: a key of ``skills.trust.keys`` signed this name and version.
        stale: the registry could not be read, and this is from its last listing.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    entry: IndexEntry
    registry: str = Field(max_length=2048)
    score: float
    verified: bool = False
    stale: bool = False


class RegistryResults(BaseModel):
    """A search of the registries: the hits, best first, and what went wrong on the way.

    Attributes:
        query: what was searched for.
        hits: best first, one per skill name and version (the first registry's).
        problems: one line per registry that could not be read, was refused, or answered
            from a stale listing, and per entry dropped (a signature that does not verify).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str
    hits: list[RegistryHit] = Field(default_factory=list, max_length=MAX_HITS)
    problems: list[str] = Field(default_factory=list, max_length=1000)
