"""The adaptor of games whose round records one outcome and no cards (a wheel's pocket, the dice): the
rounds of each session (`shoes` rows of decks 0) with their bets into the game's engine audit, its
results back as the game's round-replay table and the shared outputs. Names no game's concepts: a game
gives an OutcomeGame (pipelines/games/roulette.py, sic_bo.py). No Beam here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from engine.betting import RecordedBet
from pipelines.games.rows import (
    BET_COLUMNS,
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
    bets_of_session = bets_by_shoe(round_rows, bet["round_id"], bet["_shoe_id"])
    gathered = Gathered()
    for session in session_rows:
        order = by_session.get(session["shoe_id"], [])
        position = positions(order, round_rows)
        recorded = [spec.recorded_round(round_rows[i]["round_id"], round_rows[i]["round_no"], round_rows[i]["status"],
                                        closed[i] or 0, round_rows[i][outcome]) for i in order]
        mine = bets_of_session.get(session["shoe_id"], [])
        engine_bets = _recorded_bets(bet, mine, position, placed)
        result = spec.audit(table.rules, table.facts, session["shoe_id"], recorded, engine_bets)
        round_bets = _bets_on_rounds(table, len(order), engine_bets)
        gathered.shoe(session, order, round_rows, mine, engine_bets, result,
                      lambda r, rep, d, session_id=session["shoe_id"], on=round_bets: _replay_row(
                          spec, table.table_id, session_id, r, rep, d, on[rep.round_index]))
    return gathered.tables(table.table_id, spec.out_replays, spec.replay_schema, plain, bets)


def _bets_on_rounds(table: OutcomeTable, rounds: int, engine_bets: Sequence[RecordedBet]) -> list[list[dict]]:
    """Each round's bets with their selection and what it covers on the layout (the replay's picture),
    worked out once per bet type and selection."""
    on_round: list[list[dict]] = [[] for _ in range(rounds)]
    numbers: dict[tuple[str, str | None], list[int] | None] = {}
    for bet in engine_bets:
        key = (bet.bet_type, bet.selection)
        if key not in numbers:
            covered = table.spec.covered(table.rules, *key)
            numbers[key] = sorted(covered) if covered is not None else None
        on_round[bet.round_index].append({"bet_id": bet.bet_id, "bet_type": bet.bet_type, "selection": bet.selection,
                                          "covered": numbers[key]})
    return on_round


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


def _replay_row(spec: OutcomeGame, table_id: str, session_id: str, r: dict, rep, business_date,
                bets: list[dict]) -> dict:
    return {
        "business_date": business_date, "table_id": table_id, "shoe_id": session_id, "round_id": r["round_id"],
        "round_no": r["round_no"], "status": r["status"], spec.outcome_column: r[spec.outcome_column],
        "outcome_valid": spec.valid(r[spec.outcome_column]), "outcome_description": rep.description,
        "bets": sorted(bets, key=lambda b: b["bet_id"]), "explanation": list(rep.explanation),
        "finding_kinds": list(rep.finding_kinds),
    }
