"""The one result shape of every detector: a statistical test of one subject over one period."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import pyarrow as pa

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
    # tests run but not listed, that this row stands for: a screened detector's summary row (the pair detectors
    # list only the pairs at or below their screening p-value, engine/surveillance/collusion.py). They count in
    # the m of the detector's Benjamini-Hochberg; the row itself is not a test (p_value None).
    unlisted: int = 0
    # the currency the test is confined to, where its detector tests a subject per currency (dealer_result,
    # advantage_play, opposite_betting: the subject's rows in another currency are another test); None: a test not
    # per currency. A column, so that what reads the rows (the warehouse views) need not parse `detail`
    currency: str | None = None

    @property
    def tested(self) -> bool:
        return self.p_value is not None and self.sample >= self.min_sample


# A detector's tests as columns: SurveillanceTest's fields but q_value and flagged, which adjusting sets. What a
# detector with a test a pair of accounts returns (~1.3M pairs on a 1M-bet floor: an object each took GBs), and what
# travels from the tests to the adjustment in the pipeline.
TEST_COLUMNS = pa.schema([
    ("detector", pa.string()), ("subject", pa.string()), ("period", pa.string()), ("statistic", pa.string()),
    ("value", pa.float64()), ("p_value", pa.float64()), ("method", pa.string()), ("sample", pa.int64()),
    ("min_sample", pa.int64()), ("effect", pa.float64()), ("money", pa.int64()), ("detail", pa.string()),
    ("unlisted", pa.int64()), ("currency", pa.string()),
])


def as_test_columns(tests: Sequence[SurveillanceTest]) -> pa.Table:
    """Tests as one Arrow table of TEST_COLUMNS (numpy scalars and ints where a detector gave them, as floats
    and ints)."""
    columns = {name: [getattr(t, name) for t in tests] for name in TEST_COLUMNS.names}
    for name in ("value", "p_value", "effect"):
        columns[name] = [None if v is None else float(v) for v in columns[name]]
    for name in ("sample", "min_sample", "money", "unlisted"):
        columns[name] = [None if v is None else int(v) for v in columns[name]]
    return pa.table(columns, schema=TEST_COLUMNS)


def as_rows(tests: Sequence[SurveillanceTest] | pa.Table | Iterator[pa.Table]) -> list[SurveillanceTest]:
    """A detector's tests as SurveillanceTest rows, whichever it returned (a list, a table of TEST_COLUMNS, or such
    tables a part at a time)."""
    if isinstance(tests, Iterator):
        tests = pa.concat_tables([TEST_COLUMNS.empty_table(), *tests])
    if not isinstance(tests, pa.Table):
        return list(tests)
    names = {f.name for f in fields(SurveillanceTest)}
    return [SurveillanceTest(**{k: v for k, v in row.items() if k in names and not (k == "unlisted" and v is None)})
            for row in tests.to_pylist()]



def benjamini_hochberg_of(p: np.ndarray, m: int) -> np.ndarray:
    """Benjamini-Hochberg q-values of the `p` listed among `m` >= len(p) tests whose other p-values are larger than
    every listed one (a screened detector: the pairs above its screen are not listed). The listed p-values hold
    ranks 1..len(p) of the m, so q_(i) = min over listed j >= i of p_(j) m / j, capped at 1: the exact q-value
    wherever it is at or below the screen, an upper bound above it (proof at `adjust`). m = len(p): the usual
    adjustment (stats.benjamini_hochberg, to the bit)."""
    p = np.asarray(p, dtype=float)
    if m < p.size:
        raise ValueError(f"m = {m} tests, fewer than the {p.size} p-values listed")
    if p.size == 0 or m == p.size:
        return benjamini_hochberg(p)
    order = np.argsort(p, kind="stable")
    ranked = p[order] * (m / np.arange(1, p.size + 1))
    q = np.empty_like(ranked)
    q[order] = np.minimum.accumulate(ranked[::-1])[::-1]
    return np.clip(q, 0.0, 1.0)


def adjust(tests: Sequence[SurveillanceTest] | pa.Table | Iterator[pa.Table], alpha: float = ALPHA
           ) -> list[SurveillanceTest]:
    """Benjamini-Hochberg over the tested rows of each detector: q-values, and `flagged` where q <= alpha.
    Rows not tested keep q None and are never flagged. The m of a detector is its tested rows plus the tests its
    summary rows stand for (`unlisted`). Order is kept; a table of TEST_COLUMNS is taken as its rows.

    Why a screened detector's flags are exact: its listed tests are every test with p <= s (the screen, s >= alpha),
    the unlisted ones have p > s. BH's q of the listed test of rank i among all m is min over j >= i of p_(j) m / j;
    for an unlisted j (rank > the k listed) p_(j) m / j >= p_(j) > s, so the true q is min(q over the listed, a
    value > s): the listed q whenever that is <= s (exact), else in (s, listed q] (an upper bound, > s >= alpha:
    not flagged either way). So the flags and every q <= s equal those of the adjustment over all m tests listed."""
    rows = as_rows(tests)
    out = list(rows)
    for detector in sorted({t.detector for t in rows}):
        idx = [i for i, t in enumerate(rows) if t.detector == detector and t.tested]
        unlisted = sum(t.unlisted for t in rows if t.detector == detector)
        if not idx:
            continue
        q = benjamini_hochberg_of(np.array([rows[i].p_value for i in idx], dtype=float), len(idx) + unlisted)
        for i, qi in zip(idx, q, strict=True):
            out[i] = replace(rows[i], q_value=float(qi), flagged=bool(qi <= alpha))
    return out
