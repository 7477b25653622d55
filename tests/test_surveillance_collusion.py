"""Collusion detectors (engine/surveillance/collusion.py): opposite betting and shared rounds, against
hand-worked tables, a planted pair among random bettors, permutations of the bettors and row order."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from functools import cache
from math import comb

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.surveillance_power import LEVELS, bettors
from engine.games import game
from engine.surveillance.collusion import (
    OPPOSITE_BETTING,
    SHARED_ROUNDS,
    groups,
    opposite_betting_features,
    opposite_betting_tests,
    shared_rounds_features,
    shared_rounds_tests,
)
from engine.surveillance.detector import Detector, TableData
from engine.surveillance.tests import SurveillanceTest, adjust, as_rows

DAY = np.datetime64("2026-11-28T18:00:00", "us")


def _table(table_id: str, rounds: dict[str, np.ndarray], bets: dict[str, np.ndarray], game_name: str = "baccarat",
           currency: str = "EUR") -> TableData:
    """A TableData of numpy columns (only what the detectors read; shoes, findings, positions empty)."""
    n = len(rounds["round_id"])
    rounds = {"betting_closed_at": DAY + np.arange(n) * np.timedelta64(40, "s"),
              "business_date": np.full(n, np.datetime64("2026-11-28", "D")), "status": np.full(n, "settled"), **rounds}
    empty = pa.table({"x": pa.array([], pa.int8())})
    return TableData({"table_id": table_id, "game": game_name, "ruleset": "-", "currency": currency}, empty,
                     pa.table(rounds), pa.table({"table_id": np.full(len(bets["round_id"]), table_id), **bets}),
                     empty, empty)


def _bets(rows: list[tuple[str, str, str, int, int]]) -> dict[str, np.ndarray]:
    """(round_id, account_id, bet_type, stake, paid) rows as columns."""
    cols = list(zip(*rows, strict=True))
    return {"bet_id": np.array([f"b{i}" for i in range(len(rows))]), "round_id": np.array(cols[0]),
            "account_id": np.array(cols[1]), "bet_type": np.array(cols[2]),
            "stake": np.array(cols[3], dtype=np.int64), "paid": np.array(cols[4], dtype=np.int64)}


def _run(detector: Detector, tables: list[TableData], **settings_) -> list:
    features = pa.concat_tables([detector.features(t) for t in tables])
    return adjust(detector.tests(features, {**detector.settings, **settings_}))


def _pairs(tests) -> list[SurveillanceTest]:
    """The pair rows of a pair detector's tests (its per-table summary rows left out)."""
    return [t for t in as_rows(tests) if "|" in t.subject]


def _m(rows: list[SurveillanceTest]) -> int:
    """The tests a detector ran: its tested rows and the pairs its summary rows count unlisted."""
    return sum(r.tested for r in rows) + sum(r.unlisted for r in rows)


EVERY_PAIR = {"screen_p": 1.0}  # a screen every p-value passes: every pair listed, as before the screen


# ---------------------------------------------------------------------------------------------------
# hand-worked tables


def _hand_table() -> TableData:
    # r1 PLAYER wins: A PLAYER 10.00 (+10.00), B BANKER 10.00 (-10.00): opposite-matched, 10.00 to A
    # r2 PLAYER wins: A BANKER 20.00 (-20.00), B PLAYER 19.00 (+19.00): |1.00| <= 10% of 20.00, matched, 19.00 to B
    # r3 BANKER wins: A PLAYER 10.00, B BANKER 8.00 (2.00 > 10% of 10.00: not matched), C BANKER 10.00 (A-C matched)
    # r4 tie: A PLAYER, B PLAYER (same side); D 10.00 each way (nets to nothing: no position)
    # r5 cancelled: A and B opposite-matched, ignored; A's TIE and C's PLAYER_PAIR are not opposite bets
    rows = [("r1", "A", "PLAYER", 1000, 2000), ("r1", "B", "BANKER", 1000, 0), ("r1", "C", "PLAYER", 500, 1000),
            ("r1", "A", "TIE", 100, 0),
            ("r2", "A", "BANKER", 2000, 0), ("r2", "B", "PLAYER", 1900, 3800),
            ("r3", "A", "PLAYER", 1000, 0), ("r3", "B", "BANKER", 800, 1560), ("r3", "C", "BANKER", 1000, 1950),
            ("r3", "C", "PLAYER_PAIR", 100, 0),
            ("r4", "A", "PLAYER", 1000, 1000), ("r4", "B", "PLAYER", 1000, 1000),
            ("r4", "D", "PLAYER", 1000, 1000), ("r4", "D", "BANKER", 1000, 1000),
            ("r5", "A", "PLAYER", 5000, 5000), ("r5", "B", "BANKER", 5000, 5000)]
    rounds = {"round_id": np.array(["r1", "r2", "r3", "r4", "r5"]),
              "status": np.array(["settled"] * 4 + ["cancelled"])}
    return _table("T02", rounds, _bets(rows))


