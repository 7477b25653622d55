"""Exact RTP of every roulette bet by enumeration of the 37 equally likely pockets."""

from __future__ import annotations

from fractions import Fraction

from engine.betting import equally_likely
from engine.games.interface import BetOutcome, BetRtp

from .layout import POCKETS, layout
from .rules import RouletteRules
from .settlement import spin_payout


def selection_outcomes(rules: RouletteRules, bet_type: str, selection: str | None) -> tuple[BetOutcome, ...]:
    """The 37 pockets grouped by what the bet pays on them (wins not rounded)."""
    covered = layout(rules.red).covers(bet_type, selection)
    if covered is None:
        raise ValueError(f"{selection!r} is not a legal {bet_type}")
    return equally_likely([spin_payout(rules, bet_type, covered, pocket) for pocket in POCKETS])


def roulette_rtp(rules: RouletteRules) -> list[BetRtp]:
    """One row per offered code, on its first legal selection: every selection of a code covers as many
    pockets as any other (tests/test_roulette.py checks it), so the RTP is the code's."""
    rows = []
    for code in rules.odds:
        outcomes = selection_outcomes(rules, code, layout(rules.red).selections(code)[0])
        rtp = sum((o.probability * o.credit for o in outcomes), Fraction(0))
        rows.append(BetRtp(rules.id, code, "-", 0, rtp, outcomes, game="roulette"))
    return rows
