from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.errors import (
    BinaryResourceError,
    ResourceNotFoundError,
    ResourcePathError,
    ResourceTooLargeError,
)
from skillweave.skills.discovery import SkillScanner
from skillweave.skills.model import Skill
from skillweave.skills.registry import SkillRegistry
from skillweave.skills.resources import list_resources, read_resource, render_activation
from tests.conftest import MakeSkill


@pytest.fixture
def skill(tmp_path: Path, make_skill: MakeSkill) -> Skill:
    make_skill(
        "docs",
        body="# Docs\n\nSee [the guide](references/guide.md).\n",
        files={
            "references/guide.md": "# Guide\n\nUse it well.\n",
            "scripts/run.py": "print('hi')\n",
            "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
            ".env": "TOKEN=secret\n",
            "big.txt": "x" * 5000,
        },
    )
    (tmp_path / "outside.txt").write_text("host file\n")
    return SkillScanner([tmp_path / "lib"]).scan().skills["docs"]


def test_reads_a_reference(skill: Skill) -> None:
    assert read_resource(skill, "references/guide.md") == "# Guide\n\nUse it well.\n"
    assert read_resource(skill, "./references//guide.md") == "# Guide\n\nUse it well.\n"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../outside.txt", "'..' is not allowed"),
        ("references/../../outside.txt", "'..' is not allowed"),
        ("..\\outside.txt", "'..' is not allowed"),
        ("/etc/passwd", "absolute paths are not allowed"),
        ("C:\\Windows\\win.ini", "absolute paths are not allowed"),
        ("", "the path is empty"),
        ("refs\0.md", "NUL byte"),
        (".env", "hidden files"),
        ("references/.secret", "hidden files"),
        (".", "the skill folder itself"),
    ],
)
def test_path_escapes_are_refused(skill: Skill, path: str, reason: str) -> None:
    with pytest.raises(ResourcePathError, match=reason) as caught:
        read_resource(skill, path)
    assert caught.value.skill == "docs"
    assert caught.value.path == path


def test_symlink_escape_is_refused(skill: Skill, tmp_path: Path) -> None:
    (skill.path / "link.txt").symlink_to(tmp_path / "outside.txt")
    (skill.path / "linkdir").symlink_to(tmp_path)
    with pytest.raises(ResourcePathError, match="outside the skill folder"):
        read_resource(skill, "link.txt")
    with pytest.raises(ResourcePathError, match="outside the skill folder"):
        read_resource(skill, "linkdir/outside.txt")


def test_symlink_inside_the_skill_is_fine(skill: Skill) -> None:
    (skill.path / "alias.md").symlink_to(skill.path / "references" / "guide.md")
    assert read_resource(skill, "alias.md").startswith("# Guide")


def test_missing_file_and_folder(skill: Skill) -> None:
    with pytest.raises(ResourceNotFoundError, match="no such file"):
        read_resource(skill, "references/nope.md")
    with pytest.raises(ResourceNotFoundError, match="it is a folder"):
        read_resource(skill, "references")


def test_size_cap(skill: Skill) -> None:
    assert len(read_resource(skill, "big.txt", max_bytes=5000)) == 5000
    with pytest.raises(ResourceTooLargeError, match="5000 bytes, over the 4999-byte limit") as e:
        read_resource(skill, "big.txt", max_bytes=4999)
    assert (e.value.size, e.value.limit) == (5000, 4999)


def test_binary_files_are_refused_with_advice(skill: Skill) -> None:
    with pytest.raises(BinaryResourceError, match="run a script on it instead"):
        read_resource(skill, "assets/logo.png")
    (skill.path / "latin1.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(BinaryResourceError):
        read_resource(skill, "latin1.txt")


def test_resource_listing_excludes_skill_md_hidden_files_and_children(
    skill: Skill, make_skill: MakeSkill
) -> None:
    make_skill("docs/child", files={"child-only.md": "x"})
    assert list_resources(skill) == [
        "assets/logo.png",
        "big.txt",
        "references/guide.md",
        "scripts/run.py",
    ]


def test_activation_payload_exact(skill: Skill) -> None:
    assert render_activation(skill) == (
        '<skill_content name="docs">\n'
        "# Docs\n\nSee [the guide](references/guide.md).\n"
        "<skill_resources>\n"
        "assets/logo.png\nbig.txt\nreferences/guide.md\nscripts/run.py\n"
        "</skill_resources>\n"
        "</skill_content>\n"
    )


def test_activation_listing_is_capped_with_a_count(skill: Skill) -> None:
    payload = render_activation(skill, max_listed=2)
    assert "assets/logo.png\nbig.txt\n… and 2 more files\n</skill_resources>" in payload
    assert "scripts/run.py" not in payload


def test_activating_a_parent_lists_its_children(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("kit", body="Pick a tool below.\n")
    make_skill("kit/alpha", description="First <tool> & more.")
    make_skill("kit/beta", description="Second tool.")
    registry = SkillRegistry.from_scan(SkillScanner([tmp_path / "lib"]).scan())
    payload = render_activation(registry.get("kit"), children=registry.children_of("kit"))
    assert payload == (
        '<skill_content name="kit">\n'
        "Pick a tool below.\n"
        "<sub_skills>\n"
        '<skill name="alpha">First &lt;tool&gt; &amp; more.</skill>\n'
        '<skill name="beta">Second tool.</skill>\n'
        "</sub_skills>\n"
        "</skill_content>\n"
    )


def test_empty_body_and_no_files(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("bare", body="")
    bare = SkillScanner([tmp_path / "lib"]).scan().skills["bare"]
    assert render_activation(bare) == '<skill_content name="bare">\n\n</skill_content>\n'
