from __future__ import annotations

import pytest

from skillweave.errors import SkillFormatError
from skillweave.skills.frontmatter import parse_frontmatter


def test_plain_file() -> None:
    front = parse_frontmatter("---\nname: a\ndescription: b\n---\n# Title\n\nText.\n")
    assert front.data == {"name": "a", "description": "b"}
    assert front.body == "# Title\n\nText.\n"
    assert not front.colon_repaired


def test_crlf_and_bom() -> None:
    text = "\ufeff---\r\nname: a\r\ndescription: b\r\n---\r\nline one\r\nline two\r\n"
    front = parse_frontmatter(text)
    assert front.data == {"name": "a", "description": "b"}
    assert front.body == "line one\nline two\n"


def test_lone_cr_line_ends() -> None:
    front = parse_frontmatter("---\rname: a\rdescription: b\r---\rbody\r")
    assert front.data["name"] == "a"
    assert front.body == "body\n"


def test_dashes_inside_the_body_stay_in_the_body() -> None:
    front = parse_frontmatter("---\nname: a\ndescription: b\n---\nabove\n---\nbelow\n")
    assert front.body == "above\n---\nbelow\n"
    assert front.data == {"name": "a", "description": "b"}


def test_empty_body() -> None:
    assert parse_frontmatter("---\nname: a\ndescription: b\n---\n").body == ""
    assert parse_frontmatter("---\nname: a\ndescription: b\n---").body == ""


def test_empty_frontmatter_is_an_empty_mapping() -> None:
    assert parse_frontmatter("---\n---\nbody\n").data == {}


def test_unquoted_colon_is_repaired_and_flagged() -> None:
    text = "---\nname: a\ndescription: Use when: the user asks for PDFs\n---\n"
    front = parse_frontmatter(text)
    assert front.data["description"] == "Use when: the user asks for PDFs"
    assert front.colon_repaired


def test_colon_repair_keeps_quotes_in_the_value() -> None:
    text = "---\nname: a\ndescription: it's handy: really\n---\n"
    assert parse_frontmatter(text).data["description"] == "it's handy: really"


def test_colon_repair_inside_nested_mapping() -> None:
    text = "---\nname: a\ndescription: b\nmetadata:\n  note: see: docs\n---\n"
    assert parse_frontmatter(text).data["metadata"] == {"note": "see: docs"}


def test_block_scalars_are_left_alone() -> None:
    text = "---\nname: a\ndescription: >\n  Folded text: with a colon\n  on two lines.\n---\n"
    front = parse_frontmatter(text)
    assert front.data["description"].strip() == "Folded text: with a colon on two lines."
    assert not front.colon_repaired


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("# no frontmatter\n", "no YAML frontmatter"),
        ("", "no YAML frontmatter"),
        ("---\nname: a\n", "not closed"),
        ("---\nname: [unclosed\n---\n", "invalid YAML"),
        ("---\n- a\n- b\n---\n", "must be a mapping"),
        ("---\njust a string\n---\n", "must be a mapping"),
    ],
)
def test_unreadable_frontmatter(text: str, reason: str) -> None:
    with pytest.raises(SkillFormatError, match=reason) as caught:
        parse_frontmatter(text, path="x/SKILL.md")
    assert caught.value.path == "x/SKILL.md"


def test_yaml_is_loaded_safely() -> None:
    with pytest.raises(SkillFormatError, match="invalid YAML"):
        parse_frontmatter("---\nname: !!python/object/apply:os.system ['true']\n---\n")


def test_yaml_errors_name_the_file_line() -> None:
    text = "\n\n---\nname: a\ndescription: b\nbad: [\n---\n"
    with pytest.raises(SkillFormatError, match=r"line [67]\b"):
        parse_frontmatter(text)
