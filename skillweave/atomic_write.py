"""Atomic, durable file writes: the one way every writer in skillweave publishes a file.

A reader of the destination sees the old file or the whole new one, never a part; once the
call returns, the new file and its name survive a power cut. The recipe: write a temporary file
beside the destination (same directory, so same file system), flush and ``fsync`` it, set its
mode, then ``os.replace`` it onto the destination (or ``os.link`` it there when the destination
must not exist yet), and ``fsync`` the directory so the rename itself is on disk. A write that
fails or is interrupted removes its temporary file; a crash leaves at most a hidden
``.{name}.*.tmp`` beside the destination, which no reader takes for the file.

Callers: the local artifact store, skill packages, signing keys and trust files, the skills
lock, and the sandbox executor's ready file. They map :class:`OSError` to their own errors.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final

__all__ = ["SHARED_MODE", "atomic_file", "fsync_dir", "write_atomic"]

SHARED_MODE: Final = 0o644
"""The mode of a published file unless the caller asks for another (0o600 for secrets)."""


@contextlib.contextmanager
def atomic_file(
    path: Path,
    *,
    mode: int = SHARED_MODE,
    exclusive: bool = False,
    durable: bool = True,
    prefix: str | None = None,
) -> Iterator[BinaryIO]:
    """A binary file to write that appears at `path` whole when the block ends without error.

    Args:
        path: the destination.
        mode: its permission bits (set on the temporary file, whatever the umask).
        exclusive: publish only if `path` does not exist yet (``FileExistsError`` otherwise,
            and nothing changes); the default replaces what is there.
        durable: ``fsync`` the file and its directory; off only where a caller trades
            durability for speed on purpose (a test store on tmpfs).
        prefix: the temporary file's name prefix (default ``.{name}.``); a store that hides
            its temporaries from listings by prefix passes its own.

    Raises:
        FileExistsError: `exclusive` and `path` exists.
        OSError: the file cannot be written or published; nothing is left behind.
    """
    fd, temp = tempfile.mkstemp(
        dir=path.parent, prefix=prefix if prefix is not None else f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            yield out
            out.flush()
            if durable:
                os.fsync(out.fileno())
        if exclusive:
            os.link(temp, path)
        else:
            os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)  # gone after os.replace; after os.link, the second name goes
    if durable:
        fsync_dir(path.parent)


def write_atomic(
    path: Path, data: bytes, *, mode: int = SHARED_MODE, exclusive: bool = False
) -> None:
    """Publish `data` at `path` atomically and durably (:func:`atomic_file`)."""
    with atomic_file(path, mode=mode, exclusive=exclusive) as out:
        out.write(data)


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
