"""What a roulette bet is owed on a pocket: credit = stake back + win on a win, 0 on a loss.

A bet wins when the pocket is one its selection covers (engine.games.roulette.layout), at the odds of
its code. Zero is covered by no outside bet, so it loses every one of them; under La Partage an
even-chance bet gets half its stake back instead. Amounts are integer minor units, computed exactly
(Fraction) and rounded once by the ruleset's rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import cache

from engine.betting import BetVerdict, Payout, RecordedBet, UnitVerdict, unit_refusal
from engine.betting_columns import UnitColumns

from .layout import EVEN_CHANCES, OUTSIDE, ZERO, layout, selection_text
from .rules import RouletteRules

LA_PARTAGE_SHARE = Fraction(1, 2)  # of the stake, back on zero (the rule's definition)
# the payouts that do not depend on the odds, made once (a run works out thousands of verdicts)
LA_PARTAGE = Payout(LA_PARTAGE_SHARE, f"La Partage returns {LA_PARTAGE_SHARE} of the stake on zero")
ZERO_LOSES = Payout(Fraction(0), "zero loses every outside bet")
LOSES = Payout(Fraction(0), "lose")


def spin_payout(rules: RouletteRules, bet_type: str, covered: frozenset[int], pocket: int) -> Payout:
    """A legal, offered bet covering `covered` against the pocket the ball landed in."""
    if pocket in covered:
        return _won(rules.odds[bet_type])
    if pocket == ZERO and bet_type in EVEN_CHANCES and rules.la_partage:
        return LA_PARTAGE
    if pocket == ZERO and bet_type in OUTSIDE:
        return ZERO_LOSES
    return LOSES


@cache  # (a ruleset's few odds: a run's first verdicts win ~500 times, a Fraction sum and its words each)
def _won(odds: Fraction) -> Payout:
    return Payout(1 + odds, f"won {odds}:1")


def judge_spin_bet(rules: RouletteRules, bet: RecordedBet, pocket: int) -> BetVerdict:
    """What a recorded bet is owed on a valid pocket, including a bet the table should not have taken."""
    return spin_verdict(rules, bet.bet_type, bet.selection, pocket).owed(bet.stake, rules.rounding)


def spin_verdict(rules: RouletteRules, bet_type: str, selection: str | None, pocket: int) -> UnitVerdict:
    """What a bet of this type and selection is owed per unit staked on a valid pocket, and why."""
    covered = layout(rules.red).covers(bet_type, selection)
    refused = unit_refusal(rules.id, bet_type, selection, rules.offers(bet_type), covered is not None,
                           rules.invalid_selection)
    if refused is not None:
        return refused
    assert covered is not None  # unit_refusal() answered every illegal selection
    payout = spin_payout(rules, bet_type, covered, pocket)
    return UnitVerdict(payout, _why(selection_text(covered), covered, pocket, payout))


def spin_verdicts(rules: RouletteRules, bet_type: str, selection: str | None, pockets: Sequence[int]) -> UnitColumns:
    """spin_verdict of a bet type and selection on each of `pockets` (valid), as columns: the layout looked up
    and the bet refused or not once, not once a pocket (a run works out a ruleset's ~5,800 at its start)."""
    covered = layout(rules.red).covers(bet_type, selection)
    refused = unit_refusal(rules.id, bet_type, selection, rules.offers(bet_type), covered is not None,
                           rules.invalid_selection)
    if refused is not None:
        return UnitColumns.of([refused] * len(pockets))
    assert covered is not None  # unit_refusal() answered every illegal selection
    payouts = [spin_payout(rules, bet_type, covered, pocket) for pocket in pockets]
    named, n = selection_text(covered), len(pockets)
    return UnitColumns([p.credit.numerator for p in payouts], [p.credit.denominator for p in payouts],
                       [_why(named, covered, pocket, p) for pocket, p in zip(pockets, payouts, strict=True)],
                       [None] * n, [""] * n, [""] * n)


def _why(named: str, covered: frozenset[int], pocket: int, payout: Payout) -> str:
    """A verdict's reason: what the bet covers (`named`: as recorded), whether the pocket is among it, the rule."""
    return f"covers {named}; {pocket} {'is covered' if pocket in covered else 'is not covered'}: {payout.rule}"
