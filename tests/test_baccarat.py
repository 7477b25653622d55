"""Baccarat dealing: scores, naturals, every branch of the third-card rule, decision texts, and the
round facts the paytables read (engine.games.baccarat.features.round_features).

The oracle is RULES.md itself: the Banker table below is typed in from the document's table (and
agrees with the table of documents 000 and 002), not taken from engine.games.baccarat.dealing.BANKER_DRAWS_ON.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import CardCodeError
from engine.games.baccarat.dealing import (
    BANKER,
    PLAYER,
    TIE,
    ShoeExhausted,
    _values_text,
    deal_round,
    dealing_order,
    outcome,
    score,
    third_card_decisions,
)
from engine.games.baccarat.features import FEATURES, feature_columns, round_features

VALUE = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 0, "J": 0, "Q": 0, "K": 0}
ALL_CODES = [r + s for r in "A23456789TJQK" for s in "SHDC"]

# RULES.md "Banker when Player drew a third card of value t", D = draws, S = stands.
#   | 0,1,2 | any   | —            |
#   | 3     | 0–7,9 | 8            |
#   | 4     | 2–7   | 0,1,8,9      |
#   | 5     | 4–7   | 0–3, 8,9     |
#   | 6     | 6,7   | 0–5, 8,9     |
#   | 7     | —     | any          |
# t:                0123456789
BANKER_TABLE = {
    0: "DDDDDDDDDD",
    1: "DDDDDDDDDD",
    2: "DDDDDDDDDD",
    3: "DDDDDDDDSD",
    4: "SSDDDDDDSS",
    5: "SSSSDDDDSS",
    6: "SSSSSSDDSS",
    7: "SSSSSSSSSS",
}
# The reason each decision text must give, as the document's table words it.
BANKER_REASON = {
    0: "0 draws on any",
    1: "1 draws on any",
    2: "2 draws on any",
    3: "3 draws on 0–7, 9",
    4: "4 draws on 2–7",
    5: "5 draws on 4–7",
    6: "6 draws on 6, 7",
    7: "7 stands on any",
}


def card(value: int, suit: str = "S") -> str:
    """A card of the given baccarat value (0 -> a ten)."""
    return ("T" if value == 0 else "A23456789"[value - 1]) + suit


def two_cards(total: int, suits: str) -> tuple[str, str]:
    """Two cards (not a pair) scoring `total`: a face card plus the value card, or 9 + (total-9)."""
    if total == 0:
        return "J" + suits[0], "K" + suits[1]
    return card(total, suits[0]), "Q" + suits[1]


def oracle_deal(cards):
    """RULES.md dealt by hand: P B P B, natural stops, Player 0-5 draws, Banker by the typed table."""
    v = [VALUE[c[0]] for c in cards]
    player, banker = [cards[0], cards[2]], [cards[1], cards[3]]
    p2, b2 = (v[0] + v[2]) % 10, (v[1] + v[3]) % 10
    if p2 >= 8 or b2 >= 8:
        return player, banker
    nxt = 4
    third = None
    if p2 <= 5:
        player.append(cards[nxt])
        third = v[nxt]
        nxt += 1
    banker_draws = b2 <= 5 if third is None else BANKER_TABLE[b2][third] == "D"
    if banker_draws:
        banker.append(cards[nxt])
    return player, banker


# ---------------------------------------------------------------------------------------------
# Scores


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        (["9S", "7H"], 6),  # 002: 9+7=16 -> 6
        (["5S", "5H", "5D"], 5),  # 002: 5+5+5=15 -> 5
        (["TS", "9H"], 9),  # 002: 10+9=19 -> 9
        (["KS", "AH", "5D"], 6),  # 002: K+A+5=16 -> 6
        (["8S", "9H"], 7),  # 000: 8+9=17 -> 7
        (["8S", "7H"], 5),  # 001: 8+7=15 -> 5
        (["AS", "3H", "5D"], 9),  # 001: J(A,3,5) = 9
        (["JS", "2H", "AD"], 3),  # 001: D(J,2,A) = 3
        (["TS", "JH", "QD"], 0),
        (["KS", "KH"], 0),
        (["9S", "9H", "9D"], 7),
        (["AS"], 1),
        ([], 0),
    ],
)
def test_score_examples_from_the_documents(cards, expected):
    assert score(cards) == expected


def test_score_rejects_bad_codes():
    with pytest.raises(CardCodeError):
        score(["AS", "1S"])


def test_outcome():
    assert outcome(9, 3) == PLAYER
    assert outcome(3, 9) == BANKER
    assert outcome(6, 6) == TIE
    assert outcome(0, 0) == TIE
    assert (PLAYER, BANKER, TIE) == ("PLAYER", "BANKER", "TIE")


# ---------------------------------------------------------------------------------------------
# The document-001 example, dealt


def test_document_001_example_round():
    # J(A,3,5) = 9 beats D(J,2,A) = 3. Dealt P B P B: A J 3 2; Player 4 draws the 5; Banker 2 draws
    # on any third card and takes the A.
    r = deal_round(["AS", "JH", "3D", "2C", "5S", "AH"])
    assert r.player_cards == ("AS", "3D", "5S")
    assert r.banker_cards == ("JH", "2C", "AH")
    assert (r.player_score, r.banker_score, r.outcome) == (9, 3, "PLAYER")
    assert r.dealing_order == ("AS", "JH", "3D", "2C", "5S", "AH")
    assert r.end == 6
    assert r.decisions[0].draws and "Player 4 -> draws" in r.decisions[0].rule
    assert r.decisions[1].rule == "Banker 2, Player's third card 5 -> draws (2 draws on any)"


# ---------------------------------------------------------------------------------------------
# Naturals


@pytest.mark.parametrize("natural", [8, 9])
@pytest.mark.parametrize("other", range(10))
@pytest.mark.parametrize("side", ["player", "banker"])
def test_a_natural_stops_the_deal(natural, other, side):
    nat, oth = two_cards(natural, "SH"), two_cards(other, "DC")
    p, b = (nat, oth) if side == "player" else (oth, nat)
    cards = [p[0], b[0], p[1], b[1], "5S", "5H"]
    r = deal_round(cards)
    assert len(r.player_cards) == 2 and len(r.banker_cards) == 2
    assert r.end == 4
    assert not r.decisions[0].draws and not r.decisions[1].draws
    assert "natural" in r.decisions[0].rule and "nobody draws" in r.decisions[0].rule
    assert "natural" in r.decisions[1].rule
    pdec, bdec = third_card_decisions(r.player_cards, r.banker_cards)
    assert not pdec.draws and not bdec.draws


def test_natural_texts_name_the_hand():
    r = deal_round(["9S", "KH", "TD", "QC"])
    assert r.decisions[0].rule == "Player natural 9 -> nobody draws"
    r = deal_round(["2S", "8H", "3D", "KC"])
    assert r.decisions[0].rule == "Banker natural 8 -> nobody draws"
    assert r.decisions[1].rule == "natural on the table -> Banker stands"


# ---------------------------------------------------------------------------------------------
# Player: draws on 0-5, stands on 6-7


@pytest.mark.parametrize("p", range(8))
@pytest.mark.parametrize("b", range(8))
def test_player_rule(p, b):
    pc, bc = two_cards(p, "SH"), two_cards(b, "DC")
    cards = [pc[0], bc[0], pc[1], bc[1], "TS", "TH"]
    r = deal_round(cards)
    dec = r.decisions[0]
    if p <= 5:
        assert len(r.player_cards) == 3 and r.player_cards[2] == "TS"
        assert dec.draws and dec.rule == f"Player {p} -> draws (Player draws on 0–5)"
    else:
        assert len(r.player_cards) == 2
        assert not dec.draws and dec.rule == f"Player {p} -> stands (Player stands on 6–7)"


# ---------------------------------------------------------------------------------------------
# Banker when the Player stood: draws on 0-5, stands on 6-7


@pytest.mark.parametrize("p", [6, 7])
@pytest.mark.parametrize("b", range(8))
def test_banker_when_player_stood(p, b):
    pc, bc = two_cards(p, "SH"), two_cards(b, "DC")
    r = deal_round([pc[0], bc[0], pc[1], bc[1], "4D", "9C"])
    assert len(r.player_cards) == 2
    dec = r.decisions[1]
    if b <= 5:
        assert r.banker_cards == (bc[0], bc[1], "4D")  # the very next card: no Player third card
        assert dec.draws and dec.rule == f"Banker {b}, Player stood -> draws (draws on 0–5)"
        assert r.end == 5
    else:
        assert len(r.banker_cards) == 2
        assert not dec.draws and dec.rule == f"Banker {b}, Player stood -> stands (stands on 6–7)"
        assert r.end == 4


# ---------------------------------------------------------------------------------------------
# Banker when the Player drew: the full table, every Banker 0..7 against every third card 0..9


@pytest.mark.parametrize("b", range(8))
@pytest.mark.parametrize("t", range(10))
@pytest.mark.parametrize("p", range(6))
def test_banker_table(b, t, p):
    pc, bc = two_cards(p, "SH"), two_cards(b, "DC")
    third = card(t, "D")
    cards = [pc[0], bc[0], pc[1], bc[1], third, "5H", "6H"]
    r = deal_round(cards)
    assert r.player_cards == (pc[0], pc[1], third)
    draws = BANKER_TABLE[b][t] == "D"
    dec = r.decisions[1]
    assert dec.draws is draws
    if draws:
        assert r.banker_cards == (bc[0], bc[1], "5H")
        assert r.end == 6
    else:
        assert r.banker_cards == (bc[0], bc[1])
        assert r.end == 5
    verb = "draws" if draws else "stands"
    assert dec.rule == f"Banker {b}, Player's third card {t} -> {verb} ({BANKER_REASON[b]})"


def test_decision_text_of_the_brief():
    r = deal_round(["3S", "4H", "KD", "KC", "7D", "2S"])
    assert r.decisions[1].rule == "Banker 4, Player's third card 7 -> draws (4 draws on 2–7)"


@pytest.mark.parametrize(
    ("values", "text"),
    [
        (set(), "never"),
        ({3}, "3"),
        (set(range(10)), "0–9"),
        ({0, 1, 2, 3, 4, 5, 6, 7, 9}, "0–7, 9"),
        ({2, 3, 4, 5, 6, 7}, "2–7"),
        ({4, 5, 6, 7}, "4–7"),
        ({6, 7}, "6, 7"),
        ({0, 1, 8, 9}, "0, 1, 8, 9"),
        ({0, 1, 2, 3, 8, 9}, "0–3, 8, 9"),
        ({0, 1, 2, 3, 4, 5, 8, 9}, "0–5, 8, 9"),
        ({1, 3, 5}, "1, 3, 5"),
        ({0, 2, 3, 4, 9}, "0, 2–4, 9"),
    ],
)
def test_values_text_prints_runs(values, text):
    assert _values_text(frozenset(values)) == text


# ---------------------------------------------------------------------------------------------
# Running out of cards, bad cards, offsets


def test_shoe_exhausted_mid_round():
    with pytest.raises(ShoeExhausted):
        deal_round(["AS", "2S", "3S"])
    with pytest.raises(ShoeExhausted):  # Player 4 must draw, no fifth card
        deal_round(["AS", "KS", "3S", "KH"])
    with pytest.raises(ShoeExhausted):  # Player 4 draws a 5, Banker 0 must draw, no sixth card
        deal_round(["AS", "KS", "3S", "KH", "5D"])
    # exactly enough cards is fine
    assert deal_round(["AS", "KS", "3S", "KH", "5D", "2C"]).end == 6
    assert deal_round(["9S", "KS", "KH", "KD"]).end == 4


def test_bad_card_in_the_sequence():
    with pytest.raises(CardCodeError):
        deal_round(["AS", "KS", "3S", "1H"])


def test_deal_from_an_offset_keeps_shoe_positions():
    cards = ["XX", "YY", "AS", "JH", "3D", "2C", "5S", "AH", "ZZ"]
    r = deal_round(cards, start=2, round_no=7)
    assert (r.start, r.end, r.round_no) == (2, 8, 7)
    assert r.dealing_order == tuple(cards[2:8])


def test_dealing_order():
    assert dealing_order(("AS", "3D"), ("JH", "2C")) == ("AS", "JH", "3D", "2C")
    assert dealing_order(("AS", "3D", "5S"), ("JH", "2C")) == ("AS", "JH", "3D", "2C", "5S")
    assert dealing_order(("6S", "TD"), ("JH", "2C", "9H")) == ("6S", "JH", "TD", "2C", "9H")
    assert dealing_order(("AS", "3D", "5S"), ("JH", "2C", "AH")) == ("AS", "JH", "3D", "2C", "5S", "AH")


def test_third_card_decisions_on_recorded_hands():
    # Player 4 should draw but the record has no third card: the Banker is judged as if Player stood
    p, b = third_card_decisions(("AS", "3D"), ("KH", "6C"))
    assert p.draws and not b.draws and "Player stood" in b.rule
    # Player 6 stands; Banker 3 (Player stood) draws
    p, b = third_card_decisions(("6S", "KD"), ("AH", "2C"))
    assert not p.draws and b.draws
    # Player drew a 8: Banker 3 stands
    p, b = third_card_decisions(("AS", "3D", "8C"), ("AH", "2C"))
    assert p.draws and not b.draws and b.rule.endswith("(3 draws on 0–7, 9)")


# ---------------------------------------------------------------------------------------------
# Round facts (engine.games.baccarat.features.round_features), hand-worked


def facts(player, banker):
    return round_features(player.split(), banker.split())


def test_features_of_document_001_example():
    assert facts("AS 3D 5S", "JH 2C AH") == {
        "outcome": "PLAYER",
        "player_score": 9,
        "banker_score": 3,
        "player_card_count": 3,
        "banker_card_count": 3,
        "total_card_count": 6,
        "margin": 6,
        "player_natural": False,
        "banker_natural": False,
        "natural": False,
        "anyone_drew": True,
        "player_pair": False,
        "banker_pair": False,
        "any_pair": False,
        "perfect_pair": False,
    }


def test_features_natural_pairs():
    # Player 9+7=16 -> 6 stands; Banker K+K = 0 ... here a recorded natural-free round
    f = facts("9S 7H", "KS KD 6C")
    assert (f["player_score"], f["banker_score"], f["outcome"]) == (6, 6, "TIE")
    assert f["banker_pair"] and not f["player_pair"] and f["any_pair"] and not f["perfect_pair"]
    assert (f["player_card_count"], f["banker_card_count"], f["total_card_count"]) == (2, 3, 5)
    assert f["anyone_drew"] and f["margin"] == 0
    # perfect pair: same rank and suit (two decks in the shoe)
    f = facts("3H 3H", "TD 9C")
    assert f["player_pair"] and f["perfect_pair"] and f["any_pair"] and not f["banker_pair"]
    assert f["banker_natural"] and not f["player_natural"] and f["natural"]
    assert (f["player_score"], f["banker_score"], f["outcome"], f["margin"]) == (6, 9, "BANKER", 3)
    f = facts("4H 4H", "TD 9C")  # 4+4 = 8: a natural too
    assert f["player_natural"] and f["banker_natural"] and f["perfect_pair"]
    assert (f["player_score"], f["banker_score"], f["outcome"], f["margin"]) == (8, 9, "BANKER", 1)
    assert not f["anyone_drew"] and f["total_card_count"] == 4
    # same rank, different suits: a pair, not a perfect pair; T and K are not a pair
    f = facts("QS QH 5D", "TS KS")
    assert f["player_pair"] and not f["perfect_pair"] and not f["banker_pair"]
    # K+A+5 -> 6
    f = facts("KS AH 5D", "3C 3D 2H")
    assert f["player_score"] == 6 and f["banker_score"] == 8 and f["outcome"] == "BANKER"
    assert f["banker_pair"] and not f["banker_natural"]  # 3+3 = 6 on two cards, not a natural
    assert f["margin"] == 2
    # both naturals, tie
    f = facts("8S KH", "9D 9C")  # 9+9 = 18 -> 8: natural tie
    assert f["player_natural"] and f["banker_natural"] and f["outcome"] == "TIE" and f["banker_pair"]
    f = facts("9S KH", "9D 9C")
    assert f["player_natural"] and f["banker_natural"] and f["outcome"] == "PLAYER" and f["margin"] == 1
    f = facts("4S 4H", "QD 8C")
    assert f["outcome"] == "TIE" and f["natural"] and f["player_pair"] and not f["perfect_pair"]
    # the third card does not make a natural: 5+2 then 2 = 9 on three cards
    f = facts("5S 2H 2D", "KD 6C")
    assert f["player_score"] == 9 and not f["player_natural"] and f["margin"] == 3


def test_feature_columns_follow_round_features():
    rounds = [facts("AS 3D 5S", "JH 2C AH"), facts("3H 3H", "TD 9C"), facts("9S 7H", "KS KD 6C")]
    cols = feature_columns(rounds)
    assert set(cols) == set(FEATURES)
    assert list(cols["outcome"]) == ["PLAYER", "BANKER", "TIE"]
    assert list(cols["margin"]) == [6, 3, 0]
    assert list(cols["perfect_pair"]) == [False, True, False]
    assert list(cols["total_card_count"]) == [6, 4, 5]


# ---------------------------------------------------------------------------------------------
# Property: deal_round agrees with the hand-typed rule on any card sequence

codes = st.sampled_from(ALL_CODES)


@settings(max_examples=400, deadline=None)
@given(st.lists(codes, min_size=6, max_size=6))
def test_deal_round_matches_the_typed_rule(cards):
    r = deal_round(cards)
    player, banker = oracle_deal(cards)
    assert list(r.player_cards) == player
    assert list(r.banker_cards) == banker
    assert 4 <= r.end <= 6
    assert r.dealing_order == tuple(cards[: r.end])
    assert 0 <= r.player_score <= 9 and 0 <= r.banker_score <= 9
    assert r.player_score == sum(VALUE[c[0]] for c in player) % 10
    assert r.banker_score == sum(VALUE[c[0]] for c in banker) % 10
    # the recorded-hand judge agrees with the dealer
    pdec, bdec = third_card_decisions(r.player_cards, r.banker_cards)
    assert (pdec, bdec) == r.decisions
    assert pdec.draws == (len(player) == 3)
    assert bdec.draws == (len(banker) == 3)
