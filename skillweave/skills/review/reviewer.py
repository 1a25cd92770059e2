"""Who reviews a skill (:class:`SkillReviewer`, the port a model reviewer fills) and the one
rule every door applies around it (:func:`review_report`): bounded in time, and never able to
lower the scanner's verdict.

The skills layer may not call a model (``skillweave.llm`` is a sibling layer), so the doors
are handed a reviewer: :func:`skillweave.engines.skill_reviewer` makes one
from the settings when ``skills.scan.review_model`` is set. :class:`~skillweave.skills.Admissions`
(installs, uploads, published drafts) and ``engines.authoring`` (an agent's draft, at
``create_skill``) call :func:`review_report` after the scan and decide on what it returns.

Whatever the reviewer does (raises, hangs, returns a report without the scanner's findings),
the result holds every finding of the scan unchanged, so the policy's decision can only stay
or get stricter; a review that gave nothing usable says why in ``review.outcome``
("not reviewed: ..."), and the scanner's findings alone decide.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Mapping
from typing import Final, Protocol

from skillweave.skills.scan import ModelReview, ScanReport
from skillweave.terminal import terminal_safe

__all__ = ["NOT_REVIEWED", "SkillReviewer", "not_reviewed", "one_line", "review_report"]

NOT_REVIEWED: Final = "not reviewed: "
"""How the outcome of a review that gave no usable answer begins."""
_OUTCOME_CHARS: Final = 300
_log = logging.getLogger("skillweave.skills.review")


class SkillReviewer(Protocol):
    """Reviews a skill version's files and adds its findings to the scan's report."""

    @property
    def profile(self) -> str:
        """The model profile asked (``skills.scan.review_model``)."""
        ...

    async def review(self, files: Mapping[str, bytes], report: ScanReport) -> ScanReport:
        """`report` with the review's findings (``origin="model"``) and its
        :class:`~skillweave.skills.scan.ModelReview`; the scanner's findings unchanged."""
        ...


def not_reviewed(
    report: ScanReport,
    profile: str,
    why: str,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    truncated: tuple[str, ...] = (),
) -> ScanReport:
    """`report` as the scanner made it, with a review outcome saying why no findings were
    taken from the model (one line, :data:`NOT_REVIEWED` first), what the attempt cost and
    what it left out."""
    outcome = one_line(f"{NOT_REVIEWED}{why}")
    review = ModelReview(
        profile=profile,
        outcome=outcome,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        truncated=truncated,
    )
    return report.model_copy(update={"review": review})


def one_line(text: str) -> str:
    """`text` as a review outcome: one line, escaped, at most 300 characters (it may quote
    the model)."""
    flat = terminal_safe(" ".join(text.split()))
    return flat if len(flat) <= _OUTCOME_CHARS else flat[: _OUTCOME_CHARS - 1] + "…"


async def review_report(
    reviewer: SkillReviewer | None,
    files: Mapping[str, bytes],
    report: ScanReport,
    *,
    timeout: float,
) -> ScanReport:
    """The report a door decides on: `report` alone without a `reviewer`, else with its
    review, bounded by `timeout` seconds. Never raises (but for cancellation)."""
    if reviewer is None:
        return report
    profile = reviewer.profile
    try:
        async with asyncio.timeout(timeout):
            result = await reviewer.review(files, report)
    except TimeoutError:
        return not_reviewed(report, profile, f"no answer within {timeout:g} s")
    except Exception as exc:  # a reviewer's bug must not refuse, nor admit, anything
        _log.warning("the model review of %s failed", report.version[:12], exc_info=True)
        return not_reviewed(report, profile, f"the review failed ({type(exc).__name__})")
    if result.version != report.version or _missing(report, result):
        return not_reviewed(report, profile, "the review changed the scanner's findings")
    return result


def _missing(report: ScanReport, result: ScanReport) -> bool:
    """Whether `result` lacks a finding of `report` (counted: a finding twice must stay twice)."""
    return bool(Counter(report.findings) - Counter(result.findings))
