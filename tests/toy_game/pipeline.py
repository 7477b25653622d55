"""The coin's Arrow adaptor (the layer pipelines/games/<game>.py holds for a real game): a flip's `coin_face`
into the coin's engine audit through the shared outcome adaptor; its round-replay output's schema."""

from __future__ import annotations

import pyarrow as pa

from pipelines.games import outcomes
from schemas.outputs import DOCS
from tests.toy_game.engine import NAME, audit_flip_columns, load_coin_rules, valid_face

OUT_REPLAYS = "coin_round_replays"
SORT_KEY = ["table_id", "shoe_id", "round_no", "round_id"]
_ROULETTE = DOCS["roulette_round_replays"]  # the fields every outcome replay has, the outcome's own renamed
DOC = {("coin_face" if k == "pocket" else k): v for k, v in _ROULETTE.items()}
DOC["coin_face"] = "The face recorded (null: none recorded)."


def _replays_schema() -> pa.Schema:
    from schemas.outputs import ROULETTE_ROUND_REPLAYS

    return pa.schema([pa.field("coin_face", pa.string()) if f.name == "pocket" else f for f in ROULETTE_ROUND_REPLAYS])


REPLAYS = _replays_schema()
SPEC = outcomes.OutcomeGame(name=NAME, out_replays=OUT_REPLAYS, replay_schema=REPLAYS, outcome_column="coin_face",
                            load_rules=load_coin_rules, audit=audit_flip_columns, valid=valid_face)


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> outcomes.OutcomeTable:
    return outcomes.table_info(SPEC, row, limits)


def audit_tables(table: outcomes.OutcomeTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None) -> dict[str, pa.Table]:
    return outcomes.audit_tables(table, shoes, rounds, bets)
