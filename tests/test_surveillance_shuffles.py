"""Surveillance of shuffles (engine/surveillance/shuffles.py): the null of the longest common run against
every pair of permutations of tiny decks and a seeded simulation of real shoes, the longest run against a
brute-force search, repeated shoes and weak shuffles planted and found across tables, card positions, and
invariance to the order of rows."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from engine.cards import CARD_CODES, CARD_INDEX, new_shoe
from engine.surveillance.detector import Detector, TableData
from engine.surveillance.shuffles import (
    CARD_POSITIONS,
    SHOE_REPEAT,
    UNKNOWN,
    WEAK_SHUFFLE,
    expected_maximal_runs,
    kept_pairs,
    longest_earlier_runs,
    position_chi_square,
    position_counts,
    positions_min_shoes,
    repeat_p_value,
    shoe_features,
    window_match_probability,
)
from engine.surveillance.tests import SurveillanceTest, adjust

T0 = datetime(2026, 11, 28, 12, tzinfo=UTC)
DAY = "2026-11-28"


# ---------------------------------------------------------------------------------------------------
# builders
# ---------------------------------------------------------------------------------------------------

def table_data(table_id: str, shoes: list[list[str]], *, game: str = "baccarat", ruleset: str = "baccarat_8d",
               decks: int = 8, cut: int | None = None, start: datetime = T0, minutes: int = 60,
               order: list[int] | None = None, dates: list[str] | None = None) -> TableData:
    """One table's shoes, opened `minutes` apart from `start`, each with one round on DAY (or `dates`);
    `order` permutes the rows of shoes and rounds (the same records in another order)."""
    n = len(shoes)
    dates = dates or [DAY] * n
    ids = [f"{table_id}-S{i + 1:04d}" for i in range(n)]
    rows = order if order is not None else list(range(n))
    shoe_table = pa.table({
        "shoe_id": [ids[i] for i in rows],
        "table_id": [table_id] * n,
        "shoe_no": pa.array([i + 1 for i in rows], pa.int32()),
        "opened_at": pa.array([start + timedelta(minutes=minutes * i) for i in rows], pa.timestamp("us", tz="UTC")),
        "decks": pa.array([decks] * n, pa.int8()),
        "cards": pa.array([shoes[i] for i in rows], pa.list_(pa.string())),
        "cut_index": pa.array([cut] * n, pa.int32()),
        "equipment_id": pa.array([None] * n, pa.string()),
    })
    rounds = pa.table({"round_id": [f"{ids[i]}-R1" for i in rows], "shoe_id": [ids[i] for i in rows],
                       "round_no": pa.array([1] * n, pa.int32()),
                       "business_date": [dates[i] for i in rows]})
    empty = pa.table({})
    return TableData({"table_id": table_id, "game": game, "ruleset": ruleset, "currency": "EUR"},
                     shoe_table, rounds, empty, empty, empty)


def run(detector: Detector, tables: list[TableData], **settings) -> list[SurveillanceTest]:
    features = pa.concat_tables([detector.features(t) for t in tables])
    return adjust(detector.tests(features, {**detector.settings, **settings}))


def fair(rng: np.random.Generator, decks: int) -> list[str]:
    return [CARD_CODES[i] for i in rng.permutation(np.repeat(np.arange(52), decks))]


def fair_tables(rng: np.random.Generator, tables: int = 4, shoes: int = 6, stud_decks: int = 0) -> list[TableData]:
    out = [table_data(f"T{t + 1:02d}", [fair(rng, 8) for _ in range(shoes)], start=T0 + timedelta(minutes=7 * t))
           for t in range(tables)]
    if stud_decks:
        out.append(table_data("S01", [fair(rng, 1) for _ in range(stud_decks)], game="casino_stud",
                              ruleset="casino_stud_standard", decks=1, minutes=2))
    return out


def by_subject(rows: list[SurveillanceTest], detector: str | None = None) -> dict[str, SurveillanceTest]:
    return {r.subject: r for r in rows if detector is None or r.detector == detector}


# ---------------------------------------------------------------------------------------------------
# shoe_repeat: the null, by brute force over every permutation of tiny decks
# ---------------------------------------------------------------------------------------------------

def arrangements(kinds: int, copies: int) -> np.ndarray:
    """Every distinct order of a shoe of `kinds` x `copies` cards: equally likely under a fair shuffle."""
    return np.array(sorted(set(itertools.permutations(np.repeat(np.arange(kinds), copies).tolist()))), np.int8)


def common_runs(a: np.ndarray, bs: np.ndarray) -> np.ndarray:
    """runs[m, i, j]: the common run of a and bs[m] ending at a[i], bs[m][j], by dynamic programming."""
    eq = a[None, :, None] == bs[:, None, :]
    run = eq.astype(np.int16)
    for i in range(1, a.size):
        run[:, i, 1:] = eq[:, i, 1:] * (run[:, i - 1, :-1] + 1)
    return run


def longest_and_maximal(a: np.ndarray, bs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(longest common run, number of maximal common runs of length >= k) of a with each of bs: a maximal
    run ends where the next cards differ or a shoe ends."""
    run = common_runs(a, bs)
    ends = run.copy()
    ends[:, :-1, :-1] *= ~(a[None, 1:, None] == bs[:, None, 1:])
    return run.max(axis=(1, 2)), (ends >= k).sum(axis=(1, 2))


