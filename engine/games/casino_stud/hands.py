"""Five-card poker hands as casino stud ranks them: the category, one totally ordered strength, the
words an investigator reads, and the dealer's qualification.

Standard ranking (RULES.md § Casino 5-card stud: "cards compared by poker rank, kickers from the
highest down"); suits never break a tie; the ace plays high, and low only in the wheel A-2-3-4-5,
the lowest straight (and the lowest straight flush). A royal flush is the ace-high straight flush,
named as its own category because the jackpot pays it apart.

`HandRank.strength` packs the category and the ranks that decide ties into one int: two hands tie
exactly when their strengths are equal, and the better hand has the larger strength.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from engine.cards import CARD_CODES, CardCodeError, check_card

RANK_NAMES: tuple[str, ...] = (
    "HIGH_CARD", "PAIR", "TWO_PAIR", "THREE_OF_A_KIND", "STRAIGHT", "FLUSH", "FULL_HOUSE", "FOUR_OF_A_KIND",
    "STRAIGHT_FLUSH", "ROYAL_FLUSH",
)  # fmt: skip
HIGH_CARD, PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, STRAIGHT_FLUSH, ROYAL_FLUSH = (
    RANK_NAMES
)
CATEGORY_INDEX: dict[str, int] = {name: i for i, name in enumerate(RANK_NAMES)}
QUALIFIERS = ("AK",)  # a pair or better, or a high-card hand holding an ace and a king

# a card's rank as a number: 2..10, J 11, Q 12, K 13, A 14
VALUE: dict[str, int] = {r: v for v, r in enumerate("23456789TJQKA", start=2)}
_WHEEL = (14, 5, 4, 3, 2)
_CARDS = frozenset(CARD_CODES)
_NIBBLES = 5  # ranks that decide a tie, at most five, four bits each


class HandError(ValueError):
    """Cards that are not one five-card hand (five distinct card codes)."""


@dataclass(frozen=True)
class HandRank:
    category: str  # one of RANK_NAMES
    strength: int  # equal iff the hands tie; larger = better (the category is its leading part)

    def __lt__(self, other: HandRank) -> bool:
        return self.strength < other.strength

    def __le__(self, other: HandRank) -> bool:
        return self.strength <= other.strength

    def __gt__(self, other: HandRank) -> bool:
        return self.strength > other.strength

    def __ge__(self, other: HandRank) -> bool:
        return self.strength >= other.strength

    @property
    def index(self) -> int:
        """The category's place in RANK_NAMES (0 = HIGH_CARD)."""
        return CATEGORY_INDEX[self.category]

    @property
    def ranks(self) -> tuple[int, ...]:
        """The ranks that decide a tie, in the order they are compared (e.g. two pair: high pair, low
        pair, kicker; a straight: its top card, 5 for the wheel)."""
        out, rest = [], self.strength
        for _ in range(_NIBBLES):
            out.append(rest & 0xF)
            rest >>= 4
        return tuple(v for v in reversed(out) if v)


def _strength(category: int, ranks: Sequence[int]) -> int:
    value = category
    for k in range(_NIBBLES):
        value = (value << 4) | (ranks[k] if k < len(ranks) else 0)
    return value


def _all_cards(cards: Sequence[str]) -> bool:
    try:
        return _CARDS.issuperset(cards)
    except TypeError:  # an entry that cannot be a card at all
        return False


def rank_hand(cards: Sequence[str]) -> HandRank:
    """The rank of five distinct cards; HandError for anything else."""
    if len(cards) != 5:
        raise HandError(f"a hand is five cards, got {len(cards)}: {list(cards)!r}")
    if not _all_cards(cards):
        try:
            for c in cards:
                check_card(c)
        except CardCodeError as e:
            raise HandError(str(e)) from None
    if len(set(cards)) != 5:
        raise HandError(f"a hand holds five distinct cards, got {list(cards)!r}")
    # a hand's rank depends only on its ranks and whether it is one suit: ranked once per such shape
    return _rank_shape(tuple(sorted([VALUE[c[0]] for c in cards], reverse=True)), len({c[1] for c in cards}) == 1)


