"""The adaptor of games whose round records one outcome and no cards (a wheel's pocket, the dice): the
rounds of each session (`shoes` rows of decks 0) with their bets into the game's engine audit, its
results back as the game's round-replay table and the shared outputs. Names no game's concepts: a game
gives an OutcomeGame (pipelines/games/roulette.py, sic_bo.py). No Beam here.

Column by column: the engine (engine.betting_columns) takes each session's bets as numpy columns, bet type,
selection and account as codes into the table's distinct values, and gives its results as columns; no
Python object a bet on the way in or out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine import kernels
from engine.betting_columns import BetColumns, ColumnAudit, RoundColumns, Verdicts, distinct, finding_columns
from engine.findings import Finding
from pipelines.arrow_columns import coded, codes_in, index_in, integers, micros, one_chunk
from pipelines.arrow_columns import plain as plain_values
from pipelines.convert import dated_findings
from pipelines.games.rows import (
    BET_COLUMNS,
    NO_BETS,
    GameTable,
    bet_tables,
    bets_by_shoe,
    day,
    plain_bets,
    round_dates,
    table_facts,
    taken,
)
from schemas.outputs import FINDINGS


@dataclass(frozen=True)
class OutcomeGame:
    name: str  # tables.game
    out_replays: str  # its round-replay output
    replay_schema: pa.Schema
    outcome_column: str  # the rounds column that records the outcome
    load_rules: Callable[[str], Any]
    # (rules, table, session_id, RoundColumns, BetColumns, verdicts known from the table's earlier sessions)
    # -> the engine's ColumnAudit
    audit: Callable[..., ColumnAudit]  # (its description of an outcome: None where the game cannot settle on it)
    # an outcome as read from the files -> as the engine takes it (the dice as a tuple)
    recorded_outcome: Callable[[Any], Any] = lambda outcome: outcome
    # (rules, bet_type, selection) -> what the bet covers on the layout (numbers), or None
    covered: Callable[[Any, str, str | None], Sequence[int] | None] = lambda rules, code, selection: None


@dataclass(frozen=True)
class OutcomeTable(GameTable):
    spec: OutcomeGame

    @property
    def game(self) -> str:
        return self.spec.name


def table_info(spec: OutcomeGame, row: dict, limits: dict[str, tuple[int, int]]) -> OutcomeTable:
    return OutcomeTable(table_facts(row, limits), spec.load_rules(row["ruleset"]), spec)


def audit_tables(table: OutcomeTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table) -> dict[str, pa.Table]:
    """Audit the sessions of one table: {the game's round replays, settlements, findings, quarantine}.
    Every round's session is among `shoes`, every bet's round among `rounds`."""
    spec = table.spec
    read = plain_bets(bets, [*BET_COLUMNS, "selection"], decoded=False)  # (decoded where taken: bet_tables)
    table_bets = _TableBets.of(read)
    round_ids, round_nos, statuses = (plain_values(rounds[c]).to_pylist() for c in ("round_id", "round_no", "status"))
    outcomes = _outcomes(spec, rounds)
    closed = micros(rounds["betting_closed_at"], missing=0, name="rounds.betting_closed_at")
    dates = round_dates(rounds)
    by_session = _rounds_by_session(rounds)
    bets_of_session = bets_by_shoe(rounds, table_bets.round_id, read["_shoe_id"])
    known = _known_verdicts(table.rules)
    replays = _Replays()
    take, bet_rows, expected, unsettled, findings = [NO_BETS], [NO_BETS], [pa.array([], pa.int64())], [], []
    shape = [c for c in ("decks", "cards", "cut_index") if c in shoes.column_names]
    for session in shoes.select(["shoe_id", "opened_at", *shape]).to_pylist():
        order = by_session.get(session["shoe_id"], NO_BETS)
        at = order.tolist()
        recorded = RoundColumns([round_ids[i] for i in at], [round_nos[i] for i in at], [statuses[i] for i in at],
                                closed[order], [outcomes[i] for i in at])
        mine = bets_of_session.get(session["shoe_id"], NO_BETS)
        index = _round_index(recorded.round_id, taken(table_bets.round_id, mine))
        result = spec.audit(table.rules, table.facts, session["shoe_id"], recorded, table_bets.of_rows(mine, index),
                            known)
        replays.session(session["shoe_id"], order, result)
        take.append(mine)
        bet_rows.append(np.where(index >= 0, order[np.maximum(index, 0)], -1) if len(order) else index)
        expected.append(pa.array(result.expected, pa.int64(), mask=~result.settled))
        unsettled += result.unsettled
        found = pa.concat_tables([result.findings, finding_columns(_session_shape(table, session))])
        if found.num_rows:
            findings.append(dated_findings(found, _finding_days(found["round_id"], recorded.round_id,
                                                                dates.take(pa.array(order, pa.int64())),
                                                                session["opened_at"])))
    take, bet_rows = np.concatenate(take), np.concatenate(bet_rows)
    settled = bet_tables(table.table_id, read, bets, rounds, take, bet_rows, pa.concat_arrays(expected), unsettled)
    return {
        spec.out_replays: replays.table(table, rounds, dates, table_bets, take, bet_rows),
        "settlements": settled["settlements"],
        "findings": pa.concat_tables(findings) if findings else FINDINGS.empty_table(),
        "quarantine": settled["quarantine"],
    }


def _session_shape(table: OutcomeTable, session: dict) -> list[Finding]:
    """SHOE_COMPOSITION when a session's shoes row is not the shape of one (decks 0, no card, no cut card: the
    game deals no cards), one finding naming every column that is not; the spins or rolls are still judged on
    their recorded outcomes (the shape alone makes no outcome wrong)."""
    wrong = [text for text, right in (
        (f"decks {session.get('decks')}", session.get("decks") in (0, None)),
        (f"{len(session.get('cards') or ())} cards", not session.get("cards")),
        (f"cut_index {session.get('cut_index')}", session.get("cut_index") is None)) if not right]
    if not wrong:
        return []
    recorded = ", ".join(wrong)
    return [Finding("SHOE_COMPOSITION", table.table_id, session["shoe_id"], None, None,
                    "a session: decks 0, no cards, cut_index null", recorded,
                    f"Session {session['shoe_id']} of {table.spec.name} table {table.table_id} is recorded with "
                    f"{recorded}: the game deals no cards (its rounds are judged on their recorded outcomes).")]


_KNOWN: dict[str, Verdicts] = {}


def _known_verdicts(rules: Any) -> Verdicts:
    """The verdicts by bet type, selection and outcome worked out under these rules, kept across the tables and
    sessions of a run (a few thousand a ruleset at most); rules are told apart by everything they say (their
    repr: a frozen dataclass of plain values), so that each table's copy of a ruleset shares them."""
    return _KNOWN.setdefault(f"{type(rules).__qualname__}{rules!r}", Verdicts())