@pytest.mark.parametrize(("kinds", "a", "b"), [(3, 2, 2), (3, 2, 1), (4, 1, 1), (2, 3, 2)])
def test_window_match_probability_is_the_exact_chance_two_shuffles_agree(kinds, a, b):
    shoes_a, shoes_b = arrangements(kinds, a), arrangements(kinds, b)
    for k in range(1, kinds * min(a, b) + 2):
        agree = sum(int((x[:k] == shoes_b[:, :k]).all(axis=1).sum()) for x in shoes_a) if k <= kinds * min(a, b) else 0
        assert window_match_probability(k, a, b, kinds) == Fraction(agree, len(shoes_a) * len(shoes_b))


@pytest.mark.parametrize(("kinds", "a", "b"), [(3, 2, 2), (3, 2, 1), (4, 1, 1)])
def test_expected_maximal_runs_and_the_bound_over_every_pair_of_permutations(kinds, a, b):
    shoes_a, shoes_b = arrangements(kinds, a), arrangements(kinds, b)
    pairs = len(shoes_a) * len(shoes_b)
    for k in range(1, kinds * min(a, b) + 1):
        results = [longest_and_maximal(x, shoes_b, k) for x in shoes_a]
        count = sum(int(m.sum()) for _, m in results)
        at_least = sum(int((lo >= k).sum()) for lo, _ in results)
        mu = expected_maximal_runs(k, a, b, kinds)
        assert mu == Fraction(count, pairs)  # exact
        assert Fraction(at_least, pairs) <= mu  # the p-value bounds the probability
    assert expected_maximal_runs(kinds * min(a, b) + 1, a, b, kinds) == 0


def test_a_two_deck_of_eight_cards_every_pair_of_its_2520_orders():
    # 4 kinds x 2 copies. B runs over all 2520 orders; A over one order per relabelling of the kinds
    # (the distribution of runs given A does not change when A's kinds are renamed, B being uniform;
    # each class holds 4! = 24 orders, all kinds being present)
    every = arrangements(4, 2)
    first_seen = [x for x in every if list(dict.fromkeys(x.tolist())) == [0, 1, 2, 3]]
    assert len(first_seen) * 24 == len(every) == 2520
    pairs = len(first_seen) * len(every)
    exact = {}
    for k in range(1, 9):
        results = [longest_and_maximal(x, every, k) for x in first_seen]
        assert expected_maximal_runs(k, 2, 2, 4) == Fraction(sum(int(m.sum()) for _, m in results), pairs)
        exact[k] = Fraction(sum(int((lo >= k).sum()) for lo, _ in results), pairs)
        assert repeat_p_value(k, 2, {2: 1}, kinds=4)[0] >= float(exact[k])
    # the bound is tight where it is small: the whole shoe repeated (one maximal run, on one diagonal)
    assert exact[8] == expected_maximal_runs(8, 2, 2, 4) == Fraction(1, 2520)
    assert float(expected_maximal_runs(6, 2, 2, 4)) == pytest.approx(float(exact[6]), rel=0.02)


def kgram_longest(x: np.ndarray, y: np.ndarray) -> int:
    """Longest common run of two shoes by k-gram set intersection (an oracle independent of the module)."""
    k = 0
    while True:
        k += 1
        gx = np.lib.stride_tricks.sliding_window_view(x, k) @ (53 ** np.arange(k, dtype=np.int64))
        gy = np.lib.stride_tricks.sliding_window_view(y, k) @ (53 ** np.arange(k, dtype=np.int64))
        if np.intersect1d(gx, gy).size == 0:
            return k - 1


@pytest.mark.parametrize(("decks", "pairs", "ks"), [(8, 2000, (3, 4)), (6, 1500, (3, 4)), (1, 8000, (2, 3))])
def test_pair_bound_against_a_seeded_simulation_of_real_shoes(decks, pairs, ks):
    rng = np.random.default_rng(20261128 + decks)
    base = np.repeat(np.arange(52), decks)
    longest = np.array([kgram_longest(rng.permutation(base), rng.permutation(base)) for _ in range(pairs)])
    for k in ks:
        mu = float(expected_maximal_runs(k, decks, decks))
        seen = float((longest >= k).mean())
        poisson = 1 - np.exp(-mu)  # what the bound approximates once runs are rare
        sd = np.sqrt(poisson * (1 - poisson) / pairs)
        assert abs(seen - poisson) < 4 * sd + 1e-9, (k, seen, mu)
        assert seen <= mu + 4 * sd


def test_shoe_p_values_are_calibrated_on_a_fair_run():
    # 1 table, 120 fair 8-deck shoes: P(p <= alpha) at most alpha (the bound is conservative)
    rng = np.random.default_rng(7)
    rows = run(SHOE_REPEAT, [table_data("T01", [fair(rng, 8) for _ in range(120)], minutes=5)])
    p = np.array([r.p_value for r in rows if r.tested])
    assert p.size == 119
    for alpha in (0.05, 0.2, 0.5):
        assert (p <= alpha).mean() <= alpha + 0.05
    assert not any(r.flagged for r in rows)


def test_pair_bound_of_a_whole_repeat_and_mixed_compositions():
    # the whole 8-deck shoe again: one order among 416! / (8!)^52
    from math import factorial, log10
    p, log10p = repeat_p_value(416, 8, {8: 1})
    assert p == 0.0 and log10p == pytest.approx(log10(factorial(8)) * 52 - log10(factorial(416)), abs=1e-6)
    # n earlier shoes of one composition: n times the pair bound
    assert repeat_p_value(6, 8, {8: 10})[0] == pytest.approx(10 * float(expected_maximal_runs(6, 8, 8)))
    assert repeat_p_value(6, 8, {8: 10, 1: 5})[0] == pytest.approx(
        10 * float(expected_maximal_runs(6, 8, 8)) + 5 * float(expected_maximal_runs(6, 8, 1)))
    assert repeat_p_value(2, 8, {8: 1}) == (1.0, 0.0) and repeat_p_value(0, 8, {8: 1}) == (1.0, 0.0)
    assert expected_maximal_runs(5, 1, 8) == expected_maximal_runs(5, 8, 1)  # symmetric


