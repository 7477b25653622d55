"""The shared statistics of surveillance (engine/surveillance/stats.py, tests.py), against hand work."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from engine.surveillance.stats import (
    benjamini_hochberg,
    binomial_upper_tail,
    chi_square,
    hypergeometric_upper_tail,
    permutation_p_value,
)
from engine.surveillance.tests import SurveillanceTest, adjust


def test_benjamini_hochberg_by_hand():
    # sorted p: 0.001, 0.02, 0.03, 0.5 (m = 4): p * m / rank = 0.004, 0.04, 0.04, 0.5, then the running min from the top
    assert benjamini_hochberg(np.array([0.03, 0.5, 0.001, 0.02])) == pytest.approx([0.04, 0.5, 0.004, 0.04])


def test_chi_square_of_uniform_counts_by_hand():
    stat, p, df = chi_square(np.array([10, 10, 30]), np.array([1 / 3] * 3))
    # expected 50/3 each: sum (o - e)^2 / e = ((20/3)^2 * 2 + (40/3)^2) / (50/3) = 16
    assert (stat, df) == (pytest.approx(16.0), 2) and p == pytest.approx(np.exp(-8))  # 2 df: p = exp(-x/2)


def test_binomial_upper_tail_exact():
    n, p = 20, 0.25
    want = sum(Fraction(comb(n, i)) * Fraction(1, 4) ** i * Fraction(3, 4) ** (n - i) for i in range(9, n + 1))
    assert binomial_upper_tail(9, n, p) == pytest.approx(float(want), rel=1e-12)
    assert binomial_upper_tail(0, n, p) == pytest.approx(1.0)
    tails = binomial_upper_tail(np.array([0, 9, 21]), n, p)  # arrays broadcast, one exact tail each
    assert tails == pytest.approx([1.0, float(want), 0.0], rel=1e-12)


def test_hypergeometric_upper_tail_by_hand():
    # 10 rounds, one account bet 4 of them, the other 3 at random: P(they share all 3) = C(4,3) / C(10,3) = 4/120;
    # P(share >= 2) = (C(4,2) C(6,1) + C(4,3)) / C(10,3) = (36 + 4) / 120 = 1/3
    assert hypergeometric_upper_tail(3, 10, 4, 3) == pytest.approx(4 / 120, rel=1e-12)
    assert hypergeometric_upper_tail(2, 10, 4, 3) == pytest.approx(1 / 3, rel=1e-12)
    assert hypergeometric_upper_tail(4, 10, 4, 3) == 0.0 and hypergeometric_upper_tail(0, 10, 4, 3) == 1.0
    # a tiny tail stays exact: two accounts betting the same 30 of 200 rounds, 1 / C(200, 30)
    assert hypergeometric_upper_tail(30, 200, 30, 30) == pytest.approx(1 / comb(200, 30), rel=1e-9)
    assert hypergeometric_upper_tail(np.array([2, 3]), 10, 4, 3) == pytest.approx([1 / 3, 4 / 120], rel=1e-12)


def test_permutation_p_value_is_seeded_and_never_zero():
    labels = np.array([1] * 10 + [0] * 10)
    stat = lambda x: float(x[:10].sum())  # noqa: E731 - every 1 in the first half: the most extreme arrangement
    observed, p = permutation_p_value(stat, labels, draws=999, seed=3)
    assert observed == 10 and p == permutation_p_value(stat, labels, draws=999, seed=3)[1]
    assert 1 / 1000 <= p <= 5 / 1000  # P(all ten 1s first) = 1 / C(20, 10): almost no draw reaches it


def _t(detector: str, p: float | None, sample: int = 100, min_sample: int = 50) -> SurveillanceTest:
    return SurveillanceTest(detector, "s", "2026-11-28", "x", 0.0, p, "m", sample, min_sample)


def test_adjust_is_per_detector_and_never_flags_an_untested_row():
    rows = adjust([_t("a", 0.001), _t("a", 0.9), _t("b", 0.004), _t("b", 0.0001, sample=49), _t("b", None)])
    assert [r.q_value for r in rows[:2]] == pytest.approx([0.002, 0.9])
    assert rows[2].q_value == pytest.approx(0.004) and rows[2].flagged  # alone among b's tested rows
    assert [r.flagged for r in rows] == [True, False, True, False, False]
    assert rows[3].q_value is None and rows[4].q_value is None


def test_flag_boundary_is_q_at_most_alpha():
    assert adjust([_t("a", 0.01)], alpha=0.01)[0].flagged
    assert not adjust([_t("a", 0.010001)], alpha=0.01)[0].flagged


def test_a_sample_exactly_at_its_minimum_is_tested():
    at, below = adjust([_t("a", 0.001, sample=50, min_sample=50), _t("b", 0.001, sample=49, min_sample=50)])
    assert at.tested and at.flagged and at.q_value is not None
    assert not below.tested and not below.flagged and below.q_value is None
