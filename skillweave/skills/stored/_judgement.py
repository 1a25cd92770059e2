"""A stored version judged under today's policies: :func:`judge_version`, the refusal of what
they refuse (:func:`check_version`: a rollback to it, a run that pins it), and the check of a
rollback built on it, :func:`rollback_check`.

A version was scanned and its signature checked when it was stored (``skills.admission``); a
policy may have changed since. Listing a skill's versions (``_history``) and rolling back to
one (``StoredSkills.rollback``, called by the CLI's ``skills rollback`` and the API's
``POST /v1/skills/{name}/rollback``) judge it again here: the scan report kept beside it
(``keys.skill_scan_key``; a version stored before reports were kept is scanned now) under
``skills.scan.policy``, its stored signature under ``skills.trust``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from skillweave.config import SkillsSettings
from skillweave.errors import SignatureError, SkillScanError
from skillweave.skills.admission import blocking_lines, stored_signature
from skillweave.skills.scan import ScanReport, scan_package
from skillweave.skills.scan_decision import ScanDecision, stored_report
from skillweave.skills.signing import (
    SignatureCheck,
    TrustDecision,
    decide,
    trusted_keys,
    verify_signature,
)
from skillweave.skills.stored._versions import RollbackCheck
from skillweave.storage import ArtifactStore
from skillweave.storage.audit import AuditLog

__all__ = ["Judgement", "check_version", "judge_version", "rollback_check"]


@dataclass(frozen=True, slots=True)
class Judgement:
    """What today's policies make of one stored version.

    Attributes:
        report: its scan report (None: none kept, and none made: the package was not given).
        scan: what ``skills.scan.policy`` decides for the report, and why (None: no report).
        signature: what its stored signature says under ``skills.trust.keys``.
        trust: what ``skills.trust`` makes of that.
    """

    report: ScanReport | None
    scan: ScanDecision | None
    signature: SignatureCheck
    trust: TrustDecision


async def judge_version(
    store: ArtifactStore,
    settings: SkillsSettings,
    name: str,
    version: str,
    *,
    package: bytes | None = None,
) -> Judgement:
    """Judge the stored `version` of `name` under today's ``skills.scan`` and ``skills.trust``
    (a version with no report kept is scanned now when its `package` is given).

    Raises:
        SignatureError: its stored signature cannot be read.
        ConfigError: a trusted key is malformed.
    """
    report = await stored_report(store, name, version)
    if report is None and package is not None:
        report = await asyncio.to_thread(scan_package, package, version)
    scan = ScanDecision.of(report, settings.scan) if report is not None else None
    signature = await stored_signature(store, name, version)
    check = verify_signature(
        signature, name=name, version=version, trusted=trusted_keys(settings.trust)
    )
    return Judgement(report, scan, check, decide(check, settings.trust))


async def check_version(
    store: ArtifactStore,
    settings: SkillsSettings,
    name: str,
    version: str,
    *,
    package: bytes | None = None,
) -> Judgement:
    """:func:`judge_version`, refusing a version today's policies refuse: a rollback to it,
    or a run that pins it.

    Raises:
        SkillScanError: ``skills.scan.policy`` blocks it (its blocking findings named).
        SignatureError: ``skills.trust`` refuses it, or its signature cannot be read.
    """
    judged = await judge_version(store, settings, name, version, package=package)
    if judged.report is not None and judged.scan is not None and judged.scan.decision == "block":
        raise SkillScanError(name, version, blocking_lines(judged.report, settings))
    if not judged.trust.allowed:
        raise SignatureError(
            judged.trust.error or judged.signature.message, status=judged.signature.status
        )
    return judged


def rollback_check(
    store: ArtifactStore, settings: SkillsSettings, audit: AuditLog, *, actor: str | None = None
) -> RollbackCheck:
    """The check ``StoredSkills.rollback`` runs before it writes: the version asked, judged
    under today's policies (refused when the scan policy blocks it or the trust policy refuses
    it; held when its scan needs an operator's approval), then the ``rollback`` record (from,
    to, the decision) written by `actor` (None: the log's own).

    The check raises :class:`~skillweave.errors.SkillScanError` or
    :class:`~skillweave.errors.SignatureError` to refuse, and
    :class:`~skillweave.errors.AuditLogError` when the record cannot be written: nothing
    changes then.
    """

    async def check(name: str, current: str, version: str, package: bytes) -> bool:
        judged = await check_version(store, settings, name, version, package=package)
        decision = judged.scan.decision if judged.scan is not None else None
        held = decision == "approve"
        await audit.record(
            "rollback",
            skill=name,
            version=version,
            actor=actor,
            **{"from": current, "to": version},
            decision=decision,
            held=held,
        )
        return held

    return check
