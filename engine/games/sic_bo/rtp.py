"""Exact RTP of every sic bo bet by enumeration of the 216 equally likely ordered rolls."""

from __future__ import annotations

from fractions import Fraction

from engine.betting import equally_likely
from engine.games.interface import BetOutcome, BetRtp

from .layout import ROLLS, SELECTIONS
from .rules import SicBoRules
from .settlement import roll_payout


def selection_outcomes(rules: SicBoRules, bet_type: str, selection: str | None) -> tuple[BetOutcome, ...]:
    """The 216 rolls grouped by what the bet pays on them (wins not rounded)."""
    return equally_likely([roll_payout(rules, bet_type, selection, dice) for dice in ROLLS])


def sic_bo_rtp(rules: SicBoRules) -> list[BetRtp]:
    """One row per offered code; TOTAL one row per total (its price, so its RTP, depends on the total).
    Every other code's selections are the same bet by symmetry of the faces (tests/test_sic_bo.py
    checks it), so its row is its first selection's, `selection` left None."""
    rows = []
    for code in rules.pays:
        chosen = SELECTIONS[code] if code == "TOTAL" else SELECTIONS[code][:1]
        for selection in chosen:
            outcomes = selection_outcomes(rules, code, selection)
            rtp = sum((o.probability * o.credit for o in outcomes), Fraction(0))
            rows.append(BetRtp(rules.id, code, "-", 0, rtp, outcomes, game="sic_bo",
                               selection=selection if code == "TOTAL" else None))
    return rows

