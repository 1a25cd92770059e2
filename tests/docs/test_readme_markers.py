"""Every code block of the user-facing documents says how it is tested (tests/docs/
readme_blocks.py), and the marker reader itself holds: run in the fast loop, so an unmarked
block fails before any server starts. tests/integration/docs/test_readme_blocks.py runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.readme_blocks import (
    DOCUMENTS,
    Block,
    all_blocks,
    blocks,
    check_parses,
    expected_in,
    logical_lines,
    service_of,
    synopsis_commands,
)


def test_every_block_of_the_documents_has_a_valid_marker() -> None:
    found = all_blocks()
    assert {block.document for block in found} == set(DOCUMENTS)
    assert [f"{block.id}: {block.problem}" for block in found if block.problem] == []


def test_a_block_without_a_marker_or_a_reason_is_refused(tmp_path: Path) -> None:
    (tmp_path / "doc.md").write_text(
        "# t\n\n```sh\nls\n```\n\n<!-- test: skip -->\n```sh\nls\n```\n\n"
        "<!-- test: sometimes -->\n    ls\n\n<!-- test: skip — needs a cluster -->\n\n"
        "```sh\nkubectl get pods\n```\n\n<!-- test: offline -->\n```sh\nls\n```\n",
        encoding="utf-8",
    )
    found = blocks("doc.md", root=tmp_path)
    assert [(b.line, b.mode, b.reason) for b in found] == [
        (4, None, ""),
        (9, "skip", ""),
        (13, None, ""),
        (18, "skip", "needs a cluster"),
        (23, "offline", ""),
    ]
    assert "no <!-- test:" in found[0].problem
    assert "must say why" in found[1].problem
    assert "unknown test mode 'sometimes'" in found[2].problem
    assert found[3].problem == found[4].problem == ""


def test_lines_are_joined_and_comments_and_expectations_read() -> None:
    text = (
        "# a comment\nskillweave run \\\n    --agent a.yaml   # prints: done <n> turns\n"
        "cat > f <<'EOF'\n# kept\nEOF\n# prints: audit log: <n> records\n"
    )
    block = Block("d.md", 1, "sh", text, "offline")
    assert logical_lines(text)[1] == "skillweave run      --agent a.yaml   # prints: done <n> turns"
    assert block.commands()[1] == "cat > f <<'EOF'\n# kept\nEOF"
    assert block.expected() == ["done <n> turns", "audit log: <n> records"]


def test_expected_text_matches_with_wildcards_in_order() -> None:
    output = (
        'started\nSKILLS__TRUST__KEYS=\'{"k": "QUJD"}\'\n'
        "audit log: 3 records from 1 writer,\n intact"
    )
    assert expected_in(output, ['SKILLS__TRUST__KEYS=\'{"k": "<base64 public key>"}\'']) is None
    assert expected_in(output, ["audit log: <n> records from <n> writer, intact"]) is None
    assert expected_in(output, ["intact", "started"]) == "started"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("skillweave dev   # one terminal", "dev"),
        ("API__TOKEN=… skillweave api", "api"),
        ("SANDBOX__MANAGER_TOKEN=x skillweave manager", "manager"),
        ("skillweave worker --help", None),
        ("skillweave run 'dev'", None),
        ("echo skillweave dev", None),
    ],
)
def test_long_running_commands_are_recognised(line: str, kind: str | None) -> None:
    assert service_of(line) == kind


def test_synopsis_lines_give_their_command_and_options() -> None:
    block = Block(
        "d.md",
        1,
        "sh",
        "skillweave skills list   [--dir PATH]... [--json]\n"
        'skillweave run "TASK" [--engine direct|temporal]   # --not-this\n',
        "synopsis",
    )
    assert synopsis_commands(block) == [
        (("skills", "list"), ["--dir", "--json"]),
        (("run",), ["--engine"]),
    ]


def test_parses_reads_json_yaml_and_frontmatter() -> None:
    check_parses(Block("d", 1, "json", '{"a": 1}', "parses"))
    check_parses(Block("d", 1, "yaml", "---\nname: x\n---\n", "parses"))
    with pytest.raises(AssertionError, match="not a YAML mapping"):
        check_parses(Block("d", 1, "yaml", "- a\n", "parses"))
