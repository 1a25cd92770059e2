"""The one atomic, durable file write (skillweave.atomic_write)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillweave.atomic_write import atomic_file, write_atomic


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls


def test_a_write_replaces_the_file_whole_and_syncs_the_file_and_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "lock.json"
    target.write_bytes(b"old")
    calls = _fsyncs(monkeypatch)
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert len(calls) == 2  # the file, then the folder that holds its new name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lock.json"]


def test_the_mode_is_the_callers_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "shared", b"x")
        write_atomic(tmp_path / "secret", b"x", mode=0o600)
    finally:
        os.umask(old)
    assert (tmp_path / "shared").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "secret").stat().st_mode & 0o777 == 0o600


def test_a_failure_inside_the_block_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "package.zip"
    target.write_bytes(b"old")

    def interrupted() -> None:
        with atomic_file(target) as out:
            out.write(b"half")
            raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        interrupted()
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["package.zip"]


def test_exclusive_never_writes_over_a_file_nor_through_a_link(tmp_path: Path) -> None:
    existing = tmp_path / "key.pem"
    existing.write_bytes(b"kept")
    with pytest.raises(FileExistsError):
        write_atomic(existing, b"new", exclusive=True)
    assert existing.read_bytes() == b"kept"
    elsewhere = tmp_path / "elsewhere"
    link = tmp_path / "planted"
    link.symlink_to(elsewhere)  # dangling: a plain open(O_CREAT) would follow it
    with pytest.raises(FileExistsError):
        write_atomic(link, b"secret", exclusive=True)
    assert not elsewhere.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key.pem", "planted"]
    write_atomic(tmp_path / "fresh.pem", b"new", exclusive=True)
    assert (tmp_path / "fresh.pem").read_bytes() == b"new"


def test_not_durable_skips_every_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fsyncs(monkeypatch)
    with atomic_file(tmp_path / "cache", durable=False) as out:
        out.write(b"x")
    assert calls == []
    assert (tmp_path / "cache").read_bytes() == b"x"
