"""How a report's figures and names are written, in every form: one rule for each.

The Markdown (:mod:`skillweave.evals.markdown`) and the HTML (:mod:`skillweave.evals.html`)
forms of a report write a pass rate, a difference, a duration or a price the same way, and
name a variant the same way; both take them from here. What comes out is plain text built only
from numbers and fixed words (a version is shown by its hex digits or not at all), so each form
escapes it by its own rule like any other text. Pure.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

from skillweave.agent import rendering
from skillweave.evals.batch import Variant
from skillweave.evals.results import Difference, EvalReport, VariantSummary

__all__ = [
    "VARIANT_NAMES",
    "cost",
    "difference",
    "duration",
    "headline",
    "interval",
    "moment",
    "percent",
    "points",
    "short_version",
    "spread",
    "tokens",
    "variant_name",
]

VARIANT_NAMES: Final[dict[Variant, str]] = {
    "skill": "with the skill",
    "baseline": "without the skill",
    "against": "with the other version",
}
_HEX: Final = re.compile(r"^[0-9a-fA-F]+$")
_MINUS: Final = "\u2212"


def short_version(version: str | None) -> str:
    """A version by its first 12 hex digits; ``?`` for anything that is not hex."""
    if not version or not _HEX.fullmatch(version):
        return "?"
    return version[: rendering.VERSION_CHARS].lower()


def variant_name(variant: Variant, report: EvalReport) -> str:
    """``with the skill``, ``without the skill``, ``with 0123456789ab`` (the other version)."""
    if variant == "against" and report.against is not None:
        return f"with {short_version(report.against)}"
    return VARIANT_NAMES[variant]


def percent(rate: float) -> str:
    """A rate in [0, 1] as a whole percentage: ``83%``."""
    return f"{round(rate * 100)}%"


def _signed(value: int) -> str:
    if value > 0:
        return f"+{value}"
    return f"{_MINUS}{-value}" if value < 0 else "\u00b10"


def points(delta: float) -> str:
    """A difference of rates in percentage points: ``+43 points``, ``−5 points``."""
    return f"{_signed(round(delta * 100))} points"


def spread(summary: VariantSummary) -> str:
    """A variant's standard deviation over its jobs, in points: ``±12``; empty for one job."""
    return f"\u00b1{round(summary.stddev * 100)}" if summary.jobs > 1 else ""


def interval(found: Difference) -> str:
    """``95% CI +20..+66`` (in points)."""
    low, high = round(found.low * 100), round(found.high * 100)
    return f"{round(found.level * 100)}% CI {_signed(low)}..{_signed(high)}"


def difference(found: Difference, report: EvalReport) -> str:
    """``+43 points, 95% CI +20..+66``, saying so when a side has too few jobs for an interval."""
    text = f"{points(found.delta)}, {interval(found)}"
    sides = (report.variant("skill"), report.variant(found.versus))
    if any(side is None or side.jobs < 2 for side in sides):
        text += " (too few jobs for a narrower interval)"
    return text


def duration(seconds: float) -> str:
    """``0.8 s``, ``12 s``, ``1m 32s``, ``2h 05m``."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


def cost(usd: float | None) -> str:
    """``$0.0123``, ``$1.25``; ``n/a`` when unknown (the model has no prices)."""
    if usd is None:
        return "n/a"
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.4f}"


def moment(stamp: str) -> str:
    """An ISO 8601 time as ``2026-12-07 04:12 UTC``; `stamp` as it is when it is not one (it
    comes from a store: the caller escapes it like any text)."""
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%d %H:%M") + (" UTC" if when.tzinfo is not None else "")


def tokens(count: int) -> str:
    """``12,345``."""
    return f"{count:,}"


def headline(report: EvalReport) -> str:
    """The report in one sentence: ``with the skill 83% (±12), without the skill 40% (±20):
    +43 points, 95% CI +20..+66``; ``no job was graded`` when none was."""
    if not report.variants:
        return "no job was graded"
    rates = []
    for summary in report.variants:
        shown = spread(summary)
        rate = f"{variant_name(summary.variant, report)} {percent(summary.pass_rate)}"
        rates.append(f"{rate} ({shown})" if shown else rate)
    text = ", ".join(rates)
    if len(report.differences) == 1:
        text += f": {difference(report.differences[0], report)}"
    elif report.differences:
        text += ": " + "; ".join(
            f"vs {variant_name(found.versus, report)}: {difference(found, report)}"
            for found in report.differences
        )
    return text
