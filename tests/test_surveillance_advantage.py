"""Advantage play (engine/surveillance/composition.py, advantage.py): the composition-dependent return of
every side bet against hand work and the exact enumeration, and the detector on simulated tables with a
counting account among ordinary ones."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import replace
from datetime import date
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import CARD_CODES, new_shoe
from engine.games.baccarat.rtp import bet_rtp
from engine.games.baccarat.ruleset import load_ruleset, ruleset_ids
from engine.games.baccarat.shoe import replay_shoe
from engine.games.blackjack.rtp import pair_bet_rtp
from engine.games.blackjack.rules import load_blackjack_rules
from engine.surveillance.advantage import (
    ADVANTAGE_PLAY,
    BACCARAT_FAMILIES,
    FEATURES_SCHEMA,
    RANK_SCREENED,
    ReferenceShoes,
    advantage_features,
    advantage_tests,
    moment_kind,
    null_tail,
    reference_shoes,
)
from engine.surveillance.composition import (
    BaccaratReturns,
    baccarat_returns,
    blackjack_pair_return,
    card_indices,
    counts_of,
    exact_returns,
    hi_lo_true_count,
    pair_states,
    remaining_counts,
    side_bet_moments,
)
from engine.surveillance.detector import TableData
from engine.surveillance.tests import adjust, as_test_columns

EXTENDED = load_ruleset("baccarat_8d_extended")
STANDARD = load_ruleset("baccarat_8d_standard")


# --- simulated tables ---------------------------------------------------------------------------------


def baccarat_day(seed: int, rounds: int = 200, accounts: int = 40, counter: dict | None = None,
                 ruleset=EXTENDED, table_id: str = "BAC-1", day: date = date(2026, 11, 28),
                 bet_share: float = 0.25) -> TableData:
    """One table's day dealt by the rule from shuffled shoes (cut card 40-80 cards from the end), with
    `accounts` ordinary accounts each betting a random side bet on ~`bet_share` of rounds at its own
    stake, blind to the cards, and optionally a counting account:
    counter = {"account": id, "bets": (codes...), "threshold": RTP or "gain": RTP points, "stake": minor units,
               "mode": "only" (bets a code only when its moment is favourable: its return on the remaining
               cards above `threshold`, or above the code's full-shoe return by `gain` points) or "5x" (bets
               every round it plays, 5x the stake when the moment is favourable), "share": rounds it plays}."""
    rng = np.random.default_rng(seed)
    table = baccarat_returns(ruleset)
    mode = next(iter(ruleset.modes))
    side = [c for c in ruleset.modes[mode] if c in BACCARAT_FAMILIES]
    shoes, round_rows, positions, bets = [], [], [], []
    base = rng.choice([100, 200, 500, 1000, 2500], size=accounts)
    n_rounds = 0
    shoe_no = 0
    full = table.returns(counts_of(new_shoe(ruleset.decks)))
    while n_rounds < rounds:
        shoe_no += 1
        shoe_id = f"{table_id}-{day:%Y%m%d}-S{shoe_no:02d}"
        idx = rng.permutation(np.repeat(np.arange(52), ruleset.decks))
        cards = [CARD_CODES[i] for i in idx]
        cut = len(cards) - int(rng.integers(40, 81))
        dealt = replay_shoe(cards, ruleset.shoe, cut).rounds
        shoes.append((shoe_id, shoe_no, cards))
        moments = table.returns(remaining_counts(idx, np.array([r.start for r in dealt])))
        for r, m in zip(dealt, moments, strict=True):
            rid = f"{shoe_id}-R{r.round_no:03d}"
            round_rows.append((rid, shoe_id, r.round_no, "settled", day))
            positions.append((rid, r.start))
            offered = [c for c in side if (ruleset.bets[c].cutoff or 10**9) >= r.round_no]
            for a in np.flatnonzero(rng.random(accounts) < bet_share):
                if offered:
                    code = offered[int(rng.integers(len(offered)))]
                    bets.append((rid, f"ACC-{a:03d}", code, mode, int(base[a])))
            if counter:
                for code in counter["bets"]:
                    if code not in offered or rng.random() >= counter.get("share", 1.0):
                        continue
                    k = table.column(code, mode)
                    hot = (m[k] > counter["threshold"] if "threshold" in counter
                           else m[k] - full[k] > counter["gain"] / 100)
                    if counter["mode"] == "only" and hot:
                        bets.append((rid, counter["account"], code, mode, counter["stake"]))
                    elif counter["mode"] == "5x":
                        bets.append((rid, counter["account"], code, mode, counter["stake"] * (5 if hot else 1)))
        n_rounds += len(dealt)
    return TableData(
        table={"table_id": table_id, "game": "baccarat", "ruleset": ruleset.id, "currency": "EUR"},
        shoes=pa.table({"shoe_id": [s[0] for s in shoes], "shoe_no": [s[1] for s in shoes],
                        "decks": [ruleset.decks] * len(shoes), "cards": [s[2] for s in shoes]}),
        rounds=pa.table({"round_id": [r[0] for r in round_rows], "shoe_id": [r[1] for r in round_rows],
                         "round_no": pa.array([r[2] for r in round_rows], pa.int32()),
                         "status": [r[3] for r in round_rows], "business_date": [r[4] for r in round_rows]}),
        bets=pa.table({"bet_id": [f"B{i}" for i in range(len(bets))], "round_id": [b[0] for b in bets],
                       "account_id": [b[1] for b in bets], "bet_type": [b[2] for b in bets],
                       "mode": [b[3] for b in bets], "stake": pa.array([b[4] for b in bets], pa.int64())}),
        findings=pa.table({"kind": pa.array([], pa.string()), "round_id": pa.array([], pa.string()),
                           "bet_id": pa.array([], pa.string())}),
        positions=pa.table({"round_id": [p[0] for p in positions],
                            "shoe_position": pa.array([p[1] for p in positions], pa.int64())}),
    )


def blackjack_day(seed: int, rounds: int = 600, accounts: int = 12, counter: str | None = None,
                  table_id: str = "BJ-1", day: date = date(2026, 11, 28)) -> TableData:
    """A blackjack table's day: shoes of 8 decks (1 burned card, cut 60-100 cards from the end), rounds
    that take 10-25 cards each (the detector reads only where a round starts), a MAIN bet of every seated
    account and a PAIR beside it now and then; a counting account stakes 5x its MAIN when the Hi-Lo true
    count is +2 or more."""
    rng = np.random.default_rng(seed)
    rules = load_blackjack_rules()
    shoes, round_rows, positions, bets = [], [], [], []
    shoe_no = n = 0
    while n < rounds:
        shoe_no += 1
        shoe_id = f"{table_id}-S{shoe_no:02d}"
        idx = rng.permutation(np.repeat(np.arange(52), rules.decks))
        shoes.append((shoe_id, [CARD_CODES[i] for i in idx]))
        position, r, cut = rules.burn_cards, 0, len(idx) - int(rng.integers(60, 101))
        while position < cut:
            r += 1
            rid = f"{shoe_id}-R{r:03d}"
            round_rows.append((rid, shoe_id, r))
            positions.append((rid, position))
            tc = hi_lo_true_count(idx, rules.burn_cards, np.array([position]))[0]
            for a in np.flatnonzero(rng.random(accounts) < 0.5):
                bets.append((rid, f"BJ-{a:03d}", "MAIN", 1000))
                if rng.random() < 0.2:
                    bets.append((rid, f"BJ-{a:03d}", "PAIR", 200))
            if counter:
                bets.append((rid, counter, "MAIN", 5000 if tc >= 2 else 1000))
            position += int(rng.integers(10, 26))
        n += r
    return TableData(
        table={"table_id": table_id, "game": "blackjack", "ruleset": rules.id, "currency": "EUR"},
        shoes=pa.table({"shoe_id": [s[0] for s in shoes], "cards": [s[1] for s in shoes]}),
        rounds=pa.table({"round_id": [r[0] for r in round_rows], "shoe_id": [r[1] for r in round_rows],
                         "round_no": pa.array([r[2] for r in round_rows], pa.int32()),
                         "status": ["settled"] * len(round_rows), "business_date": [day] * len(round_rows)}),
        bets=pa.table({"bet_id": [f"B{i}" for i in range(len(bets))], "round_id": [b[0] for b in bets],
                       "account_id": [b[1] for b in bets], "bet_type": [b[2] for b in bets],
                       "stake": pa.array([b[3] for b in bets], pa.int64())}),
        findings=pa.table({"kind": pa.array([], pa.string())}),
        positions=pa.table({"round_id": [p[0] for p in positions],
                            "shoe_position": pa.array([p[1] for p in positions], pa.int64())}),
    )


# --- the composition-dependent return: hand work ------------------------------------------------------


def _tens_and_sixes(tens: int, sixes: int) -> dict[str, int]:
    """A shoe of `tens` ten-valued cards (T, J, Q, K in turn, spade) and `sixes` sixes."""
    shoe: Counter[str] = Counter()
    for i in range(tens):
        shoe["TJQK"[i % 4] + "S"] += 1
    for _ in range(sixes):
        shoe["6H"] += 1
    return dict(shoe)


def test_one_six_among_tens_by_hand():
    # N cards: tens and one six. Where the six lands decides the round (every other card is worth 0):
    #   P1 or P2: Player 6 stands, Banker 0 draws a ten: Player wins 6-0;
    #   B1 or B2: Player 0 draws a ten (third card 0), Banker 6 stands on a third card 0: Banker wins 6 on 2 cards;
    #   card 5: Player draws it, 6; Banker 0 draws a ten: Player wins;
    #   card 6: Player drew a ten, Banker 0 draws the six: Banker wins 6 on 3 cards;
    #   later: 0-0 on three cards each, a tie.
    # Each position has chance 1/N: LUCKY_SIX (000: 12:1 on 2 Banker cards, 20:1 on 3) returns (2 * 13 + 21) / N,
    # 001's (12:1 if nobody drew, 20:1 if anyone did: here someone always drew) 3 * 21 / N; TIE 9 (N - 6) / N.
    for n in (7, 12, 40):
        shoe = counts_of(_tens_and_sixes(n - 1, 1))
        moments = side_bet_moments(EXTENDED, shoe)
        assert moments["LUCKY_SIX"] == pytest.approx(47 / n, abs=1e-12)
        assert moments["LUCKY_SIX_2CARD"] == pytest.approx(2 * 23 / n, abs=1e-12)
        assert moments["LUCKY_SIX_3CARD"] == pytest.approx(51 / n, abs=1e-12)
        assert moments["TIE"] == pytest.approx(9 * (n - 6) / n, abs=1e-12)
        assert side_bet_moments(STANDARD, shoe)["LUCKY_SIX"] == pytest.approx(63 / n, abs=1e-12)


def test_every_six_removed_by_hand():
    # The same shoes with every 6 removed are all tens: every hand 0-0 on three cards, a tie every round.
    # LUCKY_SIX can never win (return 0), TIE always does (return 9 = 8:1 and the stake).
    for n in (7, 12, 40):
        moments = side_bet_moments(EXTENDED, counts_of(_tens_and_sixes(n - 1, 0)))
        assert moments["TIE"] == pytest.approx(9.0, abs=1e-12)
        for code in ("LUCKY_SIX", "LUCKY_SIX_2CARD", "LUCKY_SIX_3CARD", "LUCKY_SEVEN", "SUPER_LUCKY_SEVEN",
                     "PLAYER_NATURAL", "BANKER_NATURAL", "PLAYER_BONUS", "BANKER_BONUS"):
            assert moments[code] == pytest.approx(0.0, abs=1e-12), code


def test_every_six_removed_from_eight_decks_against_the_enumeration():
    # 8 decks without their 32 sixes: the Banker's 6 only from 0+6 is gone, 1+5, 2+4, 3+3, 7+9, 8+8 remain.
    shoe = Counter(c for c in new_shoe(8) if c[0] != "6")
    bets = [(code, "commission") for code in ("LUCKY_SIX", "LUCKY_SIX_2CARD", "LUCKY_SIX_3CARD", "TIE",
                                              "SUPER_LUCKY_SEVEN")]
    exact = exact_returns(EXTENDED, bets, shoe)
    fast = BaccaratReturns(EXTENDED, bets).returns(counts_of(shoe))
    assert fast == pytest.approx([float(x) for x in exact], abs=1e-12)
    full = side_bet_moments(EXTENDED, new_shoe(8))
    assert fast[0] < full["LUCKY_SIX"] - 0.2  # without sixes Lucky Six loses a quarter of its return


def test_shoe_of_only_tens_by_hand():
    # 32 tens of spades: every hand 0-0 (a tie), every hand's first two cards a pair of ranks and of codes.
    moments = side_bet_moments(EXTENDED, {"TS": 32})
    assert moments["TIE"] == pytest.approx(9.0, abs=1e-12)
    assert moments["PLAYER_PAIR"] == moments["BANKER_PAIR"] == pytest.approx(12.0, abs=1e-12)
    assert moments["ANY_PAIR"] == pytest.approx(6.0, abs=1e-12)
    assert moments["PERFECT_PAIR"] == pytest.approx(26.0, abs=1e-12)
    # 8 of each of T spades, hearts, diamonds, clubs (32 cards, one rank): every hand a pair of ranks; a pair
    # of codes for the Player with chance 4 * 8 * 7 / (32 * 31) = 7/31. Given the Player's two codes differ,
    # the Banker's 30 cards hold two codes 7 times and two 8 times: sum n(n-1) = 2*42 + 2*56 = 196, so
    # P(no perfect pair) = 24/31 * (1 - 196 / (30 * 29)); PERFECT_PAIR (25:1, paid once) returns 26 (1 - that).
    shoe = {"TS": 8, "TH": 8, "TD": 8, "TC": 8}
    moments = side_bet_moments(EXTENDED, shoe)
    p_perfect = 1 - Fraction(24, 31) * (1 - Fraction(196, 30 * 29))
    assert moments["PERFECT_PAIR"] == pytest.approx(float(26 * p_perfect), abs=1e-12)
    assert moments["PLAYER_PAIR"] == pytest.approx(12.0, abs=1e-12)
    assert moments["TIE"] == pytest.approx(9.0, abs=1e-12)


def test_pair_states_by_hand():
    # Two ranks, 2 cards each, one code each (AS AS KS KS): the Player pairs with chance 2 * 2 / (4 * 3) = 1/3,
    # then the Banker's two are the other rank's pair; otherwise P1 P2 are an A and a K and so are B1 B2.
    states = pair_states(counts_of({"AS": 2, "KS": 2}))
    want = np.zeros(9)
    want[3 * 2 + 2] = 1 / 3  # both hands a pair of codes
    want[0] = 2 / 3
    assert states == pytest.approx(want, abs=1e-15)
    assert pair_states(counts_of(new_shoe(8))).sum() == pytest.approx(1.0, abs=1e-15)


# --- the composition-dependent return: the exact enumeration and the published figures -------------------


@pytest.mark.parametrize("ruleset_id", ruleset_ids())
def test_full_shoe_matches_the_published_rtp(ruleset_id):
    rs = load_ruleset(ruleset_id)
    table = baccarat_returns(rs)
    got = table.returns(counts_of(new_shoe(rs.decks)))
    for (code, mode), value in zip(table.bets, got, strict=True):
        assert value == pytest.approx(float(bet_rtp(rs, code, mode).rtp), abs=1e-12), (code, mode)


@pytest.mark.parametrize("seed", range(4))
def test_random_small_compositions_match_the_enumeration(seed):
    rnd = random.Random(seed)
    rs = load_ruleset(ruleset_ids()[seed % len(ruleset_ids())]) if seed % 2 else EXTENDED
    shoe = Counter(rnd.sample(new_shoe(2), rnd.randint(6, 26)))
    table = baccarat_returns(rs)
    exact = exact_returns(rs, table.bets, shoe)
    assert table.returns(counts_of(shoe)) == pytest.approx([float(x) for x in exact], abs=1e-12)


def test_batched_and_cached_returns_agree_with_one_at_a_time():
    rng = np.random.default_rng(0)
    shoe = rng.permutation(np.repeat(np.arange(52), 8))
    counts = remaining_counts(shoe, np.array([0, 50, 50, 200, 400, 411]))
    table = BaccaratReturns(EXTENDED)
    batch = table.returns(counts)
    assert batch[1] == pytest.approx(batch[2], abs=0)
    for row, c in zip(batch, counts, strict=True):
        assert BaccaratReturns(EXTENDED).returns(c) == pytest.approx(row, abs=1e-14, nan_ok=True)
    assert np.isnan(table.returns(counts_of({"TS": 5}))).all()  # 5 cards cannot always complete a round


def test_remaining_counts_and_card_indices():
    cards = ["AS", "KH", "XX", "AS"]
    idx = card_indices(cards)
    assert idx.tolist() == [CARD_CODES.index("AS"), CARD_CODES.index("KH"), -1, CARD_CODES.index("AS")]
    rem = remaining_counts(idx, np.array([0, 1, 4]))
    assert rem[0][CARD_CODES.index("AS")] == 2 and rem[0].sum() == 3 and rem[1].sum() == 2 and rem[2].sum() == 0


def test_side_bet_moments_names_each_side_bet_and_tie():
    moments = side_bet_moments(STANDARD, new_shoe(8))
    assert set(moments) == {"TIE", "PLAYER_PAIR", "BANKER_PAIR", "LUCKY_SIX", "PLAYER_NATURAL", "BANKER_NATURAL"}
    assert moments["PLAYER_PAIR"] == pytest.approx(float(bet_rtp(STANDARD, "PLAYER_PAIR", "commission").rtp))


# --- blackjack -----------------------------------------------------------------------------------------


def test_blackjack_pair_by_hand_and_full_shoe():
    rules = load_blackjack_rules()
    odds = rules.pair_odds  # mixed 6:1, coloured 12:1, perfect 25:1
    assert blackjack_pair_return(odds, counts_of({"AS": 2})) == pytest.approx(26.0)
    assert blackjack_pair_return(odds, counts_of({"AS": 1, "AC": 1})) == pytest.approx(13.0)  # both black
    assert blackjack_pair_return(odds, counts_of({"AS": 1, "AH": 1})) == pytest.approx(7.0)  # black and red
    assert blackjack_pair_return(odds, counts_of({"AS": 1, "KS": 1})) == pytest.approx(0.0)
    # AS AS AH: ordered pairs 6; AS AS twice (perfect), AS AH / AH AS four times (mixed)
    assert blackjack_pair_return(odds, counts_of({"AS": 2, "AH": 1})) == pytest.approx((2 * 26 + 4 * 7) / 6)
    full = blackjack_pair_return(odds, counts_of(new_shoe(rules.decks)))
    assert full == pytest.approx(float(pair_bet_rtp(rules)), abs=1e-12)


def test_hi_lo_true_count_by_hand():
    cards = ["9D", "2H", "3D", "KC", "7S"] + ["8C"] * 99  # 104 cards: two decks
    shoe = card_indices(cards)
    # burned 9D unseen; at position 4 the player has seen 2H 3D KC: +1 +1 -1 = 1, with 104 - 3 cards unseen
    tc = hi_lo_true_count(shoe, 1, np.array([0, 1, 4, 5]))
    assert tc == pytest.approx([0.0, 0.0, 1 / (101 / 52), 1 / (100 / 52)])


# --- the detector --------------------------------------------------------------------------------------

LUCKY = tuple(c for c, f in BACCARAT_FAMILIES.items() if f == "LUCKY")
SETTINGS = {"reference_shoes": 200, "history_days": 0}  # (the statistic's own p-values: no look spent)
COUNTER = {"account": "COUNTER", "stake": 1000, "mode": "only", "threshold": 1.0, "bets": LUCKY}


@pytest.fixture(scope="module")
def counted_day():
    """A 2,400-round day (the most a table deals, pitboss.recorder.config.MAX_ROUNDS_PER_DAY) at one table
    of 000 with 40 ordinary accounts and one that bets the lucky sixes and sevens only when their
    return on the remaining cards is above 100%."""
    day = baccarat_day(3, rounds=2400, counter=COUNTER)
    return day, advantage_features(day)


def test_a_counting_account_is_found_and_ordinary_ones_are_not(counted_day):
    _, features = counted_day
    tests = adjust(advantage_tests(features, SETTINGS))
    flagged = [t for t in tests if t.flagged]
    assert [(t.subject, t.effect > 10) for t in flagged] == [("COUNTER", True)]
    t = flagged[0]
    assert t.sample >= ADVANTAGE_PLAY.settings["min_bets"] and t.p_value < 1e-8 and t.money > 0
    assert "LUCKY" in t.detail and "seed 0" in t.method and "the rank of each moment among its own shoe" in t.method
    assert t.statistic.startswith("stake-weighted rank 0.") and 0.5 < t.value <= 1
    ordinary = [x.p_value for x in tests if x.subject != "COUNTER" and x.p_value is not None]
    # blind accounts: no small p-value, and not all screened out (the screen gives p = 1 to every account at or
    # below its baseline rank, over half of them here: the median p is above 1/2)
    ordinary = np.array(ordinary)
    assert len(ordinary) > 100 and ordinary.min() > 1e-4 and np.mean(ordinary <= 0.05) < 0.1
    assert 0.25 < np.mean(ordinary <= 0.5) < 0.6


@pytest.mark.parametrize(("seed", "rounds", "counter"), [
    (7, 1200, {"account": "COUNTER", "stake": 1000, "bets": LUCKY, "mode": "only", "gain": 5.0}),  # only when 5
    (9, 2400, {"account": "COUNTER", "stake": 1000, "bets": LUCKY, "mode": "5x", "gain": 5.0}),  # points up; 5x then
], ids=["only-when-5-points-up", "5x-when-5-points-up"])
def test_counters_of_the_measured_strengths_are_found(seed, rounds, counter):
    # bench/surveillance_advantage.py: the first is found on every simulated day of 1,200 rounds; the second,
    # whose 5x stakes are a small share of its money, on about half of the days of 2,400 rounds (this is one)
    day = baccarat_day(seed, rounds=rounds, counter=counter)
    tests = adjust(advantage_tests(advantage_features(day), SETTINGS))
    assert [t.subject for t in tests if t.flagged] == ["COUNTER"]


def test_a_pair_counter_at_a_table_without_cutoff_is_found():
    # 004's PLAYER_PAIR has no cutoff, so it is offered late in the shoe where the pairs' return moves most;
    # an account that bets it (100.00) only above 93% RTP on a busy table's day (2,000 rounds) is found
    # (bench/surveillance_advantage.py: on 8 of 8 days of 2,400 rounds; above 100% RTP on 5 of 8)
    day = baccarat_day(3000, rounds=2000, ruleset=load_ruleset("baccarat_live_pairs"),
                       counter={"account": "COUNTER", "stake": 10_000, "mode": "only", "threshold": 0.93,
                                "bets": ("PLAYER_PAIR",)})
    tests = adjust(advantage_tests(advantage_features(day), SETTINGS))
    assert [(t.subject, "PAIRS" in t.detail) for t in tests if t.flagged] == [("COUNTER", True)]


def test_a_card_counter_at_blackjack_is_found():
    day = blackjack_day(2, rounds=1500, counter="COUNTER")
    tests = adjust(advantage_tests(advantage_features(day), SETTINGS))
    flagged = [t for t in tests if t.flagged]
    assert [t.subject for t in flagged] == ["COUNTER"]
    assert flagged[0].money is None and "true count" in flagged[0].statistic


def test_below_the_minimum_sample_nothing_is_tested(counted_day):
    _, features = counted_day
    tests = advantage_tests(features, {**SETTINGS, "min_bets": 10_000})
    assert tests and all(t.p_value is None and not t.tested and "not tested" in t.method for t in tests)
    assert not any(t.flagged for t in adjust(tests))


def test_features_hold_every_eligible_round_and_the_bets(counted_day):
    day, features = counted_day
    rounds = features.filter(pa.compute.is_null(features["account_id"]))
    bets = features.filter(pa.compute.is_valid(features["account_id"]))
    assert bets.num_rows == day.bets.num_rows  # every simulated bet is on an eligible round
    # LUCKY_SIX's cutoff is 50: its round rows stop there; TIE has none.
    lucky = rounds.filter(pa.compute.equal(rounds["bet_type"], "LUCKY_SIX"))
    tie = rounds.filter(pa.compute.equal(rounds["bet_type"], "TIE"))
    assert pa.compute.max(lucky["round_no"]).as_py() == 50 and tie.num_rows == day.rounds.num_rows
    assert set(features["family"].to_pylist()) == {"PAIRS", "LUCKY", "NATURALS", "TIE"}


def test_a_cancelled_or_unpositioned_round_is_left_out():
    day = baccarat_day(0, rounds=60, accounts=5)
    first, last = day.rounds["round_id"][0].as_py(), day.positions["round_id"][-1].as_py()
    status = ["cancelled" if r == first else "settled" for r in day.rounds["round_id"].to_pylist()]
    day = replace(day, rounds=day.rounds.set_column(3, "status", pa.array(status)),
                  positions=day.positions.slice(0, day.positions.num_rows - 1))
    features = advantage_features(day)
    kept = set(features["round_id"].to_pylist())
    assert first not in kept and last not in kept
    assert len(kept) == day.rounds.num_rows - 2


def test_other_games_have_no_features():
    day = baccarat_day(0, rounds=10, accounts=2)
    assert advantage_features(replace(day, table={**day.table, "game": "roulette"})).num_rows == 0


# --- properties ----------------------------------------------------------------------------------------


def _by_subject(tests):
    return {(t.subject, t.detail.split(" bets,")[0]): (t.p_value, t.value, t.effect, t.money, t.sample)
            for t in tests}


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_statistic_is_invariant_to_the_order_of_unrelated_rows(counted_day, seed):
    _, features = counted_day
    order = np.random.default_rng(seed).permutation(features.num_rows)
    shuffled = features.take(pa.array(order))
    assert _by_subject(advantage_tests(shuffled, SETTINGS)) == _by_subject(advantage_tests(features, SETTINGS))


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_permuting_bettors_removes_the_advantage_signal(counted_day, seed):
    day, features = counted_day
    before = {t.subject: t for t in advantage_tests(features, SETTINGS) if "LUCKY" in t.detail}
    assert before["COUNTER"].p_value < 1e-8
    accounts = day.bets["account_id"].to_numpy(zero_copy_only=False)
    shuffled = replace(day, bets=day.bets.set_column(
        2, "account_id", pa.array(np.random.default_rng(seed).permutation(accounts))))
    after = adjust(advantage_tests(advantage_features(shuffled), SETTINGS))
    assert not any(t.flagged for t in after)
    assert min(t.p_value for t in after if t.p_value is not None) > 1e-6


# --- the null's tail ------------------------------------------------------------------------------------


def test_null_tail_by_hand():
    coin = np.array([-1.0, 1.0])
    rng = np.random.default_rng(0)
    # three fair coins at their largest: exactly 1/8
    tail = null_tail([coin] * 3, 3.0, rng)
    assert tail.p_value == pytest.approx(1 / 8) and tail.method.startswith("exact")
    # P(sum >= 1) = P(2 or 3 heads) = 1/2, from plain draws
    tail = null_tail([coin] * 3, 1.0, rng, stage_draws=9_999)
    assert tail.p_value == pytest.approx(0.5, abs=0.02) and "importance" not in tail.method
    # 20 coins, sum >= 16 (18 heads or more): (190 + 20 + 1) / 2**20, far beyond 199 plain draws
    tail = null_tail([coin] * 20, 16.0, rng)
    assert "importance" in tail.method
    assert tail.p_value == pytest.approx(211 / 2**20, rel=0.1)


def test_side_bet_moments_by_ruleset_id_and_for_blackjack():
    assert side_bet_moments("baccarat_8d_standard", {"TS": 32})["TIE"] == pytest.approx(9.0)
    rules = load_blackjack_rules()
    assert side_bet_moments(rules, {"AS": 2}) == {"PAIR": pytest.approx(26.0)}
    assert side_bet_moments(rules.id, new_shoe(8))["PAIR"] == pytest.approx(float(pair_bet_rtp(rules)), abs=1e-12)


def test_a_shoe_reshuffled_every_hand_has_nothing_to_count():
    mini = load_ruleset("mini_baccarat_6d")
    day = baccarat_day(0, rounds=10, accounts=3)
    day = replace(day, table={**day.table, "ruleset": mini.id})
    assert advantage_features(day).num_rows == 0


def test_the_screen_changes_no_flag_and_no_flagged_q_value(counted_day):
    """Accounts whose statistic does not exceed its baseline get p = 1 without draws (issue 32): the
    Benjamini-Hochberg flags and the flagged rows' q-values are those of drawing for every account."""
    _, features = counted_day
    new = adjust(advantage_tests(features, SETTINGS))
    old = adjust(advantage_tests(features, {**SETTINGS, "_screen": False}))
    assert [(t.subject, t.flagged) for t in new] == [(t.subject, t.flagged) for t in old]
    assert [(t.subject, t.q_value) for t in new if t.flagged] == [(t.subject, t.q_value) for t in old if t.flagged]
    screened = [(a, b) for a, b in zip(new, old, strict=True) if a.method == RANK_SCREENED]
    assert screened and all(a.p_value == 1.0 and b.p_value <= 1.0 for a, b in screened)
    # screened: the tested statistic (the rank) at or below its baseline, whatever the moments' effect
    ranks = [re.match(r"stake-weighted rank ([0-9.]+) .* vs ([0-9.]+) expected", a.statistic) for a, _ in screened]
    assert all(float(m[1]) <= float(m[2]) for m in ranks)
    # every other row: the same p-value as before, draw for draw
    assert [(t.subject, t.p_value) for t in new if t.method != RANK_SCREENED] == [
        (b.subject, b.p_value) for a, b in zip(new, old, strict=True) if a.method != RANK_SCREENED]


