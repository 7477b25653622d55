"""Casino stud's exact RTP (issue 31): the vectorised hand strength against phevaluator, the JACKPOT bet
by hand from the rank-class counts, the ANTE's sweep against a brute force over every deal of small
decks, and the cached full-deck ANTE against the published house edge (5.224% of the ante)."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from itertools import combinations
from math import comb

import numpy as np
import pytest
from phevaluator import evaluate_cards
from typer.testing import CliRunner

import engine.games.casino_stud as casino_stud
from engine.cards import CARD_CODES, CARD_INDEX
from engine.games.casino_stud import strength as S
from engine.games.casino_stud.ante_cache import ANTE
from engine.games.casino_stud.hands import rank_hand
from engine.games.casino_stud.rtp import (
    BOX_WINS,
    DEALER_WINS,
    NOT_QUALIFIED,
    TIE,
    ante_counts,
    ante_key,
    ante_outcomes,
    ante_tally,
    casino_stud_rtp,
    jackpot_break_even,
    jackpot_outcomes,
    jackpot_row,
    jackpot_rtp,
)
from engine.games.casino_stud.rules import load_casino_stud_rules
from engine.games.interface import EXACT
from engine.ruleset_file import bundled_ids
from pitboss.cli import app

RULES = load_casino_stud_rules("casino_stud_live")
CLASS_COUNTS = {"ROYAL_FLUSH": 4, "STRAIGHT_FLUSH": 36, "FOUR_OF_A_KIND": 624, "FULL_HOUSE": 3744, "FLUSH": 5108,
                "STRAIGHT": 10200, "THREE_OF_A_KIND": 54912, "TWO_PAIR": 123552, "PAIR": 1098240,
                "HIGH_CARD": 1302540}  # fmt: skip


def cards(text: str) -> list[int]:
    return [CARD_INDEX[c] for c in text.split()]


def deck_of(ranks: str, suits: str) -> np.ndarray:
    return np.array(sorted(CARD_INDEX[r + s] for r in ranks for s in suits))


# --- strength ----------------------------------------------------------------------------------------


def test_strength_ranks_random_hands_as_phevaluator() -> None:
    rng = np.random.default_rng(31)
    hands = np.array([rng.choice(52, 5, replace=False) for _ in range(20000)])
    theirs = np.array([evaluate_cards(*(CARD_CODES[c][0] + CARD_CODES[c][1].lower() for c in h)) for h in hands])
    # phevaluator: 1 (a royal flush) ... 7462 (7-5-4-3-2), lower is better; dense_strength the other way round
    assert (S.dense_strength(S.strength(hands)) == 7462 - theirs).all()


def test_strength_classes_agree_with_the_readable_ranking() -> None:
    rng = np.random.default_rng(7)
    hands = np.array([rng.choice(52, 5, replace=False) for _ in range(3000)])
    ours = S.rank_class(S.strength(hands))
    assert [S.RANK_NAMES[k] for k in ours] == [rank_hand([CARD_CODES[c] for c in h]).category for h in hands]


@pytest.mark.parametrize(("hand", "name"), [
    ("AS KS QS JS TS", "ROYAL_FLUSH"), ("5D 4D 3D 2D AD", "STRAIGHT_FLUSH"), ("AH 2C 3D 4S 5S", "STRAIGHT"),
    ("KC KD KH KS 2C", "FOUR_OF_A_KIND"), ("2C 2D 3H 3S 3C", "FULL_HOUSE"), ("AC 3C 5C 7C 9C", "FLUSH"),
    ("AC KD QH JS 9C", "HIGH_CARD"), ("QC QD 2H 2S AC", "TWO_PAIR"), ("7C 7D 7H 2S AC", "THREE_OF_A_KIND"),
])  # fmt: skip
def test_rank_class_names(hand: str, name: str) -> None:
    assert S.RANK_NAMES[int(S.rank_class(S.strength(np.array([cards(hand)])))[0])] == name


def test_wheel_is_the_lowest_straight_and_straight_flush() -> None:
    s = S.strength(np.array([cards("AH 2C 3D 4S 5S"), cards("2H 3C 4D 5S 6S"), cards("AD AC KD QS JD"),
                             cards("AD 2D 3D 4D 5D"), cards("2D 3D 4D 5D 6D"), cards("KH KC KD KS QH")]))
    assert s[0] < s[1] and s[2] < s[0] and s[5] < s[3] < s[4]


def test_every_hand_once_and_the_rank_class_counts() -> None:
    hands = S.all_hands()
    assert len(hands) == S.ALL_HANDS == comb(52, 5)
    assert (S.hand_index(hands) == np.arange(S.ALL_HANDS)).all() and (np.diff(hands, axis=1) > 0).all()
    enumerated = np.bincount(S.rank_class(S.all_strengths()), minlength=len(S.RANK_NAMES))
    assert dict(zip(S.RANK_NAMES, enumerated.tolist(), strict=True)) == CLASS_COUNTS == S.class_counts()
    assert len(S.distinct_strengths()) == 7462


def test_qualifier_is_ace_king_or_better() -> None:
    q = S.qualifier_strength("AK")
    s = S.strength(np.array([cards("AS KD 4C 3H 2S"), cards("AS QD JC 9H 8S"), cards("2S 2D 3C 4H 5S"),
                             cards("KS QD JC 9H 7S")]))
    assert list(s >= q) == [True, False, True, False]


# --- JACKPOT ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("balance", [0, 150000, Fraction(500001, 2)])
def test_jackpot_rtp_by_hand_from_the_class_counts(balance) -> None:
    c = CLASS_COUNTS
    by_hand = Fraction(c["ROYAL_FLUSH"] * balance + c["STRAIGHT_FLUSH"] * Fraction(balance) / 10
                       + c["FOUR_OF_A_KIND"] * 500 + c["FULL_HOUSE"] * 100 + c["FLUSH"] * 50, comb(52, 5))
    assert jackpot_rtp(RULES.jackpot.prizes, balance) == by_hand
    outcomes = jackpot_outcomes(RULES.jackpot.prizes, balance)
    assert sum(o.probability for o in outcomes) == 1
    assert outcomes[-1].description == "lose" and outcomes[-1].probability == Fraction(
        comb(52, 5) - sum(c[n] for n in ("ROYAL_FLUSH", "STRAIGHT_FLUSH", "FOUR_OF_A_KIND", "FULL_HOUSE", "FLUSH")),
        comb(52, 5))


def test_jackpot_break_even_balance() -> None:
    # (2598960 - 624 x 500 - 3744 x 100 - 5108 x 50) / (4 + 36 x 10%) jackpot stakes
    even = jackpot_break_even(RULES.jackpot.prizes)
    assert even == Fraction(2598960 - 312000 - 374400 - 255400) / Fraction(76, 10) == Fraction(4142900, 19)
    assert jackpot_rtp(RULES.jackpot.prizes, even) == 1
    assert jackpot_rtp(RULES.jackpot.prizes, 218047) < 1 < jackpot_rtp(RULES.jackpot.prizes, 218048)
    row = jackpot_row(RULES)
    assert row.rtp == jackpot_rtp(RULES.jackpot.prizes, 0) and row.method == EXACT
    assert row.selection == "jackpot 0 stakes (break-even 218,047.37 stakes)"
    assert jackpot_break_even({"FLUSH": ("units", 50)}) is None


# --- ANTE: the sweep against brute force ------------------------------------------------------------------


def brute_force_counts(deck: np.ndarray) -> np.ndarray:
    """Every deal of `deck`: per box hand (colex row of positions) and open card position, the dealer
    hands holding that card by how a call ends (not qualified, box wins, tie, dealer wins)."""
    n = len(deck)
    hands = S.colex_subsets(n, 5).astype(np.int64)
    strength = S.strength(deck[hands])
    qualify = S.qualifier_strength("AK")
    dealer_rows = np.array(list(combinations(range(n - 5), 5)))
    out = np.zeros((len(hands), n, 4), dtype=np.int64)
    for i, box in enumerate(hands):
        dealer = np.setdiff1d(np.arange(n), box)[dealer_rows]
        theirs, mine = strength[S.hand_index(dealer)], strength[i]
        ending = np.select([theirs < qualify, mine < qualify, theirs < mine, theirs == mine],
                           [NOT_QUALIFIED, DEALER_WINS, BOX_WINS, TIE], DEALER_WINS)
        for j in range(5):
            np.add.at(out[i], (dealer[:, j], ending), 1)
    return out


def test_sweep_equals_brute_force_over_every_deal_of_an_18_card_deck() -> None:
    deck = deck_of("9TJQKA", "SHD")  # straights, flushes, straight and royal flushes, full houses
    swept = ante_counts(deck, suit_classes=False)
    assert (S.hand_index(swept.boxes) == np.arange(comb(18, 5))).all()
    assert (swept.counts == brute_force_counts(deck)).all()
    assert (swept.counts.sum(axis=2) == np.where(swept.counts.sum(axis=2) > 0, comb(12, 4), 0)).all()


def test_suit_classes_give_the_counts_of_every_hand() -> None:
    deck = deck_of("TJQKA", "SHDC")  # four suits: quads, royal flushes, broadway straights
    every = ante_counts(deck, suit_classes=False)
    classes = ante_counts(deck)
    assert classes.weights.sum() == comb(20, 5) and len(classes.weights) < comb(20, 5) / 10
    assert (classes.counts == every.counts[S.hand_index(classes.boxes)]).all()
    payouts = dict(RULES.call_payouts)
    assert ante_tally(classes, payouts, 2) == ante_tally(every, payouts, 2)


def test_optimal_calling_against_a_deal_by_deal_decision() -> None:
    """The tally's RTP: each (box, open card) decided and paid in plain fractions, one at a time."""
    deck = deck_of("9TJQKA", "SHD")
    swept = ante_counts(deck, suit_classes=False)
    odds = [RULES.call_payouts[name] for name in S.RANK_NAMES]
    total = Fraction(0)
    for box_strength, per_card in zip(swept.box_strength, swept.counts, strict=True):
        p = odds[int(S.rank_class(box_strength))]
        for nq, win, _tie, lose in per_card:
            if nq + win + _tie + lose:
                total += max(Fraction(nq + win * (1 + 2 * p) - 3 * lose, comb(12, 4)), Fraction(-1))
    rtp = 1 + total / (comb(18, 5) * 13)
    outcomes = ante_outcomes(ante_tally(swept, RULES.call_payouts, 2), RULES.call_payouts, 2)
    assert sum(o.probability for o in outcomes) == 1
    assert sum(o.probability * o.credit for o in outcomes) == rtp


