"""Findings' texts written by one kernel: a game declares its kinds' words (engine.betting.Wording) and names the
texts and amounts its placeholders say; each kind's FINDING_COLUMNS become a program of pieces (a literal, a text
of the vocabulary, an amount), and `write_findings` writes every finding's columns at once from a vocabulary (the
literals, the table's texts, then the blocks of texts a game adds) and the amounts: no Python string a finding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from string import Formatter

import numpy as np
import pyarrow as pa

from engine.betting_lines import put_money
from engine.findings import Finding, money_exponent
from engine.kernels import kernel, put, string_array, utf8_texts

# a Finding's fields as columns (all strings), in its order
FINDING_COLUMNS = pa.schema([(f.name, pa.string()) for f in fields(Finding)])

_WORDED = ("expected", "recorded", "message")  # the columns a kind's Wording says; the others a text named as them


def _parsed(template: str, what: str) -> list[str | tuple[str]]:
    """A template's pieces in order: a literal as itself, a placeholder as (its name,); {what} as `what`'s."""
    pieces: list[str | tuple[str]] = []
    for literal, name, _, _ in Formatter().parse(template):
        pieces += [literal] if literal else []
        pieces += (_parsed(what, what) if name == "what" else [(name,)]) if name is not None else []
    return pieces


def in_bet_order(found: Sequence[tuple[int, np.ndarray, np.ndarray]], slots: int) -> tuple[np.ndarray, np.ndarray]:
    """Findings found kind by kind, (slot, which bets, their kinds), put bet by bet, a bet's in slot order (slot <
    `slots`): each finding's bet and its kind."""
    order = np.argsort(np.concatenate([w * slots + slot for slot, w, _ in found]), kind="stable")
    return np.concatenate([w for _, w, _ in found])[order], np.concatenate([kinds for _, _, kinds in found])[order]