@dataclass(frozen=True)
class _TableBets:
    """A table's bets as the engine takes them: numpy columns, and codes into the table's distinct values."""

    bet_id: pa.Array
    round_id: pa.Array
    account: np.ndarray
    bet_type: np.ndarray
    selection: np.ndarray
    stake: np.ndarray
    paid: np.ndarray
    placed_at: np.ndarray
    accounts: list
    bet_types: list
    selections: list

    @classmethod
    def of(cls, read: pa.Table) -> _TableBets:
        """(`read`: the bets' columns as read, dictionary-encoded or plain)"""
        (account, accounts), (bet_type, bet_types), (selection, selections) = (
            coded(read[c]) for c in ("account_id", "bet_type", "selection"))
        bet_id = one_chunk(plain_values(read["bet_id"])).cast(pa.string())
        round_id = one_chunk(read["round_id"])  # (as read: a dictionary's ids are looked up a distinct id at a time)
        round_id = round_id if pa.types.is_dictionary(round_id.type) else round_id.cast(pa.string())
        return cls(bet_id, round_id, account, bet_type, selection, integers(read["stake"], name="bets.stake"),
                   integers(read["paid"], name="bets.paid"), micros(read["placed_at"], name="bets.placed_at"), accounts,
                   bet_types, selections)

    def of_rows(self, rows: np.ndarray, round_index: np.ndarray) -> BetColumns:
        return BetColumns(taken(self.bet_id, rows), round_index, self.account[rows],
                          self.bet_type[rows], self.selection[rows], self.stake[rows], self.paid[rows],
                          self.placed_at[rows], self.accounts, self.bet_types, self.selections)


def _outcomes(spec: OutcomeGame, rounds: pa.Table) -> list:
    """Each round's outcome as the engine takes it; an outcome column the files do not have is all null
    (OUTCOME_MISSING)."""
    column = spec.outcome_column
    recorded = rounds[column].to_pylist() if column in rounds.column_names else [None] * rounds.num_rows
    return [spec.recorded_outcome(o) for o in recorded]


def _rounds_by_session(rounds: pa.Table) -> dict[str | None, np.ndarray]:
    """shoe_id -> its rounds' rows in round order: round_no, then round_id, then as read (Arrow orders strings by
    their UTF-8 bytes, which is Python's order of code points, so this is the order of a Python sort on those keys)."""
    keyed = pa.table({"shoe_id": one_chunk(plain_values(rounds["shoe_id"])), "round_no": rounds["round_no"],
                      "round_id": one_chunk(plain_values(rounds["round_id"]))})
    order = pc.sort_indices(keyed, sort_keys=[("shoe_id", "ascending"), ("round_no", "ascending"),
                                              ("round_id", "ascending")]).to_numpy().astype(np.int64)  # stable
    codes, shoes = coded(keyed["shoe_id"])
    return {shoes[codes[rows[0]]]: rows for rows in np.split(order, np.flatnonzero(np.diff(codes[order])) + 1)
            if len(rows)}


