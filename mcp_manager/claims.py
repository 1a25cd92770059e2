"""Once-only work across managers: a claim in the store with a renewed lease (:class:`Claims`).

Work that must happen once although several managers share a store (a script run by
``executions``, an environment build by ``environments``) is claimed first. Both use this
module; docs/RELIABILITY.md says what the claims guarantee.

- **Claim.** ``put_if_absent`` of the claim key of attempt 1 (``.claim``): atomic, so one
  manager wins. The record (:class:`ClaimRecord`) says who holds it, when, and for executions
  which request (its fingerprint).
- **Renew.** While the work runs its holder rewrites the record every quarter lease
  (:meth:`Claims.renewing`), so the others see it alive.
- **Take over.** A claim not renewed for a lease belongs to a manager that stopped (and its
  work with it). The next attempt's key (``.claim.2``...) is claimed, atomically again, so
  one manager takes over; at most ``max_attempts`` attempts, then the work is given up.
- **Withdraw.** Work that never started gives its claim back (:meth:`Claims.withdraw`), so
  the next request may claim it; work that is over may drop the whole chain of attempts
  (:meth:`Claims.release`), so a later one starts again at attempt 1.
- **Mark ran.** Work that ran but whose outcome could not be stored says so in its claim
  (:meth:`Claims.mark_ran`), so that it is never taken over and run again.

What a caller does when the work is done already, when the holder's claim is for other work,
or when the holder is alive (wait for it, or answer "in progress") is its own policy, passed
to :meth:`Claims.acquire` as functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from skillweave.errors import ArtifactIntegrityError, ArtifactNotFoundError, StorageError
from skillweave.storage import ArtifactStore

__all__ = ["MAX_ATTEMPTS", "Claim", "ClaimRecord", "Claims", "HolderKind"]

logger = logging.getLogger("skillweave.manager")

MAX_ATTEMPTS: Final = 5
"""Attempts of one piece of work interrupted by stopped managers, at most."""
_RENEWALS_PER_LEASE: Final = 4
_WITHDRAWN_PAUSE: Final = 0.01  # a claim withdrawn between two looks: look again, not spin
_JSON: Final = "application/json"

HolderKind = Literal["manager", "builder"]
"""The record member that names the holder: a manager running a script, or a builder."""

T = TypeVar("T")


class ClaimRecord(BaseModel):
    """What a claim key holds. Managers of every version read these members; a new one must
    be optional (a record of an older manager lacks it).

    Attributes:
        attempt: which attempt of the work this claim is (1 for ``.claim``).
        at: when it was claimed or last renewed (wall-clock seconds).
        renewed: when it was last renewed (records of early managers may lack it: ``at``).
        manager: the manager instance running a script (executions).
        builder: the builder instance building an environment (environment builds).
        fingerprint: which request the execution is (executions).
        ran: the work ran, and its outcome could not be stored: never run it again.
        lease: the lease its holder keeps (renewing four times a lease): others judge the
            claim by it, not by their own (records of early managers lack it: the reader's).
    """

    attempt: int = 1
    at: float = 0.0
    renewed: float | None = None
    lease: float | None = None
    manager: str | None = None
    builder: str | None = None
    fingerprint: str | None = None
    ran: bool | None = None

    @property
    def last_renewed(self) -> float:
        """When its holder last showed it was alive."""
        return self.renewed if self.renewed is not None else self.at

    def encoded(self) -> bytes:
        """The record as stored: the members that are set."""
        return self.model_dump_json(exclude_none=True).encode()


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim won: its attempt and the keys of the attempts up to it (the last is its own)."""

    attempt: int
    chain: tuple[str, ...]
    fingerprint: str | None = None

    @property
    def key(self) -> str:
        """The store key of this claim."""
        return self.chain[-1]

    @property
    def taken_over(self) -> bool:
        """True when an earlier attempt's claim lapsed and this one took the work over."""
        return self.attempt > 1


_MAX_LEASE: Final = 86_400.0
"""The longest lease a record may claim for itself; beyond (or none) the reader's own holds."""


def _accept(_: ClaimRecord) -> None:
    return None


class Claims:
    """Claims in `store`, held by this process (see the module docstring).

    Args:
        store: where the claim records live.
        lease: how long a claim lives unrenewed (its holder renews it four times as often);
            a lapsed claim's work is taken over by the next attempt. Read at each use, so it
            can be changed on a running instance.
        holder: which record member names this process (``manager`` or ``builder``).
        max_attempts: how many attempts of one piece of work may be claimed, at most.
        holder_id: this process's name in its records (the manager id; default: random).
        clock_skew: how far the clocks of two managers may disagree: a claim is taken over
            only once its own lease and this much more have passed since its last renewal.
    """

    def __init__(
        self,
        store: ArtifactStore,
        *,
        lease: float,
        holder: HolderKind,
        max_attempts: int = MAX_ATTEMPTS,
        holder_id: str | None = None,
        clock_skew: float = 0.0,
    ) -> None:
        self.lease = lease
        self.max_attempts = max_attempts
        self.clock_skew = clock_skew
        self._store = store
        self._holder = holder
        self._instance = holder_id or uuid.uuid4().hex

    def record(self, attempt: int, *, fingerprint: str | None = None) -> ClaimRecord:
        """This process's record of `attempt`, stamped now."""
        now = time.time()
        return ClaimRecord(
            attempt=attempt,
            at=now,
            renewed=now,
            lease=self.lease,
            fingerprint=fingerprint,
            manager=self._instance if self._holder == "manager" else None,
            builder=self._instance if self._holder == "builder" else None,
        )

    async def acquire(
        self,
        key_of: Callable[[int], str],
        *,
        settled: Callable[[], Awaitable[T | None]],
        wait: Callable[[float], Awaitable[None]],
        exhausted: Callable[[], Exception],
        check: Callable[[ClaimRecord], None] = _accept,
        fingerprint: str | None = None,
        what: str,
    ) -> Claim | T:
        """Claim the work whose attempt keys `key_of` gives; or its outcome, once it is done.

        Args:
            key_of: the claim key of an attempt (1, 2, ...).
            settled: the work's outcome when it is done already (None: not done); asked each
                time a claim is found held. It may raise (a stored failure, say).
            wait: called with the seconds left of a live holder's lease: raise to give up
                now, or return (after waiting) to look again.
            exhausted: the error raised once `max_attempts` claims lapsed.
            check: raises when a holder's claim forbids going on (another request's, or work
                that ran and must not run again); called before its lease is looked at.
            fingerprint: written into the record (executions: which request).
            what: names the work in log lines.

        Raises:
            Whatever `settled`, `check`, `wait` raise, and `exhausted()`.
        """
        chain: list[str] = []
        for attempt in range(1, self.max_attempts + 1):
            key = key_of(attempt)
            chain.append(key)
            while True:
                record = self.record(attempt, fingerprint=fingerprint)
                if (
                    await self._store.put_if_absent(key, record.encoded(), content_type=_JSON)
                    is not None
                ):
                    return Claim(attempt, tuple(chain), fingerprint)
                outcome = await settled()
                if outcome is not None:
                    return outcome
                holder = await self.read(key)
                if holder is None:  # withdrawn between the put and the look: claim it again
                    await asyncio.sleep(_WITHDRAWN_PAUSE)
                    continue
                check(holder)
                lease = holder.lease if 0 < (holder.lease or 0) <= _MAX_LEASE else self.lease
                left = lease + self.clock_skew - (time.time() - holder.last_renewed)
                if left <= 0:
                    break
                await wait(left)
            logger.warning(
                "%s: the claim of attempt %d lapsed (its manager stopped); trying attempt %d",
                what,
                attempt,
                attempt + 1,
            )
        raise exhausted()

    async def read(self, key: str) -> ClaimRecord | None:
        """The record under `key`; None when there is none (or it vanished as it was read).

        Raises:
            StorageError: the key holds something that is not a claim record.
        """
        ref = await self._store.stat(key)
        if ref is None:
            return None
        try:
            data = await self._store.get_bytes(ref)
        except (ArtifactNotFoundError, ArtifactIntegrityError):
            return None  # rewritten (renewed) or withdrawn between the stat and the read
        try:
            return ClaimRecord.model_validate_json(data)
        except ValidationError:
            raise StorageError(f"{key} holds no claim record", key=key) from None

    @contextlib.asynccontextmanager
    async def renewing(self, claim: Claim) -> AsyncIterator[None]:
        """Renew `claim` while the body runs, so that no other manager takes the work over."""
        task = asyncio.create_task(self._renew(claim))
        try:
            yield
        finally:
            task.cancel()

    async def _renew(self, claim: Claim) -> None:
        while True:
            await asyncio.sleep(self.lease / _RENEWALS_PER_LEASE)
            record = self.record(claim.attempt, fingerprint=claim.fingerprint)
            try:
                await self._store.put_bytes(claim.key, record.encoded(), content_type=_JSON)
            except StorageError as exc:  # the next renewal may get through
                logger.warning("claim %s not renewed: %s", claim.key, exc)

    async def withdraw(self, claim: Claim) -> None:
        """Give the claim back: the work never started, so it may be claimed (once) anew.

        Raises:
            StorageError: the claim could not be removed (it lapses after the lease).
        """
        await self._store.delete(claim.key)

    async def release(self, claim: Claim) -> None:
        """Remove the claim and the lapsed claims of earlier attempts: the work is over, and
        whoever does it again starts at attempt 1. A claim that cannot be removed is only
        logged: it lapses after the lease anyway."""
        for key in reversed(claim.chain):
            try:
                await self._store.delete(key)
            except StorageError as exc:
                logger.warning("claim %s not withdrawn: %s", key, exc)

    async def mark_ran(self, claim: Claim) -> None:
        """Say in the claim that the work ran (its outcome could not be stored), so that no
        later request takes it over and runs it again. Best effort: the store may be down."""
        record = self.record(claim.attempt, fingerprint=claim.fingerprint)
        record = record.model_copy(update={"ran": True})
        with contextlib.suppress(StorageError):
            await self._store.put_bytes(claim.key, record.encoded(), content_type=_JSON)
