"""The pair detectors' screen (engine/surveillance/collusion.py `screen_p`): only the pairs at or below it are listed,
a summary row a table counts the rest, and the false-discovery control still counts every pair. Against the path
before the screen, re-done here by hand: every pair's p-value by scipy one pair at a time, Benjamini-Hochberg over
all of them (scipy), on randomized floors: the same flagged pairs with the same q-values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import scipy.stats as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.surveillance.collusion import OPPOSITE_BETTING, SHARED_ROUNDS, _listed
from engine.surveillance.tests import TEST_COLUMNS, adjust, as_rows, benjamini_hochberg_of
from pipelines.surveillance import adjusted
from tests.test_surveillance_collusion import baccarat_night


def _old_shared_rounds(features: pa.Table, min_sample: int) -> dict[str, float]:
    """Every tested pair's p-value as before the screen, by scipy one pair at a time (A|B@table -> p)."""
    out = {}
    for r in features.to_pylist():
        w, a, b, s = r["window_effective"], r["rounds_a"], r["rounds_b"], r["shared_window"]
        if min(a, b) < min_sample:
            continue
        p = sps.hypergeom.sf(s - 1, w, a, b) / (1 - sps.hypergeom.pmf(0, w, a, b))
        out[f"{r['account_a']}|{r['account_b']}@{r['table_id']}"] = min(max(p, 0.0), 1.0)
    return out


def _old_opposite_betting(features: pa.Table, min_sample: int) -> dict[str, float]:
    """Every tested (pair, currency)'s p-value as before the screen: its tables summed, the binomial tail at the
    mean chance, by scipy one pair at a time (A|B -> p; one currency here)."""
    sums: dict[str, list[float]] = {}
    for r in features.to_pylist():
        acc = sums.setdefault(f"{r['account_a']}|{r['account_b']}", [0, 0, 0.0])
        acc[0] += r["shared"]
        acc[1] += r["matched"]
        acc[2] += r["expected"]
    return {k: min(max(sps.binom.sf(x - 1, n, min(max(e / n, 0.0), 1.0)), 0.0), 1.0)
            for k, (n, x, e) in sums.items() if n >= min_sample}


def _old_flags(p: dict[str, float], alpha: float) -> dict[str, float]:
    """The flagged subjects of Benjamini-Hochberg over every tested pair, with their q-values."""
    keys = sorted(p)
    q = sps.false_discovery_control(np.array([p[k] for k in keys]), method="bh") if keys else []
    return {k: float(qk) for k, qk in zip(keys, q, strict=True) if qk <= alpha}


def _night(seed: int, planted: int) -> list:
    return baccarat_night(n_tables=3, n_rounds=300, sessions_per_table=50, n_accounts=90, seed=seed,
                          planted=planted, planted_rounds=120, planted_tables=2)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), planted=st.sampled_from([0, 1]), alpha=st.sampled_from([0.01, 0.05, 0.3, 0.6]))
def test_the_screen_flags_the_same_pairs_with_the_same_q_values(seed, planted, alpha):
    night = _night(seed, planted)
    for detector, key, old in ((SHARED_ROUNDS, "min_window_rounds", _old_shared_rounds),
                               (OPPOSITE_BETTING, "min_shared_rounds", _old_opposite_betting)):
        features = pa.concat_tables([detector.features(t) for t in night])
        p_old = old(features, detector.settings[key])
        want = _old_flags(p_old, alpha)
        tests = detector.tests(features, {**detector.settings, "alpha": alpha})
        assert tests.schema == TEST_COLUMNS
        q, flagged, m = adjusted(tests, alpha)  # the pipeline's adjustment, column by column
        rows = as_rows(tests)
        pairs = [r for r in rows if "|" in r.subject]
        summaries = [r for r in rows if "|" not in r.subject]

        def key_of(r, per_table=detector is SHARED_ROUNDS):  # shared_rounds: a test a pair and table
            return r.subject + (f"@{r.detail.split(' at ', 1)[1].split(' (')[0]}" if per_table else "")

        got = {key_of(r): float(q[i]) for i, r in enumerate(rows) if flagged[i]}
        assert set(got) == set(want), (detector.name, seed)
        for k, v in want.items():
            assert got[k] == pytest.approx(v, rel=0, abs=1e-12)
        # the engine's adjustment of the same rows agrees with the pipeline's
        assert {key_of(r) for r in adjust(tests, alpha) if r.flagged} == set(got)
        # every tested pair is counted (m), and exactly once: listed, or in its table's summary row
        assert m[detector.name] == len(p_old) == sum(r.tested for r in pairs) + sum(s.unlisted for s in summaries)
        assert sum(s.sample for s in summaries) == len(p_old) and all(s.p_value is None for s in summaries)
        # listed: exactly the tested pairs at or below the screen (max(screen_p, alpha))
        screen = max(detector.settings["screen_p"], alpha)
        assert sorted(key_of(r) for r in pairs if r.tested) == sorted(k for k, p in p_old.items() if p <= screen)
        # a listed q at or below the screen is the q over every pair; above it, never below that q
        q_all = dict(zip(sorted(p_old), sps.false_discovery_control(np.array([p_old[k] for k in sorted(p_old)]),
                                                                     method="bh"), strict=True)) if p_old else {}
        for i, r in enumerate(rows):
            if r.tested:
                if q[i] <= screen:
                    assert q[i] == pytest.approx(q_all[key_of(r)], rel=0, abs=1e-12)
                else:
                    assert q[i] >= q_all[key_of(r)] - 1e-12 and q_all[key_of(r)] > screen


