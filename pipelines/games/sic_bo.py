"""Sic bo's adaptor: a roll's `dice` into engine.games.sic_bo.audit (pipelines/games/outcomes.py)."""

from __future__ import annotations

import pyarrow as pa

from engine.games.sic_bo.audit import RecordedRound, audit_rolls, valid_roll
from engine.games.sic_bo.rules import load_sic_bo_rules
from pipelines.games import outcomes
from schemas.outputs import SIC_BO_ROUND_REPLAYS

OUT_REPLAYS = "sic_bo_round_replays"


def _round(round_id: str, round_no: int, status: str, closed_us: int, dice) -> RecordedRound:
    return RecordedRound(round_id, round_no, status, closed_us, tuple(dice) if dice is not None else None)


SPEC = outcomes.OutcomeGame(
    name="sic_bo", out_replays=OUT_REPLAYS, replay_schema=SIC_BO_ROUND_REPLAYS, outcome_column="dice",
    load_rules=load_sic_bo_rules, recorded_round=_round, audit=audit_rolls, valid=valid_roll,
)


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> outcomes.OutcomeTable:
    return outcomes.table_info(SPEC, row, limits)


def audit_tables(table: outcomes.OutcomeTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False) -> dict[str, pa.Table]:
    return outcomes.audit_tables(table, shoes, rounds, bets)