def test_opposite_betting_hand_worked_table():
    f = opposite_betting_features(_hand_table()).to_pylist()
    by_pair = {(r["account_a"], r["account_b"]): r for r in f}
    assert set(by_pair) == {("A", "B"), ("A", "C"), ("B", "C")}  # D holds no position; r5 is cancelled
    # positions: A = P10, B20, P10, P10 (4); B = B10, P19, B8, P10 (4); C = P5, B10 (2)
    # A-B: A's three P10 each match B's B10 (3), A's B20 matches B's P19 (1): chance 4 / 16 a shared round
    ab = by_pair[("A", "B")]
    assert (ab["shared"], ab["matched"], ab["expected"]) == (4, 2, pytest.approx(4 * 4 / 16))
    assert ab["matched_stake"] == 1000 + 1900 and ab["transfer"] == 1000 - 1900  # A won 10.00, then B won 19.00
    # A-C: shared r1, r3; A's P10 (x3) match C's B10: chance 3 / 8; matched r3 only
    ac = by_pair[("A", "C")]
    assert (ac["shared"], ac["matched"], ac["expected"], ac["matched_stake"]) == (2, 1, pytest.approx(2 * 3 / 8), 1000)
    assert ac["transfer"] == -950  # r3: A lost 10.00, C won 9.50 (0.95:1): 9.50 went to C, 0.50 to the house
    # B-C: shared r1, r3, neither matched (P5 vs B10; both BANKER); only B's P10 matches C's B10: chance 1 / 8
    bc = by_pair[("B", "C")]
    assert (bc["shared"], bc["matched"], bc["expected"], bc["transfer"]) == (2, 0, pytest.approx(2 / 8), 0)

    tests = {t.subject: t for t in _pairs(opposite_betting_tests(opposite_betting_features(_hand_table()),
                                                                 {"min_shared_rounds": 2, **EVERY_PAIR}))}
    # P(X >= 2), X ~ Bin(4, 1/4) = 1 - (3/4)^4 - 4 (1/4)(3/4)^3 = 67/256; P(X >= 1), X ~ Bin(2, 3/8) = 1 - (5/8)^2
    assert tests["A|B"].p_value == pytest.approx(67 / 256, rel=1e-12)
    assert tests["A|C"].p_value == pytest.approx(1 - (5 / 8) ** 2, rel=1e-12)
    assert tests["B|C"].p_value == pytest.approx(1.0)
    ab = tests["A|B"]
    assert (ab.sample, ab.value, ab.money, ab.effect, ab.period) == (4, 2.0, 2900, pytest.approx(2 / 4 - 1 / 4),
                                                                     "2026-11-28")
    assert ab.detail == ("accounts A and B took opposite sides with matched stakes (within 10%) on 2 of 4 shared "
                         "rounds at T02 (2026-11-28), chance 1.0: 29.00 EUR each way, net 9.00 EUR from A to B")


