"""Names are owned (DESIGN §8) in a scan: compared NFKC-normalized and case-folded, directory
roots keep their documented precedence among themselves, and a root of uploaded skills (the
folder ``StoredSkills.materialize`` writes) never shadows a directory skill nor another upload's
top, at any depth."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.skills import (
    UPLOADED_ROOT_MARKER,
    SkillOwner,
    SkillRegistry,
    SkillScanner,
    name_key,
)
from tests.conftest import write_skill


def uploaded_root(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / UPLOADED_ROOT_MARKER).touch()
    return path


def registry_of(*roots: Path) -> SkillRegistry:
    return SkillRegistry.from_scan(SkillScanner(list(roots)).scan())


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("PDF", "pdf"),
        ("Csv-Cleaner", "csv-cleaner"),
        ("ＣＳＶ-ｃｌｅａｎｅｒ", "csv-cleaner"),  # fullwidth letters and hyphen-minus
        ("straße", "STRASSE"),  # full case folding, not lower()
        ("ﬁle", "file"),  # a compatibility ligature
    ],
)
def test_names_are_compared_normalized_and_folded(one: str, other: str) -> None:
    assert name_key(one) == name_key(other)
    assert name_key(name_key(one)) == name_key(one)


def test_distinct_names_stay_distinct() -> None:
    assert name_key("csv-cleaner") != name_key("csv-cleaners")
    assert name_key("a-b") != name_key("a_b")


def test_an_uploaded_child_never_replaces_a_directory_skill(tmp_path: Path) -> None:
    """The review's example at the scan: before, the uploaded root (last) overrode it."""
    library = tmp_path / "library"
    cleaner = write_skill(library / "csv-cleaner", files={"scripts/clean.py": "print(1)\n"})
    uploaded = uploaded_root(tmp_path / "uploaded")
    kit = write_skill(uploaded / "report-kit")
    write_skill(kit / "csv-cleaner", files={"scripts/clean.py": "print('taken')\n"})
    write_skill(kit / "stage" / "deeper" / "csv-cleaner")  # a grandchild too

    result = SkillScanner([library, uploaded]).scan()
    registry = SkillRegistry.from_scan(result)
    assert registry.get("csv-cleaner").path == cleaner.absolute()
    assert registry.owner_of("csv-cleaner") == SkillOwner("directory", str(library.absolute()))
    assert registry.owner_of("report-kit") == SkillOwner("uploaded", "report-kit")
    assert registry.get("report-kit").children == ()
    ignored = [d for d in result.diagnostics if "may not shadow" in d.message]
    assert len(ignored) == 2
    assert all("report-kit" in d.path for d in ignored)


def test_an_uploaded_root_has_no_precedence_wherever_it_is_listed(tmp_path: Path) -> None:
    uploaded = uploaded_root(tmp_path / "uploaded")
    write_skill(uploaded / "shared")
    library = tmp_path / "library"
    kept = write_skill(library / "shared")
    registry = registry_of(uploaded, library)
    assert registry.get("shared").path == kept.absolute()
    assert registry.owner_of("shared").kind == "directory"


@pytest.mark.parametrize("spelled", ["Csv-Cleaner", "ＣＳＶ-cleaner"])
def test_a_folded_clash_goes_to_the_directory_skill(tmp_path: Path, spelled: str) -> None:
    library = tmp_path / "library"
    write_skill(library / "third-party", name=spelled)
    uploaded = uploaded_root(tmp_path / "uploaded")
    write_skill(write_skill(uploaded / "kit") / "csv-cleaner")
    registry = registry_of(library, uploaded)
    assert spelled in registry
    assert "csv-cleaner" not in registry
    assert registry.claimant("csv-cleaner") is registry.get(spelled)


def test_an_uploads_top_owns_its_name_over_another_uploads_child(tmp_path: Path) -> None:
    """Walk order would meet 'aaa/zzz' before 'zzz'; the top still keeps its name."""
    uploaded = uploaded_root(tmp_path / "uploaded")
    write_skill(write_skill(uploaded / "aaa") / "zzz", body="# the child\n")
    write_skill(uploaded / "zzz", body="# the top\n")
    write_skill(write_skill(uploaded / "bbb") / "zzz", body="# another child\n")
    registry = registry_of(uploaded)
    assert registry.owner_of("zzz") == SkillOwner("uploaded", "zzz")
    assert registry.get("zzz").body.startswith("# the top")
    assert registry.get("aaa").children == ()


def test_directory_roots_keep_their_precedence_by_folded_name(tmp_path: Path) -> None:
    """DESIGN §3 between directories: the later root wins, with a warning; within a root the
    first in walk order does. 'PDF' and 'pdf' are one name."""
    early = tmp_path / "early"
    write_skill(early / "pdf-a", name="pdf")
    late = tmp_path / "late"
    chosen = write_skill(late / "pdf-b", name="PDF")
    result = SkillScanner([early, late]).scan()
    registry = SkillRegistry.from_scan(result)
    assert registry.names == ("PDF",)
    assert registry.get("PDF").path == chosen.absolute()
    assert any("overrides" in d.message for d in result.diagnostics)

    one = tmp_path / "one"
    first = write_skill(one / "a", name="Tool")
    write_skill(one / "b", name="tool")
    result = SkillScanner([one]).scan()
    assert [s.path for s in result.skills.values()] == [first.absolute()]
    assert any("duplicate" in d.message for d in result.diagnostics)


def test_a_marker_added_later_takes_effect_on_rescan(tmp_path: Path) -> None:
    library = tmp_path / "library"
    write_skill(library / "shared", body="# directory\n")
    other = tmp_path / "other"
    write_skill(other / "shared", body="# other\n")
    scanner = SkillScanner([library, other])
    assert scanner.scan().skills["shared"].body.startswith("# other")
    (other / UPLOADED_ROOT_MARKER).touch()
    assert scanner.scan().skills["shared"].body.startswith("# directory")
