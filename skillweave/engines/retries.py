"""Whether a failed side-effect call is tried again, and when: one rule for both engines.

The Temporal engine's activities (``activities.failures``) turn :func:`classify`'s answer into an
``ApplicationError`` (``non_retryable``, ``next_retry_delay``) and its workflow builds the
activity retry policy from :class:`Backoff`; the direct engine (:mod:`skillweave.engines.direct`)
waits :meth:`Backoff.delay` between its own calls. Both apply it to every call of the
``Runtime`` port, so a run fails or goes on the same way on either engine.

The rule:

- retried after the server's ``Retry-After`` when it sent one: a ``ModelError`` the provider
  layer marked ``retryable`` (408/409/429/5xx, connection failures), a full pool
  (``PoolExhaustedError``), a run another manager holds a live claim on
  (``ExecutionInProgressError``: that manager may have stopped and its claim lapses);
- retried at once: a sandbox lost mid-run (``SandboxLostError``: the manager freed the id and
  a fresh sandbox is waiting);
- retried with back-off: a sandbox that did not start (unless it refused to, see below), a
  manager that could not be reached or answered 5xx (any other ``SandboxError``: a manager
  restarting must not fail runs), a manager that refuses this worker's token or store
  (``ManagerRefusedError``, once ``SANDBOX__QUEUE_SECONDS`` of waiting for it are spent: an
  operator fixes it, and a manager restarted right takes the step; it is never a tool
  result), a failing store (``StorageError``), and anything that is not
  a ``SkillweaveError`` (an ``OSError``, an HTTP client error: Temporal retries those too,
  since it cannot tell them apart);
- never retried, because another try fails the same way: a model error that is not transient,
  a sandbox that refused to start (``SandboxStartError(permanent=True)``: its isolation cannot
  be set up), a request the manager rejected or an execution id it saw differently, a
  missing or corrupt artifact, a malformed key, and every skill, agent, spec or config error.

A model profile may allow its calls fewer attempts than the engine (``MODEL__…MAX_ATTEMPTS``):
its ``ModelError`` carries the number, :class:`Retry` keeps it, and both engines stop at the
lower of it and their own (:meth:`Retry.allows`).

Every retry is told, the same way on both engines: :func:`retry_notice` makes the
:class:`RetryNotice` of a failed attempt that will be tried again (which call, attempt n of N,
the wait, the cause in one line), and :meth:`RetryNotice.line` is how every view shows it. The
direct engine hands it to the run's followers at once; on Temporal the activity puts it in its
heartbeat details (the UI shows them on the pending activity) and the engine's followers read
it from there (``skillweave.engines.temporal``).

Cancellation (``asyncio.CancelledError``) is not an error and never reaches here.
Pure: the workflow sandbox imports it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    AuditEntryError,
    ExecutionConflictError,
    ExecutionInProgressError,
    ExecutionRejectedError,
    InvalidKeyError,
    ManagerRefusedError,
    ModelError,
    PoolExhaustedError,
    SandboxError,
    SandboxLostError,
    SandboxStartError,
    SkillweaveError,
    StorageError,
)

__all__ = [
    "CAUSE_MAX_CHARS",
    "Backoff",
    "Retry",
    "RetryNotice",
    "cause_line",
    "classify",
    "retry_notice",
]

CAUSE_MAX_CHARS: Final = 240
"""How much of a failure a retry notice shows (its first line, clipped)."""


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
        case ManagerRefusedError():
            return _BACK_OFF  # an operator's to fix, not the request's: it may yet run
        case SandboxError():
            return _BACK_OFF
        case ArtifactNotFoundError() | ArtifactIntegrityError() | InvalidKeyError():
            return _FAIL
        case AuditEntryError():  # the entry's fields, not the store: the same input fails again
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


class RetryNotice(BaseModel):
    """A failed call that will be tried again, as every view tells it (:meth:`line`).

    Attributes:
        call: what was called, in a few words (``model openai:gpt-4o``, ``script pdf/x.py``).
        attempt: the attempt that failed (1 = the first).
        attempts: the most calls in all it may make (None: no limit).
        wait_seconds: how long until the next attempt (None: it has begun).
        cause: why it failed, in one line.
    """

    model_config = ConfigDict(frozen=True)

    call: str
    attempt: int = Field(ge=1)
    attempts: int | None = Field(default=None, ge=1)
    wait_seconds: float | None = Field(default=None, ge=0)
    cause: str

    def line(self) -> str:
        """``model openai:x: attempt 2 of 8 failed: HTTP 503 Service Unavailable; retrying in
        4.0 s``."""
        of = f" of {self.attempts}" if self.attempts is not None else ""
        when = "now" if self.wait_seconds is None else f"in {self.wait_seconds:.1f} s"
        return f"{self.call}: attempt {self.attempt}{of} failed: {self.cause}; retrying {when}"


def retry_notice(
    exc: BaseException, *, call: str, attempt: int, backoff: Backoff
) -> RetryNotice | None:
    """The notice of `call`'s attempt number `attempt` (from 1), failed with `exc`, when the
    rule (:func:`classify`, :meth:`Retry.allows` under ``backoff.attempts``) tries it again
    after :meth:`Backoff.delay`; None when it is not tried again."""
    retry = classify(exc)
    if not retry.allows(attempt, limit=backoff.attempts):
        return None
    limit = backoff.attempts if retry.attempts is None else min(backoff.attempts, retry.attempts)
    return RetryNotice(
        call=call,
        attempt=attempt,
        attempts=limit,
        wait_seconds=backoff.delay(retry, attempt),
        cause=cause_line(str(exc) or type(exc).__name__, call=call),
    )


def cause_line(text: str, *, call: str = "") -> str:
    """A failure's message as a notice's cause: its first non-empty line, whitespace
    collapsed, without a leading repeat of the name `call` already shows (a model error
    starts with its model: ``openai:x: HTTP 503…``), at most :data:`CAUSE_MAX_CHARS`."""
    line = next((one.strip() for one in text.splitlines() if one.strip()), "")
    line = re.sub(r"\s+", " ", line)
    _, _, name = call.partition(" ")
    if name and line.startswith(f"{name}: "):
        line = line[len(name) + 2 :]
    line = line or "failed"
    return line if len(line) <= CAUSE_MAX_CHARS else line[: CAUSE_MAX_CHARS - 1] + "…"
