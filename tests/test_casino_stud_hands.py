"""Casino stud hand ranking (engine/games/casino_stud/hands.py) against an independent evaluator:
phevaluator (rank 1 = royal flush ... 7462 = 7-5-4-3-2 offsuit; lower is better), over random hands
and pairs of hands, and exhaustively over all 2,598,960 five-card hands: every category count is the
textbook one, and the engine's strengths order the 7,462 classes exactly as phevaluator does."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phevaluator import evaluate_cards

from engine.cards import CARD_CODES
from engine.games.casino_stud.hands import (
    RANK_NAMES,
    HandError,
    HandRank,
    dealer_qualifies,
    describe,
    hand_or_none,
    rank_hand,
)

# phevaluator's card ids: rank 2..A times 4, plus suit c d h s
PH_ID = {c: "23456789TJQKA".index(c[0]) * 4 + "cdhs".index(c[1].lower()) for c in CARD_CODES}

# Cactus Kev's equivalence classes (phevaluator's ranks): the last class of each category, best first.
_PH_CATEGORY_ENDS = ((1, "ROYAL_FLUSH"), (10, "STRAIGHT_FLUSH"), (166, "FOUR_OF_A_KIND"), (322, "FULL_HOUSE"),
                     (1599, "FLUSH"), (1609, "STRAIGHT"), (2467, "THREE_OF_A_KIND"), (3325, "TWO_PAIR"),
                     (6185, "PAIR"), (7462, "HIGH_CARD"))


def ph_rank(cards) -> int:
    return evaluate_cards(*(c[0] + c[1].lower() for c in cards))


def ph_category(rank: int) -> str:
    return next(name for end, name in _PH_CATEGORY_ENDS if rank <= end)


hands = st.lists(st.sampled_from(CARD_CODES), min_size=5, max_size=5, unique=True)
two_hands = st.lists(st.sampled_from(CARD_CODES), min_size=10, max_size=10, unique=True)


@settings(max_examples=2000)
@given(hands)
def test_category_agrees_with_phevaluator(cards):
    assert rank_hand(cards).category == ph_category(ph_rank(cards))


@settings(max_examples=2000)
@given(two_hands)
def test_order_and_ties_agree_with_phevaluator(cards):
    a, b = cards[:5], cards[5:]
    ra, rb = rank_hand(a), rank_hand(b)
    pa, pb = ph_rank(a), ph_rank(b)
    assert (ra.strength > rb.strength) == (pa < pb)
    assert (ra.strength == rb.strength) == (pa == pb)
    assert (ra > rb) == (pa < pb) and (ra == rb) == (pa == pb)


@settings(max_examples=300)
@given(hands, st.randoms())
def test_the_order_of_the_cards_does_not_matter(cards, rnd):
    shuffled = list(cards)
    rnd.shuffle(shuffled)
    assert rank_hand(shuffled) == rank_hand(cards)


# pairs that tie only on the last kicker, or on nothing: the tie-break reads every card
@pytest.mark.parametrize("better, worse", [
    (("KS", "KD", "9C", "7H", "3S"), ("KH", "KC", "9D", "7S", "2S")),     # pair: fifth card decides
    (("AS", "QD", "9C", "7H", "3S"), ("AH", "QC", "9D", "7S", "2S")),     # high card: fifth card
    (("KS", "KD", "5C", "5H", "3S"), ("KH", "KC", "5D", "5S", "2S")),     # two pair: kicker
    (("KS", "KD", "6C", "6H", "2S"), ("KH", "KC", "5D", "5S", "AS")),     # two pair: low pair beats kicker
    (("2S", "2D", "2C", "3H", "3S"), ("AS", "AD", "KC", "KH", "QS")),     # any full house beats two pair
    (("6S", "5D", "4C", "3H", "2S"), ("AS", "2D", "3C", "4H", "5S")),     # six-high straight beats the wheel
    (("AS", "KD", "QC", "JH", "TS"), ("KS", "QD", "JC", "TH", "9S")),     # broadway beats king-high
    (("6H", "5H", "4H", "3H", "2H"), ("AS", "2S", "3S", "4S", "5S")),     # steel wheel is the lowest SF
    (("AH", "KH", "QH", "JH", "TH"), ("KS", "QS", "JS", "TS", "9S")),     # royal beats any straight flush
    (("AS", "AD", "AC", "2H", "2S"), ("KS", "KD", "KC", "AH", "AD")),     # full house: trips decide
    (("9S", "9D", "9C", "9H", "3S"), ("9S", "9D", "9C", "9H", "2S")),     # (impossible together) kicker
])  # fmt: skip
def test_hand_worked_orders(better, worse):
    assert rank_hand(better) > rank_hand(worse)


def test_equal_hands_of_other_suits_tie():
    assert rank_hand(("KS", "KD", "9C", "7H", "3S")) == rank_hand(("KH", "KC", "9D", "7S", "3C"))
    assert rank_hand(("AS", "2D", "3C", "4H", "5S")).strength == rank_hand(("AH", "2C", "3D", "4S", "5C")).strength


def test_the_wheel_is_a_straight_and_ace_high_non_straights_are_not():
    assert rank_hand(("AS", "2D", "3C", "4H", "5S")).category == "STRAIGHT"
    assert rank_hand(("AS", "KD", "QC", "JH", "TS")).category == "STRAIGHT"
    assert rank_hand(("AS", "KD", "2C", "3H", "4S")).category == "HIGH_CARD"  # no wrap-around
    assert rank_hand(("AS", "2S", "3S", "4S", "5S")).category == "STRAIGHT_FLUSH"
    assert rank_hand(("TS", "JS", "QS", "KS", "AS")).category == "ROYAL_FLUSH"


@pytest.mark.parametrize("cards, words", [
    (("KS", "KD", "5C", "5H", "AS"), "two pair, kings and fives, ace kicker"),
    (("7S", "7D", "KC", "4H", "2S"), "pair of sevens, king, four, two kickers"),
    (("6S", "6D", "6C", "2H", "2S"), "full house, sixes full of twos"),
    (("AS", "2D", "3C", "4H", "5S"), "straight, five high (the wheel)"),
    (("AH", "KH", "QH", "JH", "TH"), "royal flush"),
    (("9H", "8H", "7H", "6H", "5H"), "straight flush, nine high"),
    (("QS", "QD", "QC", "QH", "3S"), "four queens, three kicker"),
    (("AS", "KD", "9C", "4H", "2S"), "high card, ace, king, nine, four, two"),
    (("JS", "8S", "6S", "4S", "2S"), "flush, jack, eight, six, four, two"),
    (("TS", "TD", "TC", "4H", "2S"), "three tens, four, two kickers"),
])  # fmt: skip
def test_describe(cards, words):
    assert describe(cards) == words
    assert describe(rank_hand(cards)) == words


def test_ace_king_qualifies_ace_queen_does_not():
    assert dealer_qualifies(rank_hand(("AS", "KD", "4C", "3H", "2S")), "AK")  # the lowest AK
    assert not dealer_qualifies(rank_hand(("AS", "QD", "JC", "9H", "8S")), "AK")  # the best AQ
    assert not dealer_qualifies(rank_hand(("KS", "QD", "JC", "9H", "8S")), "AK")
    assert dealer_qualifies(rank_hand(("2S", "2D", "3C", "4H", "6S")), "AK")  # the lowest pair
    assert dealer_qualifies(rank_hand(("AS", "2D", "3C", "4H", "5S")), "AK")  # the wheel
    with pytest.raises(ValueError):
        dealer_qualifies(rank_hand(("2S", "2D", "3C", "4H", "6S")), "AQ")


@pytest.mark.parametrize("cards", [
    ("AS", "KD", "4C", "3H"), ("AS", "KD", "4C", "3H", "2S", "5S"), ("AS", "AS", "4C", "3H", "2S"),
    ("AS", "KD", "4C", "3H", "1S"), ("AS", "KD", "4C", "3H", None), (),
])  # fmt: skip
def test_cards_that_are_not_a_hand_are_refused(cards):
    with pytest.raises(HandError):
        rank_hand(cards)
    assert hand_or_none(cards) is None
    assert hand_or_none(None) is None


def test_hand_rank_names_lowest_first():
    assert RANK_NAMES[0] == "HIGH_CARD" and RANK_NAMES[-1] == "ROYAL_FLUSH" and len(RANK_NAMES) == 10
    assert HandRank("PAIR", 5) < HandRank("PAIR", 6)


@pytest.mark.slow
def test_every_five_card_hand_exhaustively():
    """All C(52,5) hands: the textbook category counts, and one engine strength per phevaluator class
    with the 7,462 classes in the same order."""
    counts: Counter[str] = Counter()
    class_of: dict[int, int] = {}  # engine strength -> phevaluator rank
    ids = [PH_ID[c] for c in CARD_CODES]
    for hand, ph_hand in zip(itertools.combinations(CARD_CODES, 5), itertools.combinations(ids, 5), strict=True):
        rank = rank_hand(hand)
        counts[rank.category] += 1
        ph = evaluate_cards(*ph_hand)
        assert class_of.setdefault(rank.strength, ph) == ph, hand
    assert counts == {
        "ROYAL_FLUSH": 4, "STRAIGHT_FLUSH": 36, "FOUR_OF_A_KIND": 624, "FULL_HOUSE": 3_744, "FLUSH": 5_108,
        "STRAIGHT": 10_200, "THREE_OF_A_KIND": 54_912, "TWO_PAIR": 123_552, "PAIR": 1_098_240,
        "HIGH_CARD": 1_302_540,
    }  # fmt: skip
    assert sum(counts.values()) == 2_598_960
    assert len(class_of) == 7_462
    ordered = [class_of[s] for s in sorted(class_of, reverse=True)]  # best first
    assert ordered == list(range(1, 7_463))
