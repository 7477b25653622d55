"""Poker strength of many 5-card hands at once (numpy), for the RTP enumerations of casino stud.

The readable ranking of one hand is `hands.rank_hand`; this module ranks arrays of hands, the
2,598,960 hands of a deck at a time. A hand is five card indices of `engine.cards.CARD_CODES` (rank
major: index // 4 is the rank's place in "A23456789TJQK", index % 4 the suit's in "SHDC").

`strength(hands)` is an int32 per hand, higher = better, equal = a push (standard poker: ranks and
kickers from the highest down, suits never break a tie, the wheel A-2-3-4-5 the lowest straight and
straight flush): rank class x 13**5 + the class's kickers in base 13 (card values 2 -> 0 ... A -> 12;
grouped cards first, bigger groups first, then higher values; a straight by its top card). There are
7,462 distinct strengths; `dense_strength` numbers them 0 (7-5-4-3-2) to 7461 (a royal flush).
"""

from __future__ import annotations

from functools import lru_cache
from math import comb

import numpy as np

# Rank classes, lowest first (the contract's rank names); a royal flush is the ace-high straight flush.
RANK_NAMES = ("HIGH_CARD", "PAIR", "TWO_PAIR", "THREE_OF_A_KIND", "STRAIGHT", "FLUSH", "FULL_HOUSE",
              "FOUR_OF_A_KIND", "STRAIGHT_FLUSH", "ROYAL_FLUSH")  # fmt: skip
HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH, ROYAL_FLUSH = range(10)

BASE = 13
CLASS_UNIT = BASE**5  # strength // CLASS_UNIT is the rank class (royal flushes are class 8, STRAIGHT_FLUSH)
ACE, KING = 12, 11  # card values
ALL_HANDS = comb(52, 5)


