"""What the audit log stores: records and checkpoints, how each is sealed, and how stored bytes
are read back without trusting them.

Both kinds are canonical JSON (sorted keys, no whitespace, UTF-8) whose ``hash`` is
HMAC-SHA256 under ``AUDIT__KEY`` (SHA-256 without one) of every other field, with a domain
separator per kind so that a record can never pass for a checkpoint or the other way round.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, Literal, get_args

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, JsonValue, SecretStr

from skillweave.errors import AuditEntryError
from skillweave.storage import keys

AuditEvent = Literal[
    "install",  # a skill installed from a source (git, a registry, a folder)
    "update",  # an installed skill moved to another version
    "rollback",  # an uploaded skill's earlier stored version made current again
    # (details: from, to, decision: the scan policy's today, held)
    "remove",  # a skill removed or deleted
    "upload",  # a package uploaded over the API
    "enable",  # a skill enabled
    "disable",  # a skill disabled
    "approval",  # an operator approved (or refused: details.decision) a skill or version
    "eval_gate",  # an update or rollback gated on evals (details: from, to, decision:
    # passed | refused, pass_rate, current_pass_rate, tolerance, batch)
    "network_approval",  # an operator approved (or revoked) a skill's network destinations
    "scan",  # a package scanned (details: verdict, findings)
    "signature",  # a package's signature checked (details: signer, valid)
    "activation",  # a run activated the skill
    "execution",  # a script started: one record per start (details: script, args_digest)
    "execution_repeat",  # a request of a started execution id answered without a start
    # (details: script, execution_id, answered: stored | joined | in_progress)
]
"""What happened to a skill: the closed set of kinds a record can have."""

AUDIT_EVENTS: Final[tuple[str, ...]] = get_args(AuditEvent)

GENESIS: Final = "0" * 64
"""The ``prev`` of the first record of every chain, and of the first checkpoint."""

MAX_DETAILS_BYTES: Final = 4096
"""Largest ``details`` object, as canonical JSON: a record holds facts, not payloads."""

MAX_RECORD_BYTES: Final = 16 * 1024
"""Largest record or checkpoint read; anything bigger is reported without being parsed."""

MAX_BLOCK_RECORDS: Final = 128
"""Most records one block holds (one store write)."""

MAX_BLOCK_BYTES: Final = MAX_BLOCK_RECORDS * MAX_RECORD_BYTES
"""Largest block read; anything bigger is reported without being read."""

MAX_FIELD_CHARS: Final = 255
"""Longest ``skill``, ``version``, ``actor`` or ``run``."""

FORMAT: Final = 2
HEX64: Final = r"^[0-9a-f]{64}$"
HEX64_TEXT: Final = re.compile("[0-9a-f]{64}")
WRITER: Final = r"^[0-9a-f]{16}$"
_RECORD_DOMAIN: Final = b"skillweave-audit-record\x00"
_CHECKPOINT_DOMAIN: Final = b"skillweave-audit-checkpoint\x00"
_ARGS_DOMAIN: Final = b"skillweave-audit-args\x00"


class Seen(BaseModel):
    """The newest checkpoint a writer knew when it sealed a record: its place and hash."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    seq: int = Field(ge=1, le=keys.MAX_AUDIT_SEQ)
    hash: str = Field(pattern=HEX64)


class AuditRecord(BaseModel):
    """One record of the audit log, as stored: record `seq` of `writer`'s chain."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    v: Literal[2]
    writer: str = Field(pattern=WRITER)
    seq: int = Field(ge=1, le=keys.MAX_AUDIT_SEQ)
    time: AwareDatetime = Field(strict=False)  # stored as ISO 8601 text
    event: AuditEvent
    skill: str = Field(min_length=1, max_length=MAX_FIELD_CHARS)
    version: str | None = Field(default=None, max_length=MAX_FIELD_CHARS)
    actor: str | None = Field(default=None, max_length=MAX_FIELD_CHARS)
    run: str | None = Field(default=None, max_length=MAX_FIELD_CHARS)
    details: dict[str, JsonValue] = Field(default_factory=dict)
    seen: Seen | None = None
    prev: str = Field(pattern=HEX64)
    hash: str = Field(pattern=HEX64)


class Checkpoint(BaseModel):
    """Checkpoint `seq` of the log's checkpoint chain: `writer`'s chain reached record
    `record` whose hash is `head`."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    v: Literal[2]
    seq: int = Field(ge=1, le=keys.MAX_AUDIT_SEQ)
    time: AwareDatetime = Field(strict=False)
    writer: str = Field(pattern=WRITER)
    record: int = Field(ge=1, le=keys.MAX_AUDIT_SEQ)
    head: str = Field(pattern=HEX64)
    prev: str = Field(pattern=HEX64)
    hash: str = Field(pattern=HEX64)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """What a caller tells the log; :meth:`AuditLog.append` adds the rest."""

    event: AuditEvent
    skill: str
    version: str | None = None
    actor: str | None = None
    """Who did it; None: the log's own actor (the process)."""
    run: str | None = None
    details: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AuditHead:
    """A place in a chain and the hash there: the newest checkpoint, for a head kept elsewhere
    (``seq`` 0: none yet)."""

    seq: int
    hash: str


class Unreadable(Exception):
    """Stored bytes that are not a record (the message says why)."""


