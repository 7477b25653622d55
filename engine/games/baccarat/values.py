"""Baccarat card values: A=1, 2-9 face value, T/J/Q/K = 0 (RULES.md § Baccarat)."""

from __future__ import annotations

import numpy as np

from engine.cards import CARD_CODES, RANKS, check_card

BACCARAT_VALUE: dict[str, int] = {rank: (i + 1) % 10 if i < 9 else 0 for i, rank in enumerate(RANKS)}

# The same per code, for hot loops, and by card index (engine.cards.CARD_INDEX) for numpy.
CODE_VALUE: dict[str, int] = {code: BACCARAT_VALUE[code[0]] for code in CARD_CODES}
CARD_VALUES = np.array([CODE_VALUE[c] for c in CARD_CODES], dtype=np.int8)


def baccarat_value(code: str) -> int:
    return BACCARAT_VALUE[check_card(code)[0]]
