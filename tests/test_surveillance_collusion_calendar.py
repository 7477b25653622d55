"""shared_rounds' windows respect the calendar (issue 43 § 2): one window per pair, table and business day (a
round's day: the UTC date its betting opened), the days' counts summed into one exact test per pair and table.
Against hand-worked windows across days, the day boundary to the microsecond, an independent re-computation of
every pair's windows and p-value in plain Python and scipy on multi-day floors, and clean multi-day floors of the
power bench's ordinary bettors (the false-flag rate at or below the nominal level)."""

from __future__ import annotations

import datetime as dt
from fractions import Fraction
from math import comb

import numpy as np
import pyarrow as pa
import pytest
import scipy.stats as sps

from bench.surveillance_calendar import clean_floor, false_flags
from engine.surveillance import collusion
from engine.surveillance.collusion import (
    SHARED_DAYS_METHOD,
    SHARED_METHOD,
    SHOE_STAGES,
    shared_rounds_features,
    shared_rounds_p_values,
    shared_rounds_tests,
)
from engine.surveillance.detector import TableData
from engine.surveillance.tests import as_rows
from pipelines.surveillance import _schemas, table_data

EVERY_PAIR = {"screen_p": 1.0, "min_window_rounds": 2}
DAY1 = np.datetime64("2026-11-28", "D")
EMPTY = pa.table({"x": pa.array([], pa.int8())})


def _table(plays: dict[str, dict[int, list[int]]], rounds_a_day: int = 10,
           days: tuple[int, ...] = (0, 1, 2, 3)) -> TableData:
    """A baccarat table of `rounds_a_day` rounds on each of `days` (offsets from DAY1), rounds r<day>-<nn> with
    nn from 1; `plays[account][day]` the rounds the account bet on that day (PLAYER 10.00 each)."""
    ids, dates, closed = [], [], []
    for d in days:
        for r in range(1, rounds_a_day + 1):
            ids.append(f"r{d}-{r:02d}")
            dates.append(DAY1 + d)
            closed.append(np.datetime64(DAY1 + d, "us") + np.timedelta64(18, "h") + r * np.timedelta64(40, "s"))
    bets = [(f"r{d}-{r:02d}", acct) for acct, by_day in plays.items() for d, rs in by_day.items() for r in rs]
    rounds = pa.table({"round_id": ids, "business_date": np.array(dates), "betting_closed_at": np.array(closed),
                       "status": ["settled"] * len(ids)})
    n = len(bets)
    bet_table = pa.table({"bet_id": [f"b{i}" for i in range(n)], "round_id": [b[0] for b in bets],
                          "account_id": [b[1] for b in bets], "bet_type": ["PLAYER"] * n,
                          "stake": pa.array([1000] * n, pa.int64()), "paid": pa.array([0] * n, pa.int64()),
                          "table_id": ["T01"] * n})
    return TableData({"table_id": "T01", "game": "baccarat", "ruleset": "-", "currency": "EUR"}, EMPTY, rounds,
                     bet_table, EMPTY, EMPTY)


def _truncated(w: int, a: int, b: int) -> dict[int, Fraction]:
    """P(S = k | S >= 1) for S ~ Hypergeometric(w, a, b), exact fractions."""
    pmf = {k: Fraction(comb(a, k) * comb(w - a, b - k), comb(w, b)) for k in range(1, min(a, b) + 1)}
    total = sum(pmf.values())
    return {k: v / total for k, v in pmf.items()}


# Day 0 (2026-11-28): A bets 2, 4, 6, 8; B 1, 4, 6, 8, 10: window 3-7 (5 rounds), A 2 (4, 6), B 2 (4, 6), shared 2.
# Day 3 (2026-12-01): A bets 1, 3, 5, 7, 9; B 1, 2, 3, 5, 9: window 2-8 (7 rounds), A 3 (3, 5, 7), B 3 (2, 3, 5),
# shared 2 (3, 5). Days 1 and 2: C and D play, A and B do not.
TWO_DAYS = {"A": {0: [2, 4, 6, 8], 3: [1, 3, 5, 7, 9]}, "B": {0: [1, 4, 6, 8, 10], 3: [1, 2, 3, 5, 9]},
            "C": {1: [1, 2, 3, 4, 5], 2: [2, 3]}, "D": {1: [3, 4, 5, 6], 2: [1, 2, 3]}}


