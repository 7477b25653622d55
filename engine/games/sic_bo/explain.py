"""The words an investigator reads for a roll: the dice and what they make, then every bet's verdict; and the
places of the layout a roll wins (the replay's picture)."""

from __future__ import annotations

from collections.abc import Sequence

from .layout import BOARD, Cell, describe_roll
from .rules import SicBoRules
from .settlement import roll_payout


def explain_roll(dice: tuple[int, ...] | None, valid: bool, bet_lines: Sequence[str]) -> list[str]:
    """The round's explanation: the roll, then one line per bet (its verdict, from the audit)."""
    if dice is None:  # a cancelled roll, or dice missing from the record
        head = "no dice recorded"
    elif valid:
        head = f"dice {describe_roll(dice)}"
    else:
        head = f"dice {' '.join(map(str, dice))}: not 3 dice 1-6"
    return [head, *bet_lines]


def winning_cells(rules: SicBoRules, dice: tuple[int, ...]) -> frozenset[Cell]:
    """The places of the layout the ruleset pays on this valid roll (a place it does not offer never wins)."""
    return frozenset(cell for _, cells in BOARD for cell in cells
                     if rules.offers(cell[0]) and roll_payout(rules, *cell, dice).credit > 0)
