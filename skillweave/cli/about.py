"""What ``skillweave skills show`` says of a skill beside its activation payload (on stderr):
its network (declared destinations and their approvals), its scan and its signature.
"""

from __future__ import annotations

import asyncio

from skillweave.cli.exits import errors
from skillweave.config import EgressApproval, get_settings
from skillweave.skills import Skill

__all__ = ["skill_notes"]

_FINDINGS_SHOWN = 10


def skill_notes(skill: Skill) -> list[tuple[str, str]]:
    """``(topic, line)`` pairs: ``network``, ``scan``, ``finding`` and ``signature``."""
    return [
        *(("network", line) for line in _network_lines(skill)),
        *_scan_lines(skill),
        *(("signature", line) for line in _signature_lines(skill)),
    ]


def _network_lines(skill: Skill) -> list[str]:
    """The destinations `skill` declares, each with whether it is approved."""
    from skillweave.sandbox import NetworkApprovals, describe_network
    from skillweave.skills import declared_destinations, parse_frontmatter
    from skillweave.storage import open_store

    settings = get_settings()
    with errors():
        data = parse_frontmatter(skill.skill_file.read_text(encoding="utf-8"), path="SKILL.md")
        metadata = data.data.get("metadata")
        network = metadata.get("network") if isinstance(metadata, dict) else None
        declared = declared_destinations(network)
    if not declared:
        return []

    async def approval() -> tuple[EgressApproval | None, str | None]:
        store = open_store(settings.storage)
        try:
            return await NetworkApprovals(store, settings.sandbox.egress).of(skill.name)
        finally:
            await store.aclose()

    with errors():
        return describe_network(declared, *asyncio.run(approval()))


def _scan_lines(skill: Skill) -> list[tuple[str, str]]:
    """The skill's scan (its own files, as they are now) and what the policy decides."""
    from skillweave.skills.scan import scan_folder

    report = scan_folder(skill.path)
    decision = report.decision(get_settings().skills.scan)
    lines = [("scan", f"{report.summary()}; the policy says: {decision}")]
    for finding in report.findings[:_FINDINGS_SHOWN]:
        where = f"{finding.path}:{finding.line}" if finding.line else finding.path
        lines.append(
            ("finding", f"{finding.severity} {finding.rule} at {where}: {finding.message}")
        )
    if len(report.findings) > _FINDINGS_SHOWN:
        lines.append(("finding", f"… and {len(report.findings) - _FINDINGS_SHOWN} more"))
    return lines


def _signature_lines(skill: Skill) -> list[str]:
    """Whether the skill's folder is signed by a trusted key (``skills.trust``)."""
    from skillweave.skills.signing import read_signature, verify_signature

    trust = get_settings().skills.trust
    with errors():
        signature = read_signature(skill.path)
        check = verify_signature(
            signature,
            name=skill.short_name or skill.name,
            version=skill.version,
            trusted=trust.keys,
        )
    return [f"{check.status}: {check.message}"]
