"""Exact RTP by enumeration (engine/games/baccarat/rtp.py) and `pitboss rtp`.

Checked three independent ways: against published figures (Wizard of Odds house edges, to the
precision they are published with), against a brute-force enumeration of every ordered deal of a
tiny shoe through engine.games.baccarat.dealing.deal_round, and against a Monte-Carlo run on real shuffled shoes.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from fractions import Fraction

import pytest
from typer.testing import CliRunner

from engine.games.baccarat.dealing import deal_round
from engine.games.baccarat.features import FEATURES, round_features
from engine.games.baccarat.rtp import (
    FEATURE_NAMES,
    bet_rtp,
    facts_of,
    round_distribution,
    ruleset_rtp,
    shoe_distribution,
    simulate_rtps,
)
from engine.games.baccarat.ruleset import load_ruleset, parse_ruleset, ruleset_ids
from pitboss.cli import app
from pitboss.commands.rtp import rtp_warnings, stated_max_verdict, stated_precision

EXTENDED = "baccarat_8d_extended"


def chance(decks: int, **facts: object) -> Fraction:
    """Probability that a round from a fresh shoe has all the given facts."""
    return sum(
        (p for key, p in round_distribution(decks).items() if all(facts_of(key)[k] == v for k, v in facts.items())),
        Fraction(0),
    )


def house_edge_percent(ruleset_id: str, bet_type: str, mode: str = "commission") -> float:
    return float(bet_rtp(load_ruleset(ruleset_id), bet_type, mode).house_edge) * 100


# --- the distribution ------------------------------------------------------------------------------


@pytest.mark.parametrize("decks", [1, 6, 8])
def test_probabilities_sum_to_exactly_one(decks: int) -> None:
    dist = round_distribution(decks)
    assert sum(dist.values()) == 1
    assert all(p > 0 for p in dist.values())
    assert all(set(facts_of(key)) == set(FEATURES) for key in dist)


def test_eight_deck_outcome_probabilities_match_published() -> None:
    assert round(float(chance(8, outcome="BANKER")), 6) == 0.458597
    assert round(float(chance(8, outcome="PLAYER")), 6) == 0.446247
    assert round(float(chance(8, outcome="TIE")), 6) == 0.095156


@pytest.mark.parametrize("decks", [1, 2, 8])
def test_pair_probabilities_match_combinatorial_formulas(decks: int) -> None:
    cards = 52 * decks
    same_rank = Fraction(4 * decks - 1, cards - 1)
    assert chance(decks, player_pair=True) == same_rank
    assert chance(decks, banker_pair=True) == same_rank
    # Both pairs: the second pair's rank is the first pair's (2 of its copies gone) or another rank.
    both_pairs = same_rank * Fraction((4 * decks - 2) * (4 * decks - 3) + 48 * decks * (4 * decks - 1),
                                      (cards - 2) * (cards - 3))  # fmt: skip
    assert chance(decks, any_pair=True) == 2 * same_rank - both_pairs
    # Perfect pair: the same card code, N copies of each code.
    same_code = Fraction(decks - 1, cards - 1)
    both_perfect = same_code * Fraction((decks - 2) * (decks - 3) + 51 * decks * (decks - 1), (cards - 2) * (cards - 3))
    assert chance(decks, perfect_pair=True) == 2 * same_code - both_perfect


def test_single_deck_has_no_perfect_pair() -> None:
    assert chance(1, perfect_pair=True) == 0


@pytest.mark.parametrize(
    "shoe",
    [
        # duplicates of a code (perfect pairs), pairs, naturals, and both hands drawing
        ["AS", "AS", "AH", "5D", "5C", "TC", "KC", "9H", "3S", "6D"],
        # low cards: draws everywhere, Banker's third-card table exercised
        ["2S", "2S", "3H", "4D", "4D", "7C", "6C", "TH", "JS", "8D"],
    ],
)
def test_enumeration_equals_brute_force_over_every_ordered_deal(shoe: list[str]) -> None:
    """Every ordered 6-card prefix of a tiny shoe dealt by the engine itself, counted."""
    facts_by_cards: dict[tuple[str, ...], tuple[object, ...]] = {}
    counts: Counter[tuple[object, ...]] = Counter()
    for positions in itertools.permutations(range(len(shoe)), 6):
        cards = tuple(shoe[i] for i in positions)
        if cards not in facts_by_cards:
            dealt = deal_round(cards)
            facts = round_features(dealt.player_cards, dealt.banker_cards)
            facts_by_cards[cards] = tuple(facts[name] for name in FEATURE_NAMES)
        counts[facts_by_cards[cards]] += 1
    total = sum(counts.values())
    brute = {key: Fraction(n, total) for key, n in counts.items()}
    assert shoe_distribution(Counter(shoe)) == brute


def test_too_small_a_shoe_is_refused() -> None:
    with pytest.raises(ValueError, match="6 cards"):
        shoe_distribution(Counter(["AS", "2S", "3S", "4S", "5S"]))


# --- published house edges ------------------------------------------------------------------------


def test_banker_commission_rtp_is_the_stated_98_94_percent() -> None:
    banker = bet_rtp(load_ruleset(EXTENDED), "BANKER", "commission")
    assert round(banker.rtp, 4) == Fraction("0.9894")
    assert round(float(banker.house_edge) * 100, 4) == 1.0579


@pytest.mark.parametrize(
    ("ruleset_id", "bet_type", "mode", "edge", "places"),
    [
        (EXTENDED, "BANKER", "commission", 1.0579, 4),
        (EXTENDED, "PLAYER", "commission", 1.2351, 4),
        (EXTENDED, "TIE", "commission", 14.3596, 4),
        (EXTENDED, "PLAYER_PAIR", "commission", 10.36, 2),
        (EXTENDED, "BANKER_PAIR", "commission", 10.36, 2),
        (EXTENDED, "PLAYER_BONUS", "commission", 2.65, 2),  # Dragon Bonus, Player side
        (EXTENDED, "BANKER_BONUS", "commission", 9.37, 2),  # Dragon Bonus, Banker side
        (EXTENDED, "BANKER", "no_commission", 1.46, 2),  # 1:2 on a winning 6
        ("mini_baccarat_6d", "BANKER", "commission", 1.0558, 4),
        ("mini_baccarat_6d", "PLAYER", "commission", 1.2374, 4),
        ("mini_baccarat_6d", "TIE", "commission", 14.4382, 4),
    ],
)
def test_house_edge_matches_published(ruleset_id: str, bet_type: str, mode: str, edge: float, places: int) -> None:
    assert round(house_edge_percent(ruleset_id, bet_type, mode), places) == edge


def test_every_bet_outcome_list_is_a_probability_distribution() -> None:
    for ruleset_id in ruleset_ids():
        for result in ruleset_rtp(load_ruleset(ruleset_id)):
            assert sum(o.probability for o in result.outcomes) == 1
            assert result.rtp == sum(o.probability * o.credit for o in result.outcomes)


def test_a_bet_not_offered_is_refused() -> None:
    with pytest.raises(ValueError, match="does not offer"):
        bet_rtp(load_ruleset("mini_baccarat_6d"), "PLAYER_PAIR", "commission")


def test_lucky_six_of_document_001_pays_20_to_1_on_every_winning_6() -> None:
    """A Banker win with 6 always involves a third card (a stood Player has 6 or 7, a natural beats 6),
    so 001's 12:1 ('nobody drew') can never pay: the bet returns more than its stake."""
    result = bet_rtp(load_ruleset("baccarat_8d_standard"), "LUCKY_SIX", "commission")
    never = next(o for o in result.outcomes if "anyone_drew=False" in o.description)
    assert never.probability == 0
    assert result.rtp > 1


