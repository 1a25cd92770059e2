"""Record logs for the local store: many small records of one run in one append-only file.

A transcript writes a record or two a step. As an artifact each would be a new file (a
temporary file, fsynced, renamed into place, its folder fsynced, and a sidecar beside it): two
inodes a record, and on a busy worker creating inodes is most of the store's CPU. A record log
keeps a run's records in one file, ``{folder}/.sw-log-{name}``, beside the run's other keys
(so it goes with them) but never listed as a key. A record is one frame::

    magic  b"\\xffSWr"            4 bytes
    seq    unsigned, big-endian  8 bytes
    length unsigned, big-endian  4 bytes
    sha256 of the payload        32 bytes
    payload                      `length` bytes

How it stays safe:

* **Appends are whole and ordered.** A writer holds ``flock`` on the file while it appends a
  frame (``O_APPEND``, written in full), so the frames of writers in any process never
  interleave; then, unless the write is deferred (:mod:`._local_write_behind`), it fsyncs the
  file, and its folder when it created the file, before it returns.
* **The last frame of a seq wins.** An activity that runs again writes its record again; a
  reader takes the newest complete frame for each seq.
* **A damaged frame is skipped, never read.** Every frame is checked against its sha256 when
  it is indexed and again when it is read. A frame a crash cut short is followed by the next
  writer's frames; the reader finds those by their magic, which no payload can hold (payloads
  are JSON, UTF-8, which never has the byte 0xFF). A frame still being written at the end of
  the file is left for the next look.

Readers index a log once (seq → offset) and extend the index as the file grows; an index is
dropped when the file is replaced. Used by :class:`~skillweave.storage.local.LocalArtifactStore`
(``append_records``, ``read_record``); other stores keep one object per record.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import struct
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final

from skillweave.atomic_write import SHARED_MODE, fsync_dir
from skillweave.errors import ArtifactIntegrityError
from skillweave.storage._local_files import (
    MISSING_ERRNOS,
    LocalPaths,
    make_parent,
    os_errors,
)
from skillweave.storage._local_write_behind import WriteBehind

__all__ = ["MAGIC", "RecordLogs", "frame", "read_log"]

MAGIC: Final = b"\xffSWr"
_HEADER: Final = struct.Struct(">4sQI32s")
_MAX_LENGTH: Final = 2**32 - 1
_INDEXES: Final = 256
"""How many logs' indexes a store keeps (least recently used dropped)."""
_READ_BYTES: Final = 4 * 1024 * 1024


def frame(seq: int, data: bytes) -> bytes:
    """The frame of record `seq` holding `data`."""
    if len(data) > _MAX_LENGTH:
        raise ValueError(f"a log record holds at most {_MAX_LENGTH} bytes, not {len(data)}")
    return _HEADER.pack(MAGIC, seq, len(data), hashlib.sha256(data).digest()) + data


@dataclass
class _Index:
    """Where each seq's newest frame is, in the file with inode `inode`, up to `size`."""

    inode: int
    size: int = 0
    frames: dict[int, tuple[int, int, bytes]] = field(default_factory=dict)

    def extend(self, tail: bytes, base: int) -> None:
        """Index the frames in `tail`, the file's bytes from offset `base` (= `size`)."""
        pos = 0
        settled = 0  # the bytes of `tail` whose meaning cannot change as the file grows
        end_of = len(tail)
        while (start := tail.find(MAGIC, pos)) >= 0:
            if start + _HEADER.size > end_of:
                break  # a header still being written
            _, seq, length, digest = _HEADER.unpack_from(tail, start)
            stop = start + _HEADER.size + length
            if stop > end_of:
                if tail.find(MAGIC, start + 1) < 0:
                    break  # the last frame, still being written (or cut short: the next
                    # append will show which)
                pos = settled = start + 1  # cut short by a crash: frames follow it
                continue
            payload = memoryview(tail)[start + _HEADER.size : stop]
            if hashlib.sha256(payload).digest() == digest:
                self.frames[seq] = (base + start + _HEADER.size, length, digest)
                pos = settled = stop
            else:
                pos = settled = start + 1  # damaged, or magic that was no frame's
        else:
            # No magic left: what follows the last frame is no frame's start; keep the last
            # three bytes, which may be the start of a magic being written.
            settled = max(settled, end_of - len(MAGIC) + 1)
        self.size = base + settled