def test_a_planted_pair_stays_flagged_and_counted():
    night = _night(11, 1)
    for detector in (SHARED_ROUNDS, OPPOSITE_BETTING):
        features = pa.concat_tables([detector.features(t) for t in night])
        rows = adjust(detector.tests(features, detector.settings))
        assert {r.subject for r in rows if r.flagged} == {"P1|P2"}, detector.name
        (summary, *_) = [r for r in rows if "|" not in r.subject]
        assert summary.statistic.startswith("pairs tested = ") and summary.unlisted > 0
        assert "count in the m of Benjamini-Hochberg" in summary.detail


def test_the_screen_is_inclusive_and_never_below_alpha():
    # one pair at exactly the screen is listed, the next p above it is not (p <= screen_p, not <)
    night = _night(3, 0)
    features = pa.concat_tables([SHARED_ROUNDS.features(t) for t in night])
    rows = [r for r in as_rows(SHARED_ROUNDS.tests(features, {**SHARED_ROUNDS.settings, "screen_p": 1.0}))
            if r.tested]
    p = sorted({r.p_value for r in rows})
    cut = p[len(p) // 3]
    at = as_rows(SHARED_ROUNDS.tests(features, {**SHARED_ROUNDS.settings, "screen_p": cut}))
    assert sorted(r.p_value for r in at if r.tested) == sorted(r.p_value for r in rows if r.p_value <= cut)
    assert any(r.p_value == cut for r in at if r.tested)
    # a screen below alpha is raised to alpha: the pairs at or below alpha are all listed
    low = as_rows(SHARED_ROUNDS.tests(features, {**SHARED_ROUNDS.settings, "screen_p": 1e-9, "alpha": cut}))
    assert sorted(r.p_value for r in low if r.tested) == sorted(r.p_value for r in rows if r.p_value <= cut)


def test_benjamini_hochberg_among_more_tests_than_listed():
    # 3 listed p-values among m = 10 (the 7 others above 0.5): q_(i) = min_{j >= i} p_(j) 10 / j
    q = benjamini_hochberg_of(np.array([0.04, 0.001, 0.02]), 10)
    assert q.tolist() == pytest.approx([min(0.04 * 10 / 3, 1), 0.001 * 10, 0.02 * 10 / 2], rel=1e-15)
    # m = the listed: scipy's, to the bit
    p = np.random.default_rng(0).random(50) ** 3
    assert benjamini_hochberg_of(p, 50).tolist() == sps.false_discovery_control(p, method="bh").tolist()
    with pytest.raises(ValueError):
        benjamini_hochberg_of(p, 49)


def test_a_pair_too_small_to_test_is_listed_only_below_alpha_and_a_tested_one_at_the_screen():
    """The two listing boundaries: a pair below its minimum sample is listed when its p is strictly below alpha
    (at alpha it would not be flagged had it been tested: nothing to show), a tested pair when its p is at or
    below the screen."""
    alpha, screen = 0.01, 0.05
    below = np.nextafter(alpha, 0.0)
    p = np.array([alpha, below, screen, np.nextafter(screen, 1.0)])
    assert _listed(p, np.zeros(4, bool), screen, alpha).tolist() == [False, True, False, False]
    assert _listed(p, np.ones(4, bool), screen, alpha).tolist() == [True, True, True, False]


def _by_sort_keys(tests: pa.Table) -> pa.Table:
    from schemas.outputs import SORT_KEYS

    return tests.sort_by([(k, "ascending") for k in SORT_KEYS["surveillance_tests"]])


@settings(max_examples=8, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), planted=st.sampled_from([0, 1]), alpha=st.sampled_from([0.01, 0.05, 0.3]),
       days=st.sampled_from([1, 3]), screen=st.sampled_from([SHARED_ROUNDS.settings["screen_p"], 1.0]))
