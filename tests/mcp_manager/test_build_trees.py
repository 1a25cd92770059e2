"""What an environment build left, walked without recursion (issue 38, "outputs of any shape"):
a build's own scripts may leave a tree of any depth; measuring and packing it must fail the
build in one line, never exhaust the interpreter's recursion."""

from __future__ import annotations

import os
import re
import tarfile
from pathlib import Path

import pytest

from mcp_manager.environments._failure import BuildFailed
from mcp_manager.environments._packing import MAX_BUILD_DEPTH, pack, tree_bytes
from skillweave.skills.files import remove_tree


def _deep(root: Path, levels: int, *, name: str = "d") -> None:
    """`levels` nested folders under `root`, made from open folders (the path outgrows
    PATH_MAX), with a one-byte file at the bottom."""
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=folder)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = inner
        fd = os.open("x", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
        os.write(fd, b"x")
        os.close(fd)
    finally:
        os.close(folder)


@pytest.fixture
def build(tmp_path: Path) -> Path:
    folder = tmp_path / "build"
    (folder / "python" / "pkg").mkdir(parents=True)
    (folder / "python" / "pkg" / "__init__.py").write_text("x = 1\n", encoding="utf-8")
    yield folder
    remove_tree(folder)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("d", f"a tree deeper than {MAX_BUILD_DEPTH} levels under"),
        ("n" * 200, "an entry under"),  # past PATH_MAX first: the name is too long to read
    ],
    ids=["deep", "deep-and-long"],
)
def test_a_build_deeper_than_the_bound_fails_in_one_line(
    build: Path, tmp_path: Path, name: str, says: str
) -> None:
    _deep(build / "python", 3_000, name=name)
    # The watcher measuring a running build stops it there; packing refuses it.
    with pytest.raises(BuildFailed, match=re.escape(f"{says} build/")):
        tree_bytes(build)
    with pytest.raises(BuildFailed, match=re.escape(f"{says} python/")) as failed:
        pack(build, tmp_path / "env.tar.gz", {"key": "k"}, 10**9)
    assert "\n" not in failed.value.reason
    assert not (tmp_path / "env.tar.gz").exists()


def test_a_build_within_the_bound_packs_in_the_order_os_walk_gave(
    build: Path, tmp_path: Path
) -> None:
    _deep(build / "python", MAX_BUILD_DEPTH - 1)
    (build / "python" / "a.txt").write_text("a", encoding="utf-8")
    archive = tmp_path / "env.tar.gz"
    pack(build, archive, {"key": "k"}, 10**9)
    with tarfile.open(archive) as packed:
        names = [m.name for m in packed.getmembers() if m.name.startswith("python/")]
    expected = ["python/d", "python/pkg", "python/a.txt"]
    assert names[:3] == expected, names[:3]
    assert names.index("python/pkg/__init__.py") > names.index("python/pkg")
    deepest = "python/" + "/".join(["d"] * (MAX_BUILD_DEPTH - 1)) + "/x"
    assert deepest in names
    assert tree_bytes(build / "python") == 1 + 1 + len("x = 1\n")
