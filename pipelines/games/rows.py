"""What the games' adaptors share: a group of shoes' bets as columns and each shoe's bets, instants as exact
microseconds and business days, and the engine's results back as the shared output tables (settlements, findings,
quarantine). Names no game's concepts; no Beam here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import TableFacts
from engine.betting_columns import finding_columns
from engine.findings import Finding
from pipelines.convert import dated_findings, plain, plain_table, quarantine_table
from schemas.outputs import FINDINGS, QUARANTINE, SETTLEMENTS

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

def shoe_day(round_days: Sequence, opened_at):
    """A shoe's business day: its first round's (`round_days`: its rounds' business days), its opening date
    where it has none (pipelines.convert.shoe_days, a shoe at a time): the date of its own findings."""
    return min((d for d in round_days if d is not None), default=day(opened_at))

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

def index_in(column: pa.Array | pa.ChunkedArray, values: pa.Array) -> pa.Array:
    """Each entry's index among the texts `values` (null: none), `column` plain or dictionary-encoded (then each
    distinct value of its dictionary looked up once, and taken by its indices)."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    values = plain(values)
    if pa.types.is_dictionary(column.type):
        return pc.index_in(pc.cast(column.dictionary, values.type), values).take(column.indices)
    return pc.index_in(pc.cast(column, values.type), values)

def coded(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, list]:
    """A column's values as codes into its distinct values (null one of them), in the order they first appear.
    A column read dictionary-encoded is coded from its indices (a hash of integers, not of every value's text):
    the codes of the indices as they first appear, then those of their values (a value the dictionary repeats,
    or a null, one code)."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not pa.types.is_dictionary(column.type):
        encoded = pc.dictionary_encode(column, null_encoding="encode")
        return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary.to_pylist()
    first = pc.dictionary_encode(column.indices, null_encoding="encode")
    codes, values = coded(column.dictionary.take(first.dictionary))
    return codes[first.indices.to_numpy(zero_copy_only=False)], values

def rounds_by_shoe(round_rows: list[dict]) -> dict[str, list[int]]:
    """shoe_id -> its rounds' indexes in round order (round_no, then round_id)."""
    by_shoe: dict[str, list[int]] = {}
    for i, r in enumerate(round_rows):
        by_shoe.setdefault(r["shoe_id"], []).append(i)
    return {s: sorted(rows, key=lambda i: (round_rows[i]["round_no"], round_rows[i]["round_id"]))
            for s, rows in by_shoe.items()}

def round_dates(rounds: pa.Table) -> pa.Array:
    """Each round's business date: the UTC day betting opened (null where it is not recorded)."""
    return pc.cast(pc.cast(rounds["betting_opened_at"], pa.timestamp("us")), pa.date32()).combine_chunks()

NO_DAY = np.iinfo(np.int32).max  # a day number for no date (above every real one: a shoe's least is its first)


def day_numbers(dates: pa.Array) -> np.ndarray:
    """Dates as int64 days since the epoch (date32's own numbers), NO_DAY where null."""
    return pc.fill_null(pc.cast(dates, pa.int32()), NO_DAY).to_numpy(zero_copy_only=False).astype(np.int64)

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

