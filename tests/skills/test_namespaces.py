"""Namespaces (issue 25): a folder without a SKILL.md between a library root and a skill.

A skill keeps its own name while it is unique and answers to ``ns.name`` too; same-named
skills in different namespaces are all kept, each under its qualified name; ``ns.*`` scopes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.errors import SkillNotFoundError
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.skills.names import UPLOADED_ROOT_MARKER
from tests.conftest import write_skill

LIBRARY = Path(__file__).parents[1] / "data" / "compat" / "namespaces"


def scan(*roots: Path, disabled: tuple[str, ...] = ()) -> SkillRegistry:
    return SkillRegistry.from_scan(SkillScanner(list(roots)).scan(), disabled=disabled)


def test_unique_names_stay_and_answer_to_their_qualified_names_too() -> None:
    registry = scan(LIBRARY)
    scraper = registry.get("scraper")
    assert (scraper.name, scraper.namespace, scraper.qualified_name) == (
        "scraper",
        "web",
        "web.scraper",
    )
    assert registry.get("web.scraper") is scraper
    assert registry.canonical("web.scraper") == "scraper"
    notes = registry.get("notes")
    assert (notes.namespace, notes.qualified_name) == ("", "notes")


def test_same_named_skills_in_different_namespaces_are_all_kept_by_qualified_name() -> None:
    registry = scan(LIBRARY)
    assert sorted(registry.names) == [
        "fetcher",
        "formats.csv.parser",
        "formats.pdf.parser",
        "notes",
        "scraper",
    ]
    pdf = registry.get("formats.pdf.parser")
    assert (pdf.short_name, pdf.namespace, pdf.qualified_name) == (
        "parser",
        "formats.pdf",
        "formats.pdf.parser",
    )
    assert pdf.path == LIBRARY / "formats" / "pdf" / "parser"
    with pytest.raises(SkillNotFoundError):
        registry.get("parser")  # ambiguous: no skill answers to it
    assert not [d for d in registry.diagnostics if d.field == "name"]


def test_a_namespace_scope_names_every_skill_in_it_and_below() -> None:
    registry = scan(LIBRARY)
    assert sorted(registry.resolve("web.*")) == ["fetcher", "scraper"]
    assert sorted(registry.resolve("formats.*")) == ["formats.csv.parser", "formats.pdf.parser"]
    assert registry.resolve("formats.pdf.*") == ("formats.pdf.parser",)
    assert registry.resolve("nowhere.*") == ()
    assert registry.resolve("web.scraper") == ("scraper",)

    view = registry.restricted(["web.*", "formats.pdf.parser"])
    enabled = sorted(s.name for s in view if view.is_enabled(s.name))
    assert enabled == ["fetcher", "formats.pdf.parser", "scraper"]
    with pytest.raises(SkillNotFoundError, match="nowhere"):
        registry.restricted(["nowhere.*"])


def test_disabling_by_qualified_name_or_scope() -> None:
    registry = scan(LIBRARY, disabled=("web.scraper", "formats.*"))
    assert [s.name for s in registry if registry.is_enabled(s.name)] == ["notes", "fetcher"]


def test_a_child_skill_is_in_its_trees_namespace(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    write_skill(root / "tools" / "kit", description="A kit.")
    write_skill(root / "tools" / "kit" / "part", description="A part.")
    registry = scan(root)
    part = registry.get("part")
    assert (part.parent, part.namespace) == ("kit", "tools")
    assert registry.get("tools.part") is part


def test_same_namespace_same_name_across_roots_is_still_an_override(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write_skill(first / "web" / "scraper", description="Old.")
    write_skill(second / "web" / "scraper", description="New.")
    write_skill(second / "other" / "scraper", description="Elsewhere.")
    registry = scan(first, second)
    assert registry.get("web.scraper").description == "New."
    assert registry.get("other.scraper").description == "Elsewhere."
    assert [d.message for d in registry.diagnostics if d.field == "name"] == [
        f"skill 'scraper' overrides the one in {first}"
    ]


def test_an_upload_never_takes_a_name_a_directory_skill_has_in_any_namespace(
    tmp_path: Path,
) -> None:
    directory, uploads = tmp_path / "dir", tmp_path / "uploads"
    write_skill(directory / "web" / "scraper", description="The directory's.")
    write_skill(uploads / "scraper", description="An upload.")
    (uploads / UPLOADED_ROOT_MARKER).write_text("")
    registry = scan(directory, uploads)
    # The directory skill keeps its plain name; the upload is not served beside it.
    assert registry.names == ("scraper",)
    assert registry.get("scraper").description == "The directory's."
    (refused,) = [d for d in registry.diagnostics if d.field == "name"]
    assert "may not shadow it" in refused.message
