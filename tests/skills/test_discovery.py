from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skillweave.skills.discovery import SkillScanner
from skillweave.skills.versioning import skill_version
from tests.conftest import MakeSkill, write_skill


def names(root: Path, **kwargs: int) -> list[str]:
    return list(SkillScanner([root], **kwargs).scan().skills)


def test_finds_skills_at_any_allowed_depth(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("alpha")
    make_skill("group/beta")
    make_skill("a/b/c/gamma")
    assert names(tmp_path / "lib") == ["gamma", "alpha", "beta"]  # depth-first, by name


def test_depth_is_bounded(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("one/shallow")
    make_skill("one/two/three/deep")
    assert names(tmp_path / "lib", max_depth=2) == ["shallow"]
    assert names(tmp_path / "lib", max_depth=4) == ["shallow", "deep"]


def test_count_is_bounded_with_a_diagnostic(tmp_path: Path, make_skill: MakeSkill) -> None:
    for index in range(5):
        make_skill(f"skill-{index}")
    result = SkillScanner([tmp_path / "lib"], max_skills=3).scan()
    assert list(result.skills) == ["skill-0", "skill-1", "skill-2"]
    assert any("stopped after 3 skills" in d.message for d in result.diagnostics)


@pytest.mark.parametrize("skipped", [".git", "node_modules", ".hidden", "__pycache__"])
def test_skipped_folders(tmp_path: Path, make_skill: MakeSkill, skipped: str) -> None:
    make_skill("visible")
    make_skill(f"{skipped}/inside")
    assert names(tmp_path / "lib") == ["visible"]


def test_symlink_inside_the_root_is_followed_once(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("real/linked")
    (tmp_path / "lib" / "alias").symlink_to(tmp_path / "lib" / "real")
    result = SkillScanner([tmp_path / "lib"]).scan()
    assert list(result.skills) == ["linked"]
    assert result.skills["linked"].path == tmp_path / "lib" / "real" / "linked"
    assert result.diagnostics == ()


def test_symlink_out_of_the_root_is_not_followed(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("inside")
    write_skill(tmp_path / "outside" / "secret")
    (tmp_path / "lib" / "escape").symlink_to(tmp_path / "outside")
    assert names(tmp_path / "lib") == ["inside"]


def test_symlinked_files_are_not_part_of_a_package(tmp_path: Path, make_skill: MakeSkill) -> None:
    (tmp_path / "host-secret").write_text("secret")
    folder = make_skill("pkg")
    before = skill_version(folder)
    (folder / "leak.txt").symlink_to(tmp_path / "host-secret")
    assert skill_version(folder) == before
    assert SkillScanner([tmp_path / "lib"]).scan().skills["pkg"].version == before


def test_tree_parents_and_children(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("kit", files={"scripts/x.py": "print(1)\n"})
    make_skill("kit/one")
    make_skill("kit/two")
    make_skill("kit/nested/three")  # a plain folder between parent and child is fine
    make_skill("kit/one/grandchild")
    skills = SkillScanner([tmp_path / "lib"]).scan().skills
    assert skills["kit"].children == ("one", "three", "two")
    assert skills["kit"].parent is None
    assert skills["one"].parent == "kit"
    assert skills["one"].children == ("grandchild",)
    assert skills["grandchild"].parent == "one"
    assert skills["three"].parent == "kit"


def test_a_refused_parent_leaves_its_children_as_roots(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    make_skill("kit", description=None)
    make_skill("kit/child")
    result = SkillScanner([tmp_path / "lib"]).scan()
    assert list(result.skills) == ["child"]
    assert result.skills["child"].parent is None
    assert any(d.fatal and d.field == "description" for d in result.diagnostics)


def test_version_is_the_package_hash_and_excludes_children(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    parent = make_skill("kit", files={"references/a.md": "A\n"})
    child = make_skill("kit/child")
    skills = SkillScanner([tmp_path / "lib"]).scan().skills
    assert skills["kit"].version == skill_version(parent)
    assert skills["child"].version == skill_version(child)
    assert len(skills["kit"].version) == 64
    (child / "extra.md").write_text("changed child\n")
    again = SkillScanner([tmp_path / "lib"]).scan().skills
    assert again["kit"].version == skills["kit"].version
    assert again["child"].version != skills["child"].version


def test_version_ignores_mtime_but_not_content_or_names(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    folder = make_skill("v", files={"a.txt": "one"})
    first = skill_version(folder)
    os.utime(folder / "a.txt", (1, 1))
    assert skill_version(folder) == first
    (folder / "a.txt").rename(folder / "b.txt")
    renamed = skill_version(folder)
    assert renamed != first
    (folder / "b.txt").write_text("two")
    assert skill_version(folder) not in (first, renamed)


def test_unchanged_rescan_returns_the_cached_result(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("one")
    make_skill("two")
    scanner = SkillScanner([tmp_path / "lib"])
    first = scanner.scan()
    assert scanner.scan() is first


def test_rescan_picks_up_edits_additions_and_removals(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    one = make_skill("one")
    make_skill("two")
    scanner = SkillScanner([tmp_path / "lib"])
    first = scanner.scan()
    write_skill(one, description="A new description, longer than before.")
    make_skill("three")
    (tmp_path / "lib" / "two" / "SKILL.md").unlink()
    second = scanner.scan()
    assert sorted(second.skills) == ["one", "three"]
    assert second.skills["one"].description == "A new description, longer than before."
    assert second.skills["one"].version != first.skills["one"].version


def test_rescan_does_not_reparse_unchanged_skills(
    tmp_path: Path, make_skill: MakeSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_skill("one")
    two = make_skill("two")
    scanner = SkillScanner([tmp_path / "lib"])
    scanner.scan()
    loaded: list[Path] = []
    from skillweave.skills.discovery import _cache

    original = _cache.load_skill_file

    def counting(path: Path, **kwargs: bytes | None) -> object:
        loaded.append(path)
        return original(path, **kwargs)

    monkeypatch.setattr(_cache, "load_skill_file", counting)
    (two / "notes.md").write_text("new file\n")
    scanner.scan()
    assert loaded == [two / "SKILL.md"]


def test_duplicate_names_in_one_namespace_keep_the_first(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    make_skill("a/one", name="same", description="First one.")
    make_skill("a/two", name="same", description="Second one.")
    make_skill("b/same", description="In another namespace.")  # kept too: see test_namespaces
    result = SkillScanner([tmp_path / "lib"]).scan()
    assert result.skills["a.same"].description == "First one."
    assert result.skills["b.same"].description == "In another namespace."
    (warning,) = [d for d in result.diagnostics if "duplicate" in d.message]
    assert warning.path == str(tmp_path / "lib" / "a" / "two" / "SKILL.md")


def test_later_roots_override_earlier_ones(tmp_path: Path) -> None:
    write_skill(tmp_path / "bundled" / "shared", description="Bundled version.")
    write_skill(tmp_path / "bundled" / "only-bundled")
    write_skill(tmp_path / "user" / "shared", description="User version.")
    result = SkillScanner([tmp_path / "bundled", tmp_path / "user"]).scan()
    assert result.skills["shared"].description == "User version."
    assert result.skills["shared"].source == tmp_path / "user"
    assert result.skills["only-bundled"].source == tmp_path / "bundled"
    assert any("overrides" in d.message for d in result.diagnostics)


def test_missing_roots_are_skipped(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("one")
    result = SkillScanner([tmp_path / "nope", tmp_path / "lib"]).scan()
    assert list(result.skills) == ["one"]
    assert result.diagnostics == ()


def test_a_root_that_is_itself_a_skill(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "solo")
    assert names(folder) == ["solo"]


def test_a_skill_with_too_many_files_is_refused(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("big", files={f"data/{i}.txt": "x" for i in range(12)})
    result = SkillScanner([tmp_path / "lib"], max_package_files=10).scan()
    assert result.skills == {}
    assert any(d.field == "package" and d.fatal for d in result.diagnostics)


def age(root: Path, seconds: int = 3600) -> None:
    """Set every mtime under `root` well into the past (out of the racy window)."""
    old = time.time() - seconds
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(folder, name), (old, old))
        os.utime(folder, (old, old))


def test_unchanged_rescan_only_stats(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("one", files={"scripts/a.py": "print(1)\n"})
    make_skill("kit/two")
    age(tmp_path / "lib")
    scanner = SkillScanner([tmp_path / "lib"])
    first = scanner.scan()
    assert scanner.full_walks == 1
    assert scanner.scan() is first
    assert scanner.full_walks == 1  # proved unchanged without listing any folder


@pytest.mark.parametrize(
    "change",
    ["add-in-subfolder", "remove-file", "edit-content", "new-skill", "rename-folder"],
)
def test_fast_path_notices_every_kind_of_change(
    tmp_path: Path, make_skill: MakeSkill, change: str
) -> None:
    one = make_skill("one", files={"scripts/a.py": "print(1)\n"})
    make_skill("kit/two")
    age(tmp_path / "lib")
    scanner = SkillScanner([tmp_path / "lib"])
    first = scanner.scan()
    if change == "add-in-subfolder":
        (one / "scripts" / "b.py").write_text("print(2)\n")
    elif change == "remove-file":
        (one / "scripts" / "a.py").unlink()
    elif change == "edit-content":
        (one / "scripts" / "a.py").write_text("print('changed')\n")
    elif change == "new-skill":
        make_skill("kit/three")
    else:
        (tmp_path / "lib" / "kit").rename(tmp_path / "lib" / "toolkit")
    second = scanner.scan()
    assert scanner.full_walks == 2
    assert second is not first
    if change == "new-skill":
        assert "three" in second.skills
    elif change == "rename-folder":
        assert second.skills["two"].path == tmp_path / "lib" / "toolkit" / "two"
    else:
        assert second.skills["one"].version != first.skills["one"].version
        assert second.skills["one"].version == skill_version(one)


def test_a_root_that_appears_later_is_noticed(tmp_path: Path) -> None:
    scanner = SkillScanner([tmp_path / "later"])
    assert scanner.scan().skills == {}
    write_skill(tmp_path / "later" / "fresh")
    assert list(scanner.scan().skills) == ["fresh"]


def test_racy_edit_with_same_size_and_mtime_is_caught(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    # Filesystem clocks are coarse: a write in the same tick as the scan keeps mtime and size.
    folder = make_skill("racy", description="Version A of the text.")
    skill_md = folder / "SKILL.md"
    scanner = SkillScanner([tmp_path / "lib"])
    first = scanner.scan()
    stamp = skill_md.stat().st_mtime_ns
    skill_md.write_text(skill_md.read_text().replace("Version A", "Version B"))
    os.utime(skill_md, ns=(stamp, stamp))
    second = scanner.scan()
    assert second.skills["racy"].description == "Version B of the text."
    assert second.skills["racy"].version != first.skills["racy"].version


def test_old_entries_are_trusted_and_not_rehashed(
    tmp_path: Path, make_skill: MakeSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_skill("one")
    two = make_skill("two")
    age(tmp_path / "lib")
    scanner = SkillScanner([tmp_path / "lib"])
    scanner.scan()
    from skillweave.skills.discovery import _cache

    hashed: list[list[str]] = []
    original = _cache.package_version

    def counting(files: object, **kwargs: object) -> str:
        listed = list(files)  # type: ignore[call-overload]
        hashed.append(sorted(rel for rel, _ in listed))
        return original(listed, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_cache, "package_version", counting)
    (two / "notes.md").write_text("new\n")
    scanner.scan()
    assert hashed == [["SKILL.md", "notes.md"]]
