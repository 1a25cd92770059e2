"""The model review's findings joined to the scanner's: :func:`model_findings` checks each
against the files that were sent and makes it a :class:`~skillweave.skills.scan.Finding`
(``origin="model"``); :func:`reviewed` puts them beside the scanner's in the report, with the
review's cost and outcome; :func:`judged` does both for a model's answer, or records why it
could not be used.

A model cannot invent evidence: a finding whose ``evidence`` does not occur in the file it
names (as sent, whitespace runs counted as one space) is dropped, and the outcome counts it. Its
line is then the one the evidence is on (the nearest to the line the model gave). The
scanner's findings are never changed or removed, so a report with a review decides at least
what the scanner's findings alone decide under any policy. Called by
:mod:`skillweave.engines.skill_review`.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Final

from skillweave.skills.review.answer import ReviewAnswer
from skillweave.skills.review.bundle import ReviewBundle
from skillweave.skills.review.reviewer import not_reviewed
from skillweave.skills.review.rubric import review_rule
from skillweave.skills.scan import Finding, ModelReview, ScanReport, severity_rank
from skillweave.terminal import terminal_safe

__all__ = ["MIN_EVIDENCE_CHARS", "judged", "model_findings", "reviewed"]

MIN_EVIDENCE_CHARS: Final = 4
"""Evidence shorter than this (spaces aside) proves nothing and is not accepted."""
_EXCERPT_CHARS: Final = 300
_MESSAGE_CHARS: Final = 240
_MAX_OCCURRENCES: Final = 1_000


def model_findings(answer: ReviewAnswer, bundle: ReviewBundle) -> tuple[list[Finding], int]:
    """The answer's findings whose evidence is in the file they cite, as report findings,
    and how many were dropped because it was not (or the file was not sent)."""
    kept: list[Finding] = []
    seen: set[tuple[str, str, int]] = set()
    dropped = 0
    for given in answer.findings:
        path = given.path.removeprefix("./")
        text = bundle.files.get(path)
        evidence = _flat(given.evidence)
        line = _evidence_line(text, evidence, near=given.line) if text is not None else None
        if line is None:
            dropped += 1
            continue
        rule = review_rule(given.attack_class)
        if (rule, path, line) in seen:
            continue  # the same thing said twice
        seen.add((rule, path, line))
        kept.append(
            Finding(
                rule=rule,
                severity=given.severity,
                path=path,
                line=line,
                message=terminal_safe(_clip(_flat(given.message), _MESSAGE_CHARS)),
                excerpt=terminal_safe(_clip(evidence, _EXCERPT_CHARS)),
                origin="model",
            )
        )
    return kept, dropped


def judged(
    report: ScanReport,
    answer: ReviewAnswer | str,
    bundle: ReviewBundle,
    *,
    profile: str,
    input_tokens: int = 0,
    output_tokens: int = 0,
) -> ScanReport:
    """The report after the model answered: its checked findings joined (outcome ``ok``, or
    ``ok, N of M findings dropped: ...``), or, for an answer that cannot be used (`answer` is
    why), the scanner's findings alone and ``not reviewed: <why>``; the cost either way."""
    cost = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if isinstance(answer, str):
        return not_reviewed(report, profile, answer, truncated=bundle.truncated, **cost)
    findings, dropped = model_findings(answer, bundle)
    outcome = "ok"
    if dropped:
        outcome = (
            f"ok, {dropped} of {len(answer.findings)} findings dropped: their evidence is not "
            "in the file they cite"
        )
    review = ModelReview(profile=profile, outcome=outcome, truncated=bundle.truncated, **cost)
    return reviewed(report, review, findings)


def reviewed(report: ScanReport, review: ModelReview, findings: list[Finding]) -> ScanReport:
    """`report` with the model's `findings` beside its own and the review's cost and outcome:
    worst first; within a severity the scanner's (in their order) then the model's, by path
    and line."""
    joined = sorted(
        [*report.findings, *findings],
        key=lambda f: (
            -severity_rank(f.severity),
            f.origin == "model",
            *((f.path, f.line or 0, f.rule) if f.origin == "model" else ()),
        ),
    )
    return report.model_copy(update={"findings": tuple(joined), "review": review})


def _evidence_line(text: str, evidence: str, *, near: int) -> int | None:
    """The 1-based line of `text` where `evidence` (flattened) starts, the nearest to `near`
    of its first :data:`_MAX_OCCURRENCES`; None when `text` does not hold it. Linear in
    `text`: the file is flattened once, its lines joined by one space."""
    if len("".join(evidence.split())) < MIN_EVIDENCE_CHARS:
        return None
    starts: list[int] = []  # where each non-blank line begins in `flat`
    numbers: list[int] = []  # and its 1-based number
    pieces: list[str] = []
    offset = 0
    for number, line in enumerate(text.splitlines(), start=1):
        flat = _flat(line)
        if not flat:
            continue
        starts.append(offset)
        numbers.append(number)
        pieces.append(flat)
        offset += len(flat) + 1
    joined = " ".join(pieces)
    found: list[int] = []
    at = joined.find(evidence)
    while at >= 0 and len(found) < _MAX_OCCURRENCES:
        found.append(numbers[bisect_right(starts, at) - 1])
        at = joined.find(evidence, at + 1)
    if not found:
        return None
    return min(found, key=lambda number: (abs(number - near), number))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