# ---------------------------------------------------------------------------------------------------
# shoe_repeat: the longest run, and the detector
# ---------------------------------------------------------------------------------------------------

def brute_longest(shoes: list[np.ndarray]) -> list[int]:
    out = []
    for i, s in enumerate(shoes):
        best = 0
        for r in shoes[:i]:
            for x in range(len(r)):
                for y in range(len(s)):
                    n = 0
                    while x + n < len(r) and y + n < len(s) and r[x + n] == s[y + n]:
                        n += 1
                    best = max(best, n)
        out.append(best)
    return out


def test_longest_earlier_runs_against_brute_force():
    rng = np.random.default_rng(11)
    for _ in range(150):
        shoes: list[np.ndarray] = []
        for _ in range(int(rng.integers(1, 6))):
            s = rng.integers(0, int(rng.integers(1, 5)), int(rng.integers(1, 30)))
            if shoes and rng.random() < 0.6:  # plant a run of an earlier shoe (often past 10 cards)
                src = shoes[int(rng.integers(len(shoes)))]
                a = int(rng.integers(len(src)))
                b = a + int(rng.integers(1, len(src) - a + 1))
                at = int(rng.integers(0, len(s) + 1))
                s = np.concatenate([s[:at], src[a:b], s[at:]])
            shoes.append(np.asarray(s, np.int64))
        start = np.concatenate([[0], np.cumsum([len(s) for s in shoes])])
        got = longest_earlier_runs(np.concatenate(shoes), start)
        assert got.length.tolist() == brute_longest(shoes)
        for i, n in enumerate(got.length.tolist()):
            if n:  # where it says the run is
                j, x, y = int(got.earlier[i]), int(got.at[i]), int(got.at_earlier[i])
                assert j < i and shoes[i][x:x + n].tolist() == shoes[j][y:y + n].tolist()


def brute_where(shoes: list[np.ndarray], i: int, n: int) -> tuple[int, int, int]:
    """(earlier shoe, first card in shoe i, in the earlier shoe) of shoe i's longest earlier run of n cards, by
    their definition: below 10 cards, the first place in shoe i where an n-card sequence met before starts, and
    that sequence's first place in the run; from 10 on, the earliest shoe, then the first places in each."""
    s = shoes[i].tolist()
    found = [(j, x, y) for j in range(i) for x in range(len(s) - n + 1) for y in range(len(shoes[j]) - n + 1)
             if shoes[j][y:y + n].tolist() == s[x:x + n]]
    if n >= 10:
        return min(found)
    x = min(x for _, x, _ in found)
    j, y = min((j, y) for j, x_, y in found if x_ == x)
    return j, x, y


def test_longest_earlier_runs_names_each_run_as_defined():
    """Which earlier shoe and positions a run is named by (the rows' text and the outputs' bytes), on shoes of few
    card kinds where ties abound and runs pass 10 cards (the passes a first card at a time must pick as one pass
    over every card did)."""
    rng = np.random.default_rng(43)
    for _ in range(120):
        shoes: list[np.ndarray] = []
        for _ in range(int(rng.integers(2, 6))):
            s = rng.integers(0, int(rng.integers(1, 4)), int(rng.integers(5, 40)))
            if rng.random() < 0.7:  # a run of an earlier shoe, often past 10 cards
                src = shoes[int(rng.integers(len(shoes)))] if shoes else s
                a = int(rng.integers(len(src)))
                s = np.concatenate([s[:5], src[a:a + int(rng.integers(8, 25))], s[5:]])
            shoes.append(np.asarray(s, np.int8))
        start = np.concatenate([[0], np.cumsum([len(s) for s in shoes])])
        got = longest_earlier_runs(np.concatenate(shoes), start)
        for i, n in enumerate(got.length.tolist()):
            where = (int(got.earlier[i]), int(got.at[i]), int(got.at_earlier[i]))
            assert where == (brute_where(shoes, i, n) if n else (-1, -1, -1)), (i, n)


def test_a_repeated_shoe_is_flagged_across_tables_whole_and_by_a_40_card_run():
    rng = np.random.default_rng(2026)
    tables = [[fair(rng, 8) for _ in range(6)] for _ in range(4)]
    tables[2][3] = list(tables[0][1])  # T03's 4th shoe is T01's 2nd again, card for card
    fresh, run40 = fair(rng, 8), tables[1][2][50:90]  # T02's 3rd shoe, cards 51-90, inside a fresh shoe
    rest = list(fresh)
    for card in run40:
        rest.remove(card)
    tables[3][4] = rest[:100] + run40 + rest[100:]  # still 8 full decks
    rows = run(SHOE_REPEAT, [table_data(f"T{t + 1:02d}", shoes, start=T0 + timedelta(minutes=7 * t))
                             for t, shoes in enumerate(tables)])
    flagged = {r.subject: r for r in rows if r.flagged}
    assert set(flagged) == {"T03-S0004", "T04-S0005"}
    whole, part = flagged["T03-S0004"], flagged["T04-S0005"]
    assert (whole.value, whole.effect, whole.sample) == (416, 1.0, 4 + 4 + 3 + 3)  # opened before it
    assert whole.detail.startswith("shoe T03-S0004 (T03) repeats 416 of 416 cards of T01-S0002 (T01, 2026-11-28)")
    assert part.value == 40 and part.effect == pytest.approx(40 / 416) and part.p_value < 1e-40
    assert ("shares 40 consecutive cards (its cards 101-140) with T02-S0003 (T02, 2026-11-28) (cards 51-90)"
            in part.detail)
    assert all(r.detector == "shoe_repeat" and r.period == DAY for r in rows)
    assert max(r.value for r in rows if r.tested and r.subject not in flagged) < 8