class Sealer:
    """Seals and checks records and checkpoints under one key (or none)."""

    def __init__(self, key: SecretStr | None) -> None:
        self.key = None if key is None else key.get_secret_value().encode("utf-8")
        self.args_key = key

    def record(
        self,
        entry: AuditEntry,
        *,
        writer: str,
        seq: int,
        prev: str,
        seen: Seen | None,
        moment: datetime,
        actor: str | None,
    ) -> tuple[AuditRecord, bytes]:
        """The record of `entry` at place `seq` of `writer`'s chain, and its stored line."""
        body = _body(
            entry, writer=writer, seq=seq, prev=prev, seen=seen, moment=moment, actor=actor
        )
        body["hash"] = self.link(body)
        return _validated(body), canonical(body)

    def check(self, entry: AuditEntry, *, moment: datetime, actor: str | None) -> None:
        """Raise :class:`~skillweave.errors.AuditEntryError` if `entry` cannot be a record
        (fields, details), without sealing it: what an append checks before it joins a block."""
        body = _body(
            entry, writer="0" * 16, seq=1, prev=GENESIS, seen=None, moment=moment, actor=actor
        )
        body["hash"] = GENESIS
        _validated(body)

    def checkpoint(
        self, *, seq: int, prev: str, writer: str, record: int, head: str, moment: datetime
    ) -> tuple[Checkpoint, bytes]:
        body: dict[str, object] = {
            "v": FORMAT,
            "seq": seq,
            "time": iso(moment),
            "writer": writer,
            "record": record,
            "head": head,
            "prev": prev,
        }
        body["hash"] = self.link(body, checkpoint=True)
        return Checkpoint.model_validate(body), canonical(body)

    def link(self, content: Mapping[str, object], *, checkpoint: bool = False) -> str:
        """The hash of a record's (or checkpoint's) content without its ``hash``."""
        data = _hashed(content, checkpoint=checkpoint)
        if self.key is None:
            return hashlib.sha256(data).hexdigest()
        return hmac.new(self.key, data, hashlib.sha256).hexdigest()

    def forged(self, content: Mapping[str, object], claimed: str, *, checkpoint: bool) -> bool:
        """Whether `claimed` is the plain SHA-256 where an HMAC was due: written without the key."""
        if self.key is None:
            return False
        plain = hashlib.sha256(_hashed(content, checkpoint=checkpoint)).hexdigest()
        return hmac.compare_digest(plain, claimed)


def _hashed(content: Mapping[str, object], *, checkpoint: bool) -> bytes:
    """What a hash covers: the kind's domain, then every field but ``hash``, canonical."""
    domain = _CHECKPOINT_DOMAIN if checkpoint else _RECORD_DOMAIN
    return domain + canonical({k: v for k, v in content.items() if k != "hash"})


def _body(
    entry: AuditEntry,
    *,
    writer: str,
    seq: int,
    prev: str,
    seen: Seen | None,
    moment: datetime,
    actor: str | None,
) -> dict[str, object]:
    """The content of `entry`'s record, without its hash; its details checked for size."""
    details = dict(entry.details)
    try:
        size = len(canonical(details))
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise AuditEntryError(f"audit details must be small JSON: {exc}") from None
    if size > MAX_DETAILS_BYTES:
        raise AuditEntryError(
            f"audit details are {size} bytes as JSON, over the {MAX_DETAILS_BYTES} allowed"
        )
    return {
        "v": FORMAT,
        "writer": writer,
        "seq": seq,
        "time": iso(moment),
        "event": entry.event,
        "skill": entry.skill,
        "version": entry.version,
        "actor": entry.actor if entry.actor is not None else actor,
        "run": entry.run,
        "details": details,
        "seen": None if seen is None else seen.model_dump(),
        "prev": prev,
    }


def _validated(body: dict[str, object]) -> AuditRecord:
    try:
        return AuditRecord.model_validate(body)
    except ValueError as exc:
        raise AuditEntryError(f"not a valid audit entry: {first_error(exc)}") from None


def args_digest(args: Sequence[str], *, key: SecretStr | None = None) -> str:
    """A digest of a script's arguments, for the log in their place (arguments may hold secrets).

    HMAC-SHA256 under `key` when one is given, so that a reader of the log cannot test guesses
    of short secrets against it; SHA-256 otherwise. Both over the canonical JSON of the list.
    """
    if isinstance(args, str) or not all(isinstance(arg, str) for arg in args):
        raise AuditEntryError("the arguments to digest must be a sequence of strings")
    data = _ARGS_DOMAIN + canonical(list(args))
    if key is None:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(key.get_secret_value().encode("utf-8"), data, hashlib.sha256).hexdigest()


def link_of(data: bytes, body: Mapping[str, object] | None) -> str:
    """What the next record after a damaged one links to: the hash it claims when that is
    well formed, else the SHA-256 of its bytes (appends and ``verify`` agree on this)."""
    claimed = body.get("hash") if body is not None else None
    if isinstance(claimed, str) and HEX64_TEXT.fullmatch(claimed):
        return claimed
    return hashlib.sha256(data).hexdigest()


def canonical(value: object) -> bytes:
    """Sorted keys, no whitespace, UTF-8; NaN and infinities refused."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def parse(data: bytes) -> dict[str, object]:
    """A JSON object from untrusted bytes: UTF-8, no duplicate keys, no NaN, not too deep."""
    try:
        value = json.loads(
            data.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_no_constant
        )
    except UnicodeDecodeError:
        raise Unreadable("it is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise Unreadable(f"it is not JSON: {str(exc)[:120]}") from None
    if not isinstance(value, dict):
        raise Unreadable("it is not a JSON object")
    try:
        canonical(value)  # lone surrogates (from \\ud800 escapes) cannot be hashed
    except (ValueError, UnicodeEncodeError) as exc:
        raise Unreadable(f"it cannot be hashed: {str(exc)[:120]}") from None
    return value


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a key appears twice in an object")
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def first_error(exc: Exception) -> str:
    """The first complaint of a pydantic ``ValidationError``, as ``field: message``."""
    errors = getattr(exc, "errors", None)
    if errors is None:
        return str(exc)
    error = errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "the record"
    return f"{where}: {error['msg']}"
