"""Arrow <-> the casino stud engine: one table-day's decks, rounds and bets into
engine.games.casino_stud.audit, its results back as output tables. No Beam here (tested without a pipeline).

A stud round is dealt from a fresh deck, its own `shoes` row (docs/casino-stud.md § Recorded data), so a
table-day's group holds a deck per round. Unlike the other card games the rounds are not audited deck by
deck: the jackpot pools carry from round to round, so the engine takes every round of the table-day at
once, in betting_closed_at order (then round_id), each with its own deck, and chains the ledger across
them. Besides its round replays the game has one output of its own, the jackpot ledger (EXTRA_OUTPUTS).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial, wraps
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.games import game
from engine.games.casino_stud.audit import RecordedBet, RecordedRound, StudAudit, audit_table_rounds
from engine.games.casino_stud.chain import ChainEnd, ChainGap, breaks_across_groups
from engine.games.casino_stud.chain import group_ends as chain_ends
from engine.games.casino_stud.dealt import bet_columns, dealt_rounds
from engine.games.casino_stud.rules import CasinoStudRules, load_casino_stud_rules
from pipelines.arrow_columns import coded, codes_in, one_chunk, us_column
from pipelines.arrow_columns import plain as plain_values
from pipelines.convert import dated_findings, findings_table
from pipelines.games.rows import (
    BET_COLUMNS,
    NO_BETS,
    GameTable,
    bet_tables,
    box_micros,
    day,
    instant_tuples,
    plain_bets,
    round_dates,
    table_facts,
    taken,
)
from pipelines.neighbours import quarantined_bets
from schemas.games.casino_stud import LEDGER, REPLAYS
from schemas.outputs import FINDINGS

OUT_REPLAYS = "casino_stud_round_replays"
OUT_LEDGER = "casino_stud_jackpot_ledger"
EXTRA_OUTPUTS = (OUT_LEDGER,)

_ROUND_COLUMNS = ["round_id", "shoe_id", "round_no", "status", "betting_opened_at", "betting_closed_at",
                  "dealer_cards", "boxes", "box_cards", "box_actions", "box_hands", "dealer_hand", "jackpot_before",
                  "jackpot_after", "next_pool_before", "next_pool_after"]
_SCALAR_COLUMNS = ["round_id", "shoe_id", "status"]  # read as Python lists for every round
_DECK_COLUMNS = ["shoe_id", "cards", "opened_at", "decks", "cut_index"]  # a deck's shape is judged too
# a RecordedBet's columns but its round (placed_at as integer microseconds)
_ENGINE_BET_COLUMNS = ["bet_id", "account_id", "bet_type", "seat", "stake", "added_stake", "paid", "placed_at"]
_JACKPOT = "JACKPOT"
# findings on a jackpot bet that refund it: it is settled, but not on a hand, and feeds no pool
_REFUNDING = ("JACKPOT_WITHOUT_ANTE", "BET_ON_EMPTY_BOX", "BET_TYPE_NOT_OFFERED")


F = TypeVar("F", bound=Callable[..., Any])


def gc_paused(audit: F) -> F:
    """`audit` run with cyclic garbage collection paused (and left as it was after). A table's audit makes
    hundreds of thousands of short-lived objects with no cycles (the bets, their verdicts and lines, the
    output rows); reference counting frees them as before, but every collection on the way walks all
    those still alive (10-25% of an engine call)."""
    @wraps(audit)
    def paused(*args, **kwargs):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return audit(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()
    return paused  # type: ignore[return-value]


def micros(column) -> list[int | None]:
    """Instants as exact integer microseconds since the epoch, Python ints (None for a null)."""
    return us_column(column).to_pylist()


def instants(rounds: pa.Table, column: str) -> list[int | None]:
    """micros() of a timestamp column of `rounds`; all None where the files do not have it."""
    return micros(rounds[column]) if column in rounds.column_names else [None] * rounds.num_rows


def python_columns(table: pa.Table, columns: Sequence[str]) -> dict[str, list]:
    """`columns` of `table` as Python lists, one conversion a column (no row dicts, and no datetime objects
    for a column that is not asked for)."""
    return {c: table[c].to_pylist() for c in columns}


@dataclass(frozen=True)
class CasinoStudTable(GameTable):
    game = "casino_stud"
    rules: CasinoStudRules


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> CasinoStudTable:
    return CasinoStudTable(table_facts(row, limits), load_casino_stud_rules(row["ruleset"]))


WITHHELD_ROUNDS = True  # the pool chain sees the rounds taken out before the audit (pipelines.games.audit_group)


@gc_paused
def audit_tables(table: CasinoStudTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None,
                 withheld: pa.Table | None = None) -> dict[str, pa.Table]:
    """Audit one casino stud table-day: {casino_stud_round_replays, casino_stud_jackpot_ledger, settlements,
    findings, quarantine}. Every round's deck is among `shoes`, every bet's round among `rounds` (matched by
    `_shoe_id` too where the bets carry it); `neighbours`: the quarantined bets on these rounds
    (pipelines/neighbours.py); `withheld`: the rounds of these decks' table-day taken out before the audit (in
    quarantine): with the decks of no round, the pool chain's gaps. (`compact` is the baccarat adaptor's; these
    tables are plain.)"""
    read = _with_columns(rounds, _ROUND_COLUMNS)
    col = python_columns(read, _SCALAR_COLUMNS)  # a list a column: no dict a round
    round_ids, shoe_ids = col["round_id"], col["shoe_id"]
    closed = micros(rounds["betting_closed_at"])
    order = sorted(range(read.num_rows), key=lambda i: (closed[i] if closed[i] is not None else -1, round_ids[i],
                                                        shoe_ids[i]))
    plain = plain_bets(bets, [*BET_COLUMNS, "added_stake"])

    # the rounds in the engine's order, and where each bet's round is among them
    index_of: dict[tuple[str | None, str], int] = {}
    for k, i in enumerate(order):
        index_of[(shoe_ids[i], round_ids[i])] = k
        index_of.setdefault((None, round_ids[i]), k)  # a bet without _shoe_id: its round id alone
    mine = np.arange(bets.num_rows, dtype=np.int64)
    held = quarantined_bets(neighbours, {round_id: k for (shoe_id, round_id), k in index_of.items() if shoe_id})
    in_order = np.asarray(order, np.int64)  # (a day's rounds are mostly read in the engine's order: not copied)
    ordered = taken(read, in_order)
    bet_round = _bet_rounds(index_of, ordered["round_id"] if len(set(round_ids)) == len(order) else None, bets,
                            len(order))
    as_read = _as_read(taken(rounds, in_order), ordered, _with_columns(shoes, _DECK_COLUMNS))
    timed = plain.set_column(plain.schema.get_field_index("placed_at"), "placed_at", us_column(plain["placed_at"]))
    dealt = (dealt_rounds(table.rules, as_read), bet_columns(timed, bet_round))
    result = audit_table_rounds(table.rules, table.facts, _Records(as_read, _round_records),
                                _Records(timed.select(_ENGINE_BET_COLUMNS), partial(_bet_records, bet_round)), held,
                                _gaps(shoes, set(shoe_ids), withheld), dealt=dealt)

    dates = taken(round_dates(read), in_order)
    # each bet's round as its row in `rounds` (-1: not one of them)
    row_of = np.append(np.asarray(order, np.int64), -1)
    bet_rows = row_of[bet_round]
    replays = _replays_table(table, ordered, result, dates)
    found = result.found
    refunded = found["bet_id"].filter(pc.is_in(found["kind"], pa.array(_REFUNDING, pa.string())))
    settled = np.append(np.asarray(col["status"], object)[order] == "settled", False)
    owed = result.owed
    stakes = _jackpot_stakes(settled[bet_round], plain, bet_round, owed, refunded, len(order))
    return {
        OUT_REPLAYS: replays,
        OUT_LEDGER: _ledger_table(table, ordered, dates, result.ledger_rows, stakes),
        **bet_tables(table.table_id, plain, bets, rounds, mine, bet_rows,
                     owed, result.unsettled),
        "findings": _findings(found, round_ids, shoe_ids, order, dates.to_pylist(), shoes),
    }


def _bet_rounds(index_of: dict[tuple[str | None, str], int], distinct: pa.ChunkedArray | None, bets: pa.Table,
                none: int) -> np.ndarray:
    """Each bet's round in the engine's order (`none`: not one of them, which the engine leaves unsettled with the
    reason): its (_shoe_id, round_id) in `index_of`, else its round id alone; looked up once a distinct pair. Where
    the rounds' ids are `distinct` (theirs in the engine's order; a day's are), a pair is found only as its round
    id alone is: each bet's round id looked up among them by Arrow."""
    if distinct is not None:
        return np.where((k := codes_in(bets["round_id"], one_chunk(distinct))) >= 0, k, none)
    round_codes, round_ids = coded(bets["round_id"])
    shoe_codes, shoe_ids = coded(bets["_shoe_id"]) if "_shoe_id" in bets.column_names else (
        np.zeros(bets.num_rows, np.int64), [None])
    pairs, at = np.unique(shoe_codes * len(round_ids) + round_codes, return_inverse=True)
    found = [index_of.get(key, index_of.get((None, key[1]), none)) for key in (
        (shoe_ids[p // len(round_ids)], round_ids[p % len(round_ids)]) for p in pairs.tolist())]
    return np.asarray(found, np.int64)[at.reshape(-1)] if len(found) else NO_BETS


class _Records(Sequence):
    """A table's rows as the engine's records (`make(table of the rows, their indexes)`): made a batch at a time for
    the rows the readable rules read (`fetch`), one at a time for any other asked for."""

    def __init__(self, table: pa.Table, make: Callable[[pa.Table, list[int]], list]):
        self.table, self.make = table, make
        self.made: dict[int, object] = {}

    def __len__(self) -> int:
        return self.table.num_rows

    def __getitem__(self, i):  # type: ignore[override]
        if i not in self.made:
            if not 0 <= i < len(self):
                raise IndexError(i)
            self.fetch([i])
        return self.made[i]

    def fetch(self, rows: list[int]) -> None:
        """Make the records of `rows`."""
        rows = [i for i in rows if i not in self.made]
        if rows:
            self.made.update(zip(rows, self.make(self.table.take(pa.array(rows, pa.int64())), rows), strict=True))


def _bet_records(round_index: np.ndarray, bets: pa.Table, rows: list[int]) -> list[RecordedBet]:
    """The engine's records of `bets` (_ENGINE_BET_COLUMNS, placed_at in microseconds; `rows` their indexes,
    `round_index` every bet's round in the engine's order)."""
    bet_id, *rest = python_columns(bets, _ENGINE_BET_COLUMNS).values()
    return list(map(RecordedBet, bet_id, round_index[rows].tolist(), *rest))


def _as_read(rounds: pa.Table, read: pa.Table, decks: pa.Table) -> pa.Table:
    """The rounds (in the engine's order: `rounds` as given, `read` their columns read) with their decks' columns
    (a round's deck: the last shoes row of its shoe_id among `decks`) and their instants as microseconds:
    dealt.ROUND_TYPES' columns (a round with no deck: decks 1, no cards)."""
    ids = plain_values(decks["shoe_id"]).cast(pa.string())
    last = pc.index_in(plain_values(read["shoe_id"]).cast(pa.string()), ids[::-1])
    deck_at = pc.subtract(pa.scalar(len(ids) - 1, pa.int64()), pc.cast(last, pa.int64()))
    rows = None if deck_at.null_count else deck_at.to_numpy()

    def of_decks(column: pa.ChunkedArray) -> pa.ChunkedArray:  # (a day's decks are mostly its rounds' in order)
        return column.take(deck_at) if rows is None else taken(column, rows)

    return pa.table({
        **{c: read[c] for c in ("round_id", "shoe_id", "round_no", "status", "boxes", "box_cards", "box_actions",
                                "dealer_cards", "box_hands", "dealer_hand", "jackpot_before", "next_pool_before",
                                "jackpot_after", "next_pool_after")},
        "betting_closed_at": pa.array(micros(rounds["betting_closed_at"]), pa.int64()),
        "deck": of_decks(decks["cards"]), "cut_index": of_decks(decks["cut_index"]),
        "decks": pc.if_else(pc.is_valid(deck_at), pc.cast(of_decks(decks["decks"]), pa.int64()), 1),
        "box_action_times": box_micros(rounds, "box_action_times"),
        "dealer_revealed_at": pa.array(instants(rounds, "dealer_revealed_at"), pa.int64())})


def _gaps(shoes: pa.Table, dealt: set[str], withheld: pa.Table | None) -> list[ChainGap]:
    """The pool chain's gaps: the rounds `withheld` (taken out before the audit), and the decks among `shoes` with
    no round among the group's (`dealt`: their decks; a round quarantined as it was read)."""
    opened = micros(shoes["opened_at"])
    gaps = [ChainGap(shoe_id, at) for shoe_id, at in zip(shoes["shoe_id"].to_pylist(), opened, strict=True)
            if shoe_id not in dealt and at is not None]
    if withheld is not None and withheld.num_rows:
        closed = micros(withheld["betting_closed_at"])
        gaps += [ChainGap(shoe_id, at, round_id) for round_id, shoe_id, at in zip(
            plain_values(withheld["round_id"]).to_pylist(), plain_values(withheld["shoe_id"]).to_pylist(), closed,
            strict=True) if at is not None]
    return gaps


def _with_columns(rounds: pa.Table, columns: list[str]) -> pa.Table:
    """The round columns read; a stud column the files do not have is all null (the audit judges it)."""
    return pa.table({c: rounds[c] if c in rounds.column_names else pa.nulls(rounds.num_rows) for c in columns})


def _round_records(rounds: pa.Table, rows: list[int]) -> list[RecordedRound]:
    """The engine's records of `rounds` (_as_read's columns)."""
    col = python_columns(rounds, rounds.column_names)
    (round_id, round_no, status, shoe_id, boxes, box_cards, box_actions, dealer_cards, box_hands, dealer_hand,
     jackpot_before, jackpot_after, next_pool_before, next_pool_after, closed, deck, decks, cut_index, times,
     revealed) = (col[c] for c in (
        "round_id", "round_no", "status", "shoe_id", "boxes", "box_cards", "box_actions", "dealer_cards",
        "box_hands", "dealer_hand", "jackpot_before", "jackpot_after", "next_pool_before", "next_pool_after",
        "betting_closed_at", "deck", "decks", "cut_index", "box_action_times", "dealer_revealed_at"))
    return [RecordedRound(
        round_id[i], round_no[i], status[i], closed[i] or 0, shoe_id[i], tuple(deck[i] or ()), tuple(boxes[i] or ()),
        tuple(tuple(c or ()) for c in box_cards[i] or ()), tuple(a or "" for a in box_actions[i] or ()),
        tuple(dealer_cards[i] or ()), tuple(box_hands[i] or ()), dealer_hand[i], jackpot_before[i],
        jackpot_after[i], next_pool_before[i], next_pool_after[i], decks[i], cut_index[i], instant_tuples(times[i]),
        revealed[i])
        for i in range(len(round_id))]


def _jackpot_stakes(settled: np.ndarray, bets: pa.Table, bet_round: np.ndarray, owed: pa.Array,
                    refunded: pa.ChunkedArray, n: int) -> np.ndarray:
    """Each of the n rounds' (the engine's order) stakes of its jackpot bets settled on a hand (`settled`: each bet's
    round is a settled one; `owed` not null, the bet not refunded): what the ledger's contributions and prizes come
    from."""
    jackpot = np.asarray(pc.fill_null(pc.equal(bets["bet_type"], _JACKPOT), False), np.bool_) & settled & np.asarray(
        owed.is_valid(), np.bool_)
    if len(refunded):
        jackpot &= ~np.asarray(pc.is_in(bets["bet_id"], refunded.combine_chunks()), np.bool_)
    rows = np.flatnonzero(jackpot)
    stakes = np.zeros(n + 1, np.int64)
    np.add.at(stakes, bet_round[rows], np.asarray(bets["stake"].take(pa.array(rows, pa.int64())), np.int64))
    return stakes[:n]


def _findings(found: pa.Table, round_ids: list[str], shoe_ids: list[str], order: list[int], dates: list,
              shoes: pa.Table) -> pa.Table:
    """The findings (FINDING_COLUMNS) dated by their round's business date; a deck's own (SHOE_COMPOSITION, no
    round id) by its round's too (a deck is one round's: a deck opened before midnight for a round whose betting
    opened after it is of the next day, as its round is), by the deck's opening only where it has no round; those
    of a date together, the dates in the order their first finding comes."""
    if not found.num_rows:
        return FINDINGS.empty_table()
    round_dates = {round_ids[i]: d for i, d in zip(order, dates, strict=True)}
    deck_dates = {shoe_ids[i]: d for i, d in zip(order, dates, strict=True)}
    opened = None
    dated = []
    for round_id, shoe_id in zip(found["round_id"].to_pylist(), found["shoe_id"].to_pylist(), strict=True):
        if round_id is None:
            if shoe_id not in deck_dates and opened is None:  # (the decks' openings: read where asked)
                decks = _with_columns(shoes, ["shoe_id", "opened_at"]).to_pylist()
                opened = {deck["shoe_id"]: day(deck["opened_at"]) for deck in decks}
            dated.append(deck_dates[shoe_id] if shoe_id in deck_dates else opened.get(shoe_id))
        else:
            dated.append(round_dates.get(round_id))
    first = {d: k for k, d in reversed(list(enumerate(dated)))}
    together = np.argsort([first[d] for d in dated], kind="stable")
    return dated_findings(found.take(pa.array(together)), [dated[k] for k in together.tolist()])


# a replay's recorded columns: the round's own, as read (in the engine's order)
_RECORDED = {"shoe_id": "shoe_id", "round_id": "round_id", "round_no": "round_no", "status": "status",
             "boxes": "boxes", "box_actions": "box_actions", "recorded_box_cards": "box_cards",
             "recorded_dealer_cards": "dealer_cards", "recorded_box_hands": "box_hands",
             "recorded_dealer_hand": "dealer_hand", "recorded_jackpot_before": "jackpot_before",
             "recorded_jackpot_after": "jackpot_after", "recorded_next_pool_before": "next_pool_before",
             "recorded_next_pool_after": "next_pool_after"}


def _replays_table(table: CasinoStudTable, rounds: pa.Table, result: StudAudit, dates: pa.Array) -> pa.Table:
    """The round replays column by column: the recorded columns are the rounds' own (`rounds` in the engine's
    order), the rest the engine's (its columns and explanations, a row a round)."""
    n = rounds.num_rows
    engine = {"business_date": dates, "table_id": pa.array([table.table_id] * n, pa.string()),
              "explanation": result.explanations,
              **{name: result.columns[name] for name in result.columns.column_names}}
    schema = REPLAYS.schema
    return pa.Table.from_arrays([(rounds[_RECORDED[f.name]] if f.name in _RECORDED else engine[f.name]).cast(f.type)
                                 for f in schema], schema=schema)


def _ledger_table(table: CasinoStudTable, rounds: pa.Table, dates: pa.Array, rows: pa.Table,
                  stakes: np.ndarray) -> pa.Table:
    """The jackpot ledger column by column: a row a ledger row (plain.LEDGER_ROWS), its round's own columns and
    jackpot `stakes` taken from `rounds` (in the engine's order, as `dates`)."""
    at = rows["round_index"]
    n = rows.num_rows
    columns = {
        "business_date": dates.take(at), "table_id": pa.repeat(pa.scalar(table.table_id, pa.string()), n),
        "shoe_id": rounds["shoe_id"].take(at), "round_id": rounds["round_id"].take(at),
        "betting_closed_at": rounds["betting_closed_at"].take(at),
        "currency": pa.repeat(pa.scalar(table.currency, pa.string()), n),
        "stakes": pa.array(stakes[at.to_numpy()]),
        **{name: rows[field] for name, field in _LEDGER_FIELDS.items()}}
    schema = LEDGER.schema
    return pa.Table.from_arrays([columns[f.name].cast(f.type) for f in schema], schema=schema)


# a ledger column -> its LedgerRow field
_LEDGER_FIELDS = {
    "jackpot_before": "jackpot_before", "next_pool_before": "next_pool_before", "jackpot_bets": "jackpot_bets",
    "to_jackpot": "to_jackpot", "to_next_pool": "to_next_pool", "to_house": "to_house",
    "prizes_from_jackpot": "prizes_from_jackpot", "prizes_from_next_pool": "prizes_from_next_pool",
    "prizes_by_house": "prizes_from_house", "jackpot_reset": "reset",
    "expected_jackpot_after": "jackpot_after_expected", "recorded_jackpot_after": "jackpot_after",
    "expected_next_pool_after": "next_pool_after_expected", "recorded_next_pool_after": "next_pool_after"}


# --- the pool chain across the groups of decks (engine/games/casino_stud/chain.py) --------------------------
# The pipeline's step after the groups (pipelines/transforms.py, AcrossGroups) gives `group_ends` each batch of
# rounds and a way to give them their deck's group and table, keeps what it returns (GROUP_ENDS), and gives the
# night's to `across_groups`.
GROUP_ENDS = pa.schema([
    ("_group", pa.string()), ("_table", pa.string()), ("round_id", pa.string()), ("shoe_id", pa.string()),
    ("betting_closed_at", pa.int64()), ("jackpot_before", pa.int64()), ("next_pool_before", pa.int64()),
    ("jackpot_after", pa.int64()), ("next_pool_after", pa.int64()), ("business_date", pa.date32()),
    ("gap", pa.bool_())])
_POOLS = ["jackpot_before", "next_pool_before", "jackpot_after", "next_pool_after"]


def group_ends(rounds: pa.Table, tables: pa.Table, with_groups) -> pa.Table:
    """The first and last round of each group at each casino stud table among `rounds` (GROUP_ENDS);
    `with_groups(rounds)` gives rounds their deck's `_group` and `_table` (leaving out those of no group)."""
    stud = pa.array(_stud_tables(tables), pa.string())
    if not len(stud):
        return GROUP_ENDS.empty_table()
    # a stud round: at a stud table, or with a pool balance (a round whose table_id is not its deck's)
    maybe = pc.is_in(rounds["table_id"], stud)
    for name in _POOLS:
        if name in rounds.column_names:
            maybe = pc.or_(maybe, pc.is_valid(rounds[name]))
    rounds = with_groups(rounds.filter(pc.fill_null(maybe, False)))
    rounds = rounds.filter(pc.fill_null(pc.is_in(rounds["_table"], stud), False))
    if not rounds.num_rows:
        return GROUP_ENDS.empty_table()
    ends = chain_ends(_chain_ends(rounds))
    return pa.Table.from_pylist([{"_group": e.group, "_table": e.table_id, **{
        f.name: getattr(e, f.name) for f in GROUP_ENDS if not f.name.startswith("_")}} for e in ends], GROUP_ENDS)


def gap_ends(shoes: pa.Table, tables: pa.Table, dealt: pa.ChunkedArray, with_groups) -> pa.Table:
    """The decks of casino stud tables among `shoes` with no round among the night's (`dealt`: their decks):
    the pool chain's gaps (GROUP_ENDS, `gap` set, the deck's opening as betting_closed_at)."""
    stud = pa.array(_stud_tables(tables), pa.string())
    decks = shoes.filter(pc.fill_null(pc.and_(pc.is_in(plain_values(shoes["table_id"]), stud),
                                              pc.invert(pc.is_in(shoes["shoe_id"], plain_values(dealt)))), False))
    if not decks.num_rows:
        return GROUP_ENDS.empty_table()
    decks = with_groups(decks.select(["shoe_id", "table_id", "opened_at"]))
    decks = decks.filter(pc.fill_null(pc.is_in(decks["_table"], stud), False))
    n = decks.num_rows
    return pa.table({
        "_group": decks["_group"], "_table": decks["_table"], "round_id": pa.repeat(pa.scalar(""), n),
        "shoe_id": plain_values(decks["shoe_id"]).cast(pa.string()),
        "betting_closed_at": pa.array(micros(decks["opened_at"]), pa.int64()),
        **{name: pa.nulls(n, pa.int64()) for name in _POOLS}, "business_date": pa.nulls(n, pa.date32()),
        "gap": pa.repeat(pa.scalar(True), n)}, schema=GROUP_ENDS)


def _chain_ends(rounds: pa.Table) -> list[ChainEnd]:
    col = python_columns(_with_columns(rounds, ["_group", "_table", "round_id", "shoe_id", *_POOLS]),
                         ["_group", "_table", "round_id", "shoe_id", *_POOLS])
    closed = (micros(rounds["betting_closed_at"]) if "betting_closed_at" in rounds.column_names
              else [None] * rounds.num_rows)
    dates = (round_dates(rounds).to_pylist() if "betting_opened_at" in rounds.column_names
             else [None] * rounds.num_rows)
    # a round at another table than its deck's is not audited (pipelines/cross_row.py): a gap
    elsewhere = pc.fill_null(pc.not_equal(plain_values(rounds["table_id"]).cast(pa.string()), rounds["_table"]),
                             True).to_pylist()
    return [ChainEnd(*(col[c][i] for c in ("_group", "_table", "round_id", "shoe_id")), closed[i],
                     *(col[c][i] for c in _POOLS), dates[i], elsewhere[i]) for i in range(rounds.num_rows)]


def across_groups(ends: pa.Table, tables: pa.Table) -> pa.Table:
    """JACKPOT_BALANCE_MISMATCH findings where a group's first round did not open on the recorded
    after-balances of the table's previous round in another group (the night's GROUP_ENDS)."""
    currency = {r["table_id"]: r["currency"] for r in tables.select(["table_id", "currency"]).to_pylist()}
    found = breaks_across_groups([ChainEnd(e.pop("_group"), e.pop("_table"), **e) for e in ends.to_pylist()],
                                 currency)
    if not found:
        return FINDINGS.empty_table()
    dates = {(e["round_id"]): e["business_date"] for e in ends.select(["round_id", "business_date"]).to_pylist()}
    return findings_table(found, dates, None)


def _stud_tables(tables: pa.Table) -> list[str]:
    """The tables audited as casino stud: those whose ruleset is one of the game's."""
    mine = set(game("casino_stud").ruleset_ids())
    return [r["table_id"] for r in tables.select(["table_id", "ruleset"]).to_pylist() if r["ruleset"] in mine]

# its rounds in the warehouse's all_rounds view (audits/views/05_all_rounds.sql: its columns, in their order)
ALL_ROUNDS = """\
SELECT
    'casino_stud' AS game, r.business_date, r.table_id, r.shoe_id, r.round_id, r.round_no, r.status,
    CASE WHEN r.expected_dealer_cards IS NULL THEN NULL ELSE 0 END AS shoe_position, 0 AS rounds_before,
    NULL AS cut_card_round, NULL AS after_cut,
    coalesce(b.recorded || '; ', '') || 'dealer: ' || coalesce(array_to_string(r.recorded_dealer_cards, ' '), '-')
        || ' ' || coalesce(r.recorded_dealer_hand, '-')
        || '; jackpot ' || coalesce(CAST(r.recorded_jackpot_before AS VARCHAR), '-') || ' -> '
        || coalesce(CAST(r.recorded_jackpot_after AS VARCHAR), '-')
        || '; next pool ' || coalesce(CAST(r.recorded_next_pool_before AS VARCHAR), '-') || ' -> '
        || coalesce(CAST(r.recorded_next_pool_after AS VARCHAR), '-') AS recorded_round,
    CASE WHEN r.expected_box_cards IS NULL THEN '-' ELSE coalesce(b.expected || '; ', '') || 'dealer: '
        || coalesce(array_to_string(r.expected_dealer_cards, ' '), '-') || ' ' || coalesce(r.dealer_rank, '-')
        || CASE WHEN r.dealer_qualifies THEN ' (qualifies)' WHEN NOT r.dealer_qualifies THEN ' (does not qualify)'
                ELSE '' END
        || '; jackpot ' || coalesce(CAST(r.expected_jackpot_before AS VARCHAR), '-') || ' -> '
        || coalesce(CAST(r.expected_jackpot_after AS VARCHAR), '-')
        || '; next pool ' || coalesce(CAST(r.expected_next_pool_before AS VARCHAR), '-') || ' -> '
        || coalesce(CAST(r.expected_next_pool_after AS VARCHAR), '-') END AS expected_round,
    array_to_string(r.explanation, '; ') AS decisions,
    coalesce(array_to_string(r.finding_kinds, ','), '') AS finding_kinds,
    r.run_id
FROM casino_stud_round_replays AS r, LATERAL (
    SELECT
        string_agg('box ' || CAST(box AS VARCHAR) || ': ' || coalesce(array_to_string(rec, ' '), '-') || ' '
                   || coalesce(hand, '-') || ' ' || coalesce(nullif(action, ''), '-'), '; ' ORDER BY i) AS recorded,
        string_agg('box ' || CAST(box AS VARCHAR) || ': ' || coalesce(array_to_string(exp, ' '), '-') || ' '
                   || coalesce(rank, '-'), '; ' ORDER BY i) AS expected
    FROM (SELECT unnest(r.boxes) AS box, unnest(r.recorded_box_cards) AS rec, unnest(r.expected_box_cards) AS exp,
                 unnest(r.recorded_box_hands) AS hand, unnest(r.box_ranks) AS rank,
                 unnest(r.box_actions) AS action, generate_subscripts(r.boxes, 1) AS i)
) AS b"""
