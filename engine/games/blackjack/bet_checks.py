"""A blackjack bet's checks, in words once: the readable audit (audit._ShoeAuditor.credit and check_bet) fills
them a bet at a time; `bet_findings` finds them column by column (their texts written by one kernel) for the bets
the screen (kernel.settle_bets) could not clear on a round the kernels settled, many shoes' bets at once: no Python
object a bet, the same findings in the same order (tests/test_blackjack_bets_as_columns.py holds the two to each
other).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction
from string import Formatter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import BET_WHAT, BET_WORDS, TableFacts, Wording, us_bytes
from engine.betting_columns import FINDING_COLUMNS, distinct
from engine.betting_lines import put_money
from engine.cards import CARD_CODES
from engine.findings import format_money, money_exponent
from engine.kernels import kernel, put, string_array, utf8_texts

from .kernel import BET_BEHIND, INSURANCE, NO_SEAT, OTHER, PAIR
from .records import SEATS
from .rules import BlackjackRules

# the findings of a blackjack bet beside engine.betting's (BET_WORDS), as credit() and check_bet() raise them
WORDS = {
    "BET_TYPE_NOT_OFFERED": Wording("a bet type of {ruleset}", "{bet_type}", "{what}: {ruleset} does not offer "
                                    "{bet_type}."),
    "BET_ON_EMPTY_BOX": Wording("one of the occupied boxes {boxes}", "box {seat}", "{what} is on box {seat}, which "
                                "nobody played in round {round}: refunded."),
    "ADDED_STAKE_MISMATCH": Wording("{owed}", "{added}", "{what}: the box's doubles and splits add {owed}, recorded "
                                    "{added}."),
    "INSURANCE_NOT_OFFERED": Wording("insurance only against a dealer ace", "upcard {upcard}", "{what}: insurance "
                                     "taken against {upcard} in round {round}: refunded."),
    "PAIR_WITHOUT_MAIN": Wording("a MAIN bet of {account} on box {seat}", "none", "{what}: no main bet of the same "
                                 "account on box {seat}."),
    "SIDE_BET_ABOVE_SHARE": Wording("<= {cap}", "{stake}", "{what} is above {share} of the table maximum "
                                    "{table_max}."),
    "INSURANCE_ABOVE_SHARE": Wording("<= {share} of {main}", "{stake}", "{what} is above {share} of the box's main "
                                     "stake {main}{with_held}."),
    "BET_BEHIND_BY_SEATED": Wording("an account not seated in the round", "{account} seated", "{what}: {account} "
                                    "plays a box in round {round}; bet behind is for accounts that are not seated."),
}


def side_bet_cap(rules: BlackjackRules, table: TableFacts) -> int:
    """The highest PAIR stake the table takes: the ruleset's share of the table maximum."""
    return int(Fraction(table.table_max) * rules.pair_max_share_of_table_max)


@dataclass(frozen=True)
class FlaggedBets:
    """Bets the screen could not clear on rounds the kernels settled (known), none in a round with a MAIN bet in
    quarantine, no amount beyond what int64 holds exactly: one entry a bet, in bet order (of one shoe, or of many
    one after another). `bet` its index among its shoe's bets; bet_type (kernel.MAIN... OTHER), seat (NO_SEAT:
    none), stake, added (0: none), paid, placed, as settle_bets reads them; `credit` what it is owed; of its round:
    cancelled, closed (betting_closed_at), upcard (a card code), boxes (bit 1 << box of each box played); of its
    box: on_box (its seat is one), as_box (a live round's MAIN bet, or a bet behind that follows the box: settled
    as the box) and owed_added (then: the stake its doubles and splits add), offered (insurance was offered on
    it), own and main_stake (settle_bets')."""

    bet: np.ndarray
    bet_type: np.ndarray
    seat: np.ndarray
    stake: np.ndarray
    added: np.ndarray
    paid: np.ndarray
    placed: np.ndarray
    credit: np.ndarray
    cancelled: np.ndarray
    closed: np.ndarray
    upcard: np.ndarray
    boxes: np.ndarray
    on_box: np.ndarray
    as_box: np.ndarray
    owed_added: np.ndarray
    offered: np.ndarray
    own: np.ndarray
    main_stake: np.ndarray

    def __len__(self) -> int:
        return len(self.bet)

    @classmethod
    def joined(cls, parts: list[FlaggedBets]) -> FlaggedBets:
        """The parts one after another (`bet` stays each part's own). (The empty parts left out: most shoes audited
        alone flag no bet, and a field's concatenation of ~100 parts a table cost ~1 ms.)"""
        given = [vars(p) for p in parts if len(p)] or [vars(p) for p in parts[:1]]
        if len(given) == 1:
            return cls(**given[0])
        return cls(*(np.concatenate([np.zeros(0, np.int64), *(p[f.name] for p in given)])
                     .astype(given[0][f.name].dtype if given else np.int64) for f in fields(cls)))


