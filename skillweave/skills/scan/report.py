"""What a scan of one skill version found: :class:`Finding` and :class:`ScanReport`.

The report is what install, upload, ``skills show`` and the API keep and show; what it decides
for a version comes from the operator's policy (``skills.scan.policy``, a
:class:`~skillweave.config.ScanSettings`), applied by :meth:`ScanReport.decision`. Pydantic
models (frozen) because the report crosses process boundaries as JSON.
"""

from __future__ import annotations

from collections import Counter
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from skillweave.config import ScanAction, ScanSettings, Severity

__all__ = [
    "SEVERITIES",
    "Decision",
    "Finding",
    "FindingOrigin",
    "ModelReview",
    "ScanReport",
    "severity_rank",
]

SEVERITIES: Final[tuple[Severity, ...]] = ("critical", "high", "medium", "low")
"""Every severity, worst first."""
Decision = Literal["block", "approve", "warn", "clean"]
"""What a report decides under a policy: the strictest action of its findings, or clean."""
FindingOrigin = Literal["scanner", "model"]
"""Who made a finding: the static rules, or the model review (``skills.scan.review_model``)."""

_RANK: Final[dict[str, int]] = {
    severity: len(SEVERITIES) - i for i, severity in enumerate(SEVERITIES)
}
_ACTION_RANK: Final[dict[ScanAction, int]] = {"warn": 1, "approve": 2, "block": 3}
_DEFAULT_ACTION: Final[ScanAction] = "warn"


def severity_rank(severity: str) -> int:
    """4 for critical down to 1 for low (0 for anything else): sorts and compares."""
    return _RANK.get(severity, 0)


class Finding(BaseModel):
    """One thing the scanner found.

    Attributes:
        rule: the rule's id (``exec.shell``, ``prompt.override``; the list is
            ``skillweave.skills.scan.RULES``).
        severity: how bad it is.
        path: the file, relative to the skill's root (POSIX).
        line: 1-based line, or None for what concerns the package as a whole.
        message: one line saying what was found.
        excerpt: the line (or the part of it) that shows it, invisible characters escaped:
            the evidence an operator reads.
        origin: "scanner" for the static rules, "model" for the model review's findings.
    """

    model_config = ConfigDict(frozen=True)

    rule: str
    severity: Severity
    path: str
    line: int | None
    message: str
    excerpt: str = ""
    origin: FindingOrigin = "scanner"


class ModelReview(BaseModel):
    """What the model review of a version cost and how it ended (its findings are in the
    report's, marked ``origin="model"``).

    Attributes:
        profile: the model profile asked (``skills.scan.review_model``).
        outcome: "ok", or one line saying why no findings could be taken from it (timed out,
            answered outside the schema...); a failed review never lowers a static finding.
        input_tokens: what the request cost, as the provider counted it (0 when unknown).
        output_tokens: likewise for the answer.
        truncated: files or parts of files left out to keep the request within its bound.
    """

    model_config = ConfigDict(frozen=True)

    profile: str
    outcome: str = "ok"
    input_tokens: int = 0
    output_tokens: int = 0
    truncated: tuple[str, ...] = ()


class ScanReport(BaseModel):
    """The findings of one scan of one skill version.

    Attributes:
        scanner: the rule set's version (``skillweave-scan/2 bandit/1.9.4``): a report made by
            another rule set may differ for the same files.
        version: the skill's package digest the files had (the caller's).
        findings: worst first, then by path and line.
        review: the model review's cost and outcome; None when no review ran.
    """

    model_config = ConfigDict(frozen=True)

    scanner: str
    version: str
    findings: tuple[Finding, ...] = ()
    review: ModelReview | None = None

    @property
    def worst(self) -> Severity | None:
        """The worst severity found; None when nothing was."""
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=severity_rank)

    @property
    def counts(self) -> dict[Severity, int]:
        """How many findings of each severity, worst first, every severity present (0s too)."""
        found = Counter(f.severity for f in self.findings)
        return {severity: found.get(severity, 0) for severity in SEVERITIES}

    def decision(self, settings: ScanSettings) -> Decision:
        """The strictest action any finding's severity maps to under ``settings.policy`` (a
        severity the policy leaves out warns); "clean" when there are no findings."""
        if not self.findings:
            return "clean"
        actions = {settings.policy.get(f.severity, _DEFAULT_ACTION) for f in self.findings}
        return max(actions, key=_ACTION_RANK.__getitem__)

    def summary(self) -> str:
        """One line: ``3 findings (1 critical, 2 low)`` or ``no findings``."""
        if not self.findings:
            return "no findings"
        parts = [f"{n} {severity}" for severity, n in self.counts.items() if n]
        noun = "finding" if len(self.findings) == 1 else "findings"
        return f"{len(self.findings)} {noun} ({', '.join(parts)})"
