"""Cards and shoes: the two-character card codes of RULES.md and the N-deck composition check."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

RANKS = "A23456789TJQK"
SUITS = "SHDC"
CARD_CODES: tuple[str, ...] = tuple(rank + suit for rank in RANKS for suit in SUITS)
_CARD_SET = frozenset(CARD_CODES)

# The same facts per code, for hot loops and numpy: a card's index in CARD_CODES is rank-major
# (index // 4 is the rank's position in RANKS, index % 4 the suit's in SUITS); -1 stands for a string
# that is not a card code.
CARD_INDEX: dict[str, int] = {code: i for i, code in enumerate(CARD_CODES)}
CARD_RANKS = np.arange(len(CARD_CODES), dtype=np.int8) // len(SUITS)  # by card index


class CardCodeError(ValueError):
    """A string that is not one of the 52 card codes."""


def check_card(code: str) -> str:
    if not isinstance(code, str) or code not in _CARD_SET:
        raise CardCodeError(
            f"unknown card code {code!r}: expected rank {RANKS} then suit {SUITS}, e.g. 'TD'"
        )
    return code


def rank(code: str) -> str:
    return check_card(code)[0]


def new_shoe(decks: int) -> list[str]:
    """An unshuffled shoe of `decks` full decks."""
    return [code for _ in range(decks) for code in CARD_CODES]


@dataclass(frozen=True)
class Composition:
    """Result of checking a shoe against N full decks."""

    decks: int
    missing: dict[str, int] = field(default_factory=dict)  # code -> how many short
    extra: dict[str, int] = field(default_factory=dict)  # code -> how many too many
    unknown: tuple[str, ...] = ()  # strings that are not card codes

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.unknown)

    def describe(self) -> str:
        if self.ok:
            return f"{self.decks} full decks"
        parts = []
        if self.missing:
            parts.append("missing " + ", ".join(f"{c}x{n}" for c, n in sorted(self.missing.items())))
        if self.extra:
            parts.append("extra " + ", ".join(f"{c}x{n}" for c, n in sorted(self.extra.items())))
        if self.unknown:
            parts.append("unknown codes " + ", ".join(sorted({repr(c) for c in self.unknown})))
        return f"not {self.decks} full decks: " + "; ".join(parts)


def check_composition(cards: Iterable[str], decks: int) -> Composition:
    """Each of the 52 codes must appear exactly `decks` times."""
    counts = Counter(cards)
    unknown = tuple(c for c in counts if not isinstance(c, str) or c not in _CARD_SET)
    missing = {c: decks - counts[c] for c in CARD_CODES if counts[c] < decks}
    extra = {c: counts[c] - decks for c in CARD_CODES if counts[c] > decks}
    return Composition(decks, missing, extra, unknown)


def format_cards(cards: Sequence[str]) -> str:
    if not cards:
        return "-"
    try:
        return " ".join(cards)
    except TypeError:  # an entry that is not text at all: shown as its repr
        return " ".join(c if isinstance(c, str) else repr(c) for c in cards)
