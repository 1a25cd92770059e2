"""Choosing skills for a request: one interface, four strategies.

Everything that ranks skills against text goes through a :class:`Selector`: the catalog's
``auto`` mode (top-k for the task), the ``search_skills`` tool, the MCP front door's search and
the optional preload (activate the best match before the first model call). The strategies:

- ``keyword``: a skill scores how many of the query's words occur in its name or description
  as substrings, case-insensitively, which is what simple clients do. A baseline.
- ``bm25``: Lucene BM25 over name, description and headings, stemmed (see ``relevance``).
- ``embeddings``: cosine between the query's and each skill's sentence embedding (name and
  description), from the model shipped in the optional ``embeddings`` extra (see
  ``embeddings``). Finds paraphrases that share no word with the skill.
- ``hybrid``: reciprocal rank fusion of ``bm25`` and ``embeddings``; each ranking gives a skill
  ``1 / (k + rank)``, normalised so that 1.0 means both rank it first.

``skills.selection = auto`` (the default) picks ``hybrid`` when the extra is installed and
``bm25`` otherwise. The benchmark behind these choices, and the thresholds below (chosen on its
validation split, reported on its held-out split), is ``bench/selection_bench.py``; its
figures are in ``docs/BENCHMARKS.md``.
"""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, Literal, get_args

import numpy as np

from skillweave.errors import ConfigError
from skillweave.skills.relevance import (
    STOPWORDS,
    RelevanceIndex,
    SearchHit,
    name_mask,
    skill_document,
    top_hits,
)

__all__ = [
    "PRELOAD_MIN_SCORE",
    "RRF_K",
    "STRATEGIES",
    "Bm25Selector",
    "EmbeddingSelector",
    "HybridSelector",
    "KeywordSelector",
    "Selector",
    "SkillText",
    "Strategy",
    "embeddings_available",
    "make_selector",
    "resolve_strategy",
]

log = logging.getLogger("skillweave.skills")

Strategy = Literal["keyword", "bm25", "embeddings", "hybrid"]
STRATEGIES: Final[tuple[Strategy, ...]] = get_args(Strategy)

RRF_K: Final = 5
"""The rank constant of the fusion: smaller trusts each ranking's first places more. 60 is the
value of the original RRF paper (for fusing many long web rankings); ours are two, and chosen
on the validation split."""

PRELOAD_MIN_SCORE: Final[dict[Strategy, float]] = {
    "keyword": 3.0,
    "bm25": 12.3,
    "embeddings": 0.57,
    "hybrid": 0.99,  # both rankings put the skill first
}
"""The score above which preload activates the best match, per strategy (its own scale): the
lowest at which the validation split's preloads were right 80% of the time, else the most
precise. None is precise on paraphrased requests (hybrid: 39% right, preloading a fifth of
them), which is why preload is off unless an agent turns it on; ``preload.min_score``
overrides the default."""

_QUERY_WORD: Final = re.compile(r"[^\W_]{3,}")


@dataclass(frozen=True, slots=True)
class SkillText:
    """What a selector knows of a skill."""

    name: str
    description: str
    body: str = ""


class Selector(ABC):
    """Ranks a fixed set of skills against free text. Safe to search from several threads.

    Args:
        skills: the skills, in any order; names must be unique.

    Raises:
        ValueError: if a name appears more than once.
    """

    strategy: ClassVar[Strategy]

    def __init__(self, skills: Sequence[SkillText]) -> None:
        counts = Counter(skill.name for skill in skills)
        duplicates = sorted(name for name, count in counts.items() if count > 1)
        if duplicates:
            raise ValueError(f"duplicate skill names: {', '.join(duplicates)}")
        # Held in name order, so a stable sort by score breaks ties by name.
        self._skills = tuple(sorted(skills, key=lambda skill: skill.name))
        self._names = tuple(skill.name for skill in self._skills)
        self._positions = {name: i for i, name in enumerate(self._names)}

    def __len__(self) -> int:
        return len(self._names)

    @property
    def names(self) -> tuple[str, ...]:
        """The skill names, sorted."""
        return self._names

    @property
    def preload_min_score(self) -> float:
        """The default preload threshold on this strategy's scale."""
        return PRELOAD_MIN_SCORE[self.strategy]

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        min_score: float = 0.0,
        allowed: Collection[str] | None = None,
    ) -> list[SearchHit]:
        """The skills most relevant to `query`, best first.

        Args:
            query: free text: the task, or the model's ``search_skills`` query.
            top_k: at most this many hits; 0 gives none.
            min_score: only hits scoring above this (never below 0: a skill that scores 0 or
                less does not match at all).
            allowed: if given, only these skills can be hits; unknown names are ignored.

        Raises:
            ValueError: if `top_k` is negative.
        """
        if top_k < 0:
            raise ValueError(f"top_k must be >= 0, got {top_k}")
        mask = None if allowed is None else name_mask(self._positions, allowed)
        scores = self.score_array(query, mask)
        if scores is None:
            return []
        floor = max(min_score, 0.0)
        return top_hits(self._names, scores, top_k=top_k, min_score=floor, mask=mask)

    @abstractmethod
    def score_array(self, query: str, mask: np.ndarray | None = None) -> np.ndarray | None:
        """Scores aligned with :attr:`names` (higher is better, 0 or less: no match), or None
        when nothing can match. `mask` marks the skills that may be hits; strategies that
        rank (``hybrid``) rank among those only."""


