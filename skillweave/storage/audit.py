"""The skill audit log: an append-only, hash-chained record of every skill lifecycle and use event.

Whatever installs, uploads, enables, approves, scans, activates or runs a skill (the API,
workers, managers, the CLI) calls :meth:`AuditLog.record`; ``skillweave audit verify`` calls
:meth:`AuditLog.verify` and ``skillweave audit show`` :meth:`AuditLog.read`. The log lives in
the artifact store, so every process on every machine that shares the store writes one log
(keys from :mod:`skillweave.storage.keys`)::

    audit/log/{seq:012d}.json   one record, written once (put_if_absent), never replaced
    audit/head.json             the head anchor: seq and hash of the newest record known

A record is a JSON object: ``v`` (format, 1), ``seq`` (1, 2, …), ``time`` (UTC, ISO 8601),
``event`` (one of :data:`AuditEvent`), ``skill``, ``version`` (the package digest), ``actor``
(who: a process role and host, a manager's id, or an API principal), ``job`` (the run id),
``details`` (a small JSON object, at most :data:`MAX_DETAILS_BYTES`: script, args digest,
source, decision…), ``prev`` (the previous record's ``hash``; :data:`GENESIS` for record 1)
and ``hash``: HMAC-SHA256 under ``AUDIT__KEY`` (SHA-256 without a key) of the canonical JSON of
every other field (sorted keys, no whitespace, UTF-8). With a key, a writer to the store who
lacks it cannot make an edited, inserted or reordered record verify. Without one, the chain
catches accidental edits and naive tampering only: anyone who can write the store can recompute
every hash after an edit.

Appending from many processes: an append writes record ``head + 1`` with ``put_if_absent``;
whoever loses the race finds the new head by probing forward with ``stat`` and tries again, so
the records form one linear chain without a lock. The head is cached per :class:`AuditLog`, and
a fresh one starts from the anchor, so an append costs O(1) store calls amortised. The anchor is
advanced after each append (best effort, never backwards on purpose) and read by ``verify`` as a
lower bound: records may exist past it, but a record it names must be there, with its hash.

What ``verify`` cannot see: someone who can write the store may delete the newest records *and*
roll the anchor back to an older record (and, without a key, rewrite the whole log). Keep the
head that ``audit verify --json`` prints somewhere else to rule that out.

Written by hand: no library keeps a hash chain on an object store through conditional writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import json
import logging
import random
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, Literal, get_args

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SecretStr,
    ValidationError,
)

from skillweave.config import AuditSettings
from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    AuditLogError,
    StorageError,
)
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef, ArtifactStore

__all__ = [
    "AUDIT_EVENTS",
    "GENESIS",
    "MAX_DETAILS_BYTES",
    "AuditEntry",
    "AuditEvent",
    "AuditHead",
    "AuditLog",
    "AuditLogError",
    "AuditProblem",
    "AuditRecord",
    "AuditReport",
    "ProblemKind",
    "args_digest",
]

AuditEvent = Literal[
    "install",  # a skill installed from a source (git, a registry, a folder)
    "update",  # an installed skill moved to another version
    "remove",  # a skill removed or deleted
    "upload",  # a package uploaded over the API
    "enable",  # a skill enabled
    "disable",  # a skill disabled
    "approval",  # an operator approved (or refused: details.decision) a skill or version
    "network_approval",  # an operator approved (or revoked) a skill's network destinations
    "scan",  # a package scanned (details: verdict, findings)
    "signature",  # a package's signature checked (details: signer, valid)
    "activation",  # a job activated the skill
    "execution",  # a script started: one record per start (details: script, args_digest)
    "execution_repeat",  # a request of a started execution id answered without a start
    # (details: script, execution_id, answered: stored | joined | in_progress)
]
"""What happened to a skill: the closed set of kinds a record can have."""

AUDIT_EVENTS: Final[tuple[str, ...]] = get_args(AuditEvent)

ProblemKind = Literal["edited", "reordered", "removed", "unreadable"]
"""What ``verify`` found: a hash that does not match its record's content (``edited``); a
record in another record's place or not following its predecessor (``reordered``); records
missing from the middle or the tail (``removed``); bytes that are not a record (``unreadable``)."""

GENESIS: Final = "0" * 64
"""The ``prev`` of record 1."""

MAX_DETAILS_BYTES: Final = 4096
"""Largest ``details`` object, as canonical JSON: a record holds facts, not payloads."""

MAX_RECORD_BYTES: Final = 16 * 1024
"""Largest object read as a record; anything bigger is reported without being read."""

MAX_FIELD_CHARS: Final = 255
"""Longest ``skill``, ``version``, ``actor`` or ``job``."""

APPEND_ATTEMPTS: Final = 100
"""Races an append may lose (each loss is another process's append) before it gives up."""

READ_AHEAD: Final = 16
"""Records fetched at once by ``verify`` and ``read``."""

GAP_RECHECKS: Final = 256
"""Missing places ``verify`` looks at again, in case a listing raced with appends."""

_FORMAT: Final = 1
_HEX64: Final = r"^[0-9a-f]{64}$"
_HEX64_TEXT: Final = re.compile("[0-9a-f]{64}")
_RECORD_DOMAIN: Final = b"skillweave-audit-record\x00"
_ARGS_DOMAIN: Final = b"skillweave-audit-args\x00"
_JSON: Final = "application/json"

_log = logging.getLogger(__name__)


class AuditRecord(BaseModel):
    """One record of the audit log, as stored."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    v: Literal[1]
    seq: int = Field(ge=1, le=keys.MAX_AUDIT_SEQ)
    time: AwareDatetime = Field(strict=False)  # stored as ISO 8601 text
    event: AuditEvent
    skill: str = Field(min_length=1, max_length=MAX_FIELD_CHARS)
    version: str | None = Field(default=None, max_length=MAX_FIELD_CHARS)
    actor: str | None = Field(default=None, max_length=MAX_FIELD_CHARS)
    job: str | None = Field(default=None, max_length=MAX_FIELD_CHARS)
    details: dict[str, JsonValue] = Field(default_factory=dict)
    prev: str = Field(pattern=_HEX64)
    hash: str = Field(pattern=_HEX64)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """What a caller tells the log; :meth:`AuditLog.append` adds seq, time, prev and hash."""

    event: AuditEvent
    skill: str
    version: str | None = None
    actor: str | None = None
    """Who did it; None: the log's own actor (the process)."""
    job: str | None = None
    details: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AuditHead:
    """The newest record of the chain: its sequence number and hash (seq 0: an empty log)."""

    seq: int
    hash: str


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """One thing ``verify`` found; `seq` is None for a problem with the anchor or a stray key."""

    kind: ProblemKind
    seq: int | None
    message: str


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What ``verify`` found: how many records, the head, and the problems in sequence order."""

    records: int
    keyed: bool
    """Whether links were checked as HMACs under ``AUDIT__KEY``."""
    head: AuditHead | None
    problems: tuple[AuditProblem, ...]

    @property
    def intact(self) -> bool:
        """Whether the chain verified: no problem at all."""
        return not self.problems

    @property
    def first_bad_seq(self) -> int | None:
        """The lowest sequence number a problem names."""
        return min((p.seq for p in self.problems if p.seq is not None), default=None)


class _Anchor(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    seq: int = Field(ge=1, le=keys.MAX_AUDIT_SEQ)
    hash: str = Field(pattern=_HEX64)


@dataclass(frozen=True, slots=True)
class _Loaded:
    """One stored record as read: parsed when it could be, with what the next `prev` must be."""

    seq: int
    record: AuditRecord | None
    body: dict[str, object] | None
    link: str | None
    """The ``prev`` the next record must carry; None when it cannot be known."""
    problem: AuditProblem | None


class _Unreadable(Exception):
    pass


def args_digest(args: Sequence[str], *, key: SecretStr | None = None) -> str:
    """A digest of a script's arguments, for the log in their place (arguments may hold secrets).

    HMAC-SHA256 under `key` when one is given, so that a reader of the log cannot test guesses
    of short secrets against it; SHA-256 otherwise. Both over the canonical JSON of the list.
    """
    if isinstance(args, str) or not all(isinstance(arg, str) for arg in args):
        raise AuditLogError("the arguments to digest must be a sequence of strings")
    data = _ARGS_DOMAIN + _canonical(list(args))
    if key is None:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(_key_bytes(key), data, hashlib.sha256).hexdigest()


class AuditLog:
    """The audit log in `store` (see the module docstring for the chain and the races).

    Args:
        store: the artifact store every process of the deployment shares.
        key: ``AUDIT__KEY``: links are HMACs under it; None for plain SHA-256.
        enabled: when False, appends write nothing and return None (reads still work).
        actor: who this process is (``api@host``, ``worker@host``), for entries that name none.
        clock: the time of a new record (UTC); tests pass their own.
    """

    def __init__(
        self,
        store: ArtifactStore,
        *,
        key: SecretStr | None = None,
        enabled: bool = True,
        actor: str | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._store = store
        self._key = None if key is None else _key_bytes(key)
        self._args_key = key
        self._enabled = enabled
        self._actor = actor
        self._clock = clock or (lambda: datetime.now(UTC))
        self._head: AuditHead | None = None
        """The newest head this instance knows of (a lower bound: others append too)."""

    @classmethod
    def from_settings(
        cls, settings: AuditSettings, store: ArtifactStore, *, actor: str | None = None
    ) -> AuditLog:
        """The log the ``AUDIT__`` settings describe, in `store`."""
        return cls(store, key=settings.key, enabled=settings.enabled, actor=actor)

    @property
    def enabled(self) -> bool:
        """Whether appends are written."""
        return self._enabled

    @property
    def keyed(self) -> bool:
        """Whether links are HMACs under ``AUDIT__KEY``."""
        return self._key is not None

    # -- writing ---------------------------------------------------------------------------------

    async def record(
        self,
        event: AuditEvent,
        *,
        skill: str,
        version: str | None = None,
        job: str | None = None,
        actor: str | None = None,
        args: Sequence[str] | None = None,
        **details: JsonValue,
    ) -> AuditRecord | None:
        """Append one event built from keyword arguments; see :meth:`append`.

        `args`, when given, is stored as ``details.args_digest`` (:func:`args_digest` under the
        log's key), never as it is; every other keyword goes into ``details``.
        """
        if args is not None:
            details["args_digest"] = args_digest(args, key=self._args_key)
        entry = AuditEntry(
            event=event, skill=skill, version=version, actor=actor, job=job, details=details
        )
        return await self.append(entry)

    async def append(self, entry: AuditEntry) -> AuditRecord | None:
        """Append `entry` as the next record of the chain and return it (None when disabled).

        Safe to call from any number of tasks, processes and machines at once.

        Raises:
            AuditLogError: the entry is malformed (bad event, fields too long, details too
                large or not JSON), the store failed, or the race for the next place was lost
                :data:`APPEND_ATTEMPTS` times. The event is then not in the log; whether the
                caller's operation must fail too is the caller's decision.
        """
        if not self._enabled:
            return None
        moment = self._clock()  # when it happened, however many races the append loses
        self._seal(entry, AuditHead(0, GENESIS), moment)  # a malformed entry fails before I/O
        try:
            head = self._head or await self._find_head()
            for attempt in range(APPEND_ATTEMPTS):
                record, data = self._seal(entry, head, moment)
                key = keys.audit_record_key(record.seq)
                if await self._store.put_if_absent(key, data, content_type=_JSON) is not None:
                    self._remember(AuditHead(record.seq, record.hash))
                    await self._advance_anchor(record)
                    return record
                head = await self._find_head(start=record.seq)  # someone else's now
                if attempt >= 2:  # a crowd: spread the next tries out a little
                    await asyncio.sleep(random.uniform(0, min(0.1, 0.002 * attempt)))
        except AuditLogError:
            raise
        except StorageError as exc:
            raise AuditLogError(
                f"cannot append {entry.event!r} of skill {entry.skill!r} to the audit log: {exc}",
                key=exc.key,
                code=exc.code,
            ) from exc
        raise AuditLogError(
            f"cannot append {entry.event!r} of skill {entry.skill!r} to the audit log: "
            f"{APPEND_ATTEMPTS} other appends won the race for the next record first"
        )

    def _seal(
        self, entry: AuditEntry, head: AuditHead, moment: datetime
    ) -> tuple[AuditRecord, bytes]:
        """The record of `entry` at `moment` that follows `head`, and its stored bytes."""
        details = dict(entry.details)
        try:
            size = len(_canonical(details))
        except (TypeError, ValueError, UnicodeEncodeError) as exc:
            raise AuditLogError(f"audit details must be small JSON: {exc}") from None
        if size > MAX_DETAILS_BYTES:
            raise AuditLogError(
                f"audit details are {size} bytes as JSON, over the {MAX_DETAILS_BYTES} allowed"
            )
        body: dict[str, object] = {
            "v": _FORMAT,
            "seq": head.seq + 1,
            "time": _iso(moment),
            "event": entry.event,
            "skill": entry.skill,
            "version": entry.version,
            "actor": entry.actor if entry.actor is not None else self._actor,
            "job": entry.job,
            "details": details,
            "prev": head.hash,
        }
        body["hash"] = self._link(body)
        try:
            record = AuditRecord.model_validate(body)
        except ValidationError as exc:
            raise AuditLogError(f"not a valid audit entry: {_first_error(exc)}") from None
        return record, _canonical(body)

    def _remember(self, head: AuditHead) -> None:
        if self._head is None or head.seq > self._head.seq:
            self._head = head

    async def _advance_anchor(self, record: AuditRecord) -> None:
        """Point the anchor at `record` unless it already names a later one (best effort: the
        record is written; a stale anchor only weakens the tail check until the next append)."""
        try:
            anchor = await self._read_anchor()
            if anchor is not None and anchor.seq >= record.seq:
                return
            data = _canonical({"seq": record.seq, "hash": record.hash})
            await self._store.put_bytes(keys.AUDIT_HEAD_KEY, data, content_type=_JSON)
        except StorageError as exc:
            _log.warning(
                "audit log: record %d is written, the head anchor not: %s", record.seq, exc
            )

    # -- finding the head ------------------------------------------------------------------------

    async def _find_head(self, *, start: int | None = None) -> AuditHead:
        """The newest record, probing forward from `start` (a record known to exist) or, with
        none, from the anchor; a log without a usable anchor is searched by doubling."""
        for _ in range(APPEND_ATTEMPTS):
            if start is None:
                start = await self._start_from_anchor()
            seq = await self._last_from(start) if start else await self._search()
            head = await self._head_at(seq)
            if head is not None:
                self._remember(head)
                return head
            start = 0  # deleted under us: search again
        raise AuditLogError("cannot find the audit log's newest record: records keep vanishing")

    async def _start_from_anchor(self) -> int:
        anchor = await self._read_anchor()
        if anchor is None:
            return 0
        if await self._exists(anchor.seq):
            return anchor.seq
        _log.error(
            "audit log: the head anchor names record %d, which is missing: records were "
            "removed; run `skillweave audit verify`",
            anchor.seq,
        )
        return 0

    async def _exists(self, seq: int) -> bool:
        return await self._store.stat(keys.audit_record_key(seq)) is not None

    async def _last_from(self, seq: int) -> int:
        """The last record of the unbroken run that starts at `seq`."""
        while seq < keys.MAX_AUDIT_SEQ and await self._exists(seq + 1):
            seq += 1
        return seq

    async def _search(self) -> int:
        """The newest record by doubling then bisecting (O(log n) stats); 0 for an empty log."""
        if not await self._exists(1):
            return 0
        low, high = 1, 2
        while high <= keys.MAX_AUDIT_SEQ and await self._exists(high):
            low, high = high, high * 2
        while high - low > 1:
            middle = (low + high) // 2
            if await self._exists(middle):
                low = middle
            else:
                high = middle
        return await self._last_from(low)

    async def _head_at(self, seq: int) -> AuditHead | None:
        if seq == 0:
            return AuditHead(0, GENESIS)
        ref = await self._store.stat(keys.audit_record_key(seq))
        if ref is None:
            return None
        loaded = await self._load(seq, ref)
        problem = loaded.problem
        if loaded.link is not None:
            if problem is not None:
                _log.error("audit log: appending after a damaged record: %s", problem.message)
            return AuditHead(seq, loaded.link)
        if problem is not None and problem.kind == "removed":
            return None
        reason = problem.message if problem is not None else f"record {seq} is damaged"
        raise AuditLogError(
            f"cannot append to the audit log after its newest record: {reason}; "
            "run `skillweave audit verify`"
        )

    async def _read_anchor(self) -> _Anchor | None:
        ref = await self._store.stat(keys.AUDIT_HEAD_KEY)
        if ref is None or ref.size > MAX_RECORD_BYTES:
            return None
        try:
            return _Anchor.model_validate(_parse(await self._store.get_bytes(ref)))
        except (_Unreadable, ValidationError, ArtifactNotFoundError, ArtifactIntegrityError):
            return None

    # -- reading ---------------------------------------------------------------------------------

    async def read(
        self,
        *,
        skill: str | None = None,
        since: datetime | None = None,
        event: AuditEvent | None = None,
        limit: int | None = None,
        on_damaged: Callable[[AuditProblem], None] | None = None,
    ) -> AsyncIterator[AuditRecord]:
        """The records that match, in sequence order (``since`` and later, inclusive).

        The chain is not checked (that is :meth:`verify`), but a record that cannot be read or
        whose hash does not match its content is not yielded: it goes to `on_damaged` (by
        default, logged as a warning).

        Raises:
            AuditLogError: the store failed.
        """
        if since is not None and since.tzinfo is None:
            raise AuditLogError("`since` must be an aware datetime (UTC)")
        damaged = on_damaged or (lambda problem: _log.warning("audit log: %s", problem.message))
        shown = 0
        try:
            async with contextlib.aclosing(self._stored(lambda _: None)) as stored:
                async for loaded in stored:
                    record = loaded.record
                    problem = loaded.problem if record is None else self._record_problem(loaded)
                    if problem is not None or record is None:
                        damaged(problem or _unreadable(loaded.seq, "it is not an audit record"))
                        continue
                    if skill is not None and record.skill != skill:
                        continue
                    if event is not None and record.event != event:
                        continue
                    if since is not None and record.time < since:
                        continue
                    yield record
                    shown += 1
                    if limit is not None and shown >= limit:
                        return
        except StorageError as exc:
            raise AuditLogError(f"cannot read the audit log: {exc}", key=exc.key) from exc

    async def verify(self) -> AuditReport:
        """Check every record and the chain; see :data:`ProblemKind` for what is found.

        Raises:
            AuditLogError: the store failed (a damaged log is a report, not an error).
        """
        problems: list[AuditProblem] = []
        try:
            # The anchor first: read before the listing, it is a lower bound of what is listed.
            anchor, anchor_stored = await self._verify_anchor(problems)
            expected, count = 1, 0
            link: str | None = GENESIS
            last: AuditHead | None = None
            anchored: str | None = None
            async for loaded in self._stored(problems.append):
                count += 1
                if loaded.seq > expected:
                    reason = f"record {loaded.seq} follows record {expected - 1}"
                    problems.append(_removed(expected, loaded.seq - 1, reason))
                    link = None
                problem = loaded.problem or self._chain_problem(loaded, link)
                if problem is not None:
                    problems.append(problem)
                # After a record that is not one, the next link cannot be judged: the damage is
                # reported once, at the record itself.
                link = loaded.link if loaded.record is not None else None
                expected = loaded.seq + 1
                if loaded.link is not None:
                    last = AuditHead(loaded.seq, loaded.link)
                if anchor is not None and loaded.seq == anchor.seq:
                    anchored = loaded.link
        except AuditLogError:
            raise
        except StorageError as exc:
            raise AuditLogError(f"cannot read the audit log: {exc}", key=exc.key) from exc
        if anchor is not None:
            if anchor.seq >= expected:
                reason = (
                    f"the head anchor names record {anchor.seq}, the log ends at {expected - 1}"
                )
                problems.append(_removed(expected, anchor.seq, reason))
            elif anchored is not None and anchored != anchor.hash:
                problems.append(
                    AuditProblem(
                        "edited",
                        anchor.seq,
                        f"record {anchor.seq} is not the record the head anchor names: the "
                        "newest records were replaced",
                    )
                )
        elif count and not anchor_stored:
            problems.append(
                AuditProblem(
                    "removed",
                    None,
                    f"the head anchor {keys.AUDIT_HEAD_KEY} is missing: removal of the newest "
                    "records cannot be ruled out",
                )
            )
        problems.sort(key=lambda p: (p.seq is None, p.seq or 0))
        return AuditReport(records=count, keyed=self.keyed, head=last, problems=tuple(problems))

    async def _verify_anchor(self, problems: list[AuditProblem]) -> tuple[_Anchor | None, bool]:
        """The anchor when it is readable, and whether anything is stored under its key."""
        ref = await self._store.stat(keys.AUDIT_HEAD_KEY)
        if ref is None:
            return None, False
        try:
            if ref.size > MAX_RECORD_BYTES:
                raise _Unreadable(f"it is {ref.size} bytes")
            return _Anchor.model_validate(_parse(await self._store.get_bytes(ref))), True
        except (_Unreadable, ValidationError, ArtifactIntegrityError, ArtifactNotFoundError) as exc:
            reason = _first_error(exc) if isinstance(exc, ValidationError) else str(exc)
            message = f"the head anchor {keys.AUDIT_HEAD_KEY} is unreadable: {reason}"
            problems.append(AuditProblem("unreadable", None, message))
            return None, True

    def _chain_problem(self, loaded: _Loaded, link: str | None) -> AuditProblem | None:
        """What is wrong with a readable record: its place, its hash, or its link."""
        problem = self._record_problem(loaded)
        if problem is not None:
            return problem
        assert loaded.record is not None
        seq = loaded.seq
        if link is not None and loaded.record.prev != link:
            return AuditProblem(
                "reordered",
                seq,
                f"record {seq} does not follow record {seq - 1}: its prev is not the hash of "
                f"record {seq - 1} (records were reordered or replaced, or the chain forked)",
            )
        return None

    def _record_problem(self, loaded: _Loaded) -> AuditProblem | None:
        """A record's own problem: in another record's place, or a hash that does not match."""
        record, body, seq = loaded.record, loaded.body, loaded.seq
        assert record is not None
        assert body is not None
        if record.seq != seq:
            return AuditProblem(
                "reordered", seq, f"record {seq} holds record {record.seq}: records were moved"
            )
        content = {name: value for name, value in body.items() if name != "hash"}
        if hmac.compare_digest(self._link(content), record.hash):
            return None
        if self._key is not None and hmac.compare_digest(_plain(content), record.hash):
            return AuditProblem(
                "edited",
                seq,
                f"record {seq} was forged: its hash is a plain SHA-256, not an HMAC under "
                "AUDIT__KEY (rewritten without the key, or written before the key was set)",
            )
        return AuditProblem(
            "edited", seq, f"record {seq} was edited: its hash does not match its content"
        )

    async def _stored(self, stray: Callable[[AuditProblem], None]) -> AsyncIterator[_Loaded]:
        """Every stored record in sequence order, read :data:`READ_AHEAD` at a time; a key
        under the log's prefix that is not a record's goes to `stray`."""
        listed: list[tuple[int, ArtifactRef]] = []
        for ref in await self._store.list(keys.AUDIT_LOG_PREFIX):
            seq = keys.audit_record_seq(ref.key)
            if seq is None:
                stray(
                    AuditProblem(
                        "unreadable", None, f"{ref.key!r} is in the audit log but no record's key"
                    )
                )
            else:
                listed.append((seq, ref))
        listed.sort(key=lambda item: item[0])
        listed = await self._with_late_arrivals(listed)
        for start in range(0, len(listed), READ_AHEAD):
            batch = listed[start : start + READ_AHEAD]
            for loaded in await asyncio.gather(*(self._load(seq, ref) for seq, ref in batch)):
                yield loaded

    async def _with_late_arrivals(
        self, listed: list[tuple[int, ArtifactRef]]
    ) -> list[tuple[int, ArtifactRef]]:
        """`listed` with the records a listing missed because they were appended while it ran.

        A listing is no snapshot: it can pass record N's place before N is written and reach
        N+1 after, so a gap is looked at again before it counts as removed records (up to
        :data:`GAP_RECHECKS` places: a hole that large is not a race).
        """
        missing = [
            seq
            for (before, _), (after, _) in itertools.pairwise([(0, None), *listed])
            for seq in range(before + 1, after)
        ]
        if not missing or len(missing) > GAP_RECHECKS:
            return listed
        found = await asyncio.gather(
            *(self._store.stat(keys.audit_record_key(seq)) for seq in missing)
        )
        late = [(seq, ref) for seq, ref in zip(missing, found, strict=True) if ref is not None]
        return sorted([*listed, *late], key=lambda item: item[0]) if late else listed

    async def _load(self, seq: int, ref: ArtifactRef) -> _Loaded:
        """Record `seq` read and parsed; never raises for bad content, only for a failed store."""
        if ref.size > MAX_RECORD_BYTES:
            problem = _unreadable(seq, f"it is {ref.size} bytes, over {MAX_RECORD_BYTES}")
            return _Loaded(seq, None, None, None, problem)
        data: bytes | None = None
        for _ in range(2):  # a store-level mismatch may be a write racing the listing: once more
            try:
                data = await self._store.get_bytes(ref)
                break
            except ArtifactNotFoundError:
                problem = AuditProblem("removed", seq, f"record {seq} was removed")
                return _Loaded(seq, None, None, None, problem)
            except ArtifactIntegrityError:
                fresh = await self._store.stat(ref.key)
                if fresh is None:
                    problem = AuditProblem("removed", seq, f"record {seq} was removed")
                    return _Loaded(seq, None, None, None, problem)
                ref = fresh
        if data is None:
            problem = AuditProblem(
                "edited", seq, f"record {seq} was edited: its bytes changed behind the store"
            )
            return _Loaded(seq, None, None, None, problem)
        try:
            body = _parse(data)
        except _Unreadable as exc:
            return _Loaded(seq, None, None, _link_of(data, None), _unreadable(seq, str(exc)))
        try:
            record = AuditRecord.model_validate(body)
        except ValidationError as exc:
            problem = _unreadable(seq, f"it is not an audit record: {_first_error(exc)}")
            return _Loaded(seq, None, body, _link_of(data, body), problem)
        return _Loaded(seq, record, body, record.hash, None)

    def _link(self, content: Mapping[str, object]) -> str:
        """The hash of a record's content: HMAC-SHA256 under the key, or SHA-256."""
        if self._key is None:
            return _plain(content)
        return hmac.new(self._key, _RECORD_DOMAIN + _canonical(content), hashlib.sha256).hexdigest()


def _plain(content: Mapping[str, object]) -> str:
    return hashlib.sha256(_RECORD_DOMAIN + _canonical(content)).hexdigest()


def _link_of(data: bytes, body: Mapping[str, object] | None) -> str:
    """What the record after a damaged one links to: the hash it claims when it has a
    well-formed one, else the SHA-256 of its bytes (appends and ``verify`` agree on this)."""
    claimed = body.get("hash") if body is not None else None
    if isinstance(claimed, str) and _HEX64_TEXT.fullmatch(claimed):
        return claimed
    return hashlib.sha256(data).hexdigest()


def _canonical(value: object) -> bytes:
    """Sorted keys, no whitespace, UTF-8; NaN and infinities refused."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def _parse(data: bytes) -> dict[str, object]:
    """A JSON object from untrusted bytes: UTF-8, no duplicate keys, no NaN, not too deep."""
    try:
        value = json.loads(
            data.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_no_constant
        )
    except UnicodeDecodeError:
        raise _Unreadable("it is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise _Unreadable(f"it is not JSON: {str(exc)[:120]}") from None
    if not isinstance(value, dict):
        raise _Unreadable("it is not a JSON object")
    try:
        _canonical(value)  # lone surrogates (from \\ud800 escapes) cannot be hashed
    except (ValueError, UnicodeEncodeError) as exc:
        raise _Unreadable(f"it cannot be hashed: {str(exc)[:120]}") from None
    return value


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a key appears twice in an object")
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _key_bytes(key: SecretStr) -> bytes:
    return key.get_secret_value().encode("utf-8")


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "the record"
    return f"{where}: {error['msg']}"


def _unreadable(seq: int, reason: str) -> AuditProblem:
    return AuditProblem("unreadable", seq, f"record {seq} is unreadable: {reason}")


def _removed(first: int, last: int, reason: str) -> AuditProblem:
    what = f"record {first} was" if first == last else f"records {first} to {last} were"
    return AuditProblem("removed", first, f"{what} removed: {reason}")
