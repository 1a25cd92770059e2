"""What a new skill version must pass before it is stored: its signature and its scan.

Installs (``skills.install``), uploads (``/v1/skills``) and published drafts all come through
:class:`Admissions`. For each version it checks the signature against ``skills.trust`` (a
signature that does not match the package, or does not verify, is refused whatever the policy;
an unsigned or untrusted one follows ``unsigned``), scans the package (``skills.scan``; with
``skills.scan.review_model`` set, a model reviews it too and its findings join the scan's:
``skills.review``) and applies ``skills.scan.policy``: ``block`` refuses it
(:class:`~skillweave.errors.SkillScanError`, the findings named), ``approve`` stores it
switched off until an operator enables it (the enabling is the approval, and is audited as
one), ``warn`` stores it enabled with its findings shown.

Nothing is stored unrecorded: the audit log's ``scan`` and ``signature`` records of a version
are written before :meth:`Admissions.check` returns, so before the version is stored, and the
door then writes the record of what it is about to store (an ``upload``, an ``install``) with
:meth:`Admissions.announce`, still before the store. A record that cannot be written raises
:class:`~skillweave.errors.AuditLogError` there, and nothing is stored: the API answers 503
``audit_unavailable``, the CLI one line, a run's step is retried. The scan and signature
records are the checks' outcomes (a scan that blocks is recorded, then refused); an
``upload`` or ``install`` record says what was about to be stored, so one whose store then
failed, or was refused for a name another source owns (``StoredSkills`` checks names after
``check``), names a version the catalog lacks. Once stored, :meth:`Admissions.keep` puts the
report and the signature beside the package (``keys.skill_scan_key``,
``keys.skill_signature_key``: the manager checks the signature again before every run).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from skillweave.config import SkillsSettings, TrustSettings
from skillweave.errors import InvalidKeyError, SignatureError, SkillScanError
from skillweave.skills.model import Skill
from skillweave.skills.review import SkillReviewer, review_report
from skillweave.skills.scan import Decision, ScanReport, package_files, scan_package
from skillweave.skills.scan_decision import evidence, finding_line, worst_first
from skillweave.skills.signing import (
    SkillSignature,
    check_trust,
    parse_signature,
    read_signature,
    signature_bytes,
)
from skillweave.storage import ArtifactStore, keys
from skillweave.storage.audit import AuditEntry, AuditLog

__all__ = ["Admission", "Admissions", "activation_trust", "blocking_lines", "stored_signature"]


@dataclass(frozen=True, slots=True)
class Admission:
    """A version that passed: its scan, what the policy decided, the trust warning if any."""

    name: str
    version: str
    report: ScanReport
    decision: Decision
    signature: SkillSignature | None = None
    warning: str | None = None

    @property
    def held(self) -> bool:
        """Stored switched off, until an operator enables (approves) it."""
        return self.decision == "approve"


@dataclass
class Admissions:
    """The checks of new versions for one operation (an install, an upload).

    Args:
        settings: ``skills`` (``trust`` and ``scan``).
        store: where reports and signatures are kept beside the packages.
        audit: where ``scan`` and ``signature`` records go (None: not recorded).
        run: the run whose operation it is (a published draft), named in its records.
        reviewer: the model review (``skills.scan.review_model``; None: none), whose findings
            join the scan's before the policy decides (``skills.review.review_report``).
        signatures: name → the signature that came with that skill's package, if any.
    """

    settings: SkillsSettings
    store: ArtifactStore
    audit: AuditLog | None = None
    run: str | None = None
    reviewer: SkillReviewer | None = None
    signatures: dict[str, SkillSignature] = field(default_factory=dict)
    admitted: dict[str, Admission] = field(default_factory=dict)

    async def check(self, name: str, version: str, package: bytes) -> bool:
        """Admit one version or refuse it (the ``check`` of ``StoredSkills``); True when it
        is to be stored switched off, awaiting an operator's approval. An admitted version's
        ``scan`` and ``signature`` records are written before this returns.

        Raises:
            SignatureError: the signature policy refuses it.
            SkillScanError: its scan found what the scan policy blocks (recorded first).
            AuditLogError: a record cannot be written: the version is refused, unstored.
        """
        signature = self.signatures.get(name)
        warning = check_trust(signature, name=name, version=version, policy=self.settings.trust)
        report = await asyncio.to_thread(scan_package, package, version)
        if self.reviewer is not None:
            files = await asyncio.to_thread(package_files, package)
            timeout = self.settings.scan.review_timeout_seconds
            report = await review_report(self.reviewer, files, report, timeout=timeout)
        decision = report.decision(self.settings.scan)
        if decision == "block":
            # The verdict is what is recorded, so it follows the scan; a record that cannot
            # be written refuses the version all the same (AuditLogError instead).
            await self._record_scan(name, version, report, decision)
            raise SkillScanError(name, version, blocking_lines(report, self.settings))
        admission = Admission(name, version, report, decision, signature, warning)
        if self.audit is not None:  # the checks' outcomes, recorded before it is stored
            await self._record_scan(name, version, report, decision)
            await self.audit.record(
                "signature",
                skill=name,
                version=version,
                run=self.run,
                signed_by=signature.key_id if signature else None,
                warning=warning,
            )
        self.admitted[name] = admission
        return admission.held

    async def announce(self, entries: Sequence[AuditEntry]) -> None:
        """Record what is about to be stored (every version checked, nothing stored yet):
        appended together, so that the log's group commit writes them as one block.

        Raises:
            AuditLogError: they cannot be written; the caller stores nothing.
        """
        if self.audit is None or not entries:
            return
        audit = self.audit
        await asyncio.gather(*(audit.append(entry) for entry in entries))

    async def keep(self, name: str) -> Admission | None:
        """After `name` was stored: its report and signature beside the package."""
        admission = self.admitted.get(name)
        if admission is None:
            return None
        version = admission.version
        await self.store.put_bytes(
            keys.skill_scan_key(name, version),
            admission.report.model_dump_json().encode(),
            content_type="application/json",
        )
        if admission.signature is not None:
            await self.store.put_bytes(
                keys.skill_signature_key(name, version),
                signature_bytes(admission.signature),
                content_type="application/json",
            )
        return admission

    async def _record_scan(
        self, name: str, version: str, report: ScanReport, decision: Decision
    ) -> None:
        if self.audit is None:
            return
        await self.audit.record(
            "scan",
            skill=name,
            version=version,
            run=self.run,
            decision=decision,
            findings={severity: count for severity, count in report.counts.items() if count},
        )


def blocking_lines(report: ScanReport, settings: SkillsSettings) -> list[str]:
    """The findings the policy blocks on, worst first, one line each with its evidence
    (``critical exec.reverse-shell at run.sh:3: opens a reverse shell; evidence: bash -i >&
    /dev/tcp/…``), the model review's marked (``skills.scan_decision``)."""
    lines = []
    for f in worst_first(report.findings):
        if settings.scan.policy.get(f.severity, "warn") != "block":
            continue
        shown = evidence(f)
        line = finding_line(f)
        lines.append(f"{line}; evidence: {shown}" if shown else line)
    return lines


async def activation_trust(
    store: ArtifactStore, skill: Skill, policy: TrustSettings, *, own: bool
) -> tuple[str | None, str | None]:
    """The signature policy at a skill's activation, on every surface that activates (a run's
    worker, the MCP front door): ``(why it is refused, None)``, or ``(None, a warning or
    None)``. The signature is the one stored beside the package, else (`own`: a skill of the
    library's folders) the one in its folder."""
    try:
        signature = await stored_signature(store, skill.name, skill.version)
        if signature is None and own:
            signature = await asyncio.to_thread(read_signature, skill.path)
        warning = check_trust(
            signature, name=skill.short_name or skill.name, version=skill.version, policy=policy
        )
    except SignatureError as exc:
        return str(exc), None
    return None, warning if signature is not None else None


async def stored_signature(store: ArtifactStore, name: str, version: str) -> SkillSignature | None:
    """The signature kept beside the stored `version` of `name`, or None (unsigned; also for a
    name no key can hold, which has no stored package either).

    Raises:
        SignatureError: it cannot be read.
    """
    try:
        ref = await store.stat(keys.skill_signature_key(name, version))
    except InvalidKeyError:
        return None
    if ref is None:
        return None
    return parse_signature(await store.get_bytes(ref), source=ref.key)
