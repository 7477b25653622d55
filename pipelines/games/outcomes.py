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
    micros,
    plain_bets,
    positions,
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


def audit_tables(table: OutcomeTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table) -> dict[str, pa.Table]:
    """Audit the sessions of one table: {the game's round replays, settlements, findings, quarantine}.
    Every round's session is among `shoes`, every bet's round among `rounds`."""
    spec = table.spec
    outcome = spec.outcome_column
    session_rows = shoes.select(["shoe_id", "opened_at"]).to_pylist()
    round_cols = ["round_id", "shoe_id", "round_no", "status", "betting_opened_at"]
    round_rows = _with(rounds, round_cols, outcome).to_pylist()
    bet_cols = [*BET_COLUMNS, "selection"]
    plain = plain_bets(bets, bet_cols)
    bet_rows = plain.select([*bet_cols, "_shoe_id"]).to_pylist()
    placed, closed = micros(plain["placed_at"]), micros(rounds["betting_closed_at"])
    by_session, bets_of_session = rounds_by_shoe(round_rows), bets_by_shoe(round_rows, bet_rows)
    gathered = Gathered()
    for session in session_rows:
        order = by_session.get(session["shoe_id"], [])
        position = positions(order, round_rows)
        recorded = [spec.recorded_round(round_rows[i]["round_id"], round_rows[i]["round_no"], round_rows[i]["status"],
                                        closed[i] or 0, round_rows[i][outcome]) for i in order]
        mine = bets_of_session.get(session["shoe_id"], [])
        engine_bets = [_recorded_bet(bet_rows[b], position[bet_rows[b]["round_id"]], placed[b]) for b in mine]
        result = spec.audit(table.rules, table.facts, session["shoe_id"], recorded, engine_bets)
        round_bets = _bets_on_rounds(table, len(order), engine_bets)
        gathered.shoe(session, order, round_rows, mine, engine_bets, result,
                      lambda r, rep, d, session_id=session["shoe_id"], on=round_bets: _replay_row(
                          spec, table.table_id, session_id, r, rep, d, on[rep.round_index]))
    return gathered.tables(table.table_id, spec.out_replays, spec.replay_schema, plain, bets)


def _bets_on_rounds(table: OutcomeTable, rounds: int, engine_bets: Sequence[RecordedBet]) -> list[list[dict]]:
    """Each round's bets with their selection and what it covers on the layout (the replay's picture)."""
    on_round: list[list[dict]] = [[] for _ in range(rounds)]
    for bet in engine_bets:
        covered = table.spec.covered(table.rules, bet.bet_type, bet.selection)
        on_round[bet.round_index].append({"bet_id": bet.bet_id, "bet_type": bet.bet_type, "selection": bet.selection,
                                          "covered": sorted(covered) if covered is not None else None})
    return on_round


def _with(rounds: pa.Table, columns: Sequence[str], outcome: str) -> pa.Table:
    """The round columns read; an outcome column the files do not have is all null (OUTCOME_MISSING)."""
    table = rounds.select(list(columns))
    column = rounds[outcome] if outcome in rounds.column_names else pa.nulls(rounds.num_rows)
    return table.append_column(outcome, column)


def _recorded_bet(b: dict, round_index: int, placed_us: int) -> RecordedBet:
    return RecordedBet(b["bet_id"], round_index, b["account_id"], b["bet_type"], b["selection"], b["stake"],
                       b["paid"], placed_us)


def _replay_row(spec: OutcomeGame, table_id: str, session_id: str, r: dict, rep, business_date,
                bets: list[dict]) -> dict:
    return {
        "business_date": business_date, "table_id": table_id, "shoe_id": session_id, "round_id": r["round_id"],
        "round_no": r["round_no"], "status": r["status"], spec.outcome_column: r[spec.outcome_column],
        "outcome_valid": spec.valid(r[spec.outcome_column]), "outcome_description": rep.description,
        "bets": sorted(bets, key=lambda b: b["bet_id"]), "explanation": list(rep.explanation),
        "finding_kinds": list(rep.finding_kinds),
    }
