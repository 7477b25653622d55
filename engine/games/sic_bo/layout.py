"""The sic bo table: its bet codes, the selections legal for each, and what a selection needs to win.

Three dice, recorded in order as three integers 1-6. Selections are recorded as RULES.md fixes them:
a total '4'..'17', a face '1'..'6' (DOUBLE, TRIPLE, SINGLE), two faces 'a-b' with a < b (COMBO);
SMALL, BIG, ODD, EVEN and ANY_TRIPLE select nothing (None or '').
"""

from __future__ import annotations

from itertools import combinations, product

FACES = range(1, 7)
DICE = 3
TOTALS = range(DICE * min(FACES) + 1, DICE * max(FACES))  # 4-17: 3 and 18 are triples, paid only as such
SMALL_TOTALS, BIG_TOTALS = range(4, 11), range(11, 18)
ROLLS = tuple(product(FACES, repeat=DICE))  # the 216 equally likely ordered rolls

_FACE_SELECTIONS = tuple(str(f) for f in FACES)
SELECTIONS: dict[str, tuple[str | None, ...]] = {
    "SMALL": (None,),
    "BIG": (None,),
    "ODD": (None,),
    "EVEN": (None,),
    "TOTAL": tuple(str(t) for t in TOTALS),
    "DOUBLE": _FACE_SELECTIONS,
    "TRIPLE": _FACE_SELECTIONS,
    "ANY_TRIPLE": (None,),
    "COMBO": tuple(f"{a}-{b}" for a, b in combinations(FACES, 2)),
    "SINGLE": _FACE_SELECTIONS,
}
BET_CODES: tuple[str, ...] = tuple(SELECTIONS)

# what each code needs to win, in words ({} is the selection)
_NEEDS = {
    "SMALL": "a total of 4-10",
    "BIG": "a total of 11-17",
    "ODD": "an odd total",
    "EVEN": "an even total",
    "TOTAL": "a total of {}",
    "DOUBLE": "{} on at least two dice",
    "TRIPLE": "{} on all three dice",
    "ANY_TRIPLE": "any triple",
    "COMBO": "both {} on the dice",
    "SINGLE": "{} on one, two or three dice (paid by how many)",
}


def is_legal(bet_type: str, selection: str | None) -> bool:
    return (selection or None) in SELECTIONS.get(bet_type, ())


def needs(bet_type: str, selection: str | None) -> str:
    return _NEEDS[bet_type].format(" and ".join((selection or "").split("-")))


def describe_roll(dice: tuple[int, ...]) -> str:
    """'2-2-5: total 9, small, odd, a double of 2'; '4-4-4: total 12, a triple of 4' (what a triple
    does to the even-money bets is the ruleset's `triple_loses`)."""
    total, faces = sum(dice), "-".join(str(d) for d in dice)
    if len(set(dice)) == 1:
        return f"{faces}: total {total}, a triple of {dice[0]}"
    size = "small" if total in SMALL_TOTALS else "big"
    parity = "odd" if total % 2 else "even"
    double = next((f" a double of {f}," for f in FACES if dice.count(f) == 2), "")
    return f"{faces}: total {total}, {size}, {parity},{double}".rstrip(",")


Cell = tuple[str, str | None]  # (bet code, selection): one place on the layout, what one bet covers

# The layout as a table prints it, row by row (a title, then its places in order): every legal (code, selection)
# once. A bet covers exactly the one place its code and selection name.
BOARD: tuple[tuple[str, tuple[Cell, ...]], ...] = tuple(
    (title, tuple((code, s) for code in codes for s in SELECTIONS[code])) for title, codes in (
        ("small, odd, any triple, even, big", ("SMALL", "ODD", "ANY_TRIPLE", "EVEN", "BIG")),
        ("doubles", ("DOUBLE",)),
        ("triples", ("TRIPLE",)),
        ("totals", ("TOTAL",)),
        ("combinations", ("COMBO",)),
        ("singles", ("SINGLE",)),
    ))