def test_opposite_betting_rows_name_their_currency():
    # the hand-worked table at an EUR table and again at a USD one: each pair is tested per currency, a row each with
    # its currency (the same 4 shared rounds each, not 8 summed); the summary rows (a table each) and shared_rounds'
    # rows (per pair and table, not per currency) have none
    usd = _hand_table()
    usd = replace(usd, table={**usd.table, "table_id": "T03", "currency": "USD"},
                  bets=usd.bets.set_column(0, "table_id", pa.array(["T03"] * usd.bets.num_rows)))
    tables = [_hand_table(), usd]
    rows = as_rows(opposite_betting_tests(pa.concat_tables([opposite_betting_features(t) for t in tables]),
                                          {"min_shared_rounds": 2, **EVERY_PAIR}))
    pairs = sorted((t.subject, t.currency, t.sample, t.money) for t in rows if "|" in t.subject)
    assert [p for p in pairs if p[0] == "A|B"] == [("A|B", "EUR", 4, 2900), ("A|B", "USD", 4, 2900)]
    assert {p[1] for p in pairs} == {"EUR", "USD"} and len(pairs) == 6
    assert [(t.subject, t.currency) for t in rows if "|" not in t.subject] == [("T02", None), ("T03", None)]
    shared = as_rows(shared_rounds_tests(pa.concat_tables([shared_rounds_features(t) for t in tables]), EVERY_PAIR))
    assert shared and {t.currency for t in shared} == {None}


def test_opposite_betting_tolerance_is_exact_on_minor_units():
    # 10% of the larger: 1000 vs 900 matches (100 <= 100), 1000 vs 899 does not (101 > 100); 1000 vs 1111 matches
    # (111 <= 111.1), 1000 vs 1112 does not (112 > 111.2)
    rows = []
    for i, (other, _) in enumerate([(900, True), (899, False), (1111, True), (1112, False)]):
        rows += [(f"r{i}", f"A{i}", "PLAYER", 1000, 0), (f"r{i}", f"B{i}", "BANKER", other, 0)]
    rounds = {"round_id": np.array([f"r{i}" for i in range(4)])}
    f = opposite_betting_features(_table("T01", rounds, _bets(rows)), tolerance=Fraction(1, 10)).to_pylist()
    assert {r["account_a"]: r["matched"] for r in f} == {"A0": 1, "A1": 0, "A2": 1, "A3": 0}


def test_opposite_pairs_are_each_games_knowledge():
    assert game("baccarat").opposite_bets == (("PLAYER", "BANKER"),)
    assert game("roulette").opposite_bets == (("RED", "BLACK"), ("ODD", "EVEN"), ("LOW", "HIGH"))
    assert game("sic_bo").opposite_bets == (("SMALL", "BIG"), ("ODD", "EVEN"))
    assert game("blackjack").opposite_bets == () and game("casino_stud").opposite_bets == ()
    assert OPPOSITE_BETTING.games == ("baccarat", "roulette", "sic_bo") and SHARED_ROUNDS.games == ()
    for name in OPPOSITE_BETTING.games:  # every opposite code is a bet code of its game
        assert {c for pair in game(name).opposite_bets for c in pair} <= set(game(name).bet_codes)


def test_opposite_betting_counts_a_roulette_round_once_per_opposite_pair():
    # one spin, pocket 0: A RED and ODD, B BLACK and EVEN, matched both: two shared, two matched; both lose to zero
    rows = [("s1", "A", "RED", 1000, 0), ("s1", "B", "BLACK", 1000, 0), ("s1", "A", "ODD", 500, 0),
            ("s1", "B", "EVEN", 500, 0), ("s1", "B", "STRAIGHT", 100, 0)]
    f = opposite_betting_features(_table("R1", {"round_id": np.array(["s1"])}, _bets(rows), "roulette")).to_pylist()
    assert [(r["shared"], r["matched"], r["matched_stake"], r["transfer"]) for r in f] == [(2, 2, 1500, 0)]


