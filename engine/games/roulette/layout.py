"""The single-zero betting layout: which selections are legal for each bet code, and the pockets each
selection covers, generated from the table's geometry rather than listed.

The numbers 1-36 sit on a grid of 12 rows by 3 columns (row r holds 3r+1, 3r+2, 3r+3). An inside bet
covers a rectangle of that grid: a straight 1x1, a split 1x2 or 2x1, a street 1x3 (a row), a corner
2x2, a six line 2x3. Zero sits at the head of the grid, beside the whole first row (1-2-3): with k
adjacent numbers of that row it makes the inside bet of k+1 numbers (0 alone, the splits 0-1, 0-2,
0-3, the trios 0-1-2 and 0-2-3, the first four 0-1-2-3).

Selections are recorded as the covered numbers ascending joined by '-' ('17-20'); a dozen or column
by its number ('1', '2', '3'); the even chances select nothing (None or '').
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

ROWS, COLUMNS = 12, 3
ZERO = 0
POCKETS = tuple(range(37))
NUMBERS = range(1, ROWS * COLUMNS + 1)

# inside bet -> the rectangles (rows, columns) it covers on the grid, and how many numbers that is
INSIDE_SHAPES: dict[str, tuple[tuple[int, int], ...]] = {
    "STRAIGHT": ((1, 1),),
    "SPLIT": ((1, 2), (2, 1)),
    "STREET": ((1, 3),),
    "CORNER": ((2, 2),),
    "SIX_LINE": ((2, 3),),
}
DOZEN, COLUMN = "DOZEN", "COLUMN"
EVEN_CHANCES = ("RED", "BLACK", "ODD", "EVEN", "LOW", "HIGH")
OUTSIDE = (DOZEN, COLUMN, *EVEN_CHANCES)  # zero loses every one of them
BET_CODES: tuple[str, ...] = (*INSIDE_SHAPES, *OUTSIDE)


def number_at(row: int, column: int) -> int:
    return COLUMNS * row + column + 1


def grid_position(number: int) -> tuple[int, int]:
    """(row, column) of 1-36, both from 0."""
    return divmod(number - 1, COLUMNS)


def rectangles(rows: int, columns: int, first_row_only: bool = False) -> list[frozenset[int]]:
    last_row = 1 if first_row_only else ROWS - rows + 1
    return [frozenset(number_at(r + dr, c + dc) for dr in range(rows) for dc in range(columns))
            for r in range(last_row) for c in range(COLUMNS - columns + 1)]


@lru_cache(maxsize=1024)  # (a layout's few hundred blocks, named once each: verdicts name them per pocket)
def selection_text(numbers: frozenset[int]) -> str:
    return "-".join(str(n) for n in sorted(numbers))


def _inside_bets(code: str) -> list[frozenset[int]]:
    shapes = INSIDE_SHAPES[code]
    on_grid = [block for rows, columns in shapes for block in rectangles(rows, columns)]
    size = shapes[0][0] * shapes[0][1]
    beside_zero = size - 1  # zero joins that many adjacent numbers of the first row
    if beside_zero == 0:
        return [frozenset({ZERO}), *on_grid]
    if beside_zero > COLUMNS:
        return on_grid
    return [head | {ZERO} for head in rectangles(1, beside_zero, first_row_only=True)] + on_grid


def _outside_bets(red: frozenset[int]) -> dict[str, dict[str | None, frozenset[int]]]:
    dozen = {str(d + 1): frozenset(n for n in NUMBERS if grid_position(n)[0] // 4 == d) for d in range(3)}
    column = {str(c + 1): frozenset(n for n in NUMBERS if grid_position(n)[1] == c) for c in range(COLUMNS)}
    chances = {
        "RED": red,
        "BLACK": frozenset(NUMBERS) - red,
        "ODD": frozenset(n for n in NUMBERS if n % 2),
        "EVEN": frozenset(n for n in NUMBERS if not n % 2),
        "LOW": frozenset(range(1, 19)),
        "HIGH": frozenset(range(19, 37)),
    }
    return {DOZEN: dozen, COLUMN: column, **{code: {None: covered} for code, covered in chances.items()}}


@dataclass(frozen=True)
class Layout:
    bets: Mapping[str, Mapping[str | None, frozenset[int]]]  # code -> legal selection -> pockets covered

    def covers(self, code: str, selection: str | None) -> frozenset[int] | None:
        """The pockets a bet covers; None when the selection is not a legal bet of that code."""
        return self.bets.get(code, {}).get(selection or None)

    def selections(self, code: str) -> tuple[str | None, ...]:
        return tuple(self.bets.get(code, {}))


@lru_cache(maxsize=8)
def layout(red: frozenset[int]) -> Layout:
    """The layout of a wheel whose red numbers are `red` (the colours are ruleset data)."""
    inside = {code: {selection_text(block): block for block in _inside_bets(code)} for code in INSIDE_SHAPES}
    return Layout({**inside, **_outside_bets(red)})
