"""Welch's confidence interval for a difference of two means, and the Student t quantile it needs.

:func:`welch_interval` is what an eval report's :class:`~skillweave.evals.results.Difference`
rests on (:mod:`skillweave.evals.report` calls it): the skill variant's job pass rates against
another variant's, two samples of unequal size and spread, hence Welch's t with the
Welch-Satterthwaite degrees of freedom (a real number, not an integer).

Written by hand: the one statistic a report needs is a two-sided t quantile at a real number of
degrees of freedom, and the library that has it (scipy) is not a dependency of skillweave and
is far too large to become one for a single function. The quantile is exact, not read from a
table: the t distribution's tail is the regularized incomplete beta function (computed by its
continued fraction, Lentz's method, as in Numerical Recipes §6.4), inverted by bisection.
Pure and deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["Interval", "mean", "sample_stddev", "t_quantile", "welch_interval"]

_ITERATIONS: Final = 300
_TINY: Final = 1e-300
_EPSILON: Final = 1e-15
_T_CEILING: Final = 1e6
"""No two-sided quantile at 1 degree of freedom or more and a level up to 0.999 is this large."""


@dataclass(frozen=True)
class Interval:
    """A difference of means and its confidence interval (unclipped)."""

    delta: float
    low: float
    high: float


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean of `values` (0 for none)."""
    return math.fsum(values) / len(values) if values else 0.0


def sample_stddev(values: Sequence[float]) -> float:
    """The sample standard deviation (n − 1) of `values`; 0 for fewer than two."""
    if len(values) < 2:
        return 0.0
    centre = mean(values)
    return math.sqrt(math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1))


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, _ITERATIONS + 1):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            result *= c * d
        if abs(c * d - 1.0) < _EPSILON:
            break
    return result


def _regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for 0 ≤ x ≤ 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _two_sided_tail(t: float, df: float) -> float:
    """P(|T| > t) for Student's T with `df` degrees of freedom, t ≥ 0."""
    return _regularized_beta(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(df: float, level: float = 0.95) -> float:
    """The t with P(|T| ≤ t) = `level` for Student's T with `df` degrees of freedom (> 0):
    12.706 at df 1 and level 0.95, 2.228 at 10, 1.960 as df grows without bound."""
    if not df > 0 or not 0 < level < 1:
        raise ValueError(f"t_quantile: df {df} must be > 0 and level {level} in (0, 1)")
    tail = 1.0 - level
    low, high = 0.0, _T_CEILING
    for _ in range(200):
        middle = (low + high) / 2.0
        if _two_sided_tail(middle, df) > tail:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0


def welch_interval(
    first: Sequence[float], second: Sequence[float], *, level: float = 0.95
) -> Interval | None:
    """mean(`first`) − mean(`second`) with its Welch t interval at `level`.

    None when a side has fewer than two values (its spread is unknown, so no interval can be
    drawn from the data). When neither side varies, the interval is the difference itself:
    the data show no spread at all.
    """
    if len(first) < 2 or len(second) < 2:
        return None
    delta = mean(first) - mean(second)
    share_first = sample_stddev(first) ** 2 / len(first)
    share_second = sample_stddev(second) ** 2 / len(second)
    variance = share_first + share_second
    if variance == 0.0:
        return Interval(delta, delta, delta)
    df = variance**2 / (share_first**2 / (len(first) - 1) + share_second**2 / (len(second) - 1))
    half = t_quantile(df, level) * math.sqrt(variance)
    return Interval(delta, delta - half, delta + half)
