"""Telling an uploaded skill's stored versions apart, for rollbacks and pins.

A version is named by its full sha256 or by a unique prefix of at least
``names.VERSION_PREFIX_MIN`` hex digits (:func:`find_version`); a rollback without one goes back
to the version that was current before the current one (:func:`previous_version`: a record
keeps its versions in the order they became current); listings show them newest first
(:func:`newest_first`, by the date each was first stored). :class:`Rollback` is what
``StoredSkills.rollback`` did, and :data:`RollbackCheck` the judgement it asks for first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from skillweave.skills.names import SkillVersionError, parse_pin
from skillweave.skills.stored._model import StoredSkill, StoredVersion

__all__ = ["Rollback", "RollbackCheck", "find_version", "newest_first", "previous_version"]

RollbackCheck = Callable[[str, str, str, bytes], Awaitable[bool]]
"""The judgement of a rollback of a skill (name, the version current now, the version asked,
that version's canonical ZIP) under today's policies: it raises to refuse it, returns True to
hold it (switched off until an operator approves it), and records the rollback in the audit log
before it returns (the record is written after it)."""


@dataclass(frozen=True, slots=True)
class Rollback:
    """What a rollback did: the record after it, the version current before and now."""

    record: StoredSkill
    previous: str
    version: str

    @property
    def changed(self) -> bool:
        """False: the version asked was already the current one (nothing was done)."""
        return self.previous != self.version

    @property
    def held(self) -> bool:
        """Switched off until an operator approves the version (its scan said approve)."""
        return self.changed and self.record.held


def newest_first(record: StoredSkill) -> list[StoredVersion]:
    """The record's versions, the most recently first stored first."""
    return sorted(record.versions, key=lambda entry: entry.created_at, reverse=True)


def find_version(record: StoredSkill, asked: str) -> StoredVersion:
    """The stored version of `record` that `asked` (a full version or a unique prefix of at
    least ``VERSION_PREFIX_MIN`` hex digits, any case) names.

    Raises:
        SkillVersionError: `asked` is no version, or names none or several of them (the
            message lists them).
    """
    wanted = parse_pin(f"{record.name}@{asked}").version or ""
    matches = [entry for entry in newest_first(record) if entry.version.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        found = [entry.version for entry in matches]
        raise SkillVersionError(record.name, asked, problem="ambiguous", versions=found)
    known = [entry.version for entry in newest_first(record)]
    raise SkillVersionError(record.name, asked, problem="unknown", versions=known)


def previous_version(record: StoredSkill) -> StoredVersion:
    """The version that was current before the current one.

    Raises:
        SkillVersionError: ``no_earlier``: the record holds no other version.
    """
    earlier = [entry for entry in record.versions if entry.version != record.latest]
    if not earlier:
        raise SkillVersionError(record.name, "", problem="no_earlier", versions=[record.latest])
    return earlier[-1]
