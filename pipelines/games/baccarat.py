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