def test_reference_moments_computed_lazily_equal_the_full_table():
    kind = moment_kind("baccarat", "baccarat_8d_standard")
    full = reference_shoes(kind, 7, 123)
    lazy = ReferenceShoes(kind, full.decks, np.full_like(full.moments, np.nan), np.full_like(full.mean, np.nan),
                          np.zeros(full.depths, dtype=bool))
    depths = np.array([0, 5, 37, 200, 400, 416])
    lazy.ensure(depths)
    np.testing.assert_allclose(lazy.moments[:, depths], full.moments[:, depths], rtol=1e-12)
    np.testing.assert_allclose(lazy.mean[depths], full.mean[depths], rtol=1e-12)
    assert lazy.done.sum() == len(depths) and np.isnan(lazy.mean[1]).all()


@pytest.mark.parametrize("ruleset", ["baccarat_8d_extended", "blackjack_8d_live"])
def test_reference_moments_a_few_depths_at_a_time_equal_all_at_once(monkeypatch, ruleset):
    """ReferenceShoes.ensure computes REFERENCE_CHUNK compositions at a time (every shuffle at a few depths: the
    peak memory stays flat); in chunks of 2 depths of 7 shuffles, every depth (the last ones, undefined, too) is
    bit for bit what one computation of every depth gives."""
    from engine.surveillance import advantage

    kind = moment_kind(ruleset.split("_")[0], ruleset)
    decks = reference_shoes(kind, 7, 5, depths=np.zeros(0, dtype=np.int64)).decks

    def fresh() -> ReferenceShoes:
        size = 52 * kind.decks + 1
        return ReferenceShoes(kind, decks, np.full((7, size, len(kind.bet_types)), np.nan),
                              np.full((size, len(kind.bet_types)), np.nan), np.zeros(size, dtype=bool))

    monkeypatch.setattr(advantage, "REFERENCE_CHUNK", 10**9)
    whole = fresh()
    whole.ensure(np.arange(whole.depths))
    monkeypatch.setattr(advantage, "REFERENCE_CHUNK", 2 * 7 + 1)
    chunked = fresh()
    chunked.ensure(np.arange(chunked.depths)[::-1])
    assert chunked.done.all() and not np.isnan(chunked.moments).any()
    assert chunked.moments.tobytes() == whole.moments.tobytes() and chunked.mean.tobytes() == whole.mean.tobytes()


