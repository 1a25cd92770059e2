"""Where skillweave's errors become Temporal ``ApplicationError``s: the only such place.

Retryability is decided once, here, at the activity boundary (the inner clients do not retry
on their own), and it agrees with the direct engine's ``retry_delay``:

- a ``ModelError`` the provider layer marked ``retryable`` (408/409/429/5xx, connection
  failures) and a full sandbox pool (``PoolExhaustedError``) are retried, after the
  ``Retry-After`` the server sent when it sent one (``next_retry_delay``); so is an execution
  another manager holds a live claim on (``ExecutionInProgressError``: its manager may have
  stopped, and the claim lapses); a sandbox lost mid-run (``SandboxLostError``) is retried at
  once, on a fresh sandbox;
- a sandbox that did not start, a manager that cannot be reached or answered 5xx (any other
  ``SandboxError``: a manager restarting must not fail jobs) and a failing store
  (``StorageError``) are retried under the workflow's retry policy: all are transient;
- the rest of skillweave's errors fail at once (``non_retryable``): a model error that is
  not transient, a request the manager rejected (4xx) or an execution id it saw differently, a
  missing or corrupt artifact, a malformed key, a skill, agent or config problem. Trying
  again would fail the same way.

Anything that is not a ``SkillweaveError`` (a bug, an ``OSError``, an httpx error) is left
as it is: Temporal records its class name and retries it under the workflow's retry policy.
Cancellation (``asyncio.CancelledError``) and temporalio's own exceptions are never caught.
The failure's ``type`` is the exception's class name, so the workflow and the people reading
history can tell failures apart without parsing messages.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta
from typing import Any, ParamSpec, TypeVar

from temporalio.exceptions import ApplicationError

from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    InvalidKeyError,
    ModelError,
    PoolExhaustedError,
    SandboxError,
    SandboxLostError,
    SkillweaveError,
    StorageError,
)

__all__ = ["application_error", "raises_application_errors", "retry_of"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

_FAIL: tuple[bool, None] = (False, None)
_RETRY: tuple[bool, None] = (True, None)


def retry_of(exc: SkillweaveError) -> tuple[bool, float | None]:
    """Whether `exc` is worth another attempt, and after how many seconds if the server said.

    The order matters where classes nest: a ``PoolExhaustedError`` is a ``SandboxError``,
    an ``ArtifactNotFoundError`` a ``StorageError``.
    """
    match exc:
        case ModelError(retryable=True, retry_after=after):
            return True, after
        case ModelError():
            return _FAIL
        case PoolExhaustedError(retry_after=after):
            return True, float(after)
        case ExecutionInProgressError(retry_after=after):
            return True, after  # another manager's claim: ask again when it may lapse
        case ExecutionRejectedError() | ExecutionConflictError():
            return _FAIL
        case SandboxLostError():
            return True, 0.0  # the manager freed the id; a fresh sandbox is waiting
        case SandboxError():
            return _RETRY
        case ArtifactNotFoundError() | ArtifactIntegrityError() | InvalidKeyError():
            return _FAIL
        case StorageError():
            return _RETRY
        case _:
            return _FAIL


def application_error(exc: SkillweaveError) -> ApplicationError:
    """`exc` as the ``ApplicationError`` an activity raises (see the module docstring)."""
    retryable, after = retry_of(exc)
    delay = timedelta(seconds=max(0.0, after)) if retryable and after is not None else None
    return ApplicationError(
        str(exc), type=type(exc).__name__, non_retryable=not retryable, next_retry_delay=delay
    )


def raises_application_errors(
    fn: Callable[_P, Awaitable[_R]],
) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """Decorate an async activity so the ``SkillweaveError``s it raises leave as
    :func:`application_error`s (chained, so the original stays in the failure's cause)."""

    @functools.wraps(fn)
    async def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await fn(*args, **kwargs)
        except SkillweaveError as exc:
            raise application_error(exc) from exc

    return wrapper
