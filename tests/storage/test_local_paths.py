"""Where the local store puts a key: the path resolved by looking only beneath the root is the
one ``os.path.realpath`` gives, for keys that exist, do not yet, run through a file, or pass a
symlink planted in the tree (to inside the root or out of it: the latter refused)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillweave.errors import InvalidKeyError
from skillweave.storage._local_files import LocalPaths


@pytest.fixture
def paths(tmp_path: Path) -> LocalPaths:
    root = (tmp_path / "store").resolve()
    (root / "runs" / "r1" / "transcript").mkdir(parents=True)
    (root / "runs" / "r1" / "transcript" / "00000001.json").write_text("{}")
    (root / ".meta" / "runs" / "r1").mkdir(parents=True)
    (root / "runs" / "alias").symlink_to(root / "runs" / "r1", target_is_directory=True)
    (root / ".meta" / "runs" / "alias").symlink_to(root / "runs", target_is_directory=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "runs" / "evil").symlink_to(outside, target_is_directory=True)
    (root / ".meta" / "runs" / "evil").symlink_to(outside, target_is_directory=True)
    return LocalPaths(root)


@pytest.mark.parametrize(
    "key",
    [
        "runs/r1/transcript/00000001.json",  # exists
        "runs/r1/transcript/00000002.json",  # not yet
        "runs/r2/transcript/00000001.json",  # not even its folder
        "runs/r1/transcript/00000001.json/x",  # through a file
        "runs/alias/transcript/00000001.json",  # a symlink to inside the root
    ],
)
def test_a_key_resolves_where_realpath_says(paths: LocalPaths, key: str) -> None:
    parts = key.split("/")
    assert paths.data(key) == Path(os.path.realpath(os.path.join(paths.root, *parts)))
    assert paths.meta(key) == Path(os.path.realpath(os.path.join(paths.root, ".meta", *parts)))


def test_a_symlink_planted_in_the_tree_cannot_lead_outside(paths: LocalPaths) -> None:
    with pytest.raises(InvalidKeyError, match="outside the store's root"):
        paths.data("runs/evil/secret")
    with pytest.raises(InvalidKeyError, match="outside the store's root"):
        paths.meta("runs/evil/secret")