def test_a_pair_on_two_days_has_a_window_each_and_the_days_between_count_nothing():
    f = shared_rounds_features(_table(TWO_DAYS))
    ab = sorted((r for r in f.to_pylist() if (r["account_a"], r["account_b"]) == ("A", "B")),
                key=lambda r: r["first_date"])
    got = [(r["first_date"], r["last_date"], r["window"], r["rounds_a"], r["rounds_b"], r["shared_window"],
            r["window_effective"], r["shared"], r["stake_a"]) for r in ab]
    d0, d3 = dt.date(2026, 11, 28), dt.date(2026, 12, 1)
    # day 0 shares 4, 6, 8 (3, of which 8 is the window's end); day 3 shares 1, 3, 5, 9 (1 and 9 the ends)
    assert got == [(d0, d0, 5, 2, 2, 2, 5, 3, 3000), (d3, d3, 7, 3, 3, 2, 7, 4, 4000)]
    # one window across the run (before) would have counted the 20 rounds of days 1 and 2 in it


def test_the_days_combined_equal_the_convolution_of_each_days_test():
    # day 0: P(S0 = 1) = 6/7, P(S0 = 2) = 1/7 (window 5, 2 and 2); day 3: P(S3 = 1, 2, 3) = 18/31, 12/31, 1/31
    # (window 7, 3 and 3). Observed 2 + 2 = 4: P(S0 + S3 >= 4) = 6/7 x 1/31 + 1/7 x 13/31 = 19/217.
    d0, d3 = _truncated(5, 2, 2), _truncated(7, 3, 3)
    assert (d0, d3) == ({1: Fraction(6, 7), 2: Fraction(1, 7)},
                        {1: Fraction(18, 31), 2: Fraction(12, 31), 3: Fraction(1, 31)})
    want = sum(p0 * p3 for k0, p0 in d0.items() for k3, p3 in d3.items() if k0 + k3 >= 4)
    assert want == Fraction(19, 217)
    (t,) = [t for t in as_rows(shared_rounds_tests(shared_rounds_features(_table(TWO_DAYS)), EVERY_PAIR))
            if t.subject == "A|B"]
    assert t.p_value == pytest.approx(float(want), rel=1e-12)
    assert (t.value, t.sample, t.period, t.method) == (4.0, 5, "2026-11-28..2026-12-01", SHARED_DAYS_METHOD)
    assert t.statistic == "shared = 4 of 5 and 5 in 12 rounds (chance 2.09) over 2 days"  # 2 x 2 / 5 + 3 x 3 / 7
    assert t.detail.startswith("accounts A and B bet the same 4 rounds of their 5 and 5 at T01 "
                               "(2026-11-28..2026-12-01, 2 business days, a window each), within the 12 rounds")
    assert t.money == 7000 + 7000
    # each day alone is the one-day test: day 0's p is 1/7 (the hand-worked table of test_surveillance_collusion)
    only_day0 = {"A": {0: TWO_DAYS["A"][0]}, "B": {0: TWO_DAYS["B"][0]}}
    (t0,) = [t for t in as_rows(shared_rounds_tests(shared_rounds_features(_table(only_day0)), EVERY_PAIR))
             if t.subject == "A|B"]
    assert (t0.p_value, t0.period, t0.method) == (pytest.approx(1 / 7, rel=1e-12), "2026-11-28", SHARED_METHOD)
    assert "over" not in t0.statistic and "business days" not in t0.detail


def test_a_day_without_a_shared_round_inside_its_window_is_left_out():
    # day 3: A and B share only the window's ends (1 and 9): no row for it, the test is day 0's alone
    plays = {"A": {0: TWO_DAYS["A"][0], 3: [1, 3, 9]}, "B": {0: TWO_DAYS["B"][0], 3: [1, 5, 9]}}
    f = shared_rounds_features(_table(plays))
    assert [r["first_date"] for r in f.to_pylist()] == [dt.date(2026, 11, 28)]
    (t,) = as_rows(shared_rounds_tests(f, EVERY_PAIR))[:1]
    assert (t.p_value, t.period) == (pytest.approx(1 / 7, rel=1e-12), "2026-11-28")


