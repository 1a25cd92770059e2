"""The run channel: a run handed to a local executor over a Unix socket, without HTTP.

The local backend's executors run on the manager's own host. For them the manager sends a run
over a Unix socket in the sandbox's private folder instead of ``POST /execute``: the same
request, the same answers, without two HTTP stacks on the way (about half of a warm run's time
on a small host went to them; docs/BENCHMARKS.md). Everything else (``/healthz``, ``/files``,
``DELETE /execute``) stays HTTP, and Kubernetes pods, on other hosts, get runs over HTTP too.

Only the manager can connect: the socket is the executor's, mode 0600, in a folder only the
manager's user can enter; and its first frame must still carry the sandbox's bearer token.

The wire. A *frame* is a 4-byte big-endian length, then that many bytes.

manager → executor
    1. the token, a frame (at most :data:`TOKEN_MAX_BYTES`); nothing else is read without it;
    2. the head, a frame: :class:`RunHead` as JSON (the run's :class:`ExecutorRequest` and the
       size of each blob);
    3. the blobs, unframed and back to back: the package, the environment (if any), then each
       input in the head's order;
    4. :data:`GO`, one byte, sent only once the script may run (the execution's claim is
       durable). The executor fills the workspace while it waits, and starts nothing before it.
       A connection closed before it ran nothing.

executor → manager
    the answer, two frames: the status ``POST /execute`` would have answered, in ASCII
    digits, then its body (200: the :class:`ExecutorResult` JSON; else ``{"detail": why}``).
"""

from __future__ import annotations

import asyncio
from typing import Final

from pydantic import BaseModel, Field

from skillweave.sandbox.models import ExecutorRequest

__all__ = [
    "GO",
    "HEAD_MAX_BYTES",
    "SOCKET_NAME",
    "SPAN_NAME",
    "TOKEN_MAX_BYTES",
    "ChannelError",
    "RunHead",
    "answer",
    "answer_max_bytes",
    "frame",
    "read_answer",
    "read_frame",
]

SOCKET_NAME: Final = "run.sock"
"""The socket's name in the folder the executor is started in."""
GO: Final = b"\x01"
SPAN_NAME: Final = "run channel /execute"
"""The executor's span for a run it took over the channel (``POST /execute`` over HTTP)."""
TOKEN_MAX_BYTES: Final = 1024
HEAD_MAX_BYTES: Final = 2 * 1024 * 1024
"""The request (at most 1 MiB, as the ``request`` field of ``POST /execute``) and the names
and sizes of the blobs."""
_LENGTH_BYTES: Final = 4
_STATUS_MAX_BYTES: Final = 3


class ChannelError(Exception):
    """A frame over its limit, or a byte that breaks the wire's rules."""


class RunHead(BaseModel):
    """What a run is, and the size of each blob that follows."""

    request: ExecutorRequest
    package: int = Field(ge=0)
    environment: int | None = Field(default=None, ge=0)
    inputs: list[tuple[str, int]] = Field(default_factory=list)
    """Each input's path under ``inputs/`` and size, in the order they follow."""
    trace: dict[str, str] = Field(default_factory=dict)
    """The manager's trace context, as HTTP headers would carry it."""

    def blob_bytes(self) -> int:
        """The bytes of all the blobs together."""
        return self.package + (self.environment or 0) + sum(size for _, size in self.inputs)


def answer_max_bytes(request: ExecutorRequest) -> int:
    """The largest answer the manager reads for `request`: stdout and stderr inline, each at
    most ``max_output_bytes`` and escaped as JSON (six bytes a character at worst), and the
    rest of a result."""
    return 2 * 6 * request.limits.max_output_bytes + 4 * 1024 * 1024


def frame(data: bytes) -> bytes:
    """`data` as a frame."""
    return len(data).to_bytes(_LENGTH_BYTES, "big") + data


async def read_frame(reader: asyncio.StreamReader, max_bytes: int) -> bytes:
    """The next frame's bytes.

    Raises:
        ChannelError: the frame is over `max_bytes` (nothing of it is read).
        asyncio.IncompleteReadError: the stream ended first.
    """
    size = int.from_bytes(await reader.readexactly(_LENGTH_BYTES), "big")
    if size > max_bytes:
        raise ChannelError(f"a frame of {size} bytes, over the limit of {max_bytes}")
    return await reader.readexactly(size)


def answer(status: int, body: bytes) -> bytes:
    """An answer's bytes: `status` (100-599), then `body`."""
    return frame(str(status).encode("ascii")) + frame(body)


async def read_answer(reader: asyncio.StreamReader, max_bytes: int) -> tuple[int, bytes]:
    """An answer's status and body.

    Raises:
        ChannelError: the status is not one, or the body is over `max_bytes`.
        asyncio.IncompleteReadError: the stream ended first.
    """
    raw = await read_frame(reader, _STATUS_MAX_BYTES)
    if not raw.isdigit() or not 100 <= int(raw) <= 599:
        raise ChannelError(f"the answer's status is not one: {raw!r}")
    return int(raw), await read_frame(reader, max_bytes)
