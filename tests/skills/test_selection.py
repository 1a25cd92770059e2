"""Tests for skill selection: the strategies behind one interface, the hybrid's fusion, which
strategy ``auto`` resolves to, and the product without the embeddings extra."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from skillweave.config import SkillsSettings
from skillweave.errors import ConfigError
from skillweave.skills import SkillLibrary, SkillRegistry, build_catalog
from skillweave.skills.embeddings import EmbeddingsUnavailable, load_model
from skillweave.skills.relevance import RelevanceIndex, skill_document
from skillweave.skills.selection import (
    PRELOAD_MIN_SCORE,
    STRATEGIES,
    Bm25Selector,
    EmbeddingSelector,
    HybridSelector,
    KeywordSelector,
    Selector,
    SkillText,
    Strategy,
    make_selector,
    resolve_strategy,
)
from tests.skills.test_relevance import SKILLS

TEXTS = [SkillText(name, description, body) for name, description, body in SKILLS]


@pytest.fixture
def without_embeddings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if the extra were not installed: its package cannot be found."""
    monkeypatch.setitem(sys.modules, "wordllama", None)  # find_spec answers None
    load_model.cache_clear()
    yield
    load_model.cache_clear()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_finds_a_skill_named_in_its_own_words(strategy: Strategy) -> None:
    selector = make_selector(strategy, TEXTS)
    assert selector.strategy == strategy
    hits = selector.search("convert celsius temperature to fahrenheit units", top_k=3)
    assert hits[0].name == "unit-converter"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.score > 0 for h in hits)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_honours_top_k_allowed_and_min_score(strategy: Strategy) -> None:
    selector = make_selector(strategy, TEXTS)
    query = "resize a png image and extract pdf tables"
    assert selector.search(query, top_k=0) == []
    with pytest.raises(ValueError, match="top_k"):
        selector.search(query, top_k=-1)
    allowed = ["pdf_extraction", "log-triage", "not-a-skill"]
    hits = selector.search(query, top_k=10, allowed=allowed)
    assert hits
    assert {h.name for h in hits} <= {"pdf_extraction", "log-triage"}
    best = selector.search(query, top_k=1)[0]
    assert selector.search(query, top_k=10, min_score=best.score) == []


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate skill names: a"):
        KeywordSelector([SkillText("a", "one"), SkillText("a", "two"), SkillText("b", "x")])


def test_keyword_counts_query_words_found_as_substrings() -> None:
    selector = KeywordSelector(TEXTS)
    scores = dict(
        zip(selector.names, selector.score_array("spreadsheet lookups pivots"), strict=True)
    )
    assert scores["spreadsheet-formulas"] == 3.0  # "spreadsheet" from the name, two substrings
    assert scores["csv-profiler"] == 0.0
    # Stopwords and words under three letters are not looked for.
    assert selector.score_array("the of to an") is None


def test_bm25_selector_ranks_as_the_relevance_index_does() -> None:
    index = RelevanceIndex([(t.name, skill_document(t.name, t.description, t.body)) for t in TEXTS])
    selector = Bm25Selector(TEXTS)
    for query in ("group stack traces in logs", "conventional commits", "OCR scanned pages"):
        assert selector.search(query, top_k=5) == index.search(query, top_k=5)


def test_embeddings_find_a_paraphrase_that_shares_no_word_with_the_skill() -> None:
    selector = EmbeddingSelector(TEXTS)
    query = "my server keeps crashing, what went wrong overnight?"
    assert Bm25Selector(TEXTS).search(query) == []  # no word in common with any skill
    assert selector.search(query, top_k=1)[0].name == "log-triage"


def test_embeddings_are_unit_vectors_and_identical_texts_score_one() -> None:
    model = load_model()
    vectors = model.embed(["Resize images", "resize images", "", "🙂"])
    assert vectors.shape == (4, model.dimensions)
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0, abs=1e-5)  # case is ignored
    assert not vectors[2].any()  # no tokens: a zero vector, never a NaN
    assert not np.isnan(vectors).any()


class _Fixed(Selector):
    """A selector whose scores are given, to check the fusion's arithmetic."""

    strategy = "bm25"

    def __init__(self, texts: list[SkillText], scores: dict[str, float]) -> None:
        super().__init__(texts)
        self._scores = np.array([scores.get(n, 0.0) for n in self.names])

    def score_array(self, query: str, mask: np.ndarray | None = None) -> np.ndarray | None:
        return self._scores if self._scores.any() else None


