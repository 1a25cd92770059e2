"""What a killed sandbox process leaves is swept; what a live one uses never is.

Real folders, files and locks; the dead owner is a real process killed with SIGKILL.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillweave.sandbox.leftovers import LOCK_NAME, hold_entry, sweep_leftovers

PREFIX = "skillweave-test-"
HOUR_AGO = time.time() - 3600


def _aged(path: Path) -> Path:
    os.utime(path, (HOUR_AGO, HOUR_AGO), follow_symlinks=False)
    return path


def _aged_folder(folder: Path) -> Path:
    folder.mkdir()
    (folder / "kept").write_text("x")
    return _aged(folder)


def _aged_file(path: Path) -> Path:
    path.write_bytes(b"half a fetch")
    return _aged(path)


def _dead_owners_folder(parent: Path, name: str) -> Path:
    """A folder whose owner took its lock, filled it and was killed with SIGKILL."""
    folder = parent / name
    folder.mkdir()
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, pathlib\n"
            "from skillweave.sandbox import hold_entry\n"
            "folder = pathlib.Path(sys.argv[1])\n"
            "hold_entry(folder)\n"
            "(folder / 'deep' / 'er').mkdir(parents=True)\n"
            "(folder / 'deep' / 'er' / 'file').write_text('x')\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n",
            str(folder),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as owner:
        assert owner.stdout is not None
        assert owner.stdout.readline() == "held\n"
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
    return _aged(folder)


def test_a_folder_whose_owner_was_killed_is_removed(tmp_path: Path) -> None:
    folder = _dead_owners_folder(tmp_path, PREFIX + "dead")

    assert sweep_leftovers(tmp_path, (PREFIX,)) == [folder]
    assert not folder.exists()


def test_a_folder_whose_owner_lives_is_kept_however_old(tmp_path: Path) -> None:
    folder = tmp_path / (PREFIX + "live")
    folder.mkdir()
    # Held through another open file: its lock conflicts with the sweep's as another's would.
    alive = hold_entry(folder)
    try:
        _aged(folder)
        assert sweep_leftovers(tmp_path, (PREFIX,)) == []
        assert (folder / LOCK_NAME).exists()
    finally:
        os.close(alive)
    assert sweep_leftovers(tmp_path, (PREFIX,)) == [folder]  # let go: now it is a dead owner's


def test_a_young_folder_is_kept_even_unlocked(tmp_path: Path) -> None:
    """Its owner may have made it and not taken its lock yet."""
    folder = tmp_path / (PREFIX + "young")
    folder.mkdir()
    os.close(hold_entry(folder))

    assert sweep_leftovers(tmp_path, (PREFIX,)) == []
    assert sweep_leftovers(tmp_path, (PREFIX,), min_age=0) == [folder]


def test_what_has_no_lock_file_or_another_name_is_not_judged(tmp_path: Path) -> None:
    legacy = _aged_folder(tmp_path / (PREFIX + "legacy"))  # a release before the lock's
    other = _dead_owners_folder(tmp_path, "someone-else-dead")

    assert sweep_leftovers(tmp_path, (PREFIX,)) == []
    assert legacy.exists()
    assert other.exists()


def test_a_symlink_with_the_name_is_never_followed(tmp_path: Path) -> None:
    target = _dead_owners_folder(tmp_path, "target")
    link = tmp_path / (PREFIX + "link")
    link.symlink_to(target, target_is_directory=True)
    _aged(link)

    assert sweep_leftovers(tmp_path, (PREFIX,)) == []
    assert (target / "deep" / "er" / "file").exists()


def test_a_lock_that_is_not_a_file_is_not_taken(tmp_path: Path) -> None:
    folder = _aged_folder(tmp_path / (PREFIX + "odd"))
    (folder / LOCK_NAME).mkdir()
    _aged(folder)

    assert sweep_leftovers(tmp_path, (PREFIX,)) == []
    assert folder.exists()


def test_a_file_is_its_own_lock(tmp_path: Path) -> None:
    dead = _aged_file(tmp_path / (PREFIX + "dead.part"))
    live = tmp_path / (PREFIX + "live.part")
    fd = os.open(live, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _aged(live)
        assert sweep_leftovers(tmp_path, (PREFIX,)) == [dead]
        assert live.exists()
        assert not dead.exists()
    finally:
        os.close(fd)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_another_users_folder_is_left_to_them(tmp_path: Path) -> None:
    folder = _dead_owners_folder(tmp_path, PREFIX + "theirs")
    os.chown(folder, 65534, 65534)
    _aged(folder)

    assert sweep_leftovers(tmp_path, (PREFIX,)) == []
    assert folder.exists()


def test_a_missing_parent_sweeps_nothing(tmp_path: Path) -> None:
    assert sweep_leftovers(tmp_path / "absent", (PREFIX,)) == []
