"""A group's explanation (audit_group's: each round's head, then one line per settled bet in engine.betting's
words, BET_LINE) written by a kernel as UTF-8 bytes with each line's offsets, in its final order: no Python
string a line and no Arrow join or take of the lines (write_lines). The amounts are format_money's, written by
the kernel (put_money); the other parts are copied from texts the caller has as Arrow strings already (the bet
ids, the verdicts' whys) or makes once a group (the rounds' heads, the bet types' and selections' names).

The readable engine (engine.betting.audit_group) is the oracle: tests/test_kernels_betting_lines.py. Run as
Python (`kernels.as_python()`: `pitboss replay`'s one session), the lines are the template filled a line at a
time instead, since the kernel's byte loops as Python would cost seconds on a session of a day's bets.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import Formatter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine import kernels
from engine.betting import BET_LINE, BET_WHAT
from engine.findings import format_money, money_exponent
from engine.kernels import interleave, kernel, put, utf8_texts, writer

LINE = BET_LINE.replace("{what}", BET_WHAT)  # a settled bet's line, every part named
PARTS = ("bet_id", "named", "stake", "why", "owed", "paid")  # LINE's parts in the order write_lines writes them


def _literals(template: str) -> list[str]:
    """The template's literals around its parts: before the first, between each two, after the last."""
    literals, names = [""], []
    for literal, name, spec, conversion in Formatter().parse(template):
        literals[-1] += literal
        if name is not None:
            names.append(name)
            literals.append("")
            if spec or conversion:
                names.append("(a format)")
    if tuple(names) != PARTS:  # (the words changed: write_lines writes these parts in this order)
        raise ValueError(f"the bet line {template!r} is not the parts {PARTS} write_lines writes")
    return literals


LITERALS = _literals(LINE)


@writer
def put_money(buf, at, dry, amount, exp):
    """format_money(amount, currency) without the currency at buf[at:] (`exp`: its decimals): a sign, the whole
    units in groups of three digits by commas, then the decimals. The digits of the magnitude (uint64: any
    int64's) from the last, by a constant 10 (a multiplication, not a division)."""
    ten = np.uint64(10)
    if amount < 0:
        if not dry:
            buf[at] = 45  # '-'
        at += 1
        magnitude = np.uint64(-(amount + 1)) + np.uint64(1)
    else:
        magnitude = np.uint64(amount)
    digits, m = 1, magnitude
    while m >= ten:
        m //= ten
        digits += 1
    whole = max(digits - exp, 1)  # (0.05: a whole 0)
    width = whole + (whole - 1) // 3 + (exp + 1 if exp > 0 else 0)
    if not dry:
        p = at + width - 1
        for i in range(exp + whole):
            if i == exp and exp > 0:
                buf[p] = 46  # '.'
                p -= 1
            elif i > exp and (i - exp) % 3 == 0:
                buf[p] = 44  # ','
                p -= 1
            buf[p] = 48 + np.int64(magnitude % ten)
            magnitude //= ten
            p -= 1
    return at + width


@kernel
def write_lines(round_of, rounds, heads, heads_at, ids, ids_at, id_of, named, named_at, named_of, whys, whys_at,
                why_of, stake, owed, paid, exp, words, words_at):
    """Every round's head, then the lines of its settled bets (`round_of`: each one's round) in the order given,
    in kernels.interleave's order (called here: one kernel for the explanation), a bet's line as LINE's parts with
    its literals folded in: words[0], its id, its type and selection named (`named`: with the literals around
    them), its stake, the currency and its why (`whys`: likewise), owed, words[1] (the currency, the literal before
    paid), paid, words[2] (the currency, the end); the amounts by put_money. Returns (the UTF-8 bytes, each line's
    offsets: line k is bytes[line_at[k]:line_at[k + 1]], each round's lines: round i's are lines
    round_at[i]:round_at[i + 1]).
    One writing pass (a counting pass first cost a quarter of the kernel: the amounts' digits) into a buffer at
    least as long as the lines: the texts' lengths summed, each amount counted as wide as its column's widest (a
    few bytes a line over where a column's amounts differ in width; the bytes past the lines never written)."""
    index, round_at = interleave(round_of, rounds)
    n, bets = len(index), len(round_of)
    size = heads_at[rounds] - heads_at[0] + bets * (words_at[3] - words_at[0])
    widest = np.zeros(3, np.int64)  # each amount column's -|amount| at its least: its widest text, sign included
    for b in range(bets):
        size += (ids_at[id_of[b] + 1] - ids_at[id_of[b]] + named_at[named_of[b] + 1] - named_at[named_of[b]]
                 + whys_at[why_of[b] + 1] - whys_at[why_of[b]])
        widest[0] = min(widest[0], stake[b], -stake[b])
        widest[1] = min(widest[1], owed[b], -owed[b])
        widest[2] = min(widest[2], paid[b], -paid[b])
    buf = np.zeros(0, np.uint8)  # (put_money only counts a dry amount's bytes)
    for c in range(3):
        size += bets * put_money(buf, 0, True, widest[c], exp)
    buf = np.empty(size, np.uint8)
    line_at = np.zeros(n + 1, np.int64)
    at = 0
    for k in range(n):
        j = index[k]
        if j < rounds:
            at = put(buf, at, False, heads, heads_at, j)
        else:
            b = j - rounds
            at = put(buf, at, False, words, words_at, 0)
            at = put(buf, at, False, ids, ids_at, id_of[b])
            at = put(buf, at, False, named, named_at, named_of[b])
            at = put_money(buf, at, False, stake[b], exp)
            at = put(buf, at, False, whys, whys_at, why_of[b])
            at = put_money(buf, at, False, owed[b], exp)
            at = put(buf, at, False, words, words_at, 1)
            at = put_money(buf, at, False, paid[b], exp)
            at = put(buf, at, False, words, words_at, 2)
        line_at[k + 1] = at
    return buf[:at], line_at, round_at


