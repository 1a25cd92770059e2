"""The HTML report's chart: each eval's pass rate per variant, in inline SVG.

:func:`pass_rate_chart` draws it for :mod:`skillweave.evals.html`.

Grouped bars, one group per eval in the batch's order, one bar per variant (its mean pass rate
over its repeats, labelled with the percentage so that the chart reads in grey print too), a
whisker from the lowest to the highest repeat when an eval ran more than once, and a 0-100%
axis with grid lines. The colours are the Okabe-Ito palette's blue, orange and green, which
readers with every common colour-vision deficiency tell apart; the variant is also named in
the legend (:mod:`skillweave.evals.html` draws it) and in each bar's tooltip.

Inline SVG in an HTML page is read by the HTML parser, so every text in it (an eval's id, its
prompt in a tooltip) is escaped like the page's (``escape``, given by the page), and nothing in
it points outside the page: no ``xmlns`` URL, no ``href``, no font. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from skillweave.evals import _figures as figures
from skillweave.evals.batch import Variant
from skillweave.evals.results import EvalReport, EvalRow

__all__ = ["COLOURS", "pass_rate_chart"]

COLOURS: Final[dict[Variant, str]] = {
    "skill": "#0072B2",
    "baseline": "#E69F00",
    "against": "#009E73",
}
_PLOT_HEIGHT: Final = 220
_TOP: Final = 24
_LEFT: Final = 64
_RIGHT: Final = 16
_BOTTOM: Final = 44
_MIN_WIDTH: Final = 1024
"""The width of the report's figure: a chart of few evals fills it, one of many scrolls."""
_BAR: Final = 26
_MAX_BAR: Final = 56
_BAR_GAP: Final = 4
_GROUP_GAP: Final = 28
_LABEL_CHARS: Final = 12


@dataclass(frozen=True)
class _Bar:
    variant: Variant
    rate: float
    low: float
    high: float
    runs: int


def _bars(report: EvalReport, row: EvalRow, variants: tuple[Variant, ...]) -> list[_Bar | None]:
    bars: list[_Bar | None] = []
    for variant in variants:
        if variant not in row.pass_rates:
            bars.append(None)
            continue
        rates = [
            grade.pass_rate
            for grade in report.jobs
            if grade.job.eval_id == row.eval_id and grade.job.variant == variant
        ] or [row.pass_rates[variant]]
        bars.append(_Bar(variant, row.pass_rates[variant], min(rates), max(rates), len(rates)))
    return bars


def _y(rate: float) -> float:
    return _TOP + _PLOT_HEIGHT * (1 - min(1.0, max(0.0, rate)))


def _axis(width: float) -> list[str]:
    parts = []
    for tick in (0, 25, 50, 75, 100):
        y = _y(tick / 100)
        parts.append(
            f'<line class="grid" x1="{_LEFT}" x2="{width - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">{tick}%</text>'
        )
    middle = _TOP + _PLOT_HEIGHT / 2
    parts.append(
        f'<text class="axis-title" x="12" y="{middle:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {middle:.1f})">pass rate</text>'
    )
    return parts


def _bar(bar: _Bar, x: float, width: float, tooltip: str) -> list[str]:
    top = _y(bar.rate)
    bottom = _y(0)
    centre = x + width / 2
    parts = [
        f'<g class="bar {bar.variant}"><title>{tooltip}</title>',
        f'<rect x="{x:.1f}" y="{top:.1f}" width="{width:.1f}" height="{bottom - top:.1f}" '
        f'rx="2" fill="{COLOURS[bar.variant]}"/>',
    ]
    label_y = top
    if bar.runs > 1 and bar.high > bar.low:
        low, high = _y(bar.low), _y(bar.high)
        cap = min(8.0, width / 3)
        parts.append(
            f'<path class="whisker" d="M{centre:.1f} {low:.1f}V{high:.1f}'
            f"M{centre - cap:.1f} {low:.1f}H{centre + cap:.1f}"
            f'M{centre - cap:.1f} {high:.1f}H{centre + cap:.1f}"/>'
        )
        label_y = min(label_y, high)
    parts.append(
        f'<text class="value" x="{centre:.1f}" y="{label_y - 5:.1f}" '
        f'text-anchor="middle">{figures.percent(bar.rate)}</text></g>'
    )
    return parts


def pass_rate_chart(report: EvalReport, *, escape: Callable[[str, int], str]) -> str:
    """The chart of `report` as one ``<svg>`` element (see the module docstring).

    Args:
        report: the report.
        escape: the page's rule for a hostile text, cut to a length.
    """
    variants = tuple(summary.variant for summary in report.variants) or ("skill",)
    count = max(1, len(report.rows))
    bar = _BAR
    group = len(variants) * (bar + _BAR_GAP) - _BAR_GAP + _GROUP_GAP
    if _LEFT + _RIGHT + group * count < _MIN_WIDTH:
        group = (_MIN_WIDTH - _LEFT - _RIGHT) / count
        bar = min(_MAX_BAR, (group - _GROUP_GAP + _BAR_GAP) / len(variants) - _BAR_GAP)
    width = _LEFT + _RIGHT + group * count
    height = _TOP + _PLOT_HEIGHT + _BOTTOM
    parts = [
        f'<svg class="chart" role="img" aria-labelledby="chart-title" '
        f'viewBox="0 0 {width:.0f} {height}" width="{width:.0f}" height="{height}">',
        '<title id="chart-title">Pass rate per eval and variant</title>',
        *_axis(width),
    ]
    for index, row in enumerate(report.rows):
        start = _LEFT + index * group
        used = len(variants) * (bar + _BAR_GAP) - _BAR_GAP
        x = start + (group - used) / 2
        for found in _bars(report, row, variants):
            if found is not None:
                tooltip = (
                    f"eval {escape(row.eval_id, 64)}, "
                    f"{escape(figures.variant_name(found.variant, report), 64)}: "
                    f"{figures.percent(found.rate)} over {found.runs} "
                    f"{'run' if found.runs == 1 else 'runs'}"
                )
                parts += _bar(found, x, bar, tooltip)
            x += bar + _BAR_GAP
        centre = start + group / 2
        parts.append(
            f'<text class="eval" x="{centre:.1f}" y="{_TOP + _PLOT_HEIGHT + 20}" '
            f'text-anchor="middle"><title>{escape(row.prompt, 200)}</title>'
            f"{escape(row.eval_id, _LABEL_CHARS)}</text>"
        )
    parts.append(
        f'<text class="axis-title" x="{_LEFT + (width - _LEFT - _RIGHT) / 2:.1f}" '
        f'y="{height - 6}" text-anchor="middle">eval</text>'
    )
    parts.append(
        f'<line class="baseline-axis" x1="{_LEFT}" x2="{width - _RIGHT}" '
        f'y1="{_y(0):.1f}" y2="{_y(0):.1f}"/>'
    )
    parts.append("</svg>")
    return "".join(parts)
