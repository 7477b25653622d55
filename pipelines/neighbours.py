"""Quarantined neighbours: the bet rows put in quarantine as they were read (schemas.readers.check_rows),
carried to the group of shoes of their round so that the rules that look at the other bets of a round
still see them (engine.betting.QuarantinedBet). They are never settled and never written again: their
quarantine row was written where they were read, so the counts do not change (read = settled +
quarantined, each row once). Names no game's concepts; no Beam here.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import QuarantinedBet
from pipelines.arrow_columns import plain
from schemas.readers import REASON, ROW_RULES

SHOE = "_shoe_id"  # the shoe of the neighbour's round, as the placed bets carry it
NEIGHBOURS = pa.schema([("bet_id", pa.string()), ("round_id", pa.string()), ("account_id", pa.string()),
                        ("bet_type", pa.string()), ("seat", pa.int64()), ("stake", pa.int64()),
                        ("placed_at", pa.timestamp("us", tz="UTC")), (REASON, pa.string()), (SHOE, pa.string())])
# the stakes the audit can count: the contract's row rule on bets.stake (outside it a stake is unknown)
_STAKE = next(r for r in ROW_RULES["bets"] if r.column == "stake" and r.kind == "range")


def neighbour_rows(bad: pa.Table, shoe_ids: pa.Array | pa.ChunkedArray | None = None) -> pa.Table:
    """The bad bet rows (check_rows' bad rows, with `reason`) that name a round, as their neighbours' rules
    read them: a stake outside the contract's range is null (unknown). `shoe_ids`: each row's shoe, null where
    its round is not known (that row is left out: its round's rules are audited nowhere)."""
    n = bad.num_rows

    def column(name: str, type_: pa.DataType):
        return plain(bad[name]).cast(type_) if name in bad.column_names else pa.nulls(n, type_)

    stake = column("stake", pa.int64())
    counted = pc.and_kleene(pc.greater_equal(stake, _STAKE.low), pc.less_equal(stake, _STAKE.high))
    rows = pa.table({
        "bet_id": column("bet_id", pa.string()), "round_id": column("round_id", pa.string()),
        "account_id": column("account_id", pa.string()), "bet_type": column("bet_type", pa.string()),
        "seat": column("seat", pa.int64()),
        "stake": pc.if_else(pc.fill_null(counted, False), stake, pa.scalar(None, pa.int64())),
        "placed_at": column("placed_at", NEIGHBOURS.field("placed_at").type), REASON: column(REASON, pa.string()),
        SHOE: plain(shoe_ids).cast(pa.string()) if shoe_ids is not None else pa.nulls(n, pa.string()),
    }, schema=NEIGHBOURS)
    known = pc.is_valid(rows["round_id"])
    return rows.filter(known if shoe_ids is None else pc.and_(known, pc.is_valid(rows[SHOE])))


def no_neighbours() -> pa.Table:
    return NEIGHBOURS.empty_table()


def of_shoes(neighbours: pa.Table | None, shoe_ids: pa.Array | pa.ChunkedArray) -> pa.Table | None:
    """The neighbours on rounds of the shoes `shoe_ids` (None: none)."""
    if neighbours is None or not neighbours.num_rows:
        return None
    return neighbours.filter(pc.fill_null(pc.is_in(neighbours[SHOE], plain(shoe_ids)), False))


def quarantined_bets(neighbours: pa.Table | None, round_index: dict[str, int], shoe_id: str | None = None
                     ) -> list[QuarantinedBet]:
    """The neighbours on the rounds of `round_index` (round_id -> the round's index in what the engine is
    given), as the engine reads them; with `shoe_id`, only those of that shoe (a neighbour of no known shoe
    goes by its round id)."""
    if neighbours is None or not neighbours.num_rows:
        return []
    placed = pc.cast(pc.cast(neighbours["placed_at"], pa.timestamp("us")), pa.int64()).to_pylist()
    found = []
    for row, at in zip(neighbours.to_pylist(), placed, strict=True):
        k = round_index.get(row["round_id"])
        if k is None or (shoe_id is not None and row[SHOE] not in (None, shoe_id)):
            continue
        found.append(QuarantinedBet(row["bet_id"], k, row["account_id"], row["bet_type"], row["seat"], row["stake"],
                                    at, row[REASON]))
    return found
