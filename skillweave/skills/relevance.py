"""Ranking skills against a query: :class:`RelevanceIndex`, BM25 over a short text per skill.

The catalog's ``auto`` mode shows the top-k skills for the task, the ``search_skills`` tool
answers the model's queries when the catalog is folded or too large, and the optional
pre-inference preload picks skills to activate; all three rank with one index built once per
skill set. What a skill is indexed by is :func:`skill_document`: its name (twice, so name words
weigh more), its description and the headings of its body; the whole body would drown those in
incidental words.

Scoring is the ``bm25s`` library's (Lucene BM25). We wrap it because its generic ``retrieve`` and
``tokenize`` paths cost more per call than a whole search should (progress bars, vocabulary
objects, batching), and its ``Tokenizer`` memoizes every word it ever sees, which grows without
bound in a long-lived process. So text is analysed here, the same way for documents and queries
(lowercase, split on non-alphanumerics, English stopwords, Snowball English stemmer), and a query
goes straight to the retriever's ``get_scores`` as vocabulary ids; the top-k is a numpy partition.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

__all__ = ["STOPWORDS", "RelevanceIndex", "SearchHit", "name_mask", "skill_document", "top_hits"]

# Runs of letters and digits, two or more long. Unlike bm25s's default pattern this also splits
# on underscores, so `load_csv` in a heading matches a query for "csv".
_WORD: Final = re.compile(r"[^\W_]{2,}")
STOPWORDS: Final = frozenset(STOPWORDS_EN_PLUS)
"""Words no query or skill is matched by, for every selection strategy: the NLTK list rather than
bm25s's short Lucene one, since queries are questions ("what", "how") and those words say nothing
about which skill fits."""
# Up to three spaces of indent, as in CommonMark; four or more make an indented code block.
_HEADING: Final = re.compile(r" {0,3}#+(.*)")
_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})")
_NAME_REPEATS: Final = 2


def skill_document(name: str, description: str, body: str) -> str:
    """The text a skill is indexed by.

    Args:
        name: the skill's name; hyphens and underscores become spaces, and it is written twice
            so its words count extra.
        description: the skill's description, as the catalog shows it.
        body: the skill's Markdown instructions; only its headings are kept (lines starting
            with ``#``, outside fenced code blocks).

    Returns:
        The document text, one part per line.
    """
    name_words = name.replace("-", " ").replace("_", " ")
    return "\n".join([*[name_words] * _NAME_REPEATS, description, *_headings(body)])


def _headings(body: str) -> list[str]:
    headings: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        fence_match = _FENCE.match(line)
        if fence is not None:
            # Only a bare fence of the same character, at least as long, closes the block.
            closes = (
                fence_match is not None
                and fence_match.group(1).startswith(fence)
                and not line[fence_match.end() :].strip()
            )
            if closes:
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            continue
        heading = _HEADING.fullmatch(line)
        if heading:
            text = heading.group(1).strip().rstrip("#").strip()
            if text:
                headings.append(text)
    return headings


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One skill that matched a query.

    Attributes:
        name: the skill's name.
        score: its BM25 score for the query; higher is more relevant, always positive.
    """

    name: str
    score: float


