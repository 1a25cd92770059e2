"""Where skillweave's errors become Temporal ``ApplicationError``s: the only such place.

Whether an error is worth another attempt, and after how long, is not decided here: it is
:func:`skillweave.engines.retries.classify`, the one rule the direct engine follows too. This
module only carries that decision to Temporal: ``non_retryable`` stops the activity's retries at
once, and a server's ``Retry-After`` becomes ``next_retry_delay``.

Anything that is not a ``SkillweaveError`` (an ``OSError``, an httpx error) is left as it is:
Temporal records its class name and retries it under the workflow's retry policy, which is what
the rule says for it. Cancellation (``asyncio.CancelledError``) and temporalio's own exceptions
are never caught. The failure's ``type`` is the exception's class name, so the workflow and the
people reading history can tell failures apart without parsing messages.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta
from typing import Any, ParamSpec, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from skillweave.engines.retries import Backoff, Retry, classify
from skillweave.errors import SkillweaveError

__all__ = ["application_error", "raises_application_errors"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

_BACKOFF = Backoff()


def application_error(exc: SkillweaveError) -> ApplicationError:
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
        # Capped like the direct engine's waits: a server cannot park a job for an hour.
        delay = timedelta(seconds=_BACKOFF.delay(retry, attempt=1))
    return ApplicationError(
        str(exc), type=type(exc).__name__, non_retryable=not retry.again, next_retry_delay=delay
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
