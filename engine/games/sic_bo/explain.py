"""The words an investigator reads for a roll: the dice and what they make, then every bet's verdict."""

from __future__ import annotations

from collections.abc import Sequence

from .layout import describe_roll


def explain_roll(dice: tuple[int, ...] | None, valid: bool, bet_lines: Sequence[str]) -> list[str]:
    """The round's explanation: the roll, then one line per bet (its verdict, from the audit)."""
    if dice is None:  # a cancelled roll, or dice missing from the record
        head = "no dice recorded"
    elif valid:
        head = f"dice {describe_roll(dice)}"
    else:
        head = f"dice {' '.join(map(str, dice))}: not 3 dice 1-6"
    return [head, *bet_lines]
