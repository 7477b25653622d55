"""The settlements stored each fact once (issue 33): settlement_bets, settlement_rounds and source_files
behind the `settlements` view (audits/views/00_settlements.sql). The oracle is the layout before it: one wide
table of every column of the run's settlements Parquet, filled straight from the files as the load did
(pipelines.warehouse.wide_settlements_sql). The view must give its columns, types and rows exactly, on a
recorded night of every game (two days, cancelled rounds, repeated bet ids, bets on unknown rounds), then
the ruleset text each bet's round was settled under (ruleset_sha256, issue 44); a warehouse written with the
old layout is converted at its next load, in the load's transaction."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipelines.audit import run
from pipelines.warehouse import (
    ROUND_COLUMNS,
    WarehouseLoad,
    load,
    load_surveillance,
    open_for_load,
    wide_settlements_sql,
)
from pitboss.recorder import GenerateConfig, generate
from schemas.outputs import SETTLEMENTS

GAMES = ("baccarat", "blackjack", "roulette", "sic_bo", "casino_stud")
ALL = "SELECT * FROM settlements ORDER BY ALL"
WIDE = "SELECT * EXCLUDE (ruleset_sha256) FROM settlements ORDER BY ALL"  # the view's columns the wide table had
TEXT = ("ruleset_sha256", "VARCHAR")  # the view's last column (the wide table had none)


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> dict:
    """A recorded night of every game over two business days, faults and cancellations planted often,
    audited: its manifest."""
    root = tmp_path_factory.mktemp("layout")
    generate(GenerateConfig(out=root / "in", tables=1, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, days=2, rounds_per_table=40, bets_per_round=8, seed=33,
                            fault_rate=0.03, cancel_rate=0.05, quiet=True))
    return run(["--input", str(root / "in"), "--output", str(root / "out")]).__dict__


def _files(manifest: dict) -> list[str]:
    return [o["path"] for o in manifest["outputs"]["settlements"]]


def wide(con: duckdb.DuckDBPyConnection, manifest: dict, run_id: str, days_earlier: int = 0) -> None:
    """The run's settlements Parquet into a wide `settlements` table as the load before issue 33 inserted
    them (its dates `days_earlier`, to stand for another night)."""
    con.execute(wide_settlements_sql())
    cols = ", ".join(f'"{c}"' for c in SETTLEMENTS.names)
    con.execute(f"INSERT INTO settlements (run_id, {cols}) SELECT ?, * REPLACE (business_date - CAST(? AS INTEGER) "
                f"AS business_date) FROM read_parquet(?)", [run_id, days_earlier, _files(manifest)])


def oracle(manifest: dict, run_id: str) -> tuple[list, list]:
    """(DESCRIBE rows as (name, type), every row ordered) of the old wide table holding the run."""
    con = duckdb.connect()
    try:
        wide(con, manifest, run_id)
        return con.execute("SELECT column_name, column_type FROM (DESCRIBE settlements)").fetchall(), \
            con.execute(ALL).fetchall()
    finally:
        con.close()


def seen(path: Path, sql: str = ALL, params: list | None = None) -> list:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def layout(path: Path) -> list:
    return seen(path, "SELECT column_name, column_type FROM (DESCRIBE settlements)")


def test_the_night_has_what_the_view_must_give_back(night):
    """The fixture is the realistic case: every game, both days, cancelled rounds, a bet_id read twice in a
    round, bets on rounds that do not exist (quarantined by the audit, never settled)."""
    con = duckdb.connect()
    s, q = f"read_parquet({_files(night)})", f"read_parquet({[o['path'] for o in night['outputs']['quarantine']]})"
    found = [o["path"] for o in night["outputs"]["findings"]]
    try:
        tables = [i["path"] for i in night["inputs"]["tables"]]
        games = con.execute(f"SELECT DISTINCT game FROM {s} JOIN read_parquet(?) USING (table_id) ORDER BY 1",
                            [tables]).fetchall()
        assert [g for (g,) in games] == sorted(GAMES)
        assert con.execute(f"SELECT count(DISTINCT business_date) FROM {s}").fetchone()[0] == 2
        assert con.execute(f"SELECT count(*) FROM {s} WHERE round_status = 'cancelled'").fetchone()[0] > 0
        assert con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {s} GROUP BY round_id, bet_id HAVING count(*) > 1)"
                           ).fetchone()[0] > 0
        assert con.execute(f"SELECT count(*) FROM read_parquet({found}) WHERE kind = 'DUPLICATE_BET'"
                           ).fetchone()[0] > 0
        unknown = con.execute(f"SELECT list(record_id) FROM {q} WHERE source_table = 'bets' AND reason LIKE "
                              f"'%round_id not found%'").fetchone()[0]
        assert unknown and not con.execute(f"SELECT count(*) FROM {s} WHERE bet_id IN (SELECT unnest(?))",
                                           [unknown]).fetchone()[0]  # (quarantined, not settlements rows)
        assert con.execute(f"SELECT count(*) FROM {s} WHERE delta <> paid - expected").fetchone()[0] == 0
    finally:
        con.close()


def test_the_view_is_the_wide_table_column_for_column_and_row_for_row(night, tmp_path):
    warehouse = tmp_path / "audit.duckdb"
    counts = load(str(warehouse), night)
    described, rows = oracle(night, night["run_id"])
    assert layout(warehouse) == [*described, TEXT]
    assert seen(warehouse, WIDE) == rows and counts["settlements"] == len(rows) > 0
    # each fact once: a row per round of the run and per input file, and no more
    distinct = ", ".join(ROUND_COLUMNS)
    assert seen(warehouse, "SELECT count(*) FROM settlement_rounds") == seen(
        warehouse, f"SELECT count(*) FROM (SELECT DISTINCT {distinct} FROM settlements)") == seen(
        warehouse, "SELECT count(DISTINCT round_id) FROM settlements")
    assert seen(warehouse, "SELECT count(*) FROM source_files") == seen(
        warehouse, "SELECT count(DISTINCT source_file) FROM settlements")
    assert seen(warehouse, "SELECT table_type FROM information_schema.tables WHERE table_name = 'settlements'") == [
        ("VIEW",)]
    stored = {c for (c,) in seen(warehouse, "SELECT column_name FROM duckdb_columns() WHERE table_name = "
                                            "'settlement_bets'")}
    assert not stored & {*ROUND_COLUMNS, "delta", "source_file", "ruleset_sha256"}


def test_each_bet_names_the_text_its_round_was_settled_under(night, tmp_path):
    """The ruleset in force when the bet's round's betting closed (the table's table_rulesets row with the
    greatest effective_from at or before it, else tables.ruleset: docs/data-contract.md), worked out here from
    the input; the text is its bundled file, whose bytes' sha256 the view names."""
    warehouse = tmp_path / "audit.duckdb"
    load(str(warehouse), night)
    games = Path(__file__).resolve().parents[1] / "engine" / "games"

    def read(name: str, columns: list[str]) -> list[dict]:
        return [row for i in night["inputs"][name] for row in pq.read_table(i["path"], columns=columns).to_pylist()]

    tables = {t["table_id"]: t for t in read("tables", ["table_id", "game", "ruleset"])}
    changes = sorted(read("table_rulesets", ["table_id", "ruleset", "effective_from"]),
                     key=lambda c: c["effective_from"])

    def text(table_id: str, closed) -> str:
        ruleset = tables[table_id]["ruleset"]
        for c in changes:
            if c["table_id"] == table_id and c["effective_from"] <= closed:
                ruleset = c["ruleset"]
        return hashlib.sha256((games / tables[table_id]["game"] / "rulesets" / f"{ruleset}.toml").read_bytes()
                              ).hexdigest()

    closed = {(r["table_id"], r["shoe_id"], r["round_id"]): r["betting_closed_at"]
              for r in read("rounds", ["table_id", "shoe_id", "round_id", "betting_closed_at"])}
    named = seen(warehouse, "SELECT DISTINCT table_id, shoe_id, round_id, ruleset_sha256 FROM settlements")
    assert len(named) == len({row[:3] for row in named}) > 0  # one text a round
    assert len({row[3] for row in named if row[0] == "T01-BAC8X"}) == 2  # (the night's change of ruleset)
    assert [row[3] for row in named] == [text(row[0], closed[row[:3]]) for row in named]