class _Analyzer:
    """Text to stems, identical for documents and queries (a mismatch would silently miss)."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("english")
        # A PyStemmer instance keeps state and must not be called from two threads at once.
        self._lock = threading.Lock()

    def stems(self, text: str) -> list[str]:
        words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
        if not words:
            return []
        with self._lock:
            return self._stemmer.stemWords(words)


class RelevanceIndex:
    """A BM25 index over skills, built once and searched many times.

    Safe to search from several threads at once.

    Args:
        documents: ``(skill name, document text)`` pairs, the text usually from
            :func:`skill_document`.

    Raises:
        ValueError: if a name appears more than once.
    """

    def __init__(self, documents: Sequence[tuple[str, str]]) -> None:
        counts = Counter(name for name, _ in documents)
        duplicates = sorted(name for name, count in counts.items() if count > 1)
        if duplicates:
            raise ValueError(f"duplicate skill names in relevance index: {', '.join(duplicates)}")
        # Documents are held in name order, so a stable sort by score breaks ties by name.
        ordered = sorted(documents, key=lambda document: document[0])
        self._names: tuple[str, ...] = tuple(name for name, _ in ordered)
        self._positions = {name: i for i, name in enumerate(self._names)}
        self._analyzer = _Analyzer()
        corpus = [self._analyzer.stems(text) for _, text in ordered]
        self._retriever: bm25s.BM25 | None = None
        self._vocab: dict[str, int] = {}
        # With no token at all bm25s would divide by a zero average length; nothing can match.
        if any(corpus):
            retriever = bm25s.BM25()
            # No empty-token entry: its id lies past the score matrix and would fail a lookup.
            retriever.index(corpus, create_empty_token=False, show_progress=False)
            self._retriever = retriever
            self._vocab = retriever.vocab_dict

    def __len__(self) -> int:
        return len(self._names)

    @property
    def names(self) -> tuple[str, ...]:
        """The indexed skill names, sorted."""
        return self._names

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
            query: free text, e.g. the task or the model's ``search_skills`` query.
            top_k: at most this many hits; 0 gives none.
            min_score: only hits scoring above this; scores are never above zero for a skill
                that shares no term with the query, so those are never hits.
            allowed: if given, only these skills can be hits (e.g. the enabled ones); names
                not in the index are ignored.

        Returns:
            Up to `top_k` hits by descending score, equal scores in name order.

        Raises:
            ValueError: if `top_k` is negative.
        """
        if top_k < 0:
            raise ValueError(f"top_k must be >= 0, got {top_k}")
        scores = self.score_array(query)
        if scores is None:
            return []
        mask = None if allowed is None else self._mask(allowed)
        floor = max(min_score, 0.0)
        return top_hits(self._names, scores, top_k=top_k, min_score=floor, mask=mask)

    def scores(self, query: str) -> dict[str, float]:
        """Every skill's score for `query`, leaving out those that score zero.

        Args:
            query: free text.

        Returns:
            Skill name to BM25 score, in name order.
        """
        scores = self.score_array(query)
        if scores is None:
            return {}
        return {self._names[i]: float(scores[i]) for i in np.flatnonzero(scores > 0)}

    def score_array(self, query: str) -> np.ndarray | None:
        """BM25 scores aligned with `names`, or None when no query term is in the vocabulary."""
        if self._retriever is None:
            return None
        # A term repeated in the query counts once: repetition should not outweigh other terms.
        ids = {self._vocab[s]: None for s in self._analyzer.stems(query) if s in self._vocab}
        if not ids:
            return None
        return self._retriever.get_scores(list(ids))

    def _mask(self, allowed: Collection[str]) -> np.ndarray:
        return name_mask(self._positions, allowed)


def name_mask(positions: dict[str, int], allowed: Collection[str]) -> np.ndarray:
    """A boolean array over the names in `positions`, true for those in `allowed`."""
    mask = np.zeros(len(positions), dtype=bool)
    mask[[positions[n] for n in allowed if n in positions]] = True
    return mask


def top_hits(
    names: Sequence[str],
    scores: np.ndarray,
    *,
    top_k: int,
    min_score: float = 0.0,
    mask: np.ndarray | None = None,
) -> list[SearchHit]:
    """The `top_k` best of `scores` (aligned with `names`, which are sorted) as hits.

    Only scores above `min_score` count; `mask`, when given, keeps only the true positions.
    Equal scores come in name order, wherever the cut falls.

    Raises:
        ValueError: if `top_k` is negative.
    """
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0, got {top_k}")
    if top_k == 0:
        return []
    keep = scores > min_score
    if mask is not None:
        keep &= mask
    candidates = np.flatnonzero(keep)
    candidate_scores = scores[candidates]
    if len(candidates) > top_k:
        # Keep everything scoring at least the k-th best, so ties at the cut are decided by
        # name below rather than by where the partition happened to put them.
        kth_best = np.partition(candidate_scores, -top_k)[-top_k]
        at_least = candidate_scores >= kth_best
        candidates = candidates[at_least]
        candidate_scores = candidate_scores[at_least]
    order = np.argsort(-candidate_scores, kind="stable")[:top_k]
    return [SearchHit(name=names[candidates[i]], score=float(candidate_scores[i])) for i in order]
