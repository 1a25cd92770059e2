"""What ``skillweave skills show`` says of a skill beside its activation payload (on stderr):
its network (declared destinations and their approvals), its scan (each finding with its
evidence, and why the policy decides what it does: :mod:`skillweave.cli.findings`) and its
signature.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.text import Text

from skillweave.cli.exits import errors
from skillweave.cli.findings import scan_texts
from skillweave.config import EgressApproval, get_settings
from skillweave.skills import Skill
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:
    from skillweave.skills.scan import ScanReport

__all__ = ["scan_notes", "skill_notes"]


def skill_notes(skill: Skill, *, report: ScanReport | None, limit: int | None) -> list[Text]:
    """Its ``network:`` lines, its scan (`report`, the one kept beside a stored version; None:
    its folder scanned now) with the first `limit` findings (None: all), and its
    ``signature:`` line."""
    if report is None:
        from skillweave.skills.scan import scan_folder

        report = scan_folder(skill.path)
    return [
        *(_note("network", line) for line in _network_lines(skill)),
        *scan_notes(report, name=skill.name, limit=limit),
        *(_note("signature", line) for line in _signature_lines(skill)),
    ]


def scan_notes(report: ScanReport, *, name: str, limit: int | None) -> list[Text]:
    """The scan's lines (``scan: …``, then its findings) under the settings' policy."""
    from skillweave.skills import ScanDecision

    decided = ScanDecision.of(report, get_settings().skills.scan)
    return scan_texts(report, decided, name=name, limit=limit)


def _note(topic: str, line: str) -> Text:
    return Text(terminal_safe(f"{topic}: {line}"))


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