def test_a_rerun_replaces_its_dates_rounds_and_files(night, tmp_path):
    warehouse = tmp_path / "audit.duckdb"
    load(str(warehouse), night)
    load(str(warehouse), {**night, "run_id": "RERUN"})
    _, rows = oracle(night, "RERUN")
    assert seen(warehouse, WIDE) == rows
    for table in ("settlement_bets", "settlement_rounds", "source_files"):
        assert seen(warehouse, f"SELECT DISTINCT run_id FROM {table}") == [("RERUN",)], table


def _old_warehouse(path: Path, night: dict) -> list:
    """A warehouse as the code before issue 33 left it: every table of a load, settlements one wide table
    holding a night a week earlier (run OLD), the views made over it. Returns its settlements rows."""
    con = open_for_load(str(path))
    try:
        con.execute("DROP VIEW settlements")
        for table in ("settlement_bets", "settlement_rounds", "source_files"):
            con.execute(f"DROP TABLE {table}")
        wide(con, night, "OLD", days_earlier=7)
        con.execute("INSERT INTO audit_runs (run_id, business_dates) SELECT 'OLD', list(DISTINCT business_date) "
                    "FROM settlements")
        con.execute("CREATE OR REPLACE VIEW discrepancies AS SELECT * FROM settlements WHERE delta <> 0")
        return con.execute(ALL).fetchall()
    finally:
        con.close()