# --- ANTE: the full deck (cached) -------------------------------------------------------------------------


def test_ante_returns_the_published_94_78_percent() -> None:
    ante, _ = casino_stud_rtp(RULES)
    assert ante.bet_type == "ANTE" and ante.method == EXACT and ante.game == "casino_stud"
    assert sum(o.probability for o in ante.outcomes) == 1
    assert ante.rtp == sum(o.probability * o.credit for o in ante.outcomes)
    # Wizard of Odds (Caribbean stud, the same tables): house edge 5.224% of the ante; RULES.md 5.22%
    assert round(float(ante.house_edge), 5) == 0.05224
    assert round(float(ante.house_edge) * 100, 2) == 5.22
    fold = next(o for o in ante.outcomes if o.description.startswith("fold"))
    assert float(fold.probability) == pytest.approx(0.477745, abs=1e-6)  # Wizard of Odds: fold 0.477745


def test_every_bundled_ruleset_has_its_ante_cached() -> None:
    for rid in bundled_ids("engine.games.casino_stud.rulesets"):
        rules = load_casino_stud_rules(rid)
        tally = ANTE[ante_key(rules.qualifier, rules.call_multiple, rules.call_payouts)]
        assert tally["denominator"] == comb(52, 5) * 47 * comb(46, 4)
        assert sum(tally[k] for k in ("fold", "not_qualified", "push", "lose")) + sum(tally["win"].values()) \
            == tally["denominator"]