# --- Monte Carlo on real shuffled shoes ------------------------------------------------------------


def test_simulation_agrees_with_exact_rtp_within_four_standard_errors() -> None:
    ruleset = load_ruleset(EXTENDED)
    bets = [("BANKER", "commission"), ("BANKER", "no_commission"), ("PLAYER_BONUS", "commission"),
            ("LUCKY_SIX", "commission"), ("ANY_PAIR", "commission")]  # fmt: skip
    simulated = simulate_rtps(ruleset, bets, rounds=150_000, seed=20240611)
    for (bet_type, mode), (mean, stderr) in simulated.items():
        exact = float(bet_rtp(ruleset, bet_type, mode).rtp)
        assert abs(mean - exact) < 4 * stderr, (bet_type, mode, mean, exact, stderr)


# --- warnings and the stated maximum -------------------------------------------------------------

ABSURD_TIE = """
id = "absurd"
document = "test"
title = "TIE at 20:1"
game = "baccarat"
decks = 8
rounding = "floor"
max_rtp_stated = "0.9894"

[shoe]
burn = false
turned_card_counts_as_burned = false
face_card_burns = 10
cut_card = false
reshuffle_every_hand = true

[limits]
player_banker_difference = false
side_bets_require_main_bet = false
one_position_per_round = false

[modes]
commission = ["PLAYER", "TIE"]

[bets.PLAYER]
pays = [{ when = { outcome = "PLAYER" }, odds = "1:1" }, { when = { outcome = "TIE" }, push = true }]

[bets.TIE]
pays = [{ when = { outcome = "TIE" }, odds = "20:1" }]
"""


