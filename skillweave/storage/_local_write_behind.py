"""Write-behind durability for the local store: files published at once, made durable in the
background, and all of them by a barrier the caller awaits before it tells anyone they are.

A write made inside :func:`deferred_durability` is published as every local write is (whole,
atomically, visible at once to every reader in every process, and safe from a crash of the
writing process: the kernel holds it) but returns without waiting for the disk. Its file is
handed to the :class:`WriteBehind` given; the syncing thread fsyncs it and its folder
soon after, in batches, while the caller goes on; :meth:`WriteBehind.flush` waits until every
file handed to it is on disk, and raises if one could not be made so. Other stores ignore the
context (an S3 write is durable when it returns).

Who uses it: :class:`~skillweave.engines.transcript.TranscriptRecorder` for the runs the direct
engine registers (``DirectEngine``: a direct run lives in its process, and tells its end only
after :meth:`~skillweave.engines.transcript.TranscriptRecorder.settle`). Everything else, the
Temporal engine's activities first, writes durably before returning.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from pathlib import Path
from typing import Final

from skillweave.atomic_write import fsync_dir
from skillweave.errors import StorageError

__all__ = ["DEFERRED", "WriteBehind", "deferred_durability"]

DEFERRED: ContextVar[WriteBehind | None] = ContextVar("skillweave_write_behind", default=None)
"""Where a local store hands the files it publishes without waiting for the disk (None: it
waits)."""


_SYNCER: Final = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillweave-write-behind")
"""The one thread that fsyncs every write-behind's files (fsyncs queue on the disk's journal
anyway; a thread started per batch costs more than the batch under load). The interpreter
waits for it at exit, so what was handed to it reaches the disk."""


class WriteBehind:
    """Published files still to be made durable: fsynced, with their folders, in batches by
    the syncing thread; :meth:`flush` waits for all of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[Path] = []
        self._idle = threading.Event()
        self._idle.set()
        self._error: OSError | None = None

    def add(self, path: Path) -> None:
        """Make `path` (a file just published) and its folder durable soon (thread-safe)."""
        with self._lock:
            self._pending.append(path)
            if not self._idle.is_set():
                return  # the syncing thread takes it in its next batch
            self._idle.clear()
        _SYNCER.submit(self._drain)

    async def flush(self) -> None:
        """Until every file added so far is on disk.

        Raises:
            StorageError: one could not be made durable (the first such error).
        """
        if not self._idle.is_set():
            await asyncio.to_thread(self._idle.wait)
        if self._error is not None:
            error = self._error
            raise StorageError(
                f"local store: cannot make a written file durable: {error.strerror or error}; "
                "check the store's disk",
                code=errno.errorcode.get(error.errno or 0, type(error).__name__),
            )

    @property
    def settled(self) -> bool:
        """Whether every file added so far is on disk (or failed to get there)."""
        return self._idle.is_set()

    def _drain(self) -> None:
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._idle.set()
                    return
            try:
                for path in batch:
                    _fsync_file(path)
                for folder in dict.fromkeys(path.parent for path in batch):
                    fsync_dir(folder)
            except OSError as exc:
                with self._lock:
                    self._error = self._error or exc


def _fsync_file(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return  # deleted or replaced since: whoever did that made their own file durable
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def deferred_durability(behind: WriteBehind | None) -> Iterator[None]:
    """Local writes inside the block hand their files to `behind` instead of waiting for the
    disk (None: they wait, as outside)."""
    token = DEFERRED.set(behind)
    try:
        yield
    finally:
        DEFERRED.reset(token)