def test_cached_straight_and_royal_flush_wins_by_direct_enumeration() -> None:
    """A cheap consequence of the cache: a straight or royal flush always calls and loses only to a
    higher straight flush, so its wins are 5 x its dealer hands (each has 5 open cards) that qualify and
    are weaker; counted over the 1,533,939 dealer hands of one box per top card (x 4 suits)."""
    tally = ANTE[ante_key("AK", 2, RULES.call_payouts)]
    strengths, qualify = S.all_strengths(), S.qualifier_strength("AK")
    wins = {"STRAIGHT_FLUSH": 0, "ROYAL_FLUSH": 0}
    for top in range(3, 13):  # 5-high (the wheel) to ace-high, spades
        box = [12 if value == -1 else value for value in range(top - 4, top + 1)]
        box_cards = np.array([(v + 1) % 13 * 4 for v in box])  # card value -> spade card index
        rest = np.setdiff1d(np.arange(52), box_cards)
        dealer = rest[S.colex_subsets(47, 5).astype(np.int64)]
        theirs = strengths[S.hand_index(dealer)]
        mine = S.strength(np.sort(box_cards)[None, :])[0]
        beaten = int(((theirs >= qualify) & (theirs < mine)).sum())
        wins["ROYAL_FLUSH" if top == 12 else "STRAIGHT_FLUSH"] += 4 * 5 * beaten
    assert {name: tally["win"][name] for name in wins} == wins


