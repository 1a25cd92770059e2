"""Why a scan decided what it did, in the words every door shows an operator.

A :class:`~skillweave.skills.scan.ScanReport` lists findings; ``skills.scan.policy`` turns them
into a decision (:meth:`ScanReport.decision`). This module owns how that decision is explained:
:class:`ScanDecision` (the decision and one line saying why: the finding whose severity set it
and the policy's action for that severity), the line that names a finding
(:func:`finding_line`), its evidence on one line (:func:`evidence`), the model review's cost
(:func:`review_line`), findings worst first (:func:`worst_first`), and the report kept beside a
stored version (:func:`stored_report`). Callers: the refusal of a blocked version
(:func:`skillweave.skills.admission.blocking_lines`), the CLI's install table, ``skills show``,
``skills approve`` and ``skills upload`` (``skillweave.cli.findings`` lays these lines out), and
the API's skill responses (which carry the report's own JSON and a :class:`ScanDecision`).

Evidence and paths are attacker-written (a scanned file's line and name, or a model's answer
quoting one): every line made here is escaped by :func:`~skillweave.terminal.terminal_safe`'s
rule, newlines and tabs too, so that it stays one line and cannot forge the lines around it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from skillweave.config import ScanAction, ScanSettings
from skillweave.errors import InvalidKeyError
from skillweave.skills.scan import SEVERITIES, Decision, Finding, ModelReview, ScanReport
from skillweave.storage import ArtifactStore, keys
from skillweave.terminal import terminal_safe

__all__ = [
    "MAX_EVIDENCE_CHARS",
    "MODEL_MARK",
    "ScanDecision",
    "evidence",
    "finding_line",
    "review_line",
    "stored_report",
    "worst_first",
]

MAX_EVIDENCE_CHARS: Final = 200
"""The most of an excerpt shown on a line (the scanner cuts its own to 160; a model's may be
longer)."""
MODEL_MARK: Final = "(model review)"
"""How a finding the model review made is marked wherever findings are listed."""

_DEFAULT_ACTION: Final[ScanAction] = "warn"  # what ScanReport.decision gives a severity left out
_OUTCOME: Final[dict[Decision, str]] = {
    "block": "blocked",
    "approve": "needs an operator's approval",
    "warn": "enabled with warnings",
    "clean": "enabled",
}
_RANK: Final = {severity: i for i, severity in enumerate(SEVERITIES)}
_LINE_BREAKS: Final = str.maketrans({"\n": "\\n", "\t": "\\t"})


class ScanDecision(BaseModel):
    """What ``skills.scan.policy`` decides for a report, and why in one line.

    Attributes:
        decision: block, approve (held until an operator enables it), warn, or clean.
        reason: the finding whose severity set the decision and the policy's action for it
            (``needs an operator's approval: its worst finding is high (exec.shell at run.py:3) and
            skills.scan.policy says approve for high``).
    """

    model_config = ConfigDict(frozen=True)

    decision: Decision
    reason: str = Field(description="why, in one line: the deciding finding and the policy")

    @classmethod
    def of(cls, report: ScanReport, settings: ScanSettings) -> ScanDecision:
        """The decision `settings` gives `report`, explained."""
        decision = report.decision(settings)
        if decision == "clean":
            return cls(decision=decision, reason="enabled: no findings")
        policy = settings.policy
        # The worst finding whose severity maps to the decision: the policy need not grow
        # stricter with severity, so the decider is not always the worst finding.
        decider = next(
            f
            for f in worst_first(report.findings)
            if policy.get(f.severity, _DEFAULT_ACTION) == decision
        )
        worst = report.worst
        which = "worst finding" if decider.severity == worst else "strictest finding"
        reason = (
            f"{_OUTCOME[decision]}: its {which} is {decider.severity} ({_named(decider)}) and "
            f"skills.scan.policy says {decision} for {decider.severity}"
        )
        if decider.severity != worst and worst is not None:
            reason += f" ({worst} {policy.get(worst, _DEFAULT_ACTION)}s)"
        return cls(decision=decision, reason=_one_line(reason))


def worst_first(findings: Iterable[Finding]) -> list[Finding]:
    """`findings` worst first; the order among equals kept (path and line, as the scanner
    sorts them, the model review's after the rules')."""
    return sorted(findings, key=lambda f: _RANK.get(f.severity, len(SEVERITIES)))


def finding_line(finding: Finding) -> str:
    """``high exec.shell at scripts/run.py:3: runs a command through a shell``, and
    :data:`MODEL_MARK` after the rule when the model review made it; one line, escaped like
    :func:`evidence` (a path is the package's, a model finding's message the model's)."""
    mark = f" {MODEL_MARK}" if finding.origin == "model" else ""
    line = f"{finding.severity} {finding.rule}{mark} at {_where(finding)}: {finding.message}"
    return _one_line(line)


def evidence(finding: Finding) -> str:
    """The finding's excerpt as one safe line: control and invisible characters, newlines and
    tabs shown as escapes, cut to :data:`MAX_EVIDENCE_CHARS`; "" when it has none."""
    shown = _one_line(finding.excerpt)
    if len(shown) > MAX_EVIDENCE_CHARS:
        shown = shown[:MAX_EVIDENCE_CHARS] + "…"
    return shown


def review_line(review: ModelReview) -> str:
    """The model review's profile, outcome and cost on one line (escaped: the outcome may quote
    the model)."""
    tokens = f"{review.input_tokens:,} input + {review.output_tokens:,} output tokens"
    line = f"model review by {review.profile}: {review.outcome}; {tokens}"
    if review.truncated:
        line += f"; left out to fit: {', '.join(review.truncated)}"
    return _one_line(line)


async def stored_report(store: ArtifactStore, name: str, version: str) -> ScanReport | None:
    """The report kept beside a stored version (``keys.skill_scan_key``); None when there is
    none (stored before reports were kept, or a name no key can hold)."""
    try:
        ref = await store.stat(keys.skill_scan_key(name, version))
    except InvalidKeyError:
        return None
    if ref is None:
        return None
    return ScanReport.model_validate_json(await store.get_bytes(ref))


def _one_line(text: str) -> str:
    return terminal_safe(text.translate(_LINE_BREAKS))


def _where(finding: Finding) -> str:
    return f"{finding.path}:{finding.line}" if finding.line else finding.path


def _named(finding: Finding) -> str:
    mark = f" {MODEL_MARK}" if finding.origin == "model" else ""
    return f"{finding.rule}{mark} at {_where(finding)}"
