"""Extensions live under ``metadata``, ``dependencies`` included: strict validation agrees with
the spec's reference validator (skills-ref), which refuses every top-level key but the spec's
and reads any value under ``metadata``; lenient loading still reads a top-level extension."""

from __future__ import annotations

from pathlib import Path

from skillweave.skills.loader import load_skill_file
from skillweave.skills.spec import EXTENSION_KEYS, SPEC_KEYS
from skillweave.skills.validation import validate_paths
from tests.conftest import write_skill

# skills-ref/src/skills_ref/validator.py, ALLOWED_FIELDS (agentskills/agentskills).
REFERENCE_ALLOWED_FIELDS = {
    "name",
    "description",
    "license",
    "allowed-tools",
    "metadata",
    "compatibility",
}

PACKAGES_UNDER_METADATA = """
metadata:
  type: executable
  dependencies:
    python: ["pypdf>=4"]
    node: {"pdf-lib": "^1.17"}
"""
PACKAGES_AT_TOP_LEVEL = """
dependencies:
  python: ["pypdf>=4"]
"""


def test_package_dependencies_under_metadata_pass_strict_validation(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "pdf-filler", extra=PACKAGES_UNDER_METADATA)
    report = validate_paths([skill], strict=True)
    assert report.ok, report.errors
    assert report.diagnostics == ()


def test_every_top_level_extension_fails_strict_validation(tmp_path: Path) -> None:
    assert SPEC_KEYS == REFERENCE_ALLOWED_FIELDS
    assert not EXTENSION_KEYS & REFERENCE_ALLOWED_FIELDS
    for key in sorted(EXTENSION_KEYS):
        value = {"dependencies": '["pypdf"]', "type": "executable"}.get(key, '"true"')
        skill = write_skill(tmp_path / key / "demo", extra=f"{key}: {value}")
        report = validate_paths([skill], strict=True)
        assert not report.ok, key
        assert any(
            d.field == key and "the spec puts it under 'metadata'" in d.message
            for d in report.errors
        ), key
        assert validate_paths([skill], strict=False).ok, key  # lenient: a warning only


def test_a_top_level_package_mapping_fails_strict_validation(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "demo", extra=PACKAGES_AT_TOP_LEVEL)
    (error,) = validate_paths([skill], strict=True).errors
    assert error.field == "dependencies"
    assert "under 'metadata'" in error.message


def test_a_badly_shaped_mapping_under_metadata_is_reported(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "demo", extra="metadata:\n  dependencies: {ruby: [rails]}\n")
    (error,) = validate_paths([skill], strict=True).errors
    assert error.field == "metadata.dependencies"
    assert "unknown key 'ruby'" in error.message
    # Only package dependencies are exempt from the spec's string values.
    other = write_skill(tmp_path / "other", extra="metadata:\n  tools: [a.py, b.py]\n")
    (error,) = validate_paths([other], strict=True).errors
    assert (error.field, error.message) == ("metadata.tools", "must be a string, not list")


def test_the_loader_does_not_read_a_package_mapping_as_skill_names(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "pdf-filler", extra=PACKAGES_UNDER_METADATA)
    loaded = load_skill_file(folder / "SKILL.md")
    assert loaded.skill is not None
    assert loaded.diagnostics == []
    assert loaded.skill.type == "executable"
    assert loaded.skill.dependencies == ()
    assert dict(loaded.skill.metadata) == {"type": "executable"}
    # A string there still names the skills this one builds on.
    extra = "metadata:\n  dependencies: csv-profiler pdf\n"
    named = load_skill_file(write_skill(tmp_path / "demo", extra=extra) / "SKILL.md").skill
    assert named is not None
    assert named.dependencies == ("csv-profiler", "pdf")