def test_shared_rounds_a_table_at_a_time_are_its_tests_over_every_table(seed, planted, alpha, days, screen):
    """SHARED_ROUNDS.tests_per_table: the pipeline tests each table's features alone, in the per-table step, and only
    the listed rows and summaries travel on. Over the tables' features concatenated the tests are the same rows, the
    p-values to the bit (so the same flags, q-values and m): one day of 3 tables with or without a planted pair, and
    3 days of 2 tables whose regulars return across tables and days; at the screen and with every pair listed."""
    from bench.surveillance_calendar import clean_floor

    assert SHARED_ROUNDS.tests_per_table and not OPPOSITE_BETTING.tests_per_table
    floor = _night(seed, planted) if days == 1 else clean_floor(np.random.default_rng(seed), tables=2, days=days,
                                                                 rounds=150, sessions=16, accounts=30)
    settings_ = {**SHARED_ROUNDS.settings, "alpha": alpha, "screen_p": screen}
    per_table = [SHARED_ROUNDS.tests(SHARED_ROUNDS.features(t), settings_) for t in floor]
    whole = SHARED_ROUNDS.tests(pa.concat_tables([SHARED_ROUNDS.features(t) for t in floor]), settings_)
    assert _by_sort_keys(pa.concat_tables(per_table)).equals(_by_sort_keys(whole))
    assert sum(t.num_rows for t in per_table) == whole.num_rows
    assert screen < 1 or whole.num_rows > 40 * len(floor)  # every pair listed: many p-values compared
    # the summaries: one a table, each counting only its own table's pairs
    summaries = [[r for r in as_rows(t) if "|" not in r.subject] for t in per_table]
    assert [len(s) for s in summaries] == [1] * len(floor)
    assert [s[0].subject for s in summaries] == [t.table["table_id"] for t in floor]


def _parts(table_ids: list[str], per_table: list[pa.Table]) -> list[pa.Table]:
    """The parts pipelines/surveillance.py makes of the tables' features (`_parts`, no spill folder)."""
    from pipelines.surveillance import _parts

    return list(_parts(OPPOSITE_BETTING, list(zip(table_ids, per_table, strict=True))))


@settings(max_examples=8, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), planted=st.sampled_from([0, 1]), alpha=st.sampled_from([0.01, 0.3]),
       screen=st.sampled_from([OPPOSITE_BETTING.settings["screen_p"], 1.0]))
def test_opposite_betting_by_part_are_its_tests_over_every_table(seed, planted, alpha, screen):
    """OPPOSITE_BETTING.tests_by_part: the pipeline tests the run's pairs a part at a time (each table's features split
    by their pairs' home tables). Over the parts, the same rows as its tests over every table's features, the
    p-values to the bit, and a summary row a table counting every part's pairs there (a pair of two tables counted
    once, at its first); one night of 3 tables whose accounts (and the planted pair) sit at two tables, at the
    screen and every pair listed."""
    night = _night(seed, planted)
    settings_ = {**OPPOSITE_BETTING.settings, "alpha": alpha, "screen_p": screen}
    per_table = [OPPOSITE_BETTING.features(t) for t in night]
    features = pa.concat_tables(per_table)
    whole = OPPOSITE_BETTING.tests(features, settings_)
    parts = _parts([t.table["table_id"] for t in night], per_table)
    assert sum(p.num_rows for p in parts) == features.num_rows and len(parts) >= 2
    pairs = [set(zip(p["account_a"].to_pylist(), p["account_b"].to_pylist(), strict=True)) for p in parts]
    assert sum(len(p) for p in pairs) == len(set().union(*pairs))  # no pair in two parts...
    at_tables = features.group_by(["account_a", "account_b"]).aggregate([("table_id", "count_distinct")])
    assert max(at_tables["table_id_count_distinct"].to_pylist()) >= 2  # ... though pairs sit at two tables
    by_part = list(OPPOSITE_BETTING.tests_by_part(iter(parts), settings_))
    assert _by_sort_keys(pa.concat_tables(by_part)).equals(_by_sort_keys(whole))
    summaries = as_rows(by_part[-1])  # last, once every part is counted: a row a table
    assert [r.subject for r in summaries] == sorted(t.table["table_id"] for t in night)
    assert all("|" in r.subject for t in by_part[:-1] for r in as_rows(t))
    assert sum(r.unlisted for r in summaries) + sum(r.tested for t in by_part[:-1] for r in as_rows(t)) == sum(
        1 for _ in _old_opposite_betting(features, OPPOSITE_BETTING.settings["min_shared_rounds"]))


