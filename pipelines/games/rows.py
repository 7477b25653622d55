"""What the games' adaptors share: a group of shoes' bets as columns and each shoe's bets, instants as exact
microseconds and business days, and the engine's results back as the shared output tables (settlements, findings,
quarantine). Names no game's concepts; no Beam here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import TableFacts
from pipelines.arrow_columns import coded, plain, plain_table, utc_days
from pipelines.convert import quarantine_table
from schemas.outputs import QUARANTINE, SETTLEMENTS

NO_BETS = np.zeros(0, np.int64)

# the bet columns every such adaptor reads (a game adds its own)
BET_COLUMNS = ["bet_id", "round_id", "account_id", "placed_at", "bet_type", "seat", "stake", "paid", "currency",
               "_source_file", "_source_row"]

@dataclass(frozen=True)
class GameTable:
    """What an adaptor audits one table with: its facts and its parsed ruleset (a game adds its own)."""

    facts: TableFacts
    rules: Any

    @property
    def table_id(self) -> str:
        return self.facts.table_id

    @property
    def ruleset_id(self) -> str:
        return self.rules.id

    @property
    def currency(self) -> str:
        return self.facts.currency

def table_facts(row: dict, limits: dict[str, tuple[int, int]]) -> TableFacts:
    return TableFacts(row["table_id"], row["currency"], row["table_max"], limits)

_INSTANTS_PER_BOX = pa.list_(pa.list_(pa.timestamp("us", tz="UTC")))


def instant_tuples(boxes: list | None) -> tuple[tuple[int | None, ...] | None, ...] | None:
    """A round's instants per box as read (box_micros' lists) as tuples."""
    return None if boxes is None else tuple(None if t is None else tuple(t) for t in boxes)


def box_micros(rounds: pa.Table, column: str) -> pa.ChunkedArray | pa.Array:
    """A list<list<timestamp>> column of `rounds` as list<list<int64>> exact integer microseconds; all null where
    the files do not have the column."""
    if column not in rounds.column_names:
        return pa.nulls(rounds.num_rows, pa.list_(pa.list_(pa.int64())))
    return pc.cast(pc.cast(rounds[column], _INSTANTS_PER_BOX), pa.list_(pa.list_(pa.int64())))


def day(ts):
    return ts.date() if ts is not None else None

def plain_bets(bets: pa.Table, columns: Sequence[str], decoded: bool = True) -> pa.Table:
    """`columns` of the bets (plus mode and _shoe_id) as plain arrays (not `decoded`: as read, dictionary-encoded
    or not); a column the files do not have is all null."""
    return pa.table({c: (plain(bets[c]) if decoded else bets[c]) if c in bets.column_names
                     else pa.nulls(bets.num_rows) for c in [*columns, "mode", "_shoe_id"]})

def bets_by_shoe(rounds: pa.Table, round_ids: pa.Array | pa.ChunkedArray,
                 shoe_ids: pa.Array | pa.ChunkedArray) -> dict[str | None, np.ndarray]:
    """shoe_id -> the indexes of its bets, ascending (`round_ids` and `shoe_ids`: the bets' round_id, plain or
    dictionary-encoded, and _shoe_id columns). A round id repeated across shoes: the bet's _shoe_id says which
    (else the smallest shoe id of the round id). Column by column: no Python per bet; where every bet carries its
    shoe (the pipeline's placed bets, dictionary-encoded), no lookup of its round at all."""
    n = len(round_ids)
    if n == 0:
        return {}
    codes, names = coded(shoe_ids)
    if None in names or "" in names:  # (a bet's own _shoe_id counts unless null or empty: `shoe_id or ...`)
        smallest = pa.table({"round_id": rounds["round_id"], "shoe_id": rounds["shoe_id"]}).group_by(
            "round_id").aggregate([("shoe_id", "min")])
        of_round = smallest["shoe_id_min"].take(pc.index_in(plain(round_ids), smallest["round_id"]))
        shoe_ids = pc.cast(shoe_ids, pa.string())
        codes, names = coded(pc.if_else(pc.fill_null(pc.not_equal(shoe_ids, ""), False), shoe_ids, of_round))
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return {names[codes[rows[0]]]: rows for rows in np.split(order, bounds)}


def round_dates(rounds: pa.Table) -> pa.Array:
    """Each round's business date: the UTC day betting opened (null where it is not recorded)."""
    return utc_days(rounds["betting_opened_at"]).combine_chunks()

Taken = TypeVar("Taken", pa.Array, pa.ChunkedArray, pa.Table)

def taken(values: Taken, rows: np.ndarray) -> Taken:
    """values.take(rows), or `values` itself when `rows` are all its rows in order (a table-day dealt in one
    shoe or session, every bet settled: no copy of its columns)."""
    if len(rows) == len(values) and (not len(rows) or rows[0] == 0 and (np.diff(rows) == 1).all()):
        return values
    return values.take(pa.array(rows, pa.int64()))

# the bets' columns a settlement carries (only these taken and decoded: not a game's selection, seat, _shoe_id...)
_SETTLED_BET_COLUMNS = ("round_id", "bet_id", "account_id", "placed_at", "bet_type", "mode", "currency", "stake",
                        "paid", "_source_file", "_source_row", "added_stake")

def settlements_table(table_id: str, bets: pa.Table, take: np.ndarray, expected: pa.Array, rounds: pa.Table,
                      round_rows: np.ndarray, dates: pa.Array) -> pa.Table:
    """The settled bets `take` (indexes into `bets`), each with its expected credit and its round's row in
    `rounds` (round_no, status, shoe_id; `dates` the rounds' business dates), column by column. A game whose
    adaptor reads bets.added_stake (blackjack, casino stud) has it in its settlements; another's is null. A
    dictionary-encoded column of `bets` is decoded after the take (only the settled bets' values copied)."""
    if not len(take):
        return SETTLEMENTS.empty_table()
    b = plain_table(taken(bets.select([c for c in _SETTLED_BET_COLUMNS if c in bets.column_names]), take))
    r = pa.array(round_rows, pa.int64())
    added = (b["added_stake"].cast(pa.int64()) if "added_stake" in b.column_names
             else pa.nulls(len(take), pa.int64()))
    return pa.Table.from_arrays([
        dates.take(r), pa.repeat(pa.scalar(table_id, pa.string()), len(take)), plain(rounds["shoe_id"]).take(r),
        b["round_id"], rounds["round_no"].take(r).cast(pa.int32()), rounds["status"].take(r).cast(pa.string()),
        b["bet_id"], b["account_id"], b["placed_at"], b["bet_type"], b["mode"].cast(pa.string()), b["currency"],
        b["stake"], b["paid"], expected, pc.subtract(b["paid"], expected), b["_source_file"], b["_source_row"],
        added,
    ], schema=SETTLEMENTS)

def quarantine_of(bets: pa.Table, take: np.ndarray, reasons: list[str], dates: pa.Array) -> pa.Table:
    """The bets `take` (indexes into `bets`) that cannot be settled, each with its reason and business date."""
    if not len(take):
        return QUARANTINE.empty_table()
    # (dictionary-encoded columns as they are: their records' texts are made a distinct value at a time)
    rows = bets.drop_columns([c for c in ("_shoe_id",) if c in bets.column_names]).take(pa.array(take, pa.int64()))
    return quarantine_table(rows, "bets", pa.array(reasons, pa.string()), dates, "bet_id")

def bet_tables(table_id: str, plain: pa.Table, bets: pa.Table, rounds: pa.Table, take: np.ndarray,
               round_rows: np.ndarray, expected: pa.Array, unsettled: list[str | None]) -> dict[str, pa.Table]:
    """{settlements, quarantine} of the engine's bets `take` (indexes into `plain`, the bets as plain_bets gave
    them, and `bets`, as read), each with its round's row in `rounds` (-1: none) and the credit the engine
    expects (null: unsettled, for the reason in `unsettled`)."""
    settled = expected.is_valid().to_numpy(zero_copy_only=False)
    dates = round_dates(rounds)
    left = np.flatnonzero(~settled)
    on = round_rows[left]
    return {
        "settlements": settlements_table(table_id, plain, take[settled], expected.filter(pa.array(settled)),
                                         rounds, round_rows[settled], dates),
        "quarantine": quarantine_of(bets, take[left], [unsettled[i] for i in left.tolist()],
                                    dates.take(pa.array(on, pa.int64(), mask=on < 0))),  # (-1: no round, a null)
    }

def dealing_place(round_no: int | None, opened_at, audited: Sequence[tuple[int, Any]]) -> int:
    """Where a round put in quarantine as read is dealt among its shoe's audited rounds (`audited`: their round_no
    and betting_opened_at): the round_no it is sorted at, before an audited round of the same number. Its own
    round_no where that is one (1 or more). Else its betting_opened_at places it: before the first audited round
    opened after it (after the last: its number + 1), where the audited rounds opened one after the other in
    their round order and none at its own instant. Else it has no known place: below 1 (its own round_no, or 0
    for a null), so it is dealt first, and its game reads it as a round whose cards cannot be placed (the shoe
    cannot be checked after it: SHOE_UNVERIFIABLE_AFTER)."""
    if round_no is not None and round_no >= 1:
        return round_no
    unplaced = 0 if round_no is None else round_no
    ordered = sorted(audited, key=lambda a: a[0])
    times = [t for _, t in ordered]
    if (opened_at is None or None in times or opened_at in times
            or any(a >= b for a, b in zip(times, times[1:], strict=False))):
        return unplaced
    after = [no for no, t in ordered if t > opened_at]
    return after[0] if after else (ordered[-1][0] + 1 if ordered else 1)