@kernel
def write_amounts(amounts, exp, unit, unit_at):
    """Each amount as put_money writes it, then `unit` (piece 0: the currency with its space, or nothing): the
    UTF-8 bytes and each text's offsets (text k is bytes[at[k]:at[k + 1]])."""
    n = len(amounts)
    buf = np.zeros(0, np.uint8)
    text_at = np.zeros(n + 1, np.int64)
    for p in range(2):  # the first pass counts the bytes, the second writes them
        dry = p == 0
        at = 0
        for k in range(n):
            at = put_money(buf, at, dry, amounts[k], exp)
            at = put(buf, at, dry, unit, unit_at, 0)
            text_at[k + 1] = at
        if dry:
            buf = np.empty(at, np.uint8)  # (the second pass writes every byte)
    return buf, text_at


def amount_texts(amounts: np.ndarray, currency: str | None) -> pa.Array:
    """format_money(amount, currency) of each amount, as a string array: written by a kernel at once (no Python
    string an amount); as Python (`kernels.as_python()`), format_money's own."""
    if kernels.running_as_python():
        return pa.array([format_money(a, currency) for a in np.asarray(amounts).tolist()], pa.string())
    data, at = write_amounts(np.asarray(amounts, np.int64), money_exponent(currency),
                             *utf8_texts([f" {currency}" if currency else ""]))
    return kernels.string_array(data, at)


def explanation(heads: Sequence[str], bet_id: pa.Array, rows: np.ndarray, round_of: np.ndarray,
                named: Sequence[str], named_of: np.ndarray, stake: np.ndarray, owed: np.ndarray, paid: np.ndarray,
                whys: pa.Array, why_of: np.ndarray, currency: str | None) -> tuple[pa.Array, np.ndarray]:
    """Every round's explanation, one after the other: its head (`heads`, a round each), then the line of each of
    its settled bets in the order given (`rows`: the bets' rows of `bet_id`, `round_of` each one's round; its
    type and selection named[named_of], its amounts, its why whys[why_of]); as (the lines, `at`: round i's are
    lines[at[i]:at[i + 1]])."""
    if kernels.running_as_python():
        index, at = kernels.interleave(round_of, len(heads))
        return _filled_as_python(index, heads, bet_id, rows, named, named_of, stake, owed, paid, whys, why_of,
                                 currency), at
    unit = f" {currency}" if currency else ""
    bet, between, named_end, why_start, why_end, owed_end, paid_end = LITERALS
    data, line_at, at = write_lines(
        np.asarray(round_of, np.int64), len(heads), *utf8_texts(heads), *utf8_texts(bet_id), rows,
        *utf8_texts([f"{between}{n}{named_end}" for n in named]), named_of,
        *utf8_texts(pc.binary_join_element_wise(unit + why_start, whys, why_end, "")), why_of, stake, owed, paid,
        money_exponent(currency), *utf8_texts([bet, unit + owed_end, unit + paid_end]))
    return kernels.string_array(data, line_at), at


def _filled_as_python(index: np.ndarray, heads: Sequence[str], bet_id: pa.Array, rows: np.ndarray,
                      named: Sequence[str], named_of: np.ndarray, stake: np.ndarray, owed: np.ndarray,
                      paid: np.ndarray, whys: pa.Array, why_of: np.ndarray, currency: str | None) -> pa.Array:
    """write_lines' lines, LINE filled a line at a time (format_money's amounts)."""
    ids, why = bet_id.take(pa.array(rows, pa.int64())).to_pylist(), whys.take(pa.array(why_of, pa.int64())).to_pylist()
    lines = [*heads, *(LINE.format(bet_id=i, named=named[n], stake=format_money(a, currency), why=w,
                                   owed=format_money(o, currency), paid=format_money(p, currency))
                       for i, n, a, w, o, p in zip(ids, named_of.tolist(), stake.tolist(), why, owed.tolist(),
                                                   paid.tolist(), strict=True))]
    return pa.array([lines[k] for k in index.tolist()], pa.string())
