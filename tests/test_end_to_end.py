"""The issue's "done when": on a recorded day with planted faults the findings are exactly the
planted faults (per kind, on the right rows); a fault-free day has none; a dataset with only the
contract's required columns audits just as well."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.audit import run
from pitboss.faultcheck import compare
from pitboss.recorder import GenerateConfig, generate
from pitboss.recorder.blackjack import BLACKJACK_FAULT_KINDS
from pitboss.recorder.faults import FAULT_KINDS
from schemas.contract import OPTIONAL_TABLES, TABLE_NAMES, required_columns


@pytest.fixture(scope="module")
def faulty_day(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    generate(GenerateConfig(out=tmp / "data", tables=4, blackjack_tables=2, rounds_per_table=150, seed=11,
                            fault_rate=0.01, quiet=True))
    run(["--input", str(tmp / "data"), "--output", str(tmp / "out")])
    return tmp


def test_findings_are_exactly_the_planted_faults(faulty_day):
    faults = pq.read_table(faulty_day / "data" / "faults.parquet")
    findings = pq.read_table(faulty_day / "out" / "findings")
    scores, missed, unexplained = compare(faults, findings)
    assert missed == [] and unexplained == []
    # every kind the recorder plants (baccarat's and blackjack's) was planted, and found
    assert {s.kind for s in scores} == set(FAULT_KINDS) | set(BLACKJACK_FAULT_KINDS)
    assert all(s.recall == 1 and s.precision == 1 for s in scores)


def test_counts_add_up(faulty_day):
    bets_in = sum(pq.ParquetFile(p).metadata.num_rows for p in (faulty_day / "data" / "bets").rglob("*.parquet"))
    settled = pq.read_table(faulty_day / "out" / "settlements").num_rows
    quarantined = pq.read_table(faulty_day / "out" / "quarantine").num_rows
    assert bets_in == settled + quarantined


def test_a_fault_free_day_yields_zero_findings(tmp_path):
    generate(GenerateConfig(out=tmp_path / "data", tables=4, blackjack_tables=2, rounds_per_table=80, seed=3,
                            fault_rate=0, quiet=True))
    run(["--input", str(tmp_path / "data"), "--output", str(tmp_path / "out")])
    assert pq.read_table(tmp_path / "out" / "findings").num_rows == 0
    assert pq.read_table(tmp_path / "out" / "quarantine").num_rows == 0


def test_minimum_columns_audit_the_same(faulty_day, tmp_path):
    slim = tmp_path / "slim"
    for table in (*TABLE_NAMES, *OPTIONAL_TABLES):  # (table_rulesets: the recorder's ruleset change)
        src = faulty_day / "data" / f"{table}.parquet"
        folder = faulty_day / "data" / table
        files = [src] if src.exists() else sorted(folder.rglob("*.parquet")) if folder.exists() else []
        for i, f in enumerate(files):
            target = slim / table / f"part-{i}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            present = set(pq.read_schema(f).names)  # (a game's own columns are in its tables' files only)
            pq.write_table(pq.read_table(f, columns=[c for c in required_columns(table) if c in present]), target)
    run(["--input", str(slim), "--output", str(tmp_path / "out")])
    ids = ["kind", "table_id", "shoe_id", "round_id", "bet_id", "expected"]
    a = pq.read_table(faulty_day / "out" / "findings", columns=ids)
    b = pq.read_table(tmp_path / "out" / "findings", columns=ids)
    assert b.num_rows > 0 and a.equals(b)
    assert pq.read_table(faulty_day / "out" / "settlements", columns=["bet_id", "expected", "delta"]).equals(
        pq.read_table(tmp_path / "out" / "settlements", columns=["bet_id", "expected", "delta"]))


def test_demo_command_reports_full_recall_and_precision(tmp_path):
    from typer.testing import CliRunner

    from pitboss.cli import app

    result = CliRunner().invoke(app, ["demo", "--folder", str(tmp_path), "--rounds-per-table", "60"])
    assert result.exit_code == 0, result.output
    assert "Every planted fault found on its row" in result.output
    assert Path(tmp_path / "audit.duckdb").exists()


def test_each_group_of_shoes_has_its_own_sorted_file(faulty_day):
    """Replays and settlements are written one file per table-day group of shoes, straight after its
    audit: a shoe's rows are all in one file, each file's rows are in the output's sort order, and
    there are as many files as table-days whose shoes have settled bets (counted from the input)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from schemas.outputs import SORT_KEYS

    files = sorted((faulty_day / "out" / "settlements").glob("*.parquet"))
    file_of_shoe: dict[str, str] = {}
    for f in files:
        table = pq.read_table(f)
        assert table.num_rows > 0
        assert table.equals(table.sort_by([(k, "ascending") for k in SORT_KEYS["settlements"]])), f.name
        for shoe in set(table["shoe_id"].to_pylist()):
            assert file_of_shoe.setdefault(shoe, f.name) == f.name, f"shoe {shoe} is in two files"
    shoes = pq.read_table(faulty_day / "data" / "shoes", columns=["shoe_id", "table_id", "opened_at"])
    settled_shoes = pa.array(sorted(file_of_shoe), pa.string())
    settled = shoes.filter(pc.is_in(shoes["shoe_id"], settled_shoes))
    days = pc.cast(pc.cast(settled["opened_at"], pa.timestamp("us")), pa.date32()).to_pylist()
    assert len(files) == len(set(zip(settled["table_id"].to_pylist(), days, strict=True)))


def test_a_night_without_bets_writes_readable_empty_outputs(tmp_path):
    generate(GenerateConfig(out=tmp_path / "data", tables=1, rounds_per_table=20, seed=5, fault_rate=0, quiet=True))
    for f in (tmp_path / "data" / "bets").rglob("*.parquet"):
        pq.write_table(pq.read_table(f).slice(0, 0), f)
    record = run(["--input", str(tmp_path / "data"), "--output", str(tmp_path / "out")])
    assert [Path(o["path"]).name for o in record.outputs["settlements"]] == ["empty.parquet"]
    assert pq.read_table(tmp_path / "out" / "settlements").num_rows == 0
    rounds_in = pq.read_table(tmp_path / "data" / "rounds").num_rows
    assert rounds_in > 0 and pq.read_table(tmp_path / "out" / "round_replays").num_rows == rounds_in
