"""Where each card of a stud round comes from: a fresh 52-card deck every round, dealt from its top
(after `burn_cards`) in the ruleset's `deal_order`:

* "box_by_box" (casino_stud_live): each box's five cards in box order, then the dealer's open card,
  then (after the decisions) the dealer's other four;
* "round_robin": one card to each box in box order, five times over, then the dealer's open card and
  his other four.

Every box is dealt its five cards whatever it then decides (a folded box's cards still came out).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from .rules import CasinoStudRules

HAND = 5


def positions(rules: CasinoStudRules, n_boxes: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """(each box's five deck indexes in the order dealt, the dealer's five: the open card first)."""
    return _positions(rules.deal_order, rules.burn_cards, n_boxes)


@lru_cache(maxsize=64)  # the same few deals every round: worked out once per deal order, burn and box count
def _positions(deal_order: str, burn_cards: int, n_boxes: int
               ) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    b = burn_cards
    if deal_order == "box_by_box":
        boxes = tuple(tuple(b + HAND * i + k for k in range(HAND)) for i in range(n_boxes))
    elif deal_order == "round_robin":
        boxes = tuple(tuple(b + k * n_boxes + i for k in range(HAND)) for i in range(n_boxes))
    else:
        raise ValueError(f"unknown deal_order {deal_order!r}")
    start = b + HAND * n_boxes
    return boxes, tuple(range(start, start + HAND))


def cards_needed(rules: CasinoStudRules, n_boxes: int) -> int:
    """How many cards of the deck a round with n_boxes boxes uses (burned cards included)."""
    return rules.burn_cards + HAND * (n_boxes + 1)


def deal(rules: CasinoStudRules, deck: Sequence[str | None], n_boxes: int
         ) -> tuple[tuple[tuple[str | None, ...], ...], tuple[str | None, ...]]:
    """(box_cards, dealer_cards) as the deck deals them; None where the deck has no card there."""
    box_positions, dealer_positions = positions(rules, n_boxes)
    dealt = (*deck, *[None] * (cards_needed(rules, n_boxes) - len(deck)))  # (None past a short deck's end)
    return (tuple(tuple(map(dealt.__getitem__, box)) for box in box_positions),
            tuple(map(dealt.__getitem__, dealer_positions)))
