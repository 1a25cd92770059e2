"""Tests for skill ranking: what a skill is indexed by and how queries rank skills."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from skillweave.skills.relevance import RelevanceIndex, SearchHit, skill_document

# name, description, body: the kind of skills a library holds.
SKILLS: list[tuple[str, str, str]] = [
    (
        "csv-profiler",
        "Profile a CSV file: column types, null counts, distinct values and summary statistics.",
        "# CSV profiler\n\nRun the script on the file.\n\n## Handling encodings\n\n"
        "Latin-1 files are common. The quokka is not a csv concern.\n\n"
        "```bash\n# frobnicate the dataframe first\npython profile.py data.csv\n```\n",
    ),
    (
        "pdf_extraction",
        "Extract text and tables from PDF documents, including scanned pages via OCR.",
        "# PDF extraction\n\n## Tables\n\nUse the table extractor.\n\n## Scanned pages\n",
    ),
    (
        "unit-converter",
        "Convert between units of measurement: length, mass, temperature and volume.",
        "# Unit conversion\n\n## Temperature\n\nCelsius to Fahrenheit.\n",
    ),
    (
        "git-commit-messages",
        "Write clear git commit messages following the conventional commits format.",
        "# Commit messages\n\n## Subject line\n\nImperative mood, 50 characters.\n",
    ),
    (
        "http-api-guidelines",
        "Design HTTP APIs: resource naming, status codes, pagination, rate limits and errors.",
        "# HTTP API guidelines\n\n## Status codes\n\nUse 429 Too Many Requests.\n\n## Pagination\n",
    ),
    (
        "log-triage",
        "Triage application logs: find errors, group stack traces and spot anomalies.",
        "# Log triage\n\n## Grouping stack traces\n\n## Timelines\n",
    ),
    (
        "image-resizer",
        "Resize, crop and convert images between PNG, JPEG and WebP formats.",
        "# Image resizing\n\n## Aspect ratio\n\nKeep it unless told otherwise.\n",
    ),
    (
        "spreadsheet-formulas",
        "Write spreadsheet formulas for Excel and Google Sheets: lookups, pivots, conditionals.",
        "# Spreadsheet formulas\n\n## VLOOKUP and XLOOKUP\n",
    ),
]


@pytest.fixture(scope="module")
def index() -> RelevanceIndex:
    return RelevanceIndex([(name, skill_document(name, d, body)) for name, d, body in SKILLS])


def _top(index: RelevanceIndex, query: str, **kwargs: object) -> str | None:
    hits = index.search(query, **kwargs)  # type: ignore[arg-type]
    return hits[0].name if hits else None


def test_skill_document_is_name_twice_description_and_headings_only() -> None:
    body = (
        "# Title\n\nBody prose is left out.\n\n"
        "   ## Indented heading ##\n"
        "```python\n# a comment, not a heading\n```\n"
        "~~~~\n# also code\n~~~\n~~~~\n"
        "#### Deep heading\n"
        "    # indented code, not a heading\n"
    )

    document = skill_document("csv_profiler-pro", "Profiles CSV files.", body)

    assert document.splitlines() == [
        "csv profiler pro",
        "csv profiler pro",
        "Profiles CSV files.",
        "Title",
        "Indented heading",
        "Deep heading",
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("summarize the columns of this csv file", "csv-profiler"),
        ("what status code for rate limiting", "http-api-guidelines"),
        ("pull the tables out of a scanned pdf", "pdf_extraction"),
        ("how do I write a good commit message", "git-commit-messages"),
        ("resize this photo for the web", "image-resizer"),
        ("group the stack traces in these logs", "log-triage"),
        ("xlookup across two sheets", "spreadsheet-formulas"),
        ("how many kilograms is 12 pounds, mass conversion", "unit-converter"),
    ],
)
def test_realistic_queries_rank_the_right_skill_first(
    index: RelevanceIndex, query: str, expected: str
) -> None:
    assert _top(index, query) == expected


def test_stemming_matches_inflected_forms(index: RelevanceIndex) -> None:
    hits = index.search("converting temperatures", top_k=8)

    assert hits[0].name == "unit-converter"
    # "Convert ... images" in the image skill's description also matches "converting".
    assert "image-resizer" in [hit.name for hit in hits]


def test_a_body_heading_is_indexed_but_body_text_and_code_are_not(index: RelevanceIndex) -> None:
    assert _top(index, "encodings") == "csv-profiler"
    assert _top(index, "aspect ratio") == "image-resizer"
    assert index.search("quokka") == []
    assert index.search("frobnicate") == []


def test_name_words_are_indexed_with_separators_split(index: RelevanceIndex) -> None:
    assert _top(index, "extraction") == "pdf_extraction"
    assert _top(index, "profiler") == "csv-profiler"


def test_hits_are_best_first_with_positive_scores(index: RelevanceIndex) -> None:
    hits = index.search("convert csv images and pdf tables", top_k=8)

    assert len(hits) >= 3
    assert all(isinstance(hit, SearchHit) and hit.score > 0 for hit in hits)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert {hit.name: hit.score for hit in hits} == index.scores(
        "convert csv images and pdf tables"
    )


def test_allowed_restricts_hits_to_a_subset(index: RelevanceIndex) -> None:
    query = "summarize the columns of this csv file"

    hits = index.search(query, allowed={"spreadsheet-formulas", "http-api-guidelines"})

    assert "csv-profiler" not in [hit.name for hit in hits]
    assert index.search(query, allowed=[]) == []
    assert index.search(query, allowed=["not-a-skill"]) == []
    assert _top(index, query, allowed=("csv-profiler", "not-a-skill")) == "csv-profiler"


def test_top_k_caps_the_number_of_hits(index: RelevanceIndex) -> None:
    query = "convert csv images and pdf tables"
    everything = index.search(query, top_k=100)

    assert len(everything) > 2
    assert index.search(query, top_k=2) == everything[:2]
    assert index.search(query, top_k=0) == []
    with pytest.raises(ValueError, match="top_k"):
        index.search(query, top_k=-1)


def test_min_score_drops_weak_hits(index: RelevanceIndex) -> None:
    query = "convert csv images and pdf tables"
    everything = index.search(query, top_k=100)
    cut = everything[1].score

    strong = index.search(query, top_k=100, min_score=cut)

    assert strong == [hit for hit in everything if hit.score > cut]
    assert index.search(query, min_score=everything[0].score) == []


@pytest.mark.parametrize("query", ["", "   \n\t", "the of and what is", "zyxxy qwertz"])
def test_queries_without_known_terms_find_nothing(index: RelevanceIndex, query: str) -> None:
    assert index.search(query) == []
    assert index.scores(query) == {}


def test_duplicate_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="csv-profiler"):
        RelevanceIndex([("csv-profiler", "a"), ("pdf", "b"), ("csv-profiler", "c")])


def test_equal_scores_are_ordered_by_name_whatever_the_input_order() -> None:
    names = ["zeta", "alpha", "mike", "bravo"]
    reversed_index = RelevanceIndex([(name, "shared words") for name in reversed(names)])
    index = RelevanceIndex([(name, "shared words") for name in names])

    for candidate in (index, reversed_index):
        assert [hit.name for hit in candidate.search("shared")] == sorted(names)
        # The cut falls inside the tie: the names decide who stays, not the partition.
        assert [hit.name for hit in candidate.search("shared", top_k=2)] == ["alpha", "bravo"]
        assert candidate.names == ("alpha", "bravo", "mike", "zeta")


def test_single_document_index() -> None:
    index = RelevanceIndex([("unit-converter", "Converting units of measurement")])

    assert len(index) == 1
    [hit] = index.search("convert miles")
    assert hit.name == "unit-converter"
    assert hit.score > 0
    assert index.search("miles") == []


def test_empty_indexes_find_nothing() -> None:
    assert len(RelevanceIndex([])) == 0
    assert RelevanceIndex([]).search("csv") == []
    # Documents that analyse to no term at all (stopwords, punctuation) still build.
    blank = RelevanceIndex([("a", ""), ("b", "the of - !")])
    assert blank.names == ("a", "b")
    assert blank.search("the csv") == []


def test_documents_without_terms_coexist_with_others() -> None:
    index = RelevanceIndex([("empty", ""), ("csv", "csv profiling")])

    assert [hit.name for hit in index.search("csv profiling")] == ["csv"]


def test_index_builds_and_searches_silently(capsys: pytest.CaptureFixture[str]) -> None:
    index = RelevanceIndex([(name, skill_document(name, d, body)) for name, d, body in SKILLS])
    index.search("csv columns")

    assert capsys.readouterr() == ("", "")


def test_concurrent_searches_agree(index: RelevanceIndex) -> None:
    queries = ["csv columns", "rate limiting status", "resize images", "commit message"] * 25
    expected = [index.search(query) for query in queries]

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(index.search, queries)) == expected


def _marker(i: int) -> str:
    """A word unique to document `i`, letters only so splitting and stemming keep it whole."""
    letters = "bcdfghjklmnpqrtvwxz"
    digits = []
    while True:
        i, r = divmod(i, len(letters))
        digits.append(letters[r])
        if i == 0:
            break
    return "qz" + "".join(digits) + "o"


def test_a_thousand_document_index_finds_the_right_skills() -> None:
    rng = random.Random(20240611)
    filler = [f"{stem}{tail}" for stem in ("data", "file", "text", "task") for tail in "abcdefgh"]
    documents = []
    for i in range(1000):
        name = f"generated-skill-{i:04d}"
        words = [*rng.choices(filler, k=36), _marker(i)]
        if i % 100 == 7:
            words += ["telemetry", "telemetry"]
        documents.append((name, skill_document(name, " ".join(words), "")))

    index = RelevanceIndex(documents)

    assert len(index) == 1000
    for i in (0, 1, 499, 998, 999):
        hits = index.search(f"where is {_marker(i)} used")
        assert [hit.name for hit in hits] == [f"generated-skill-{i:04d}"]
    telemetry = index.search("telemetry", top_k=20)
    assert [hit.name for hit in telemetry] == [
        f"generated-skill-{i:04d}" for i in range(7, 1000, 100)
    ]
    # A name word matches every document; top_k keeps only the best, best first.
    common = index.search("generated datad texte", top_k=10)
    assert len(common) == 10
    assert [hit.score for hit in common] == sorted((hit.score for hit in common), reverse=True)
    allowed = {f"generated-skill-{i:04d}" for i in range(0, 1000, 3)}
    assert {hit.name for hit in index.search("generated", top_k=1000, allowed=allowed)} == allowed
