"""Settlement: how much to credit back for a bet on a dealt round.

Credit = stake + win when the bet wins, stake on a push, 0 on a loss; a cancelled round refunds the
stake. The win (stake x odds) is exact (Fraction arithmetic on integers) and rounded to the minor
unit once, by the ruleset's rounding rule. `settle` does one bet; `settle_columns` does a whole
column of bets at once with numpy and gives identical results (a property test holds them equal).
"""

from __future__ import annotations

import numpy as np

from engine.games.baccarat.ruleset import BET_CODES, MODES, PayRule, Ruleset
from engine.money import round_to_unit


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


def _round_column(num: np.ndarray, den: int | np.ndarray, rule: str) -> np.ndarray:
    q, r = np.divmod(num, den)
    if rule == "floor":
        return q
    if rule == "half_up":
        return q + (2 * r >= den) * (r > 0)
    if rule == "half_even":
        return q + ((2 * r > den) | ((2 * r == den) & (q % 2 == 1)))
    raise ValueError(f"unknown rounding rule {rule!r}")


def encode(values: np.ndarray, vocabulary: tuple[str, ...]) -> np.ndarray:
    """Index of each value in `vocabulary` (int64), -1 for a value that is not in it."""
    values = np.asarray(values)
    lookup = {v: i for i, v in enumerate(vocabulary)}
    if values.size == 0:
        return np.zeros(0, dtype=np.int64)
    try:
        distinct, inverse = np.unique(values, return_inverse=True)  # few distinct values: look each up once
    except TypeError:  # an object array mixing str and None: one lookup per value
        return np.fromiter((lookup.get(v, -1) if isinstance(v, str) else -1 for v in values), np.int64, len(values))
    codes = np.array([lookup.get(v, -1) if isinstance(v, str) else -1 for v in distinct.tolist()], dtype=np.int64)
    return codes[inverse.reshape(-1)]


def paytable_index(ruleset: Ruleset, features: dict[str, np.ndarray], n_rounds: int):
    """For every (bet code, mode) of the ruleset and every round: which paytable rule the round matches
    first. Returns (rule, offered, odds_num, odds_den, push): `rule[slot, round]` is an index into the
    last three arrays, -1 when no rule matches (the bet loses); slot = code index * len(MODES) + mode
    index (BET_CODES, MODES); `offered[slot]` is False where the ruleset does not offer the code in the
    mode. The rules are matched once per round, not once per bet."""
    n_slots = len(BET_CODES) * len(MODES)
    rule = np.full((n_slots, n_rounds), -1, dtype=np.int16)
    offered = np.zeros(n_slots, dtype=bool)
    nums, dens, pushes = [], [], []
    tests: dict[tuple[str, tuple], np.ndarray] = {}  # many rules test the same fact (outcome = "BANKER")

    def holds(name: str, allowed: tuple) -> np.ndarray:
        if (name, allowed) not in tests:
            column = features[name]
            tests[name, allowed] = column == allowed[0] if len(allowed) == 1 else np.isin(column, np.array(allowed))
        return tests[name, allowed]

    for mode, codes in ruleset.modes.items():
        m = MODES.index(mode)
        for code in codes:
            slot = BET_CODES.index(code) * len(MODES) + m
            offered[slot] = True
            undecided = np.ones(n_rounds, dtype=bool)
            for pay in ruleset.paytable(code, mode):
                hit = undecided.copy()
                for name, allowed in pay.when:
                    hit &= holds(name, tuple(allowed))
                rule[slot, hit] = len(nums)
                nums.append(pay.odds.numerator if pay.odds is not None else 0)
                dens.append(pay.odds.denominator if pay.odds is not None else 1)
                pushes.append(pay.odds is None)
                undecided &= ~hit
    return (rule, offered, np.array(nums, dtype=np.int64), np.array(dens, dtype=np.int64),
            np.array(pushes, dtype=bool))


def settle_columns(
    ruleset: Ruleset,
    bet_types: np.ndarray,
    modes: np.ndarray,
    stakes: np.ndarray,
    round_index: np.ndarray,
    features: dict[str, np.ndarray],
    cancelled: np.ndarray,
    *,
    bet_type_codes: np.ndarray | None = None,
    mode_codes: np.ndarray | None = None,
) -> np.ndarray:
    """Credits (int64) for columns of bets. `round_index[i]` points bet i at its round's row in the
    `features` columns (from `feature_columns`); `cancelled` is per round. `bet_type_codes` and
    `mode_codes` (indices in BET_CODES and MODES, -1 for anything else) may be given instead of being
    worked out from the strings."""
    stakes = np.asarray(stakes, dtype=np.int64)
    round_index = np.asarray(round_index, dtype=np.intp)
    cancelled = np.asarray(cancelled, dtype=bool)
    types = encode(bet_types, BET_CODES) if bet_type_codes is None else np.asarray(bet_type_codes, dtype=np.int64)
    mode = encode(modes, MODES) if mode_codes is None else np.asarray(mode_codes, dtype=np.int64)
    rule, offered, nums, dens, pushes = paytable_index(ruleset, features, len(cancelled))
    slot = np.where((types >= 0) & (mode >= 0), types * len(MODES) + mode, 0)
    settles = ~cancelled[round_index] & (types >= 0) & (mode >= 0) & offered[slot]  # the others: refunded
    if round_index.size and round_index.min() < 0:
        raise ValueError("a bet's round index is negative")
    # slot and round index are in bounds (cancelled[round_index] has checked the upper one): one flat take
    matched = rule.ravel()[slot * len(cancelled) + round_index]
    won = settles & (matched >= 0)
    k = np.where(won, matched, 0)
    win = stakes * nums[k]  # exact integers: the stake times the odds' numerator, then one rounding
    den = dens[k]
    fractional = np.flatnonzero(den > 1)  # most odds are whole (1:1, 8:1): only the others need dividing
    win[fractional] = _round_column(win[fractional], den[fractional], ruleset.rounding)
    paid = np.where(pushes[k], stakes, stakes + win)
    return np.where(settles, np.where(won, paid, 0), stakes)
