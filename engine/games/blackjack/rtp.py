"""Exact return of the pair side bet and of insurance, by enumeration of a full shoe."""

from __future__ import annotations

from fractions import Fraction

from engine.cards import CARD_CODES
from engine.games.interface import BetOutcome, BetRtp

from .hand import card_value, pair_kind
from .rules import BlackjackRules

PAIR_KINDS = ("perfect", "coloured", "mixed")


def pair_kind_chances(decks: int) -> dict[str | None, Fraction]:
    """Chance of each pair kind (None: no pair) of a box's first two cards from a full shoe."""
    n = 52 * decks
    ways: dict[str | None, int] = {}
    for first in CARD_CODES:
        for second in CARD_CODES:
            kind = pair_kind(first, second)
            ways[kind] = ways.get(kind, 0) + decks * (decks - (first == second))
    return {kind: Fraction(w, n * (n - 1)) for kind, w in ways.items()}


def pair_bet_outcomes(rules: BlackjackRules) -> tuple[BetOutcome, ...]:
    chance = pair_kind_chances(rules.decks)
    paying = tuple(
        BetOutcome(f"{kind} pair {rules.pair_odds[kind]}:1", chance.get(kind, Fraction(0)), rules.pair_odds[kind] + 1)
        for kind in PAIR_KINDS
    )
    return (*paying, BetOutcome("lose", chance.get(None, Fraction(0)), Fraction(0)))


def pair_bet_rtp(rules: BlackjackRules) -> Fraction:
    """Return per unit staked (stake included) over every ordered pair of cards from a full shoe."""
    return sum((o.probability * o.credit for o in pair_bet_outcomes(rules)), Fraction(0))


def insurance_outcomes(rules: BlackjackRules) -> tuple[BetOutcome, ...]:
    """Insurance against a dealer ace from a full shoe: wins when the dealer's second card is a ten."""
    remaining = 52 * rules.decks - 1
    tens = sum(rules.decks for c in CARD_CODES if card_value(c) == 10)
    p = Fraction(tens, remaining)
    return (BetOutcome(f"dealer blackjack {rules.insurance_odds}:1", p, rules.insurance_odds + 1),
            BetOutcome("lose", 1 - p, Fraction(0)))


def insurance_rtp(rules: BlackjackRules) -> Fraction:
    return sum((o.probability * o.credit for o in insurance_outcomes(rules)), Fraction(0))


def blackjack_rtp(rules: BlackjackRules) -> list[BetRtp]:
    """Every exact RTP row of a blackjack ruleset (`pitboss rtp`)."""

    def row(code: str, outcomes: tuple[BetOutcome, ...]) -> BetRtp:
        rtp = sum((o.probability * o.credit for o in outcomes), Fraction(0))
        return BetRtp(rules.id, code, "-", rules.decks, rtp, outcomes, game="blackjack")

    from .main_rtp import main_bet_rtp  # (the strategy EVs are computed on first use)

    def chart_row(code: str, result) -> BetRtp:
        return BetRtp(rules.id, code, "-", rules.decks, Fraction(result.rtp).limit_denominator(10**9), (),
                      game="blackjack", method=f"{result.method} (|error| <= {result.error_bound:.4%})")

    return [chart_row("MAIN", main_bet_rtp(rules)), row("PAIR", pair_bet_outcomes(rules)),
            row("INSURANCE", insurance_outcomes(rules)), chart_row("BET_BEHIND", _behind(rules))]


def _behind(rules: BlackjackRules):
    """The bet behind's RTP: as MAIN when it follows the box's doubles and splits."""
    from .main_rtp import bet_behind_rtp, main_bet_rtp

    return main_bet_rtp(rules) if rules.bet_behind_on_double_or_split == "follows" else bet_behind_rtp(rules)