@pytest.mark.parametrize("rows_at_a_time", [1, 5, 23, 24])
def test_shoe_repeat_tests_made_a_chunk_at_a_time_are_every_shoe_once_in_run_order(monkeypatch, rows_at_a_time):
    """The rows come REPEAT_ROWS at a time, a table each (the pipeline spills each: a 30M night's ~190k rows held at
    once were ~87 MB): every part size gives a row per shoe, in run order, the earlier-shoe count carried across
    parts, the repeat found."""
    from engine.surveillance import shuffles
    rng = np.random.default_rng(7)
    tables = [[fair(rng, 1) for _ in range(6)] for _ in range(4)]  # 24 shoes, 6 a table
    tables[3][5] = list(tables[0][0])
    data = [table_data(f"T{t + 1:02d}", shoes, ruleset="r1", decks=1, start=T0 + timedelta(minutes=7 * t))
            for t, shoes in enumerate(tables)]
    features = pa.concat_tables([SHOE_REPEAT.features(t) for t in data])
    monkeypatch.setattr(shuffles, "REPEAT_ROWS", rows_at_a_time)
    parts = list(SHOE_REPEAT.tests(features, SHOE_REPEAT.settings))
    assert [p.num_rows for p in parts] == [min(rows_at_a_time, 24 - lo) for lo in range(0, 24, rows_at_a_time)]
    table = pa.concat_tables(parts)
    assert table.num_rows == 24 and len(set(table["subject"].to_pylist())) == 24
    assert table["sample"].to_pylist() == list(range(24))  # each shoe against every shoe opened before it
    flagged = [r.subject for r in adjust(table) if r.flagged]
    assert flagged == ["T04-S0006"]


@pytest.mark.parametrize("rows_at_a_time", [1, 4, 19, 20, 21])
def test_weak_shuffle_pairs_made_a_chunk_at_a_time_are_every_pair_once(monkeypatch, rows_at_a_time):
    """The shoe pairs' rows come REPEAT_ROWS at a time (a 30M night's ~189k pairs held as objects at once were the
    surveillance's peak), then the tables' rows: every part size gives the same rows, each pair once, the table
    rows after the last pair, the weak shuffle found."""
    from engine.surveillance import shuffles
    rng = np.random.default_rng(11)
    tables = [[fair(rng, 1) for _ in range(6)] for _ in range(4)]  # 20 consecutive pairs, 5 a table
    for i in range(1, 6):
        tables[2][i] = riffled_in_packs(rng, tables[2][i - 1])
    data = [table_data(f"T{t + 1:02d}", shoes, ruleset="r1", decks=1, start=T0 + timedelta(minutes=7 * t))
            for t, shoes in enumerate(tables)]
    features = pa.concat_tables([WEAK_SHUFFLE.features(t) for t in data])
    whole = pa.concat_tables(list(WEAK_SHUFFLE.tests(features, WEAK_SHUFFLE.settings)))
    monkeypatch.setattr(shuffles, "REPEAT_ROWS", rows_at_a_time)
    parts = list(WEAK_SHUFFLE.tests(features, WEAK_SHUFFLE.settings))
    pairs = [p.num_rows for p in parts[:-1]]
    assert pairs == [min(rows_at_a_time, 20 - lo) for lo in range(0, 20, rows_at_a_time)]
    assert set(parts[-1]["detector"].to_pylist()) == {"weak_shuffle"} and parts[-1].num_rows == 4
    table = pa.concat_tables(parts)
    assert sorted(map(str, table.to_pylist())) == sorted(map(str, whole.to_pylist()))
    assert table.filter(pc.equal(table["detector"], "weak_shuffle_pair")).num_rows == 20
    assert len(set(table["subject"].to_pylist())) == 24
    assert {r.subject for r in adjust(table) if r.flagged and r.detector == "weak_shuffle"} == {"T03"}


@pytest.mark.parametrize("gather_rows, scan_cards", [(1, 1), (2, 7), (5, 52), (1024, 1 << 22)])
def test_the_runs_cards_are_gathered_and_scanned_a_block_at_a_time(monkeypatch, gather_rows, scan_cards):
    """The cards are placed GATHER_ROWS shoes at a time and each first card's positions found SCAN_CARDS cards at a
    time (the night's cards at once held ~10 bytes a card): at every block size, each table's features a chunk of
    its own and a shoe of no cards among them, the cards are every shoe's in run order and the runs are the same."""
    from engine.surveillance import shuffles
    rng = np.random.default_rng(5)
    tables = [[fair(rng, 1) for _ in range(n)] for n in (4, 3, 5)]
    tables[2][4] = list(tables[0][1])
    data = [table_data(f"T{t + 1:02d}", shoes, decks=1, start=T0 + timedelta(minutes=5 * (2 - t)))
            for t, shoes in enumerate(tables)]
    parts = [SHOE_REPEAT.features(t) for t in data]
    empty = parts[1].slice(0, 1).set_column(9, "cards", pa.array([[]], pa.list_(pa.int8())))
    features = pa.concat_tables([*parts, empty.set_column(3, "shoe_id", pa.array(["T02-S9999"]))])
    rows = sorted(features.to_pylist(), key=lambda r: (r["opened_at"], r["table_id"], r["shoe_no"], r["shoe_id"]))
    expected = [c for r in rows for c in r["cards"]]
    before = longest_earlier_runs(*(lambda s: (s.flat, s.start))(shuffles._shoes(features)))
    monkeypatch.setattr(shuffles, "GATHER_ROWS", gather_rows)
    monkeypatch.setattr(shuffles, "SCAN_CARDS", scan_cards)
    shoes = shuffles._shoes(features)
    assert shoes.flat.tolist() == expected and shoes.flat.dtype == np.int8
    assert np.diff(shoes.start).tolist() == [len(r["cards"]) for r in rows]
    assert [shoes.shoe_id[i] for i in range(shoes.n)] == [r["shoe_id"] for r in rows]
    after = longest_earlier_runs(shoes.flat, shoes.start)
    for name in ("length", "earlier", "at", "at_earlier"):
        assert getattr(after, name).tolist() == getattr(before, name).tolist()
    assert after.length.max() == 52


