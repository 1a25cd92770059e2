"""`Capture`: one captured stream of a run, and the pipes that feed it.

A stream is kept whole up to a cap and hashed as it is written (in memory while it is small,
on disk past that); what the pipe delivers past the cap is counted, not kept. `capture_pipe`
reads a stage's pipe into its capture on the event loop; `close_pipes` lets them run dry after
the run, and cuts a pipe a process that left the sandbox's group still holds open. Called by
``runner`` (the run) and the executor (``attempts`` makes the captures ahead, ``executor``
answers their heads, ``results`` serves them whole).
"""

from __future__ import annotations

import asyncio
import codecs
import hashlib
import os
from pathlib import Path
from typing import IO, Final

from skillweave.sandbox import ExecutorFile

__all__ = ["DRAIN_GRACE_SECONDS", "MEMORY_BYTES", "Capture", "capture_pipe", "close_pipes"]

DRAIN_GRACE_SECONDS: Final = 2.0


MEMORY_BYTES: Final = 64 * 1024
"""A capture is kept in memory up to this size; past it (or when it is served whole) it is a
file, so that most runs create no file for their streams."""


class Capture:
    """One captured stream, kept whole up to a cap and hashed as it is written: in memory
    while it is small, at `path` once it grows past `memory_bytes` or is described (then
    served whole from there, ``GET /files/{name}``)."""

    def __init__(self, path: Path, *, max_bytes: int, memory_bytes: int = MEMORY_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.size = 0
        self.dropped = 0
        self._digest = hashlib.sha256()
        self._memory_bytes = memory_bytes
        self._memory = bytearray()
        self._file: IO[bytes] | None = None  # made once the stream leaves memory

    def write(self, chunk: bytes) -> None:
        room = self.max_bytes - self.size
        kept = chunk[:room] if len(chunk) > room else chunk
        if kept:
            self._digest.update(kept)
            self.size += len(kept)
            if self._file is None and self.size <= self._memory_bytes:
                self._memory += kept
            else:
                self._opened().write(kept)
        self.dropped += len(chunk) - len(kept)

    def _opened(self) -> IO[bytes]:
        """The capture's file, open for appending: made (0600: beside the workspace, in a
        folder the sandbox user may pass through) with what memory held, the first time."""
        if self._file is None:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            self._file = os.fdopen(fd, "wb")
            self._file.write(self._memory)
            self._memory = bytearray()
        return self._file

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def write_out(self) -> None:
        """Make the capture, once its run is over, the file at `path` (written out now if
        memory held it), to be served whole."""
        self._opened()
        self.close()

    def describe(self, name: str) -> ExecutorFile:
        """The capture as a file the executor serves, written out."""
        self.write_out()
        return ExecutorFile(name=name, size=self.size, sha256=self._digest.hexdigest())

    def head(self, limit: int) -> tuple[str, bool]:
        """The first `limit` bytes as text (UTF-8, errors replaced) and whether that is all."""
        if self._file is not None:
            with open(self.path, "rb") as file:
                data = file.read(limit)
        else:
            data = bytes(self._memory[:limit])
        truncated = self.size > len(data) or self.dropped > 0
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        # Not final when cut: a character split at the cut is left out, not turned into U+FFFD.
        return decoder.decode(data, final=not truncated), truncated


class _CaptureProtocol(asyncio.Protocol):
    """Writes what a pipe delivers to its `Capture`; `closed` resolves at EOF."""

    def __init__(self, capture: Capture, closed: asyncio.Future[None]) -> None:
        self._capture = capture
        self.closed = closed

    def data_received(self, data: bytes) -> None:
        self._capture.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def capture_pipe(
    loop: asyncio.AbstractEventLoop, pipe: IO[bytes], capture: Capture
) -> tuple[asyncio.BaseTransport, _CaptureProtocol]:
    protocol = _CaptureProtocol(capture, loop.create_future())
    transport, _ = await loop.connect_read_pipe(lambda: protocol, pipe)
    return transport, protocol


async def close_pipes(pipes: list[tuple[asyncio.BaseTransport, _CaptureProtocol]]) -> None:
    """Let the pipes run dry; a pipe still held open after the grace period is cut."""
    closed = [protocol.closed for _, protocol in pipes]
    await asyncio.wait(closed, timeout=DRAIN_GRACE_SECONDS)
    for transport, protocol in pipes:
        if not protocol.closed.done():
            transport.close()
    await asyncio.wait(closed, timeout=DRAIN_GRACE_SECONDS)