# each bet's findings in the order credit() and check_bet() raise them
(_NOT_OFFERED, _EMPTY_BOX, _ADDED, _INSURANCE_OFFER, _PAID, _BELOW, _ABOVE, _LATE, _PAIR_MAIN, _PAIR_SHARE,
 _INSURANCE_SHARE, _SEATED, _SLOTS) = range(13)
# the words of the kinds raised here (engine.betting's, then the game's)
_WORDINGS = {**{kind: BET_WORDS[kind] for kind in ("OVERPAID", "UNDERPAID", "STAKE_BELOW_MIN", "STAKE_ABOVE_MAX",
                                                   "LATE_BET")}, **WORDS}


def _parsed(template: str) -> list[str | tuple[str]]:
    """A template's pieces in order: a literal as itself, a placeholder as (its name,); {what} as BET_WHAT's."""
    pieces: list[str | tuple[str]] = []
    for literal, name, _, _ in Formatter().parse(template):
        pieces += [literal] if literal else []
        pieces += (_parsed(BET_WHAT) if name == "what" else [(name,)]) if name is not None else []
    return pieces


# each kind's columns of FINDING_COLUMNS as pieces (a placeholder of the bet's own texts named as its column)
_COLUMNS = {kind: [[kind], [("table_id",)], [("shoe_id",)], [("round_id",)], [("bet_id",)],
                   *(_parsed(template) for template in (wording.expected, wording.recorded, wording.message)),
                   [("account_id",)]] for kind, wording in _WORDINGS.items()}
_KINDS = list(_COLUMNS)
# the literals of every kind's words: a findings vocabulary's first texts
_LITERALS = list(dict.fromkeys(p for columns in _COLUMNS.values() for pieces in columns for p in pieces
                               if isinstance(p, str)))
_LITERAL_IDS = {text: k for k, text in enumerate(_LITERALS)}
# a finding's texts besides the literals: the table's (_SAID: the vocabulary's texts after the literals), its bet's
# (_SOURCES: the vocabulary's texts of the bet's, `said` in write_findings; _TEXTS as recorded) and its bet's
# amounts (_AMOUNTS); a placeholder named as one of these, as _OF_KIND's where a kind's words name one otherwise
_SAID = ("table_id", "ruleset", "cap", "table_max", "with_held", "pair_share", "insurance_share", "unit")
_TEXTS = ("shoe_id", "round_id", "bet_id", "bet_type", "account_id")
_SOURCES = (*_TEXTS, "boxes", "seat", "upcard", "closed", "placed")
_AMOUNTS = ("stake", "credit", "paid", "delta", "owed_added", "added", "main", "low", "high")
_NAMES = {"round": "round_id", "account": "account_id", "named": "bet_type", "owed": "credit"}
_OF_KIND = {"ADDED_STAKE_MISMATCH": {"owed": "owed_added"}, "STAKE_BELOW_MIN": {"limit": "low"},
            "STAKE_ABOVE_MAX": {"limit": "high"}, "SIDE_BET_ABOVE_SHARE": {"share": "pair_share"},
            "INSURANCE_ABOVE_SHARE": {"share": "insurance_share"}}