class FindingTexts:
    """A game's findings' words as one program. `wordings` each kind's; `what` the text {what} says; a placeholder
    names (after `names`, or a kind's own `of_kind`) one of the table's texts (`table`: given once a table), the
    finding's texts (`texts`: one vocabulary text a finding) or its amounts (`amounts`: written as format_money
    writes them)."""

    def __init__(self, wordings: Mapping[str, object], what: str, table: Sequence[str], texts: Sequence[str],
                 amounts: Sequence[str], names: Mapping[str, str] = {},
                 of_kind: Mapping[str, Mapping[str, str]] = {}) -> None:
        columns = {kind: [_parsed(getattr(wording, c), what) if c in _WORDED else [kind] if c == "kind" else [(c,)]
                          for c in FINDING_COLUMNS.names] for kind, wording in wordings.items()}
        self.kinds = list(columns)
        self.table = (*table, "unit")
        # the literals of every kind's words: a vocabulary's first texts, then the table's
        self.literals = list(dict.fromkeys(p for of in columns.values() for pieces in of for p in pieces
                                           if isinstance(p, str)))
        literal_ids = {text: k for k, text in enumerate(self.literals)}
        # each kind's column's pieces: >= 0 the vocabulary's text, -1 - s the finding's text s, -1 - len(texts) - a
        # its amount a
        ops, at = [], [0]
        for kind, of in columns.items():
            for pieces in of:
                for p in pieces:
                    name = p if isinstance(p, str) else of_kind.get(kind, {}).get(p[0], names.get(p[0], p[0]))
                    ops.append(literal_ids[p] if isinstance(p, str) else len(self.literals) + self.table.index(name)
                               if name in self.table else -1 - texts.index(name) if name in texts
                               else -1 - len(texts) - amounts.index(name))
                at.append(len(ops))
        self.program, self.program_at = np.array(ops, np.int64), np.array(at, np.int64)

    def kind(self, name: str) -> int:
        return self.kinds.index(name)

    def vocabulary(self, table: Sequence[str], currency: str | None) -> Vocabulary:
        """A table's vocabulary: the literals, then its texts (`table`, as FindingTexts.table names them)."""
        return Vocabulary([*self.literals, *table, f" {currency}" if currency else ""], currency)

    def of_kinds(self, kinds: Sequence[str], kind_of: np.ndarray, on: np.ndarray,
                 ids_of: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """The ids ids_of(their bets, of `on`) gives the findings of `kinds` (0 the others': their words do not
        say it)."""
        rows, ids = np.flatnonzero(np.isin(np.array(self.kinds), kinds)[kind_of]), np.zeros(len(on), np.int64)
        ids[rows] = ids_of(on[rows]) if len(rows) else 0
        return ids

    def written(self, kind_of: np.ndarray, vocabulary: Vocabulary, texts: Sequence[np.ndarray],
                amounts: Sequence[np.ndarray]) -> pa.Table:
        """The findings of kinds kind_of (self.kind's), as FINDING_COLUMNS: finding i's texts[s][i] (the
        vocabulary's) and amounts[a][i]."""
        vocab, vocab_at = utf8_texts(pa.concat_arrays(vocabulary.blocks))
        data, at = write_findings(kind_of, len(FINDING_COLUMNS), self.program, self.program_at,
                                  np.asarray(np.stack(texts), np.int64), np.asarray(np.stack(amounts), np.int64),
                                  money_exponent(vocabulary.currency), len(self.literals) + len(self.table) - 1,
                                  vocab, vocab_at)
        every, m = string_array(data, at), len(kind_of)
        return pa.Table.from_arrays([every.slice(c * m, m) for c in range(len(FINDING_COLUMNS))],
                                    schema=FINDING_COLUMNS)


class Vocabulary:
    """The texts a table's findings say, block after block; a text by its index."""

    def __init__(self, first: list[str], currency: str | None) -> None:
        self.blocks, self.size, self.currency = [pa.array(first, pa.string())], len(first), currency

    def block(self, values: pa.Array) -> int:
        """Adds `values`; the index of their first."""
        self.blocks.append(values)
        self.size += len(values)
        return self.size - len(values)

    def coded(self, values: np.ndarray, text: Callable[[int], str]) -> np.ndarray:
        """Each value's text's index, text(value) added once a distinct value (a few hundred values a table)."""
        values_of, value_of = np.unique(values, return_inverse=True)
        return self.block(pa.array([text(v) for v in values_of.tolist()], pa.string())) + value_of


@kernel
def write_findings(kind_of, columns, program, program_at, said, amounts, exp, unit, vocab, vocab_at):
    """The texts of `columns` columns of findings, column by column (text c * m + i: column c of finding i, of m),
    each its kind's (kind_of[i]) pieces in order (`program`, column c of kind k's from program_at[k * columns + c]
    to the next): a literal (>= 0) the vocabulary's text; -1 - s the vocabulary's said[s, i]; -1 - len(said) - a
    the amount amounts[a, i] as format_money writes it (put_money's digits, then the unit: vocabulary text
    `unit`). Counted, then written: (the UTF-8 bytes, text t's offsets t and t + 1 into them)."""
    m, sources = len(kind_of), said.shape[0]
    text_at = np.zeros(columns * m + 1, np.int64)
    buf = np.empty(0, np.uint8)
    for dry in (True, False):
        at = 0
        for c in range(columns):
            for i in range(m):
                p = kind_of[i] * columns + c
                for q in range(program_at[p], program_at[p + 1]):
                    op = program[q]
                    if op >= 0:
                        at = put(buf, at, dry, vocab, vocab_at, op)
                    elif op >= -sources:
                        at = put(buf, at, dry, vocab, vocab_at, said[-1 - op, i])
                    else:
                        at = put_money(buf, at, dry, amounts[-1 - sources - op, i], exp)
                        at = put(buf, at, dry, vocab, vocab_at, unit)
                text_at[c * m + i + 1] = at
        if dry:
            buf = np.empty(at, np.uint8)
    return buf, text_at
