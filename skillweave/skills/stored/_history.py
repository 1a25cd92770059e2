"""A skill's versions as ``skills versions`` and ``GET /v1/skills/{name}/versions`` show them:
:class:`SkillVersions`, made by :func:`uploaded_versions` or :func:`directory_versions`.

Each stored version of an uploaded skill, newest first, the current one marked: where it came
from (its origin, put in words by ``_model.origin_text``: a source with the registry it was
found in, its ref, path and commit; ``uploaded``; or the agent run that published it), when it
was first stored, who brought it (the actor of its ``install``, ``update`` or ``upload`` record
in the audit log; ``unknown`` when the log is off or has none), its scan (the stored report's
summary and what ``skills.scan.policy`` decides today) and its signature (under ``skills.trust``
today): ``_judgement``. A directory skill has one version, its folder's: directory skills are
versioned by their folder (git), never rolled back.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillweave.config import SkillsSettings
from skillweave.errors import AuditLogError
from skillweave.skills.model import Skill
from skillweave.skills.scan import Decision, scan_folder
from skillweave.skills.scan_decision import ScanDecision
from skillweave.skills.signing import (
    SignatureStatus,
    decide,
    read_signature,
    trusted_keys,
    verify_signature,
)
from skillweave.skills.stored._judgement import Judgement, judge_version
from skillweave.skills.stored._model import SkillOrigin, StoredSkill, origin_text, store_source
from skillweave.skills.stored._versions import newest_first
from skillweave.storage import ArtifactStore
from skillweave.storage.audit import AuditLog

__all__ = [
    "DIRECTORY_NOTE",
    "SkillVersions",
    "VersionEntry",
    "VersionScan",
    "VersionSignature",
    "directory_versions",
    "uploaded_versions",
]

UNKNOWN: Final = "unknown"
DIRECTORY_NOTE: Final = (
    "a directory skill is versioned by its folder (git, say): it has one version, its folder's,"
    " and no rollback"
)
_BRINGING: Final = frozenset({"install", "update", "upload"})


class VersionScan(BaseModel):
    """A version's scan: the stored report's summary and today's policy's decision."""

    model_config = ConfigDict(frozen=True)

    summary: str | None = Field(description="the report's one line; None: no report kept")
    decision: Decision | None = Field(description="what skills.scan.policy decides today")
    reason: str | None = Field(default=None, description="why, in one line")


class VersionSignature(BaseModel):
    """A version's signature under ``skills.trust`` today."""

    model_config = ConfigDict(frozen=True)

    status: SignatureStatus
    key_id: str | None = Field(default=None, description="the key that signed it")
    allowed: bool = Field(description="whether skills.trust lets it be used")
    text: str = Field(description="in one line: signed by KEY (valid), unsigned, invalid...")


class VersionEntry(BaseModel):
    """One version of a skill."""

    model_config = ConfigDict(frozen=True)

    version: str = Field(description="sha256 of the package's files")
    current: bool = Field(description="the version the library serves")
    created_at: datetime | None = Field(description="first stored; None: a directory skill")
    origin: SkillOrigin | None = Field(description="where an installed version came from")
    source: str = Field(description="where it came from, in words ('uploaded', a run, a URL)")
    actor: str = Field(description="who brought it (its audit record's actor), or 'unknown'")
    scan: VersionScan
    signature: VersionSignature


