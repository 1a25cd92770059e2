"""Skills kept in hidden folders (``skills/.curated/``, ``skills/.system/``): skipped by
default with a hint that says where they are and how to include them, found with
``include_hidden`` (``SKILLS__INCLUDE_HIDDEN``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.config import SkillsSettings
from skillweave.skills import HIDDEN_SKILLS_FIELD, SkillLibrary
from skillweave.skills.discovery import SkillScanner
from skillweave.skills.spec import Diagnostic
from skillweave.skills.validation import validate_paths
from tests.conftest import write_skill


def curated_library(root: Path) -> Path:
    """A library in the style that hides its skills: 3 curated, 2 system, one in .git."""
    for name in ("pdf", "docx", "xlsx"):
        write_skill(root / "skills" / ".curated" / name)
    for name in ("creator", "installer"):
        write_skill(root / "skills" / ".system" / name)
    write_skill(root / ".git" / "stray")  # VCS metadata is never searched
    return root


def hints(diagnostics: tuple[Diagnostic, ...]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.field == HIDDEN_SKILLS_FIELD]


def test_a_root_with_skills_only_in_hidden_folders_says_where_and_how(tmp_path: Path) -> None:
    root = curated_library(tmp_path / "lib")
    result = SkillScanner([root]).scan()
    assert result.skills == {}
    (hint,) = hints(result.diagnostics)
    assert hint.path == str(root.absolute())
    assert not hint.fatal
    assert "hidden folders here hold 5 SKILL.md file(s)" in hint.message
    assert "skills/.curated (3), skills/.system (2)" in hint.message
    assert "SKILLS__INCLUDE_HIDDEN=true" in hint.message
    assert "--dir" in hint.message


def test_include_hidden_finds_them_but_never_in_vcs_folders(tmp_path: Path) -> None:
    root = curated_library(tmp_path / "lib")
    result = SkillScanner([root], include_hidden=True).scan()
    assert sorted(result.skills) == ["creator", "docx", "installer", "pdf", "xlsx"]
    assert hints(result.diagnostics) == []


def test_hidden_folders_inside_a_skill_stay_out_of_it(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path / "lib" / ".curated" / "pdf",
        files={".cache/SKILL.md": "---\nname: x\ndescription: y\n---\n", ".cache/blob": "z"},
    )
    result = SkillScanner([tmp_path / "lib"], include_hidden=True).scan()
    assert list(result.skills) == ["pdf"]
    assert result.skills["pdf"].path == skill
    assert result.skills["pdf"].children == ()


def test_the_hint_is_per_root_and_only_for_roots_without_skills(tmp_path: Path) -> None:
    curated = curated_library(tmp_path / "curated")
    mixed = curated_library(tmp_path / "mixed")
    write_skill(mixed / "visible")
    (tmp_path / "plain" / ".cache" / "notes").mkdir(parents=True)  # hidden, but no skills
    result = SkillScanner([curated, mixed, tmp_path / "plain"]).scan()
    assert list(result.skills) == ["visible"]
    (hint,) = hints(result.diagnostics)
    assert hint.path == str(curated.absolute())


def test_many_hidden_folders_are_summed_up(tmp_path: Path) -> None:
    for index in range(7):
        write_skill(tmp_path / "lib" / f".set-{index}" / f"skill-{index}")
    (hint,) = hints(SkillScanner([tmp_path / "lib"]).scan().diagnostics)
    assert "7 SKILL.md file(s)" in hint.message
    assert ".set-4 (1) and 2 more" in hint.message
    assert ".set-5" not in hint.message


def test_a_rescan_updates_the_hint(tmp_path: Path) -> None:
    root = curated_library(tmp_path / "lib")
    scanner = SkillScanner([root])
    assert "5 SKILL.md" in hints(scanner.scan().diagnostics)[0].message
    write_skill(root / "skills" / ".system" / "updater")  # only a hidden folder changes
    assert "6 SKILL.md" in hints(scanner.scan().diagnostics)[0].message


def test_the_library_follows_the_setting(tmp_path: Path) -> None:
    root = curated_library(tmp_path / "lib")
    assert len(SkillLibrary(SkillsSettings(dirs=[str(root)])).refresh()) == 0
    settings = SkillsSettings(dirs=[str(root)], include_hidden=True)
    assert len(SkillLibrary(settings).refresh()) == 5


def test_the_setting_is_off_by_default_and_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from skillweave.config import Settings

    assert SkillsSettings().include_hidden is False
    monkeypatch.setenv("SKILLS__INCLUDE_HIDDEN", "true")
    assert Settings().skills.include_hidden is True


def test_validate_says_the_skills_are_in_hidden_folders(tmp_path: Path) -> None:
    root = curated_library(tmp_path / "lib")
    report = validate_paths([root], strict=False)
    assert not report.ok
    assert "no SKILL.md found outside hidden folders" in report.errors[0].message
    assert hints(report.warnings)


def test_validate_follows_the_setting(tmp_path: Path) -> None:
    root = curated_library(tmp_path / "lib")
    report = validate_paths([root], strict=False, include_hidden=True)
    assert report.ok, report.errors
    assert report.skills_checked == 5
    assert not hints(report.warnings)
