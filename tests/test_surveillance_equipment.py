"""Wheels and shakers (engine/surveillance/equipment.py): hand-worked counts, seeded simulated wheels and
shakers (fair ones stay silent across many, biased ones at the stated sample are found), and properties
(row order does not matter; a period below its minimum is never flagged)."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.games.roulette.rules import load_roulette_rules
from engine.surveillance.detector import TableData
from engine.surveillance.equipment import (
    DICE_BIAS,
    DICE_PAIRS,
    PAIR_NAMES,
    WHEEL_BIAS,
    WHEEL_ORDER,
    WHEEL_SECTOR,
    best_sector,
    pair_drop,
)
from engine.surveillance.tests import adjust

DAY = dt.date(2026, 11, 28)
EMPTY = pa.table({"kind": pa.array([], pa.string()), "round_id": pa.array([], pa.string()),
                  "bet_id": pa.array([], pa.string())})


def table_data(table_id: str, *, pockets=None, dice=None, wheels=None, dealers=None, status=None, dates=None,
               game: str | None = None, bets: pa.Table | None = None, findings: pa.Table | None = None,
               currency: str = "EUR") -> TableData:
    """One table's period: a round per pocket (or per roll of dice), in order a minute apart; `wheels`
    the equipment_id of each round's session (None: not recorded), `dealers` each round's dealer."""
    outcomes = pockets if pockets is not None else dice
    n = len(outcomes)
    wheels = list(wheels) if wheels is not None else ["W-1"] * n
    dates = list(dates) if dates is not None else [DAY] * n
    shoe = [f"{table_id}/{w}" for w in wheels]
    start = dt.datetime(2026, 11, 28, tzinfo=dt.UTC)
    columns = {
        "round_id": [f"{table_id}-r{i}" for i in range(n)], "shoe_id": shoe,
        "table_id": [table_id] * n, "round_no": pa.array(np.arange(1, n + 1), pa.int32()),
        "betting_closed_at": pa.array([dt.datetime.combine(d, dt.time(), dt.UTC) + dt.timedelta(seconds=30 * i)
                                       for i, d in enumerate(dates)], pa.timestamp("us", "UTC")),
        "status": list(status) if status is not None else ["settled"] * n,
        "dealer_id": list(dealers) if dealers is not None else ["D-1"] * n,
        "business_date": pa.array(dates, pa.date32()),
    }
    if pockets is not None:
        columns["pocket"] = pa.array([None if p is None else int(p) for p in pockets], pa.int8())
    else:
        columns["dice"] = pa.array([None if d is None else [int(x) for x in d] for d in dice], pa.list_(pa.int8()))
    ids = sorted(set(zip(shoe, wheels, strict=True)))
    shoes = pa.table({"shoe_id": [s for s, _ in ids], "table_id": [table_id] * len(ids),
                      "shoe_no": pa.array(range(1, len(ids) + 1), pa.int32()),
                      "opened_at": pa.array([start] * len(ids), pa.timestamp("us", "UTC")),
                      "decks": pa.array([0] * len(ids), pa.int8()),
                      "cards": pa.array([[]] * len(ids), pa.list_(pa.string())),
                      "equipment_id": pa.array([w for _, w in ids], pa.string())})
    bets = bets if bets is not None else pa.table({"bet_id": pa.array([], pa.string()),
                                                   "round_id": pa.array([], pa.string())})
    return TableData(table={"table_id": table_id, "game": game or ("roulette" if pockets is not None else "sic_bo"),
                            "ruleset": "", "currency": currency},
                     shoes=shoes, rounds=pa.table(columns), bets=bets,
                     findings=findings if findings is not None else EMPTY,
                     positions=pa.table({"round_id": pa.array([], pa.string())}))


def run(detector, tables, **settings):
    """The detector over some tables, as the pipeline runs it: features per table, concatenated, tests. Without
    history (history_days 0: each period alone, its p-value not spent over nightly looks) unless `settings` say
    otherwise: the statistics by hand and the minimum samples are those of one period (tests/test_surveillance_
    history.py tests the windows)."""
    features = pa.concat_tables([detector.features(t) for t in tables])
    return detector.tests(features, {**detector.settings, "history_days": 0, **settings})


def wheel_probabilities(hot=None, factor=2.0) -> np.ndarray:
    """Pocket probabilities (indexed by pocket number): the pockets `hot` at `factor` x 1/37, the others
    evenly lower."""
    p = np.full(37, 1 / 37)
    if hot:
        hot = list(hot)
        p[hot] *= factor
        rest = np.setdiff1d(np.arange(37), hot)
        p[rest] = (1 - p[hot].sum()) / rest.size
    return p


def wheels_table(rng, probabilities: list[np.ndarray], spins: int, table_id: str = "T-1") -> TableData:
    """One table whose sessions are many wheels W-0, W-1, ..., each `spins` spins of its probabilities."""
    pockets = np.concatenate([rng.choice(37, size=spins, p=p) for p in probabilities])
    wheels = np.repeat([f"W-{i}" for i in range(len(probabilities))], spins)
    return table_data(table_id, pockets=pockets, wheels=wheels)


# --- the wheel --------------------------------------------------------------------------------------

def test_wheel_order_is_the_single_zero_wheel():
    assert WHEEL_ORDER[0] == 0 and sorted(WHEEL_ORDER) == list(range(37))
    red = load_roulette_rules().red  # the ruleset's colours: red and black alternate all around the wheel
    colours = [n in red for n in WHEEL_ORDER[1:]]
    assert colours[0] and all(a != b for a, b in zip(colours, colours[1:], strict=False))  # 32 red, 15 black, ...


def test_wheel_bias_by_hand():
    # 111 spins (3 expected per pocket): pocket 17 twelve times, 32, 15 and 19 never, every other pocket 3 times
    counts = np.full(37, 3)
    counts[17], counts[[32, 15, 19]] = 12, 0
    table = table_data("T-1", pockets=np.repeat(np.arange(37), counts), wheels=["W-03"] * 111)
    [t] = run(WHEEL_BIAS, [table], min_spins=100)
    # chi2 = (12 - 3)^2 / 3 + 3 x (0 - 3)^2 / 3 = 27 + 9 = 36; for 36 (even) df the tail is
    # exp(-x/2) sum_{i<18} (x/2)^i / i!, here at x/2 = 18
    assert t.value == pytest.approx(36.0) and t.statistic == "chi2 = 36.0 (36 df)"
    assert t.p_value == pytest.approx(math.exp(-18) * sum(18**i / math.factorial(i) for i in range(18)), rel=1e-9)
    assert (t.subject, t.period, t.sample, t.min_sample, t.method) == ("W-03", "2026-11-28", 111, 100,
                                                                        "chi-square, 36 df")
    assert t.effect == pytest.approx(math.sqrt(36 / 111))
    assert t.detail == "wheel W-03, 2026-11-28: pocket 17 came 12 times in 111 spins (3.0 expected)"


def test_wheel_counts_only_settled_spins_with_a_legal_pocket_and_falls_back_to_the_table():
    pockets = [5, 5, None, 40, 7, 7]
    status = ["settled", "settled", "settled", "settled", "cancelled", "settled"]
    table = table_data("T-9", pockets=pockets, status=status, wheels=[None] * 6)
    f = WHEEL_BIAS.features(table)
    assert f.to_pylist() == [
        {"wheel": "T-9", "wheel_is_table": True, "business_date": "2026-11-28", "pocket": 5, "count": 2},
        {"wheel": "T-9", "wheel_is_table": True, "business_date": "2026-11-28", "pocket": 7, "count": 1}]
    [t] = WHEEL_BIAS.tests(f, {**WHEEL_BIAS.settings, "history_days": 0})
    assert t.p_value is None and t.sample == 3 and not t.tested
    assert t.detail == ("table T-9 (no wheel recorded), 2026-11-28: 3 spins, below the 1,900 this test needs "
                        "(80% power against one pocket at 2x)")


def test_wheel_sector_by_hand():
    # every pocket once, and the sector 32-15-19-4-21 (wheel positions 1-5) 3 more times each: 52 spins,
    # the best sector of 5 holds 4 x 5 = 20 (shifted by one: 17)
    counts = np.ones(37, dtype=int)
    counts[[32, 15, 19, 4, 21]] += 3
    table = table_data("T-1", pockets=np.repeat(np.arange(37), counts), wheels=["W-03"] * 52)
    [t] = run(WHEEL_SECTOR, [table], sectors={5: 50})
    tail = sum(Fraction(math.comb(52, i)) * Fraction(5, 37) ** i * Fraction(32, 37) ** (52 - i) for i in range(20, 53))
    assert t.value == 20 and t.p_value == pytest.approx(float(37 * tail), rel=1e-9)  # Bonferroni: 37 x the tail
    assert t.effect == pytest.approx(20 / (52 * 5 / 37))
    assert t.detail == ("wheel W-03, 2026-11-28: sector 32-15-19-4-21 (5 adjacent pockets) came 20 times in 52 spins "
                        "(7.0 expected)")
    assert t.method == "exact binomial, Bonferroni bound over the 37 sectors of 5 pockets"


def test_best_sector_wraps_around_zero():
    counts = np.zeros(37, dtype=int)
    counts[[3, 26, 0, 32]] = 5  # the last two pockets of WHEEL_ORDER and the first two
    assert best_sector(counts, 4) == (35, 20)
    assert best_sector(np.ones(37, dtype=int), 9) == (0, 9)  # a tie: the first clockwise from zero


def test_fair_wheels_are_not_flagged_across_many():
    rng = np.random.default_rng(20261128)
    table = wheels_table(rng, [wheel_probabilities()] * 400, spins=1900)
    bias, sector = run(WHEEL_BIAS, [table]), run(WHEEL_SECTOR, [table])
    p = np.array([t.p_value for t in bias])
    assert len(p) == 400 and 0.03 <= (p <= 0.05).mean() <= 0.07  # the chi-square holds its size
    assert not any(t.flagged for t in adjust(bias)) and not any(t.flagged for t in adjust(sector))
    assert all(t.tested for t in sector)  # 1,900 spins: both sector sizes tested
    # Bonferroni is conservative: the sector bound rejects less often than its nominal level
    assert (np.array([t.p_value for t in sector]) <= 0.05).mean() <= 0.05


def test_a_pocket_at_twice_its_probability_is_found_at_the_stated_sample():
    rng = np.random.default_rng(7)
    spins = WHEEL_BIAS.settings["min_spins"]
    table = wheels_table(rng, [wheel_probabilities([17])] * 20 + [wheel_probabilities()] * 80, spins=spins)
    rows = adjust(run(WHEEL_BIAS, [table]))
    biased = [t for t in rows if int(t.subject[2:]) < 20]
    fair = [t for t in rows if int(t.subject[2:]) >= 20]
    assert sum(t.flagged for t in biased) >= 13  # the stated power is 83% at p <= 0.001
    assert sum(t.flagged for t in fair) <= 1
    assert all(" pocket 17 came " in t.detail for t in biased if t.flagged)


@pytest.mark.parametrize(("k", "factor"), [(1, 2.0), (5, 1.5), (9, 1.3)])
def test_a_sector_at_its_design_strength_is_found_at_the_stated_sample(k, factor):
    # k = 1: the hottest pocket at 2x (1,200 spins); 5: a sector at +50% (750); 9: at +30% (900)
    rng = np.random.default_rng(k)
    spins = WHEEL_SECTOR.settings["sectors"][k]
    sector = WHEEL_ORDER[8:8 + k]  # 17-34-6-27-13...
    table = wheels_table(rng, [wheel_probabilities(sector, factor)] * 20 + [wheel_probabilities()] * 80, spins=spins)
    rows = [t for t in run(WHEEL_SECTOR, [table], sectors={k: spins}) if t.tested]
    flagged = {t.subject for t in adjust(rows) if t.flagged}
    assert len(rows) == 100
    assert len({f"W-{i}" for i in range(20)} & flagged) >= 13 and len(flagged - {f"W-{i}" for i in range(20)}) <= 1


def test_wheels_are_tested_per_day_or_over_the_run():
    rng = np.random.default_rng(3)
    days = [DAY] * 1000 + [DAY + dt.timedelta(days=1)] * 1000
    table = table_data("T-1", pockets=rng.integers(0, 37, 2000), dates=days, wheels=["W-1"] * 2000)
    by_day = run(WHEEL_BIAS, [table])
    assert [(t.period, t.sample, t.tested) for t in by_day] == [("2026-11-28", 1000, False),
                                                                ("2026-11-29", 1000, False)]
    [whole] = run(WHEEL_BIAS, [table], period="run")
    assert (whole.period, whole.sample, whole.tested) == ("2026-11-28..2026-11-29", 2000, True)


def test_one_wheel_at_two_tables_is_one_subject():
    rng = np.random.default_rng(4)
    a = table_data("T-1", pockets=rng.integers(0, 37, 1000), wheels=["W-7"] * 1000)
    b = table_data("T-2", pockets=rng.integers(0, 37, 1000), wheels=["W-7"] * 1000)
    [t] = run(WHEEL_BIAS, [a, b])
    assert (t.subject, t.sample, t.tested) == ("W-7", 2000, True)


# --- the dice ---------------------------------------------------------------------------------------

def rolls(rng, n: int, loaded_die: np.ndarray | None = None, triples: float = 0.0) -> np.ndarray:
    """n rolls of three dice: fair, or the first die with face probabilities `loaded_die`; with
    probability `triples` a roll is replaced by a random triple."""
    d = rng.integers(1, 7, size=(n, 3))
    if loaded_die is not None:
        d[:, 0] = rng.choice(np.arange(1, 7), size=n, p=loaded_die)
    forced = rng.random(n) < triples
    d[forced] = rng.integers(1, 7, size=(int(forced.sum()), 1))
    return d


def shakers_table(rng, specs: list[dict], n: int, table_id: str = "T-1") -> TableData:
    dice = np.concatenate([rolls(rng, n, **spec) for spec in specs])
    return table_data(table_id, dice=dice, wheels=np.repeat([f"S-{i}" for i in range(len(specs))], n))


def test_dice_bias_by_hand():
    # 10 rolls, 30 dice: a 6 first in every roll, 2 more 6s in place of the 1 and the 3 of the first two rolls
    dice = [[6, 1, 2], [6, 3, 4], [6, 5, 1], [6, 2, 3], [6, 4, 5]] * 2
    dice = [list(r) for r in dice]
    for r in dice[:2]:
        r[1] = 6
    table = table_data("T-1", dice=dice, wheels=["S-2"] * 10)
    counts = np.bincount(np.array(dice).ravel(), minlength=7)[1:]
    [t] = run(DICE_BIAS, [table], min_rolls=10)
    want = sum((c - 5) ** 2 / 5 for c in counts)  # 30 dice, 5 expected per face
    assert list(counts) == [3, 4, 3, 4, 4, 12] and want == pytest.approx(12.0)
    assert t.value == pytest.approx(12.0) and t.sample == 10 and t.method == "chi-square, 5 df"
    # 5 df: the tail of chi2 at 12 is erfc(sqrt 6) + exp(-6) sqrt(2 x 12 / pi) (1 + 12 / 3)
    assert t.p_value == pytest.approx(math.erfc(math.sqrt(6)) + math.exp(-6) * math.sqrt(24 / math.pi) * 5, rel=1e-9)
    assert t.detail == "shaker S-2, 2026-11-28: face 6 came 12 times in 10 rolls x 3 dice (5.0 expected)"


def test_dice_pairs_and_triples_by_hand():
    # 36 rolls, every one a triple (so the pair of any two dice is the double): 18 of 1-1-1, 18 of 2-2-2.
    # pairs: 1-1 and 2-2 18 times each (1 expected), the 4 other doubles 0 (1 expected), the 15 other pairs
    # 0 (2 expected): chi2 = 2 x 17^2 + 4 x 1 + 15 x 2 = 612; triples 36 of 36, P = (1/36)^36
    table = table_data("T-1", dice=[[1, 1, 1]] * 18 + [[2, 2, 2]] * 18, wheels=[None] * 36)
    pairs, triples = run(DICE_PAIRS, [table], min_rolls=36, min_rolls_triples=36)
    assert (pairs.detector, pairs.value, pairs.sample) == ("dice_pairs", pytest.approx(612.0), 36)
    assert pairs.method == "chi-square, 20 df (one pair per roll)"
    assert pairs.detail == ("table T-1 (no shaker recorded), 2026-11-28: pair 1-1 came 18 times in 36 rolls "
                            "(1.0 expected; one pair per roll)")
    assert (triples.detector, triples.value) == ("dice_triples", 36.0)
    assert triples.p_value == pytest.approx(float(Fraction(1, 36) ** 36), rel=1e-9)
    assert triples.detail == "table T-1 (no shaker recorded), 2026-11-28: 36 triples in 36 rolls (1.0 expected)"


def test_the_pair_is_chosen_by_the_round_ids_hash():
    assert pair_drop("R-1") == int.from_bytes(hashlib.sha256(b"R-1").digest()[:8], "big") % 3
    drops = np.bincount([pair_drop(f"T-1-r{i}") for i in range(30_000)], minlength=3) / 30_000
    assert drops == pytest.approx([1 / 3] * 3, abs=0.01)
    # roll 1-2-3 in round T-1-r0: the pair is the two dice left when the dropped one is taken out
    table = table_data("T-1", dice=[[1, 2, 3]], wheels=["S-1"])
    [row] = DICE_PAIRS.features(table).to_pylist()
    assert row["category"] == ["2-3", "1-3", "1-2"][pair_drop("T-1-r0")]


def test_a_recorder_that_sorts_the_dice_does_not_fake_a_pair_bias():
    # fair dice recorded in ascending order: dice 1 and 2 would be the two lowest (a biased pair law);
    # the hashed pair is two fair dice whatever the recorded order
    rng = np.random.default_rng(11)
    n = DICE_PAIRS.settings["min_rolls"]
    dice = np.sort(rng.integers(1, 7, size=(200 * n, 3)), axis=1)
    table = table_data("T-1", dice=dice, wheels=np.repeat([f"S-{i}" for i in range(200)], n))
    rows = [t for t in run(DICE_PAIRS, [table]) if t.detector == "dice_pairs"]
    p = np.array([t.p_value for t in rows])
    assert 0.025 <= (p <= 0.05).mean() <= 0.08 and not any(t.flagged for t in adjust(rows))
    first_two = np.sort(dice[:n, :2], axis=1)  # what "dice 1 and 2" would test on the first shaker
    seen = np.array([np.sum((first_two[:, 0] == a) & (first_two[:, 1] == b)) for a, b in
                     (tuple(map(int, name.split("-"))) for name in PAIR_NAMES)])
    from engine.surveillance.equipment import PAIR_PROBABILITY
    from engine.surveillance.stats import chi_square
    assert chi_square(seen, PAIR_PROBABILITY)[1] < 1e-10


def test_fair_shakers_are_not_flagged_across_many():
    rng = np.random.default_rng(5)
    table = shakers_table(rng, [{}] * 200, n=DICE_BIAS.settings["min_rolls"])
    rows = run(DICE_BIAS, [table]) + run(DICE_PAIRS, [table])
    for name in ("dice_bias", "dice_pairs", "dice_triples"):
        p = np.array([t.p_value for t in rows if t.detector == name])
        assert len(p) == 200 and (p <= 0.05).mean() <= 0.08, name
    assert not any(t.flagged for t in adjust(rows))


def test_a_die_showing_six_at_a_quarter_is_found_at_the_stated_sample():
    rng = np.random.default_rng(6)
    loaded = np.array([0.15] * 5 + [0.25])
    n = DICE_BIAS.settings["min_rolls"]
    table = shakers_table(rng, [{"loaded_die": loaded}] * 20 + [{}] * 80, n=n)
    rows = adjust(run(DICE_BIAS, [table]))
    flagged = {t.subject for t in rows if t.flagged}
    assert len(flagged & {f"S-{i}" for i in range(20)}) >= 13 and len(flagged - {f"S-{i}" for i in range(20)}) <= 1
    assert all(" face 6 came " in t.detail for t in rows if t.flagged and int(t.subject[2:]) < 20)


def test_triples_at_twice_their_rate_are_found_at_the_stated_sample():
    rng = np.random.default_rng(8)
    n = DICE_PAIRS.settings["min_rolls_triples"]
    table = shakers_table(rng, [{"triples": 1 / 35}] * 20 + [{}] * 80, n=n)  # 1/36 + 35/36 x 1/35 = 2/36
    rows = adjust([t for t in run(DICE_PAIRS, [table]) if t.detector == "dice_triples"])
    flagged = {t.subject for t in rows if t.flagged}
    assert len(flagged & {f"S-{i}" for i in range(20)}) >= 13 and len(flagged - {f"S-{i}" for i in range(20)}) <= 1


def test_a_combination_at_twice_its_probability_is_found_at_the_stated_sample():
    rng = np.random.default_rng(9)
    n = DICE_PAIRS.settings["min_rolls"]
    # a shaker whose 3-5 combination comes twice as often: with probability f a roll is forced to hold 3 and 5
    # beside a fair die, so the hashed pair is 3-5 with probability (1 - f) 2/36 + f (1/3 + 2/3 x 1/6) = 4/36
    # at f = 1/7
    specs = []
    for i in range(100):
        d = rolls(rng, n)
        if i < 20:
            forced = rng.random(n) < 1 / 7
            d[forced, 0], d[forced, 1] = 3, 5
        specs.append(d)
    table = table_data("T-1", dice=np.concatenate(specs), wheels=np.repeat([f"S-{i}" for i in range(100)], n))
    rows = adjust([t for t in run(DICE_PAIRS, [table]) if t.detector == "dice_pairs"])
    flagged = {t.subject for t in rows if t.flagged}
    assert len(flagged & {f"S-{i}" for i in range(20)}) >= 13 and len(flagged - {f"S-{i}" for i in range(20)}) <= 1
    assert all(" pair 3-5 came " in t.detail for t in rows if t.flagged and int(t.subject[2:]) < 20)


def test_rolls_without_three_legal_dice_are_left_out():
    table = table_data("T-1", dice=[[1, 2, 3], [1, 2], None, [1, 2, 7], [4, 4, 4], [1, 2, 3, 4]], wheels=["S-1"] * 6,
                       status=["settled"] * 4 + ["cancelled", "settled"])
    faces = {r["face"]: r["count"] for r in DICE_BIAS.features(table).to_pylist()}
    assert faces == {1: 1, 2: 1, 3: 1}
    assert sum(r["count"] for r in DICE_PAIRS.features(table).to_pylist()) == 1


# --- properties -------------------------------------------------------------------------------------

def shuffled(table: TableData, order: list[int]) -> TableData:
    idx = pa.array(order, pa.int64())
    return TableData(table.table, table.shoes.take(pa.array(list(reversed(range(table.shoes.num_rows))), pa.int64())),
                     table.rounds.take(idx), table.bets, table.findings, table.positions)


EQUIPMENT = (WHEEL_BIAS, WHEEL_SECTOR, DICE_BIAS, DICE_PAIRS)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), order_seed=st.integers(0, 2**32 - 1), days=st.integers(1, 3))
def test_every_statistic_is_invariant_to_the_order_of_rows(seed, order_seed, days):
    rng = np.random.default_rng(seed)
    n = 240
    dates = [DAY + dt.timedelta(days=int(d)) for d in rng.integers(0, days, n)]
    wheels = rng.choice(["W-1", "W-2", None], n)
    status = rng.choice(["settled", "cancelled"], n, p=[0.95, 0.05])
    wheel = table_data("T-1", pockets=rng.integers(0, 37, n), wheels=wheels, dates=dates, status=status)
    shaker = table_data("T-2", dice=rng.integers(1, 7, (n, 3)), wheels=wheels, dates=dates, status=status)
    order = list(np.random.default_rng(order_seed).permutation(n))
    small = {"min_spins": 20, "sectors": {5: 20, 9: 20}, "min_rolls": 20, "min_rolls_triples": 20}
    for detector, table in zip(EQUIPMENT, (wheel, wheel, shaker, shaker), strict=True):
        for period in ("day", "run"):
            want = run(detector, [table], period=period, **small)
            assert run(detector, [shuffled(table, order)], period=period, **small) == want
    # and the order of the tables' features does not matter either
    other = table_data("T-3", pockets=rng.integers(0, 37, n), wheels=wheels, dates=dates)
    assert run(WHEEL_BIAS, [wheel, other], min_spins=20) == run(WHEEL_BIAS, [other, wheel], min_spins=20)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_period_below_its_minimum_is_never_flagged(data):
    # however extreme the counts (a wheel that only ever lands on one pocket, dice that always show 6)
    n_spins = data.draw(st.integers(1, min(WHEEL_SECTOR.settings["sectors"].values()) - 1))
    pocket = data.draw(st.integers(0, 36))
    n_rolls = data.draw(st.integers(1, DICE_PAIRS.settings["min_rolls"] - 1))
    wheel = table_data("T-1", pockets=[pocket] * n_spins, wheels=["W-1"] * n_spins)
    shaker = table_data("T-2", dice=[[6, 6, 6]] * n_rolls, wheels=["S-1"] * n_rolls)
    rows = adjust(run(WHEEL_BIAS, [wheel]) + run(WHEEL_SECTOR, [wheel]) + run(DICE_BIAS, [shaker])
                  + run(DICE_PAIRS, [shaker]))
    assert rows and not any(t.flagged for t in rows)
    assert all(t.p_value is None and t.q_value is None and t.sample < t.min_sample for t in rows)
