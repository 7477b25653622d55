"""Exact return of the pair side bet and of insurance, by enumeration of a full shoe."""

from __future__ import annotations

from fractions import Fraction

from engine.cards import CARD_CODES

from .hand import card_value, pair_kind
from .rules import BlackjackRules


def pair_bet_rtp(rules: BlackjackRules) -> Fraction:
    """Return per unit staked (stake included) over every ordered pair of cards from a full shoe."""
    total = Fraction(0)
    n = 52 * rules.decks
    for first in CARD_CODES:
        for second in CARD_CODES:
            ways = rules.decks * (rules.decks - (first == second))
            kind = pair_kind(first, second)
            if kind is not None:
                total += ways * (rules.pair_odds[kind] + 1)
    return total / (n * (n - 1))


def insurance_rtp(rules: BlackjackRules) -> Fraction:
    """Insurance against a dealer ace from a full shoe: wins when the dealer's second card is a ten."""
    remaining = 52 * rules.decks - 1
    tens = sum(rules.decks for c in CARD_CODES if card_value(c) == 10)
    p = Fraction(tens, remaining)
    return p * (rules.insurance_odds + 1)
