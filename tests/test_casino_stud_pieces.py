"""engine/games/casino_stud/pieces.py: lines laid out as pieces and written by its kernel, compiled and as Python,
against the same lines made with Python's own strings and format_money (the words' oracle, the readable audit,
is tests/test_kernels_casino_stud.py's)."""

from __future__ import annotations

import random
from contextlib import nullcontext

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import kernels
from engine.findings import format_money
from engine.games.casino_stud.pieces import Pieces

TEXTS = st.one_of(st.none(), st.text(max_size=6))  # (any Unicode: the kernel copies UTF-8 bytes)
AMOUNTS = st.integers(-(2**62), 2**62)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "as-python"])
@settings(max_examples=60, deadline=None)
@given(column=st.lists(TEXTS, min_size=1, max_size=8), literals=st.lists(st.text(max_size=5), min_size=1, max_size=4),
       amounts=st.lists(AMOUNTS, min_size=1, max_size=8), currency=st.sampled_from([None, "EUR", "JPY", "KWD"]),
       seed=st.integers(0, 2**32))
def test_lines_of_pieces_are_their_texts_end_to_end(compiled, column, literals, amounts, currency, seed):
    rng = random.Random(seed)
    text = Pieces(currency)
    base = text.column(pa.array(column, pa.string()))
    numbers = [rng.randrange(-3, 5000) for _ in range(5)]
    number_ids = text.numbers(np.array(numbers, np.int64))
    want: list[str] = []
    m = 5
    # a block of m lines of fixed pieces: a literal, a column row, an amount, a number, a choice of two options
    rows = [rng.randrange(len(column)) for _ in range(m)]
    cash = [rng.choice(amounts) for _ in range(m)]
    which = [rng.randrange(3) for _ in range(m)]
    options = [[literals[0]], [], [literals[-1], text.money(np.array(cash, np.int64))]]
    chosen_ids = text.chosen(np.array(which, np.int64), options)
    for r in range(m):
        option = [literals[0]] if which[r] == 0 else [] if which[r] == 1 else [literals[-1], format_money(cash[r],
                                                                                                          currency)]
        want.append("".join([literals[0], column[rows[r]] or "", format_money(cash[r], currency), str(numbers[r]),
                             *option]))
    # ragged lines: any count of pieces, none too
    counts = [rng.randrange(4) for _ in range(4)]
    pieces, ragged = [], []
    for c in counts:
        parts = [rng.choice(literals) for _ in range(c)]
        pieces += [text.text(p) for p in parts]
        ragged.append("".join(parts))
    everything = want + ragged
    places = list(range(len(everything)))
    rng.shuffle(places)
    fixed = np.array(places[:m], np.int64)
    text.add(fixed, literals[0], base + np.array(rows, np.int64), text.money(np.array(cash, np.int64)), number_ids,
             chosen_ids)
    text.add_ragged(np.array(places[m:], np.int64), np.array(pieces, np.int64), np.array(counts, np.int64))
    with nullcontext() if compiled else kernels.as_python():
        written = text.write()
    expected = [""] * len(everything)
    for line, place in zip(everything, places, strict=True):
        expected[place] = line
    assert written.type == pa.string() and written.to_pylist() == expected


def test_no_lines():
    assert Pieces("EUR").write().to_pylist() == []


def test_an_amount_at_the_int64_ends():
    text = Pieces("EUR")
    ends = np.array([-(2**63), 2**63 - 1, 0, -1, 5], np.int64)
    text.add(np.arange(5), text.money(ends))
    assert text.write().to_pylist() == [format_money(int(a), "EUR") for a in ends]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "as-python"])
def test_blocks_of_no_lines_add_nothing(compiled):
    """A day with no quiet round lays out blocks of no lines ((0, k) ids): they add nothing (a fuzzed day with no bets
    failed its table's audit here), and lines added beside them are written as before."""
    with nullcontext() if compiled else kernels.as_python():
        text = Pieces("EUR")
        none = np.zeros(0, np.int64)
        text.add(none, "round ", np.zeros((0, 3), np.int64), text.money(none))
        text.add(np.array([0]), "paid ", text.money(np.array([1250])))
        assert text.write().to_pylist() == [f"paid {format_money(1250, 'EUR')}"]
        empty = Pieces(None)
        empty.add(none, np.zeros((0, 2), np.int64))
        assert empty.write().to_pylist() == []
