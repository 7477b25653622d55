"""engine/games/blackjack/audit.py (audit_shoe) on hand-built shoes, every expected value worked by hand.

How the shoes are written: `make_shoe("2D TS 5C ...")` lists the shoe's first cards, the burn card first
(burn_cards=1, so round 1 starts at cards[1]), then the rest of a full 52-card deck follows in CARD_CODES
order (decks=1, so the composition check is clean). The listed cards of a round are in 004's dealing
order: the first card of each box (ascending), the dealer's upcard, the second card of each box, each
box's further cards box by box, the dealer's second card and draws.

The bundled ruleset blackjack_8d_live: H17, no hole card, blackjack 3:2, win 1:1, insurance 2:1 up to
half the main stake, pair 6:1 mixed / 12:1 coloured / 25:1 perfect (needs a MAIN of the same account,
at most 1/10 of the table maximum), one split (same rank only), a doubled or split box loses "all" to a
dealer blackjack. Credit = stake returned + win; amounts in cents of EUR. Stakes are 1000 (10.00 EUR)
unless a test says otherwise.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from engine.cards import new_shoe
from engine.games.blackjack.audit import (
    RecordedBet,
    RecordedRound,
    ShoeFacts,
    TableFacts,
    audit_shoe,
    dealing_sequence,
)
from engine.games.blackjack.records import card_codes
from engine.games.blackjack.rules import load_blackjack_rules
from engine.games.blackjack.strategy import load_basic_strategy

RULES = load_blackjack_rules()
CHART = load_basic_strategy()
TABLE = TableFacts(
    table_id="BJ1",
    currency="EUR",
    table_max=100_000,  # 1,000.00 EUR: the pair cap is 1/10 of it, 10_000
    limits={"MAIN": (100, 100_000), "PAIR": (100, 50_000), "INSURANCE": (50, 50_000), "BET_BEHIND": (100, 100_000)},
)
CLOSED = 1_700_000_000_000_000  # betting closes at 2023-11-14T22:13:20Z (µs since the epoch)
BEFORE = CLOSED - 1_000_000  # bets are placed one second before the close unless a test says otherwise


# --- builders ----------------------------------------------------------------------------------------


def make_shoe(cards: str, decks: int = 1) -> tuple[str, ...]:
    """`cards` first, then the rest of `decks` full decks (what `cards` did not use) in CARD_CODES order."""
    first = cards.split()
    left = Counter(new_shoe(decks))
    left.subtract(first)
    assert min(left.values()) >= 0, f"test data: a card listed more often than {decks} deck(s) hold it"
    rest = []
    for code in new_shoe(decks):
        if left[code] > 0:
            left[code] -= 1
            rest.append(code)
    shoe = tuple(first + rest)
    assert len(shoe) == 52 * decks
    return shoe


def shoe_facts(cards: str, *, decks: int = 1, cut_index: int | None = None) -> ShoeFacts:
    return ShoeFacts("S1", decks, make_shoe(cards, decks), cut_index)


def box(number: int, cards: str, actions: str, auto: bool = False) -> tuple[int, tuple[str, ...], str, bool]:
    return number, tuple(cards.split()), actions, auto


def rnd(no: int, dealer: str, *boxes, status: str = "settled") -> RecordedRound:
    return RecordedRound(
        round_id=f"R{no}",
        round_no=no,
        status=status,
        betting_closed_at=CLOSED,
        dealer_cards=tuple(dealer.split()),
        boxes=tuple(b[0] for b in boxes),
        box_cards=tuple(b[1] for b in boxes),
        box_actions=tuple(b[2] for b in boxes),
        box_auto_played=tuple(b[3] for b in boxes),
    )


def bet(
    bet_id: str,
    bet_type: str,
    seat: int | None,
    stake: int,
    paid: int,
    *,
    account: str = "A",
    added: int | None = None,
    round_index: int = 0,
    placed_at: int = BEFORE,
) -> RecordedBet:
    return RecordedBet(bet_id, round_index, account, bet_type, seat, stake, added, paid, placed_at)


def run(shoe: ShoeFacts, rounds, bets=(), rules=RULES):
    return audit_shoe(rules, CHART, TABLE, shoe, rounds, bets)


def found(audit, *, without: tuple[str, ...] = ()) -> list[tuple[str, str | None, str | None]]:
    """(kind, round_id, bet_id) of every finding, in the order the audit made them."""
    return [(f.kind, f.round_id, f.bet_id) for f in audit.findings if f.kind not in without]


def only(audit, kind: str):
    (finding,) = [f for f in audit.findings if f.kind == kind]
    return finding


# The clean round of several tests. Burn 2D; box 1 TS, box 2 5C, upcard 6D, box 1 8H, box 2 7D,
# box 2 hits 4S, dealer's second card 4C, dealer draws 7H.
#   box 1: TS 8H = 18, stands.         box 2: 5C 7D = 12, hits 4S = 16, stands.
#   dealer: 6D 4C = 10 draws, 6D 4C 7H = hard 17 stands.
#   box 1: 18 > 17 wins 1:1 -> 1000 + 1000 = 2000.  box 2: 16 < 17 loses -> 0.
# Round 1 takes cards[1..8]; round 2 starts at cards[9]: box 3 KC, upcard 5H, box 3 9C, dealer TD, 3S.
#   box 3: KC 9C = 19 stands; dealer 5H TD = 15 draws 3S = 18; 19 > 18 wins -> 2000.
CLEAN_SHOE = "2D TS 5C 6D 8H 7D 4S 4C 7H KC 5H 9C TD 3S"
ROUND_2 = rnd(2, "5H TD 3S", box(3, "KC 9C", "S"))


def clean_round_1(box_2_cards: str = "5C 7D 4S") -> RecordedRound:
    return rnd(1, "6D 4C 7H", box(1, "TS 8H", "S"), box(2, box_2_cards, "HS"))


# --- the dealing -------------------------------------------------------------------------------------


def test_dealing_sequence_is_firsts_upcard_seconds_draws_box_by_box_then_dealer():
    # Box 1 split 8S 8D and drew TC, 5H; box 2 KS 9C stood; dealer 6H, then TC, 2S.
    # Order: 8S KS (first cards), 6H (upcard), 8D 9C (second cards), TC 5H (box 1's others), TC 2S.
    seq = dealing_sequence(("6H", "TC", "2S"), (("8S", "8D", "TC", "5H"), ("KS", "9C")))
    assert seq == ["8S", "KS", "6H", "8D", "9C", "TC", "5H", "TC", "2S"]


def test_clean_two_rounds_no_findings_and_round_2_starts_after_round_1():
    bets = [
        bet("b1", "MAIN", 1, 1000, 2000, account="A"),
        bet("b2", "MAIN", 2, 1000, 0, account="B"),
        bet("b3", "MAIN", 3, 1000, 2000, account="C", round_index=1),
    ]
    audit = run(shoe_facts(CLEAN_SHOE), [clean_round_1(), ROUND_2], bets)
    assert found(audit) == []
    assert audit.credits() == [2000, 0, 2000]
    assert audit.unsettled == [None, None, None]
    # Round 1 starts after the burn card; it took 8 cards (1..8), so round 2 starts at card 9.
    assert [r.shoe_position for r in audit.rounds] == [1, 9]
    assert [r.dealer_total for r in audit.rounds] == [17, 18]
    assert audit.rounds[0].expected_box_cards == (("TS", "8H"), ("5C", "7D", "4S"))
    assert audit.rounds[0].expected_dealer_cards == ("6D", "4C", "7H")
    assert [r.finding_kinds for r in audit.rounds] == [(), ()]


def test_short_shoe_is_one_shoe_composition_finding():
    # Only the burn card and round 1's eight cards: 52 - 9 = 43 codes missing; the round itself is clean.
    shoe = ShoeFacts("S1", 1, tuple(CLEAN_SHOE.split()[:9]), None)
    audit = run(shoe, [clean_round_1()], [bet("b1", "MAIN", 1, 1000, 2000)])
    assert found(audit) == [("SHOE_COMPOSITION", None, None)]
    finding = only(audit, "SHOE_COMPOSITION")
    assert finding.expected == "1 full decks"
    assert finding.recorded.startswith("not 1 full decks: missing ")
    assert finding.recorded.count("x1") == 43
    assert audit.credits() == [2000]


def test_duplicate_card_is_shoe_composition_missing_and_extra():
    cards = list(make_shoe(CLEAN_SHOE))
    cards[cards.index("AH")] = "AS"  # AH is in the undealt rest: now AS twice, no AH
    audit = run(ShoeFacts("S1", 1, tuple(cards), None), [clean_round_1()])
    assert found(audit) == [("SHOE_COMPOSITION", None, None)]
    assert only(audit, "SHOE_COMPOSITION").recorded == "not 1 full decks: missing AHx1; extra ASx1"



@pytest.mark.parametrize("change,recorded", [
    (None, None),
    (("AH", "AS"), "not 1 full decks: missing AHx1; extra ASx1"),
    (("AH", None), "not 1 full decks: missing AHx1; unknown codes None"),
    (("AH", "1H"), "not 1 full decks: missing AHx1; unknown codes '1H'"),
    ((None, "AS"), "not 1 full decks: extra ASx1"),  # (a card too many, none missing)
])
def test_a_shoe_read_as_codes_is_judged_as_its_cards(change, recorded):
    """A shoe whose cards an adaptor read as codes (ShoeFacts.codes): full decks counted from the codes, and any
    other shoe described from its cards as always (a duplicate, a card not recorded, a text that is no card)."""
    cards = list(make_shoe(CLEAN_SHOE))
    if change and change[0] is None:
        cards.append(change[1])
    elif change:
        cards[cards.index(change[0])] = change[1]
    shoe = ShoeFacts("S1", 1, tuple(cards), None, np.array(card_codes(cards), np.int64))
    audit = run(shoe, [clean_round_1()])
    assert [f.recorded for f in audit.findings] == ([recorded] if recorded else [])
    assert audit == run(replace(shoe, codes=None), [clean_round_1()])

# --- CARD_SEQUENCE_MISMATCH --------------------------------------------------------------------------


def test_card_sequence_mismatch_hit_card_of_another_suit():
    # The shoe dealt 4S as box 2's hit; 4H was recorded. Same value: box 2 is still 16 and loses.
    bets = [
        bet("b1", "MAIN", 1, 1000, 2000),
        bet("b2", "MAIN", 2, 1000, 0, account="B"),
        bet("b3", "MAIN", 3, 1000, 2000, account="C", round_index=1),
    ]
    audit = run(shoe_facts(CLEAN_SHOE), [clean_round_1("5C 7D 4H"), ROUND_2], bets)
    # One finding for round 1; round 2 still starts at card 9 and matches.
    assert found(audit) == [("CARD_SEQUENCE_MISMATCH", "R1", None)]
    finding = only(audit, "CARD_SEQUENCE_MISMATCH")
    assert finding.expected == "TS 5C 6D 8H 7D 4S 4C 7H"
    assert finding.recorded == "TS 5C 6D 8H 7D 4H 4C 7H"
    assert audit.credits() == [2000, 0, 2000]
    assert audit.rounds[1].shoe_position == 9


def test_card_sequence_mismatch_paid_follows_the_recorded_cards():
    # The shoe dealt 4S (box 2: 16, loses: 0); 5S was recorded: box 2 5C 7D 5S = 17 = dealer's 17, a push:
    # the expected credit is the stake back, 1000, as the recorded cards say.
    bets = [bet("b1", "MAIN", 1, 1000, 2000), bet("b2", "MAIN", 2, 1000, 1000, account="B")]
    audit = run(shoe_facts(CLEAN_SHOE), [clean_round_1("5C 7D 5S")], bets)
    assert found(audit) == [("CARD_SEQUENCE_MISMATCH", "R1", None)]
    assert audit.credits() == [2000, 1000]


# --- DEALER_DRAW_RULE --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dealer", "flagged", "credit"),
    [
        # 6C AD = soft 17: H17 must draw; standing is flagged. Box 19 > 17 wins: 2000.
        ("6C AD", True, 2000),
        # TC 7D = hard 17: must stand; drawing 2S is flagged. Box 19 = 19 pushes: 1000.
        ("TC 7D 2S", True, 1000),
        # TC 7D = hard 17 and stands: right. Box 19 > 17: 2000.
        ("TC 7D", False, 2000),
        # TC 6D = 16 draws AS: T+6+A = hard 17 (the ace counts 1), stands: right. 19 > 17: 2000.
        ("TC 6D AS", False, 2000),
        # 6C AD = soft 17 draws 3S: A+6+3 = soft 20, stands: right. 19 < 20: 0.
        ("6C AD 3S", False, 0),
    ],
)
def test_dealer_draw_rule(dealer, flagged, credit):
    # Burn 2D; box 1 TS, upcard, box 1 9H (19, stands), then the dealer's other cards.
    up, *others = dealer.split()
    shoe = shoe_facts(f"2D TS {up} 9H {' '.join(others)}")
    audit = run(shoe, [rnd(1, dealer, box(1, "TS 9H", "S"))], [bet("b1", "MAIN", 1, 1000, credit)])
    assert found(audit) == ([("DEALER_DRAW_RULE", "R1", None)] if flagged else [])
    assert audit.credits() == [credit]
    if flagged:
        assert only(audit, "DEALER_DRAW_RULE").expected == "H17 draws"
        assert only(audit, "DEALER_DRAW_RULE").recorded == dealer


@pytest.mark.parametrize(("reading", "dealer", "flagged"), [
    ("second_card_only", "7D 8S", False), ("second_card_only", "7D 8S 2C", True),
    ("either", "7D 8S", False), ("either", "7D 8S 2C", False),
])
def test_dealer_draw_rule_every_box_bust_only_the_second_card(reading, dealer, flagged):
    # Box 1 TS 6H = 16 hits 9C = 25: bust. No hand left live: under second_card_only the dealer takes its
    # second card (7D 8S = 15) and stops; a third card (2C) is flagged, as a convention (major: no bet
    # depends on it), never DEALER_DRAW_RULE; "either" (the default) accepts both. The bust box loses: 0.
    shoe = shoe_facts(f"2D TS 7D 6H 9C {dealer.split(maxsplit=1)[1]}")
    rules = replace(RULES, dealer_when_all_settled=reading)
    audit = run(shoe, [rnd(1, dealer, box(1, "TS 6H 9C", "H"))], [bet("b1", "MAIN", 1, 1000, 0)], rules=rules)
    assert found(audit) == ([("DEALER_DRAW_CONVENTION", "R1", None)] if flagged else [])
    assert audit.credits() == [0]


def test_dealer_only_second_card_after_illegal_hit_after_stand_busts():
    # Box 1 TS 9H = 19 stands, then an illegal hit (action after stand) deals 5C: 24, bust (settled as bust: 0).
    # No hand is live, so the dealer takes only its second card: 8C 7D. The replay agrees (the round report's
    # expected dealer cards are 8C 7D); the only finding should be the illegal hit.
    shoe = shoe_facts("2D TS 8C 9H 5C 7D")
    audit = run(shoe, [rnd(1, "8C 7D", box(1, "TS 9H 5C", "SH"))], [bet("b1", "MAIN", 1, 1000, 0)])
    assert audit.rounds[0].expected_dealer_cards == ("8C", "7D")
    assert audit.credits() == [0]
    assert found(audit) == [("ILLEGAL_DECISION", "R1", None)]


def test_dealer_stood_on_soft_17_with_the_shoe_s_last_cards():
    # A full deck whose last four cards are the round (burn_cards=48 burns everything before them):
    # box 1 TS, upcard 6C, box 1 9H, dealer AD. The dealer stood on 6C AD = soft 17 (must draw under H17).
    # The recorded cards settle the round: 19 > 17 wins, 2000.
    round_cards = ["TS", "6C", "9H", "AD"]
    cards = tuple([c for c in new_shoe(1) if c not in round_cards] + round_cards)
    rules = replace(RULES, burn_cards=48)
    audit = run(
        ShoeFacts("S1", 1, cards, None),
        [rnd(1, "6C AD", box(1, "TS 9H", "S"))],
        [bet("b1", "MAIN", 1, 1000, 2000)],
        rules=rules,
    )
    assert audit.unsettled == [None]
    assert audit.credits() == [2000]
    assert found(audit) == [("DEALER_DRAW_RULE", "R1", None)]


# --- decisions ---------------------------------------------------------------------------------------


def test_illegal_double_on_three_cards():
    # Box 1 5S 3H = 8 hits 2C = 10, doubles on three cards (illegal, carried out): 9D, 19. Dealer 7C TH = 17.
    # Doubled stake 2000 wins 1:1 -> 4000; added_stake 1000 is what the double added.
    shoe = shoe_facts("2D 5S 7C 3H 2C 9D TH")
    audit = run(shoe, [rnd(1, "7C TH", box(1, "5S 3H 2C 9D", "HD"))], [bet("b1", "MAIN", 1, 1000, 4000, added=1000)])
    assert found(audit) == [("ILLEGAL_DECISION", "R1", None)]
    assert only(audit, "ILLEGAL_DECISION").recorded == "box 1: D"
    assert "double on 3 cards" in only(audit, "ILLEGAL_DECISION").message
    assert audit.credits() == [4000]


def test_illegal_split_of_king_and_ten():
    # Box 1 KS TH split (illegal: same rank only, carried out). Hand 1 KS gets 9C = 19, stands; hand 2 TH gets
    # 8D = 18, stands. Dealer 6H TC = 16 draws 2S = 18. Hand 1 wins 2000, hand 2 pushes 1000: 3000.
    shoe = shoe_facts("2D KS 6H TH 9C 8D TC 2S")
    audit = run(
        shoe, [rnd(1, "6H TC 2S", box(1, "KS TH 9C 8D", "PSS"))], [bet("b1", "MAIN", 1, 1000, 3000, added=1000)]
    )
    assert found(audit) == [("ILLEGAL_DECISION", "R1", None)]
    assert only(audit, "ILLEGAL_DECISION").recorded == "box 1: P"
    assert "split of K and T (same rank only)" in only(audit, "ILLEGAL_DECISION").message
    assert audit.credits() == [3000]


def test_decision_missing_when_letters_end_on_a_live_hand():
    # Box 1 TS 2H = 12 hits 3C = 15; no further letter: played as a stand. Dealer 9S 8D = 17. 15 < 17: 0.
    shoe = shoe_facts("2D TS 9S 2H 3C 8D")
    audit = run(shoe, [rnd(1, "9S 8D", box(1, "TS 2H 3C", "H"))], [bet("b1", "MAIN", 1, 1000, 0)])
    assert found(audit) == [("DECISION_MISSING", "R1", None)]
    assert only(audit, "DECISION_MISSING").recorded == "box 1 hand 1"
    assert audit.credits() == [0]


def test_auto_play_deviation_stand_on_hard_12_against_2():
    # basic_strategy_8d_h17_enhc.toml, [hard] row 12, column "2": "H". The auto-played box stood.
    assert CHART.cell("hard", 12, "2") == "H"
    # Box 1 TS 2H = 12 stands; dealer 2C TD = 12 draws 5S = hard 17. 12 < 17: 0.
    shoe = shoe_facts("2D TS 2C 2H TD 5S")
    audit = run(shoe, [rnd(1, "2C TD 5S", box(1, "TS 2H", "S", auto=True))], [bet("b1", "MAIN", 1, 1000, 0)])
    assert found(audit) == [("AUTO_PLAY_DEVIATION", "R1", None)]
    assert only(audit, "AUTO_PLAY_DEVIATION").expected == "box 1: H"
    assert only(audit, "AUTO_PLAY_DEVIATION").recorded == "box 1: S"
    assert audit.credits() == [0]


def test_auto_played_boxes_following_the_chart_are_not_flagged():
    # Chart cells (by hand, from the toml): hard 12 vs 2 "H", hard 18 vs 2 "S", hard 11 vs 2 "Dh" (double).
    # Box 1 TS 2H = 12 hits 6S = 18 stands. Box 2 6D 5D = 11 doubles: 9H, 20. Dealer 2C TD = 12 draws 5S = 17.
    # Order: TS 6D | 2C | 2H 5D | 6S (box 1) 9H (box 2) | TD 5S.
    # Box 1: 18 > 17 wins 2000. Box 2: 20 > 17, doubled 2000 wins -> 4000.
    shoe = shoe_facts("2D TS 6D 2C 2H 5D 6S 9H TD 5S")
    rounds = [rnd(1, "2C TD 5S", box(1, "TS 2H 6S", "HS", auto=True), box(2, "6D 5D 9H", "D", auto=True))]
    bets = [bet("b1", "MAIN", 1, 1000, 2000), bet("b2", "MAIN", 2, 1000, 4000, account="B", added=1000)]
    audit = run(shoe, rounds, bets)
    assert found(audit) == []
    assert audit.credits() == [2000, 4000]


# --- the cut card ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("cut_index", "round_2_flagged"), [(4, True), (5, False)])
def test_round_after_cut(cut_index, round_2_flagged):
    # Round 1: TS 8C 9H TD = cards 1..4 (box 19 stands, dealer 8C TD = 18). Round 2: KS 9D 7H 8S = cards
    # 5..8 (box 17 stands, dealer 9D 8S = 17). cut_index 4: round 1 deals the cut card, round 2 is after it.
    # cut_index 5: round 1 stops short of it; round 2 is the cut-card round and is allowed.
    shoe = shoe_facts("2D TS 8C 9H TD KS 9D 7H 8S", cut_index=cut_index)
    rounds = [rnd(1, "8C TD", box(1, "TS 9H", "S")), rnd(2, "9D 8S", box(1, "KS 7H", "S"))]
    audit = run(shoe, rounds)
    assert found(audit) == ([("ROUND_AFTER_CUT", "R2", None)] if round_2_flagged else [])
    assert [r.cut_card_round for r in audit.rounds] == ([True, False] if round_2_flagged else [False, True])
    assert [r.after_cut for r in audit.rounds] == [False, round_2_flagged]


# --- bets --------------------------------------------------------------------------------------------

# Box 1 TS 9H = 19 stands against dealer TD 7C = 17: MAIN 1000 wins -> 2000.
WIN_SHOE = "2D TS TD 9H 7C"
WIN_ROUND = rnd(1, "TD 7C", box(1, "TS 9H", "S"))
# Box 1 TS 9H = 19 against AD 6C = soft 17, which draws 2S: soft 19. Push: MAIN 1000 -> 1000.
# Insurance was offered (ace up) and loses (no dealer blackjack): 0.
ACE_SHOE = "2D TS AD 9H 6C 2S"
ACE_ROUND = rnd(1, "AD 6C 2S", box(1, "TS 9H", "S"))


@pytest.mark.parametrize(("added", "mismatch"), [(1000, False), (None, True), (0, True), (2000, True)])
def test_main_with_a_double_added_stake(added, mismatch):
    # Box 1 6S 5H = 11 doubles: 9C, 20. Dealer 7D TC = 17. Staked 1000 + 1000; 20 > 17 wins -> 4000.
    shoe = shoe_facts("2D 6S 7D 5H 9C TC")
    audit = run(shoe, [rnd(1, "7D TC", box(1, "6S 5H 9C", "D"))], [bet("m1", "MAIN", 1, 1000, 4000, added=added)])
    assert found(audit) == ([("ADDED_STAKE_MISMATCH", "R1", "m1")] if mismatch else [])
    assert audit.credits() == [4000]
    if mismatch:
        assert only(audit, "ADDED_STAKE_MISMATCH").expected == "10.00 EUR"


@pytest.mark.parametrize(
    ("second", "credit"),
    [
        ("8H", 100 + 25 * 100),  # 8H 8H: perfect pair (two decks), 25:1 -> 2600
        ("8D", 100 + 12 * 100),  # 8H 8D: coloured (both red), 12:1 -> 1300
        ("8S", 100 + 6 * 100),  # 8H 8S: mixed, 6:1 -> 700
        ("7H", 0),  # 8H 7H: no pair -> 0
    ],
)
def test_pair_on_the_box_s_first_two_cards(second, credit):
    # Two decks. Box 1 8H, upcard TC, box 1 `second`, dealer 7S: TC 7S = 17. The box stands on 16 or 15 and
    # loses: MAIN 0.
    shoe = shoe_facts(f"2D 8H TC {second} 7S", decks=2)
    bets = [bet("m1", "MAIN", 1, 1000, 0), bet("p1", "PAIR", 1, 100, credit)]
    audit = run(shoe, [rnd(1, "TC 7S", box(1, f"8H {second}", "S"))], bets)
    assert found(audit) == []
    assert audit.credits() == [0, credit]


def test_pair_without_main_of_the_same_account():
    # Box 1 8H 8S (mixed pair, 6:1 -> 700) stands on 16; TC 7S = 17: MAIN loses, 0. A plays MAIN and PAIR;
    # B has a PAIR on box 1 and no MAIN there: flagged, but still settled at 700.
    shoe = shoe_facts("2D 8H TC 8S 7S")
    bets = [bet("m1", "MAIN", 1, 1000, 0), bet("p1", "PAIR", 1, 100, 700), bet("p2", "PAIR", 1, 100, 700, account="B")]
    audit = run(shoe, [rnd(1, "TC 7S", box(1, "8H 8S", "S"))], bets)
    assert found(audit) == [("PAIR_WITHOUT_MAIN", "R1", "p2")]
    assert audit.credits() == [0, 700, 700]


@pytest.mark.parametrize(("stake", "flagged"), [(10_000, False), (10_001, True)])
def test_pair_above_its_share_of_the_table_max(stake, flagged):
    # 1/10 of table_max 100_000 is 10_000: exactly that is allowed, one cent more is not. TS 9H is no pair: 0.
    bets = [bet("m1", "MAIN", 1, 1000, 2000), bet("p1", "PAIR", 1, stake, 0)]
    audit = run(shoe_facts(WIN_SHOE), [WIN_ROUND], bets)
    assert found(audit) == ([("SIDE_BET_ABOVE_SHARE", "R1", "p1")] if flagged else [])
    assert audit.credits() == [2000, 0]
    if flagged:
        assert only(audit, "SIDE_BET_ABOVE_SHARE").expected == "<= 100.00 EUR"


@pytest.mark.parametrize(
    ("dealer", "main_credit", "insurance_credit"),
    [
        # AD KC: dealer blackjack. Box 19 loses to it: 0. Insurance 500 pays 2:1: 500 + 1000 = 1500.
        ("AD KC", 0, 1500),
        # AD 6C 2S: soft 19, no blackjack. Box 19 pushes: 1000. Insurance loses: 0.
        ("AD 6C 2S", 1000, 0),
    ],
)
def test_insurance_against_an_ace(dealer, main_credit, insurance_credit):
    # Insurance is placed after betting closed (it is offered after the deal): not a late bet.
    shoe = shoe_facts(f"2D TS AD 9H {dealer.split(maxsplit=1)[1]}")
    bets = [
        bet("m1", "MAIN", 1, 1000, main_credit),
        bet("i1", "INSURANCE", 1, 500, insurance_credit, placed_at=CLOSED + 3_000_000),
    ]
    audit = run(shoe, [rnd(1, dealer, box(1, "TS 9H", "S"))], bets)
    assert found(audit) == []
    assert audit.credits() == [main_credit, insurance_credit]


def test_insurance_not_offered_against_a_ten_is_refunded():
    # Upcard TD: no insurance offered; the 500 taken is refunded: 500. The box wins: 2000.
    bets = [bet("m1", "MAIN", 1, 1000, 2000), bet("i1", "INSURANCE", 1, 500, 500, placed_at=CLOSED + 3_000_000)]
    audit = run(shoe_facts(WIN_SHOE), [WIN_ROUND], bets)
    assert found(audit) == [("INSURANCE_NOT_OFFERED", "R1", "i1")]
    assert only(audit, "INSURANCE_NOT_OFFERED").recorded == "upcard TD"
    assert audit.credits() == [2000, 500]


@pytest.mark.parametrize(("stake", "flagged"), [(500, False), (501, True)])
def test_insurance_above_half_the_main_stake(stake, flagged):
    # Half of the box's MAIN 1000 is 500: allowed; 501 is above. No dealer blackjack: insurance 0.
    bets = [bet("m1", "MAIN", 1, 1000, 1000), bet("i1", "INSURANCE", 1, stake, 0, placed_at=CLOSED + 3_000_000)]
    audit = run(shoe_facts(ACE_SHOE), [ACE_ROUND], bets)
    assert found(audit) == ([("INSURANCE_ABOVE_SHARE", "R1", "i1")] if flagged else [])
    assert audit.credits() == [1000, 0]


def test_bet_behind_by_a_non_seated_account_follows_the_first_hand():
    # Box 1 8S 8D splits: hand 1 8S gets TC = 18, stands; hand 2 8D gets 5H = 13, stands. Dealer 7C TH = 17.
    # Order: 8S | 7C | 8D | TC 5H (box 1) | TH.
    # MAIN: hand 1 wins 2000, hand 2 loses 0 -> 2000 (added 1000 by the split).
    # Bet behind 500 by C (not seated) follows hand 1: 18 > 17 wins -> 1000 (the box as a whole only broke even).
    shoe = shoe_facts("2D 8S 7C 8D TC 5H TH")
    bets = [bet("m1", "MAIN", 1, 1000, 2000, added=1000), bet("bb1", "BET_BEHIND", 1, 500, 1000, account="C")]
    audit = run(shoe, [rnd(1, "7C TH", box(1, "8S 8D TC 5H", "PSS"))], bets)
    assert found(audit) == []
    assert audit.credits() == [2000, 1000]


def test_bet_behind_that_follows_the_box_splits_with_it_and_records_what_it_added():
    # The same round under bet_behind_on_double_or_split = "follows": the bet behind splits with the box
    # (its account adds 500): hand 1 wins 1000, hand 2 loses -> 1000, as the box pays on a 500 stake.
    # Recorded without the added 500: ADDED_STAKE_MISMATCH on the bet behind, paid right.
    follows = replace(RULES, bet_behind_on_double_or_split="follows")
    shoe = shoe_facts("2D 8S 7C 8D TC 5H TH")
    rounds = [rnd(1, "7C TH", box(1, "8S 8D TC 5H", "PSS"))]
    main = bet("m1", "MAIN", 1, 1000, 2000, added=1000)
    audit = run(shoe, rounds, [main, bet("bb1", "BET_BEHIND", 1, 500, 1000, account="C", added=500)], rules=follows)
    assert found(audit) == []
    assert audit.credits() == [2000, 1000]
    audit = run(shoe, rounds, [main, bet("bb1", "BET_BEHIND", 1, 500, 1000, account="C")], rules=follows)
    assert found(audit) == [("ADDED_STAKE_MISMATCH", "R1", "bb1")]


def test_bet_behind_by_a_seated_account():
    # Box 1 TS 9H = 19 (A), box 2 KS 8C = 18 (B); dealer TD 7C = 17: both win 2000.
    # Order: TS KS | TD | 9H 8C | 7C. A, seated on box 1, bets behind box 2: flagged; C does too: fine.
    shoe = shoe_facts("2D TS KS TD 9H 8C 7C")
    bets = [
        bet("m1", "MAIN", 1, 1000, 2000),
        bet("m2", "MAIN", 2, 1000, 2000, account="B"),
        bet("bb1", "BET_BEHIND", 2, 500, 1000, account="A"),
        bet("bb2", "BET_BEHIND", 2, 500, 1000, account="C"),
    ]
    audit = run(shoe, [rnd(1, "TD 7C", box(1, "TS 9H", "S"), box(2, "KS 8C", "S"))], bets)
    assert found(audit) == [("BET_BEHIND_BY_SEATED", "R1", "bb1")]
    assert audit.credits() == [2000, 2000, 1000, 1000]


def test_bet_on_an_empty_box_is_refunded():
    # Only box 1 played; B's MAIN on box 5 is refunded: 1000.
    bets = [bet("m1", "MAIN", 1, 1000, 2000), bet("m5", "MAIN", 5, 1000, 1000, account="B")]
    audit = run(shoe_facts(WIN_SHOE), [WIN_ROUND], bets)
    assert found(audit) == [("BET_ON_EMPTY_BOX", "R1", "m5")]
    assert audit.credits() == [2000, 1000]


def test_bet_type_not_offered_is_refunded():
    # 'TIE' is a baccarat bet: refunded, 1000.
    bets = [bet("m1", "MAIN", 1, 1000, 2000), bet("t1", "TIE", 1, 1000, 1000)]
    audit = run(shoe_facts(WIN_SHOE), [WIN_ROUND], bets)
    assert found(audit) == [("BET_TYPE_NOT_OFFERED", "R1", "t1")]
    assert audit.credits() == [2000, 1000]


def test_late_bet_boundary_and_insurance_after_close():
    # A at exactly the close: not late. B one microsecond later: late. A's insurance 5 s after the close: not
    # late. Box push 1000 each; insurance (500 <= half of the box's 2000) loses: 0.
    bets = [
        bet("m1", "MAIN", 1, 1000, 1000, placed_at=CLOSED),
        bet("m2", "MAIN", 1, 1000, 1000, account="B", placed_at=CLOSED + 1),
        bet("i1", "INSURANCE", 1, 500, 0, placed_at=CLOSED + 5_000_000),
    ]
    audit = run(shoe_facts(ACE_SHOE), [ACE_ROUND], bets)
    assert found(audit) == [("LATE_BET", "R1", "m2")]
    finding = only(audit, "LATE_BET")
    assert finding.expected == "placed by 2023-11-14T22:13:20.000000Z"
    assert finding.recorded == "placed at 2023-11-14T22:13:20.000001Z"
    assert audit.credits() == [1000, 1000, 0]


@pytest.mark.parametrize(
    ("stake", "kinds"),
    [(100, []), (99, ["STAKE_BELOW_MIN"]), (100_000, []), (100_001, ["STAKE_ABOVE_MAX"])],
)
def test_main_stake_limits(stake, kinds):
    # MAIN limits 100..100_000. Box 1 TS 6H = 16 stands against TD 7C = 17: loses, 0 whatever the stake.
    shoe = shoe_facts("2D TS TD 6H 7C")
    audit = run(shoe, [rnd(1, "TD 7C", box(1, "TS 6H", "S"))], [bet("m1", "MAIN", 1, stake, 0)])
    assert found(audit) == [(kind, "R1", "m1") for kind in kinds]
    assert audit.credits() == [0]


@pytest.mark.parametrize(("paid", "kinds"), [(2000, []), (2001, ["OVERPAID"]), (1999, ["UNDERPAID"])])
def test_overpaid_underpaid_by_one_cent(paid, kinds):
    audit = run(shoe_facts(WIN_SHOE), [WIN_ROUND], [bet("m1", "MAIN", 1, 1000, paid)])
    assert found(audit) == [(kind, "R1", "m1") for kind in kinds]
    assert audit.credits() == [2000]
    if kinds:
        assert only(audit, kinds[0]).expected == "20.00 EUR"
        assert only(audit, kinds[0]).recorded == f"{paid // 100}.{paid % 100:02d} EUR"


# --- cancelled and unsettled rounds --------------------------------------------------------------------


def test_cancelled_round_refunds_every_bet_without_decision_findings():
    # Round 1 (cancelled): box 1 TS 2H hits 3C = 15 and has no further letter (would be DECISION_MISSING);
    # box 2 KS 2D = 12 auto-played stands against 9 (chart hard 12 vs 9 "H": would be AUTO_PLAY_DEVIATION);
    # the dealer stands on 9S 6D = 15 (would be DEALER_DRAW_RULE); insurance against a 9 (not offered).
    # Order: TS KS | 9S | 2H 2D | 3C (box 1) | 6D: cards 1..7. Every bet gets its stake back.
    # Round 2 starts at card 8: box 3 KC, 5H up, 9C, dealer TD 3S: 19 > 18 wins 2000.
    shoe = shoe_facts("4D TS KS 9S 2H 2D 3C 6D KC 5H 9C TD 3S")
    rounds = [rnd(1, "9S 6D", box(1, "TS 2H 3C", "H"), box(2, "KS 2D", "S", auto=True), status="cancelled"), ROUND_2]
    bets = [
        bet("m1", "MAIN", 1, 1000, 1000),
        bet("m2", "MAIN", 2, 1000, 1000, account="B"),
        bet("p1", "PAIR", 1, 100, 100),
        bet("i1", "INSURANCE", 1, 500, 500, placed_at=CLOSED + 3_000_000),
        bet("bb1", "BET_BEHIND", 2, 500, 500, account="C"),
        bet("m3", "MAIN", 3, 1000, 2000, account="D", round_index=1),
    ]
    audit = run(shoe, rounds, bets)
    assert found(audit) == []
    assert audit.credits() == [1000, 1000, 100, 500, 500, 2000]
    assert [r.shoe_position for r in audit.rounds] == [1, 8]


def test_cancelled_round_refunds_the_doubled_stake_too():
    # Box 1 6S 5H doubled (9C): 1000 placed + 1000 added. Cancelled: everything staked comes back, 2000
    # (engine.games.blackjack.settlement.settle_box(..., cancelled=True) is total_staked = 2000).
    shoe = shoe_facts("2D 6S 7D 5H 9C TC")
    audit = run(
        shoe,
        [rnd(1, "7D TC", box(1, "6S 5H 9C", "D"), status="cancelled")],
        [bet("m1", "MAIN", 1, 1000, 2000, added=1000)],
    )
    assert audit.credits() == [2000]
    assert found(audit) == []


def test_round_whose_box_cards_disagree_with_its_letters_is_unsettled():
    # Round 1: box 1 recorded TS 9H 2C with the letters "S": a stand takes no third card. Order as recorded:
    # TS 8C 9H 2C TD = cards 1..5. Its bets are quarantined (expected None) with the reason; nothing of
    # round 1 is checked. Round 2 starts after the recorded cards, at card 6: KS 9D 7H 8S, box 17 = 17: 1000.
    shoe = shoe_facts("2D TS 8C 9H 2C TD KS 9D 7H 8S")
    rounds = [rnd(1, "8C TD", box(1, "TS 9H 2C", "S")), rnd(2, "9D 8S", box(1, "KS 7H", "S"))]
    bets = [
        bet("m1", "MAIN", 1, 1000, 2000),
        bet("p1", "PAIR", 1, 100, 0),
        bet("m2", "MAIN", 1, 1000, 1000, account="B", round_index=1),
    ]
    audit = run(shoe, rounds, bets)
    reason = (  # the round's id (R1), not its number in the shoe; the box and what its letters call for
        "round R1: the recorded cards and decisions cannot be settled (box 1 holds TS 9H 2C, its decisions 'S' "
        "call for TS 9H)"
    )
    assert found(audit) == []
    assert audit.credits() == [None, None, 1000]
    assert audit.unsettled == [reason, reason, None]
    assert audit.rounds[0].unsettled_reason == reason
    assert [r.shoe_position for r in audit.rounds] == [1, 6]


@pytest.mark.parametrize(
    ("lose", "main_credit"),
    [
        ("all", 0),  # the doubled 2000 all lost to the dealer blackjack
        ("original", 1000),  # only the original 1000 lost; the double's 1000 comes back
    ],
)
def test_doubled_hand_against_dealer_blackjack_original_or_all(lose, main_credit):
    # Box 1 6S 5H = 11 doubles: 9C, 20. Dealer AD KC: blackjack. Bet behind 500 (C) loses its own stake: 0.
    rules = replace(RULES, doubled_or_split_lose_to_dealer_blackjack=lose)
    shoe = shoe_facts("2D 6S AD 5H 9C KC")
    bets = [bet("m1", "MAIN", 1, 1000, main_credit, added=1000), bet("bb1", "BET_BEHIND", 1, 500, 0, account="C")]
    audit = run(shoe, [rnd(1, "AD KC", box(1, "6S 5H 9C", "D"))], bets, rules=rules)
    assert found(audit) == []
    assert audit.credits() == [main_credit, 0]
