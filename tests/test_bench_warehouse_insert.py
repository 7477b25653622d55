"""`python -m bench.warehouse_insert`: the load's settlements insert measured whole, with no column, and
column by column, on a small hand-made settlements file. Nothing about speed is asserted: that every
insert it times took every row of the file, and that a folder without settlements is named."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench.warehouse_insert import anatomy, main
from schemas.outputs import SETTLEMENTS

ROWS = 2_500


def _settlements(n: int) -> pa.Table:
    placed = dt.datetime(2026, 11, 28, 12, tzinfo=dt.UTC)
    values = {
        "business_date": [dt.date(2026, 11, 28)] * n, "table_id": ["T1"] * n,
        "shoe_id": [f"S{i // 500}" for i in range(n)], "round_id": [f"R{i // 50}" for i in range(n)],
        "round_no": [i // 50 % 80 + 1 for i in range(n)], "round_status": ["settled"] * n,
        "bet_id": [f"B{i:07d}" for i in range(n)], "account_id": [f"A{i % 37}" for i in range(n)],
        "placed_at": [placed + dt.timedelta(seconds=i) for i in range(n)],
        "bet_type": [("PLAYER", "BANKER", "TIE")[i % 3] for i in range(n)], "mode": ["commission"] * n,
        "currency": ["EUR"] * n, "stake": [100 * (i % 9 + 1) for i in range(n)],
        "paid": [0] * n, "expected": [0] * n, "delta": [0] * n,
        "source_file": ["bets/part-0.parquet"] * n, "source_row": list(range(n)), "added_stake": [None] * n,
    }
    return pa.table(values, schema=SETTLEMENTS)


@pytest.fixture
def run_output(tmp_path):
    (tmp_path / "out" / "settlements").mkdir(parents=True)
    table = _settlements(ROWS)
    pq.write_table(table.slice(0, 1000), tmp_path / "out" / "settlements" / "group-a.parquet")
    pq.write_table(table.slice(1000), tmp_path / "out" / "settlements" / "group-b.parquet")
    return tmp_path / "out"


def test_every_insert_takes_every_row(run_output, tmp_path):
    results = anatomy(run_output, scratch=tmp_path)
    assert [r["what"] for r in results] == ["every column", "run_id only (the rest NULL)", *SETTLEMENTS.names]
    assert all(r["rows"] == ROWS and r["cpu_s"] >= 0 for r in results)
    assert not list(tmp_path.glob("tmp*"))  # the scratch warehouse is gone


def test_the_report_and_a_folder_without_settlements(run_output, tmp_path, capsys):
    assert main([str(run_output)]) == 0
    out = capsys.readouterr().out
    assert f"({ROWS:,} rows)" in out and "| every column |" in out and "| bet_id |" in out
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "empty")):
        anatomy(tmp_path / "empty")
