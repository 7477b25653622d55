"""The coin's columns of the data contract (the layer schemas/contract.py holds for a real game): its outcome
column on rounds, and the columns it shares with the other games of one outcome a round (the session's
equipment, a bet's selection)."""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from schemas.contract import CONTRACT, Column

COIN_FACE = Column("coin_face", pa.string(), nullable=True, required=True, games=("coin",),
                   doc="Coin: the face that came up, HEADS or TAILS, as recorded; null when none was recorded.")
SHARED = ("equipment_id", "selection")  # columns of the games whose round is one outcome, the coin's too


def contract_with_coin() -> dict[str, tuple[Column, ...]]:
    """CONTRACT with the coin's columns: its outcome after the other outcome columns of rounds."""
    out = {}
    for table, columns in CONTRACT.items():
        cols = [replace(c, games=(*c.games, "coin")) if c.name in SHARED else c for c in columns]
        if table == "rounds":
            at = [c.name for c in cols].index("dealer_id")
            cols.insert(at, COIN_FACE)
        out[table] = tuple(cols)
    return out
