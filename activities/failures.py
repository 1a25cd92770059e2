"""Where an activity's errors become Temporal ``ApplicationError``s: the only such place.

Whether an error is worth another attempt, and after how long, is not decided here: it is
:func:`skillweave.engines.retries.classify`, the one rule the direct engine follows too. This
module only carries that decision to Temporal: ``non_retryable`` stops the activity's retries at
once, and a server's ``Retry-After`` becomes ``next_retry_delay``.

What an operator sees of a failure is shaped here too. The Temporal UI shows an activity's last
failure by its message, and a server replaces a failure over its size limit (a few KiB: a
traceback and a chain of causes are more) with "Failure exceeds size limit.". So every error
leaves as one ``ApplicationError`` whose message is the cause in one line, whose ``type`` is the
error's class name (the workflow and history tell failures apart by it), and whose details are
structured fields (the whole message, the chain of causes, the innermost frames), each bounded,
with no chained failure below it: the whole failure stays under
:data:`FAILURE_MAX_BYTES`. The traceback itself goes to the worker's log at DEBUG.

temporalio's own exceptions are never caught. A cancellation (``asyncio.CancelledError``) is one
INFO line saying why (the run was cancelled, this worker is stopping, or the run is gone) and
leaves as a cancellation, which the SDK records at DEBUG; when the server no longer knows the
attempt (its run ended, or the attempt timed out there), nobody waits for its outcome, and it
leaves as a *benign* ``ApplicationError`` instead, which the SDK also records at DEBUG, rather
than as a cancellation nobody asked for (a WARNING with its traceback).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import traceback
from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta
from typing import Any, Final, ParamSpec, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory, TemporalError

from skillweave.agent import run_id_of
from skillweave.engines import Backoff, Retry, classify

__all__ = ["FAILURE_MAX_BYTES", "application_error", "raises_application_errors"]

FAILURE_MAX_BYTES: Final = 2048
"""What one activity failure may weigh, encoded: under the Temporal server's warning limit for
an activity's last failure (2 KiB; it drops those over 4 KiB)."""
_LINE_CHARS: Final = 240
_TEXT_CHARS: Final = 600
_CAUSES: Final = 4
_FRAMES: Final = 4
_log = logging.getLogger(__name__)

_P = ParamSpec("_P")
_R = TypeVar("_R")

_BACKOFF = Backoff()


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line(exc: BaseException) -> str:
    """`exc` in one line: its first non-empty line, or its class name."""
    for line in str(exc).splitlines():
        if line.strip():
            return _clip(line.strip(), _LINE_CHARS)
    return type(exc).__name__


def _details(exc: BaseException) -> dict[str, object]:
    """The structured fields of a failure: each bounded (see the module docstring)."""
    causes = []
    seen = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    while seen is not None and len(causes) < _CAUSES:
        causes.append(f"{type(seen).__name__}: {_line(seen)}")
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
    frames = traceback.extract_tb(exc.__traceback__)[-_FRAMES:]
    return {
        "error": type(exc).__name__,
        "message": _clip(str(exc), _TEXT_CHARS),
        "causes": causes,
        "where": [f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in frames],
    }


def application_error(exc: Exception) -> ApplicationError:
    """`exc` as the ``ApplicationError`` an activity raises (see the module docstring).

    A failure whose side caps its own attempts (a model profile's ``max_attempts``) is
    non-retryable from that attempt on: the workflow's retry policy holds the engine's cap.
    """
    retry = classify(exc)
    if retry.again and retry.attempts is not None:
        attempt = activity.info().attempt if activity.in_activity() else 1
        allowed = retry.allows(attempt, limit=retry.attempts)
        retry = Retry(again=allowed, after=retry.after if allowed else None)
    delay = None
    if retry.again and retry.after is not None:
        # Capped like the direct engine's waits: a server cannot park a run for an hour.
        delay = timedelta(seconds=_BACKOFF.delay(retry, attempt=1))
    return ApplicationError(
        _line(exc),
        _details(exc),
        type=type(exc).__name__,
        non_retryable=not retry.again,
        next_retry_delay=delay,
    )


def raises_application_errors(
    fn: Callable[_P, Awaitable[_R]],
) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """Decorate an async activity so the errors it raises leave as
    :func:`application_error`s, their traceback in the log at DEBUG."""

    @functools.wraps(fn)
    async def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await fn(*args, **kwargs)
        except TemporalError:
            raise
        except asyncio.CancelledError:
            gone = _cancelled(fn.__name__)
            if gone is not None:
                raise gone from None
            raise
        except Exception as exc:
            _log.debug("activity %s failed", fn.__name__, exc_info=exc)
            raise application_error(exc) from None

    return wrapper


def _cancelled(name: str) -> ApplicationError | None:
    """Say in one INFO line why the activity `name` was cancelled; returns what it leaves as
    when the server no longer knows the attempt (None: it leaves as the cancellation)."""
    if not activity.in_activity():
        return None
    details = activity.cancellation_details()
    if details is None:
        return None  # not Temporal's cancellation: left as it is
    info = activity.info()
    if details.not_found:
        why = "its run has ended (cancelled, or finished by another attempt)"
    elif details.timed_out:
        why = "the attempt timed out at the server (it tries again, maybe elsewhere)"
    elif details.worker_shutdown:
        why = "this worker is stopping (the run goes on when a worker polls its task queue)"
    elif details.cancel_requested:
        why = "its run was cancelled"
    else:
        return None  # paused or reset: the SDK says so itself
    _log.info("%s of run %s cancelled: %s", name, run_id_of(info.workflow_id), why)
    if details.not_found or details.timed_out:
        return ApplicationError(
            f"cancelled: {why}",
            type="Cancelled",
            non_retryable=True,
            category=ApplicationErrorCategory.BENIGN,
        )
    return None
