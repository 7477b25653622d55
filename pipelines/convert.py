"""Arrow <-> engine: turn one shoe's canonical input rows into engine arguments and the engine's
results into output rows. No Beam here, so it is tested without a pipeline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting_audit import BetColumns
from engine.dealing_audit import RecordedRound
from engine.findings import Finding
from engine.ruleset import load_ruleset
from engine.shoe_audit import ShoeAudit, ShoeRecord, TableInfo, audit_shoe
from schemas.outputs import FINDINGS, QUARANTINE, ROUND_REPLAYS, SETTLEMENTS


def table_infos(tables: pa.Table, limits: pa.Table) -> dict[str, TableInfo]:
    """table_id -> TableInfo with its ruleset (loaded once per process) and limits."""
    by_table: dict[str, dict[str, tuple[int, int]]] = {}
    for row in limits.to_pylist():
        by_table.setdefault(row["table_id"], {})[row["bet_type"]] = (row["min_stake"], row["max_stake"])
    return {
        row["table_id"]: TableInfo(row["table_id"], load_ruleset(row["ruleset"]), row["currency"],
                                   row["table_max"], by_table.get(row["table_id"], {}))
        for row in tables.to_pylist()
    }


def _dates(ts: pa.ChunkedArray | pa.Array) -> pa.Array:
    return pc.cast(pc.cast(ts, pa.timestamp("us")), pa.date32())


def audit_shoe_tables(
    table: TableInfo, shoe_row: Mapping, rounds: pa.Table, bets: pa.Table
) -> tuple[pa.Table, pa.Table, pa.Table, pa.Table]:
    """Audit one shoe from its canonical rows. Returns (round_replays, settlements, findings, quarantine)."""
    rounds = rounds.sort_by([("round_no", "ascending"), ("round_id", "ascending")])
    recorded = [
        RecordedRound(r["round_id"], r["round_no"], r["status"], tuple(r["player_cards"] or ()),
                      tuple(r["banker_cards"] or ()), r["player_score"], r["banker_score"], r["outcome"])
        for r in rounds.select(["round_id", "round_no", "status", "player_cards", "banker_cards", "player_score",
                                "banker_score", "outcome"]).to_pylist()
    ]
    closed = pc.cast(rounds["betting_closed_at"], pa.int64()).to_numpy(zero_copy_only=False)
    round_index = pc.index_in(bets["round_id"], rounds["round_id"]).to_numpy(zero_copy_only=False)
    columns = BetColumns(
        bet_id=bets["bet_id"].to_numpy(zero_copy_only=False),
        round_index=round_index.astype(np.int64),
        account_id=bets["account_id"].to_numpy(zero_copy_only=False),
        placed_at=pc.cast(bets["placed_at"], pa.int64()).to_numpy(zero_copy_only=False),
        bet_type=bets["bet_type"].to_numpy(zero_copy_only=False),
        mode=bets["mode"].to_numpy(zero_copy_only=False),
        stake=bets["stake"].to_numpy(zero_copy_only=False),
        paid=bets["paid"].to_numpy(zero_copy_only=False),
    )
    shoe = ShoeRecord(shoe_row["shoe_id"], tuple(shoe_row["cards"] or ()), shoe_row["decks"], shoe_row["cut_index"])
    result = audit_shoe(table, shoe, recorded, closed, columns)
    round_dates = _dates(rounds["betting_opened_at"])
    shoe_date = _dates(pa.array([shoe_row["opened_at"]], pa.timestamp("us", tz="UTC")))[0].as_py()
    return (
        _replays(table.table_id, shoe.shoe_id, result, round_dates),
        _settlements(table, shoe.shoe_id, rounds, bets, columns, result, round_dates),
        findings_table(result.findings, dict(zip(rounds["round_id"].to_pylist(), round_dates.to_pylist(),
                                                 strict=True)), shoe_date),
        _unsettleable(bets, result, round_dates, columns),
    )


def _replays(table_id: str, shoe_id: str, result: ShoeAudit, round_dates: pa.Array) -> pa.Table:
    rows = []
    for rep, date in zip(result.round_replays, round_dates.to_pylist(), strict=True):
        row = {k: getattr(rep, k) for k in ROUND_REPLAYS.names if hasattr(rep, k)}
        row.update(business_date=date, table_id=table_id, shoe_id=shoe_id, finding_kinds=rep.findings)
        rows.append(row)
    return pa.Table.from_pylist(rows, ROUND_REPLAYS)


def _settlements(table, shoe_id, rounds, bets, columns, result, round_dates) -> pa.Table:
    keep = np.flatnonzero(result.settleable)
    idx = pa.array(columns.round_index[keep])
    b = bets.take(pa.array(keep))
    expected = pa.array(result.expected[keep], pa.int64())
    n = len(keep)
    return pa.table({
        "business_date": round_dates.take(idx),
        "table_id": pa.array([table.table_id] * n, pa.string()),
        "shoe_id": pa.array([shoe_id] * n, pa.string()),
        "round_id": b["round_id"],
        "round_no": rounds["round_no"].take(idx),
        "round_status": rounds["status"].take(idx),
        "bet_id": b["bet_id"], "account_id": b["account_id"], "placed_at": b["placed_at"],
        "bet_type": b["bet_type"], "mode": b["mode"], "currency": b["currency"],
        "stake": b["stake"], "paid": b["paid"], "expected": expected,
        "delta": pc.subtract(b["paid"], expected),
        "source_file": b["_source_file"], "source_row": b["_source_row"],
    }, schema=SETTLEMENTS)


def _unsettleable(bets, result, round_dates, columns) -> pa.Table:
    rows = np.flatnonzero(~result.settleable)
    if rows.size == 0:
        return QUARANTINE.empty_table()
    b = bets.take(pa.array(rows))
    return quarantine_table(b, "bets", "the bet's round is recorded as settled without two complete hands",
                            round_dates.take(pa.array(columns.round_index[rows])), "bet_id")


def findings_table(findings: Sequence[Finding], round_dates: Mapping[str, object], default_date) -> pa.Table:
    rows = []
    for f in findings:
        row = f.as_row()
        row["business_date"] = round_dates.get(f.round_id, default_date) if f.round_id else default_date
        rows.append(row)
    return pa.Table.from_pylist(rows, FINDINGS)


def quarantine_table(rows: pa.Table, source_table: str, reason: str | pa.Array, dates, id_column: str | None
                     ) -> pa.Table:
    """Quarantine rows with the reason; `rows` must carry _source_file/_source_row."""
    import json

    n = rows.num_rows
    record_cols = [c for c in rows.column_names if not c.startswith("_") and c != "reason"]
    records = [json.dumps(r, default=str, sort_keys=True) for r in rows.select(record_cols).to_pylist()]
    reasons = reason if isinstance(reason, pa.Array | pa.ChunkedArray) else pa.array([reason] * n, pa.string())
    ids = (pc.cast(rows[id_column], pa.string()) if id_column and id_column in rows.column_names
           else pa.nulls(n, pa.string()))
    return pa.table({
        "business_date": dates if dates is not None else pa.nulls(n, pa.date32()),
        "source_table": pa.array([source_table] * n, pa.string()),
        "source_file": rows["_source_file"], "source_row": rows["_source_row"],
        "reason": reasons, "record_id": ids, "record": pa.array(records, pa.string()),
    }, schema=QUARANTINE)
