"""Tests for skill packages: deterministic builds and refusal of every unsafe archive."""

from __future__ import annotations

import io
import os
import stat
import struct
import zipfile
from pathlib import Path

import pytest

from skillweave.errors import PackageError, UnsafePackageError
from skillweave.skills.package import (
    MAX_PATH_DEPTH,
    PackageLimits,
    _copy_entry,
    build_package,
    extract_package,
    write_package,
)

SKILL_MD = b"---\nname: demo\ndescription: A demo skill.\n---\n\nDo the thing.\n"


def _make_zip(path: Path, entries: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    """Write a ZIP with exactly these entries (names are stored as given, unsanitized)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return path


def _with_mode(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _assert_refused(
    source: Path | bytes, dest: Path, entry: str, *, limits: PackageLimits | None = None
) -> UnsafePackageError:
    kwargs = {"limits": limits} if limits else {}
    with pytest.raises(UnsafePackageError) as caught:
        extract_package(source, dest, **kwargs)
    assert caught.value.entry == entry
    assert caught.value.reason
    assert not dest.exists(), "nothing may be written when a package is refused"
    return caught.value


@pytest.fixture
def skill_tree(tmp_path: Path) -> Path:
    """A parent skill with a script, a reference and one child skill."""
    root = tmp_path / "src" / "demo"
    (root / "scripts").mkdir(parents=True)
    (root / "references").mkdir()
    (root / "child" / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_bytes(SKILL_MD)
    run = root / "scripts" / "run.py"
    run.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    run.chmod(0o755)
    secret = root / "references" / "notes.md"
    secret.write_text("# Notes\n" * 50)
    secret.chmod(0o600)
    (root / "child" / "SKILL.md").write_bytes(SKILL_MD.replace(b"demo", b"child"))
    child_run = root / "child" / "scripts" / "go.sh"
    child_run.write_text("#!/bin/sh\necho go\n")
    child_run.chmod(0o755)
    return root


def _tree_snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        path.relative_to(root).as_posix(): (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


# --- building ---------------------------------------------------------------------------------


def test_build_layout_is_sorted_under_the_skill_folder_name(skill_tree: Path) -> None:
    with zipfile.ZipFile(io.BytesIO(build_package(skill_tree))) as archive:
        names = archive.namelist()
        infos = archive.infolist()
    assert names == [
        "demo/SKILL.md",
        "demo/child/SKILL.md",
        "demo/child/scripts/go.sh",
        "demo/references/notes.md",
        "demo/scripts/run.py",
    ]
    for info in infos:
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        assert info.compress_type == zipfile.ZIP_DEFLATED
    modes = {info.filename: stat.S_IMODE(info.external_attr >> 16) for info in infos}
    assert modes["demo/scripts/run.py"] == 0o755
    assert modes["demo/references/notes.md"] == 0o644


def test_build_is_deterministic_across_mtimes_and_creation_order(
    skill_tree: Path, tmp_path: Path
) -> None:
    first = build_package(skill_tree)
    for index, path in enumerate(sorted(skill_tree.rglob("*"))):
        os.utime(path, (1_000_000 + index, 2_000_000 + index * 7))
    assert build_package(skill_tree) == first

    # Same files created in the opposite order elsewhere: scandir order differs, bytes do not.
    other = tmp_path / "elsewhere" / "demo"
    for source in sorted(skill_tree.rglob("*"), reverse=True):
        target = other / source.relative_to(skill_tree)
        if source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
            target.chmod(stat.S_IMODE(source.stat().st_mode))
    assert build_package(other) == first


def test_build_requires_skill_md(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-skill"
    folder.mkdir()
    (folder / "README.md").write_text("hello")
    with pytest.raises(PackageError, match=r"no SKILL\.md"):
        build_package(folder)


def test_build_refuses_an_empty_folder(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    with pytest.raises(PackageError, match="no files"):
        build_package(folder)


def test_build_refuses_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="not a folder"):
        build_package(tmp_path / "missing")


def test_build_refuses_over_the_limits(skill_tree: Path) -> None:
    with pytest.raises(PackageError, match="file package limit"):
        build_package(skill_tree, limits=PackageLimits(max_files=2))
    with pytest.raises(PackageError, match="bytes"):
        build_package(skill_tree, limits=PackageLimits(max_bytes=100))
    (skill_tree / "zeros.bin").write_bytes(bytes(1024 * 1024))
    with pytest.raises(PackageError, match=r"zeros\.bin compresses"):
        build_package(skill_tree)


def test_write_package_is_atomic_and_matches_build(skill_tree: Path, tmp_path: Path) -> None:
    dest = tmp_path / "out" / "demo.zip"
    dest.parent.mkdir()
    dest.write_bytes(b"old")
    assert write_package(skill_tree, dest) == dest
    assert dest.read_bytes() == build_package(skill_tree)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["demo.zip"]


def test_write_package_leaves_nothing_when_build_fails(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    dest = tmp_path / "out" / "x.zip"
    with pytest.raises(PackageError):
        write_package(folder, dest)
    assert not dest.exists()


# --- happy extraction -------------------------------------------------------------------------


def test_round_trip_keeps_files_and_modes(skill_tree: Path, tmp_path: Path) -> None:
    dest = tmp_path / "out"
    extract_package(build_package(skill_tree), dest)
    expected = _tree_snapshot(skill_tree)
    expected["references/notes.md"] = (expected["references/notes.md"][0], 0o644)
    assert _tree_snapshot(dest / "demo") == expected
    assert stat.S_IMODE((dest / "demo" / "scripts" / "run.py").stat().st_mode) == 0o755


def test_extract_from_a_file_returns_parent_then_child(skill_tree: Path, tmp_path: Path) -> None:
    package = write_package(skill_tree, tmp_path / "demo.zip")
    dest = tmp_path / "out"
    assert extract_package(package, dest) == [dest / "demo", dest / "demo" / "child"]


def test_extract_accepts_directory_entries_and_root_skill(tmp_path: Path) -> None:
    source = _make_zip(
        tmp_path / "p.zip",
        [("SKILL.md", SKILL_MD), ("docs/", b""), ("sub/SKILL.md", SKILL_MD)],
    )
    dest = tmp_path / "out"
    assert extract_package(source, dest) == [dest, dest / "sub"]
    assert (dest / "docs").is_dir()


def test_extract_skill_only_writes_the_top_skill_straight_into_dest(
    skill_tree: Path, tmp_path: Path
) -> None:
    """The executor's way: the one top skill's files land in `dest` itself (no folder of the
    archive's making around them), and nothing outside that skill is written."""
    package = write_package(skill_tree, tmp_path / "demo.zip")
    with zipfile.ZipFile(package, "a") as archive:
        archive.writestr("stray.txt", b"outside the skill")
    dest = tmp_path / "skill"
    dest.mkdir()
    assert extract_package(package, dest, skill_only=True) == [dest, dest / "child"]
    extracted = tmp_path / "whole"
    extract_package(package, extracted)
    assert _tree_snapshot(dest) == _tree_snapshot(extracted / "demo")
    assert sorted(p.name for p in extracted.iterdir()) == ["demo", "stray.txt"]
    assert not (dest / "stray.txt").exists()


def test_extract_skill_only_of_a_root_skill(tmp_path: Path) -> None:
    source = _make_zip(tmp_path / "p.zip", [("SKILL.md", SKILL_MD), ("scripts/run.py", b"1")])
    dest = tmp_path / "out"
    assert extract_package(source, dest, skill_only=True) == [dest]
    assert (dest / "scripts" / "run.py").read_bytes() == b"1"


def test_extract_skill_only_refuses_several_skills_at_the_top(tmp_path: Path) -> None:
    source = _make_zip(tmp_path / "p.zip", [("a/SKILL.md", SKILL_MD), ("b/SKILL.md", SKILL_MD)])
    with pytest.raises(PackageError, match="several skills at its top \\('a', 'b'\\)"):
        extract_package(source, tmp_path / "out", skill_only=True)
    assert not (tmp_path / "out").exists()


def test_extract_skill_only_checks_what_it_does_not_write(tmp_path: Path) -> None:
    """An unsafe entry beside the skill refuses the whole package, as without skill_only."""
    bomb = _make_zip(tmp_path / "b.zip", [("s/SKILL.md", SKILL_MD), ("zeros", bytes(10**7))])
    with pytest.raises(UnsafePackageError) as caught:
        extract_package(bomb, tmp_path / "out", skill_only=True)
    assert caught.value.entry == "zeros"
    sized = _make_zip(tmp_path / "c.zip", [("s/SKILL.md", SKILL_MD), ("big", b"x" * 2000)])
    small = PackageLimits(max_bytes=1000)
    with pytest.raises(UnsafePackageError):
        extract_package(sized, tmp_path / "out", skill_only=True, limits=small)
    assert not (tmp_path / "out").exists()


def test_extract_drops_setuid_and_keeps_executable_bit(tmp_path: Path) -> None:
    source = _make_zip(
        tmp_path / "p.zip",
        [
            ("s/SKILL.md", SKILL_MD),
            (_with_mode("s/tool", stat.S_IFREG | 0o4755), b"#!/bin/sh\n"),
            (_with_mode("s/data", stat.S_IFREG | 0o666), b"x"),
        ],
    )
    dest = tmp_path / "out"
    extract_package(source, dest)
    assert stat.S_IMODE((dest / "s" / "tool").stat().st_mode) == 0o755
    assert stat.S_IMODE((dest / "s" / "data").stat().st_mode) == 0o644


def test_extract_refuses_to_overwrite_an_existing_file(skill_tree: Path, tmp_path: Path) -> None:
    dest = tmp_path / "out"
    (dest / "demo").mkdir(parents=True)
    (dest / "demo" / "SKILL.md").write_text("mine")
    with pytest.raises(PackageError, match=r"SKILL\.md already exists") as caught:
        extract_package(build_package(skill_tree), dest)
    assert not isinstance(caught.value, UnsafePackageError)
    assert (dest / "demo" / "SKILL.md").read_text() == "mine"
    assert sorted(p.name for p in (dest / "demo").iterdir()) == ["SKILL.md"]


def test_extract_refuses_to_write_through_a_symlink_in_dest(
    skill_tree: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "demo").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PackageError, match="not a folder"):
        extract_package(build_package(skill_tree), dest)
    assert list(outside.iterdir()) == []


def test_extract_requires_a_skill_md(tmp_path: Path) -> None:
    source = _make_zip(tmp_path / "p.zip", [("s/readme.txt", b"hi")])
    dest = tmp_path / "out"
    with pytest.raises(PackageError, match=r"no SKILL\.md in package"):
        extract_package(source, dest)
    assert not dest.exists()


# --- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../evil.txt", "a/../../evil", "s/..\\..\\evil"])
def test_refuses_path_traversal(tmp_path: Path, name: str) -> None:
    source = _make_zip(tmp_path / "p.zip", [("s/SKILL.md", SKILL_MD), (name, b"pwned")])
    error = _assert_refused(source, tmp_path / "out", name)
    assert "traversal" in error.reason
    assert not (tmp_path / "evil.txt").exists()


@pytest.mark.parametrize("name", ["/etc/x", "\\x", "C:\\x", "C:/x", "c:x"])
def test_refuses_absolute_paths(tmp_path: Path, name: str) -> None:
    source = _make_zip(tmp_path / "p.zip", [("s/SKILL.md", SKILL_MD), (name, b"pwned")])
    error = _assert_refused(source, tmp_path / "out", name)
    assert error.reason == "absolute path"


def test_refuses_symlink_entries(tmp_path: Path) -> None:
    link = _with_mode("s/link", stat.S_IFLNK | 0o777)
    source = _make_zip(tmp_path / "p.zip", [("s/SKILL.md", SKILL_MD), (link, b"/etc/passwd")])
    error = _assert_refused(source, tmp_path / "out", "s/link")
    assert "symbolic link" in error.reason


def test_refuses_special_files(tmp_path: Path) -> None:
    fifo = _with_mode("s/pipe", stat.S_IFIFO | 0o644)
    source = _make_zip(tmp_path / "p.zip", [("s/SKILL.md", SKILL_MD), (fifo, b"")])
    _assert_refused(source, tmp_path / "out", "s/pipe")


def test_refuses_nul_bytes_in_names(tmp_path: Path) -> None:
    source = _make_zip(tmp_path / "p.zip", [("s/SKILL.md", SKILL_MD), ("s/a.txtXsh", b"x")])
    # zipfile truncates names at NUL on write, so patch the byte in after the fact.
    data = source.read_bytes().replace(b"a.txtXsh", b"a.txt\x00sh")
    _assert_refused(data, tmp_path / "out", "s/a.txt\x00sh")


def test_refuses_a_compression_bomb(tmp_path: Path) -> None:
    source = _make_zip(tmp_path / "p.zip", [("s/SKILL.md", SKILL_MD), ("s/zeros", bytes(10**7))])
    error = _assert_refused(source, tmp_path / "out", "s/zeros")
    assert "ratio" in error.reason


def test_small_highly_compressible_files_pass(tmp_path: Path) -> None:
    source = _make_zip(tmp_path / "p.zip", [("s/SKILL.md", SKILL_MD), ("s/pad", bytes(60_000))])
    extract_package(source, tmp_path / "out")
    assert (tmp_path / "out" / "s" / "pad").stat().st_size == 60_000


def test_refuses_too_many_files(tmp_path: Path) -> None:
    entries = [("s/SKILL.md", SKILL_MD)] + [(f"s/f{i}.txt", b"x") for i in range(5)]
    source = _make_zip(tmp_path / "p.zip", entries)
    _assert_refused(source, tmp_path / "out", "s/f4.txt", limits=PackageLimits(max_files=5))


def test_refuses_too_many_bytes(tmp_path: Path) -> None:
    entries = [("s/SKILL.md", b"x" * 60), ("s/a.txt", b"y" * 60)]
    source = _make_zip(tmp_path / "p.zip", entries)
    error = _assert_refused(
        source, tmp_path / "out", "s/a.txt", limits=PackageLimits(max_bytes=100)
    )
    assert "100 bytes" in error.reason


def test_refuses_a_header_that_understates_the_size(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("s/SKILL.md", SKILL_MD)
        archive.writestr("s/data.txt", b"A" * 5000)
        offset = archive.getinfo("s/data.txt").header_offset
    data = bytearray(buffer.getvalue())
    # Declare 10 bytes instead of 5000, in the local header and in the central directory.
    assert data[offset : offset + 4] == b"PK\x03\x04"
    struct.pack_into("<I", data, offset + 22, 10)
    central = data.rindex(b"PK\x01\x02")  # the last central record is s/data.txt's
    struct.pack_into("<I", data, central + 24, 10)
    dest = tmp_path / "out"
    error = _assert_refused(bytes(data), dest, "s/data.txt")
    assert "header" in error.reason


def test_streaming_guard_counts_real_bytes() -> None:
    with pytest.raises(UnsafePackageError) as caught:
        _copy_entry(io.BytesIO(b"x" * 100), io.BytesIO(), entry="e", declared=10, budget=1000)
    assert caught.value.entry == "e"
    assert "header" in caught.value.reason
    with pytest.raises(UnsafePackageError, match="bytes uncompressed"):
        _copy_entry(io.BytesIO(b"x" * 100), io.BytesIO(), entry="e", declared=100, budget=50)
    out = io.BytesIO()
    assert _copy_entry(io.BytesIO(b"abc"), out, entry="e", declared=3, budget=3) == 3
    assert out.getvalue() == b"abc"


@pytest.mark.parametrize(
    ("first", "second"),
    [("s/a.txt", "s/a.txt"), ("s/README.md", "s/readme.MD"), ("s/x.txt", "s\\x.txt")],
)
def test_refuses_duplicate_names(tmp_path: Path, first: str, second: str) -> None:
    entries = [("s/SKILL.md", SKILL_MD), (first, b"1"), (second, b"2")]
    if first == second:
        with pytest.warns(UserWarning, match="Duplicate name"):
            source = _make_zip(tmp_path / "p.zip", entries)
    else:
        source = _make_zip(tmp_path / "p.zip", entries)
    error = _assert_refused(source, tmp_path / "out", second)
    assert error.reason == "duplicate entry"


def test_refuses_a_file_and_folder_with_one_name(tmp_path: Path) -> None:
    entries = [("s/SKILL.md", SKILL_MD), ("s/x", b"file"), ("s/x/y", b"nested")]
    source = _make_zip(tmp_path / "p.zip", entries)
    _assert_refused(source, tmp_path / "out", "s/x/y")


def test_refuses_unsupported_compression(tmp_path: Path) -> None:
    source = tmp_path / "p.zip"
    with zipfile.ZipFile(source, "w", compression=zipfile.ZIP_BZIP2) as archive:
        archive.writestr("s/SKILL.md", SKILL_MD)
    _assert_refused(source, tmp_path / "out", "s/SKILL.md")


@pytest.mark.parametrize("content", [b"", b"this is not a zip", b"PK\x03\x04garbage" * 10])
def test_refuses_a_non_zip(tmp_path: Path, content: bytes) -> None:
    source = tmp_path / "p.zip"
    source.write_bytes(content)
    dest = tmp_path / "out"
    with pytest.raises(PackageError, match="not a ZIP archive"):
        extract_package(source, dest)
    with pytest.raises(PackageError, match="not a ZIP archive"):
        extract_package(content, dest)
    assert not dest.exists()


def test_refuses_a_missing_package_file(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="no such package"):
        extract_package(tmp_path / "nope.zip", tmp_path / "out")


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_files"):
        PackageLimits(max_files=0)


def test_failure_mid_write_keeps_what_was_already_in_dest(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("s/SKILL.md", SKILL_MD)
        archive.writestr("s/data.txt", b"A" * 5000)
    data = bytearray(buffer.getvalue())
    struct.pack_into("<I", data, data.rindex(b"PK\x01\x02") + 24, 10)
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(UnsafePackageError):
        extract_package(bytes(data), dest)
    # s/SKILL.md was written before the bad entry was reached; the rollback removed it.
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]


def test_a_package_nested_past_the_depth_limit_is_refused_both_ways(tmp_path: Path) -> None:
    """A tree of any depth makes every walk over it a recursion an attacker sizes (issue 38):
    neither extraction nor building takes a path deeper than MAX_PATH_DEPTH."""
    deep = "demo/" + "a/" * MAX_PATH_DEPTH + "x.txt"
    archive = _make_zip(tmp_path / "deep.zip", [("demo/SKILL.md", SKILL_MD), (deep, b"x")])
    with pytest.raises(UnsafePackageError, match=f"nested more than {MAX_PATH_DEPTH} folders"):
        extract_package(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    at_limit = "demo/" + "a/" * (MAX_PATH_DEPTH - 2) + "x.txt"
    archive = _make_zip(tmp_path / "ok.zip", [("demo/SKILL.md", SKILL_MD), (at_limit, b"x")])
    extract_package(archive, tmp_path / "fine")
    assert (tmp_path / "fine" / at_limit).read_bytes() == b"x"

    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(SKILL_MD)
    inner = folder.joinpath(*["a"] * MAX_PATH_DEPTH)
    inner.mkdir(parents=True)
    (inner / "x.txt").write_bytes(b"x")
    with pytest.raises(PackageError, match=f"nested more than {MAX_PATH_DEPTH} folders deep"):
        build_package(folder)