def test_the_first_shoe_of_the_run_is_not_tested_and_card_less_sessions_are_skipped():
    rng = np.random.default_rng(1)
    roulette = table_data("R01", [[], []], game="roulette", ruleset="roulette_eu", decks=0)
    assert shoe_features(roulette).num_rows == 0
    rows = run(SHOE_REPEAT, [roulette, table_data("T01", [fair(rng, 8)])])
    assert len(rows) == 1 and rows[0].p_value is None and not rows[0].flagged and rows[0].sample == 0
    assert "no earlier shoe" in rows[0].detail and rows[0].min_sample == 1
    assert run(WEAK_SHUFFLE, [roulette]) == [] and run(CARD_POSITIONS, [roulette]) == []


def test_features_encode_cards_dates_and_compositions():
    shoes = pa.table({"shoe_id": ["A", "B"], "shoe_no": pa.array([1, 2], pa.int32()),
                      "opened_at": pa.array([T0, T0 + timedelta(hours=1)], pa.timestamp("ms", tz="Europe/Malta")),
                      "decks": pa.array([None, 1], pa.int8()), "cards": [["AS", "XX", None, "KC"], ["2H"] * 52]})
    rounds = pa.table({"shoe_id": ["B", "B"], "business_date": ["2026-11-27", "2026-11-28"]})
    empty = pa.table({})
    f = shoe_features(TableData({"table_id": "T9", "game": "baccarat", "ruleset": "r"}, shoes, rounds, empty,
                                empty, empty))
    assert f.column("cards").to_pylist() == [[CARD_INDEX["AS"], UNKNOWN, UNKNOWN, CARD_INDEX["KC"]],
                                             [CARD_INDEX["2H"]] * 52]
    assert f.column("business_date").to_pylist() == ["2026-11-28", "2026-11-27"]  # opened_at's UTC date; rounds'
    assert f.column("decks").to_pylist() == [1, 1] and f.column("cut_index").to_pylist() == [None, None]
    assert f.column("table_id").to_pylist() == ["T9", "T9"]


# ---------------------------------------------------------------------------------------------------
# weak_shuffle
# ---------------------------------------------------------------------------------------------------

def test_kept_pairs_by_hand_and_its_mean_over_every_order_of_the_next_shoe():
    # previous dealt A B A C (pairs AB, BA, AC); next A B C A B C: positions AB, BC, CA, AB, BC -> 2 kept
    a, b, c = 0, 1, 2
    x, mean, distinct = kept_pairs(np.array([a, b, a, c]), np.array([a, b, c, a, b, c]))
    assert (x, distinct) == (2, 3)
    # the mean: for a fair shuffle of the next shoe (2 x 3 cards), exactly the average over its 90 orders
    every = arrangements(3, 2)
    assert Fraction(sum(kept_pairs(np.array([a, b, a, c]), o)[0] for o in every), len(every)) == 3 * Fraction(
        2 * 2, 6 * 5) * 5  # 3 distinct pairs x n_x n_y / (N (N - 1)) x (N - 1) positions
    assert mean == pytest.approx(3 * 2 * 2 / 6)
    # a pair of one kind: n_x (n_x - 1)
    every = arrangements(2, 3)
    dealt = np.array([0, 0, 1])
    want = Fraction(sum(kept_pairs(dealt, o)[0] for o in every), len(every))
    assert want == Fraction(3 * 2 + 3 * 3, 6) and kept_pairs(dealt, every[0])[1] == pytest.approx(float(want))


@pytest.mark.parametrize(("decks", "pairs"), [(8, 3000), (1, 20000)])
def test_weak_shuffle_poisson_p_values_are_conservative_by_seeded_simulation(decks, pairs):
    rng = np.random.default_rng(99 + decks)
    base = np.repeat(np.arange(52), decks)
    xs, means = np.zeros(pairs), np.zeros(pairs)
    for i in range(pairs):
        xs[i], means[i], _ = kept_pairs(rng.permutation(base), rng.permutation(base))
    assert xs.mean() == pytest.approx(means.mean(), abs=4 * np.sqrt(means.mean() / pairs))  # the exact mean
    p = sps.poisson.sf(xs - 1, means)
    for alpha in (0.01, 0.05, 0.1):
        assert (p <= alpha).mean() <= alpha + 3 * np.sqrt(alpha / pairs)


def riffled_in_packs(rng: np.random.Generator, shoe: list[str], packs: int = 8) -> list[str]:
    """A weak shuffle: the shoe cut into packs, each pack riffled once (a binomial cut, cards dropped
    from each half in proportion to what it holds), the packs stacked in a random order."""
    size = len(shoe) // packs
    out = []
    for p in rng.permutation(packs):
        pack = shoe[p * size:(p + 1) * size]
        cut = int(rng.binomial(len(pack), 0.5))
        left, right, riffled = pack[:cut], pack[cut:], []
        while left or right:
            take_left = rng.random() < len(left) / (len(left) + len(right))
            riffled.append((left if take_left else right).pop(0))
        out += riffled
    return out