@cache  # at most 6,175 rank multisets x flush or not
def _rank_shape(values: tuple[int, ...], flush: bool) -> HandRank:
    """The rank of five distinct cards whose ranks are `values` (highest first), all of one suit when `flush`."""
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    if len(counts) == 5:
        straight_top = 0
        if values[0] - values[4] == 4:
            straight_top = values[0]
        elif values == _WHEEL:
            straight_top = 5
        if straight_top:
            if flush:
                category = ROYAL_FLUSH if straight_top == 14 else STRAIGHT_FLUSH
                return HandRank(category, _strength(CATEGORY_INDEX[category], (straight_top,)))
            return HandRank(STRAIGHT, _strength(CATEGORY_INDEX[STRAIGHT], (straight_top,)))
        category = FLUSH if flush else HIGH_CARD
        return HandRank(category, _strength(CATEGORY_INDEX[category], values))
    # groups: bigger group first, then higher rank
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = tuple(n for _, n in groups)
    ranks = [v for v, _ in groups]
    category = {(4, 1): FOUR_OF_A_KIND, (3, 2): FULL_HOUSE, (3, 1, 1): THREE_OF_A_KIND, (2, 2, 1): TWO_PAIR,
                (2, 1, 1, 1): PAIR}[shape]
    return HandRank(category, _strength(CATEGORY_INDEX[category], ranks))


def hand_or_none(cards: Sequence[str] | None) -> HandRank | None:
    """rank_hand, or None for cards that are not a hand (never raises)."""
    try:
        return rank_hand(tuple(cards or ()))
    except (HandError, TypeError):
        return None


_WORD = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten",
         11: "jack", 12: "queen", 13: "king", 14: "ace"}
_PLURAL = {6: "sixes"}


def _plural(v: int) -> str:
    return _PLURAL.get(v, _WORD[v] + "s")


def _kickers(vs: Sequence[int]) -> str:
    if not vs:
        return ""
    names = [_WORD[v] for v in vs]
    return f", {names[0]} kicker" if len(names) == 1 else f", {', '.join(names)} kickers"


def describe(hand: HandRank | Sequence[str]) -> str:
    """The hand in words: 'two pair, kings and fives, ace kicker', 'straight, five high (the wheel)'."""
    rank = hand if isinstance(hand, HandRank) else rank_hand(hand)
    return _describe_rank(rank.category, rank.strength)


@cache  # one text per distinct rank (7,462 at most), by its fields (a HandRank's own hash is Python's, slower)
def _describe_rank(c: str, strength: int) -> str:
    r = HandRank(c, strength).ranks
    if c == ROYAL_FLUSH:
        return "royal flush"
    if c == STRAIGHT_FLUSH:
        return f"straight flush, {_WORD[r[0]]} high" + (" (the wheel)" if r[0] == 5 else "")
    if c == FOUR_OF_A_KIND:
        return f"four {_plural(r[0])}{_kickers(r[1:])}"
    if c == FULL_HOUSE:
        return f"full house, {_plural(r[0])} full of {_plural(r[1])}"
    if c == FLUSH:
        return f"flush, {', '.join(_WORD[v] for v in r)}"
    if c == STRAIGHT:
        return f"straight, {_WORD[r[0]]} high" + (" (the wheel)" if r[0] == 5 else "")
    if c == THREE_OF_A_KIND:
        return f"three {_plural(r[0])}{_kickers(r[1:])}"
    if c == TWO_PAIR:
        return f"two pair, {_plural(r[0])} and {_plural(r[1])}{_kickers(r[2:])}"
    if c == PAIR:
        return f"pair of {_plural(r[0])}{_kickers(r[1:])}"
    return f"high card, {', '.join(_WORD[v] for v in r)}"


def dealer_qualifies(rank: HandRank, qualifier: str) -> bool:
    """AK: a pair or better, or a high-card hand holding an ace and a king."""
    if qualifier != "AK":
        raise ValueError(f"unknown qualifier {qualifier!r}; known: {', '.join(QUALIFIERS)}")
    if rank.category != HIGH_CARD:
        return True
    return rank.ranks[:2] == (14, 13)


def category_at_least(category: str, lowest: str) -> bool:
    return CATEGORY_INDEX[category] >= CATEGORY_INDEX[lowest]