def test_warning_names_ruleset_bet_and_mode_of_a_bet_returning_100_percent_or_more() -> None:
    results = ruleset_rtp(parse_ruleset(ABSURD_TIE, "test"))
    warnings = rtp_warnings(results)
    assert len(warnings) == 1
    line = warnings[0]
    assert line.startswith("WARNING")
    assert "absurd" in line and "TIE" in line and "commission" in line
    assert "rules defect to report to the operator" in line


def test_no_warning_for_the_bundled_rulesets_except_the_lucky_six_of_001() -> None:
    flagged = {
        (rid, line.split("bet ")[1].split(",")[0])
        for rid in ruleset_ids()
        for line in rtp_warnings(ruleset_rtp(load_ruleset(rid)))
    }
    assert flagged == {("baccarat_8d_standard", "LUCKY_SIX")}


def test_stated_precision_counts_decimal_places() -> None:
    assert stated_precision(Fraction("0.9894")) == 4
    assert stated_precision(Fraction("0.99")) == 2
    assert stated_precision(Fraction(1)) == 0


def test_stated_maximum_agrees_for_document_000_and_not_for_the_absurd_tie() -> None:
    extended = load_ruleset(EXTENDED)
    assert "which agrees" in stated_max_verdict(extended, ruleset_rtp(extended))
    absurd = parse_ruleset(ABSURD_TIE, "test")
    assert "does NOT agree" in stated_max_verdict(absurd, ruleset_rtp(absurd))


# --- the command ---------------------------------------------------------------------------------

runner = CliRunner()


def test_json_lists_every_offered_bet_of_every_ruleset() -> None:
    result = runner.invoke(app, ["rtp", "--json"])
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    baccarat = [r for r in records if r["game"] == "baccarat"]
    got = {(r["ruleset"], r["bet_type"], r["mode"]) for r in baccarat}
    want = {
        (rid, code, mode) for rid in ruleset_ids() for mode, codes in load_ruleset(rid).modes.items() for code in codes
    }
    assert got == want and len(baccarat) == len(want)
    assert {r["rtp_method"] for r in baccarat} == {"exact enumeration"}
    # Every game's rulesets are listed, each row naming its game.
    blackjack = {(r["ruleset"], r["bet_type"]) for r in records if r["game"] == "blackjack"}
    assert {("blackjack_8d_live", code) for code in ("MAIN", "PAIR", "INSURANCE")} <= blackjack
    main = next(r for r in records if (r["ruleset"], r["bet_type"]) == ("blackjack_8d_live", "MAIN"))
    # not an enumeration of every play: the method and its error are stated, and no exact fraction claimed
    assert main["rtp_exact"] is None and "error" in main["rtp_method"]
    assert main["house_edge"] == pytest.approx(0.00813, abs=0.0003)  # published: see test_blackjack_strategy
    assert {r["game"] for r in records} == {"baccarat", "blackjack", "roulette", "sic_bo", "casino_stud"}
    banker = next(r for r in records if (r["ruleset"], r["bet_type"], r["mode"]) == (EXTENDED, "BANKER", "commission"))
    assert banker["rtp"] == pytest.approx(0.989421, abs=1e-6)
    assert "WARNING" in result.stderr and "LUCKY_SIX" in result.stderr


def test_json_for_one_ruleset() -> None:
    result = runner.invoke(app, ["rtp", "--json", "--ruleset", "mini_baccarat_6d"])
    assert result.exit_code == 0
    records = json.loads(result.stdout)
    assert [(r["bet_type"], r["mode"]) for r in records] == [
        ("PLAYER", "commission"),
        ("BANKER", "commission"),
        ("TIE", "commission"),
    ]
    assert result.stderr == ""


def test_table_output_shows_rtp_verdict_and_warning() -> None:
    result = runner.invoke(app, ["rtp", "--ruleset", "baccarat_8d_standard"])
    assert result.exit_code == 0
    assert "98.9421%" in result.stdout
    assert "does NOT agree" in result.stdout
    assert "WARNING: ruleset baccarat_8d_standard, bet LUCKY_SIX, mode commission" in result.stdout


def test_unknown_ruleset_exits_2_with_one_line() -> None:
    result = runner.invoke(app, ["rtp", "--ruleset", "no_such_table"])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no_such_table" in lines[0]
