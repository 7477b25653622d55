"""What a stud box's ante and call return together (engine/games/casino_stud/settlement.py) and where
each card comes from (dealing.py), worked by hand from RULES.md § Casino 5-card stud: ante 10.00 EUR
(1000 minor units), call 20.00."""

from __future__ import annotations

import dataclasses

import pytest

from engine.cards import CARD_CODES
from engine.games.casino_stud.dealing import cards_needed, deal, positions
from engine.games.casino_stud.hands import rank_hand
from engine.games.casino_stud.rules import load_casino_stud_rules
from engine.games.casino_stud.settlement import ante_credit, settle_box

RULES = load_casino_stud_rules("casino_stud_live")
ANTE = 1000

AK_DEALER = rank_hand(("AS", "KD", "4C", "3H", "2S"))  # the lowest qualifying hand
AQ_DEALER = rank_hand(("AS", "QD", "JC", "9H", "8S"))  # the best hand that does not qualify
PAIR_OF_TWOS = rank_hand(("2C", "2D", "3S", "4S", "6D"))
KINGS = rank_hand(("KS", "KD", "7C", "4H", "2S"))


def credit(box, dealer, action="C", ante=ANTE, rules=RULES):
    return ante_credit(rules, rank_hand(box) if isinstance(box, tuple) else box,
                       rank_hand(dealer) if isinstance(dealer, tuple) else dealer, action, ante)


def test_a_fold_loses_the_ante_whatever_the_hands():
    assert credit(KINGS, AQ_DEALER, "F") == 0
    assert credit(("AH", "KH", "QH", "JH", "TH"), AK_DEALER, "F") == 0


def test_dealer_not_qualifying_pays_the_ante_even_and_returns_the_call():
    # ante 1000 back + 1000 win + call 2000 back, whatever the box holds (even a worse hand)
    assert credit(KINGS, AQ_DEALER) == 4000
    assert credit(("QC", "JS", "8D", "5C", "3S"), AQ_DEALER) == 4000


def test_ace_king_qualifies_ace_queen_does_not():
    box = ("KC", "KH", "9D", "8D", "7S")  # kings beat the AK dealer: ante 1:1 + call 1:1
    assert credit(box, AK_DEALER) == 1000 + 1000 + 2000 + 2000
    assert credit(box, AQ_DEALER) == 4000  # AQ: not qualified, the call returned only


@pytest.mark.parametrize("box, odds", [
    (("AC", "KC", "QD", "JS", "9H"), 1),       # high card A-K-Q beats A-K-4
    (("3C", "3D", "9S", "8S", "7D"), 1),       # pair
    (("3C", "3D", "9S", "9H", "7D"), 2),       # two pair
    (("3C", "3D", "3S", "9H", "7D"), 3),       # three of a kind
    (("5C", "6D", "7S", "8H", "9D"), 4),       # straight
    (("2H", "6H", "9H", "JH", "KH"), 5),       # flush
    (("3C", "3D", "3S", "9H", "9D"), 7),       # full house
    (("3C", "3D", "3S", "3H", "9D"), 20),      # four of a kind
    (("5C", "6C", "7C", "8C", "9C"), 50),      # straight flush
    (("TH", "JH", "QH", "KH", "AH"), 100),     # royal flush
])  # fmt: skip
def test_a_box_beating_a_qualified_dealer_gets_ante_even_and_the_call_by_its_rank(box, odds):
    assert credit(box, AK_DEALER) == 1000 + 1000 + 2000 + 2000 * odds


def test_equal_hands_push_ante_and_call():
    assert credit(("AH", "KH", "QC", "JD", "9S"), ("AS", "KS", "QD", "JC", "9H")) == 3000
    assert settle_box(RULES, KINGS, rank_hand(("KC", "KH", "7D", "4S", "2D")), "C", ANTE).outcome == "push"


def test_the_dealer_winning_takes_ante_and_call():
    assert credit(PAIR_OF_TWOS, KINGS) == 0
    # a kicker decides: kings with a queen beat kings with a jack
    assert credit(("KC", "KH", "JD", "4S", "2D"), ("KS", "KD", "QC", "4H", "2S")) == 0
    assert credit(("KS", "KD", "QC", "4H", "2S"), ("KC", "KH", "JD", "4S", "2D")) == 6000  # 1000 + 1000 + 2000 + 2000


def test_a_cap_on_the_call_limits_its_win_only():
    capped = dataclasses.replace(RULES, max_call_payout=50_000)
    royal = ("TH", "JH", "QH", "KH", "AH")
    assert credit(royal, AK_DEALER, rules=capped) == 1000 + 1000 + 2000 + 50_000
    assert credit(("3C", "3D", "9S", "9H", "7D"), AK_DEALER, rules=capped) == 8000  # 4000 < cap: not touched


def test_an_action_that_is_neither_call_nor_fold_is_refused():
    with pytest.raises(ValueError):
        credit(KINGS, AK_DEALER, "X")


def test_box_by_box_deal_positions():
    boxes, dealer = positions(RULES, 3)
    assert boxes == ((0, 1, 2, 3, 4), (5, 6, 7, 8, 9), (10, 11, 12, 13, 14))
    assert dealer == (15, 16, 17, 18, 19)  # the open card first
    assert cards_needed(RULES, 3) == 20 and cards_needed(RULES, 7) == 40
    deck = CARD_CODES  # AS AH AD AC 2S 2H ...
    box_cards, dealer_cards = deal(RULES, deck, 2)
    assert box_cards == (("AS", "AH", "AD", "AC", "2S"), ("2H", "2D", "2C", "3S", "3H"))
    assert dealer_cards == ("3D", "3C", "4S", "4H", "4D")


def test_round_robin_and_burn_positions():
    rr = dataclasses.replace(RULES, deal_order="round_robin", burn_cards=1)
    boxes, dealer = positions(rr, 2)
    assert boxes == ((1, 3, 5, 7, 9), (2, 4, 6, 8, 10)) and dealer == (11, 12, 13, 14, 15)


def test_a_short_deck_deals_none_where_it_has_no_card():
    box_cards, dealer_cards = deal(RULES, CARD_CODES[:8], 1)
    assert box_cards == (CARD_CODES[:5],) and dealer_cards == (*CARD_CODES[5:8], None, None)