def card_values(cards: np.ndarray) -> np.ndarray:
    """Card value of card indices: 2 -> 0, ..., K -> 11, A -> 12."""
    return ((np.asarray(cards) // 4) + 12) % 13


def _digits(values: np.ndarray) -> np.ndarray:
    """Base-13 number of a (n, 5) array of values, the first the most significant."""
    out = np.zeros(len(values), dtype=np.int32)
    for i in range(5):
        out = out * BASE + values[:, i]
    return out


def strength(hands: np.ndarray) -> np.ndarray:
    """Strength (int32, higher = better) of each row of a (n, 5) array of distinct card indices."""
    hands = np.asarray(hands)
    n = len(hands)
    values = card_values(hands).astype(np.int32)
    suits = hands % 4
    rows = np.arange(n, dtype=np.int64)[:, None] * BASE
    counts = np.bincount((values + rows).ravel(), minlength=n * BASE).reshape(n, BASE)
    # Each card's sort key: its value's count first, then its value; sorted highest first.
    key = np.take_along_axis(counts, values, axis=1).astype(np.int32) * 16 + values
    key = -np.sort(-key, axis=1)
    group, ordered = key // 16, key % 16

    flush = (suits == suits[:, :1]).all(axis=1)
    distinct = group[:, 0] == 1
    wheel = distinct & (ordered[:, 0] == ACE) & (ordered[:, 1] == 3)  # A 5 4 3 2
    straight = distinct & ((ordered[:, 0] - ordered[:, 4] == 4) | wheel)
    top = np.where(wheel, 3, ordered[:, 0])

    rank_class = np.select(
        [straight & flush, group[:, 0] == 4, (group[:, 0] == 3) & (group[:, 3] == 2), flush, straight,
         group[:, 0] == 3, (group[:, 0] == 2) & (group[:, 2] == 2), group[:, 0] == 2],
        [STRAIGHT_FLUSH, QUADS, FULL_HOUSE, FLUSH, STRAIGHT, TRIPS, TWO_PAIR, PAIR],
        HIGH_CARD,
    ).astype(np.int32)
    kickers = np.where(straight, top, _digits(ordered))
    return rank_class * CLASS_UNIT + kickers


def rank_class(strengths: np.ndarray) -> np.ndarray:
    """Index into RANK_NAMES of each strength (a royal flush apart from the other straight flushes)."""
    strengths = np.asarray(strengths)
    cls = strengths // CLASS_UNIT
    return np.where((cls == STRAIGHT_FLUSH) & (strengths % CLASS_UNIT == ACE), ROYAL_FLUSH, cls)


def qualifier_strength(qualifier: str) -> int:
    """The lowest strength that qualifies: "AK" = ace-king high (A K 4 3 2) or better; "PAIR"; "NONE"."""
    if qualifier == "AK":
        return HIGH_CARD * CLASS_UNIT + int(_digits(np.array([[ACE, KING, 2, 1, 0]]))[0])
    if qualifier == "PAIR":
        return PAIR * CLASS_UNIT
    if qualifier == "NONE":
        return 0
    raise ValueError(f"unknown qualifier {qualifier!r}: expected AK, PAIR or NONE")


def hand_index(hands: np.ndarray) -> np.ndarray:
    """Colex number of each sorted row of k card indices (0 ... comb(52, k) - 1): sum of comb(c_i, i + 1)."""
    hands = np.asarray(hands, dtype=np.int64)
    table = binomials(52, hands.shape[1])
    return sum(table[hands[:, i], i + 1] for i in range(hands.shape[1]))


@lru_cache(maxsize=4)
def binomials(n: int, k: int) -> np.ndarray:
    """comb(x, j) for x in 0..n, j in 0..k as an int64 (n + 1, k + 1) array."""
    return np.array([[comb(x, j) for j in range(k + 1)] for x in range(n + 1)], dtype=np.int64)


def colex_subsets(n: int, k: int) -> np.ndarray:
    """Every k-subset of 0..n-1, (comb(n, k), k) int8 of ascending rows, in colex order: row i is the set
    whose `hand_index` is i (the subsets with top element t follow every subset of 0..t-1)."""
    rows = np.zeros((1, 0), dtype=np.int8)
    for size in range(1, k + 1):
        rows = np.concatenate([np.column_stack([rows[: comb(top, size - 1)], np.full(comb(top, size - 1), top,
                                                                                      dtype=np.int8)])
                               for top in range(size - 1, n)])
    return rows


@lru_cache(maxsize=1)
def all_hands() -> np.ndarray:
    """Every 5-card hand of the deck, (2598960, 5) int8 of ascending card indices, in colex order."""
    hands = colex_subsets(52, 5)
    hands.setflags(write=False)
    return hands


@lru_cache(maxsize=1)
def all_strengths() -> np.ndarray:
    """strength of every hand, indexed by `hand_index` (the rows of `all_hands`)."""
    s = strength(all_hands())
    s.setflags(write=False)
    return s


@lru_cache(maxsize=1)
def distinct_strengths() -> np.ndarray:
    """The 7,462 strengths a hand can have, ascending."""
    return np.unique(all_strengths())


def dense_strength(strengths: np.ndarray) -> np.ndarray:
    """0 (the lowest hand, 7-5-4-3-2) ... 7461 (a royal flush): the strength's place among the 7,462."""
    return np.searchsorted(distinct_strengths(), strengths)


def class_counts() -> dict[str, int]:
    """How many of the 2,598,960 hands fall in each rank class, counted by combinatorics: the warehouse prices
    the JACKPOT bet at every load, and enumerating every hand for it (`all_strengths`) held ~600 MB and took
    ~1.5 s (tests/test_casino_stud_rtp.py checks these counts against that enumeration)."""
    ranks_of_five = comb(13, 5) - 10  # five different ranks, not a straight (10 straights: A-5 ... T-A)
    counts = {
        "ROYAL_FLUSH": 4,
        "STRAIGHT_FLUSH": 10 * 4 - 4,
        "FOUR_OF_A_KIND": 13 * 48,
        "FULL_HOUSE": 13 * comb(4, 3) * 12 * comb(4, 2),
        "FLUSH": 4 * ranks_of_five,
        "STRAIGHT": 10 * (4**5 - 4),
        "THREE_OF_A_KIND": 13 * comb(4, 3) * comb(12, 2) * 4**2,
        "TWO_PAIR": comb(13, 2) * comb(4, 2) ** 2 * 44,
        "PAIR": 13 * comb(4, 2) * comb(12, 3) * 4**3,
        "HIGH_CARD": ranks_of_five * (4**5 - 4),
    }
    return {name: counts[name] for name in RANK_NAMES}
