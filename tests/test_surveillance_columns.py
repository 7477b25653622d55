"""The pipeline's columnar adjustment (pipelines/surveillance.py `adjusted`, `tests_table`) against the engine's
row by row `adjust` (engine/surveillance/tests.py), on randomized tests of several detectors."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from engine.surveillance.tests import SurveillanceTest, adjust
from pipelines import surveillance as pipeline  # (its tests_table would be collected as a test if imported)
from pipelines.surveillance import adjusted, as_test_columns, period_dates


def _random_tests(seed: int, n: int = 400) -> list[SurveillanceTest]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        detector = ("shared_rounds", "wheel_bias", "weak_shuffle_pair")[int(rng.integers(3))]
        tested = rng.random() < 0.8
        sample, min_sample = int(rng.integers(0, 40)), int(rng.integers(1, 30))
        # p-values piled near 0 so that some rows pass BH at 1%, ties included
        p = float(rng.choice([rng.random() ** 6, 1e-5, 1.0])) if tested else None
        period = ("2026-11-28", "2026-11-28..2026-12-01", "run")[int(rng.integers(3))]
        out.append(SurveillanceTest(detector, f"S{i % 97}", period, f"x = {i}", float(rng.random()), p, "m", sample,
                                    min_sample, None if i % 5 == 0 else np.float64(rng.normal()),
                                    None if i % 3 else int(rng.integers(0, 10_000)), f"detail {i}"))
    return out


def test_columnar_adjustment_equals_the_engines_row_by_row():
    for seed in range(5):
        tests = _random_tests(seed)
        expected = adjust(tests, 0.01)
        q, flagged, tested = adjusted(as_test_columns(tests), 0.01)
        assert [t.flagged for t in expected] == flagged.tolist()
        assert sum(flagged) > 0, "the randomized input must flag some rows"
        assert [t.q_value for t in expected] == [None if np.isnan(v) else float(v) for v in q]
        assert tested == {d: sum(t.tested for t in tests if t.detector == d) for d in {t.detector for t in tests}}

        kinds = pa.chunked_array([pa.array(["K"] * len(tests), pa.string())])
        table = pipeline.tests_table(as_test_columns(tests), q, flagged, kinds, tested, 0.01, "run-1").to_pylist()
        for row, t in zip(table, expected, strict=True):
            first, last = period_dates(t.period)
            assert (row["period_start"], row["business_date"]) == (first, last)
            assert row["q_value"] == t.q_value and row["flagged"] == t.flagged
            assert row["detector_tests"] == tested[t.detector]
            assert row["effect"] == (None if t.effect is None else float(t.effect)) and row["money"] == t.money
            assert (row["subject"], row["p_value"], row["detail"]) == (t.subject, t.p_value, t.detail)


def test_no_tests_make_an_empty_table():
    q, flagged, tested = adjusted(as_test_columns([]), 0.01)
    assert q.size == 0 and flagged.size == 0 and tested == {}
    empty = pa.chunked_array([], pa.string())
    assert pipeline.tests_table(as_test_columns([]), q, flagged, empty, tested, 0.01, None).num_rows == 0


def test_summary_rows_count_in_m_and_the_adjustments_agree():
    # a screened detector's summary rows (no p-value) stand for `unlisted` tests above its screen: they raise the m
    # of that detector only, in the columnar adjustment as in the engine's
    tests = _random_tests(7)
    tests += [SurveillanceTest("shared_rounds", "T01", "2026-11-28", "pairs tested = 900", 900.0, None, "summary", 900,
                               1, unlisted=850),
              SurveillanceTest("shared_rounds", "T02", "2026-11-28", "pairs tested = 60", 60.0, None, "summary", 60, 1,
                               unlisted=50)]
    q, flagged, m = adjusted(as_test_columns(tests), 0.01)
    expected = adjust(tests, 0.01)
    assert [t.flagged for t in expected] == flagged.tolist()
    assert [t.q_value for t in expected] == [None if np.isnan(v) else float(v) for v in q]
    listed = sum(t.tested for t in tests if t.detector == "shared_rounds")
    assert m["shared_rounds"] == listed + 900
    assert m["wheel_bias"] == sum(t.tested for t in tests if t.detector == "wheel_bias")
    assert not flagged[-2:].any() and np.isnan(q[-2:]).all()
    # an unlisted test raises every listed q: q = p m / rank at the smallest p
    p = min(t.p_value for t in tests if t.detector == "shared_rounds" and t.tested)
    i = next(i for i, t in enumerate(tests) if t.detector == "shared_rounds" and t.tested and t.p_value == p)
    assert q[i] <= min(1.0, p * (listed + 900)) and q[i] >= min(1.0, p * (listed + 900) / listed) - 1e-15
