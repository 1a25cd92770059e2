"""`Capture`: a stream kept whole up to its cap and hashed, in memory while it is small and in
its file once it grows past that or is served whole; the same bytes and digest either way."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest

from sandbox_executor.capture import Capture


def _fed(path: Path, chunks: list[bytes], *, max_bytes: int = 1000) -> Capture:
    capture = Capture(path, max_bytes=max_bytes, memory_bytes=64)
    for chunk in chunks:
        capture.write(chunk)
    capture.close()
    return capture


def test_a_small_stream_stays_in_memory_until_it_is_served(tmp_path: Path) -> None:
    capture = _fed(tmp_path / "stdout", [b"hello ", b"world\n"])
    assert not (tmp_path / "stdout").exists()  # no file made for it
    assert capture.head(100) == ("hello world\n", False)
    assert capture.head(5) == ("hello", True)

    described = capture.describe("stdout")
    assert (tmp_path / "stdout").read_bytes() == b"hello world\n"
    assert stat.S_IMODE((tmp_path / "stdout").stat().st_mode) == 0o600
    assert (described.size, described.sha256) == (12, hashlib.sha256(b"hello world\n").hexdigest())
    capture.write_out()  # again: nothing changes
    assert (tmp_path / "stdout").read_bytes() == b"hello world\n"


@pytest.mark.parametrize("sizes", [[65], [64, 1], [40, 40, 40], [10] * 30])
def test_a_stream_past_its_memory_goes_to_its_file_whole_and_in_order(
    tmp_path: Path, sizes: list[int]
) -> None:
    chunks = [bytes([ord("a") + n % 26]) * size for n, size in enumerate(sizes)]
    whole = b"".join(chunks)
    capture = _fed(tmp_path / "stderr", chunks)
    assert (tmp_path / "stderr").read_bytes() == whole  # spilled while it ran
    assert capture.head(1000) == (whole.decode(), False)
    described = capture.describe("stderr")
    assert (described.size, described.sha256) == (len(whole), hashlib.sha256(whole).hexdigest())


def test_what_passes_the_cap_is_counted_not_kept_in_memory_or_on_disk(tmp_path: Path) -> None:
    small = _fed(tmp_path / "small", [b"x" * 30, b"y" * 30], max_bytes=40)
    assert (small.size, small.dropped) == (40, 20)
    assert small.head(100) == ("x" * 30 + "y" * 10, True)
    big = _fed(tmp_path / "big", [b"x" * 100, b"y" * 100], max_bytes=150)
    assert (big.size, big.dropped) == (150, 50)
    assert (tmp_path / "big").read_bytes() == b"x" * 100 + b"y" * 50
