"""The statistics every detector shares: false-discovery control, chi-square goodness of fit, exact
binomial and hypergeometric tails and a seeded permutation test. Thin over scipy where scipy already does it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats as sps


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values) of independent or positively dependent tests."""
    p = np.asarray(p, dtype=float)
    if p.size == 0:
        return p
    return sps.false_discovery_control(p, method="bh")


def chi_square(observed: np.ndarray, expected_probabilities: np.ndarray) -> tuple[float, float, int]:
    """Pearson's chi-square of counts against probabilities: (statistic, p-value, degrees of freedom)."""
    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(expected_probabilities, dtype=float) * observed.sum()
    stat, p = sps.chisquare(observed, expected)
    return float(stat), float(p), observed.size - 1


def binomial_upper_tail(k, n, p):
    """P(X >= k) for X ~ Binomial(n, p), exact; arrays broadcast (a float for scalars, an array else)."""
    tail = sps.binom.sf(np.asarray(k) - 1, n, p)
    return float(tail) if np.ndim(tail) == 0 else tail


def hypergeometric_upper_tail(k, population, successes, draws):
    """P(X >= k) for X ~ Hypergeometric: `draws` taken without replacement from `population` items of
    which `successes` are marked, X the marked ones drawn; exact; arrays broadcast like
    `binomial_upper_tail`. E.g. the rounds two accounts share when each account's rounds are a random
    subset of the rounds it could have played."""
    tail = sps.hypergeom.sf(np.asarray(k) - 1, population, successes, draws)
    return float(tail) if np.ndim(tail) == 0 else tail


def permutation_p_value(statistic: Callable[[np.ndarray], float], labels: np.ndarray, draws: int = 9_999,
                        seed: int = 0) -> tuple[float, float]:
    """(observed statistic, one-sided p-value) of `statistic(labels)` against the same statistic on
    `draws` random permutations of `labels` (seeded: the same data give the same p-value). The p-value
    counts the observed arrangement among the draws ((1 + hits) / (1 + draws)), so it is never 0."""
    rng = np.random.default_rng(seed)
    observed = statistic(labels)
    hits = sum(statistic(rng.permutation(labels)) >= observed for _ in range(draws))
    return float(observed), (1 + hits) / (1 + draws)
