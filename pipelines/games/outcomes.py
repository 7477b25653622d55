"""The adaptor of games whose round records one outcome and no cards (a wheel's pocket, the dice): the
rounds of each session (`shoes` rows of decks 0) with their bets into the game's engine audit, its
results back as the game's round-replay table and the shared outputs. Names no game's concepts: a game
gives an OutcomeGame (pipelines/games/roulette.py, sic_bo.py). No Beam here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import RecordedBet
from pipelines.games.rows import (
    BET_COLUMNS,
    NO_BETS,
    GameTable,
    Gathered,
    bets_by_shoe,
    gc_paused,
    micros,
    plain_bets,
    positions,
    python_columns,
    rounds_by_shoe,
    table_facts,
)


@dataclass(frozen=True)
class OutcomeGame:
    name: str  # tables.game
    out_replays: str  # its round-replay output
    replay_schema: pa.Schema
    outcome_column: str  # the rounds column that records the outcome
    load_rules: Callable[[str], Any]
    # (round_id, round_no, status, betting_closed_at in us, the outcome as recorded) -> the engine's round
    recorded_round: Callable[[str, int, str, int, Any], Any]
    # (rules, table, session_id, rounds, bets) -> the engine's audit (rounds, expected, unsettled, findings)
    audit: Callable[..., Any]
    valid: Callable[[Any], bool]  # whether an outcome as recorded is one the game can settle
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


@gc_paused
def audit_tables(table: OutcomeTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table) -> dict[str, pa.Table]:
    """Audit the sessions of one table: {the game's round replays, settlements, findings, quarantine}.
    Every round's session is among `shoes`, every bet's round among `rounds`."""
    spec = table.spec
    outcome = spec.outcome_column
    session_rows = shoes.select(["shoe_id", "opened_at"]).to_pylist()
    round_cols = ["round_id", "shoe_id", "round_no", "status", "betting_opened_at"]
    round_rows = _with(rounds, round_cols, outcome).to_pylist()
    plain = plain_bets(bets, [*BET_COLUMNS, "selection"])
    bet = python_columns(plain, _ENGINE_BET_COLUMNS)
    placed, closed = micros(plain["placed_at"]), micros(rounds["betting_closed_at"])
    by_session = rounds_by_shoe(round_rows)
    bets_of_session = bets_by_shoe(rounds, plain["round_id"], plain["_shoe_id"])
    gathered = Gathered(rounds)
    for session in session_rows:
        order = by_session.get(session["shoe_id"], [])
        position = positions(order, round_rows)
        recorded = [spec.recorded_round(round_rows[i]["round_id"], round_rows[i]["round_no"], round_rows[i]["status"],
                                        closed[i] or 0, round_rows[i][outcome]) for i in order]
        mine = bets_of_session.get(session["shoe_id"], NO_BETS)
        engine_bets = _recorded_bets(bet, mine.tolist(), position, placed)
        result = spec.audit(table.rules, table.facts, session["shoe_id"], recorded, engine_bets)
        gathered.shoe(session, order, round_rows, mine, engine_bets, result,
                      lambda r, rep, d, session_id=session["shoe_id"]: _replay_row(
                          spec, table.table_id, session_id, r, rep, d))
    out = gathered.tables(table.table_id, spec.out_replays, spec.replay_schema, plain, bets)
    replays = out[spec.out_replays]
    at = replays.schema.get_field_index("bets")
    out[spec.out_replays] = replays.set_column(at, replays.schema.field(at),
                                               _bets_on_replays(table, gathered, plain, len(round_rows)))
    return out


def _bets_on_replays(table: OutcomeTable, gathered: Gathered, plain: pa.Table, rounds: int) -> pa.Array:
    """Each replayed round's bets by bet_id (ties as placed on the table), with their selection and what it
    covers on the layout (the replay's picture), column by column; what a bet covers worked out once per
    bet type and selection."""
    replay_rows = np.asarray(gathered.replay_rows, np.int64)
    take, bet_rows = np.concatenate([NO_BETS, *gathered.bets]), np.concatenate([NO_BETS, *gathered.round_rows])
    replay_of_row = np.full(rounds, -1, np.int64)
    replay_of_row[replay_rows] = np.arange(len(replay_rows))
    on = replay_of_row[bet_rows]  # each bet's replay row
    ids = plain["bet_id"].take(pa.array(take, pa.int64()))
    ordered = pc.sort_indices(pa.table({"on": on, "bet_id": ids, "at": np.arange(len(take))}),
                              sort_keys=[("on", "ascending"), ("bet_id", "ascending"), ("at", "ascending")])
    take = take[ordered.to_numpy()]
    offsets = np.concatenate([[0], np.cumsum(np.bincount(on, minlength=len(replay_rows)))]).astype(np.int32)
    rows = pa.array(take, pa.int64())
    types = plain["bet_type"].take(rows).combine_chunks().cast(pa.string())
    selections = plain["selection"].take(rows).combine_chunks().cast(pa.string())
    # the distinct (bet type, selection) pairs, a null selection its own
    type_codes = types.dictionary_encode(null_encoding="encode")
    selection_codes = selections.dictionary_encode(null_encoding="encode")
    pairs, pair_of = np.unique(
        type_codes.indices.to_numpy(zero_copy_only=False).astype(np.int64) * (len(selection_codes.dictionary) + 1)
        + selection_codes.indices.to_numpy(zero_copy_only=False), return_inverse=True)
    covered = []
    for pair in pairs.tolist():
        code, selection = divmod(pair, len(selection_codes.dictionary) + 1)
        numbers = table.spec.covered(table.rules, type_codes.dictionary[code].as_py(),
                                     selection_codes.dictionary[selection].as_py())
        covered.append(sorted(numbers) if numbers is not None else None)
    bet_fields = pa.StructArray.from_arrays(
        [plain["bet_id"].take(rows).combine_chunks().cast(pa.string()), types, selections,
         pa.array(covered, pa.list_(pa.int8())).take(pa.array(pair_of.reshape(-1), pa.int64()))],
        fields=list(table.spec.replay_schema.field("bets").type.value_type))
    return pa.ListArray.from_arrays(pa.array(offsets), bet_fields)


def _with(rounds: pa.Table, columns: Sequence[str], outcome: str) -> pa.Table:
    """The round columns read; an outcome column the files do not have is all null (OUTCOME_MISSING)."""
    table = rounds.select(list(columns))
    column = rounds[outcome] if outcome in rounds.column_names else pa.nulls(rounds.num_rows)
    return table.append_column(outcome, column)


# the bet columns the engine reads, as Python lists (placed_at as integer microseconds, apart)
_ENGINE_BET_COLUMNS = ["bet_id", "round_id", "account_id", "bet_type", "selection", "stake", "paid", "_shoe_id"]


def _recorded_bets(bet: dict[str, list], mine: list[int], position: dict[str, int], placed_us: list[int]
                   ) -> list[RecordedBet]:
    """The engine's bets `mine` (indexes into the `bet` columns), each on its round's index among the session's."""
    ids, rounds, accounts, types, selections, stakes, paid = (bet[c] for c in _ENGINE_BET_COLUMNS[:7])
    return [RecordedBet(ids[b], position[rounds[b]], accounts[b], types[b], selections[b], stakes[b], paid[b],
                        placed_us[b]) for b in mine]


def _replay_row(spec: OutcomeGame, table_id: str, session_id: str, r: dict, rep, business_date) -> dict:
    """A replayed round, but for its bets (_bets_on_replays: column by column)."""
    return {
        "business_date": business_date, "table_id": table_id, "shoe_id": session_id, "round_id": r["round_id"],
        "round_no": r["round_no"], "status": r["status"], spec.outcome_column: r[spec.outcome_column],
        "outcome_valid": spec.valid(r[spec.outcome_column]), "outcome_description": rep.description,
        "bets": None, "explanation": list(rep.explanation),
        "finding_kinds": list(rep.finding_kinds),
    }