class RecordLogs:
    """The record logs under one local store's root.

    Args:
        paths: the store's paths.
        fsync: make each append durable before it returns (the store's setting).
    """

    def __init__(self, paths: LocalPaths, *, fsync: bool) -> None:
        self._paths = paths
        self._fsync = fsync
        self._lock = threading.Lock()
        self._indexes: OrderedDict[Path, _Index] = OrderedDict()

    def path(self, log: str) -> Path:
        """The file of the log named `log` (a key-like name: ``runs/r1/transcript``)."""
        return self._paths.log(log)

    def append(
        self, log: str, records: Sequence[tuple[int, bytes]], *, behind: WriteBehind | None
    ) -> None:
        """Append `records` (seq and data each, in order) to `log` in one write: durable when
        this returns, unless `behind` is given (then published at once and made durable by its
        syncing thread). A crash may cut the write short: every frame is checked on its own,
        so the frames written whole stand and a cut one is skipped."""
        if not records:
            return
        path = self.path(log)
        batch = b"".join(frame(seq, data) for seq, data in records)
        with os_errors("append to", log):
            fd, created = _open_for_append(log, path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                view = memoryview(batch)
                while view:
                    view = view[os.write(fd, view) :]
                if self._fsync and behind is None:
                    os.fdatasync(fd)
            finally:
                os.close(fd)  # and the lock with it
            if not self._fsync:
                return
            if behind is not None:
                behind.add(path)
            elif created:
                fsync_dir(path.parent)

    def read(self, log: str, seq: int) -> bytes | None:
        """The newest complete record `seq` of `log`; None: the log has none (or no log).

        A frame that no longer matches what was indexed (the file replaced, or written in
        place) makes the log be indexed again, which skips a damaged frame.

        Raises:
            ArtifactIntegrityError: the frame changed again while it was indexed anew.
        """
        path = self.path(log)
        with os_errors("read", log):
            try:
                handle = open(path, "rb", buffering=0)  # noqa: SIM115 - closed just below
            except OSError as exc:
                if exc.errno in MISSING_ERRNOS:
                    return None
                raise
            with handle:
                where = self._find(path, handle, seq, fresh=False)
                if where is None:
                    return None
                data = _verified(handle, where)
                if data is None:  # another file at this path now: index it again
                    where = self._find(path, handle, seq, fresh=True)
                    if where is None:
                        return None
                    data = _verified(handle, where)
                if data is None:
                    offset, length, digest = where
                    found = hashlib.sha256(os.pread(handle.fileno(), length, offset)).hexdigest()
                    raise ArtifactIntegrityError(f"{log}#{seq}", digest.hex(), found)
        return data

    def _find(
        self, path: Path, handle: BinaryIO, seq: int, *, fresh: bool
    ) -> tuple[int, int, bytes] | None:
        """Where the newest frame of `seq` is in the open log, its index brought up to date
        (or made anew)."""
        info = os.fstat(handle.fileno())
        with self._lock:
            index = None if fresh else self._indexes.get(path)
            if index is None or index.inode != info.st_ino or index.size > info.st_size:
                index = _Index(inode=info.st_ino)
            self._indexes[path] = index
            self._indexes.move_to_end(path)
            while len(self._indexes) > _INDEXES:
                self._indexes.popitem(last=False)
            if index.size < info.st_size:  # newer frames, perhaps of this seq
                index.extend(_read_from(handle, index.size), index.size)
            return index.frames.get(seq)


def _verified(handle: BinaryIO, where: tuple[int, int, bytes]) -> bytes | None:
    """The payload at `where` when it still matches its sha256; else None."""
    offset, length, digest = where
    data = os.pread(handle.fileno(), length, offset)
    if len(data) != length or hashlib.sha256(data).digest() != digest:
        return None
    return data


def read_log(path: Path) -> dict[int, bytes]:
    """Every record of the log file at `path` (the newest of each seq), verified, by seq."""
    with open(path, "rb", buffering=0) as handle:
        data = _read_from(handle, 0)
    index = _Index(inode=0)
    index.extend(data, 0)
    return {
        seq: data[offset : offset + length] for seq, (offset, length, _) in index.frames.items()
    }


def _open_for_append(log: str, path: Path) -> tuple[int, bool]:
    """An fd appending to `path`, and whether this call created the file."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        return os.open(path, flags), False
    except FileNotFoundError:
        make_parent(log, path)
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, SHARED_MODE)
    except FileExistsError:
        return os.open(path, flags), False  # another writer made it meanwhile
    try:
        os.fchmod(fd, SHARED_MODE)  # whatever the umask
    except OSError:
        os.close(fd)
        raise
    return fd, True


def _read_from(handle: BinaryIO, offset: int) -> bytes:
    """The file's bytes from `offset` to its end as it is now."""
    fd = handle.fileno()
    parts = []
    while chunk := os.pread(fd, _READ_BYTES, offset):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)