@dataclass
class Gathered:
    """The engine's results of a table's shoes, gathered shoe by shoe as columns: the replayed rounds (rows
    of the table's rounds) with their reports, the bets (indexes into the table's bets), each bet's round
    (its row in the table's rounds) and the credit the engine expects (null: unsettled, with its reason),
    the findings with their business dates."""

    rounds: pa.Table  # the table's rounds, in the order of `round_rows` given to shoe()
    replay_rows: list[int] = field(default_factory=list)  # each replay's round, its row in `rounds`
    replay_shoes: list[str] = field(default_factory=list)
    reports: list = field(default_factory=list)
    bets: list[np.ndarray] = field(default_factory=list)
    round_rows: list[np.ndarray] = field(default_factory=list)
    expected: list[np.ndarray] = field(default_factory=list)  # int64, a credit where `settled`
    settled: list[np.ndarray] = field(default_factory=list)
    unsettled: list[str | None] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    # the business day of each of `findings` (day numbers, NO_DAY: none) and its place: its shoe's number and its
    # bet's row in the table's bets + 1 (0: the shoe's or a round's)
    finding_days: list[np.ndarray] = field(default_factory=list)
    finding_shoes: list[np.ndarray] = field(default_factory=list)
    finding_bets: list[np.ndarray] = field(default_factory=list)
    # the bets whose findings come after the shoes, as columns (tables' bet_findings): their shoe's number, their
    # rows in the table's bets, their rounds' rows in `rounds`, and the day numbers of their findings
    flagged: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.shoes = 0  # the shoes gathered
        self.dates = round_dates(self.rounds)
        self.days = day_numbers(self.dates)  # each round's business day
        # (a round's day found by its own row, not by its round_id among its shoe's, where no two rounds share one)
        ids = plain(self.rounds["round_id"])
        self.by_row = bool(pc.count_distinct(ids, mode="all").as_py() == len(ids)
                           and not pc.any(pc.fill_null(pc.equal(ids, ""), True)).as_py())

    def shoe(self, shoe: dict, order: list[int], round_rows: list[dict], mine: np.ndarray, round_index: np.ndarray,
             result, on_bet: np.ndarray | None = None, flagged: np.ndarray = NO_BETS) -> None:
        """One shoe's audit: `order` its rounds (indexes into round_rows) in the engine's order, `mine` its
        bets' indexes and `round_index` each one's round in `order`, `result` the engine's (rounds, expected and
        settled as columns, unsettled, findings); `on_bet` each finding's bet (its index among `mine`, -1: none; None:
        every finding's is in bet order after the shoe's and rounds'), `flagged` the bets (indexes among `mine`) whose
        findings tables() is given as columns."""
        shoe_no, self.shoes = self.shoes, self.shoes + 1
        # (a report None: a round its game reports as columns, at its own index)
        self.replay_rows += [order[k if rep is None else rep.round_index] for k, rep in enumerate(result.rounds)]
        self.replay_shoes += [shoe["shoe_id"]] * len(result.rounds)
        self.reports += result.rounds
        if len(mine):
            self.bets.append(np.asarray(mine, np.int64))
            self.round_rows.append(np.asarray(order, np.int64)[round_index])
            self.expected.append(result.expected)
            self.settled.append(result.settled)
            self.unsettled += result.unsettled
        if not result.findings and not len(flagged):
            return
        ordered = np.asarray(order, np.int64)
        days = self.days[ordered]
        # the shoe's day: its first round's, its opening date's where no round has one (shoe_day)
        shoe_date = int(days.min(initial=NO_DAY))
        if shoe_date == NO_DAY:
            shoe_date = int(day_numbers(pa.array([day(shoe["opened_at"])], pa.date32()))[0])
        if self.by_row and not result.findings:
            round_day = {}
        else:  # (a round id its shoe repeats: the day of its last round, as a dict of them reads)
            round_day = {round_rows[i]["round_id"]: d for i, d in zip(order, days.tolist(), strict=True)}
        if result.findings:
            self.findings += result.findings
            self.finding_days.append(np.array([round_day.get(f.round_id, shoe_date) if f.round_id else shoe_date
                                               for f in result.findings], np.int64))
            on = np.zeros(len(result.findings), np.int64) if on_bet is None else np.asarray(on_bet, np.int64)
            self.finding_shoes.append(np.full(len(on), shoe_no, np.int64))
            self.finding_bets.append(np.where(on >= 0, np.asarray(mine, np.int64)[np.maximum(on, 0)] + 1, 0)
                                     if len(mine) else np.zeros(len(on), np.int64))
        if len(flagged):
            rows = ordered[round_index[flagged]]
            self.flagged.append((shoe_no, np.asarray(mine, np.int64)[flagged], rows, self.days[rows] if self.by_row
                                 else np.array([round_day.get(rid, shoe_date) if rid else shoe_date
                                                for rid in (round_rows[i]["round_id"] for i in rows.tolist())],
                                               np.int64)))

    def tables(self, table_id: str, out_replays: str, replay_schema: pa.Schema, plain: pa.Table, bets: pa.Table,
               replay_columns: Callable[..., dict[str, pa.Array]],
               bet_findings: Callable[[pa.Table], tuple[pa.Table, np.ndarray]] | None = None
               ) -> dict[str, pa.Table]:
        """{the game's round replays, settlements, findings, quarantine}; `plain` the bets as plain_bets
        gave them, `bets` as read; replay_columns(table_id, rounds, replay rows, their shoes, their reports)
        -> the replay table's columns but business_date; bet_findings(the flagged bets' bet_id, bet_type, account_id,
        round_id and shoe_id) -> their findings (FINDING_COLUMNS, bet by bet) and each one's bet (its flagged row)."""
        settled = self.bet_tables(table_id, plain, bets)
        rows = np.asarray(self.replay_rows, np.int64)
        replays = {"business_date": taken(self.dates, rows),
                   **replay_columns(table_id, self.rounds, rows, self.replay_shoes, self.reports)}
        return {
            out_replays: pa.Table.from_arrays([replays[f.name] for f in replay_schema], schema=replay_schema),
            "settlements": settled["settlements"],
            "findings": self.findings_table(plain, bet_findings),
            "quarantine": settled["quarantine"],
        }

    def findings_table(self, plain: pa.Table, bet_findings) -> pa.Table:
        """The findings gathered and those of the flagged bets (see tables), each in its place: shoe by shoe, the
        shoe's and its rounds' first, then bet by bet."""
        found = [finding_columns(self.findings)]
        days, shoes, bets = ([NO_BETS, *parts] for parts in (self.finding_days, self.finding_shoes, self.finding_bets))
        if self.flagged:
            bet_rows, round_rows = (pa.array(np.concatenate([f[k] for f in self.flagged])) for k in (1, 2))
            texts = plain.select(["bet_id", "bet_type", "account_id"]).take(bet_rows)
            columns, on = bet_findings(texts.append_column("round_id", self.rounds["round_id"].take(round_rows))
                                       .append_column("shoe_id", self.rounds["shoe_id"].take(round_rows)))
            found.append(columns)
            days.append(np.concatenate([f[3] for f in self.flagged])[on])
            shoes.append(np.concatenate([np.full(len(f[1]), f[0], np.int64) for f in self.flagged])[on])
            bets.append(bet_rows.to_numpy()[on] + 1)
        every_day = np.concatenate(days)
        if not len(every_day):
            return FINDINGS.empty_table()
        order = np.lexsort((np.concatenate(bets), np.concatenate(shoes)))  # (stable: the order within a place kept)
        every_day = every_day[order]
        return dated_findings(pa.concat_tables(found).take(pa.array(order, pa.int64())),
                              pa.array(every_day, pa.int32(), mask=every_day == NO_DAY).cast(pa.date32()))

    def bet_tables(self, table_id: str, plain: pa.Table, bets: pa.Table) -> dict[str, pa.Table]:
        """{settlements, quarantine} of the bets gathered."""
        expected, settled = (np.concatenate([none, *parts]) for none, parts in (
            (NO_BETS, self.expected), (np.zeros(0, bool), self.settled)))
        return bet_tables(table_id, plain, bets, self.rounds, np.concatenate([NO_BETS, *self.bets]),
                          np.concatenate([NO_BETS, *self.round_rows]), pa.array(expected, pa.int64(), mask=~settled),
                          self.unsettled)

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


