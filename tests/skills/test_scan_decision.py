"""Why a scan decided what it did (issue 44, item 6): the one line that explains a decision, the
line that names a finding, its evidence escaped onto one line, and the refusal of a blocked
version, which quotes the evidence."""

from __future__ import annotations

import pytest

from skillweave.config import ScanSettings, Settings
from skillweave.skills import ScanDecision
from skillweave.skills.admission import blocking_lines
from skillweave.skills.scan import Finding, ModelReview, ScanReport
from skillweave.skills.scan_decision import (
    MAX_EVIDENCE_CHARS,
    evidence,
    finding_line,
    review_line,
    worst_first,
)

HOSTILE = "[red]x[/red] \x1b[2J\x1b]52;c;ZXZpbA==\x07 ok\nclean: no findings\u202e"


def finding(severity: str = "high", **fields: object) -> Finding:
    values: dict[str, object] = {
        "rule": "exec.shell",
        "severity": severity,
        "path": "scripts/run.py",
        "line": 3,
        "message": "runs a command through a shell",
        "excerpt": "subprocess.run(cmd, shell=True)",
        **fields,
    }
    return Finding.model_validate(values)


def report(*findings: Finding, review: ModelReview | None = None) -> ScanReport:
    return ScanReport(scanner="test", version="v" * 64, findings=findings, review=review)


def test_the_reason_names_the_deciding_finding_and_the_policys_action() -> None:
    found = report(finding("medium", rule="net.undeclared", line=9), finding("high"))
    decided = ScanDecision.of(found, ScanSettings())
    assert decided.decision == "approve"
    assert decided.reason == (
        "needs an operator's approval: its worst finding is high "
        "(exec.shell at scripts/run.py:3) and "
        "skills.scan.policy says approve for high"
    )
    assert ScanDecision.of(report(), ScanSettings()).reason == "enabled: no findings"


def test_a_policy_stricter_below_its_worst_severity_names_the_finding_that_decided() -> None:
    policy = ScanSettings(policy={"critical": "warn", "high": "block"})
    found = report(finding("critical", rule="exec.reverse-shell"), finding("high", line=7))
    decided = ScanDecision.of(found, policy)
    assert decided.decision == "block"
    assert "strictest finding is high (exec.shell at scripts/run.py:7)" in decided.reason
    assert decided.reason.endswith("says block for high (critical warns)")


def test_a_model_finding_is_marked_and_findings_sort_worst_first() -> None:
    model = finding("critical", rule="exfil.secret", origin="model", path="SKILL.md", line=None)
    ordered = worst_first([finding("low"), model, finding("high")])
    assert [f.severity for f in ordered] == ["critical", "high", "low"]
    assert finding_line(model) == (
        "critical exfil.secret (model review) at SKILL.md: runs a command through a shell"
    )
    assert "(model review)" not in finding_line(finding())


def test_evidence_is_one_line_with_markup_inert_and_escapes_shown() -> None:
    shown = evidence(finding(excerpt=HOSTILE))
    assert not {"\n", "\x1b", "\x07", "\u202e"} & set(shown)
    assert shown == ("[red]x[/red] \\x1b[2J\\x1b]52;c;ZXZpbA==\\x07 ok\\nclean: no findings\\u202e")
    assert len(evidence(finding(excerpt="a" * 5000))) == MAX_EVIDENCE_CHARS + 1


def test_the_review_line_says_what_the_review_cost() -> None:
    review = ModelReview(
        profile="reviewer", outcome="ok", input_tokens=12345, output_tokens=67, truncated=("a.js",)
    )
    assert review_line(review) == (
        "model review by reviewer: ok; 12,345 input + 67 output tokens; left out to fit: a.js"
    )


@pytest.mark.parametrize("origin", ["scanner", "model"])
def test_a_refusal_quotes_the_evidence_of_what_it_blocks(origin: str) -> None:
    found = report(
        finding("high"),
        finding("critical", rule="exec.reverse-shell", excerpt=HOSTILE, origin=origin),
    )
    [line] = blocking_lines(found, Settings(_env_file=None).skills)
    assert line.startswith("critical exec.reverse-shell")
    assert line.endswith("; evidence: " + evidence(found.findings[1]))
    assert ("(model review)" in line) == (origin == "model")
    assert "\n" not in line
