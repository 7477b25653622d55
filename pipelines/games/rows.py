"""What the adaptors of games whose engine takes a round at a time (blackjack, roulette, sic bo) share:
the bets of a group of shoes as plain rows, each shoe's bets, and the engine's results back as the
shared output tables (settlements, findings, quarantine). Names no game's concepts; no Beam here.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import TableFacts
from engine.findings import Finding
from pipelines.convert import findings_table, plain, plain_table, quarantine_table
from schemas.outputs import FINDINGS, QUARANTINE, SETTLEMENTS

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


def micros(column) -> list[int]:
    """Instants as exact integer microseconds since the epoch (a float timestamp can be off by 1 us)."""
    return pc.cast(pc.cast(column, pa.timestamp("us", tz="UTC")), pa.int64()).to_pylist()


def day(ts):
    return ts.date() if ts is not None else None


def plain_bets(bets: pa.Table, columns: Sequence[str]) -> pa.Table:
    """`columns` of the bets (plus mode and _shoe_id) as plain arrays; a column the files do not have
    is all null."""
    return pa.table({c: plain(bets[c]) if c in bets.column_names else pa.nulls(bets.num_rows)
                     for c in [*columns, "mode", "_shoe_id"]})


def python_columns(table: pa.Table, columns: Sequence[str]) -> dict[str, list]:
    """`columns` of `table` as Python lists, one conversion a column (no row dicts, and no datetime objects
    for a column that is not asked for)."""
    return {c: table[c].to_pylist() for c in columns}


def bets_by_shoe(round_rows: list[dict], round_ids: Sequence[str], shoe_ids: Sequence[str | None]
                 ) -> dict[str | None, list[int]]:
    """shoe_id -> the indexes of its bets (`round_ids` and `shoe_ids`: the bets' round_id and _shoe_id
    columns). A round id repeated across shoes: the bet's _shoe_id says which (else the smallest shoe id
    of the round id)."""
    shoes_of_round: dict[str, set[str]] = {}
    for r in round_rows:
        shoes_of_round.setdefault(r["round_id"], set()).add(r["shoe_id"])
    smallest = {rid: min(shoes - {None}, default=None) for rid, shoes in shoes_of_round.items()}
    by_shoe: dict[str | None, list[int]] = {}
    for b, (round_id, shoe_id) in enumerate(zip(round_ids, shoe_ids, strict=True)):
        by_shoe.setdefault(shoe_id or smallest.get(round_id), []).append(b)
    return by_shoe


def rounds_by_shoe(round_rows: list[dict]) -> dict[str, list[int]]:
    """shoe_id -> its rounds' indexes in round order (round_no, then round_id)."""
    by_shoe: dict[str, list[int]] = {}
    for i, r in enumerate(round_rows):
        by_shoe.setdefault(r["shoe_id"], []).append(i)
    return {s: sorted(rows, key=lambda i: (round_rows[i]["round_no"], round_rows[i]["round_id"]))
            for s, rows in by_shoe.items()}


def findings_of(found: list[Finding], round_dates: dict, shoe_date) -> pa.Table:
    return findings_table(found, round_dates, shoe_date) if found else FINDINGS.empty_table()


def settlements_table(table_id: str, bets: pa.Table, settled: list) -> pa.Table:
    """`settled`: (bet index into `bets`, expected credit, its round's row, shoe_id, business date). A game
    whose adaptor reads bets.added_stake (blackjack, casino stud) has it in its settlements; another's is null."""
    if not settled:
        return SETTLEMENTS.empty_table()
    take = pa.array([b for b, *_ in settled], pa.int64())
    expected = pa.array([credit for _, credit, *_ in settled], pa.int64())
    b = bets.take(take)
    added = (b["added_stake"].cast(pa.int64()) if "added_stake" in b.column_names
             else pa.nulls(len(settled), pa.int64()))
    return pa.Table.from_arrays([
        pa.array([d for *_, d in settled], pa.date32()),
        pa.array([table_id] * len(settled), pa.string()),
        pa.array([shoe for *_, shoe, _ in settled], pa.string()),
        b["round_id"], pa.array([r["round_no"] for _, _, r, *_ in settled], pa.int32()),
        pa.array([r["status"] for _, _, r, *_ in settled], pa.string()),
        b["bet_id"], b["account_id"], b["placed_at"], b["bet_type"], b["mode"].cast(pa.string()), b["currency"],
        b["stake"], b["paid"], expected, pc.subtract(b["paid"], expected), b["_source_file"], b["_source_row"],
        added,
    ], schema=SETTLEMENTS)


def quarantine_of(bets: pa.Table, unsettled: list) -> pa.Table:
    """`unsettled`: (bet index into `bets`, the reason it cannot be settled, business date)."""
    if not unsettled:
        return QUARANTINE.empty_table()
    rows = plain_table(bets.take(pa.array([b for b, _, _ in unsettled], pa.int64())))
    rows = rows.drop_columns([c for c in ("_shoe_id",) if c in rows.column_names])
    return quarantine_table(rows, "bets", pa.array([why for _, why, _ in unsettled], pa.string()),
                            pa.array([d for *_, d in unsettled], pa.date32()), "bet_id")


@dataclass
class Gathered:
    """The engine's results of a table's shoes (or sessions), gathered shoe by shoe into output rows."""

    replays: list[dict] = field(default_factory=list)
    settled: list = field(default_factory=list)
    unsettled: list = field(default_factory=list)
    findings: list[pa.Table] = field(default_factory=list)

    def shoe(self, shoe: dict, order: list[int], round_rows: list[dict], mine: list[int], engine_bets: Sequence,
             result, replay_row: Callable[[dict, Any, Any], dict]) -> None:
        """One shoe's audit: `order` its rounds (indexes into round_rows) in the engine's order, `mine` its
        bets' indexes beside `engine_bets` (each with round_index), `result` the engine's (rounds,
        expected, unsettled, findings); replay_row(round row, round report, business date) -> replay row."""
        dates = [day(round_rows[i]["betting_opened_at"]) for i in order]
        self.replays += [replay_row(round_rows[order[rep.round_index]], rep, dates[rep.round_index])
                         for rep in result.rounds]
        for b, bet, credit, why in zip(mine, engine_bets, result.expected, result.unsettled, strict=True):
            if credit is None:
                self.unsettled.append((b, why, dates[bet.round_index]))
            else:
                self.settled.append((b, credit, round_rows[order[bet.round_index]], shoe["shoe_id"],
                                     dates[bet.round_index]))
        round_dates = {round_rows[i]["round_id"]: d for i, d in zip(order, dates, strict=True)}
        self.findings.append(findings_of(result.findings, round_dates, day(shoe["opened_at"])))

    def tables(self, table_id: str, out_replays: str, replay_schema: pa.Schema, plain: pa.Table,
               bets: pa.Table) -> dict[str, pa.Table]:
        """{the game's round replays, settlements, findings, quarantine}; `plain` the bets as plain_bets
        gave them, `bets` as read."""
        return {
            out_replays: pa.Table.from_pylist(self.replays, replay_schema),
            "settlements": settlements_table(table_id, plain, self.settled),
            "findings": pa.concat_tables(self.findings) if self.findings else FINDINGS.empty_table(),
            "quarantine": quarantine_of(bets, self.unsettled),
        }


def positions(order: list[int], round_rows: list[dict]) -> dict[str, int]:
    """round_id -> its index among a shoe's rounds in `order` (what a bet's round_index points at)."""
    return {round_rows[i]["round_id"]: k for k, i in enumerate(order)}
