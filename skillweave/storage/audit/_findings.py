"""What ``verify`` finds in the audit log: :class:`AuditProblem`, its kinds, and the wording of
each (a record or checkpoint named the same way everywhere). Made by the walks of the
checkpoint chain and the writers' chains and by the cross-checks (``_reading``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "CHECKPOINTS",
    "AuditProblem",
    "ProblemKind",
    "inserted",
    "problem_order",
    "removed",
    "stray",
    "unreadable",
    "what",
]

ProblemKind = Literal["edited", "reordered", "inserted", "removed", "unreadable"]
"""What ``verify`` found: a hash that does not match its content, or a record that is not the
one a checkpoint names (``edited``); a record in another's place, chain or order
(``reordered``); a copy of a record, or a block over places already filled (``inserted``);
records missing from the middle or the tail of a chain (``removed``); bytes that are not a
record, or a key in the log that is no block or checkpoint (``unreadable``)."""

CHECKPOINTS: Final = "checkpoints"
"""The `chain` of a problem in the checkpoint chain (writer ids are 16 hex digits)."""


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """One thing ``verify`` found, in `chain` (a writer id, or :data:`CHECKPOINTS`) at `seq`;
    both None for a key under ``audit/chains/`` or ``audit/checkpoints/`` that is no block or
    checkpoint."""

    kind: ProblemKind
    chain: str | None
    seq: int | None
    message: str


def problem_order(problem: AuditProblem) -> tuple[int, str, int]:
    """The order of a report's problems: by chain, then place; stray keys last."""
    return (problem.chain is None, problem.chain or "", problem.seq or 0)


def what(chain: str, seq: int) -> str:
    """``checkpoint 3`` or ``record 3 of writer …``."""
    return f"checkpoint {seq}" if chain == CHECKPOINTS else f"record {seq} of writer {chain}"


def stray(key: str) -> AuditProblem:
    """A key in the log that is no block or checkpoint."""
    return AuditProblem(
        "unreadable", None, None, f"{key!r} is in the audit log but no record's key"
    )


def unreadable(chain: str, seq: int, reason: str, *, name: str | None = None) -> AuditProblem:
    """Bytes at `seq` of `chain` (called `name` when given) that are not what they should be."""
    return AuditProblem(
        "unreadable", chain, seq, f"{name or what(chain, seq)} is unreadable: {reason}"
    )


def inserted(chain: str, seq: int, message: str) -> AuditProblem:
    """A copy, or a block over places already filled."""
    return AuditProblem("inserted", chain, seq, f"{message}: inserted")


def removed(chain: str, first: int, last: int, reason: str) -> AuditProblem:
    """Places `first` to `last` of `chain` are gone."""
    if chain == CHECKPOINTS:
        gone = f"checkpoint {first} was" if first == last else f"checkpoints {first} to {last} were"
    else:
        span = f"record {first}" if first == last else f"records {first} to {last}"
        gone = f"{span} of writer {chain} {'was' if first == last else 'were'}"
    return AuditProblem("removed", chain, first, f"{gone} removed: {reason}")