def in_strips(rng: np.random.Generator, shoe: list[str], strip: int = 20) -> list[str]:
    strips = [shoe[i:i + strip] for i in range(0, len(shoe), strip)]
    return [card for i in rng.permutation(len(strips)) for card in strips[i]]


def test_weak_shuffles_are_flagged_and_fair_tables_are_not():
    rng = np.random.default_rng(32)
    riffled, stripped = [fair(rng, 8)], [fair(rng, 8)]
    for _ in range(4):
        riffled.append(riffled_in_packs(rng, riffled[-1]))
        stripped.append(in_strips(rng, stripped[-1]))
    tables = fair_tables(rng, tables=6, shoes=5, stud_decks=40)
    tables += [table_data("W01", riffled), table_data("W02", stripped)]
    rows = run(WEAK_SHUFFLE, tables)
    per_table = by_subject(rows, "weak_shuffle")
    assert {s for s, r in per_table.items() if r.flagged} == {"W01", "W02"}
    pairs = [r for r in rows if r.detector == "weak_shuffle_pair"]
    assert {r.subject for r in pairs if r.flagged} == {f"W0{w}-S000{i}>W0{w}-S000{i + 1}" for w in (1, 2)
                                                       for i in range(1, 5)}
    w2 = per_table["W02"]
    assert w2.sample == 4 and w2.value > 4 * 380 and w2.effect > 0.75 and w2.period == DAY
    assert w2.detail.startswith("table W02 (2026-11-28): 4 consecutive shoe pairs keep")
    assert per_table["W01"].effect > 0.3  # a single riffle keeps about half the adjacent pairs
    assert per_table["S01"].sample == 39 and not per_table["S01"].flagged
    one = by_subject(pairs)["W01-S0001>W01-S0002"]
    assert one.detail.startswith("shoe W01-S0002 (W01, 2026-11-28) keeps ") and "dealt order" in one.detail


def test_weak_shuffle_counts_only_the_dealt_cards_before_the_cut():
    # the next shoe keeps the previous shoe's cards behind the cut in order: never dealt, not counted
    rng = np.random.default_rng(4)
    first = fair(rng, 8)
    behind = first[300:]
    front = [first[i] for i in rng.permutation(300)]
    kept_behind = table_data("C01", [first, behind + front], cut=300)
    kept_front = table_data("C02", [first, first[:300] + [behind[i] for i in rng.permutation(116)]], cut=300)
    rows = by_subject(run(WEAK_SHUFFLE, [kept_behind, kept_front]), "weak_shuffle")
    assert not rows["C01"].flagged and rows["C02"].flagged and rows["C02"].value >= 299


def test_weak_shuffle_per_day_or_per_run():
    rng = np.random.default_rng(6)
    days = [table_data("T01", [fair(rng, 8) for _ in range(4)], dates=[DAY, DAY, "2026-11-29", "2026-11-29"])]
    rows = [(r.period, r.sample) for r in run(WEAK_SHUFFLE, days) if r.detector == "weak_shuffle"]
    assert rows == [(DAY, 1), ("2026-11-29", 2)]  # a pair belongs to its next shoe's day
    rows = [(r.period, r.sample) for r in run(WEAK_SHUFFLE, days, period="run") if r.detector == "weak_shuffle"]
    assert rows == [(DAY + "..2026-11-29", 3)]


# ---------------------------------------------------------------------------------------------------
# card_positions
# ---------------------------------------------------------------------------------------------------