@dataclass(frozen=True)
class InShoe:
    """A shoe's rounds as its engine deals them: its audited rounds (`order`, indexes into the table's round
    rows) with, at their place by round_no, its rounds put in quarantine as they were read. A quarantined
    round still took the cards it records from the shoe, so the rounds after it are replayed after those
    cards; it is checked for nothing and gives no replay (its quarantine row says why)."""

    rows: list[dict]  # every round the engine is given, in dealing order
    audited: np.ndarray  # int64, per engine round: its index in `order`, -1 for a quarantined round

    @classmethod
    def of(cls, order: list[int], round_rows: list[dict], quarantined: list[dict]) -> InShoe:
        """(`round_rows` and `quarantined` hold round_no and betting_opened_at: dealing_place)"""
        rounds = [(round_rows[i]["round_no"], 0, round_rows[i]["round_id"] or "", k, round_rows[i])
                  for k, i in enumerate(order)]
        audited = [(round_rows[i]["round_no"], round_rows[i]["betting_opened_at"]) for i in order]
        # (a quarantined round before an audited one of the same round_no: it is the one out of place)
        for r in quarantined:
            at = dealing_place(r.get("round_no"), r.get("betting_opened_at"), audited)
            rounds.append((at, -1, r.get("round_id") or "", -1, {**r, "round_no": at}))
        rounds.sort(key=lambda x: x[:3])
        return cls([x[4] for x in rounds], np.array([x[3] for x in rounds], np.int64))

    def reports(self, reports: list) -> list:
        """The engine's round reports of the audited rounds, each on its index in `order`."""
        from dataclasses import replace
        return [replace(rep, round_index=int(self.audited[rep.round_index])) for rep in reports
                if self.audited[rep.round_index] >= 0]


def quarantined_of_shoe(quarantined: pa.Table | None, columns: list[str]) -> dict[str, list[dict]]:
    """shoe_id -> the quarantined round rows of that shoe (`columns` those the table has; the others None)."""
    if quarantined is None or not quarantined.num_rows:
        return {}
    have = [c for c in columns if c in quarantined.column_names]
    by_shoe: dict[str, list[dict]] = {}
    for row in plain_table(quarantined.select(have)).to_pylist():
        by_shoe.setdefault(row.get("shoe_id"), []).append({c: row.get(c) for c in columns})
    return by_shoe
