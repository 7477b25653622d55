"""The words an investigator reads for a roll: the dice and what they make, then every bet's verdict."""

from __future__ import annotations

from collections.abc import Sequence

from .layout import describe_roll


def explain_roll(dice: tuple[int, ...] | None, valid: bool, bet_lines: Sequence[str]) -> list[str]:
    """The round's explanation: the roll, then one line per bet (its verdict, from the audit)."""
    head = f"dice {describe_roll(dice)}" if valid and dice is not None else f"no valid roll recorded ({dice!r})"
    return [head, *bet_lines]