class SkillVersions(BaseModel):
    """A skill's versions, newest first."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: Literal["installed", "uploaded", "agent", "directory"] = Field(
        description="where the current version came from (as `skills list` says), or directory"
    )
    current: str = Field(description="the version the library serves")
    enabled: bool
    held: bool = Field(description="off until an operator approves the current version")
    folder: str | None = Field(default=None, description="a directory skill's folder")
    rollback: bool = Field(description="whether an earlier version can be made current")
    note: str | None = Field(default=None, description="what the listing could not tell")
    versions: list[VersionEntry]


async def uploaded_versions(
    store: ArtifactStore, settings: SkillsSettings, record: StoredSkill, audit: AuditLog | None
) -> SkillVersions:
    """Every stored version of `record`, newest first, judged under today's policies, each
    with the actor who brought it (from `audit`; None or off: unknown).

    Raises:
        SignatureError: a stored signature cannot be read.
    """
    actors, note = await _bringers(audit, record.name)
    entries = []
    for stored in newest_first(record):
        judged = await judge_version(store, settings, record.name, stored.version)
        entries.append(
            VersionEntry(
                version=stored.version,
                current=stored.version == record.latest,
                created_at=stored.created_at,
                origin=stored.origin,
                source=origin_text(stored.origin),
                actor=actors.get(stored.version, UNKNOWN),
                scan=_scan(judged),
                signature=_signature(judged),
            )
        )
    return SkillVersions(
        name=record.name,
        kind=store_source(record),
        current=record.latest,
        enabled=record.enabled,
        held=record.held,
        rollback=len(record.versions) > 1,
        note=note,
        versions=entries,
    )


async def directory_versions(settings: SkillsSettings, skill: Skill) -> SkillVersions:
    """The one version of a directory skill: its folder's, scanned and its signature read now.

    Raises:
        SignatureError: its signature file cannot be read.
    """
    report = await asyncio.to_thread(scan_folder, skill.path)
    signature = await asyncio.to_thread(read_signature, skill.path)
    name = skill.short_name or skill.name
    check = verify_signature(
        signature, name=name, version=skill.version, trusted=trusted_keys(settings.trust)
    )
    scan = ScanDecision.of(report, settings.scan)
    judged = Judgement(report, scan, check, decide(check, settings.trust))
    entry = VersionEntry(
        version=skill.version,
        current=True,
        created_at=None,
        origin=None,
        source=f"the folder {skill.path}",
        actor=UNKNOWN,
        scan=_scan(judged),
        signature=_signature(judged),
    )
    return SkillVersions(
        name=skill.name,
        kind="directory",
        current=skill.version,
        enabled=skill.enabled,
        held=False,
        folder=str(skill.path),
        rollback=False,
        note=DIRECTORY_NOTE,
        versions=[entry],
    )


async def _bringers(audit: AuditLog | None, name: str) -> tuple[dict[str, str], str | None]:
    """Who brought each version of `name` (the first install, update or upload record of
    it), and why none may be known."""
    if audit is None or not audit.enabled:
        return {}, "the audit log is off (AUDIT__ENABLED): who brought each version is unknown"
    found: dict[str, str] = {}
    try:
        async for record in audit.read(skill=name):
            if record.event in _BRINGING and record.version and record.version not in found:
                actor = record.actor or UNKNOWN
                if record.run and record.run not in actor:  # an agent's publish or install
                    actor += f" (run {record.run})"
                found[record.version] = actor
    except AuditLogError as exc:
        return {}, f"the audit log cannot be read ({exc}): who brought each version is unknown"
    return found, None


def _scan(judged: Judgement) -> VersionScan:
    if judged.report is None or judged.scan is None:
        return VersionScan(summary=None, decision=None, reason="no scan report kept")
    return VersionScan(
        summary=judged.report.summary(), decision=judged.scan.decision, reason=judged.scan.reason
    )


def _signature(judged: Judgement) -> VersionSignature:
    check = judged.signature
    match check.status:
        case "valid":
            text = f"signed by {check.key_id} (valid)"
        case "unsigned":
            text = "unsigned"
        case "untrusted":
            text = f"signed by {check.key_id}, a key skills.trust does not list"
        case "mismatch" | "invalid":
            text = f"invalid ({check.status}): {check.message}"
    if not judged.trust.allowed:
        text += "; skills.trust refuses it"
    return VersionSignature(
        status=check.status, key_id=check.key_id, allowed=judged.trust.allowed, text=text
    )