def test_position_counts_of_an_unshuffled_deck_by_hand():
    deck = np.array([CARD_INDEX[c] for c in new_shoe(1)])  # A A A A 2 2 2 2 ... K K K K
    observed, expected, smallest = position_counts([deck])
    # deciles of 52 cards (j * 10 // 52): sizes 6 5 5 5 5 6 5 5 5 5
    sizes = np.bincount(np.arange(52) * 10 // 52)
    assert sizes.tolist() == [6, 5, 5, 5, 5, 6, 5, 5, 5, 5] and smallest == 52
    assert np.allclose(expected, np.outer([4] * 13, sizes) / 52)
    by_hand = np.zeros((13, 10))
    for j, card in enumerate(deck):
        by_hand[card // 4, j * 10 // 52] += 1
    assert np.array_equal(observed, by_hand)
    assert observed[0].tolist() == [4, 0, 0, 0, 0, 0, 0, 0, 0, 0]  # every ace in the first decile


def test_position_chi_square_by_hand():
    stat, p, df = position_chi_square(np.array([[3.0, 1.0], [1.0, 3.0]]), np.full((2, 2), 2.0), 8)
    # (1/2) x 4 = 2, scaled by (8 - 1) / 8
    assert (stat, df) == (pytest.approx(1.75), 1) and p == pytest.approx(sps.chi2.sf(1.75, 1))
    # a rank with no card drops out of the degrees of freedom
    stat, _, df = position_chi_square(np.array([[3.0, 1.0], [0, 0], [1.0, 3.0]]),
                                      np.array([[2.0, 2.0], [0, 0], [2.0, 2.0]]), 8)
    assert df == 1 and stat == pytest.approx(1.75)


def test_position_statistic_is_chi_square_108_under_fair_shuffles():
    rng = np.random.default_rng(5)
    base = np.repeat(np.arange(52), 8)
    stats, ps = [], []
    for _ in range(300):
        observed, expected, m = position_counts([rng.permutation(base) for _ in range(5)])
        stat, p, df = position_chi_square(observed, expected, m)
        stats.append(stat)
        ps.append(p)
    assert df == 108 and np.mean(stats) == pytest.approx(108, abs=4 * np.sqrt(2 * 108 / 300))
    assert sps.kstest(ps, "uniform").pvalue > 0.001


def planted_power(decks: int, shoes: int, strength: float, level: float) -> float:
    """The power of the rank x decile chi-square at `level` over `shoes` shoes of `decks` decks, one rank
    +-`strength` in two deciles, worked out without positions_min_shoes: the noncentrality is Pearson's
    statistic of the expected planted table against the null's (each decile at its real size), averaged over
    every (short, long) pair of deciles, and the noncentral chi-square's tail a Poisson mixture of central
    ones."""
    m = 52 * decks
    size = np.bincount(np.arange(m) * 10 // m, minlength=10)
    null = np.outer(np.full(13, 4 * decks), size) / m  # a rank's expected cards in each decile
    lams = []
    for short, long in itertools.permutations(range(10), 2):
        moved = strength * null[0, short]  # the rank's cards moved to the long decile; others take their place
        shift = np.zeros((13, 10))
        shift[0, long], shift[0, short] = moved, -moved
        shift[1:, long], shift[1:, short] = -moved / 12, moved / 12
        lams.append(((shift ** 2) / null).sum())
    lam = shoes * float(np.mean(lams)) * (m - 1) / m  # the statistic is scaled by (M - 1) / M
    df = 12 * 9
    critical = sps.chi2.isf(level, df)
    j = np.arange(int(lam / 2 + 40 * np.sqrt(lam / 2 + 1)) + 40)
    return float((sps.poisson.pmf(j, lam / 2) * sps.chi2.sf(critical, df + 2 * j)).sum())


def test_min_shoes_is_the_smallest_with_80_percent_power_at_its_level():
    s = CARD_POSITIONS.settings
    assert (s["strength"], s["power"], s["level"]) == (0.5, 0.8, 0.0005)  # BH at 1%, one table among 20
    for decks, expected in ((8, 43), (6, 58), (1, 348)):
        n = positions_min_shoes(decks, s["strength"], s["power"], s["level"])
        assert n == expected
        assert planted_power(decks, n, 0.5, 0.0005) >= 0.8 > planted_power(decks, n - 1, 0.5, 0.0005), decks
    # what 35 shoes of 8 decks (the earlier minimum) gave: 87% at p <= 1% for one table, 59% at its level
    assert planted_power(8, 35, 0.5, 0.01) == pytest.approx(0.87, abs=0.01)
    assert planted_power(8, 35, 0.5, 0.0005) == pytest.approx(0.59, abs=0.01)
    assert positions_min_shoes(8, 0.5, 0.8, 0.01) == 32


def test_the_minimum_is_tested_one_shoe_below_it_is_not():
    rng = np.random.default_rng(3)
    n = positions_min_shoes(8, 0.5, 0.8, 0.0005)
    tables = [table_data("AT", [fair(rng, 8) for _ in range(n)]),
              table_data("BELOW", [fair(rng, 8) for _ in range(n - 1)], start=T0 + timedelta(minutes=1))]
    rows = by_subject(run(CARD_POSITIONS, tables))
    assert (rows["AT"].sample, rows["AT"].min_sample, rows["AT"].tested) == (n, n, True)
    assert rows["AT"].p_value is not None
    assert (rows["BELOW"].sample, rows["BELOW"].p_value, rows["BELOW"].tested) == (n - 1, None, False)
    assert f"below the {n} shoes of 8 decks: 80% power at p <= 0.0005 against one rank 50%" in rows["BELOW"].detail


def test_simulated_power_at_the_minimum_is_about_80_percent():
    # the bench's plant (bench/surveillance_power.py simulate_positions): each card of a random rank in one
    # decile moves, with probability 0.5, to a random place of another decile (swapped with another rank's)
    rng = np.random.default_rng(8)
    n, reps, hits = positions_min_shoes(8), 300, 0
    m = 416
    decile = np.arange(m) * 10 // m
    for _ in range(reps):
        cards = rng.permuted(np.tile(np.repeat(np.arange(52), 8), (n, 1)), axis=1)
        rank = int(rng.integers(13))
        long, short = rng.choice(10, 2, replace=False)
        for shoe in cards:
            of_rank = shoe // 4 == rank
            movers = np.flatnonzero(of_rank & (decile == short))
            movers = movers[rng.random(movers.size) < 0.5]
            targets = rng.choice(np.flatnonzero(~of_rank & (decile == long)), movers.size, replace=False)
            shoe[movers], shoe[targets] = shoe[targets], shoe[movers].copy()
        observed, expected, smallest = position_counts(list(cards))
        hits += position_chi_square(observed, expected, smallest)[1] <= 0.0005
    assert 0.72 <= hits / reps <= 0.88  # 0.80 expected; 300 draws: sd 0.023


def test_card_positions_flags_ten_valued_cards_kept_at_the_back():
    rng = np.random.default_rng(10)
    tens = {c for c in CARD_CODES if c[0] in "TJQK"}
    biased = []
    for _ in range(45):  # the minimum is 43
        shoe = fair(rng, 8)
        front = rng.permutation([i for i in range(208) if shoe[i] in tens])  # from anywhere in the front half
        back = [i for i in range(374, 416) if shoe[i] not in tens]
        for i, k in zip(front[:8], back[:8], strict=False):
            shoe[i], shoe[k] = shoe[k], shoe[i]
        biased.append(shoe)
    tables = [table_data(f"T{t:02d}", [fair(rng, 8) for _ in range(45)]) for t in range(1, 5)]
    tables += [table_data("B01", biased), table_data("F01", [fair(rng, 8) for _ in range(5)])]
    rows = by_subject(run(CARD_POSITIONS, tables))
    assert {s for s, r in rows.items() if r.flagged} == {"B01"}
    b = rows["B01"]
    assert b.sample == 45 and b.min_sample == positions_min_shoes(8) and b.statistic.endswith("(108 df)")
    assert b.detail.startswith("B01 (2026-11-28), 45 shoes: rank ") and "in decile 10 of the shoe" in b.detail
    few = rows["F01"]
    assert few.p_value is None and not few.flagged and few.sample == 5
    assert f"below the {positions_min_shoes(8)} shoes of 8 decks: 80% power at p <= 0.0005" in few.detail
    pooled = by_subject(run(CARD_POSITIONS, tables[:4] + [tables[5]], group_by="ruleset"))
    assert list(pooled) == ["baccarat_8d/8 decks"] and pooled["baccarat_8d/8 decks"].sample == 185
    assert not pooled["baccarat_8d/8 decks"].flagged


def test_card_positions_flags_an_unshuffled_stud_deck_table():
    rng = np.random.default_rng(12)
    n = positions_min_shoes(1)
    stud = [new_shoe(1) if i % 4 == 0 else fair(rng, 1) for i in range(n)]
    rows = run(CARD_POSITIONS, [table_data("S01", stud, game="casino_stud", decks=1, minutes=2)])
    assert rows[0].flagged and rows[0].sample == n


# ---------------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_every_detector_is_invariant_to_the_order_of_rows_and_tables(seed, data):
    rng = np.random.default_rng(seed)
    shoes = {"T01": [fair(rng, 2) for _ in range(4)], "T02": [fair(rng, 2) for _ in range(3)],
             "S01": [fair(rng, 1) for _ in range(6)]}
    shoes["T02"][1] = list(shoes["T01"][0])  # something to find
    def tables(orders, table_order):
        out = [table_data(t, shoes[t], decks=1 if t == "S01" else 2, cut=None if t == "S01" else 80,
                          order=orders[t], start=T0 + timedelta(minutes=3 * i)) for i, t in enumerate(shoes)]
        return [out[i] for i in table_order]
    ordered = tables({t: None for t in shoes}, [0, 1, 2])
    shuffled = tables({t: data.draw(st.permutations(range(len(s)))) for t, s in shoes.items()},
                      data.draw(st.permutations(range(3))))
    for detector in (SHOE_REPEAT, WEAK_SHUFFLE, CARD_POSITIONS):
        assert run(detector, shuffled, group_by="ruleset") == run(detector, ordered, group_by="ruleset")
        assert run(detector, shuffled) == run(detector, ordered)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_fair_shuffled_run_is_rarely_flagged(seed):
    # BH at 1% under no fault: a flag at all is a 1-in-100 event, two are far rarer
    tables = fair_tables(np.random.default_rng(seed), tables=3, shoes=4, stud_decks=30)
    for detector in (SHOE_REPEAT, WEAK_SHUFFLE, CARD_POSITIONS):
        assert sum(r.flagged for r in run(detector, tables, group_by="ruleset")) <= 1


def test_a_fair_run_of_many_tables_is_silent():
    rng = np.random.default_rng(28)
    tables = fair_tables(rng, tables=10, shoes=12, stud_decks=200)
    for detector in (SHOE_REPEAT, WEAK_SHUFFLE, CARD_POSITIONS):
        rows = run(detector, tables)
        assert rows and not any(r.flagged for r in rows), detector.name


# ---------------------------------------------------------------------------------------------------
# the finding of a flagged pair names its later shoe
# ---------------------------------------------------------------------------------------------------

def test_a_weak_shuffle_pair_finding_names_the_later_shoe_and_its_table():
    from pipelines.surveillance import _IDS, findings_table

    def ids_of(rows: list[tuple[str, str, str | None]]) -> pa.Table:  # the run's ids as _Ids gives them
        return pa.table([list(c) for c in zip(*rows, strict=True)] if rows else [[], [], []], schema=_IDS)

    pair = SurveillanceTest("weak_shuffle_pair", "T01-S0001>T01-S0002", DAY, "kept adjacent pairs = 240 (58.0 "
                            "expected)", 240.0, 1e-40, "Poisson upper tail", 1, 1, effect=0.44,
                            detail="shoe T01-S0002 keeps 240 adjacent pairs", q_value=1e-38, flagged=True)
    # the earlier shoe filed under another table: the finding takes the later shoe's
    ids = ids_of([("table", "T01", "T01"), ("table", "T02", "T02"), ("shoe", "T01-S0001", "T02"),
                  ("shoe", "T01-S0002", "T01"), ("account", "T01-S0002x", None)])
    [finding] = findings_table([(pair, "WEAK_SHUFFLE")], {"weak_shuffle_pair": 3}, 0.01, ids).to_pylist()
    assert (finding["shoe_id"], finding["table_id"], finding["account_id"]) == ("T01-S0002", "T01", None)
    assert (finding["kind"], finding["severity"]) == ("WEAK_SHUFFLE", "review")
    assert finding["message"].startswith("weak_shuffle_pair T01-S0001>T01-S0002 (2026-11-28): ")
    # a shoe of no table of the run: nothing named rather than a guess
    lost = findings_table([(pair, "WEAK_SHUFFLE")], {"weak_shuffle_pair": 3}, 0.01,
                          ids_of([])).to_pylist()[0]
    assert (lost["shoe_id"], lost["table_id"]) == (None, None)
