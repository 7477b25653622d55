"""What a sic bo bet is owed on a roll of three dice: credit = stake back + win on a win, 0 on a loss.

Each code's test of the dice gives the pay key of its price in the ruleset's paytable ("" for a code
with one price, the total for TOTAL, how many dice show the number for SINGLE), or None: the bet
loses. The even-money bets the ruleset lists in `triple_loses` lose on any triple first. Amounts are
integer minor units, computed exactly and rounded once by the ruleset's rounding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from engine.betting import BetVerdict, Payout, RecordedBet, UnitVerdict, unit_refusal
from engine.betting_columns import UnitColumns

from .layout import BIG_TOTALS, SMALL_TOTALS, is_legal, needs
from .rules import SicBoRules

Dice = tuple[int, ...]


def _faces(selection: str | None) -> list[int]:
    return [int(f) for f in (selection or "").split("-")]


def _won(condition: bool) -> str | None:
    return "" if condition else None


# bet code -> (selection, dice) -> the pay key, None when the bet loses
_HITS: dict[str, Callable[[str | None, Dice], str | None]] = {
    "SMALL": lambda s, d: _won(sum(d) in SMALL_TOTALS),
    "BIG": lambda s, d: _won(sum(d) in BIG_TOTALS),
    "ODD": lambda s, d: _won(sum(d) % 2 == 1),
    "EVEN": lambda s, d: _won(sum(d) % 2 == 0),
    "TOTAL": lambda s, d: s if s == str(sum(d)) else None,
    "DOUBLE": lambda s, d: _won(d.count(_faces(s)[0]) >= 2),
    "TRIPLE": lambda s, d: _won(d.count(_faces(s)[0]) == 3),
    "ANY_TRIPLE": lambda s, d: _won(len(set(d)) == 1),
    "COMBO": lambda s, d: _won(all(f in d for f in _faces(s))),  # paid once, even on a double of one
    "SINGLE": lambda s, d: str(d.count(_faces(s)[0])) if _faces(s)[0] in d else None,
}


# the payouts that do not depend on the paytable, made once (a run works out thousands of verdicts)
TRIPLE_LOSES = Payout(Fraction(0), "any triple loses it")
LOSES = Payout(Fraction(0), "lose")


def roll_payout(rules: SicBoRules, bet_type: str, selection: str | None, dice: Dice) -> Payout:
    """A legal, offered bet against a valid roll."""
    if bet_type in rules.triple_loses and len(set(dice)) == 1:
        return TRIPLE_LOSES
    key = _HITS[bet_type](selection or None, dice)
    if key is None:
        return LOSES
    odds = rules.pays[bet_type][key]
    on_dice = f" ({key} dice show it)" if bet_type == "SINGLE" else ""
    return Payout(1 + odds, f"won {odds}:1{on_dice}")


def judge_roll_bet(rules: SicBoRules, bet: RecordedBet, dice: Dice) -> BetVerdict:
    """What a recorded bet is owed on a valid roll, including a bet the table should not have taken."""
    return roll_verdict(rules, bet.bet_type, bet.selection, dice).owed(bet.stake, rules.rounding)


def roll_verdict(rules: SicBoRules, bet_type: str, selection: str | None, dice: Dice) -> UnitVerdict:
    """What a bet of this type and selection is owed per unit staked on a valid roll, and why."""
    refused = unit_refusal(rules.id, bet_type, selection, rules.offers(bet_type), is_legal(bet_type, selection),
                           rules.invalid_selection)
    if refused is not None:
        return refused
    payout = roll_payout(rules, bet_type, selection, dice)
    return UnitVerdict(payout, f"needs {needs(bet_type, selection)}; {payout.rule}")


def roll_verdicts(rules: SicBoRules, bet_type: str, selection: str | None, rolls: Sequence[Dice]) -> UnitColumns:
    """roll_verdict of a bet type and selection on each of `rolls` (valid), as columns: the bet refused or not and
    what it needs put in words once, not once a roll (a run works out a ruleset's ~4,500 at its start)."""
    refused = unit_refusal(rules.id, bet_type, selection, rules.offers(bet_type), is_legal(bet_type, selection),
                           rules.invalid_selection)
    if refused is not None:
        return UnitColumns.of([refused] * len(rolls))
    payouts = [roll_payout(rules, bet_type, selection, dice) for dice in rolls]
    needed, n = f"needs {needs(bet_type, selection)}; ", len(rolls)
    return UnitColumns([p.credit.numerator for p in payouts], [p.credit.denominator for p in payouts],
                       [needed + p.rule for p in payouts], [None] * n, [""] * n, [""] * n)