class KeywordSelector(Selector):
    """Substring matching: the number of distinct query words (three letters or more, not
    stopwords) found in a skill's name or description, case-insensitively."""

    strategy = "keyword"

    def __init__(self, skills: Sequence[SkillText]) -> None:
        super().__init__(skills)
        self._haystacks = [f"{s.name} {s.description}".lower() for s in self._skills]

    def score_array(self, query: str, mask: np.ndarray | None = None) -> np.ndarray | None:
        words = {w for w in _QUERY_WORD.findall(query.lower()) if w not in STOPWORDS}
        if not words:
            return None
        return np.array(
            [sum(word in text for word in words) for text in self._haystacks], dtype=np.float64
        )


class Bm25Selector(Selector):
    """BM25 over each skill's :func:`~skillweave.skills.relevance.skill_document`."""

    strategy = "bm25"

    def __init__(self, skills: Sequence[SkillText]) -> None:
        super().__init__(skills)
        self._index = RelevanceIndex(
            [(s.name, skill_document(s.name, s.description, s.body)) for s in self._skills]
        )

    def score_array(self, query: str, mask: np.ndarray | None = None) -> np.ndarray | None:
        return self._index.score_array(query)  # both hold the names in sorted order


class EmbeddingSelector(Selector):
    """Cosine similarity of sentence embeddings of the query and of each skill's name and
    description.

    Raises:
        EmbeddingsUnavailable: the ``embeddings`` extra is not installed.
    """

    strategy = "embeddings"

    def __init__(self, skills: Sequence[SkillText]) -> None:
        from skillweave.skills.embeddings import load_model

        super().__init__(skills)
        self._model = load_model()
        self._vectors = self._model.embed([_embedding_text(s) for s in self._skills])

    def score_array(self, query: str, mask: np.ndarray | None = None) -> np.ndarray | None:
        if not self._names:
            return None
        vector = self._model.embed([query])[0]
        if not vector.any():
            return None
        return self._vectors @ vector


def _embedding_text(skill: SkillText) -> str:
    return f"{skill.name.replace('-', ' ').replace('_', ' ')}: {skill.description}"


class HybridSelector(Selector):
    """Reciprocal rank fusion of BM25 and embeddings.

    Args:
        skills: the skills.
        k: the rank constant (:data:`RRF_K`).
        parts: the rankings to fuse; by default BM25 and embeddings over `skills`.
    """

    strategy = "hybrid"

    def __init__(
        self,
        skills: Sequence[SkillText],
        *,
        k: float = RRF_K,
        parts: Sequence[Selector] | None = None,
    ) -> None:
        super().__init__(skills)
        self._k = k
        self._parts = (
            tuple(parts) if parts is not None else (Bm25Selector(skills), EmbeddingSelector(skills))
        )
        if any(part.names != self._names for part in self._parts):
            raise ValueError("every fused selector must rank the same skills")

    def score_array(self, query: str, mask: np.ndarray | None = None) -> np.ndarray | None:
        fused = np.zeros(len(self._names), dtype=np.float64)
        matched = False
        for part in self._parts:
            scores = part.score_array(query, mask)
            if scores is None:
                continue
            candidates = scores > 0
            if mask is not None:
                candidates &= mask
            ranked = np.flatnonzero(candidates)
            if not ranked.size:
                continue
            matched = True
            ranked = ranked[np.argsort(-scores[ranked], kind="stable")]
            fused[ranked] += 1.0 / (self._k + np.arange(1, ranked.size + 1))
        if not matched:
            return None
        return fused / (len(self._parts) / (self._k + 1))


_SELECTORS: Final[dict[Strategy, type[Selector]]] = {
    "keyword": KeywordSelector,
    "bm25": Bm25Selector,
    "embeddings": EmbeddingSelector,
    "hybrid": HybridSelector,
}


def embeddings_available() -> bool:
    """Whether the embedding model loads (the ``embeddings`` extra is installed and whole)."""
    from skillweave.skills.embeddings import EmbeddingsUnavailable, load_model

    try:
        load_model()
    except EmbeddingsUnavailable as error:
        log.debug("skill selection without embeddings: %s", error)
        return False
    return True


def resolve_strategy(selection: str) -> Strategy:
    """The strategy a ``skills.selection`` setting means here.

    ``auto`` is ``hybrid`` when the embeddings extra is installed, else ``bm25``.

    Raises:
        ConfigError: an unknown name, or ``embeddings``/``hybrid`` without the extra.
    """
    if selection == "auto":
        return "hybrid" if embeddings_available() else "bm25"
    if selection not in STRATEGIES:
        raise ConfigError(
            f"unknown skill selection {selection!r}; expected auto or one of {STRATEGIES}"
        )
    if selection in ("embeddings", "hybrid"):
        from skillweave.skills.embeddings import EmbeddingsUnavailable, load_model

        try:
            load_model()
        except EmbeddingsUnavailable as error:
            raise ConfigError(f"skill selection {selection!r} needs embeddings: {error}") from error
    return selection  # type: ignore[return-value]


def make_selector(strategy: Strategy, skills: Sequence[SkillText]) -> Selector:
    """A selector of `strategy` over `skills`."""
    return _SELECTORS[strategy](skills)