def test_shared_rounds_hand_worked_table():
    # 10 rounds; A bets rounds 2, 4, 6, 8; B bets 1, 4, 6, 8, 10. Window: after round 2 (A's first, the later
    # first) and before round 8 (A's last): rounds 3-7, 5 rounds; A bet 2 of them (4, 6), B 2 (4, 6), shared 2.
    # P(S >= 2 | S >= 1) = P(S = 2) / (1 - P(S = 0)) = (1 / C(5,2)) / (1 - C(3,2) / C(5,2)) = (1/10) / (7/10) = 1/7
    plays = {"A": [2, 4, 6, 8], "B": [1, 4, 6, 8, 10], "C": [9]}
    rows = [(f"r{r:02d}", acct, "PLAYER", 1000 if acct == "A" else 500, 0) for acct, rs in plays.items() for r in rs]
    rounds = {"round_id": np.array([f"r{r:02d}" for r in range(1, 11)])}
    f = shared_rounds_features(_table("T03", rounds, _bets(rows))).to_pylist()
    assert len(f) == 1  # B-C share round 9? no: C bet 9 only, B did not; A-C share nothing
    r = f[0]
    assert (r["account_a"], r["account_b"], r["shared"], r["window"], r["rounds_a"], r["rounds_b"],
            r["shared_window"], r["stake_a"], r["stake_b"]) == ("A", "B", 3, 5, 2, 2, 2, 3000, 1500)
    (t,) = _pairs(shared_rounds_tests(shared_rounds_features(_table("T03", rounds, _bets(rows))),
                                      {"min_window_rounds": 2, **EVERY_PAIR}))
    assert t.p_value == pytest.approx(1 / 7, rel=1e-12) and t.subject == "A|B" and t.sample == 2
    assert t.effect == pytest.approx(2 / (2 * 2 / 5)) and t.money == 4500
    assert t.detail == ("accounts A and B bet the same 2 rounds of their 2 and 2 at T03 (2026-11-28), within the "
                        "5 rounds both were playing, chance 0.8: 45.00 EUR staked together")


@pytest.mark.parametrize("others, effective, p_value, note", [
    # C and D bet rounds 3 and 5 of the window (3-7): others d = 2, 0, 2, 0, 0; (sum d)^2 / sum d (d - 1) =
    # 16 / 4 = 4 rounds of an even crowd. P(S >= 2 | S >= 1) over 4 rounds, 2 and 2 drawn: (1/6) / (1 - 1/6)
    ({"C": [3, 5], "D": [3, 5]}, 4, Fraction(1, 5), " (as 4 rounds of an even crowd), chance 1.0"),
    # counting the pair in the crowd would give c = 2, 2, 2, 2, 0: 64 / 8 = 8, the window (5) kept: not so
    # one other account in every round of the window: d = 1, sum d (d - 1) = 0: the window itself, as above
    ({"C": [3, 4, 5, 6, 7]}, 5, Fraction(1, 7), ", chance 0.8"),
])
def test_shared_rounds_weigh_busy_rounds(others, effective, p_value, note):
    plays = {"A": [2, 4, 6, 8], "B": [1, 4, 6, 8, 10], **others}
    rows = [(f"r{r:02d}", acct, "PLAYER", 1000, 0) for acct, rs in plays.items() for r in rs]
    rounds = {"round_id": np.array([f"r{r:02d}" for r in range(1, 11)])}
    features = shared_rounds_features(_table("T03", rounds, _bets(rows)))
    (r,) = [r for r in features.to_pylist() if (r["account_a"], r["account_b"]) == ("A", "B")]
    assert (r["window"], r["shared_window"], r["window_effective"]) == (5, 2, effective)
    (t,) = [t for t in _pairs(shared_rounds_tests(features, {"min_window_rounds": 2, **EVERY_PAIR}))
            if t.subject == "A|B"]
    assert t.p_value == pytest.approx(float(p_value), rel=1e-12)
    assert f"within the 5 rounds both were playing{note}:" in t.detail


def test_shared_rounds_null_holds_on_a_crowd_that_varies():
    # Independent accounts (activity weights), a negative binomial number of visits a round (shape 2, mean 3:
    # some rounds draw a crowd): the plain window's hypergeometric gives far more p < 0.01 than 1% (two
    # accounts meet more in the busy rounds), the even-crowd window no more.
    rng = np.random.default_rng(5)
    n_rounds, n_acct = 3000, 150
    weight = rng.lognormal(0.0, 1.0, n_acct)
    visits = rng.negative_binomial(2, 2 / (2 + 3.0), n_rounds)
    rnd = np.repeat(np.arange(n_rounds), visits)
    acct = rng.choice(n_acct, rnd.size, p=weight / weight.sum())
    key = np.unique(rnd * n_acct + acct)
    rows = [(f"r{k // n_acct:05d}", f"A{k % n_acct:03d}", "PLAYER", 1000, 0) for k in key.tolist()]
    rounds = {"round_id": np.array([f"r{r:05d}" for r in range(n_rounds)])}
    features = shared_rounds_features(_table("T01", rounds, _bets(rows)))
    plain = features.set_column(features.schema.get_field_index("window_effective"), "window_effective",
                                features["window"])
    rate = {}
    for name, f in (("even", features), ("plain", plain)):
        p = np.array([t.p_value for t in _pairs(shared_rounds_tests(f, EVERY_PAIR)) if t.p_value is not None])
        rate[name] = (p < 0.01).mean()
        assert p.size > 2000
    assert rate["plain"] > 0.015 and rate["even"] <= 0.01, rate


