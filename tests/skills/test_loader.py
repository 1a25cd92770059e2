from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.skills.loader import load_skill_file
from tests.conftest import MakeSkill


def test_lenient_loading_warns_on_name_mismatch_and_loads(make_skill: MakeSkill) -> None:
    folder = make_skill("pdf-tools", name="pdf")
    loaded = load_skill_file(folder / "SKILL.md")
    assert loaded.skill is not None
    assert loaded.skill.name == "pdf"
    assert [(d.field, d.fatal) for d in loaded.skill.warnings] == [("name", False)]


def test_missing_description_is_skipped_with_the_file_named(make_skill: MakeSkill) -> None:
    folder = make_skill("no-desc", description=None)
    loaded = load_skill_file(folder / "SKILL.md")
    assert loaded.skill is None
    (diagnostic,) = loaded.diagnostics
    assert diagnostic.fatal
    assert diagnostic.path == str(folder / "SKILL.md")
    assert diagnostic.field == "description"


def test_unparseable_yaml_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: broken\ndescription: [oops\n---\n")
    loaded = load_skill_file(folder / "SKILL.md")
    assert loaded.skill is None
    assert loaded.diagnostics[0].field == "frontmatter"
    assert "invalid YAML" in loaded.diagnostics[0].message


def test_non_utf8_file_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "latin"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\n")
    loaded = load_skill_file(folder / "SKILL.md")
    assert loaded.skill is None
    assert "not UTF-8" in loaded.diagnostics[0].message


def test_unquoted_colon_loads_with_a_warning(make_skill: MakeSkill) -> None:
    folder = make_skill("colon", description="Use when: the user asks about PDFs")
    loaded = load_skill_file(folder / "SKILL.md")
    assert loaded.skill is not None
    assert loaded.skill.description == "Use when: the user asks about PDFs"
    assert [d.field for d in loaded.skill.warnings] == ["frontmatter"]


def test_overlong_fields_and_unknown_keys_load(make_skill: MakeSkill) -> None:
    folder = make_skill(
        "long",
        description="x" * 2000,
        extra="version: 2\nwhen_to_use: always\ncompatibility: " + "c" * 600,
    )
    loaded = load_skill_file(folder / "SKILL.md")
    assert loaded.skill is not None
    assert len(loaded.skill.description) == 2000
    fields = sorted(d.field for d in loaded.skill.warnings)
    assert fields == ["compatibility", "description", "version", "when_to_use"]


def test_a_skill_written_for_another_client_loads_unchanged(tmp_path: Path) -> None:
    # Frontmatter in the style of other agent clients: list-valued allowed-tools, a folded
    # description with a colon, extra top-level keys, no name at all.
    folder = tmp_path / "review-pr"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\n"
        "description: >-\n"
        "  Review a pull request: read the diff, run the tests,\n"
        "  and leave comments.\n"
        "allowed-tools:\n  - Read\n  - Bash(git diff:*)\n"
        "model: some-model\n"
        "argument-hint: '[pr-number]'\n"
        "---\n\n# Review\n\nSteps.\n"
    )
    before = (folder / "SKILL.md").read_bytes()
    loaded = load_skill_file(folder / "SKILL.md")
    assert loaded.skill is not None
    skill = loaded.skill
    assert skill.name == "review-pr"
    assert skill.description == (
        "Review a pull request: read the diff, run the tests, and leave comments."
    )
    assert skill.allowed_tools == "Read Bash(git diff:*)"
    assert skill.body == "# Review\n\nSteps.\n"
    assert (folder / "SKILL.md").read_bytes() == before


def test_extensions_are_read_from_metadata(make_skill: MakeSkill) -> None:
    folder = make_skill(
        "conv",
        extra="""
        metadata:
          type: executable
          tools: scripts/a.py scripts/b.py
          dependencies: csv-profiler, json-report
          auto_load: "false"
          enabled: "false"
          owner: team-x
        """,
    )
    skill = load_skill_file(folder / "SKILL.md").skill
    assert skill is not None
    assert skill.type == "executable"
    assert skill.tools == ("scripts/a.py", "scripts/b.py")
    assert skill.dependencies == ("csv-profiler", "json-report")
    assert skill.auto_load is False
    assert skill.enabled is False
    assert skill.metadata["owner"] == "team-x"
    assert skill.warnings == ()


@pytest.mark.parametrize(
    "extra",
    [
        "type: executable\nauto_load: true",  # Lazy-Skills writes them at the top level
        "metadata:\n  type: executable\n  auto_load: true",
        'metadata:\n  type: Executable\n  auto_load: "yes"',
    ],
)
def test_type_and_auto_load_are_read_at_the_top_level_and_under_metadata(
    make_skill: MakeSkill, extra: str
) -> None:
    skill = load_skill_file(make_skill("conv", extra=extra) / "SKILL.md").skill
    assert skill is not None
    assert (skill.type, skill.auto_load, skill.enabled) == ("executable", True, True)


def test_auto_load_enables_a_skill_marked_disabled_and_says_so(make_skill: MakeSkill) -> None:
    folder = make_skill("conv", extra='metadata:\n  auto_load: "true"\n  enabled: "false"')
    skill = load_skill_file(folder / "SKILL.md").skill
    assert skill is not None
    assert (skill.auto_load, skill.enabled) == (True, True)
    assert [(d.field, d.fatal) for d in skill.warnings] == [("auto_load", False)]


def test_unknown_type_falls_back_to_contextual_with_a_warning(make_skill: MakeSkill) -> None:
    folder = make_skill("odd", extra="metadata:\n  type: wizard")
    skill = load_skill_file(folder / "SKILL.md").skill
    assert skill is not None
    assert skill.type == "contextual"
    assert [d.field for d in skill.warnings] == ["metadata.type"]


def test_a_name_yaml_reads_as_a_boolean_falls_back_to_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "off"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: off\ndescription: Switch things off.\n---\n")
    skill = load_skill_file(folder / "SKILL.md").skill
    assert skill is not None
    assert skill.name == "off"
    assert [(d.field, d.message) for d in skill.warnings] == [
        ("name", "must be a string, not bool")
    ]
