"""Lines of text made of pieces (a literal, a row of a string column, an amount of money), laid out with numpy and
written at once by a kernel as UTF-8 bytes in their final order: no Arrow join, choose or take of the lines (the
way engine/betting_lines.py writes a group's explanation). words.py builds the quiet rounds' explanations with it.

A piece is an int64 id: a column's rows are ids base .. base + rows - 1 (`column`), a literal one id (`text`), an
amount one id per amount (`money`: format_money's text, written by the kernel with betting_lines.put_money). `add`
lays out lines of a fixed count of pieces (a row of ids each, EMPTY where a line has fewer), `add_ragged` lines of
any count; `write` puts every line where its `places` say.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from engine import kernels
from engine.betting_lines import put_money
from engine.findings import format_money, money_exponent
from engine.kernels import kernel, utf8_texts

Part = str | np.ndarray  # a literal, or an id a line


@kernel
def write_pieces(buf, order, piece_at, pieces, data, start, end, literal, amounts, exp, unit):
    """Line order[k] for every k, line j being the pieces pieces[piece_at[j]:piece_at[j + 1]], piece v the bytes
    data[start[v]:end[v]] (an id from Pieces.LITERAL on: that of id literal + v - LITERAL; from Pieces.AMOUNT on:
    amounts[v - AMOUNT] as put_money writes it (`exp` decimals), then the bytes of id `unit`), written into `buf`
    (an empty one: only counted). Returns each line's offsets: line k is buf[at[k]:at[k + 1]]."""
    n = len(order)
    dry = len(buf) == 0
    line_at = np.zeros(n + 1, np.int64)
    at = 0
    for k in range(n):
        j = order[k]
        for q in range(piece_at[j], piece_at[j + 1]):
            v = pieces[q]
            if v >= _AMOUNT:
                at = put_money(buf, at, dry, amounts[v - _AMOUNT], exp)
                v = unit
            elif v >= _LITERAL:
                v = literal + v - _LITERAL
            # unsigned indexes, as kernels.put's (no check for an index counted from the end)
            a, b = np.uint64(start[v]), np.uint64(end[v])
            if not dry:
                to, i = np.uint64(at), np.uint64(0)
                while i < b - a:
                    buf[to + i] = data[a + i]
                    i += np.uint64(1)
            at += np.int64(b - a)
        line_at[k + 1] = at
    return line_at


# ids above the columns': a literal's and an amount's, told apart until `write` gives every piece its place
_LITERAL, _AMOUNT = 1 << 40, 1 << 50