# --- the command -----------------------------------------------------------------------------------------

runner = CliRunner()


@pytest.fixture
def stud_takes_jackpot(monkeypatch):
    """The game seam as `pitboss rtp --jackpot` uses it: the game's rtp takes `jackpot=`."""
    monkeypatch.setattr(casino_stud, "GAME", dataclasses.replace(casino_stud.GAME, rtp=casino_stud_rtp))


def test_table_shows_ante_jackpot_and_break_even() -> None:
    result = runner.invoke(app, ["rtp", "--ruleset", "casino_stud_live"])
    assert result.exit_code == 0, result.output
    assert "94.7757%" in result.stdout and "5.2243%" in result.stdout
    assert "218,047.37" in result.stdout and "WARNING" not in result.stdout


def test_jackpot_balance_gives_the_jackpot_row_and_warns_above_break_even(stud_takes_jackpot) -> None:
    result = runner.invoke(app, ["rtp", "--json", "--ruleset", "casino_stud_live", "--jackpot", "300000"])
    assert result.exit_code == 0, result.output
    rows = {r["bet_type"]: r for r in json.loads(result.stdout)}
    assert set(rows) == {"ANTE", "JACKPOT"}
    assert rows["JACKPOT"]["rtp_exact"] == str(jackpot_rtp(RULES.jackpot.prizes, 300000))
    assert rows["JACKPOT"]["rtp"] > 1 and rows["JACKPOT"]["selection"].startswith("jackpot 300,000 stakes")
    assert "WARNING: ruleset casino_stud_live, bet JACKPOT, mode -, selection jackpot 300,000 stakes" in result.stderr
    below = runner.invoke(app, ["rtp", "--ruleset", "casino_stud_live", "--jackpot", "218047"])
    assert below.exit_code == 0 and "WARNING" not in below.stdout and "99.9999%" in below.stdout


def test_jackpot_option_refuses_a_game_without_jackpot_and_a_negative_balance(stud_takes_jackpot) -> None:
    for args in (["--ruleset", "mini_baccarat_6d", "--jackpot", "5"], ["--ruleset", "casino_stud_live", "--jackpot",
                                                                       "-1"], ["--jackpot", "lots"]):
        result = runner.invoke(app, ["rtp", *args])
        assert result.exit_code == 2 and result.stdout == "" and len(result.stderr.strip().splitlines()) == 1


def test_the_game_seam_passes_the_jackpot_balance() -> None:
    result = runner.invoke(app, ["rtp", "--ruleset", "casino_stud_live", "--jackpot", "300000"])
    assert result.exit_code == 0 and "WARNING" in result.stdout