def _finding_days(named: pa.ChunkedArray, session_round_ids: list[str], session_days: pa.Array, opened_at
                  ) -> pa.Array:
    """The business day of each of a session's findings (`named`: the round each names, if any): its round's
    (`session_days`: the session's rounds', a round id it repeats: its last), the session's first day where it
    names none of them, its opening date where no round has one (convert.round_dated's, column by column)."""
    position = {r: k for k, r in enumerate(session_round_ids)}
    days = session_days.take(pa.array(list(position.values()), pa.int64()))
    first = pc.min(days).as_py()
    default = pa.scalar(first if first is not None else day(opened_at), pa.date32())
    at = index_in(named, pa.array(list(position), pa.string()))
    names_one = pc.and_(pc.is_valid(at), pc.fill_null(pc.not_equal(named, ""), False))  # (null and '': none)
    return one_chunk(pc.if_else(names_one, days.take(at), default))


def _round_index(session_round_ids: list[str], bet_round_ids: pa.Array) -> np.ndarray:
    """Each bet's round as its index among the session's rounds (a round id the session repeats: its last,
    as a dict of them says), -1 where its round is not the session's. `bet_round_ids` plain strings or
    dictionary-encoded (arrow_columns.index_in)."""
    position = {r: k for k, r in enumerate(session_round_ids)}
    if not position:
        return np.full(len(bet_round_ids), -1, np.int64)
    found = codes_in(bet_round_ids, pa.array(list(position), pa.string()))
    where = np.fromiter(position.values(), np.int64, len(position))
    return np.where(found >= 0, where[np.maximum(found, 0)], -1)


@dataclass
class _Replays:
    """The replayed rounds of a table's sessions (every round of each, in its order), gathered as columns."""

    rows: list[np.ndarray] = field(default_factory=list)  # each session's rounds: rows of the table's rounds
    sessions: list[str] = field(default_factory=list)
    description: list[str | None] = field(default_factory=list)
    explanation: list[pa.Array] = field(default_factory=list)
    lines: int = 0  # in `explanation` so far
    explanation_at: list[np.ndarray] = field(default_factory=lambda: [np.zeros(1, np.int64)])
    finding_kinds: list[tuple[str, ...]] = field(default_factory=list)

    def session(self, session_id: str, order: np.ndarray, result: ColumnAudit) -> None:
        self.rows.append(order)
        self.sessions += [session_id] * len(order)
        self.description += result.description
        self.explanation_at.append(result.explanation_at[1:] + self.lines)
        self.explanation.append(result.explanation)
        self.lines += len(result.explanation)
        self.finding_kinds += result.finding_kinds

    def table(self, table: OutcomeTable, rounds: pa.Table, dates: pa.Array, bets: _TableBets, take: np.ndarray,
              bet_rows: np.ndarray) -> pa.Table:
        """The game's round replays; `take` the engine's bets (rows of `bets`), `bet_rows` their rounds'."""
        spec, schema = table.spec, table.spec.replay_schema
        rows = np.concatenate([NO_BETS, *self.rows])
        at = pa.array(rows, pa.int64())
        column = spec.outcome_column
        outcome_type = schema.field(column).type
        columns = {
            "business_date": dates.take(at),
            "table_id": pa.repeat(pa.scalar(table.table_id, pa.string()), len(rows)),
            "shoe_id": pa.array(self.sessions, pa.string()),
            "round_id": plain_values(rounds["round_id"]).take(at).cast(pa.string()),
            "round_no": rounds["round_no"].take(at).cast(pa.int32()),
            "status": plain_values(rounds["status"]).take(at).cast(pa.string()),
            column: (plain_values(rounds[column]).take(at).cast(outcome_type) if column in rounds.column_names
                     else pa.nulls(len(rows), outcome_type)),
            "outcome_valid": pa.array([d is not None for d in self.description], pa.bool_()),
            "outcome_description": pa.array(self.description, pa.string()),
            "bets": _bets_on_replays(table, rows, bets, take, bet_rows, rounds.num_rows),
            "explanation": pa.ListArray.from_arrays(pa.array(np.concatenate(self.explanation_at), pa.int32()),
                                                    _joined(self.explanation)),
            "finding_kinds": pa.array(self.finding_kinds, pa.list_(pa.string())),
        }
        return pa.Table.from_arrays([one_chunk(columns[f.name]) for f in schema], schema=schema)


