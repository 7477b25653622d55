"""Roulette's adaptor: a spin's `pocket` into engine.games.roulette.audit (pipelines/games/outcomes.py)."""

from __future__ import annotations

import pyarrow as pa

from engine.games.roulette.audit import audit_spin_columns
from engine.games.roulette.layout import layout
from engine.games.roulette.rules import load_roulette_rules
from pipelines.games import outcomes
from schemas.games.roulette import REPLAYS

OUT_REPLAYS = "roulette_round_replays"

SPEC = outcomes.OutcomeGame(
    name="roulette", out_replays=OUT_REPLAYS, replay_schema=REPLAYS.schema, outcome_column="pocket",
    load_rules=load_roulette_rules, audit=audit_spin_columns,
    covered=lambda rules, code, selection: layout(rules.red).covers(code, selection),
)

# its rounds in the warehouse's all_rounds view, its outcome as text
ALL_ROUNDS = outcomes.all_rounds_sql(SPEC, "'pocket ' || coalesce(CAST(pocket AS VARCHAR), '-')")


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> outcomes.OutcomeTable:
    return outcomes.table_info(SPEC, row, limits)


def audit_tables(table: outcomes.OutcomeTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None) -> dict[str, pa.Table]:
    # (no rule of the game that looks at other bets is misled by a quarantined one: docs/findings.md)
    return outcomes.audit_tables(table, shoes, rounds, bets)
