"""Whether a failed side-effect call is tried again, and when: one rule for both engines.

The Temporal engine's activities (``activities.errors``) turn :func:`classify`'s answer into an
``ApplicationError`` (``non_retryable``, ``next_retry_delay``) and its workflow builds the
activity retry policy from :class:`Backoff`; the direct engine (:mod:`skillweave.engines.direct`)
waits :meth:`Backoff.delay` between its own calls. Both apply it to every call of the
``Runtime`` port, so a job fails or goes on the same way on either engine.

The rule:

- retried after the server's ``Retry-After`` when it sent one: a ``ModelError`` the provider
  layer marked ``retryable`` (408/409/429/5xx, connection failures), a full pool
  (``PoolExhaustedError``), a run another manager holds a live claim on
  (``ExecutionInProgressError``: that manager may have stopped and its claim lapses);
- retried at once: a sandbox lost mid-run (``SandboxLostError``: the manager freed the id and
  a fresh sandbox is waiting);
- retried with back-off: a sandbox that did not start (unless it refused to, see below), a
  manager that could not be reached or answered 5xx (any other ``SandboxError``: a manager
  restarting must not fail jobs), a failing store (``StorageError``), and anything that is not
  a ``SkillweaveError`` (an ``OSError``, an HTTP client error: Temporal retries those too,
  since it cannot tell them apart);
- never retried, because another try fails the same way: a model error that is not transient,
  a sandbox that refused to start (``SandboxStartError(permanent=True)``: its isolation cannot
  be set up), a request the manager rejected or an execution id it saw differently, a
  missing or corrupt artifact, a malformed key, and every skill, agent, spec or config error.

A model profile may allow its calls fewer attempts than the engine (``MODEL__…MAX_ATTEMPTS``):
its ``ModelError`` carries the number, :class:`Retry` keeps it, and both engines stop at the
lower of it and their own (:meth:`Retry.allows`).

Cancellation (``asyncio.CancelledError``) is not an error and never reaches here.
Pure: the workflow sandbox imports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

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
    SandboxStartError,
    SkillweaveError,
    StorageError,
)

__all__ = ["Backoff", "Retry", "classify"]


@dataclass(frozen=True)
class Retry:
    """The decision for one failure: try again or not, and after how long if the server said.

    Attributes:
        again: whether another attempt may succeed.
        after: seconds the server asked to wait (``Retry-After``), 0 for "at once", or None
            for the engine's back-off.
        attempts: the most calls in all the failing side allows (a model profile's
            ``max_attempts``), when it sets one: the engine stops at the lower of it and its own.
    """

    again: bool
    after: float | None = None
    attempts: int | None = None

    def allows(self, attempt: int, *, limit: int) -> bool:
        """Whether a call that failed on `attempt` (1 = the first) is tried again, under the
        engine's `limit` of calls in all."""
        if self.attempts is not None:
            limit = min(limit, self.attempts)
        return self.again and attempt < limit


_FAIL: Final = Retry(again=False)
_BACK_OFF: Final = Retry(again=True)


def classify(exc: BaseException) -> Retry:
    """The retry decision for `exc` (see the module docstring).

    The order matters where classes nest: a ``PoolExhaustedError`` is a ``SandboxError``, an
    ``ArtifactNotFoundError`` a ``StorageError``.
    """
    match exc:
        case ModelError(retryable=True, retry_after=after, max_attempts=attempts):
            return Retry(again=True, after=after, attempts=attempts)
        case ModelError():
            return _FAIL
        case PoolExhaustedError(retry_after=after):
            return Retry(again=True, after=float(after))
        case ExecutionInProgressError(retry_after=after):
            return Retry(again=True, after=after)
        case SandboxLostError():
            return Retry(again=True, after=0.0)
        case SandboxStartError(permanent=True):
            return _FAIL
        case ExecutionRejectedError() | ExecutionConflictError():
            return _FAIL
        case SandboxError():
            return _BACK_OFF
        case ArtifactNotFoundError() | ArtifactIntegrityError() | InvalidKeyError():
            return _FAIL
        case StorageError():
            return _BACK_OFF
        case SkillweaveError():
            return _FAIL
        case _:
            return _BACK_OFF


@dataclass(frozen=True)
class Backoff:
    """How long to wait between attempts when the server gave no ``Retry-After``, and how many
    attempts a call gets (the Temporal activity retry policy is built from the same numbers).

    Attributes:
        initial: seconds before the second attempt.
        coefficient: each wait is this many times the one before.
        maximum: no wait is longer (a server's ``Retry-After`` is capped by it too).
        attempts: calls in all, the first included.
    """

    initial: float = 1.0
    coefficient: float = 2.0
    maximum: float = 60.0
    attempts: int = 8

    def delay(self, retry: Retry, attempt: int) -> float:
        """Seconds to wait after attempt number `attempt` (from 1) failed with `retry`."""
        after = retry.after
        if after is None or math.isnan(after):
            # No hint, or one no clock can wait (a hostile or broken Retry-After).
            after = self.initial * self.coefficient ** (attempt - 1)
        return min(self.maximum, max(0.0, after))