class Pieces:
    """The lines of one text (see the module): columns, literals and amounts given ids, lines laid out, then
    written."""

    def __init__(self, currency: str | None):
        self.currency = currency
        self.sources: list[tuple[np.ndarray, np.ndarray]] = []  # each column's bytes and offsets
        self.size = 0  # the ids given to columns so far
        self.literals: dict[str, int] = {}  # literal -> its index among them (its id: `LITERAL` + index)
        self.amounts: list[np.ndarray] = []  # the amounts given ids (id: `AMOUNT` + position among them all)
        self.n_amounts = 0
        self.lines: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (places, pieces, pieces a line)
        self.EMPTY = self.text("")

    LITERAL, AMOUNT = _LITERAL, _AMOUNT

    def column(self, values: pa.Array | tuple[np.ndarray, np.ndarray]) -> int:
        """The id of the column's row 0 (row r: id + r); `values` a string array (a null row is no text) or its
        (bytes, offsets) as kernels.utf8_texts gives them."""
        data, at = utf8_texts(values) if isinstance(values, pa.Array) else values
        base = self.size
        self.sources.append((data, np.asarray(at, np.int64)))
        self.size += len(at) - 1
        return base

    def texts(self, values: Sequence[str]) -> int:
        """column() of a few texts."""
        return self.column(pa.array(list(values), pa.string()))

    def numbers(self, values: np.ndarray) -> np.ndarray:
        """An id per integer: its decimal text (each one of their range written once; else each distinct one)."""
        values = np.asarray(values, np.int64)
        if not len(values):
            return values
        low, high = int(values.min()), int(values.max())
        if high - low < 4096:
            return self.texts([str(v) for v in range(low, high + 1)]) + (values - low)
        distinct, of = np.unique(values, return_inverse=True)
        return self.texts([str(v) for v in distinct.tolist()]) + of.reshape(-1)

    def text(self, literal: str) -> int:
        return self.LITERAL + self.literals.setdefault(literal, len(self.literals))

    def money(self, amounts: np.ndarray) -> np.ndarray:
        """An id per amount: its format_money text."""
        amounts = np.asarray(amounts, np.int64).reshape(-1)
        self.amounts.append(amounts)
        self.n_amounts += len(amounts)
        return self.AMOUNT + np.arange(self.n_amounts - len(amounts), self.n_amounts, dtype=np.int64)

    def row(self, m: int, *parts: Part) -> np.ndarray:
        """(m, len(parts)) ids: each part a literal (every line's) or an id a line."""
        out = np.empty((m, len(parts)), np.int64)
        for k, part in enumerate(parts):
            out[:, k] = self.text(part) if isinstance(part, str) else part
        return out

    def chosen(self, which: np.ndarray, options: Sequence[Sequence[Part]]) -> np.ndarray:
        """(m, the longest option's parts) ids: line r option which[r]'s parts, EMPTY after them."""
        which = np.asarray(which, np.int64)
        m = len(which)
        out = np.full((m, max(len(o) for o in options)), self.EMPTY, np.int64)
        for k, option in enumerate(options):
            rows = np.flatnonzero(which == k)
            if len(rows):
                out[rows, :len(option)] = self.row(m, *option)[rows] if option else self.EMPTY
        return out

    def add(self, places: np.ndarray, *blocks: np.ndarray | Part) -> None:
        """Lines of a fixed count of pieces, side by side: each block (m, k) ids, an id a line or a literal; line r
        goes to places[r]."""
        m = len(places)
        # (a block of no lines is (0, k): reshape(0, -1) cannot tell its k)
        parts = [(b.reshape(m, -1) if b.size else b.reshape(m, b.shape[1]))
                 if isinstance(b, np.ndarray) and b.ndim == 2 else self.row(m, b) for b in blocks]
        pieces = np.hstack(parts) if parts else np.zeros((m, 0), np.int64)
        self.lines.append((np.asarray(places, np.int64), pieces.reshape(-1),
                           np.full(m, pieces.shape[1], np.int64)))

    def add_ragged(self, places: np.ndarray, pieces: np.ndarray, counts: np.ndarray) -> None:
        """Lines of any count of pieces: line r's are the next counts[r] of `pieces`, it goes to places[r]."""
        self.lines.append((np.asarray(places, np.int64), np.asarray(pieces, np.int64), np.asarray(counts, np.int64)))

    def write(self) -> pa.Array:
        """Every line laid out, in the order of their places (0 .. lines - 1, each once), as a string array."""
        literals = list(self.literals)
        amounts = np.concatenate(self.amounts) if self.amounts else np.zeros(0, np.int64)
        unit = f" {self.currency}" if self.currency else ""
        literal_base = self.column(pa.array([*literals, unit], pa.string()))
        places = np.concatenate([p for p, _, _ in self.lines]) if self.lines else np.zeros(0, np.int64)
        pieces = np.concatenate([p for _, p, _ in self.lines]) if self.lines else np.zeros(0, np.int64)
        counts = np.concatenate([c for _, _, c in self.lines]) if self.lines else np.zeros(0, np.int64)
        data_base = np.cumsum([0, *(len(d) for d, _ in self.sources)])
        data = np.concatenate([d for d, _ in self.sources]) if self.sources else np.zeros(0, np.uint8)
        bases = data_base.tolist()
        start = np.concatenate([at[:-1] + base for (_, at), base in zip(self.sources, bases, strict=False)])
        end = np.concatenate([at[1:] + base for (_, at), base in zip(self.sources, bases, strict=False)])
        order = np.empty(len(places), np.int64)
        order[places] = np.arange(len(places))
        piece_at = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        if kernels.running_as_python():  # (the byte loop as Python would cost seconds on a day's lines)
            vocab = [data[a:b].tobytes() for a, b in zip(start.tolist(), end.tolist(), strict=True)]
            money = [format_money(a, self.currency).encode() for a in amounts.tolist()]

            def piece(v: int) -> bytes:
                return (money[v - self.AMOUNT] if v >= self.AMOUNT else vocab[literal_base + v - self.LITERAL]
                        if v >= self.LITERAL else vocab[v])
            return pa.array([b"".join(piece(v) for v in pieces[piece_at[j]:piece_at[j + 1]].tolist()).decode()
                             for j in order.tolist()], pa.string())
        args = (order, piece_at, pieces, data, start.astype(np.int64), end.astype(np.int64), literal_base, amounts,
                money_exponent(self.currency), literal_base + len(literals))
        line_at = write_pieces(np.zeros(0, np.uint8), *args)  # (counted first: the bytes' size)
        # the bytes in a buffer of Arrow's memory pool, which keeps its pages from call to call (a fresh numpy array
        # of megabytes a table faults every page in again)
        if line_at[-1] > np.iinfo(np.int32).max:  # (an Arrow string array's offsets are int32)
            raise OverflowError(f"{int(line_at[-1]):,} bytes of text are more than one string array holds")
        buf = pa.allocate_buffer(int(line_at[-1]))
        write_pieces(np.frombuffer(buf, np.uint8), *args)
        return pa.StringArray.from_buffers(len(order), pa.py_buffer(line_at.astype(np.int32)), buf)