def test_hybrid_fuses_ranks_not_scores() -> None:
    texts = [SkillText(n, "x") for n in ("a", "b", "c", "d")]
    lexical = _Fixed(texts, {"a": 50.0, "b": 1.0, "c": 0.5})  # d does not match
    semantic = _Fixed(texts, {"a": 0.2, "b": 0.9, "c": 0.3, "d": 0.1})
    hybrid = HybridSelector(texts, k=10, parts=(lexical, semantic))
    scores = dict(zip(hybrid.names, hybrid.score_array("q"), strict=True))
    top = 2 / 11
    assert scores["a"] == pytest.approx((1 / 11 + 1 / 13) / top)
    assert scores["b"] == pytest.approx((1 / 12 + 1 / 11) / top)
    assert scores["d"] == pytest.approx((1 / 14) / top)
    # First in both rankings is exactly 1.0.
    both = HybridSelector(texts, k=10, parts=(lexical, lexical))
    assert both.search("q", top_k=1)[0].score == pytest.approx(1.0)


def test_hybrid_ranks_among_the_allowed_skills_only() -> None:
    texts = [SkillText(n, "x") for n in ("a", "b", "c")]
    lexical = _Fixed(texts, {"a": 3.0, "b": 2.0, "c": 1.0})
    hybrid = HybridSelector(texts, k=1, parts=(lexical, lexical))
    # With a out of reach, b is first in both rankings.
    assert hybrid.search("q", allowed=["b", "c"])[0].score == pytest.approx(1.0)


def test_hybrid_with_nothing_matching_returns_no_hits() -> None:
    texts = [SkillText("a", "x"), SkillText("b", "y")]
    silent = _Fixed(texts, {})
    assert HybridSelector(texts, parts=(silent, silent)).search("q") == []


def test_hybrid_refuses_parts_over_other_skills() -> None:
    with pytest.raises(ValueError, match="same skills"):
        HybridSelector(TEXTS, parts=(KeywordSelector(TEXTS[:2]), KeywordSelector(TEXTS)))


def test_auto_is_hybrid_with_the_extra_and_every_strategy_has_a_preload_default() -> None:
    assert resolve_strategy("auto") == "hybrid"
    assert set(PRELOAD_MIN_SCORE) == set(STRATEGIES)
    with pytest.raises(ConfigError, match="unknown skill selection 'magic'"):
        resolve_strategy("magic")


def test_without_the_extra_auto_falls_back_to_bm25(without_embeddings: None) -> None:
    with pytest.raises(EmbeddingsUnavailable, match=r"pip install 'skillweave\[embeddings\]'"):
        load_model()
    assert resolve_strategy("auto") == "bm25"
    for strategy in ("embeddings", "hybrid"):
        with pytest.raises(ConfigError, match=rf"{strategy}' needs embeddings.*pip install"):
            resolve_strategy(strategy)


def test_without_the_extra_the_library_searches_and_builds_catalogs(
    without_embeddings: None, tmp_path: Path
) -> None:
    write_skills(tmp_path)
    registry = SkillLibrary(SkillsSettings(dirs=[str(tmp_path)])).refresh()
    assert registry.selector.strategy == "bm25"
    assert registry.search("temperature units", top_k=1)[0].name == "unit-converter"
    catalog = build_catalog(registry, mode="auto", query="pivot tables in google sheets", top_k=2)
    assert catalog.names[0] == "spreadsheet-formulas"
    # Asking for embeddings without them is a configuration error, said before any search.
    with pytest.raises(ConfigError, match="needs embeddings"):
        SkillLibrary(SkillsSettings(dirs=[str(tmp_path)], selection="hybrid"))


def test_a_registry_ranks_with_its_setting_and_its_views_share_the_selector(
    tmp_path: Path,
) -> None:
    write_skills(tmp_path)
    registry = SkillLibrary(SkillsSettings(dirs=[str(tmp_path)], selection="keyword")).refresh()
    assert isinstance(registry.selector, KeywordSelector)
    view = registry.restricted(["log-triage", "csv-profiler"])
    assert view.selector is registry.selector
    assert view.selection == "keyword"
    assert [h.name for h in view.search("csv logs errors", top_k=5)] == [
        "log-triage",
        "csv-profiler",
    ]
    default = SkillRegistry(registry_skills(registry))
    assert isinstance(default.selector, HybridSelector)


def write_skills(root: Path) -> None:
    for name, description, body in SKILLS:
        folder = root / name.replace("_", "-")
        folder.mkdir()
        text = f"---\nname: {folder.name}\ndescription: {json.dumps(description)}\n---\n{body}"
        (folder / "SKILL.md").write_text(text, encoding="utf-8")


def registry_skills(registry: SkillRegistry) -> dict[str, object]:
    return {skill.name: skill for skill in registry}
