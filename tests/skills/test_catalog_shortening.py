"""Descriptions the catalog budget shortens: cut at a word boundary, and always marked, also
when what was cut is a whole sentence ("Do NOT use for …")."""

from __future__ import annotations

from pathlib import Path

from skillweave.skills.catalog import SHORTENED_MARK, _shorten, build_catalog
from skillweave.skills.discovery import SkillScanner
from skillweave.skills.registry import SkillRegistry
from tests.conftest import write_skill

PDF = (
    "Extract text and tables from PDF files, fill PDF forms and merge documents. "
    "Do NOT use for Word files or spreadsheets; use docx or xlsx instead."
)


def shortened_to(description: str, limit: int) -> str:
    """The description as the catalog shows it when every description must fit `limit`."""
    return _shorten(description, limit)


def assert_cut_at_a_word_boundary(original: str, shown: str) -> None:
    assert shown.endswith(SHORTENED_MARK)
    kept = shown.removesuffix(SHORTENED_MARK)
    assert original.startswith(kept)
    assert original[len(kept)] in " ,;:.!?-"  # the next character ends a word


def test_every_shortened_description_is_marked_and_cut_between_words() -> None:
    for limit in range(60, len(PDF)):
        shown = shortened_to(PDF, limit)
        assert len(shown) <= limit
        assert_cut_at_a_word_boundary(PDF, shown)
    assert shortened_to(PDF, len(PDF)) == PDF
    # Only a single word that runs over the last 40% of the limit (a URL) is cut inside.
    url = "https://example.com/" + "x" * 200
    shown = shortened_to(f"See {url}. Do NOT use for images.", 100)
    assert (len(shown), shown[-1], shown[:27]) == (
        100,
        SHORTENED_MARK,
        "See https://example.com/xxx",
    )


def test_a_dropped_sentence_is_marked_too() -> None:
    # The first sentence fits and the second does not: it must not vanish silently.
    shown = shortened_to(PDF, 78)
    assert shown == "Extract text and tables from PDF files, fill PDF forms and merge documents…"
    assert shortened_to(PDF, 79).endswith("merge documents. Do…")


def test_the_cut_keeps_as_much_of_the_budget_as_whole_words_allow() -> None:
    shown = shortened_to(PDF, 110)
    assert shown == (
        "Extract text and tables from PDF files, fill PDF forms and merge documents. "
        "Do NOT use for Word files or…"
    )


def test_the_catalog_marks_long_descriptions_and_keeps_short_ones_whole(tmp_path: Path) -> None:
    write_skill(tmp_path / "lib" / "short", description="Short and whole.")
    for index in range(10):
        write_skill(tmp_path / "lib" / f"long-{index}", description=PDF)
    registry = SkillRegistry.from_scan(SkillScanner([tmp_path / "lib"]).scan())
    full = build_catalog(registry, mode="all")
    # About 100 characters a description: the first sentence and part of the second.
    fitted = build_catalog(registry, mode="all", max_chars=len(full.text) - 10 * (len(PDF) - 100))
    assert fitted.shortened == 10
    assert fitted.hidden == 0
    assert '<skill name="short">Short and whole.</skill>' in fitted.text
    for line in fitted.text.splitlines():
        if line.startswith('<skill name="long-'):
            description = line.split(">", 1)[1].removesuffix("</skill>")
            assert_cut_at_a_word_boundary(PDF, description)
            assert "Do NOT use for" in description
