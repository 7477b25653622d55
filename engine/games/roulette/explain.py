"""The words an investigator reads for a spin: the pocket and what it is, then every bet's verdict."""

from __future__ import annotations

from collections.abc import Sequence

from .layout import COLUMN, DOZEN, ZERO, layout
from .rules import RouletteRules


def describe_pocket(rules: RouletteRules, pocket: int) -> str:
    """'17: black, odd, low (1-18), dozen 2 (13-24), column 2' — read off the layout, so the words
    and the settlement cannot disagree."""
    if pocket == ZERO:
        return "0: green zero (no colour, dozen, column, low/high or odd/even: every outside bet loses)"
    bets = layout(rules.red).bets
    colour = "red" if pocket in bets["RED"][None] else "black"
    parity = "odd" if pocket in bets["ODD"][None] else "even"
    half = "low (1-18)" if pocket in bets["LOW"][None] else "high (19-36)"
    dozen = next(s for s, covered in bets[DOZEN].items() if pocket in covered)
    column = next(s for s, covered in bets[COLUMN].items() if pocket in covered)
    first, last = min(bets[DOZEN][dozen]), max(bets[DOZEN][dozen])
    return f"{pocket}: {colour}, {parity}, {half}, dozen {dozen} ({first}-{last}), column {column}"


def explain_spin(rules: RouletteRules, pocket: int | None, bet_lines: Sequence[str]) -> list[str]:
    """The round's explanation: the pocket, then one line per bet (its verdict, from the audit)."""
    if pocket is None:  # a cancelled spin, or a pocket missing from the record
        head = "no pocket recorded"
    elif isinstance(pocket, int) and pocket in range(37):
        head = f"pocket {describe_pocket(rules, pocket)}"
    else:
        head = f"pocket {pocket!r}: not a pocket 0-36"
    return [head, *bet_lines]
