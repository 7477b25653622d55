"""Settlement: how much to credit back for a bet on a dealt round.

Credit = stake + win when the bet wins, stake on a push, 0 on a loss; a cancelled round refunds the
stake. The win (stake x odds) is exact (Fraction arithmetic on integers) and rounded to the minor
unit once, by the ruleset's rounding rule. `settle` does one bet; `settle_columns` does a whole
column of bets at once with numpy and gives identical results (a property test holds them equal).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from engine.ruleset import PayRule, Ruleset


def round_to_unit(numerator: int, denominator: int, rule: str) -> int:
    """numerator/denominator (both >= 0) rounded to an integer by `rule`."""
    q, r = divmod(numerator, denominator)
    if rule == "floor" or r == 0:
        return q
    if rule == "half_up":
        return q + (2 * r >= denominator)
    if rule == "half_even":
        return q + (2 * r > denominator or (2 * r == denominator and q % 2 == 1))
    raise ValueError(f"unknown rounding rule {rule!r}")


def credit_for(stake: int, rule: PayRule | None, rounding: str) -> int:
    """Credit for `stake` under the paytable rule that matched (None = the bet lost)."""
    if rule is None:
        return 0
    if rule.odds is None:
        return stake
    return stake + round_to_unit(stake * rule.odds.numerator, rule.odds.denominator, rounding)


def matching_rule(paytable: tuple[PayRule, ...], features: dict[str, object]) -> PayRule | None:
    """First rule of the paytable that the round satisfies, None if none does (the bet lost)."""
    return next((rule for rule in paytable if rule.matches(features)), None)


def settle(
    ruleset: Ruleset,
    bet_type: str,
    mode: str,
    stake: int,
    features: dict[str, object] | None,
    cancelled: bool = False,
) -> int:
    """Credit for one bet. `features` from `round_features`; a cancelled round refunds the stake.

    A bet type the ruleset does not offer in this mode has no paytable: it is refunded (the
    operator should not have accepted it; the audit flags it separately).
    """
    if cancelled or not ruleset.offered(bet_type, mode):
        return stake
    if features is None:
        raise ValueError("a settled round needs its features")
    return credit_for(stake, matching_rule(ruleset.paytable(bet_type, mode), features), ruleset.rounding)


def _round_column(num: np.ndarray, den: int, rule: str) -> np.ndarray:
    q, r = np.divmod(num, den)
    if rule == "floor":
        return q
    if rule == "half_up":
        return q + (2 * r >= den) * (r > 0)
    if rule == "half_even":
        return q + ((2 * r > den) | ((2 * r == den) & (q % 2 == 1)))
    raise ValueError(f"unknown rounding rule {rule!r}")


def settle_columns(
    ruleset: Ruleset,
    bet_types: np.ndarray,
    modes: np.ndarray,
    stakes: np.ndarray,
    round_index: np.ndarray,
    features: dict[str, np.ndarray],
    cancelled: np.ndarray,
) -> np.ndarray:
    """Credits (int64) for columns of bets. `round_index[i]` points bet i at its round's row in the
    `features` columns (from `feature_columns`); `cancelled` is per round."""
    stakes = np.asarray(stakes, dtype=np.int64)
    round_index = np.asarray(round_index, dtype=np.intp)
    credit = stakes.copy()  # refund unless a paytable says otherwise
    open_bets = ~np.asarray(cancelled, dtype=bool)[round_index]
    bet_types = np.asarray(bet_types)
    modes = np.asarray(modes)
    for mode, offered in ruleset.modes.items():
        in_mode = open_bets & (modes == mode)
        for code in offered:
            rows = np.flatnonzero(in_mode & (bet_types == code))
            if rows.size == 0:
                continue
            idx = round_index[rows]
            s = stakes[rows]
            out = np.zeros(rows.size, dtype=np.int64)
            undecided = np.ones(rows.size, dtype=bool)
            for rule in ruleset.paytable(code, mode):
                hit = undecided.copy()
                for name, allowed in rule.when:
                    hit &= np.isin(features[name][idx], np.array(allowed))
                if rule.odds is None:
                    out[hit] = s[hit]
                else:
                    odds: Fraction = rule.odds
                    out[hit] = s[hit] + _round_column(s[hit] * odds.numerator, odds.denominator, ruleset.rounding)
                undecided &= ~hit
            credit[rows] = out
    return credit
