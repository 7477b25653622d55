"""Settlement of every bet code of every ruleset at its boundaries, rounding of odd stakes, and
the vectorised settlement against the scalar one.

Oracles: the expected credits are worked by hand from RULES.md and the operator documents (stake
100 unless said otherwise: a 1:1 win credits 200, a push 100, a loss 0), and `oracle_credit` below
is an independent plain-Python reading of the RULES.md payout table used by the property tests.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.games.baccarat.dealing import deal_round
from engine.games.baccarat.features import feature_columns, round_features
from engine.games.baccarat.ruleset import BET_CODES, MODES, load_ruleset
from engine.games.baccarat.settlement import credit_for, matching_rule, settle, settle_columns
from engine.money import round_to_unit
from tests.test_baccarat import ALL_CODES, VALUE, oracle_deal

EXT, STD, MINI, PAIRS = "baccarat_8d_extended", "baccarat_8d_standard", "mini_baccarat_6d", "baccarat_live_pairs"
RULESETS = (EXT, STD, MINI, PAIRS)
C, N = "commission", "no_commission"

# ---------------------------------------------------------------------------------------------
# Hand-built rounds: (player cards, banker cards), each dealt legally by the rule (checked below)
# except those marked IRREGULAR, which stand for a recorded round the dealer got wrong.

ROUNDS: dict[str, tuple[str, str]] = {
    # naturals
    "P_NAT9_B0": ("9S TH", "TD KC"),  # Player natural 9 wins by 9
    "B_NAT9_P0": ("TS KH", "9D QC"),  # Banker natural 9 wins by 9
    "NAT_9_VS_8": ("9S TH", "8D QC"),  # Player natural 9 beats Banker natural 8
    "NAT_8_VS_9": ("8S KH", "9D QC"),  # Banker natural 9 beats Player natural 8
    "NAT_TIE": ("8S KH", "8D QC"),  # natural tie 8-8
    # ties without a natural
    "TIE_7_STOOD": ("4S 3H", "5D 2C"),  # 7-7, nobody drew
    "TIE_6_DREW": ("TS KH 6D", "TD QC 6S"),  # 6-6, both drew
    # Player wins without a natural: Player 4 draws a 5 -> 9; Banker 0 draws (any third card)
    "P_M9": ("3S AH 5D", "TD KC QS"),
    "P_M8": ("3S AH 5D", "TD KC AS"),
    "P_M7": ("3S AH 5D", "TD KC 2S"),
    "P_M6": ("3S AH 5D", "TD KC 3S"),
    "P_M5": ("3S AH 5D", "TD KC 4S"),
    "P_M4": ("3S AH 5D", "TD KC 5S"),
    "P_M3": ("3S AH 5D", "TD KC 6S"),  # Banker 6 on three cards, but Player wins
    # Banker wins without a natural: Player 0 draws a 0; Banker 0 draws
    "B_M9": ("TS KH QD", "TD JC 9S"),
    "B_M8": ("TS KH QD", "TD JC 8S"),
    "B_M7": ("TS KH QD", "TD JC 7S"),
    "B_M6": ("TS KH QD", "TD JC 6S"),  # also: Banker wins with 6 on three cards
    "B_M5": ("TS KH QD", "TD JC 5S"),
    "B_M4": ("TS KH QD", "TD JC 4S"),
    "B_M3": ("TS KH QD", "TD JC 3S"),
    # Banker wins with 6 on two cards while the Player drew (Player 4 draws a 0; Banker 6 stands on 0)
    "B6_2CARDS_PLAYER_DREW": ("3S AH TD", "4D 2C"),
    # IRREGULAR: Player 4 stood (should have drawn), Banker 6 on two cards: nobody drew
    "B6_NOBODY_DREW": ("3S AH", "4D 2C"),
    "B_WIN_7": ("3S AH TD", "5D 2C"),  # Banker 7 stands, beats Player 4
    # Player wins with 7
    "P7_2CARDS_B5": ("4S 3H", "TD 2C 3S"),  # Player 7 stands; Banker 2 draws a 3 -> 5; 5 cards
    "P7_3CARDS_B3": ("2S AH 4D", "TD 3C TH"),  # Player 3 draws 4 -> 7; Banker 3 draws on 4 -> 3
    "P7_B6_4CARDS": ("4S 3H", "4D 2C"),  # Player 7 stands, Banker 6 stands: 4 cards
    "P7_B6_5CARDS": ("2S AH 4D", "4C 2H"),  # Player 7 on three, Banker 6 stands on a 4: 5 cards
    "P7_B6_5CARDS_B_DREW": ("4S 3H", "TD 2C 4H"),  # Player 7 stands, Banker 2 draws to 6: 5 cards
    "P7_B6_6CARDS": ("2S AH 4D", "TD 3C 3H"),  # Player 7 on three, Banker 3 draws on 4 -> 6
    "P8_NOT_NATURAL": ("3S AH 4D", "TD KC 5S"),  # Player 8 on three cards beats 5
    # pairs (Player 0 = 5+5 draws a 9; Banker 2+2 = 4 stands on a 9)
    "P_PAIR": ("5S 5H 9D", "TD KC 2S"),
    "B_PAIR": ("TS 7H", "2D 2C KH"),  # Player 7 stands; Banker 4 draws -> 4
    "BOTH_PAIRS": ("5S 5H 9D", "2D 2C"),
    "P_PERFECT": ("6H 6H 7D", "TD KC 2S"),  # Player 2 draws a 7 -> 9; Banker 0 draws a 2
    "BOTH_PERFECT": ("6H 6H 7D", "2D 2D 3S"),  # Banker 4 draws on a 7 -> 7
    "P_PAIR_B_PERFECT": ("5S 5H 9D", "2D 2D"),
    "NO_PAIR": ("3S AH 5D", "TD KC QS"),
}
IRREGULAR = {"B6_NOBODY_DREW"}


def hands(name):
    p, b = ROUNDS[name]
    return p.split(), b.split()


def features(name):
    return round_features(*hands(name))


def my_facts(player, banker):
    """Round facts computed here, from RULES.md, for the oracle."""
    ps = sum(VALUE[c[0]] for c in player) % 10
    bs = sum(VALUE[c[0]] for c in banker) % 10
    p_nat = (VALUE[player[0][0]] + VALUE[player[1][0]]) % 10 >= 8
    b_nat = (VALUE[banker[0][0]] + VALUE[banker[1][0]]) % 10 >= 8
    return {
        "ps": ps,
        "bs": bs,
        "winner": "PLAYER" if ps > bs else "BANKER" if bs > ps else "TIE",
        "pn": len(player),
        "bn": len(banker),
        "p_nat": p_nat,
        "b_nat": b_nat,
        "p_pair": player[0][0] == player[1][0],
        "b_pair": banker[0][0] == banker[1][0],
        "p_perfect": player[0] == player[1],
        "b_perfect": banker[0] == banker[1],
    }


@pytest.mark.parametrize("name", sorted(ROUNDS))
def test_hand_built_rounds_are_what_the_rule_deals(name):
    player, banker = hands(name)
    order = [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]
    if name in IRREGULAR:
        assert oracle_deal([*order, "9S", "9S"]) != (player, banker)
        return
    assert oracle_deal(order) == (player, banker)
    dealt = deal_round(order)
    assert (list(dealt.player_cards), list(dealt.banker_cards)) == (player, banker)


def test_hand_built_round_facts():
    """A few facts of the rounds worked by hand, so the cases below test what they claim to."""
    f = features("P_M4")
    assert (f["outcome"], f["player_score"], f["banker_score"], f["margin"]) == ("PLAYER", 9, 5, 4)
    f = features("B6_2CARDS_PLAYER_DREW")
    assert (f["outcome"], f["banker_score"], f["banker_card_count"], f["anyone_drew"]) == ("BANKER", 6, 2, True)
    f = features("B6_NOBODY_DREW")
    assert (f["outcome"], f["banker_score"], f["banker_card_count"], f["anyone_drew"]) == ("BANKER", 6, 2, False)
    f = features("P7_B6_6CARDS")
    assert (f["player_score"], f["banker_score"], f["total_card_count"]) == (7, 6, 6)
    f = features("BOTH_PERFECT")
    assert f["player_pair"] and f["banker_pair"] and f["perfect_pair"]
    f = features("BOTH_PAIRS")
    assert f["any_pair"] and not f["perfect_pair"]


# ---------------------------------------------------------------------------------------------
# Expected credits, stake 100, worked by hand

MAIN_CASES = [
    # PLAYER 1:1, push on a tie
    ("PLAYER", "P_M9", 200),
    ("PLAYER", "P_NAT9_B0", 200),
    ("PLAYER", "NAT_TIE", 100),
    ("PLAYER", "TIE_7_STOOD", 100),
    ("PLAYER", "TIE_6_DREW", 100),
    ("PLAYER", "B_M9", 0),
    ("PLAYER", "B_WIN_7", 0),
    # TIE 8:1
    ("TIE", "TIE_7_STOOD", 900),
    ("TIE", "NAT_TIE", 900),
    ("TIE", "TIE_6_DREW", 900),
    ("TIE", "P_M9", 0),
    ("TIE", "B_WIN_7", 0),
]
COMMISSION_BANKER = [
    ("BANKER", "B_WIN_7", 195),
    ("BANKER", "B6_2CARDS_PLAYER_DREW", 195),
    ("BANKER", "B_NAT9_P0", 195),
    ("BANKER", "NAT_TIE", 100),
    ("BANKER", "TIE_6_DREW", 100),
    ("BANKER", "P_M9", 0),
]
NO_COMMISSION_BANKER = [
    ("BANKER", "B_WIN_7", 200),
    ("BANKER", "B_NAT9_P0", 200),
    ("BANKER", "B_M9", 200),
    ("BANKER", "B6_2CARDS_PLAYER_DREW", 150),  # 1:2 when the Banker wins with 6
    ("BANKER", "B_M6", 150),
    ("BANKER", "TIE_6_DREW", 100),  # a 6-6 tie is a push, not 1:2
    ("BANKER", "NAT_TIE", 100),
    ("BANKER", "P_M3", 0),
]
PAIR_CASES = [
    ("PLAYER_PAIR", "P_PAIR", 1200),
    ("PLAYER_PAIR", "BOTH_PAIRS", 1200),
    ("PLAYER_PAIR", "P_PERFECT", 1200),
    ("PLAYER_PAIR", "B_PAIR", 0),
    ("PLAYER_PAIR", "NO_PAIR", 0),
    ("PLAYER_PAIR", "TIE_6_DREW", 0),  # T and K are not a pair
    ("BANKER_PAIR", "B_PAIR", 1200),
    ("BANKER_PAIR", "BOTH_PAIRS", 1200),
    ("BANKER_PAIR", "P_PAIR", 0),
    ("BANKER_PAIR", "NO_PAIR", 0),
]
NATURAL_CASES = [
    ("PLAYER_NATURAL", "P_NAT9_B0", 450),  # 7:2 -> 350 won
    ("PLAYER_NATURAL", "NAT_8_VS_9", 450),  # pays on the natural even though the Player loses
    ("PLAYER_NATURAL", "NAT_TIE", 450),
    ("PLAYER_NATURAL", "P_M9", 0),  # 9 on three cards is no natural
    ("PLAYER_NATURAL", "B_NAT9_P0", 0),
    ("BANKER_NATURAL", "B_NAT9_P0", 450),
    ("BANKER_NATURAL", "NAT_9_VS_8", 450),
    ("BANKER_NATURAL", "NAT_TIE", 450),
    ("BANKER_NATURAL", "P_NAT9_B0", 0),
    ("BANKER_NATURAL", "B_M9", 0),
]
EXTENDED_ONLY_CASES = [
    # ANY_PAIR 5:1, paid once
    ("ANY_PAIR", "P_PAIR", 600),
    ("ANY_PAIR", "B_PAIR", 600),
    ("ANY_PAIR", "BOTH_PAIRS", 600),
    ("ANY_PAIR", "BOTH_PERFECT", 600),
    ("ANY_PAIR", "NO_PAIR", 0),
    # PERFECT_PAIR 25:1, paid once; an ordinary pair loses
    ("PERFECT_PAIR", "P_PERFECT", 2600),
    ("PERFECT_PAIR", "BOTH_PERFECT", 2600),
    ("PERFECT_PAIR", "P_PAIR_B_PERFECT", 2600),
    ("PERFECT_PAIR", "P_PAIR", 0),
    ("PERFECT_PAIR", "BOTH_PAIRS", 0),
    ("PERFECT_PAIR", "NO_PAIR", 0),
    # PLAYER_BONUS: natural win 1:1, natural tie push, margins 9..4 30/10/6/4/2/1:1, margin 3 loses
    ("PLAYER_BONUS", "P_NAT9_B0", 200),  # natural win by 9 pays 1:1, not 30:1
    ("PLAYER_BONUS", "NAT_9_VS_8", 200),
    ("PLAYER_BONUS", "NAT_TIE", 100),
    ("PLAYER_BONUS", "TIE_7_STOOD", 0),
    ("PLAYER_BONUS", "TIE_6_DREW", 0),
    ("PLAYER_BONUS", "P_M9", 3100),
    ("PLAYER_BONUS", "P_M8", 1100),
    ("PLAYER_BONUS", "P_M7", 700),
    ("PLAYER_BONUS", "P_M6", 500),
    ("PLAYER_BONUS", "P_M5", 300),
    ("PLAYER_BONUS", "P_M4", 200),
    ("PLAYER_BONUS", "P_M3", 0),
    ("PLAYER_BONUS", "NAT_8_VS_9", 0),
    ("PLAYER_BONUS", "B_M9", 0),
    ("BANKER_BONUS", "B_NAT9_P0", 200),
    ("BANKER_BONUS", "NAT_8_VS_9", 200),
    ("BANKER_BONUS", "NAT_TIE", 100),
    ("BANKER_BONUS", "TIE_6_DREW", 0),
    ("BANKER_BONUS", "B_M9", 3100),
    ("BANKER_BONUS", "B_M8", 1100),
    ("BANKER_BONUS", "B_M7", 700),
    ("BANKER_BONUS", "B_M6", 500),
    ("BANKER_BONUS", "B_M5", 300),
    ("BANKER_BONUS", "B_M4", 200),
    ("BANKER_BONUS", "B_M3", 0),
    ("BANKER_BONUS", "NAT_9_VS_8", 0),
    ("BANKER_BONUS", "P_M9", 0),
    # LUCKY_SIX (000): 12:1 with two Banker cards, 20:1 with three
    ("LUCKY_SIX", "B6_2CARDS_PLAYER_DREW", 1300),
    ("LUCKY_SIX", "B6_NOBODY_DREW", 1300),
    ("LUCKY_SIX", "B_M6", 2100),
    ("LUCKY_SIX", "TIE_6_DREW", 0),
    ("LUCKY_SIX", "P7_B6_4CARDS", 0),
    ("LUCKY_SIX", "P_M3", 0),  # Banker 6 on three cards, but the Player wins
    ("LUCKY_SIX", "B_WIN_7", 0),
    ("LUCKY_SIX_2CARD", "B6_2CARDS_PLAYER_DREW", 2300),
    ("LUCKY_SIX_2CARD", "B6_NOBODY_DREW", 2300),
    ("LUCKY_SIX_2CARD", "B_M6", 0),
    ("LUCKY_SIX_2CARD", "TIE_6_DREW", 0),
    ("LUCKY_SIX_3CARD", "B_M6", 5100),
    ("LUCKY_SIX_3CARD", "B6_2CARDS_PLAYER_DREW", 0),
    ("LUCKY_SIX_3CARD", "P_M3", 0),
    # LUCKY_SEVEN: 6:1 with two Player cards, 15:1 with three
    ("LUCKY_SEVEN", "P7_2CARDS_B5", 700),
    ("LUCKY_SEVEN", "P7_B6_4CARDS", 700),
    ("LUCKY_SEVEN", "P7_3CARDS_B3", 1600),
    ("LUCKY_SEVEN", "P7_B6_5CARDS", 1600),
    ("LUCKY_SEVEN", "TIE_7_STOOD", 0),
    ("LUCKY_SEVEN", "P8_NOT_NATURAL", 0),
    ("LUCKY_SEVEN", "B_WIN_7", 0),  # Banker's 7 is not the Player's
    ("LUCKY_SEVEN_2CARD", "P7_2CARDS_B5", 1600),
    ("LUCKY_SEVEN_2CARD", "P7_3CARDS_B3", 0),
    ("LUCKY_SEVEN_3CARD", "P7_3CARDS_B3", 3100),
    ("LUCKY_SEVEN_3CARD", "P7_2CARDS_B5", 0),
    # SUPER_LUCKY_SEVEN: Player 7 beats Banker 6, by cards on the table 4/5/6: 30/40/100:1
    ("SUPER_LUCKY_SEVEN", "P7_B6_4CARDS", 3100),
    ("SUPER_LUCKY_SEVEN", "P7_B6_5CARDS", 4100),
    ("SUPER_LUCKY_SEVEN", "P7_B6_5CARDS_B_DREW", 4100),
    ("SUPER_LUCKY_SEVEN", "P7_B6_6CARDS", 10100),
    ("SUPER_LUCKY_SEVEN", "P7_2CARDS_B5", 0),
    ("SUPER_LUCKY_SEVEN", "P7_3CARDS_B3", 0),
    ("SUPER_LUCKY_SEVEN", "TIE_7_STOOD", 0),
]
STANDARD_LUCKY_SIX = [
    # 001: 12:1 if nobody drew a third card, 20:1 if anyone did
    ("LUCKY_SIX", "B6_2CARDS_PLAYER_DREW", 2100),  # 000 pays 12:1 here, 001 20:1
    ("LUCKY_SIX", "B6_NOBODY_DREW", 1300),
    ("LUCKY_SIX", "B_M6", 2100),
    ("LUCKY_SIX", "TIE_6_DREW", 0),
    ("LUCKY_SIX", "P_M3", 0),
    ("LUCKY_SIX", "B_WIN_7", 0),
]

CASES: list[tuple[str, str, str, str, int]] = []
for _mode in (C, N):
    for _code, _round, _credit in MAIN_CASES + PAIR_CASES + NATURAL_CASES + EXTENDED_ONLY_CASES:
        CASES.append((EXT, _mode, _code, _round, _credit))
    for _code, _round, _credit in MAIN_CASES + PAIR_CASES + NATURAL_CASES + STANDARD_LUCKY_SIX:
        CASES.append((STD, _mode, _code, _round, _credit))
    for _rs in (EXT, STD):
        for _code, _round, _credit in COMMISSION_BANKER if _mode == C else NO_COMMISSION_BANKER:
            CASES.append((_rs, _mode, _code, _round, _credit))
for _code, _round, _credit in MAIN_CASES + COMMISSION_BANKER:
    CASES.append((MINI, C, _code, _round, _credit))
for _code, _round, _credit in MAIN_CASES + COMMISSION_BANKER + PAIR_CASES:
    CASES.append((PAIRS, C, _code, _round, _credit))


@pytest.mark.parametrize(("ruleset_id", "mode", "code", "round_name", "credit"), CASES)
def test_settle_hand_worked(ruleset_id, mode, code, round_name, credit):
    rs = load_ruleset(ruleset_id)
    assert rs.offered(code, mode)
    assert settle(rs, code, mode, 100, features(round_name)) == credit
    # a cancelled round refunds whatever happened
    assert settle(rs, code, mode, 100, features(round_name), cancelled=True) == 100
    assert settle(rs, code, mode, 100, None, cancelled=True) == 100


def test_every_offered_code_is_covered_winning_and_losing():
    """Every bet code each ruleset offers, in each mode, has a hand-worked win and a loss above."""
    for rid in RULESETS:
        rs = load_ruleset(rid)
        for mode, codes in rs.modes.items():
            for code in codes:
                credits = {c for r, m, k, _, c in CASES if (r, m, k) == (rid, mode, code)}
                assert 0 in credits, (rid, mode, code)
                assert any(c > 100 for c in credits), (rid, mode, code)


def test_lucky_six_banker_six_on_two_cards_while_player_drew_differs_between_000_and_001():
    f = features("B6_2CARDS_PLAYER_DREW")
    for mode in (C, N):
        assert settle(load_ruleset(EXT), "LUCKY_SIX", mode, 10, f) == 10 + 120
        assert settle(load_ruleset(STD), "LUCKY_SIX", mode, 10, f) == 10 + 200


@pytest.mark.parametrize(
    ("ruleset_id", "mode", "code"),
    [
        (STD, C, "ANY_PAIR"),
        (STD, N, "PERFECT_PAIR"),
        (STD, C, "PLAYER_BONUS"),
        (STD, C, "LUCKY_SIX_2CARD"),
        (STD, N, "SUPER_LUCKY_SEVEN"),
        (MINI, C, "PLAYER_PAIR"),
        (MINI, C, "LUCKY_SIX"),
        (MINI, N, "PLAYER"),  # mini-baccarat has no no-commission mode
        (MINI, N, "BANKER"),
        (PAIRS, C, "ANY_PAIR"),
        (PAIRS, N, "PLAYER_PAIR"),
        (EXT, C, "NOT_A_CODE"),
        (EXT, "weird_mode", "PLAYER"),
    ],
)
def test_a_bet_not_offered_is_refunded(ruleset_id, mode, code):
    rs = load_ruleset(ruleset_id)
    assert not rs.offered(code, mode)
    for name in ("BOTH_PERFECT", "B6_2CARDS_PLAYER_DREW", "P_M9", "NO_PAIR"):
        assert settle(rs, code, mode, 100, features(name)) == 100
    assert settle(rs, code, mode, 100, None) == 100


def test_an_open_round_needs_its_features():
    with pytest.raises(ValueError):
        settle(load_ruleset(EXT), "PLAYER", C, 100, None)


def test_matching_rule_is_first_match_and_none_on_loss():
    rs = load_ruleset(EXT)
    table = rs.paytable("PLAYER_BONUS", C)
    rule = matching_rule(table, features("P_NAT9_B0"))
    assert rule is not None and rule.odds == 1  # the natural-win rule, not the margin-9 rule
    assert matching_rule(table, features("P_M3")) is None
    assert credit_for(100, None, "floor") == 0
    tie = matching_rule(rs.paytable("PLAYER", C), features("NAT_TIE"))
    assert tie is not None and tie.odds is None and credit_for(77, tie, "floor") == 77


# ---------------------------------------------------------------------------------------------
# Rounding


@pytest.mark.parametrize(
    ("num", "den", "floor", "half_up", "half_even"),
    [
        (2375, 100, 23, 24, 24),  # 23.75
        (235, 10, 23, 24, 24),  # 23.5
        (225, 10, 22, 23, 22),  # 22.5
        (1, 2, 0, 1, 0),  # 0.5
        (3, 2, 1, 2, 2),  # 1.5
        (5, 2, 2, 3, 2),  # 2.5
        (7, 2, 3, 4, 4),  # 3.5
        (7, 3, 2, 2, 2),  # 2.33
        (8, 3, 2, 3, 3),  # 2.67
        (4, 2, 2, 2, 2),
        (0, 7, 0, 0, 0),
        (1, 3, 0, 0, 0),
        (2, 3, 0, 1, 1),
        (49, 100, 0, 0, 0),
        (51, 100, 0, 1, 1),
        (1050, 100, 10, 11, 10),  # 10.5
        (1150, 100, 11, 12, 12),  # 11.5
    ],
)
def test_round_to_unit(num, den, floor, half_up, half_even):
    assert round_to_unit(num, den, "floor") == floor
    assert round_to_unit(num, den, "half_up") == half_up
    assert round_to_unit(num, den, "half_even") == half_even


def test_round_to_unit_unknown_rule():
    with pytest.raises(ValueError):
        round_to_unit(3, 2, "bankers")


@pytest.mark.parametrize(
    ("rounding", "code", "mode", "round_name", "stake", "credit"),
    [
        # floor (all four bundled rulesets)
        ("floor", "BANKER", C, "B_WIN_7", 25, 48),  # 0.95 x 25 = 23.75 -> 23
        ("floor", "BANKER", C, "B_WIN_7", 1, 1),  # 0.95 -> 0
        ("floor", "BANKER", C, "B_WIN_7", 19, 37),  # 18.05 -> 18
        ("floor", "BANKER", C, "B_WIN_7", 20, 39),  # 19 exactly
        ("floor", "BANKER", N, "B_M6", 3, 4),  # 1:2 on 3 = 1.5 -> 1
        ("floor", "BANKER", N, "B_M6", 1, 1),  # 0.5 -> 0
        ("floor", "PLAYER_NATURAL", C, "P_NAT9_B0", 1, 4),  # 7:2 on 1 = 3.5 -> 3
        ("floor", "PLAYER_NATURAL", C, "P_NAT9_B0", 3, 13),  # 10.5 -> 10
        # half_up
        ("half_up", "BANKER", C, "B_WIN_7", 25, 49),  # 23.75 -> 24
        ("half_up", "BANKER", C, "B_WIN_7", 10, 20),  # 9.5 -> 10
        ("half_up", "BANKER", C, "B_WIN_7", 30, 59),  # 28.5 -> 29
        ("half_up", "BANKER", C, "B_WIN_7", 1, 2),  # 0.95 -> 1
        ("half_up", "BANKER", N, "B_M6", 3, 5),  # 1.5 -> 2
        ("half_up", "BANKER", N, "B_M6", 5, 8),  # 2.5 -> 3
        ("half_up", "PLAYER_NATURAL", C, "P_NAT9_B0", 1, 5),  # 3.5 -> 4
        ("half_up", "PLAYER_NATURAL", C, "P_NAT9_B0", 3, 14),  # 10.5 -> 11
        # half_even
        ("half_even", "BANKER", C, "B_WIN_7", 25, 49),  # 23.75 -> 24
        ("half_even", "BANKER", C, "B_WIN_7", 10, 20),  # 9.5 -> 10
        ("half_even", "BANKER", C, "B_WIN_7", 30, 58),  # 28.5 -> 28
        ("half_even", "BANKER", N, "B_M6", 3, 5),  # 1.5 -> 2
        ("half_even", "BANKER", N, "B_M6", 5, 7),  # 2.5 -> 2
        ("half_even", "PLAYER_NATURAL", C, "P_NAT9_B0", 1, 5),  # 3.5 -> 4
        ("half_even", "PLAYER_NATURAL", C, "P_NAT9_B0", 3, 13),  # 10.5 -> 10
        # exact wins are untouched by any rule
        ("half_even", "TIE", C, "NAT_TIE", 7, 63),
        ("half_up", "SUPER_LUCKY_SEVEN", N, "P7_B6_6CARDS", 3, 303),
    ],
)
def test_rounding_of_odd_stakes(rounding, code, mode, round_name, stake, credit):
    rs = dataclasses.replace(load_ruleset(EXT), rounding=rounding)
    f = features(round_name)
    assert settle(rs, code, mode, stake, f) == credit
    cols = feature_columns([f])
    got = settle_columns(
        rs, np.array([code]), np.array([mode]), np.array([stake]), np.array([0]), cols, np.array([False])
    )
    assert got.tolist() == [credit]


def test_bundled_rulesets_floor():
    for rid in RULESETS:
        assert load_ruleset(rid).rounding == "floor"
    assert settle(load_ruleset(MINI), "BANKER", C, 25, features("B_WIN_7")) == 48
    assert settle(load_ruleset(STD), "BANKER", N, 3, features("B6_2CARDS_PLAYER_DREW")) == 4
    assert settle(load_ruleset(STD), "BANKER_NATURAL", N, 1, features("B_NAT9_P0")) == 4


def test_big_stakes_stay_exact():
    rs = load_ruleset(EXT)
    stake = 10**9 + 7
    assert settle(rs, "SUPER_LUCKY_SEVEN", C, stake, features("P7_B6_6CARDS")) == stake * 101
    assert settle(rs, "BANKER", C, stake, features("B_WIN_7")) == stake + (stake * 19) // 20
    cols = feature_columns([features("P7_B6_6CARDS")])
    got = settle_columns(rs, np.array(["SUPER_LUCKY_SEVEN"]), np.array([C]), np.array([stake]), np.array([0]), cols,
                         np.array([False]))  # fmt: skip
    assert got.tolist() == [stake * 101]


# ---------------------------------------------------------------------------------------------
# Independent oracle of the payout table (RULES.md / documents), for the property tests

OFFERED = {
    EXT: {C: set(BET_CODES), N: set(BET_CODES)},
    STD: {
        m: {"PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "BANKER_PAIR", "LUCKY_SIX", "PLAYER_NATURAL", "BANKER_NATURAL"}
        for m in (C, N)
    },  # fmt: skip
    MINI: {C: {"PLAYER", "BANKER", "TIE"}},
    PAIRS: {C: {"PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "BANKER_PAIR"}},
}
PUSH = "push"


def oracle_odds(rid, mode, code, f):
    """Net win per unit as a Fraction, PUSH, or None for a loss."""
    w, ps, bs = f["winner"], f["ps"], f["bs"]
    margin = abs(ps - bs)
    bonus = {9: 30, 8: 10, 7: 6, 6: 4, 5: 2, 4: 1}
    if code == "PLAYER":
        return Fraction(1) if w == "PLAYER" else PUSH if w == "TIE" else None
    if code == "BANKER":
        if w == "TIE":
            return PUSH
        if w != "BANKER":
            return None
        if mode == C:
            return Fraction(95, 100)
        return Fraction(1, 2) if bs == 6 else Fraction(1)
    if code == "TIE":
        return Fraction(8) if w == "TIE" else None
    if code == "PLAYER_PAIR":
        return Fraction(11) if f["p_pair"] else None
    if code == "BANKER_PAIR":
        return Fraction(11) if f["b_pair"] else None
    if code == "ANY_PAIR":
        return Fraction(5) if f["p_pair"] or f["b_pair"] else None
    if code == "PERFECT_PAIR":
        return Fraction(25) if f["p_perfect"] or f["b_perfect"] else None
    if code == "PLAYER_NATURAL":
        return Fraction(7, 2) if f["p_nat"] else None
    if code == "BANKER_NATURAL":
        return Fraction(7, 2) if f["b_nat"] else None
    if code in ("PLAYER_BONUS", "BANKER_BONUS"):
        side = code.removesuffix("_BONUS")
        own_nat = f["p_nat"] if side == "PLAYER" else f["b_nat"]
        if w == side and own_nat:
            return Fraction(1)
        if w == "TIE" and (f["p_nat"] or f["b_nat"]):
            return PUSH
        if w == side and margin in bonus:
            return Fraction(bonus[margin])
        return None
    banker_six = w == "BANKER" and bs == 6
    player_seven = w == "PLAYER" and ps == 7
    if code == "LUCKY_SIX":
        if not banker_six:
            return None
        if rid == STD:
            return Fraction(20) if f["pn"] == 3 or f["bn"] == 3 else Fraction(12)
        return Fraction(20) if f["bn"] == 3 else Fraction(12)
    if code == "LUCKY_SIX_2CARD":
        return Fraction(22) if banker_six and f["bn"] == 2 else None
    if code == "LUCKY_SIX_3CARD":
        return Fraction(50) if banker_six and f["bn"] == 3 else None
    if code == "LUCKY_SEVEN":
        return (Fraction(6) if f["pn"] == 2 else Fraction(15)) if player_seven else None
    if code == "LUCKY_SEVEN_2CARD":
        return Fraction(15) if player_seven and f["pn"] == 2 else None
    if code == "LUCKY_SEVEN_3CARD":
        return Fraction(30) if player_seven and f["pn"] == 3 else None
    if code == "SUPER_LUCKY_SEVEN":
        if player_seven and bs == 6:
            return Fraction({4: 30, 5: 40, 6: 100}[f["pn"] + f["bn"]])
        return None
    raise AssertionError(code)


def oracle_credit(rid, mode, code, stake, f, cancelled=False):
    if cancelled or code not in OFFERED[rid].get(mode, set()):
        return stake
    odds = oracle_odds(rid, mode, code, f)
    if odds is None:
        return 0
    if odds == PUSH:
        return stake
    return stake + math.floor(stake * odds)


def test_offered_sets_match_the_documents():
    for rid in RULESETS:
        rs = load_ruleset(rid)
        assert {m: set(codes) for m, codes in rs.modes.items()} == OFFERED[rid]


@pytest.mark.parametrize("rid", RULESETS)
def test_oracle_agrees_on_the_hand_built_rounds(rid):
    rs = load_ruleset(rid)
    for name in ROUNDS:
        player, banker = hands(name)
        mine = my_facts(player, banker)
        for mode in MODES:
            for code in BET_CODES:
                assert settle(rs, code, mode, 100, features(name)) == oracle_credit(rid, mode, code, 100, mine), (
                    name, mode, code)  # fmt: skip


six_cards = st.lists(st.sampled_from(ALL_CODES), min_size=6, max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(six_cards, min_size=1, max_size=8), st.data())
def test_settle_matches_the_oracle_on_dealt_rounds(sequences, data):
    for cards in sequences:
        dealt = deal_round(cards)
        f = round_features(dealt.player_cards, dealt.banker_cards)
        mine = my_facts(list(dealt.player_cards), list(dealt.banker_cards))
        rid = data.draw(st.sampled_from(RULESETS))
        stake = data.draw(st.integers(1, 10**9))
        rs = load_ruleset(rid)
        for mode in MODES:
            for code in BET_CODES:
                assert settle(rs, code, mode, stake, f) == oracle_credit(rid, mode, code, stake, mine)


# ---------------------------------------------------------------------------------------------
# Vectorised settlement == scalar settlement

hand_strategy = st.one_of(
    # legally dealt rounds
    six_cards.map(lambda cs: (lambda r: (r.player_cards, r.banker_cards))(deal_round(cs))),
    # any recorded hands of 2 or 3 cards (irregular rounds settle by their cards too)
    st.tuples(
        st.lists(st.sampled_from(ALL_CODES), min_size=2, max_size=3),
        st.lists(st.sampled_from(ALL_CODES), min_size=2, max_size=3),
    ),
)
code_strategy = st.sampled_from([*BET_CODES, "NOT_A_CODE"])
mode_strategy = st.sampled_from([*MODES, "other_mode"])


@settings(max_examples=120, deadline=None)
@given(
    rid=st.sampled_from(RULESETS),
    rounds=st.lists(st.tuples(hand_strategy, st.booleans()), min_size=1, max_size=12),
    data=st.data(),
)
def test_settle_columns_equals_settle(rid, rounds, data):
    rs = load_ruleset(rid)
    feats = [round_features(p, b) for (p, b), _ in rounds]
    cancelled = np.array([c for _, c in rounds], dtype=bool)
    bets = data.draw(
        st.lists(
            st.tuples(code_strategy, mode_strategy, st.integers(1, 10**9), st.integers(0, len(rounds) - 1)),
            min_size=1,
            max_size=60,
        )
    )
    codes = np.array([b[0] for b in bets])
    modes = np.array([b[1] for b in bets])
    stakes = np.array([b[2] for b in bets], dtype=np.int64)
    idx = np.array([b[3] for b in bets], dtype=np.int64)
    got = settle_columns(rs, codes, modes, stakes, idx, feature_columns(feats), cancelled)
    assert got.dtype == np.int64
    want = [settle(rs, c, m, s, feats[i], cancelled=bool(cancelled[i])) for c, m, s, i in bets]
    assert got.tolist() == want


@settings(max_examples=60, deadline=None)
@given(
    rid=st.sampled_from(RULESETS),
    rounding=st.sampled_from(["floor", "half_up", "half_even"]),
    hands_=st.lists(hand_strategy, min_size=1, max_size=6),
    data=st.data(),
)
def test_settle_columns_equals_settle_for_every_rounding_rule(rid, rounding, hands_, data):
    rs = dataclasses.replace(load_ruleset(rid), rounding=rounding)
    feats = [round_features(p, b) for p, b in hands_]
    cols = feature_columns(feats)
    bets = [(code, mode, data.draw(st.integers(1, 999)), i)
            for i in range(len(feats)) for mode in MODES for code in BET_CODES]  # fmt: skip
    got = settle_columns(rs, np.array([b[0] for b in bets]), np.array([b[1] for b in bets]),
                         np.array([b[2] for b in bets]), np.array([b[3] for b in bets]), cols,
                         np.zeros(len(feats), dtype=bool))  # fmt: skip
    assert got.tolist() == [settle(rs, c, m, s, feats[i]) for c, m, s, i in bets]


@pytest.mark.parametrize("round_index", [-1, 2])
def test_settle_columns_refuses_a_round_index_outside_its_rounds(round_index):
    # a wrapped or past-the-end index would silently settle the bet on another round's cards
    rs = load_ruleset(RULESETS[0])
    feats = [features("NO_PAIR"), features("NO_PAIR")]
    with pytest.raises((IndexError, ValueError)):
        settle_columns(rs, np.array(["PLAYER"]), np.array([MODES[0]]), np.array([100]), np.array([round_index]),
                       feature_columns(feats), np.zeros(2, dtype=bool))
