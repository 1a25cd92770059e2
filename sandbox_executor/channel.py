"""The executor's end of the run channel (``skillweave.sandbox.run_channel`` has the wire).

:func:`serve_channel` listens on a Unix socket (mode 0600) beside the HTTP API and takes runs
the way ``POST /execute`` does (``intake.take_run``): the token first, compared in constant
time before anything else is read; the head and its limits (the request's, the package's, the
body's ``EXECUTOR__MAX_BODY_BYTES``) before any blob; the workspace filled while the manager
holds :data:`~skillweave.sandbox.run_channel.GO` back; nothing run before it arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO, Final

from pydantic import ValidationError

from sandbox_executor.errors import RequestRejectedError
from sandbox_executor.executor import Executor
from sandbox_executor.intake import (
    MAX_INPUTS,
    Dropped,
    Refused,
    RunParts,
    check_package_size,
    describe_invalid,
    take_run,
)
from skillweave.gate import UNAUTHORIZED_DETAIL, token_accepted
from skillweave.sandbox import (
    GO,
    HEAD_MAX_BYTES,
    SPAN_NAME,
    TOKEN_MAX_BYTES,
    ChannelError,
    RunHead,
    answer,
    read_frame,
)
from skillweave.telemetry import bound, carried_fields, extract, span

__all__ = ["serve_channel"]

logger = logging.getLogger(__name__)

_SPOOL_BYTES: Final = 1024 * 1024
"""Inputs and environments up to this size stay in memory; larger ones go to a temp file."""
_CHUNK_BYTES: Final = 1024 * 1024
_DRAIN_SECONDS: Final = 10.0


async def serve_channel(
    path: Path, *, executor: Executor, tokens: Sequence[bytes], max_body_bytes: int
) -> asyncio.Server:
    """Listen for runs on a Unix socket at `path` (mode 0600); the caller closes the server.

    Raises:
        OSError: the socket cannot be made there (a path too long for a Unix socket, say).
    """

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            answered = await _answer(reader, executor, tokens, max_body_bytes)
            if answered is not None:
                writer.write(answered)
                writer.write_eof()
                await writer.drain()
                # A refusal may come while the manager is still writing the request: read the
                # rest (bounded), so that its writes do not fail before it reads the answer.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_DRAIN_SECONDS):
                        await _discard(reader, max_body_bytes + HEAD_MAX_BYTES)
        except (ConnectionError, asyncio.IncompleteReadError):
            logger.info("the run channel closed before its answer was sent")
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    old_mask = os.umask(0o177)
    try:
        server = await asyncio.start_unix_server(handle, path=str(path))
    finally:
        os.umask(old_mask)
    os.chmod(path, 0o600)
    return server


async def _discard(reader: asyncio.StreamReader, most: int) -> None:
    """Read and drop what the manager still sends, up to `most` bytes, until it closes."""
    left = most
    while left > 0 and (chunk := await reader.read(min(left, _CHUNK_BYTES))):
        left -= len(chunk)


async def _answer(
    reader: asyncio.StreamReader,
    executor: Executor,
    tokens: Sequence[bytes],
    max_body_bytes: int,
) -> bytes | None:
    """The answer to one connection's run; None when nobody is left to answer."""
    try:
        token = await read_frame(reader, TOKEN_MAX_BYTES)
    except ChannelError:
        token = b""
    if not token_accepted(token, tokens):
        return _refusal(401, UNAUTHORIZED_DETAIL)
    intake = _Intake(reader, max_body_bytes)
    try:
        head = await intake.head()
    except RequestRejectedError as exc:
        return _refusal(exc.status_code, exc.detail)
    parent = extract(head.trace)
    fields = carried_fields(parent)
    with span(SPAN_NAME, context=parent, server=True, fields=fields), bound(**fields):
        try:
            result = await take_run(executor, lambda: intake.blobs(head), ended=intake.ended)
        except Refused as exc:
            return _refusal(exc.status, exc.detail)
        except Dropped:
            return None
    return answer(200, result.model_dump_json().encode())


def _refusal(status: int, detail: str) -> bytes:
    return answer(status, json.dumps({"detail": detail}).encode())


class _Intake:
    """One connection's request, read in the wire's order."""

    def __init__(self, reader: asyncio.StreamReader, max_body_bytes: int) -> None:
        self._reader = reader
        self._max_body_bytes = max_body_bytes

    async def head(self) -> RunHead:
        """The head, checked against the limits before any blob is read.

        Raises:
            RequestRejectedError: 422 a head that does not parse; 413 blobs over the body's
                limit; 400 anything else a run's request may not be.
        """
        try:
            raw = await read_frame(self._reader, HEAD_MAX_BYTES)
        except ChannelError as exc:
            raise RequestRejectedError(str(exc), status_code=413) from exc
        except (asyncio.IncompleteReadError, ConnectionError):
            raise RequestRejectedError("the request ended before its head") from None
        try:
            head = RunHead.model_validate_json(raw)
        except ValidationError as exc:
            raise RequestRejectedError(
                f"bad run head: {describe_invalid(exc)}", status_code=422
            ) from exc
        if head.blob_bytes() > self._max_body_bytes:
            raise RequestRejectedError(
                f"the request's files are over {self._max_body_bytes} bytes"
                " (EXECUTOR__MAX_BODY_BYTES)",
                status_code=413,
            )
        check_package_size(head.package)
        if len(head.inputs) > MAX_INPUTS:
            raise RequestRejectedError(f"more than {MAX_INPUTS} input files")
        return head

    async def blobs(self, head: RunHead) -> RunParts:
        """The package, the environment and the inputs the head announced.

        Raises:
            Dropped: the connection ended first.
        """
        files: list[BinaryIO] = []
        try:
            package = await self._reader.readexactly(head.package)
            environment = None
            if head.environment is not None:
                environment = await self._spooled(head.environment)
                files.append(environment)
            inputs: list[tuple[str, BinaryIO]] = []
            for name, size in head.inputs:
                data = await self._spooled(size)
                files.append(data)
                inputs.append((name, data))
        except (asyncio.IncompleteReadError, ConnectionError):
            for file in files:
                file.close()
            raise Dropped from None
        return RunParts(head.request, package, inputs, environment, files)

    async def _spooled(self, size: int) -> BinaryIO:
        if size <= _SPOOL_BYTES:
            return io.BytesIO(await self._reader.readexactly(size))
        spool: BinaryIO = tempfile.TemporaryFile()  # noqa: SIM115 - RunParts.files closes it
        try:
            left = size
            while left:
                chunk = await self._reader.readexactly(min(left, _CHUNK_BYTES))
                await asyncio.to_thread(spool.write, chunk)
                left -= len(chunk)
            spool.seek(0)
        except BaseException:
            spool.close()
            raise
        return spool

    async def ended(self) -> None:
        """Until the manager says the script may run.

        Raises:
            Dropped: the connection ended first.
            RequestRejectedError: anything but the go byte came.
        """
        try:
            given = await self._reader.readexactly(len(GO))
        except (asyncio.IncompleteReadError, ConnectionError):
            raise Dropped from None
        if given != GO:
            raise RequestRejectedError("the run channel expected its go byte")
