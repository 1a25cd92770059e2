"""Ranking what the registries list against a query (:func:`rank`), with the selection
strategies local search uses (``skills.selection``: keyword, bm25, embeddings, hybrid).

A selector ranks distinct names, so the entries are grouped by name: a name is scored on its
name and its descriptions (up to four different ones), and every entry of a name takes its
score, in the order the registries were configured. Entries are deduplicated by name and
version first: the first registry that lists a version wins. A :class:`Ranker` is built once
for a set of listings and asked many queries. Called by the search (``_registries``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from skillweave.skills.registries._hits import RegistryHit
from skillweave.skills.registries._index import IndexEntry
from skillweave.skills.selection import SkillText, Strategy, make_selector

__all__ = ["Candidate", "Ranker", "rank"]

_DESCRIPTIONS_PER_NAME: Final = 4


@dataclass(frozen=True, slots=True)
class Candidate:
    """An entry a registry offers for ranking, with where it is from."""

    entry: IndexEntry
    registry: str
    verified: bool
    stale: bool = False


class Ranker:
    """The candidates of some registries, grouped by name and ready to rank: built once per
    set of listings (a selector over 20,000 names takes most of a second to build), then
    asked any number of queries. Safe to use from several tasks: it is never changed."""

    def __init__(self, candidates: Sequence[Candidate], *, strategy: Strategy) -> None:
        groups: dict[str, list[Candidate]] = {}
        seen: set[tuple[str, str]] = set()
        for candidate in candidates:
            key = (candidate.entry.name, candidate.entry.version)
            if key not in seen:
                seen.add(key)
                groups.setdefault(candidate.entry.name, []).append(candidate)
        self._groups = groups
        texts = [
            SkillText(
                name=name,
                description=" ".join(
                    dict.fromkeys(c.entry.description for c in group[:_DESCRIPTIONS_PER_NAME])
                ),
            )
            for name, group in groups.items()
        ]
        self._selector = make_selector(strategy, texts) if texts else None

    def rank(self, query: str, *, top_k: int) -> list[RegistryHit]:
        """The `top_k` candidates most relevant to `query`, best first."""
        if self._selector is None or top_k <= 0:
            return []
        hits: list[RegistryHit] = []
        for found in self._selector.search(query, top_k=top_k):
            for candidate in self._groups[found.name]:
                hits.append(
                    RegistryHit(
                        entry=candidate.entry,
                        registry=candidate.registry,
                        score=float(found.score),
                        verified=candidate.verified,
                        stale=candidate.stale,
                    )
                )
                if len(hits) == top_k:
                    return hits
        return hits


def rank(
    query: str, candidates: Sequence[Candidate], *, strategy: Strategy, top_k: int
) -> list[RegistryHit]:
    """The `top_k` candidates most relevant to `query`, best first, one per name and version."""
    return Ranker(candidates, strategy=strategy).rank(query, top_k=top_k)
