"""A skill's ``evals/`` is kept from the agent that uses it (``skills.resources.is_withheld``):
not listed at activation, not readable by ``read_skill_resource``, however the path is spelled;
still listed for an operator, still in the package a script gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.errors import ResourceNotFoundError, ResourcePathError
from skillweave.skills.discovery import SkillScanner
from skillweave.skills.model import Skill
from skillweave.skills.package import build_package, extract_package
from skillweave.skills.resources import (
    disclosed_resources,
    is_withheld,
    list_resources,
    read_resource,
    render_activation,
)
from tests.conftest import MakeSkill

EVALS = '{"evals": [{"id": 1, "prompt": "Convert 5 km", "expectations": ["3.11 miles"]}]}'


@pytest.fixture
def skill(tmp_path: Path, make_skill: MakeSkill) -> Skill:
    make_skill(
        "converter",
        body="# Converter\n",
        files={
            "references/units.md": "# Units\n",
            "references/evals/notes.md": "not a skill's evals: an ordinary folder\n",
            "evals/evals.json": EVALS,
            "evals/triggers.json": '[{"query": "bake bread", "should_trigger": false}]',
            "evals/files/lengths.csv": "km\n5\n",
            "evaluation.md": "an ordinary file whose name starts like the folder\n",
        },
    )
    make_skill("converter/metric", files={"evals/evals.json": EVALS, "table.md": "m\n"})
    return SkillScanner([tmp_path / "lib"]).scan().skills["converter"]


def test_the_activation_listing_leaves_evals_out(skill: Skill) -> None:
    assert disclosed_resources(skill) == [
        "evaluation.md",
        "references/evals/notes.md",
        "references/units.md",
    ]
    payload = render_activation(skill)
    assert "evals.json" not in payload
    assert "triggers.json" not in payload
    assert "lengths.csv" not in payload
    assert "references/units.md\n" in payload


def test_an_operator_still_lists_every_file(skill: Skill) -> None:
    assert list_resources(skill) == [
        "evals/evals.json",
        "evals/files/lengths.csv",
        "evals/triggers.json",
        "evaluation.md",
        "references/evals/notes.md",
        "references/units.md",
    ]


@pytest.mark.parametrize(
    "path",
    [
        "evals/evals.json",
        "./evals//evals.json",
        "evals\\triggers.json",
        "evals/files/lengths.csv",
        "Evals/evals.json",
        "EVALS/triggers.json",
        "evals",
        "evals/",
        "evals/no-such-file.json",
        "metric/evals/evals.json",  # a child skill's evals, through its parent
        "metric/EVALS/evals.json",
    ],
)
def test_reading_evals_is_refused_politely(skill: Skill, path: str) -> None:
    with pytest.raises(ResourcePathError, match="evals are kept from the agent") as caught:
        read_resource(skill, path)
    assert caught.value.skill == "converter"
    assert caught.value.path == path
    assert "expectations" not in str(caught.value)


def test_a_symlink_inside_the_skill_does_not_lead_to_evals(skill: Skill) -> None:
    (skill.path / "references" / "answers.json").symlink_to(skill.path / "evals" / "evals.json")
    (skill.path / "peek").symlink_to(skill.path / "evals")
    for path in ("references/answers.json", "peek/triggers.json", "peek"):
        with pytest.raises(ResourcePathError, match="evals are kept"):
            read_resource(skill, path)
    assert "references/answers.json" not in disclosed_resources(skill)


def test_other_files_read_as_before(skill: Skill) -> None:
    assert read_resource(skill, "references/units.md") == "# Units\n"
    assert read_resource(skill, "evaluation.md").startswith("an ordinary file")
    assert read_resource(skill, "references/evals/notes.md").startswith("not a skill's")
    assert read_resource(skill, "metric/table.md") == "m\n"
    with pytest.raises(ResourceNotFoundError):
        read_resource(skill, "evaluations/x.md")


def test_the_child_skill_keeps_its_own_evals_too(tmp_path: Path, skill: Skill) -> None:
    child = SkillScanner([tmp_path / "lib"]).scan().skills["metric"]
    assert disclosed_resources(child) == ["table.md"]
    with pytest.raises(ResourcePathError, match="evals are kept"):
        read_resource(child, "evals/evals.json")


def test_a_script_still_gets_the_whole_package(skill: Skill, tmp_path: Path) -> None:
    unpacked = tmp_path / "unpacked"
    extract_package(build_package(skill.path, include_children=False), unpacked)
    (top,) = unpacked.iterdir()
    assert (top / "evals" / "evals.json").read_text() == EVALS
    assert (top / "evals" / "files" / "lengths.csv").is_file()


@pytest.mark.parametrize(
    ("relative", "withheld"),
    [
        ("evals", True),
        ("evals/a", True),
        ("eVaLs/a/b", True),
        ("evals.json", False),
        ("my-evals/a", False),
        ("a/evals/b", False),  # deeper: only in a child skill's folder (needs the root)
        ("", False),
    ],
)
def test_is_withheld_without_a_root(relative: str, withheld: bool) -> None:
    assert is_withheld(relative) is withheld


def test_is_withheld_deeper_only_under_a_child_skill(skill: Skill) -> None:
    root = str(skill.path)
    assert is_withheld("metric/evals/evals.json", root=root)
    assert not is_withheld("references/evals/notes.md", root=root)