def test_a_warehouse_with_the_wide_table_is_converted_at_the_next_load(night, tmp_path):
    warehouse = tmp_path / "audit.duckdb"
    before = _old_warehouse(warehouse, night)
    assert seen(warehouse, "SELECT table_type FROM information_schema.tables WHERE table_name = 'settlements'") == [
        ("BASE TABLE",)]
    load(str(warehouse), night)
    described, rows = oracle(night, night["run_id"])
    assert layout(warehouse) == [*described, TEXT]
    assert seen(warehouse, "SELECT * EXCLUDE (ruleset_sha256) FROM settlements WHERE run_id = 'OLD' ORDER BY ALL"
                ) == before
    assert seen(warehouse, "SELECT * EXCLUDE (ruleset_sha256) FROM settlements WHERE run_id <> 'OLD' ORDER BY ALL"
                ) == rows
    # the converted rounds were settled before the texts were kept: they name none
    assert seen(warehouse, "SELECT DISTINCT ruleset_sha256 FROM settlements WHERE run_id = 'OLD'") == [(None,)]
    assert seen(warehouse, "SELECT table_type FROM information_schema.tables WHERE table_name = 'settlements'") == [
        ("VIEW",)]
    # the views over it answer again (discrepancies: as the release's file makes it)
    assert seen(warehouse, "SELECT count(*) FROM discrepancies") == seen(
        warehouse, "SELECT count(*) FROM settlements WHERE delta <> 0")
    assert seen(warehouse, "SELECT count(*) FROM settlements")[0][0] == len(before) + len(rows)


def test_a_failed_load_leaves_the_wide_table_as_it_was(night, tmp_path):
    warehouse = tmp_path / "audit.duckdb"
    _old_warehouse(warehouse, night)
    digest = hashlib.sha256(warehouse.read_bytes()).hexdigest()
    with pytest.raises(RuntimeError, match="the audit failed"):
        with WarehouseLoad(str(warehouse), "FAILED") as loading:
            for path in _files(night):
                loading.insert_soon("settlements", path)
            raise RuntimeError("the audit failed")  # (the migration ran in the staging copy's transaction)
    assert hashlib.sha256(warehouse.read_bytes()).hexdigest() == digest


def test_a_surveillance_load_converts_the_wide_table_too(night, tmp_path):
    warehouse = tmp_path / "audit.duckdb"
    before = _old_warehouse(warehouse, night)
    load_surveillance(str(warehouse), {
        "run_id": "SURV", "audit_run_id": "OLD", "started_at": "2026-12-01T00:00:00+00:00",
        "finished_at": "2026-12-01T00:01:00+00:00", "runner": "test", "code_version": "test", "input_dir": "in",
        "output_dir": "out", "business_dates": [], "alpha": 0.05, "detectors": [], "outputs": {}})
    assert seen(warehouse, WIDE) == before
    assert seen(warehouse, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'settlements'") == [(0,)]


def test_two_rounds_sharing_a_key_stop_the_load(night, tmp_path, monkeypatch):
    """The round key is a 64-bit hash of the round's attributes: two different rounds of a run with one key
    would give a bet the wrong round, so the load stops and the warehouse stays as it was."""
    import pipelines.warehouse as warehouse_module

    warehouse = tmp_path / "audit.duckdb"
    monkeypatch.setattr(warehouse_module, "_ROUND_KEY", 'hash("table_id")')  # every round of a table: one key
    with pytest.raises(RuntimeError, match="share the round_key"):
        load(str(warehouse), night)
    assert not warehouse.exists()
