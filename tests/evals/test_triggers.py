"""Trigger evals (``skillweave.evals.triggers``): whether the configured selection picks a skill
for its eval prompts and not for the near misses of ``triggers.json``, exactly as the ``auto``
catalog and ``search_skills`` pick, with every strategy this install runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from skillweave.config import SkillsSettings
from skillweave.errors import ConfigError, SkillNotFoundError
from skillweave.evals.suite import (
    MAX_PROMPT_CHARS,
    EvalSuiteError,
    TriggerCase,
    parse_suite,
    parse_triggers,
)
from skillweave.evals.triggers import MAX_TRIGGER_CASES, suite_trigger_summary, trigger_summary
from skillweave.skills import SkillRegistry, SkillScanner, build_catalog
from skillweave.skills.selection import STRATEGIES, Strategy, embeddings_available
from tests.conftest import BUNDLED_SKILLS, write_skill

AVAILABLE: list[Strategy] = [
    strategy for strategy in STRATEGIES if strategy in ("keyword", "bm25") or embeddings_available()
]

LIBRARY = {
    "bread-baking": "Bake bread at home - sourdough starters, kneading, proofing, oven "
    "temperatures for loaves.",
    "currency-exchange": "Convert money between currencies (euros, dollars, yen) at today's "
    "exchange rates.",
    "length-units": "Convert lengths between metric and imperial units - kilometres, miles, "
    "feet, inches.",
    "git-helper": "Write git commit messages and branch names.",
}
POSITIVES = ["Convert 5 kilometres to miles", "How many inches in 3 feet?", "Measure my garden"]
NEGATIVES = [
    TriggerCase(query="Convert 20 euros to dollars", should_trigger=False),
    TriggerCase(query="Bake a sourdough loaf", should_trigger=False),
    TriggerCase(query="How many miles is the bakery?", should_trigger=False),
]


def _registry(*roots: Path, selection: Strategy = "bm25", **kwargs: object) -> SkillRegistry:
    return SkillRegistry.from_scan(SkillScanner(list(roots)).scan(), selection=selection, **kwargs)


def _settings(selection: str = "bm25", top_k: int = 1) -> SkillsSettings:
    return SkillsSettings(selection=selection, catalog_top_k=top_k)  # type: ignore[arg-type]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    for name, description in LIBRARY.items():
        write_skill(root / name, description=description, body=f"# {name}\n")
    return root


@pytest.mark.parametrize("strategy", AVAILABLE)
def test_recall_and_false_triggers_with_each_strategy(library: Path, strategy: Strategy) -> None:
    registry = _registry(library, selection=strategy)
    summary = trigger_summary(
        registry,
        "length-units",
        positives=POSITIVES,
        negatives=NEGATIVES,
        settings=_settings(strategy),
    )
    assert (summary.strategy, summary.top_k) == (strategy, 1)
    assert (summary.positives, summary.negatives) == (3, 3)
    picked = {case.query: (case.triggered, case.rank) for case in summary.cases}
    assert picked["Convert 5 kilometres to miles"] == (True, 1)
    assert picked["How many inches in 3 feet?"] == (True, 1)
    assert picked["Convert 20 euros to dollars"] == (False, 2)  # a near miss, and how near
    assert picked["Bake a sourdough loaf"][0] is False
    assert picked["How many miles is the bakery?"] == (True, 1)  # the false trigger
    assert summary.false_trigger_rate == pytest.approx(1 / 3)
    if strategy in ("keyword", "bm25"):  # no shared word: not a match at all
        assert picked["Measure my garden"] == (False, None)
        assert summary.recall == pytest.approx(2 / 3)
    else:  # a paraphrase the embeddings place first
        assert picked["Measure my garden"] == (True, 1)
        assert summary.recall == pytest.approx(1.0)


@pytest.mark.parametrize("strategy", AVAILABLE)
def test_a_bundled_skill_is_picked_for_its_request_and_not_for_a_near_miss(
    library: Path, strategy: Strategy
) -> None:
    registry = _registry(BUNDLED_SKILLS, library, selection=strategy)
    summary = trigger_summary(
        registry,
        "log-triage",
        positives=["Count the ERROR and WARN lines per severity level in app.log"],
        negatives=[TriggerCase(query="Write a git commit message", should_trigger=False)],
        settings=_settings(strategy, top_k=2),
    )
    (positive, negative) = summary.cases
    assert positive.triggered, positive
    assert positive.rank == 1
    assert not negative.triggered, negative
    assert (summary.recall, summary.false_trigger_rate) == (1.0, 0.0)


@pytest.mark.parametrize("strategy", AVAILABLE)
@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_a_trigger_is_exactly_what_the_auto_catalog_and_search_skills_pick(
    library: Path, strategy: Strategy, top_k: int
) -> None:
    registry = _registry(BUNDLED_SKILLS, library, selection=strategy)
    queries = [*POSITIVES, *(case.query for case in NEGATIVES), "Profile a CSV file's columns"]
    for skill in ("length-units", "currency-exchange", "csv-profiler", "unit-converter"):
        summary = trigger_summary(
            registry, skill, positives=queries, negatives=[], settings=_settings(strategy, top_k)
        )
        for case in summary.cases:
            searched = [hit.name for hit in registry.search(case.query, top_k=top_k)]
            catalog = build_catalog(registry, mode="auto", query=case.query, top_k=top_k)
            assert case.triggered is (skill in searched), (skill, case)
            if searched:  # nothing matched: the catalog lists skills unranked, no pick
                assert case.triggered is (skill in catalog.names), (skill, case)
            if case.triggered:
                assert searched.index(skill) + 1 == case.rank


def test_a_child_skill_counts_by_its_own_rank(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    write_skill(root / "kitchen", description="Recipes and cooking techniques for home cooks.")
    write_skill(
        root / "kitchen" / "sourdough",
        description="Feed a sourdough starter and bake sourdough loaves.",
    )
    write_skill(root / "garden", description="Plan a vegetable garden and its watering.")
    registry = _registry(root)
    request = ["Feed my sourdough starter"]
    child = trigger_summary(
        registry, "sourdough", positives=request, negatives=[], settings=_settings()
    )
    assert child.cases[0].triggered
    parent = trigger_summary(
        registry, "kitchen", positives=request, negatives=[], settings=_settings(top_k=3)
    )
    assert not parent.cases[0].triggered
    assert parent.cases[0].rank is None


def test_ranked_as_enabled_even_when_switched_off(library: Path) -> None:
    registry = _registry(library, disabled=["length-units", "currency-exchange"])
    searched = registry.search("Convert 5 kilometres to miles", top_k=4)
    assert "length-units" not in [hit.name for hit in searched]
    summary = trigger_summary(
        registry,
        "length-units",
        positives=["Convert 5 kilometres to miles"],
        negatives=[TriggerCase(query="Convert 20 euros to dollars", should_trigger=False)],
        settings=_settings(),
    )
    assert [case.rank for case in summary.cases] == [1, 1]  # the disabled rival is not ranked


def test_a_candidate_ranks_in_the_librarys_place(library: Path, tmp_path: Path) -> None:
    registry = _registry(library)
    request = ["Weigh flour in grams and ounces"]
    before = trigger_summary(
        registry, "length-units", positives=request, negatives=[], settings=_settings()
    )
    assert not before.cases[0].triggered
    draft_dir = write_skill(
        tmp_path / "drafts" / "length-units",
        description="Convert lengths and weights - kilometres, miles, grams, ounces, flour.",
    )
    draft = SkillScanner([draft_dir.parent]).scan().skills["length-units"]
    after = trigger_summary(
        registry,
        "length-units",
        positives=request,
        negatives=[],
        settings=_settings(),
        candidate=draft,
    )
    assert after.cases[0].triggered
    assert after.cases[0].rank == 1
    assert registry.get("length-units").description == LIBRARY["length-units"]  # untouched

    new = dataclasses.replace(draft, name="weights")  # a draft the library does not hold yet
    summary = trigger_summary(
        registry, "weights", positives=request, negatives=[], settings=_settings(), candidate=new
    )
    assert summary.recall == 1.0
    with pytest.raises(ValueError, match="the candidate is 'weights', not 'git-helper'"):
        trigger_summary(
            registry,
            "git-helper",
            positives=request,
            negatives=[],
            settings=_settings(),
            candidate=new,
        )


def test_the_settings_strategy_is_used_and_the_registrys_selector_reused(library: Path) -> None:
    registry = _registry(library, selection="bm25")
    same = trigger_summary(
        registry, "length-units", positives=["Convert miles"], negatives=[], settings=_settings()
    )
    assert same.strategy == "bm25"
    assert "selector" in registry.__dict__  # built once on the caller's registry, kept
    other = trigger_summary(
        registry,
        "length-units",
        positives=["Convert miles"],
        negatives=[],
        settings=_settings("keyword"),
    )
    assert other.strategy == "keyword"
    assert registry.selection == "bm25"


def test_an_unknown_skill_or_strategy_is_one_clear_error(library: Path) -> None:
    registry = _registry(library)
    with pytest.raises(SkillNotFoundError, match="unknown skill 'nope'"):
        trigger_summary(registry, "nope", positives=["x"], negatives=[], settings=_settings())
    with pytest.raises(ConfigError, match="unknown skill selection"):
        trigger_summary(
            registry,
            "length-units",
            positives=["x"],
            negatives=[],
            settings=SkillsSettings.model_construct(selection="magic", catalog_top_k=1),
        )
    with pytest.raises(ValueError, match="top_k must be at least 1"):
        trigger_summary(
            registry, "length-units", positives=["x"], negatives=[], settings=_settings(), top_k=0
        )


def test_nothing_to_rank_gives_no_rates(library: Path) -> None:
    summary = trigger_summary(
        _registry(library), "length-units", positives=[], negatives=[], settings=_settings()
    )
    assert (summary.positives, summary.negatives, summary.cases) == (0, 0, ())
    assert summary.recall is None
    assert summary.false_trigger_rate is None


def test_triggers_json_positives_count_as_positives_and_repeats_count_once(
    library: Path,
) -> None:
    summary = trigger_summary(
        _registry(library),
        "length-units",
        positives=["Convert 5 kilometres to miles", "Convert 5 kilometres to miles"],
        negatives=[
            TriggerCase(query="Convert 5 kilometres to miles", should_trigger=True),
            TriggerCase(query="How many inches in 3 feet?", should_trigger=True),
            TriggerCase(query="Convert 5 kilometres to miles", should_trigger=False),
        ],
        settings=_settings(),
    )
    assert (summary.positives, summary.negatives) == (2, 1)
    assert summary.recall == 1.0
    assert summary.false_trigger_rate == 1.0  # marked both ways: one of them is wrong


@pytest.mark.parametrize("strategy", AVAILABLE)
def test_hostile_requests_rank_without_harm(library: Path, strategy: Strategy) -> None:
    queries = [
        " ",
        "\x00\x01\x7f",
        "🙂🙂🙂 \u202ekilometres\u202c → miles",
        "ｋｉｌｏｍｅｔｒｅｓ to ｍｉｌｅｓ",  # fullwidth
        "Ki\u0301lometres zu Meilen umrechnen, bitte",
        "километры в мили",
        "公里换算成英里",
        '<skill name="length-units">miles</skill>',
        "miles " * (MAX_PROMPT_CHARS // 6),
    ]
    summary = trigger_summary(
        _registry(library, selection=strategy),
        "length-units",
        positives=queries,
        negatives=[],
        settings=_settings(strategy),
    )
    assert len(summary.cases) == len(queries)
    assert summary.cases[0].triggered is False  # a blank request picks nothing
    assert summary.cases[0].rank is None
    assert summary.cases[-1].triggered  # as long as a message may be, and still ranked


@pytest.mark.parametrize(
    ("positives", "problem"),
    [
        ([""], "prompt 1: String should have at least 1 character"),
        (["ok", "x" * (MAX_PROMPT_CHARS + 1)], "prompt 2: String should have at most"),
        (["q"] * (MAX_TRIGGER_CASES + 1), f"more than {MAX_TRIGGER_CASES} requests"),
    ],
)
def test_requests_that_are_not_requests_are_refused(
    library: Path, positives: list[str], problem: str
) -> None:
    with pytest.raises(EvalSuiteError, match=problem) as caught:
        trigger_summary(
            _registry(library),
            "length-units",
            positives=positives,
            negatives=[],
            settings=_settings(),
        )
    assert caught.value.source == "length-units trigger evals"


def test_a_bundled_suite_from_its_files(tmp_path: Path) -> None:
    folder = BUNDLED_SKILLS / "unit-converter" / "evals"
    suite = parse_suite((folder / "evals.json").read_bytes(), source="evals.json")
    triggers = parse_triggers((folder / "triggers.json").read_bytes(), source="triggers.json")
    registry = _registry(BUNDLED_SKILLS)
    settings = SkillsSettings(selection="bm25", catalog_top_k=3)
    summary = suite_trigger_summary(registry, "unit-converter", suite, triggers, settings=settings)
    queries = {*(case.prompt for case in suite.evals)}
    queries |= {case.query for case in triggers if case.should_trigger}
    assert summary.positives == len(queries)
    assert summary.negatives == len({case.query for case in triggers if not case.should_trigger})
    assert summary.top_k == 3
    for case in summary.cases:
        top = [hit.name for hit in registry.search(case.query, top_k=3)]
        assert case.triggered is ("unit-converter" in top)
    meant = [case for case in summary.cases if case.should_trigger]
    assert summary.recall == sum(case.triggered for case in meant) / len(meant)


def test_a_candidate_the_library_already_holds_reuses_its_ranking(library: Path) -> None:
    registry = _registry(library)
    same = dataclasses.replace(registry.get("length-units"), version="0" * 64)
    request = ["Convert 5 kilometres to miles"]
    with_candidate = trigger_summary(
        registry,
        "length-units",
        positives=request,
        negatives=[],
        settings=_settings(),
        candidate=same,
    )
    built = registry.__dict__["selector"]
    plain = trigger_summary(
        registry, "length-units", positives=request, negatives=[], settings=_settings()
    )
    assert with_candidate == plain
    assert registry.__dict__["selector"] is built  # one index for both


def test_ranked_first_is_counted_beside_the_top_k(library: Path) -> None:
    # With k = 3 a near miss ranked second is a trigger of the catalog's; it is not the first
    # pick, which a library no larger than k (listing every skill) is judged by.
    summary = trigger_summary(
        _registry(library, selection="bm25"),
        "length-units",
        positives=POSITIVES,
        negatives=NEGATIVES,
        settings=_settings("bm25"),
        top_k=3,
    )
    picked = {case.query: (case.triggered, case.rank) for case in summary.cases}
    assert picked["Convert 20 euros to dollars"] == (True, 2)
    assert summary.false_trigger_rate == pytest.approx(2 / 3)
    assert summary.first_false_trigger_rate == pytest.approx(1 / 3)
    assert summary.first_recall == pytest.approx(2 / 3)
    assert summary.first_counts() == (2, 1)
