"""The 95% interval of a mean score, shared by ``rebel play`` (:class:`rebel.play.cards.Score`)
and m,n,k matches (:class:`rebel.alphazero.match.MatchResult`).

Both report a mean payoff per hand (or per game) with the half-width of a two-sided interval
``mean +- q * s / sqrt(n)``, ``s`` the sample standard deviation (n - 1 in the denominator).
They differ only in the quantile ``q`` and in the fewest samples that get an interval:

* ``rebel play`` (:data:`PLAY`) uses Student's t quantile with n - 1 degrees of freedom and
  shows no interval before :data:`MIN_HANDS` hands. A human looks at the score after every
  hand; with two or three hands the sample standard deviation is itself a guess (two lost
  hands give s = 0, an interval of zero width), and the normal quantile 1.96 is too small
  for few samples (t is 4.30 at n = 3, 2.26 at n = 10, 2.05 at n = 30). Below 10 hands the
  line says how many hands there are and that they are too few.
* Matches (:data:`MATCH`) keep the normal quantile 1.96 from two games on: their intervals
  are recorded in committed results (experiments/results/mnk/alphazero_*/metrics.jsonl, 20-game
  evaluations) that must stay reproducible, and matches are played by the dozen or hundred.
  One game gets no interval (the caller clips it to the score's range).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["MATCH", "MIN_HANDS", "PLAY", "IntervalRule", "MeanInterval", "mean_interval", "mean_interval_from_moments",
           "t_quantile"]

#: Hands ``rebel play`` needs before it shows an interval.
MIN_HANDS = 10

Z_95 = 1.96


def _t_two_sided(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with ``df`` (integer) degrees of freedom, by the closed
    series in theta = atan(t / sqrt(df)) (Abramowitz and Stegun 26.7.3 and 26.7.4)."""
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 1:
        term, total = math.cos(theta), 0.0
        if df > 1:
            total = term
            for k in range(3, df - 1, 2):
                term *= c2 * (k - 1) / k
                total += term
        return 2.0 / math.pi * (theta + s * total)
    term, total = 1.0, 1.0
    for k in range(2, df - 1, 2):
        term *= c2 * (k - 1) / k
        total += term
    return s * total


def t_quantile(level: float, df: int) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom, e.g.
    12.706 for (0.95, 1), 2.262 for (0.95, 9); by bisection on the exact CDF."""
    if not 0.0 < level < 1.0 or df < 1:
        raise ValueError(f"need 0 < level < 1 and df >= 1, got {level}, {df}")
    if df > 100_000:  # the series has df / 2 terms; t is the normal quantile to 1e-5 there
        df = 100_000
    low, high = 0.0, 1.0
    while _t_two_sided(high, df) < level:
        high *= 2.0
    for _ in range(80):
        mid = 0.5 * (low + high)
        if _t_two_sided(mid, df) < level:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


@dataclass(frozen=True)
class IntervalRule:
    """How an interval is formed: the quantile (``student``: t with n - 1 degrees of freedom,
    else the normal 1.96) and the fewest samples that get one."""

    student: bool
    min_samples: int


PLAY = IntervalRule(student=True, min_samples=MIN_HANDS)
MATCH = IntervalRule(student=False, min_samples=2)


@dataclass(frozen=True)
class MeanInterval:
    """A mean of ``n`` samples and the half-width of its 95% interval (inf: too few samples)."""

    n: int
    mean: float
    half_width: float

    @property
    def shown(self) -> bool:
        """Whether there were enough samples for an interval."""
        return math.isfinite(self.half_width)


def mean_interval_from_moments(n: int, total: float, total_squares: float, rule: IntervalRule) -> MeanInterval:
    """The mean and 95% half-width from the count, the sum and the sum of squares of the
    samples (a match knows only its wins, draws and losses). ``mean`` is nan for n = 0."""
    if n == 0:
        return MeanInterval(0, math.nan, math.inf)
    mean = total / n
    if n < max(rule.min_samples, 2):
        return MeanInterval(n, mean, math.inf)
    sd = math.sqrt(max(total_squares / n - mean * mean, 0.0) * n / (n - 1))
    q = t_quantile(0.95, n - 1) if rule.student else Z_95
    return MeanInterval(n, mean, q * sd / math.sqrt(n))


def mean_interval(samples: Sequence[float], rule: IntervalRule) -> MeanInterval:
    """The mean of ``samples`` and the half-width of its 95% interval under ``rule``."""
    values = [float(x) for x in samples]
    return mean_interval_from_moments(len(values), math.fsum(values), math.fsum(x * x for x in values), rule)