def _pipeline_rounds(opened: list[dt.datetime]) -> pa.Table:
    """The rounds of one table as the surveillance pipeline hands them to the detectors (table_data), from input
    rows with only these betting_opened_at set."""
    schemas = _schemas()

    def rows(name: str, n: int, **cols) -> pa.Table:
        return pa.table({f.name: pa.array(cols[f.name], f.type) if f.name in cols else pa.nulls(n, f.type)
                         for f in schemas[name]}, schema=schemas[name])

    n = len(opened)
    parts = {"tables": [rows("tables", 1, table_id=["T01"], game=["baccarat"], ruleset=["baccarat_8d"],
                             currency=["EUR"], _source_file=["t"], _source_row=[0])],
             "rounds": [rows("rounds", n, round_id=[f"r{i + 1}" for i in range(n)], table_id=["T01"] * n,
                             betting_opened_at=opened, betting_closed_at=[o + dt.timedelta(seconds=20) for o in opened],
                             status=["settled"] * n, _source_file=["r"] * n, _source_row=list(range(n)))]}
    return table_data("T01", parts).rounds


def test_the_day_boundary_is_the_utc_date_betting_opened_to_the_microsecond():
    utc = dt.UTC
    day2 = dt.datetime(2026, 11, 29, tzinfo=utc)
    # r3 opens at 23:59:59.999999 (day 1, closing after midnight), r4 at 00:00:00 (day 2)
    minutes = dt.timedelta(minutes=1)
    opened = [day2 - 10 * minutes, day2 - 5 * minutes, day2 - dt.timedelta(microseconds=1), day2, day2 + 5 * minutes,
              day2 + 10 * minutes]
    rounds = _pipeline_rounds(opened)
    assert rounds["business_date"].to_pylist() == [dt.date(2026, 11, 28)] * 3 + [dt.date(2026, 11, 29)] * 3
    # A and B bet every round: day 1's window is r2 (between r1 and r3), day 2's r5. Were r3 on day 2, day 1 would
    # have no window and day 2 two rounds; were r4 on day 1, day 1 would have two rounds and day 2 none.
    n = 12
    bets = pa.table({"bet_id": [f"b{i}" for i in range(n)], "round_id": [f"r{i % 6 + 1}" for i in range(n)],
                     "account_id": ["A"] * 6 + ["B"] * 6, "bet_type": ["PLAYER"] * n,
                     "stake": pa.array([1000] * n, pa.int64()), "paid": pa.array([0] * n, pa.int64())})
    table = TableData({"table_id": "T01", "game": "baccarat", "ruleset": "-", "currency": "EUR"}, EMPTY, rounds,
                      bets, EMPTY, EMPTY)
    f = shared_rounds_features(table).sort_by("first_date").to_pylist()
    assert [(r["first_date"], r["window"], r["shared_window"]) for r in f] == [
        (dt.date(2026, 11, 28), 1, 1), (dt.date(2026, 11, 29), 1, 1)]
    # the same without business_date: the detector reads the UTC date of betting_opened_at itself
    g = shared_rounds_features(TableData(table.table, EMPTY, rounds.drop_columns(["business_date"]), bets, EMPTY,
                                         EMPTY)).sort_by("first_date").to_pylist()
    assert g == f


