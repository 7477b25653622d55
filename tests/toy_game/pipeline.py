"""The coin's Arrow adaptor (the layer pipelines/games/<game>.py holds for a real game): a flip's `coin_face`
into the coin's engine audit through the shared outcome adaptor; its round-replay output's schema."""

from __future__ import annotations

import pyarrow as pa

from pipelines.games import outcomes
from tests.toy_game.contract import REPLAYS
from tests.toy_game.engine import NAME, audit_flip_columns, load_coin_rules

OUT_REPLAYS = "coin_round_replays"

SPEC = outcomes.OutcomeGame(name=NAME, out_replays=OUT_REPLAYS, replay_schema=REPLAYS.schema,
                            outcome_column="coin_face",
                            load_rules=load_coin_rules, audit=audit_flip_columns)

# its rounds in the warehouse's all_rounds view, its outcome as text
ALL_ROUNDS = outcomes.all_rounds_sql(SPEC, "'face ' || coalesce(coin_face, '-')")


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> outcomes.OutcomeTable:
    return outcomes.table_info(SPEC, row, limits)


def audit_tables(table: outcomes.OutcomeTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None) -> dict[str, pa.Table]:
    return outcomes.audit_tables(table, shoes, rounds, bets)
