"""The skill audit log: append-only, hash-chained records of every skill lifecycle and use event.

Whatever installs, uploads, enables, approves, scans, activates or runs a skill (the API,
workers, managers, the CLI) calls :meth:`AuditLog.record`; ``skillweave audit verify`` calls
:meth:`AuditLog.verify` and ``skillweave audit show`` :meth:`AuditLog.read`. The log lives in
the artifact store, so every process on every machine that shares the store writes to it
(keys from :mod:`skillweave.storage.keys`)::

    audit/chains/{writer}/{seq:012d}.jsonl   a block of one writer's chain: records seq, seq+1, …
    audit/checkpoints/{n:012d}.json          checkpoint n: a writer's chain reached a record

**One chain per writer.** Each :class:`AuditLog` that appends is a writer with a random id and
a hash chain only it writes (``_chain``): records queue and go to the store a block at a time
(group commit), so writers never contend and a busy writer stores many records per write. A
record is canonical JSON: ``v`` (2), ``writer``, ``seq`` (1, 2, … in its chain), ``time``,
``event`` (:data:`AuditEvent`), ``skill``, ``version``, ``actor``, ``run``, ``details`` (at
most :data:`MAX_DETAILS_BYTES`), ``seen`` (the newest checkpoint the writer knew), ``prev``
(the hash before it; :data:`GENESIS` first) and ``hash``: HMAC-SHA256 under ``AUDIT__KEY``
(SHA-256 without one) of every other field.

**One checkpoint chain for all.** About once a second while busy, on its first append and on
:meth:`AuditLog.aclose`, a writer appends a checkpoint naming its newest record and that
record's hash (``_checkpoints``): a short hash chain every writer shares, written with
conditional creates, growing with time rather than with events. Checkpoints pin each chain's
tail; each record's ``seen`` pins the checkpoint chain's.

``verify`` (``_reading``, over the walks ``_checkpoint_walk`` and ``_chain_walk``) finds a
record edited, forged without the key, moved within or between chains, inserted, or removed
from the middle; a chain cut short or replaced behind a checkpoint that names it; a checkpoint
chain cut short behind a record that names it; and, given a head kept elsewhere (``audit
verify --expect``), a whole log rolled back before it.
The threat model and the argument are in docs/RELIABILITY.md ("The audit log").

Written by hand: no library keeps hash chains on an object store through conditional writes.
"""

from skillweave.errors import AuditEntryError, AuditLogError
from skillweave.storage.audit._checkpoints import CHECKPOINT_SECONDS
from skillweave.storage.audit._findings import CHECKPOINTS, AuditProblem, ProblemKind
from skillweave.storage.audit._log import AuditLog
from skillweave.storage.audit._reading import AuditReport
from skillweave.storage.audit._records import (
    AUDIT_EVENTS,
    GENESIS,
    MAX_BLOCK_RECORDS,
    MAX_DETAILS_BYTES,
    AuditEntry,
    AuditEvent,
    AuditHead,
    AuditRecord,
    Checkpoint,
    args_digest,
)

__all__ = [
    "AUDIT_EVENTS",
    "CHECKPOINTS",
    "CHECKPOINT_SECONDS",
    "GENESIS",
    "MAX_BLOCK_RECORDS",
    "MAX_DETAILS_BYTES",
    "AuditEntry",
    "AuditEntryError",
    "AuditEvent",
    "AuditHead",
    "AuditLog",
    "AuditLogError",
    "AuditProblem",
    "AuditRecord",
    "AuditReport",
    "Checkpoint",
    "ProblemKind",
    "args_digest",
]
