"""Blackjack hand facts: totals (aces 1 or 11), soft hands, blackjack, pair kinds, the dealer's draws."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from engine.cards import CARD_CODES, check_card, rank

RED_SUITS = frozenset("HD")


def _rank_value(r: str) -> int:
    return 1 if r == "A" else 10 if r in "TJQK" else int(r)


_CARD_VALUES = {code: _rank_value(code[0]) for code in CARD_CODES}  # every card's, worked out once


def card_value(code: str) -> int:
    """2-9 face value, T/J/Q/K 10, A 1 (hand_total counts one ace as 11 where it fits)."""
    value = _CARD_VALUES.get(code) if isinstance(code, str) else None
    return value if value is not None else _rank_value(rank(code))  # (rank: CardCodeError on a non-card)


@dataclass(frozen=True)
class Total:
    value: int  # the highest total not over 21 (or the hard total when every reading busts)
    soft: bool  # an ace counts 11 in `value`


def hand_total(cards: Sequence[str]) -> Total:
    try:  # (card codes looked up at once; anything else as card_value reads it, which raises)
        values = [_CARD_VALUES[c] for c in cards]
    except (KeyError, TypeError):
        values = [card_value(c) for c in cards]
    hard = sum(values)
    if 1 in values and hard + 10 <= 21:  # an ace (the only card worth 1) counts 11 where it fits
        return _total(hard + 10, True)
    return _total(hard, False)


@cache  # (a Total is immutable: the few there are made once, not once a hand; the replay asks at every card)
def _total(value: int, soft: bool) -> Total:
    return Total(value, soft)


def is_blackjack(cards: Sequence[str], *, from_split: bool, split_ace_21_is_blackjack: bool = False) -> bool:
    """A two-card 21; after a split only when the ruleset says so (004 line 50: it is not)."""
    if len(cards) != 2 or hand_total(cards).value != 21:
        return False
    return not from_split or split_ace_21_is_blackjack


def pair_kind(first: str, second: str) -> str | None:
    """The pair side bet's kind of a hand's first two cards: 'perfect', 'coloured', 'mixed' or None."""
    check_card(first), check_card(second)
    if first[0] != second[0]:
        return None
    if first[1] == second[1]:
        return "perfect"
    same_colour = (first[1] in RED_SUITS) == (second[1] in RED_SUITS)
    return "coloured" if same_colour else "mixed"


@dataclass(frozen=True)
class DealerDraw:
    total: Total  # the dealer's total before this decision
    draws: bool
    rule: str  # why, in the words of 004 lines 58-61


def dealer_decision(cards: Sequence[str], *, hits_soft_17: bool) -> DealerDraw:
    return dealer_rule(hand_total(cards), hits_soft_17)


@cache  # (a few dozen: the audit asks at every dealer card of every round)
def dealer_rule(total: Total, hits_soft_17: bool) -> DealerDraw:
    """The dealer's decision on `total`."""
    if total.value <= 16:
        return DealerDraw(total, True, "hit on 16 or less")
    if total.value == 17 and total.soft:
        if hits_soft_17:
            return DealerDraw(total, True, "hit on soft 17")
        return DealerDraw(total, False, "stand on soft 17")
    return DealerDraw(total, False, f"stand on {'soft' if total.soft else 'hard'} {total.value}")


def play_dealer(upcard: str, shoe: Sequence[str], *, hits_soft_17: bool) -> tuple[list[str], list[DealerDraw]]:
    """The dealer's hand drawn from `shoe` (the cards after every player's), with each decision."""
    cards, decisions = [upcard], []
    remaining = iter(shoe)
    while True:
        decision = dealer_decision(cards, hits_soft_17=hits_soft_17)
        decisions.append(decision)
        if not decision.draws:
            return cards, decisions
        try:
            cards.append(next(remaining))
        except StopIteration:
            raise ValueError(f"the shoe ran out while the dealer held {cards}") from None
