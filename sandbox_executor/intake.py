"""Taking one run's request, whichever way it came: ``POST /execute`` (``app``) or the run
channel (``channel``). The limits of a request and the steps around the one execution live
here, so that both ways refuse the same things with the same words.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, Final

from pydantic import ValidationError

from sandbox_executor.errors import ExecutorBusyError, RequestRejectedError
from sandbox_executor.executor import Executor
from sandbox_executor.workspace import MAX_INPUT_FILES
from skillweave.sandbox import ExecutorRequest, ExecutorResult
from skillweave.skills import DEFAULT_MAX_BYTES

__all__ = [
    "MAX_INPUTS",
    "MAX_PACKAGE_BYTES",
    "MAX_REQUEST_BYTES",
    "Dropped",
    "Refused",
    "RunParts",
    "check_package_size",
    "describe_invalid",
    "parse_request",
    "take_run",
]

logger = logging.getLogger(__name__)

MAX_REQUEST_BYTES: Final = 1024 * 1024
"""The run's description (``ExecutorRequest`` JSON)."""
# extract_package refuses more than DEFAULT_MAX_BYTES uncompressed; a ZIP of that is no larger,
# but for its headers.
MAX_PACKAGE_BYTES: Final = DEFAULT_MAX_BYTES + 4 * 1024 * 1024
MAX_INPUTS: Final = MAX_INPUT_FILES


class Dropped(Exception):
    """The manager dropped the request before its end (it did not get the execution's claim):
    nothing ran, and nobody is left to answer."""


class Refused(Exception):
    """The request is refused with `status` (409: the executor has taken its execution)."""

    def __init__(self, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail
        super().__init__(detail)


@dataclass
class RunParts:
    """A request's parts, read: the files are the caller's, to close after the run."""

    request: ExecutorRequest
    package: bytes
    inputs: Sequence[tuple[str, BinaryIO]] = ()
    environment: BinaryIO | None = None
    files: list[BinaryIO] = field(default_factory=list)


def describe_invalid(exc: ValidationError, *, what: str = "request") -> str:
    """A request's validation errors in one line (the first five)."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or what}: {error['msg']}"
        for error in exc.errors()[:5]
    )


def parse_request(raw: str | bytes) -> ExecutorRequest:
    """The run's description from its JSON.

    Raises:
        RequestRejectedError: 422, too large or not a valid ``ExecutorRequest``.
    """
    if len(raw) > MAX_REQUEST_BYTES:
        raise RequestRejectedError("the 'request' field is too large", status_code=422)
    try:
        return ExecutorRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise RequestRejectedError(
            f"bad 'request' field: {describe_invalid(exc)}", status_code=422
        ) from exc


def check_package_size(size: int) -> None:
    """Raises RequestRejectedError when a package of `size` bytes cannot be one."""
    if size > MAX_PACKAGE_BYTES:
        raise RequestRejectedError(f"the package is over {MAX_PACKAGE_BYTES} bytes")


async def take_run(
    executor: Executor,
    read: Callable[[], Awaitable[RunParts]],
    *,
    ended: Callable[[], Awaitable[None]],
) -> ExecutorResult:
    """Take `executor` for one request: read its parts (`read`), fill the workspace, wait for
    the request's end (`ended`), run, answer. Refused before anything ran, the executor is
    ready again.

    Raises:
        Refused: the request cannot run (nothing ran): its status and why.
        Dropped: the request ended early (`read` or `ended` raised Dropped): nothing ran.
    """
    try:
        ready_made = executor.claim()
    except ExecutorBusyError as exc:
        raise Refused(409, str(exc)) from exc
    if ready_made is not None:
        return ready_made
    parts: RunParts | None = None
    try:
        parts = await read()
        return await executor.execute(
            parts.request,
            package=parts.package,
            inputs=parts.inputs,
            environment=parts.environment,
            ended=ended,
        )
    except RequestRejectedError as exc:
        raise Refused(exc.status_code, exc.detail) from exc
    except Dropped:
        logger.info("the request was dropped before its end; nothing ran")
        raise
    finally:
        # Ready again when the request was refused before anything ran; else a no-op.
        executor.unclaim()
        if parts is not None:
            for file in parts.files:
                file.close()
