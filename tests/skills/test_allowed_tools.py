"""`allowed-tools` as other clients write it, read onto skillweave's tools (issue 25)."""

from __future__ import annotations

import pytest

from skillweave.skills.allowed_tools import AllowedTools, parse_allowed_tools, skill_allowance


@pytest.mark.parametrize(
    ("written", "scripts", "tools"),
    [
        ("Bash(python:*) Read", ("*.py",), ()),  # Claude Code
        ("Bash(python3 scripts/fill.py:*), Read, Grep", ("scripts/fill.py",), ()),
        ("Bash(./scripts/run.sh)", ("scripts/run.sh",), ()),
        ("Bash(node:*)", ("*.js", "*.mjs", "*.cjs"), ()),
        ("Bash", ("*",), ()),
        (["bash", "read_file"], ("*",), ()),  # DeerFlow
        (["read_file", "render_report"], (), ("render_report",)),
        ("run_skill_script web_scraper", ("*",), ("web_scraper",)),
        ("Read Grep Glob", (), ()),  # reading only: nothing may run
    ],
)
def test_each_style_maps_onto_skillweaves_tools(
    written: object, scripts: tuple[str, ...], tools: tuple[str, ...]
) -> None:
    allowed, warnings = parse_allowed_tools(written)
    assert (allowed.scripts, allowed.tools, warnings) == (scripts, tools, [])


def test_tools_without_a_counterpart_are_ignored_and_unknown_specifiers_warned() -> None:
    allowed, warnings = parse_allowed_tools(
        "Bash(git diff:*) Write Edit WebFetch mcp__github__create_issue Frob(x)"
    )
    assert allowed == AllowedTools(
        ignored=(
            "Bash(git diff:*)",
            "Write",
            "Edit",
            "WebFetch",
            "mcp__github__create_issue",
            "Frob(x)",
        )
    )
    assert warnings == [
        "'Bash(git diff:*)' names no skill script; it allows nothing here",
        "'Frob(x)' is no tool skillweave knows; ignored",
    ]


def test_a_skill_without_allowed_tools_restricts_nothing() -> None:
    assert skill_allowance(None) == (None, [])
    assert skill_allowance("  ") == (None, [])
    allowed, _ = skill_allowance("Bash(python:*)")
    assert allowed is not None
    assert allowed.describe() == "scripts *.py"


def test_paths_apply_to_the_listing_skills_own_scripts_kinds_to_all() -> None:
    by_path, _ = parse_allowed_tools("Bash(python scripts/fill.py:*)")
    assert by_path.allows(own=True, script="scripts/fill.py")
    assert not by_path.allows(own=False, script="scripts/fill.py")
    assert not by_path.allows(own=True, script="scripts/other.py")
    by_kind, _ = parse_allowed_tools("Bash(python:*)")
    assert by_kind.allows(own=False, script="execute.py")
    assert not by_kind.allows(own=True, script="scripts/run.sh")
    by_tool, _ = parse_allowed_tools(["render_report"])
    assert (
        by_tool.allows(own=False, script="scripts/render.py", tool=("x__render_report",)) is False
    )
    assert by_tool.allows(own=False, script="scripts/render.py", tool=("render_report",))
