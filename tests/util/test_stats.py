"""The one 95% interval of a mean score (rebel.util.stats): Student's t for `rebel play` from
10 hands, the normal 1.96 for matches (their recorded intervals unchanged)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rebel.util.stats import MATCH, MIN_HANDS, PLAY, mean_interval, mean_interval_from_moments, t_quantile


@pytest.mark.parametrize("df, expected", [(1, 12.7062047362), (2, 4.3026527297), (3, 3.1824463053), (4, 2.7764451052),
                                          (9, 2.2621571628), (29, 2.0452296421), (120, 1.9799304050)])
def test_t_quantile_matches_the_tables(df, expected):
    assert t_quantile(0.95, df) == pytest.approx(expected, abs=1e-9)


def test_t_quantile_tends_to_the_normal():
    assert t_quantile(0.95, 100_000) == pytest.approx(1.959964, abs=1e-4)
    with pytest.raises(ValueError):
        t_quantile(0.95, 0)


def test_play_shows_no_interval_before_ten_hands():
    assert MIN_HANDS == 10
    assert not mean_interval([-1, -1], PLAY).shown                 # not the zero-width interval of two losses
    assert not mean_interval([1, -1] * 4 + [2], PLAY).shown
    samples = [1, -1] * 5
    r = mean_interval(samples, PLAY)
    assert r.shown and r.n == 10 and r.mean == 0.0
    assert r.half_width == pytest.approx(t_quantile(0.95, 9) * np.std(samples, ddof=1) / math.sqrt(10))


def test_match_rule_is_the_normal_interval_from_two_games():
    # 14 wins and 6 losses of 20: the interval recorded in experiments/results/mnk/alphazero_6x6k4/metrics.jsonl.
    r = mean_interval_from_moments(20, 14.0, 14.0, MATCH)
    assert (r.mean - r.half_width, r.mean + r.half_width) == (0.493942266649164, 0.906057733350836)
    assert not mean_interval_from_moments(1, 1.0, 1.0, MATCH).shown
    empty = mean_interval_from_moments(0, 0.0, 0.0, MATCH)
    assert math.isnan(empty.mean) and not empty.shown