def test_overlapping_sessions_are_not_shared_rounds():
    # A bets every round 1-60, B every round 31-90: they share 30 rounds, all of their joint window, by necessity
    rows = [(f"r{r:03d}", "A", "BANKER", 1000, 0) for r in range(1, 61)]
    rows += [(f"r{r:03d}", "B", "PLAYER", 1000, 0) for r in range(31, 91)]
    rounds = {"round_id": np.array([f"r{r:03d}" for r in range(1, 101)])}
    features = shared_rounds_features(_table("T04", rounds, _bets(rows)))
    (t,) = _pairs(shared_rounds_tests(features, EVERY_PAIR))
    assert (t.sample, t.value, t.p_value) == (28, 28.0, pytest.approx(1.0))
    # at the default screen (0.05) the pair is not listed: its table's summary row counts it
    (summary,) = as_rows(shared_rounds_tests(features, SHARED_ROUNDS.settings))
    assert (summary.subject, summary.statistic, summary.sample, summary.unlisted) == ("T04", "pairs tested = 1", 1, 1)
    assert summary.p_value is None and not summary.tested


# ---------------------------------------------------------------------------------------------------
# a night of random bettors with a planted pair



def baccarat_night(n_tables: int = 4, n_rounds: int = 400, sessions_per_table: int = 60, n_accounts: int = 200,
                   seed: int = 1, planted: int = 0, planted_rate: float = 0.6, planted_rounds: int = 200,
                   planted_tables: int = 1) -> list[TableData]:
    """Baccarat tables of random, independent bettors: each session an account (distinct per table) that bets
    a random share of the rounds of a stretch of the table, PLAYER or BANKER at its own odds, a stake near its
    own chip level, sometimes a TIE beside it. `planted` rounds long: accounts P1 and P2 at the first
    `planted_tables` tables bet the same rounds (each round of their stretch at `planted_rate`), opposite
    sides, P2's stake within 5% of P1's (stakes over every level)."""
    rng = np.random.default_rng(seed)
    tables = []
    for t in range(n_tables):
        tid = f"T{t + 1:02d}"
        round_ids = np.array([f"{tid}-{i:06d}" for i in range(n_rounds)])
        outcome = rng.choice(np.array(["PLAYER", "BANKER", "TIE"]), n_rounds, p=[0.446, 0.458, 0.096])
        r_all, a_all, t_all, s_all = bettors(rng, t, n_rounds, sessions_per_table, n_accounts)
        if planted and t < planted_tables:
            p_start = rng.integers(0, n_rounds - planted_rounds + 1)
            p_rnd = p_start + np.flatnonzero(rng.random(planted_rounds) < planted_rate)
            p_side = rng.random(p_rnd.size) < 0.5
            p_stake = rng.choice(LEVELS, p_rnd.size)
            p2_stake = (p_stake * rng.uniform(0.95, 1.0, p_rnd.size)).astype(np.int64)
            r_all = np.r_[r_all, p_rnd, p_rnd]
            a_all = np.r_[a_all, np.full(p_rnd.size, "P1"), np.full(p_rnd.size, "P2")]
            t_all = np.r_[t_all, np.where(p_side, "PLAYER", "BANKER"), np.where(p_side, "BANKER", "PLAYER")]
            s_all = np.r_[s_all, p_stake, p2_stake]
        out = outcome[r_all]
        paid = np.select([t_all == "TIE", out == "TIE", t_all != out, t_all == "PLAYER"],
                         [np.where(out == "TIE", 9 * s_all, 0), s_all, 0, 2 * s_all], s_all + s_all * 95 // 100)
        order = rng.permutation(r_all.size)
        bets = {"bet_id": np.array([f"{tid}-b{i}" for i in range(r_all.size)]), "round_id": round_ids[r_all][order],
                "account_id": a_all[order], "bet_type": t_all[order], "stake": s_all[order].astype(np.int64),
                "paid": paid[order].astype(np.int64)}
        tables.append(_table(tid, {"round_id": round_ids}, bets))
    return tables


@cache
def _night(planted: int, **kw) -> tuple[TableData, ...]:
    return tuple(baccarat_night(planted=planted, **kw))


def _flagged(tests) -> set[str]:
    return {t.subject for t in tests if t.flagged}


def test_a_planted_pair_is_flagged_and_no_other():
    night = list(_night(1))
    opposite = _run(OPPOSITE_BETTING, night)
    assert _flagged(opposite) == {"P1|P2"}
    (t,) = [t for t in opposite if t.subject == "P1|P2"]
    assert t.p_value < 1e-20 and t.value / t.sample > 0.9 and t.money > 0
    assert t.detail.startswith(f"accounts P1 and P2 took opposite sides with matched stakes (within 10%) on "
                               f"{int(t.value)} of {t.sample} shared rounds at T01 (2026-11-28)")
    assert _m(opposite) > 100  # many random pairs tested, none flagged
    shared = _run(SHARED_ROUNDS, night)
    assert _flagged(shared) == {"P1|P2"} and _m(shared) > 100
    assert groups(opposite + shared) == [("P1", "P2")]


def test_a_clean_night_flags_nothing():
    night = list(_night(0))
    assert _flagged(_run(OPPOSITE_BETTING, night)) == set() and _flagged(_run(SHARED_ROUNDS, night)) == set()


def test_a_pair_across_tables_is_one_test_summed_over_them():
    night = list(_night(1, planted_tables=3, planted_rounds=60, seed=5))
    (t,) = [t for t in _run(OPPOSITE_BETTING, night) if t.subject == "P1|P2"]
    assert t.flagged and "at T01, T02, T03 (2026-11-28)" in t.detail and t.sample > 60


def test_a_pair_below_min_sample_is_never_flagged():
    # a perfect hedge on 12 shared rounds: far past chance, but below the 20 the test needs
    night = list(_night(1, planted_rounds=20, seed=7))
    (t,) = [t for t in _run(OPPOSITE_BETTING, night) if t.subject == "P1|P2"]
    assert t.sample < 20 and t.value == t.sample
    assert t.p_value is None and not t.flagged and t.q_value is None and "not tested" in t.detail
    # the same pair with the bar lowered is tested and flagged: the minimum alone held it back
    (low,) = [t for t in _run(OPPOSITE_BETTING, night, min_shared_rounds=5) if t.subject == "P1|P2"]
    assert low.flagged


def test_min_sample_holds_whatever_the_counts():
    night = list(_night(1, planted_rounds=20, seed=7))
    for detector, key in ((OPPOSITE_BETTING, "min_shared_rounds"), (SHARED_ROUNDS, "min_window_rounds")):
        for t in _run(detector, night, **{key: 10_000}):
            assert not t.flagged and t.p_value is None and t.sample < 10_000


# ---------------------------------------------------------------------------------------------------
# properties: permuting bettors removes the signal; the order of rows changes nothing


def _shuffle_within_rounds(table: TableData, rng: np.random.Generator) -> TableData:
    """Account ids shuffled across the bets of each round (who bet what in a round, at random)."""
    bets = table.bets
    rounds = bets["round_id"].to_numpy(zero_copy_only=False)
    keyed = np.lexsort((rng.random(rounds.size), rounds))  # each round's bets in random order
    plain = np.argsort(rounds, kind="stable")  # each round's bets in row order
    accounts = bets["account_id"].to_numpy(zero_copy_only=False)
    shuffled = accounts.copy()
    shuffled[plain] = accounts[keyed]
    return replace(table, bets=bets.set_column(bets.schema.get_field_index("account_id"), "account_id",
                                               pa.array(shuffled)))


def _shuffle_across_table(table: TableData, rng: np.random.Generator) -> TableData:
    """Account ids shuffled across every bet of the table (each account keeps its number of bets)."""
    bets = table.bets
    accounts = bets["account_id"].to_numpy(zero_copy_only=False)
    return replace(table, bets=bets.set_column(bets.schema.get_field_index("account_id"), "account_id",
                                               pa.array(rng.permutation(accounts))))


# The two statistical properties below hold for all but a small share of draws (the tests run at a 1% false
# discovery rate, and shuffling a round of few bettors can hand the planted pair's mirrored bets to two others):
# the same examples on every run.
@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_shuffling_bettors_within_rounds_removes_opposite_betting(seed):
    rng = np.random.default_rng(seed)
    night = [_shuffle_within_rounds(t, rng) for t in _night(1)]
    assert _flagged(_run(OPPOSITE_BETTING, night)) == set()  # the planted pair's bets now land on random accounts
    clean = [_shuffle_within_rounds(t, rng) for t in _night(0)]
    assert _flagged(_run(OPPOSITE_BETTING, clean)) == set()


@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_shuffling_bettors_across_rounds_removes_shared_rounds(seed):
    rng = np.random.default_rng(seed)
    night = [_shuffle_across_table(t, rng) for t in _night(1)]
    assert _flagged(_run(SHARED_ROUNDS, night)) == set()
    # shuffling within rounds keeps who bet on which round: shared rounds sees the same pair
    within = [_shuffle_within_rounds(t, rng) for t in _night(1)]
    assert _flagged(_run(SHARED_ROUNDS, within)) == {"P1|P2"}


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_order_of_rows_changes_nothing(seed):
    rng = np.random.default_rng(seed)
    night = list(_night(1))
    shuffled = [replace(t, bets=t.bets.take(rng.permutation(t.bets.num_rows)),
                        rounds=t.rounds.take(rng.permutation(t.rounds.num_rows))) for t in night]
    for detector in (OPPOSITE_BETTING, SHARED_ROUNDS):
        tables = list(zip(night, shuffled, strict=True))
        rng.shuffle(tables)  # the order of the tables too
        assert _run(detector, [b for _, b in tables]) == _run(detector, night)


def test_unrelated_bets_leave_a_pair_alone():
    # bets of other accounts on rounds the pair never played change neither the pair's counts nor its chance
    (table,) = _night(1, n_tables=1)
    before = {(r["account_a"], r["account_b"]): r for r in opposite_betting_features(table).to_pylist()}
    played = set(table.bets.filter(pa.compute.is_in(table.bets["account_id"], pa.array(["P1", "P2"])))
                 ["round_id"].to_pylist())
    free = [r for r in table.rounds["round_id"].to_pylist() if r not in played][:30]
    extra = _bets([(r, f"Z{i % 3}", "PLAYER" if i % 2 else "BANKER", 1000, 0) for i, r in enumerate(free)])
    extra["bet_id"] = np.char.add("z", extra["bet_id"])
    extra["table_id"] = np.full(len(free), "T01")
    grown = replace(table, bets=pa.concat_tables([table.bets, pa.table(extra).select(table.bets.column_names)]))
    after = {(r["account_a"], r["account_b"]): r for r in opposite_betting_features(grown).to_pylist()}
    assert after[("P1", "P2")] == before[("P1", "P2")]


def test_groups_join_flagged_pairs():
    def row(subject, flagged):
        return replace(SurveillanceTest("shared_rounds", subject, "2026-11-28", "x", 0.0, 0.001, "m", 30, 15),
                       flagged=flagged)

    rows = [row("A|B", True), row("B|C", True), row("D|E", True), row("C|F", False), row("G|H", False)]
    assert groups(rows) == [("A", "B", "C"), ("D", "E")]


def test_binomial_tail_of_the_hand_table_by_exact_sum():
    # the same 67/256 as an exact sum: sum_{k>=2} C(4,k) (1/4)^k (3/4)^(4-k)
    want = sum(Fraction(comb(4, k)) * Fraction(1, 4) ** k * Fraction(3, 4) ** (4 - k) for k in range(2, 5))
    assert want == Fraction(67, 256)
    (t,) = [t for t in _pairs(opposite_betting_tests(opposite_betting_features(_hand_table()),
                                                     {"min_shared_rounds": 4, **EVERY_PAIR})) if t.subject == "A|B"]
    assert t.p_value == pytest.approx(float(want), rel=1e-12)