def _joined(texts: list[pa.Array]) -> pa.Array:
    """The sessions' lines one after the other (a table-day's one session's as they are: no copy of its text)."""
    return texts[0] if len(texts) == 1 else pa.concat_arrays([pa.array([], pa.string()), *texts])


def _bets_on_replays(table: OutcomeTable, replay_rows: np.ndarray, bets: _TableBets, take: np.ndarray,
                     bet_rows: np.ndarray, rounds: int) -> pa.Array:
    """Each replayed round's bets by bet_id (ties as placed on the table), with their selection and what it
    covers on the layout (the replay's picture), column by column; what a bet covers worked out once per
    bet type and selection. `take`: the bets (rows of `bets`), `bet_rows`: each one's round (-1: none)."""
    on_a_round = bet_rows >= 0
    take, bet_rows = take[on_a_round], bet_rows[on_a_round]
    replay_of_row = np.full(rounds, -1, np.int64)
    replay_of_row[replay_rows] = np.arange(len(replay_rows))
    on = replay_of_row[bet_rows]  # each bet's replay row
    ids = taken(bets.bet_id, take)
    ordered = _by_round_and_id(on, ids)
    if ordered is not None:
        take, ids = take[ordered], ids.take(pa.array(ordered, pa.int64()))
    offsets = np.concatenate([[0], np.cumsum(np.bincount(on, minlength=len(replay_rows)))]).astype(np.int32)
    width = len(bets.selections)
    pairs, pair_of = distinct(bets.bet_type[take] * width + bets.selection[take])
    covered = []
    for pair in pairs.tolist():
        code, chosen = divmod(pair, width)
        numbers = table.spec.covered(table.rules, bets.bet_types[code], bets.selections[chosen])
        covered.append(sorted(numbers) if numbers is not None else None)
    bet_fields = pa.StructArray.from_arrays(
        [ids, pa.array(bets.bet_types, pa.string()).take(pa.array(bets.bet_type[take])),
         pa.array(bets.selections, pa.string()).take(pa.array(bets.selection[take])), _lists_of(covered, pair_of)],
        fields=list(table.spec.replay_schema.field("bets").type.value_type))
    return pa.ListArray.from_arrays(pa.array(offsets), bet_fields)


def _lists_of(lists: list[list[int] | None], of: np.ndarray) -> pa.Array:
    """lists[of[i]] for every i as a list<int8> array (None: a null): the lists' numbers copied by a kernel, not a
    take of Arrow lists (as Python, `pitboss replay`'s one session: that take)."""
    if kernels.running_as_python():
        return pa.array(lists, pa.list_(pa.int8())).take(pa.array(of, pa.int64()))
    lengths = np.array([len(numbers) if numbers is not None else 0 for numbers in lists], np.int64)
    at = np.concatenate([[0], np.cumsum(lengths)])
    flat = np.array([n for numbers in lists if numbers is not None for n in numbers], np.int8)
    offsets, values = kernels.spread_lists(at, flat, np.asarray(of, np.int64))
    null = np.array([numbers is None for numbers in lists], bool)[of]
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(values, pa.int8()),
                                    mask=pa.array(null) if null.any() else None)


def _by_round_and_id(on: np.ndarray, ids: pa.Array) -> np.ndarray | None:
    """The order that sorts bets by round, then bet_id, ties as given; None when they are in it already (as
    the recorder writes them: a comparison of neighbours instead of a sort of the strings)."""
    if not len(on):
        return None
    same = pa.array(on[1:] == on[:-1])
    id_falls = pc.less(ids.slice(1), ids.slice(0, len(ids) - 1))
    if (np.diff(on) >= 0).all() and not pc.any(pc.and_(same, id_falls)).as_py():
        return None
    return pc.sort_indices(pa.table({"on": on, "bet_id": ids, "at": np.arange(len(on))}),
                           sort_keys=[("on", "ascending"), ("bet_id", "ascending"),
                                      ("at", "ascending")]).to_numpy().astype(np.int64)


def all_rounds_sql(spec: OutcomeGame, recorded: str) -> str:
    """The game's rounds in the warehouse's all_rounds view (audits/views/05_all_rounds.sql): no shoe position
    (no cards); `recorded` is its outcome as text (SQL over its replay table), the outcome's meaning the
    expected round."""
    return f"""\
SELECT
    '{spec.name}' AS game, business_date, table_id, shoe_id, round_id, round_no, status, NULL AS shoe_position,
    NULL AS rounds_before, NULL AS cut_card_round, NULL AS after_cut,
    {recorded} AS recorded_round,
    coalesce(outcome_description, '-') AS expected_round,
    array_to_string(explanation, '; ') AS decisions,
    coalesce(array_to_string(finding_kinds, ','), '') AS finding_kinds,
    run_id
FROM {spec.out_replays}"""
