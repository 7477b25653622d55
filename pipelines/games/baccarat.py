"""Baccarat's adaptor: the vectorised Arrow <-> engine conversion of pipelines.convert (the baccarat
engine works on the columns of a whole table's shoes at once)."""

from __future__ import annotations

import pyarrow as pa

from engine.games.baccarat.shoe_audit import TableInfo
from pipelines import convert

OUT_REPLAYS = "round_replays"
table_info = convert.table_info


def audit_tables(info: TableInfo, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None) -> dict[str, pa.Table]:
    replays, settlements, findings, quarantine = convert.audit_shoes_tables(info, shoes, rounds, bets,
                                                                            compact=compact, neighbours=neighbours)
    return {OUT_REPLAYS: replays, "settlements": settlements, "findings": findings, "quarantine": quarantine}

# its rounds in the warehouse's all_rounds view (audits/views/05_all_rounds.sql: its columns, in their order)
ALL_ROUNDS = """\
SELECT
    'baccarat' AS game, business_date, table_id, shoe_id, round_id, round_no, status, shoe_position, rounds_before,
    cut_card_round, after_cut,
    'P ' || coalesce(array_to_string(recorded_player_cards, ' '), '-')
        || ' (' || coalesce(CAST(recorded_player_score AS VARCHAR), '?') || ')'
        || ' B ' || coalesce(array_to_string(recorded_banker_cards, ' '), '-')
        || ' (' || coalesce(CAST(recorded_banker_score AS VARCHAR), '?') || ') '
        || coalesce(recorded_outcome, '-') AS recorded_round,
    'P ' || coalesce(array_to_string(expected_player_cards, ' '), '-')
        || ' B ' || coalesce(array_to_string(expected_banker_cards, ' '), '-')
        || ' ' || coalesce(expected_outcome, '-') AS expected_round,
    array_to_string(decisions, '; ') AS decisions,
    coalesce(array_to_string(finding_kinds, ','), '') AS finding_kinds,
    run_id
FROM round_replays"""
