"""The one result shape of every detector: a statistical test of one subject over one period."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.surveillance.stats import benjamini_hochberg

ALPHA = 0.01  # the false-discovery rate a run's flags are held to (docs/surveillance.md)


@dataclass(frozen=True)
class SurveillanceTest:
    detector: str  # e.g. "wheel_bias"
    subject: str  # an account, "A|B" for a pair, a shoe, a table, an equipment_id, a dealer
    period: str  # "YYYY-MM-DD" or "YYYY-MM-DD..YYYY-MM-DD"
    statistic: str  # for people, e.g. "chi2 = 61.3 (36 df)"
    value: float | None  # the statistic's value
    p_value: float | None  # None: not tested (sample below min_sample; `detail` says so)
    method: str  # how p_value was obtained, e.g. "chi-square, 36 df"
    sample: int
    min_sample: int
    effect: float | None = None  # the size of what was found, in the detector's unit
    money: int | None = None  # minor units at stake, where it applies
    detail: str = ""
    q_value: float | None = None  # set by `adjust`
    flagged: bool = False  # set by `adjust`

    @property
    def tested(self) -> bool:
        return self.p_value is not None and self.sample >= self.min_sample


def adjust(tests: list[SurveillanceTest], alpha: float = ALPHA) -> list[SurveillanceTest]:
    """Benjamini-Hochberg over the tested rows of each detector: q-values, and `flagged` where q <= alpha.
    Rows not tested keep q None and are never flagged. Order is kept."""
    out = list(tests)
    for detector in sorted({t.detector for t in tests}):
        idx = [i for i, t in enumerate(tests) if t.detector == detector and t.tested]
        if not idx:
            continue
        q = benjamini_hochberg(np.array([tests[i].p_value for i in idx], dtype=float))
        for i, qi in zip(idx, q, strict=True):
            out[i] = replace(tests[i], q_value=float(qi), flagged=bool(qi <= alpha))
    return out