def _oracle(table: TableData) -> dict[str, float]:
    """Every pair's p-value, re-done one pair and day at a time in plain Python from the rows (windows, the even
    crowd, the stages of the shoe) and scipy (each day's truncated hypergeometric, their convolution): 'A|B' -> p."""
    rounds = table.rounds.to_pylist()
    order = sorted(range(len(rounds)), key=lambda i: (rounds[i]["business_date"], rounds[i]["betting_closed_at"],
                                                      rounds[i]["round_id"]))
    pos = {rounds[i]["round_id"]: k for k, i in enumerate(order)}
    day = [rounds[i]["business_date"] for i in order]
    shoe_of = [rounds[i]["shoe_id"] for i in order]
    stage = [0] * len(order)
    for shoe in set(shoe_of):
        mine = [r for r in range(len(order)) if shoe_of[r] == shoe]
        for rank, r in enumerate(mine):
            stage[r] = rank * SHOE_STAGES // len(mine)
    plays: dict[str, set[int]] = {}
    for b in table.bets.select(["round_id", "account_id"]).to_pylist():
        plays.setdefault(b["account_id"], set()).add(pos[b["round_id"]])
    crowd = [0] * len(order)
    for rs in plays.values():
        for r in rs:
            crowd[r] += 1
    out = {}
    names = sorted(plays)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            dists = []
            s_total = 0
            for d in sorted({day[r] for r in plays[a]} & {day[r] for r in plays[b]}):
                ra_, rb_ = sorted(r for r in plays[a] if day[r] == d), sorted(r for r in plays[b] if day[r] == d)
                lo, hi = max(ra_[0], rb_[0]), min(ra_[-1], rb_[-1])
                inner = range(lo + 1, hi)
                xa, xb = {r for r in ra_ if lo < r < hi}, {r for r in rb_ if lo < r < hi}
                s = len(xa & xb)
                if s == 0:
                    continue
                others = [crowd[r] - (r in xa) - (r in xb) for r in inner]
                pairs = sum(o * (o - 1) for o in others)
                even = sum(others) ** 2 / pairs if pairs else float("inf")
                chance = 0.0
                for k in range(SHOE_STAGES):
                    w_k = sum(1 for r in inner if stage[r] == k)
                    if w_k:
                        chance += sum(stage[r] == k for r in xa) * sum(stage[r] == k for r in xb) / w_k
                staged = len(xa) * len(xb) / chance
                w = max(min(len(inner), int(np.floor(min(even, staged, len(inner))))), len(xa), len(xb))
                k = np.arange(min(len(xa), len(xb)) + 1)
                pmf = sps.hypergeom.pmf(k, w, len(xa), len(xb))
                pmf[0] = 0.0
                dists.append(pmf / pmf.sum())
                s_total += s
            if dists:
                dist = dists[0]
                for p in dists[1:]:
                    dist = np.convolve(dist, p)
                out[f"{a}|{b}"] = float(dist[s_total:].sum())
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_every_pair_of_a_multi_day_floor_against_an_independent_computation(seed):
    (table,) = clean_floor(np.random.default_rng(seed), tables=1, days=4, rounds=120, sessions=14, accounts=24)
    want = _oracle(table)
    rows = [t for t in as_rows(shared_rounds_tests(shared_rounds_features(table),
                                                   {"screen_p": 1.0, "min_window_rounds": 0})) if "|" in t.subject]
    got = {t.subject: t.p_value for t in rows}
    assert set(got) == set(want) and len(want) > 50
    assert sum(t.method == SHARED_DAYS_METHOD for t in rows) > 10  # pairs with windows on several days
    for k, p in want.items():
        assert got[k] == pytest.approx(p, rel=1e-9, abs=1e-15), k


def test_eight_clean_days_as_one_folder_flag_no_more_than_the_nominal_rate():
    # 6 floors of 2 tables x 8 days of the power bench's ordinary bettors, regulars returning across the days,
    # run as one folder: flags among all tests at most alpha's share of the floors (BH under the complete null:
    # P(any flag) <= alpha); the whole-run window (every round dated the same day) flags them by the dozen.
    got = false_flags(floors=6, seed=0)
    assert got["per_day"]["flags"] == 0 and got["per_day"]["tests"] > 15_000
    for level, key in ((0.01, "rate_p01"), (0.001, "rate_p001"), (0.0001, "rate_p0001")):
        assert got["per_day"][key] <= level, key  # the p-values are valid: P(p <= u) <= u
    assert got["whole_run"]["floors_flagged"] == 6 and got["whole_run"]["rate_p001"] > 0.1  # before: issue 43


def _shoe_table(plays: dict[str, list[int]], shoe_rounds: int = 20, with_shoes: bool = True) -> TableData:
    """One day of one shoe of `shoe_rounds` rounds r01 ..., `plays[account]` the rounds it bet on."""
    table = _table({acct: {0: rs} for acct, rs in plays.items()}, rounds_a_day=shoe_rounds, days=(0,))
    rounds = table.rounds.append_column("shoe_id", pa.array(["S1"] * shoe_rounds)) if with_shoes else table.rounds
    return TableData(table.table, EMPTY, rounds, table.bets, EMPTY, EMPTY)