# --- the statistic conditioned on the shoe (issue 43 § 3) --------------------------------------------------

PAIRS_KIND = moment_kind("baccarat", "baccarat_live_pairs")
EVERY_5_CARDS = np.arange(0, 360, 5)


def pair_features(seed: int, strategy: str, accounts: int, shoes: int = 4, per_shoe: int = 4,
                  depths: np.ndarray = EVERY_5_CARDS) -> pa.Table:
    """Features of `accounts` tables (a table per account, so their p-values are independent), each
    dealing `shoes` shuffled 8-deck shoes of 004 with a round every 5 cards (depths fixed: only the cards
    are random), PLAYER_PAIR's exact moment at each, and the table's one account betting PLAYER_PAIR
    (10.00) on `per_shoe` rounds of each shoe: "late" its last rounds, "steady" rounds drawn at random,
    "favourable" the rounds of the shoe's highest moments."""
    rng = np.random.default_rng(seed)
    col = PAIRS_KIND.bet_types.index("PLAYER_PAIR")
    k, n_shoes = depths.size, accounts * shoes
    decks = [rng.permutation(np.repeat(np.arange(52), PAIRS_KIND.decks)) for _ in range(n_shoes)]
    moments = PAIRS_KIND.compute(decks, np.repeat(np.arange(n_shoes), k), np.tile(depths, n_shoes))[:, col]
    moments = moments.reshape(n_shoes, k)
    if strategy == "late":
        bet = np.tile(np.arange(k - per_shoe, k), (n_shoes, 1))
    elif strategy == "steady":
        bet = np.array([rng.choice(k, per_shoe, replace=False) for _ in range(n_shoes)])
    else:
        bet = np.argsort(-moments, axis=1, kind="stable")[:, :per_shoe]
    shoe = np.concatenate([np.repeat(np.arange(n_shoes), k), np.repeat(np.arange(n_shoes), per_shoe)])
    index = np.concatenate([np.tile(np.arange(k), n_shoes), bet.ravel()])
    is_bet = np.arange(shoe.size) >= n_shoes * k
    table = shoe // shoes
    n = shoe.size
    return pa.table({
        "table_id": [f"T{t:03d}" for t in table], "game": ["baccarat"] * n, "ruleset": [PAIRS_KIND.ruleset] * n,
        "currency": ["EUR"] * n, "shoe_id": [f"S{s:04d}" for s in shoe],
        "round_id": [f"S{s:04d}-R{r:03d}" for s, r in zip(shoe, index, strict=True)],
        "round_no": pa.array(index + 1, pa.int32()), "shoe_position": pa.array(depths[index], pa.int32()),
        "business_date": [date(2026, 11, 28)] * n, "bet_type": ["PLAYER_PAIR"] * n, "family": ["PAIRS"] * n,
        "unit": ["rtp"] * n, "moment": moments[shoe, index],
        "account_id": pa.array([f"A{t:03d}" if b else None for t, b in zip(table, is_bet, strict=True)], pa.string()),
        "stake": pa.array([1000 if b else None for b in is_bet], pa.int64()),
    }, schema=FEATURES_SCHEMA)


