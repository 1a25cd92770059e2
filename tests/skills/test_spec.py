from __future__ import annotations

import datetime
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillweave.skills.spec import (
    COMPATIBILITY_MAX_LENGTH,
    DESCRIPTION_MAX_LENGTH,
    NAME_MAX_LENGTH,
    check_frontmatter,
    name_problems,
)

# The spec's rule, written independently of the validator: 1-64 chars, lowercase letters,
# digits and single hyphens, no leading or trailing hyphen.
SPEC_NAME = re.compile(r"\A(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)\Z")


def check(data: dict[object, object], dir_name: str | None = "my-skill") -> list[tuple[str, str]]:
    return [(d.field, d.message) for d in check_frontmatter(data, path="p", dir_name=dir_name)]


def valid(**overrides: object) -> dict[object, object]:
    data: dict[object, object] = {"name": "my-skill", "description": "Does things."}
    data.update(overrides)
    return data


def test_valid_frontmatter_has_no_diagnostics() -> None:
    data = valid(
        license="MIT",
        compatibility="python3",
        metadata={"type": "executable", "owner": "me"},
        **{"allowed-tools": "Bash(git:*) Read"},
    )
    assert check(data) == []


# --- name: one case per rule -------------------------------------------------------------


def test_name_required() -> None:
    assert ("name", "is required") in check({"description": "d"})


def test_name_empty() -> None:
    assert name_problems("") == ["must not be empty"]


def test_name_uppercase() -> None:
    assert any("may contain only" in p for p in name_problems("My-skill"))


@pytest.mark.parametrize("bad", ["my_skill", "my skill", "my.skill", "skill!", "ünï", "a\n"])
def test_name_invalid_characters(bad: str) -> None:
    assert any("may contain only" in p for p in name_problems(bad))


def test_name_leading_hyphen() -> None:
    assert name_problems("-skill") == ["must not start with a hyphen"]


def test_name_trailing_hyphen() -> None:
    assert name_problems("skill-") == ["must not end with a hyphen"]


def test_name_consecutive_hyphens() -> None:
    assert name_problems("my--skill") == ["must not contain consecutive hyphens"]


def test_name_length_boundary() -> None:
    assert name_problems("a" * NAME_MAX_LENGTH) == []
    assert name_problems("a" * (NAME_MAX_LENGTH + 1)) == ["is 65 characters; the limit is 64"]


def test_name_digits_and_single_hyphens_are_fine() -> None:
    assert name_problems("pdf-2-text") == []
    assert name_problems("7") == []


def test_name_must_match_directory() -> None:
    assert check(valid(name="other"), dir_name="my-skill") == [
        ("name", "'other' does not match the directory name 'my-skill'")
    ]


def test_name_must_be_a_string() -> None:
    assert check(valid(name=123)) == [("name", "must be a string, not int")]


@given(st.text(max_size=80))
def test_name_validator_agrees_with_the_spec_regex(name: str) -> None:
    assert (name_problems(name) == []) == bool(SPEC_NAME.match(name))


@given(st.from_regex(r"\A[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,6}\Z"))
def test_generated_valid_names_pass(name: str) -> None:
    assert name_problems(name) == []


# --- description, compatibility, other fields --------------------------------------------


def test_description_missing_is_fatal() -> None:
    found = check_frontmatter({"name": "my-skill"}, path="p", dir_name="my-skill")
    assert [(d.field, d.fatal) for d in found] == [("description", True)]


def test_description_blank_is_fatal() -> None:
    found = check_frontmatter(valid(description="   "), path="p", dir_name="my-skill")
    assert found[0].fatal


def test_description_length_boundary() -> None:
    assert check(valid(description="x" * DESCRIPTION_MAX_LENGTH)) == []
    found = check_frontmatter(
        valid(description="x" * (DESCRIPTION_MAX_LENGTH + 1)), path="p", dir_name="my-skill"
    )
    assert [(d.field, d.message, d.fatal) for d in found] == [
        ("description", "is 1025 characters; the limit is 1024", False)
    ]


def test_description_of_a_scalar_type_is_tolerated_but_reported() -> None:
    found = check_frontmatter(
        valid(description=datetime.date(2024, 1, 2)), path="p", dir_name="my-skill"
    )
    assert [(d.field, d.fatal) for d in found] == [("description", False)]
    found = check_frontmatter(valid(description=["a", "b"]), path="p", dir_name="my-skill")
    assert [(d.field, d.fatal) for d in found] == [("description", True)]


def test_compatibility_length_boundary() -> None:
    assert check(valid(compatibility="c" * COMPATIBILITY_MAX_LENGTH)) == []
    assert check(valid(compatibility="c" * (COMPATIBILITY_MAX_LENGTH + 1))) == [
        ("compatibility", "is 501 characters; the limit is 500")
    ]


def test_compatibility_empty_or_not_a_string() -> None:
    assert check(valid(compatibility="")) == [("compatibility", "must not be empty when present")]
    assert check(valid(compatibility=3)) == [("compatibility", "must be a string, not int")]


def test_metadata_must_map_strings_to_strings() -> None:
    assert check(valid(metadata=["a"])) == [
        ("metadata", "must be a mapping of string to string, not list")
    ]
    assert check(valid(metadata={"version": 1.0, 2: "x"})) == [
        ("metadata.version", "must be a string, not float"),
        ("metadata", "key 2 must be a string"),
    ]


def test_license_must_be_a_string_and_allowed_tools_a_string_or_a_list_of_them() -> None:
    assert check(valid(license=["MIT"])) == [("license", "must be a string, not list")]
    assert check(valid(**{"allowed-tools": ["Read", "Grep"]})) == []  # DeerFlow's style
    assert check(valid(**{"allowed-tools": {"Read": True}})) == [
        ("allowed-tools", "must be a string or a list of strings, not dict")
    ]
    assert check(valid(**{"allowed-tools": ["Read", 3]})) == [
        ("allowed-tools", "must be a string or a list of strings, not list")
    ]


def test_unknown_keys_are_reported_each() -> None:
    found = check(valid(version="1.0", author="me"))
    assert [field for field, _ in found] == ["version", "author"]
    assert all(message.startswith("unknown key") for _, message in found)


def test_extension_keys_at_top_level_point_to_metadata() -> None:
    assert check(valid(type="executable")) == [
        ("type", "is a skillweave extension; the spec puts it under 'metadata'")
    ]


def test_extension_values_are_checked() -> None:
    assert check(valid(metadata={"type": "magic", "auto_load": "sometimes"})) == [
        ("metadata.type", "must be one of contextual, executable, composite"),
        ("metadata.auto_load", "must be 'true' or 'false'"),
    ]


def test_colon_repair_is_a_strict_violation() -> None:
    found = check_frontmatter(valid(), path="p", dir_name="my-skill", colon_repaired=True)
    assert [(d.field, d.fatal) for d in found] == [("frontmatter", False)]


def test_diagnostic_prints_path_field_message() -> None:
    (diagnostic,) = check_frontmatter(valid(name="x--y"), path="lib/x/SKILL.md", dir_name=None)
    assert str(diagnostic) == "lib/x/SKILL.md: name: must not contain consecutive hyphens"