def test_the_window_is_counted_in_the_stages_of_the_shoe_both_played():
    # one shoe of 20 rounds in tenths (SHOE_STAGES): r01-r02 stage 0, ..., r15-r16 7, r17-r18 8, r19-r20 9.
    # A bets r01, r15-r18, r20; B r01, r15, r17, r19, r20: window r02-r19 (18), A 4 (r15-r18), B 3 (r15, r17, r19),
    # shared 2. Stages in the window: 7 (w 2, A 2, B 1), 8 (2, 2, 1), 9 (r19 alone: 1, 0, 1): the chance of sharing
    # 2 x 1 / 2 + 2 x 1 / 2 = 2 rounds, the window as 4 x 3 / 2 = 6 rounds: P(S >= 2 | S >= 1) over 6, 4 and 3 =
    # (1 - 4/20) / 1 = 4/5 (S = 0 cannot be: 4 + 3 > 6). Without shoes: the 18 rounds, 88/452 = 22/113.
    plays = {"A": [1, 15, 16, 17, 18, 20], "B": [1, 15, 17, 19, 20]}
    assert SHOE_STAGES == 10
    for with_shoes, stages_window, p_value in ((True, 6, Fraction(4, 5)), (False, 18, Fraction(22, 113))):
        f = shared_rounds_features(_shoe_table(plays, with_shoes=with_shoes))
        (r,) = f.to_pylist()
        assert (r["window"], r["rounds_a"], r["rounds_b"], r["shared_window"], r["window_stages"],
                r["window_effective"]) == (18, 4, 3, 2, stages_window, stages_window)
        (t,) = as_rows(shared_rounds_tests(f, EVERY_PAIR))[:1]
        assert t.p_value == pytest.approx(float(p_value), rel=1e-12)
        assert ("(as 6 rounds of an even crowd and of the stages of the shoe both played)" in t.detail) == with_shoes
    # 19 rounds in the shoe: stage = rank x 10 // 19, r15 (rank 14) is stage 7, r16 (15) also 7, r17 (16) 8, r18 (17)
    # 8, r19 (18) 9: the same stages, the same window
    (r,) = shared_rounds_features(_shoe_table({"A": [1, 15, 16, 17, 18, 19], "B": [1, 15, 17, 19]},
                                              shoe_rounds=19)).to_pylist()
    # window r02-r18 (17): A 4, B 2 (r15, r17), shared 2; stages 7 (2, 2, 1), 8 (2, 2, 1): chance 2, 4 x 2 / 2 = 4
    assert (r["window"], r["rounds_a"], r["rounds_b"], r["window_stages"]) == (17, 4, 2, 4)


def test_late_shoe_bettors_are_not_paired_for_playing_the_same_end_of_the_shoe():
    # 6 late-shoe bettors (from 60% of each shoe on) among the ordinary ones, 2 tables x 8 days, run as one folder:
    # counted in the stages of the shoe, their pairs' p-values are valid and none is flagged; counted in the whole
    # window, they share the shoe's ends by the dozen (issue 43: paired falsely over 6-16 days)
    got = false_flags(floors=2, seed=0, windows=("per_day", "per_day_no_stages"), late_only=True, late=6)
    now, before = got["per_day"], got["per_day_no_stages"]
    assert now["flags"] == 0 and now["tests"] > 40 and now["rate_p01"] <= 0.01
    assert before["flags"] >= 10 and before["rate_p001"] > 0.2


def test_the_multi_day_pairs_in_chunks_give_the_same_p_values(monkeypatch):
    # the multi-day pairs' pmfs are computed PMF_CHUNK terms at a time: a chunk of one pair each, the same p-values
    (table,) = clean_floor(np.random.default_rng(3), tables=1, days=4, rounds=120, sessions=14, accounts=24)
    features = shared_rounds_features(table)
    whole = shared_rounds_p_values(features)
    monkeypatch.setattr(collusion, "PMF_CHUNK", 1)
    chunked = shared_rounds_p_values(features)
    assert (whole["days"] > 1).sum() > 10
    assert chunked["p"].tolist() == whole["p"].tolist()