# (shoe, shoe_position, moment, stake: None for the table's own row of the round) of two small shoes, one account A
HAND_SHOES = [("S1", 0, 0.9, None), ("S1", 5, 1.1, None), ("S1", 10, 0.8, None), ("S1", 15, 1.0, None),
              ("S1", 5, 1.1, 1000), ("S1", 15, 1.0, 3000),
              ("S2", 0, 1.0, None), ("S2", 5, 1.0, None), ("S2", 10, 0.5, None), ("S2", 0, 1.0, 2000)]


def hand_features(usd_shoes: tuple[str, ...] = ()) -> pa.Table:
    """HAND_SHOES as PLAYER_PAIR features, at an EUR table T1 but the `usd_shoes`, at a USD table T2."""
    rows, n = HAND_SHOES, len(HAND_SHOES)
    usd = [r[0] in usd_shoes for r in rows]
    return pa.table({
        "table_id": ["T2" if u else "T1" for u in usd], "game": ["baccarat"] * n, "ruleset": [PAIRS_KIND.ruleset] * n,
        "currency": ["USD" if u else "EUR" for u in usd],
        "shoe_id": [r[0] for r in rows], "round_id": [f"{r[0]}-{r[1]}" for r in rows],
        "round_no": pa.array([r[1] // 5 + 1 for r in rows], pa.int32()),
        "shoe_position": pa.array([r[1] for r in rows], pa.int32()), "business_date": [date(2026, 11, 28)] * n,
        "bet_type": ["PLAYER_PAIR"] * n, "family": ["PAIRS"] * n, "unit": ["rtp"] * n,
        "moment": [r[2] for r in rows], "account_id": pa.array([None if r[3] is None else "A" for r in rows]),
        "stake": pa.array([r[3] for r in rows], pa.int64())}, schema=FEATURES_SCHEMA)


def test_shoe_ranks_by_hand():
    # One shoe, four PLAYER_PAIR rounds with moments 0.9, 1.1, 0.8, 1.0: ranks 2, 4, 1, 3 of 4, normalised
    # (r - 1/2) / 4 = 0.375, 0.875, 0.125, 0.625. Stakes 10.00 on the second and 30.00 on the fourth:
    # 0.25 * 0.875 + 0.75 * 0.625 = 0.6875. A second shoe with moments 1.0, 1.0, 0.5 and a bet on its first:
    # the tie shares the mid-rank 2.5 of 3, (2.5 - 1/2) / 3 = 2/3; the stakes 10, 30, 20 weigh it 1/3.
    (t,) = advantage_tests(hand_features(), {"reference_shoes": 20, "min_bets": 3})
    assert t.value == pytest.approx((1 * 0.875 + 3 * 0.625 + 2 * (2 / 3)) / 6, abs=1e-12)
    assert t.sample == 3 and t.statistic.startswith(f"stake-weighted rank {t.value:.3f} ")


def test_an_account_is_tested_per_currency_and_its_rows_say_which():
    # test_shoe_ranks_by_hand's two shoes, the second at a USD table: the account's PAIRS bets are two tests, S1's
    # two bets in EUR (ranks 0.875 and 0.625, stakes 10.00 and 30.00) and S2's one in USD (2/3), each row naming its
    # currency
    features = hand_features(usd_shoes=("S2",))
    tests = advantage_tests(features, {"reference_shoes": 20, "min_bets": 1})
    assert [(t.subject, t.currency, t.sample) for t in tests] == [("A", "EUR", 2), ("A", "USD", 1)]
    assert tests[0].value == pytest.approx((1 * 0.875 + 3 * 0.625) / 4, abs=1e-12)
    assert tests[1].value == pytest.approx(2 / 3, abs=1e-12)


@pytest.fixture(scope="module")
def blind_and_counting_bettors():
    """p-values of 100 accounts (a table each, 4 shoes) per strategy, the rank statistic against 100 shuffles."""
    out = {}
    for strategy in ("late", "steady", "favourable"):
        features = pair_features(43, strategy, accounts=100)
        tests = advantage_tests(features, {"reference_shoes": 100})
        out[strategy] = (np.array([t.p_value for t in tests]), np.array([t.value for t in tests]))
    return out


def test_shoe_rank_null_holds_for_late_and_steady_bettors(blind_and_counting_bettors):
    # Bettors blind to the cards: 16 PLAYER_PAIR bets each, every one in the last 4 rounds of its shoe (late,
    # where the moments spread most) or at 4 random rounds (steady). Their p-values are at most nominal: of
    # 100, p <= 0.05 for at most 11 (Binomial(100, 0.05) >= 12 has chance 0.4%) and p <= 0.2 for at most 30.
    for strategy in ("late", "steady"):
        p, _ = blind_and_counting_bettors[strategy]
        assert p.size == 100 and np.sum(p <= 0.05) <= 11 and np.sum(p <= 0.2) <= 30, strategy
        assert np.median(p) > 0.3, strategy


def test_a_uniform_null_for_ranks_in_the_whole_shoe_would_flag_late_bettors(blind_and_counting_bettors):
    # Why the null reads the same depths of fresh shuffles: a late bettor's ranks among its whole shoe are
    # not independent uniforms (its moments move together at the end of the shoe, and rank high or low
    # together), so a z-test of the mean rank against 1/2 with variance 1/(12 n) rejects far above 5%.
    _, value = blind_and_counting_bettors["late"]
    z = (value - 0.5) / np.sqrt(1 / 12 / 16)
    assert np.mean(z > 1.645) > 0.12
    _, value = blind_and_counting_bettors["steady"]  # where the bets are spread, it would roughly hold
    assert np.mean((value - 0.5) / np.sqrt(1 / 12 / 16) > 1.645) < 0.12


def test_a_bettor_of_its_shoes_best_moments_is_found(blind_and_counting_bettors):
    # the top 4 of each shoe's 72 moments, 16 bets over 4 shoes: every one far below any nominal level
    p, value = blind_and_counting_bettors["favourable"]
    assert np.all(p < 1e-5) and np.all(value > 0.9)


def test_the_shoe_bench_places_each_strategys_bets():
    # bench/surveillance_advantage_shoe.py's added account, on two shoes of 72 rounds: 5% of 72 rounds to 4 a shoe,
    # at the shoe's 4 highest moments (favourable), its 4 deepest rounds (late) or 4 rounds drawn (steady)
    from bench.surveillance_advantage_shoe import added_bets, report

    features = pair_features(5, "steady", accounts=1, shoes=2)
    rounds = features.filter(pc.is_null(features["account_id"]))
    rng = np.random.default_rng(0)
    for strategy in ("favourable", "late", "steady"):
        bets = added_bets(features, strategy, rng)
        assert bets.num_rows == 8 and set(bets["account_id"].to_pylist()) == {"ADDED"}
        assert set(bets["stake"].to_pylist()) == {10_000}
        for shoe in ("S0000", "S0001"):
            mine = rounds.filter(pc.equal(rounds["shoe_id"], shoe))
            got = bets.filter(pc.equal(bets["shoe_id"], shoe))
            if strategy == "favourable":
                assert sorted(got["moment"].to_pylist()) == sorted(mine["moment"].to_pylist())[-4:]
            elif strategy == "late":
                assert sorted(got["shoe_position"].to_pylist()) == sorted(mine["shoe_position"].to_pylist())[-4:]
            else:
                assert len(set(got["round_id"].to_pylist()) & set(mine["round_id"].to_pylist())) == 4
    result = {(s, stat): ([(True, 1e-9, 88, 0)] * 3, (True, 1e-20, 264, 0)) for s in ("favourable", "late", "steady")
              for stat in ("rank", "moment")}
    text = report([result], 1.0)
    assert "| favourable | rank | 88 | 3/3 (" in text and "| 1/1 (" in text


# --- tested a part of its accounts at a time (the pipeline's Detector.subjects / tests_by_part) -----------------


def _parts_of(per_table: list[pa.Table], part_of, n: int) -> list[pa.Table]:
    """Parts made by hand (`part_of(features, n)`: each row's part, -1 for a row every part holds): table by table,
    the rows every part holds then the part's own, each in the table's order (as the pipeline lays a part out)."""
    split = [(f, np.asarray(part_of(f, n))) for f in per_table]
    return [pa.concat_tables([t for f, p in split for t in (f.filter(pa.array(p < 0)), f.filter(pa.array(p == i)))])
            for i in range(n)]


def _pipeline_parts(per_table: list[pa.Table]) -> list[pa.Table]:
    """The parts pipelines/surveillance.py makes of the tables' features (`_parts`, no spill folder)."""
    from pipelines.surveillance import _parts

    return list(_parts(ADVANTAGE_PLAY, [(t["table_id"][0].as_py(), t) for t in per_table]))


def _test_rows(tables) -> list[tuple]:
    rows = pa.concat_tables(tables).to_pylist() if tables else []
    return sorted(tuple(sorted((k, v) for k, v in r.items() if k != "p_value")) + (("p", r["p_value"]),)
                  for r in rows)


@pytest.fixture(scope="module")
def three_tables():
    """Two baccarat tables (the counter at the second) and a blackjack table (the same counter) on one day, the
    baccarat tables' ordinary accounts (ACC-000..) at both: an account's bets span tables."""
    days = [baccarat_day(5, rounds=500, table_id="BAC-1"),
            baccarat_day(6, rounds=500, table_id="BAC-2", counter=COUNTER),
            blackjack_day(7, rounds=500, counter="COUNTER", table_id="BJ-1")]
    return [advantage_features(d) for d in days]


def test_advantage_play_by_part_are_its_tests_over_every_table(three_tables):
    """ADVANTAGE_PLAY.tests_by_part over the parts the pipeline makes (a part a home table: an account's bets in
    one, with the round rows of the tables it bet at alone): the same rows as its tests over every table's features
    at once, the p-values to the bit; the counters among them, and accounts of two tables, whose part holds both
    tables' round rows."""
    settings_ = {**ADVANTAGE_PLAY.settings, **SETTINGS}
    whole = advantage_tests(pa.concat_tables(three_tables), settings_)
    parts = _pipeline_parts(three_tables)
    by_part = list(ADVANTAGE_PLAY.tests_by_part(iter(parts), settings_))
    assert _test_rows(by_part) == _test_rows([as_test_columns(whole)])
    assert {t.subject for t in whole if t.p_value is not None and t.p_value < 0.01} >= {"COUNTER"}
    bets = pa.concat_tables(three_tables).filter(pc.is_valid(pa.concat_tables(three_tables)["account_id"]))
    tables_of = bets.group_by("account_id").aggregate([("table_id", "count_distinct")])
    assert max(tables_of["table_id_count_distinct"].to_pylist()) == 2
    # a part a home table: each account's bets in the part of the first table (by table_id) it bet at, with the
    # round rows of every table its accounts bet at and of no other
    home = {r["account_id"]: r["table_id_min"] for r in bets.group_by("account_id").aggregate(
        [("table_id", "min")]).to_pylist()}
    bet_at = {r["account_id"]: set(r["table_id_distinct"]) for r in bets.group_by("account_id").aggregate(
        [("table_id", "distinct")]).to_pylist()}
    rounds = {t["table_id"][0].as_py(): pc.sum(pc.is_null(t["account_id"])).as_py() for t in three_tables}
    assert len(parts) == len(set(home.values())) >= 2
    for part, table in zip(parts, sorted(set(home.values())), strict=True):
        own = part.filter(pc.is_valid(part["account_id"]))
        shared = part.filter(pc.is_null(part["account_id"]))
        accounts = set(own["account_id"].to_pylist())
        assert accounts == {a for a, t in home.items() if t == table}
        tables = set().union(*(bet_at[a] for a in accounts))
        assert set(shared["table_id"].to_pylist()) == tables
        assert shared.num_rows == sum(rounds[t] for t in tables)
    assert sum(p.filter(pc.is_valid(p["account_id"])).num_rows for p in parts) == bets.num_rows
    assert any(len(t) == 2 for t in bet_at.values())


def test_advantage_play_parts_that_split_an_account_are_not_its_tests(three_tables):
    """The oracle above can fail: parts by bet type (an account's families apart, its (family, currency) subjects
    kept whole) are its tests still, but parts that split an account's bets of one family (by round) are not."""
    settings_ = {**ADVANTAGE_PLAY.settings, **SETTINGS}
    whole = _test_rows([as_test_columns(advantage_tests(pa.concat_tables(three_tables), settings_))])

    def by_family(f: pa.Table, n: int) -> np.ndarray:
        codes = np.asarray(pc.fill_null(pc.index_in(f["family"], value_set=pc.unique(f["family"])), 0))
        return np.where(np.asarray(pc.is_valid(f["account_id"])), codes % n, -1)

    def by_round(f: pa.Table, n: int) -> np.ndarray:
        rounds = np.asarray(f["round_no"]).astype(np.int64)
        return np.where(np.asarray(pc.is_valid(f["account_id"])), rounds % n, -1)

    family_parts = _parts_of(three_tables, by_family, 3)
    assert _test_rows(list(ADVANTAGE_PLAY.tests_by_part(iter(family_parts), settings_))) == whole
    assert _test_rows(list(ADVANTAGE_PLAY.tests_by_part(iter(_parts_of(three_tables, by_round, 2)), settings_))
                      ) != whole


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 90), levels=st.sampled_from([2, 5, 0]))
def test_ranks_counted_at_a_few_depths_are_scipys_average_ranks(seed, k, levels):
    """_twice_ranks_at (a group's ranks counted at the depths a part's accounts bet at) is twice scipy's average
    rank at those columns, ties (levels 2, 5: few distinct moments) at their mid-rank, to the integer."""
    from scipy.stats import rankdata

    from engine.surveillance.advantage import _twice_ranks_at

    rng = np.random.default_rng(seed)
    a = rng.integers(0, levels, (50, k)).astype(float) if levels else rng.random((50, k))
    idx = np.unique(rng.integers(0, k, 3))
    want = 2 * rankdata(a, axis=1, method="average")[:, idx]
    got = _twice_ranks_at(a, idx)
    assert got.dtype == np.int16 and np.array_equal(got, want.astype(np.int64))


def test_ranks_counted_by_hand():
    # a row 0.3, 0.1, 0.3, 0.2: 0.1 ranks 1, 0.2 ranks 2, the two 0.3 share ranks 3 and 4 (3.5 each)
    from engine.surveillance.advantage import _twice_ranks_at

    a = np.array([[0.3, 0.1, 0.3, 0.2]])
    assert _twice_ranks_at(a, np.array([0, 1, 3])).tolist() == [[7, 2, 4]]
