"""Sic bo's adaptor: a roll's `dice` into engine.games.sic_bo.audit (pipelines/games/outcomes.py)."""

from __future__ import annotations

import pyarrow as pa

from engine.games.sic_bo.audit import audit_roll_columns
from engine.games.sic_bo.rules import load_sic_bo_rules
from pipelines.games import outcomes
from schemas.games.sic_bo import REPLAYS

OUT_REPLAYS = "sic_bo_round_replays"


def _dice(dice) -> tuple[int, ...] | None:
    """The dice as the engine takes them: a tuple, in the order recorded."""
    return tuple(dice) if dice is not None else None


SPEC = outcomes.OutcomeGame(
    name="sic_bo", out_replays=OUT_REPLAYS, replay_schema=REPLAYS.schema, outcome_column="dice",
    load_rules=load_sic_bo_rules, audit=audit_roll_columns, recorded_outcome=_dice,
)

# its rounds in the warehouse's all_rounds view, its outcome as text
ALL_ROUNDS = outcomes.all_rounds_sql(SPEC, "'dice ' || coalesce(array_to_string(dice, ' '), '-')")


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> outcomes.OutcomeTable:
    return outcomes.table_info(SPEC, row, limits)


def audit_tables(table: outcomes.OutcomeTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None) -> dict[str, pa.Table]:
    # (no rule of the game that looks at other bets is misled by a quarantined one: docs/findings.md)
    return outcomes.audit_tables(table, shoes, rounds, bets)
