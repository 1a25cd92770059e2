from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.skills.catalog import (
    CATALOG_PREAMBLE,
    MIN_DESCRIPTION_CHARS,
    build_catalog,
    render_catalog,
)
from skillweave.skills.discovery import SkillScanner
from skillweave.skills.registry import SkillRegistry
from tests.conftest import MakeSkill, write_skill


def registry_of(root: Path, *, disabled: tuple[str, ...] = ()) -> SkillRegistry:
    return SkillRegistry.from_scan(SkillScanner([root]).scan(), disabled=disabled)


@pytest.fixture
def tree(tmp_path: Path, make_skill: MakeSkill) -> Path:
    make_skill("data-kit", description="Tools for tabular data: CSV profiling and reports.")
    make_skill("data-kit/csv-profiler", description="Profile CSV columns into statistics.")
    make_skill("data-kit/json-report", description="Turn statistics JSON into a Markdown report.")
    make_skill("data-kit/csv-cleaner", description="Clean CSV files: strip, dedupe rows.")
    make_skill("unit-converter", description="Convert units of length, mass and temperature.")
    make_skill(
        "off", description="A disabled skill about invoices.", extra='metadata:\n  enabled: "false"'
    )
    return tmp_path / "lib"


def test_empty_catalog_is_omitted_entirely(tmp_path: Path) -> None:
    empty = registry_of(tmp_path)
    catalog = build_catalog(empty, mode="all")
    assert catalog.text == ""
    assert catalog.names == ()
    assert render_catalog([]) == ""


def test_catalog_lists_roots_only_with_sub_skill_counts(tree: Path) -> None:
    catalog = build_catalog(registry_of(tree), mode="all")
    assert catalog.names == ("data-kit", "off", "unit-converter")
    assert catalog.text.startswith(CATALOG_PREAMBLE + "\n<available_skills>\n")
    assert catalog.text.endswith("</available_skills>\n")
    assert '<skill name="data-kit" sub_skills="3">Tools for tabular data' in catalog.text
    assert "csv-profiler" not in catalog.text


def test_exact_entry_format(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("solo", description="Only skill.")
    assert build_catalog(registry_of(tmp_path / "lib"), mode="all").text == (
        f"{CATALOG_PREAMBLE}\n"
        "<available_skills>\n"
        '<skill name="solo">Only skill.</skill>\n'
        "</available_skills>\n"
    )


def test_catalog_escapes_xml(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("esc", description="'Use <b>bold</b> & </description><skill>injected</skill>'")
    text = build_catalog(registry_of(tmp_path / "lib"), mode="all").text
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;/description&gt;&lt;skill&gt;injected" in text
    assert text.count("<skill ") == 1
    assert text.count("</skill>") == 1


def test_enabled_mode_hides_disabled_skills(tree: Path) -> None:
    assert build_catalog(registry_of(tree), mode="enabled").names == ("data-kit", "unit-converter")
    by_config = registry_of(tree, disabled=("unit-converter",))
    assert build_catalog(by_config, mode="enabled").names == ("data-kit",)
    assert "unit-converter" in build_catalog(by_config, mode="all").names


def test_auto_mode_ranks_any_level_and_points_to_search(tree: Path) -> None:
    registry = registry_of(tree)
    catalog = build_catalog(registry, mode="auto", query="profile the columns of a csv", top_k=2)
    assert catalog.names[0] == "csv-profiler"
    assert len(catalog.names) <= 2
    assert catalog.hidden == 5 - len(catalog.names)
    assert "call search_skills" in catalog.text
    assert "off" not in catalog.names


def test_auto_mode_without_query_lists_enabled_roots(tree: Path) -> None:
    catalog = build_catalog(registry_of(tree), mode="auto", top_k=1)
    assert catalog.names == ("data-kit",)
    assert catalog.hidden == 4
    assert "4 more skills are not listed" in catalog.text


def test_names_are_escaped_as_attributes(tmp_path: Path) -> None:
    folder = tmp_path / "lib" / "odd"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: 'a\"b<c'\ndescription: Odd name.\n---\n")
    text = build_catalog(registry_of(tmp_path / "lib"), mode="all").text
    assert "<skill name='a\"b&lt;c'>Odd name.</skill>" in text


# --- the character budget ----------------------------------------------------------------


def wide_library(root: Path, count: int, words: int = 60) -> SkillRegistry:
    for index in range(count):
        description = " ".join(f"word{index}x{n}" for n in range(words)) + "."
        write_skill(root / f"skill-{index:03d}", description=description)
    return registry_of(root)


def test_budget_is_not_applied_when_the_catalog_fits(tree: Path) -> None:
    unbudgeted = build_catalog(registry_of(tree), mode="all")
    budgeted = build_catalog(registry_of(tree), mode="all", max_chars=len(unbudgeted.text))
    assert budgeted == unbudgeted
    assert budgeted.shortened == 0


def test_budget_shortens_long_descriptions_evenly(tmp_path: Path) -> None:
    registry = wide_library(tmp_path / "lib", 20)
    write_skill(tmp_path / "lib" / "short-one", description="Short and whole.")
    registry = registry_of(tmp_path / "lib")
    full = build_catalog(registry, mode="all")
    fitted = build_catalog(registry, mode="all", max_chars=len(full.text) // 2)
    assert len(fitted.text) <= len(full.text) // 2
    assert fitted.names == full.names
    assert fitted.hidden == 0
    assert fitted.shortened == 20
    assert '<skill name="short-one">Short and whole.</skill>' in fitted.text
    lengths = {
        len(line) for line in fitted.text.splitlines() if line.startswith('<skill name="skill-')
    }
    assert max(lengths) - min(lengths) <= 12  # one common cut, at word boundaries
    assert "…</skill>" in fitted.text


def test_budget_folds_entries_behind_search_when_shortening_is_not_enough(
    tmp_path: Path,
) -> None:
    registry = wide_library(tmp_path / "lib", 60)
    fitted = build_catalog(registry, mode="all", max_chars=3000)
    assert len(fitted.text) <= 3000
    assert 0 < len(fitted.names) < 60
    assert fitted.hidden == 60 - len(fitted.names)
    assert fitted.names == registry.names[: len(fitted.names)]
    assert f"{fitted.hidden} more skills are not listed; call search_skills" in fitted.text
    for line in fitted.text.splitlines():
        if line.startswith("<skill "):
            description = line.split(">", 1)[1].removesuffix("</skill>")
            # cut at a word boundary within the last 40% of the minimum length
            assert len(description) >= MIN_DESCRIPTION_CHARS * 0.6


def test_a_tiny_budget_lists_nothing_but_still_points_to_search(tmp_path: Path) -> None:
    registry = wide_library(tmp_path / "lib", 5)
    fitted = build_catalog(registry, mode="all", max_chars=50)
    assert fitted.names == ()
    assert fitted.hidden == 5
    assert "call search_skills" in fitted.text