def _program() -> tuple[np.ndarray, np.ndarray]:
    """Every kind's columns as write_findings writes them (its `program`, `program_at`): a piece the vocabulary's
    text (>= 0: a literal's or the table's), a text of the finding's bet (-1 - its source), or an amount (-1 -
    len(_SOURCES) - its)."""
    ops, at = [], [0]
    for kind in _KINDS:
        for pieces in _COLUMNS[kind]:
            for p in pieces:
                name = p if isinstance(p, str) else _OF_KIND.get(kind, {}).get(p[0], _NAMES.get(p[0], p[0]))
                ops.append(_LITERAL_IDS[p] if isinstance(p, str) else len(_LITERALS) + _SAID.index(name)
                           if name in _SAID else -1 - _SOURCES.index(name) if name in _SOURCES
                           else -1 - len(_SOURCES) - _AMOUNTS.index(name))
            at.append(len(ops))
    return np.array(ops, np.int64), np.array(at, np.int64)


_PROGRAM, _PROGRAM_AT = _program()


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


def bet_findings(rules: BlackjackRules, table: TableFacts, flagged: FlaggedBets, texts: pa.Table
                 ) -> tuple[pa.Table, np.ndarray]:
    """The findings credit() and check_bet() raise on the `flagged` bets, as FINDING_COLUMNS in their order (bet
    by bet), and each finding's bet (its entry in `flagged`). `texts`: the bets' shoe_id, round_id, bet_id,
    bet_type and account_id as recorded, one row an entry of `flagged`. Which bets raise which kind found column
    by column; then every finding's columns written by one kernel (write_findings) from a vocabulary (the words'
    literals, the bets' texts, each box list, seat and upcard once per distinct value, the instants by
    engine.betting.us_bytes' kernel) and the amounts."""
    f = flagged
    t, stake, paid, credit = f.bet_type, f.stake, f.paid, f.credit
    found: list[tuple[int, int, np.ndarray]] = []  # (slot, kind, which bets)

    def add(slot: int, kind: str, mask: np.ndarray) -> None:
        w = np.flatnonzero(mask)
        if len(w):
            found.append((slot, _KINDS.index(kind), w))

    live, typed = ~f.cancelled, t != OTHER
    add(_NOT_OFFERED, "BET_TYPE_NOT_OFFERED", live & ~typed)
    add(_EMPTY_BOX, "BET_ON_EMPTY_BOX", live & typed & ~f.on_box)
    add(_ADDED, "ADDED_STAKE_MISMATCH", f.as_box & (f.added != f.owed_added))
    add(_INSURANCE_OFFER, "INSURANCE_NOT_OFFERED", live & f.on_box & (t == INSURANCE) & ~f.offered)
    delta = paid - credit
    add(_PAID, "OVERPAID", delta > 0)
    add(_PAID, "UNDERPAID", delta < 0)
    types = texts["bet_type"].combine_chunks().dictionary_encode()
    limits = [table.limits.get(name) for name in types.dictionary.to_pylist()]
    code = types.indices.to_numpy(zero_copy_only=False)
    limited = np.array([lim is not None for lim in limits], bool)[code]
    low, high = (np.array([lim[end] if lim else 0 for lim in limits], np.int64)[code] for end in (0, 1))
    add(_BELOW, "STAKE_BELOW_MIN", limited & (stake < low))
    add(_ABOVE, "STAKE_ABOVE_MAX", limited & (stake > high))
    # (insurance is offered after the deal, so it is placed after betting closed)
    add(_LATE, "LATE_BET", (t != INSURANCE) & (f.placed > f.closed))
    checked = typed & f.on_box
    pair, pair_share, insurance_share = checked & (t == PAIR), rules.pair_max_share_of_table_max, \
        rules.insurance_stake_share
    add(_PAIR_MAIN, "PAIR_WITHOUT_MAIN", pair & ~f.own & rules.pair_requires_main_bet)
    add(_PAIR_SHARE, "SIDE_BET_ABOVE_SHARE",
        pair & (stake * pair_share.denominator > table.table_max * pair_share.numerator))
    add(_INSURANCE_SHARE, "INSURANCE_ABOVE_SHARE", checked & (t == INSURANCE)
        & (stake * insurance_share.denominator > f.main_stake * insurance_share.numerator))
    add(_SEATED, "BET_BEHIND_BY_SEATED", checked & (t == BET_BEHIND) & f.own)
    if not found:
        return FINDING_COLUMNS.empty_table(), np.zeros(0, np.int64)
    order = np.argsort(np.concatenate([w * _SLOTS + slot for slot, _, w in found]), kind="stable")
    on = np.concatenate([w for _, _, w in found])[order]
    kind_of = np.concatenate([np.full(len(w), kind) for _, kind, w in found])[order]
    blocks = [pa.array([*_LITERALS, table.table_id, rules.id, format_money(side_bet_cap(rules, table),
                        table.currency), format_money(table.table_max, table.currency), "", str(pair_share),
                        str(insurance_share), f" {table.currency}" if table.currency else ""], pa.string())]

    def block(values: pa.Array) -> int:
        blocks.append(values)
        return sum(map(len, blocks)) - len(values)

    def coded(values: np.ndarray, text) -> np.ndarray:
        values_of, value_of = distinct(values)
        return block(pa.array([text(v) for v in values_of.tolist()], pa.string())) + value_of

    def of_kind(kinds: tuple[str, ...], ids_of) -> np.ndarray:
        """The ids ids_of(their bets) gives the findings of `kinds` (0 the others': their words do not say it)."""
        rows, ids = np.flatnonzero(np.isin(np.array(_KINDS), kinds)[kind_of]), np.zeros(len(on), np.int64)
        ids[rows] = ids_of(on[rows]) if len(rows) else 0
        return ids

    # (a null as f"{None}" says it)
    recorded = pc.fill_null(pa.concat_arrays([chunk if chunk.type == pa.string() else chunk.cast(pa.string())
                                              for name in _TEXTS for chunk in texts[name].chunks]), "None")
    first, n = block(recorded), len(f)
    # (a PAIR_WITHOUT_MAIN's seat is one of its round's boxes: never NO_SEAT)
    said = [*(first + k * n + on for k in range(len(_TEXTS))),
            of_kind(("BET_ON_EMPTY_BOX",), lambda b: coded(f.boxes[b], _box_list)),
            of_kind(("BET_ON_EMPTY_BOX", "PAIR_WITHOUT_MAIN"),
                    lambda b: coded(f.seat[b], lambda s: "None" if s == NO_SEAT else str(s))),
            of_kind(("INSURANCE_NOT_OFFERED",), lambda b: coded(f.upcard[b], CARD_CODES.__getitem__)),
            *(of_kind(("LATE_BET",), lambda b, us=us: block(string_array(*us_bytes(us[b]))) + np.arange(len(b)))
              for us in (f.closed, f.placed))]
    amounts = np.stack([column[on] for column in (stake, credit, paid, np.abs(delta), f.owed_added, f.added,
                                                  f.main_stake, low, high)])
    vocab, vocab_at = utf8_texts(pa.concat_arrays(blocks))
    data, at = write_findings(kind_of, len(FINDING_COLUMNS), _PROGRAM, _PROGRAM_AT, np.stack(said), amounts,
                              money_exponent(table.currency), len(_LITERALS) + _SAID.index("unit"), vocab, vocab_at)
    every, m = string_array(data, at), len(on)
    return pa.Table.from_arrays([every.slice(c * m, m) for c in range(len(FINDING_COLUMNS))],
                                schema=FINDING_COLUMNS), on


def _box_list(bits: int) -> str:
    """The boxes of a round's bits as the readable audit names them (list(r.boxes): ascending)."""
    return str([box for box in SEATS if bits >> box & 1])
