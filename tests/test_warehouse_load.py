"""The warehouse load that runs while the audit goes on (pipelines.warehouse.WarehouseLoad): it gives
the same warehouse as a load after the run, inserts every row exactly once however its files were
announced, and leaves the warehouse as it was when the run fails."""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipelines.audit import new_run_id, run
from pipelines.warehouse import (
    FILES_PER_STATEMENT,
    STORAGE_VERSION,
    WarehouseLoad,
    load,
    storage_version,
    upgraded_copy,
)
from pitboss.nightly import nightly_audit
from pitboss.recorder import GenerateConfig, generate
from schemas.outputs import OUTPUTS

TABLES = tuple(OUTPUTS)  # every game's replays (and casino stud's ledger), settlements, findings, quarantine


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    """Four tables (four table-day groups, so several replay and settlement files), faults planted."""
    folder = tmp_path_factory.mktemp("night") / "in"
    generate(GenerateConfig(out=folder, tables=4, rounds_per_table=120, bets_per_round=20, seed=11,
                            fault_rate=0.02, quiet=True))
    return folder


@pytest.fixture(scope="module")
def audited(night, tmp_path_factory):
    """A finished run (its manifest) and a warehouse loaded from it after the run, the reference."""
    root = tmp_path_factory.mktemp("reference")
    record = run(["--input", str(night), "--output", str(root / "out")])
    load(str(root / "audit.duckdb"), record.__dict__)
    return record.__dict__, root / "audit.duckdb"


def contents(warehouse: Path) -> dict[str, list]:
    con = duckdb.connect(str(warehouse), read_only=True)
    out = {name: con.execute(f"SELECT * EXCLUDE (run_id) FROM {name} ORDER BY ALL").fetchall() for name in TABLES}
    out["runs"] = con.execute("SELECT count(*) FROM audit_runs").fetchall()
    out["reference"] = con.execute("SELECT * FROM theoretical_rtp ORDER BY ALL").fetchall()
    con.close()
    return out


def rows_in_files(manifest: dict, name: str) -> int:
    return sum(pq.ParquetFile(o["path"]).metadata.num_rows for o in manifest["outputs"][name])


def test_the_load_during_the_audit_gives_the_warehouse_of_a_load_after_it(night, audited, tmp_path):
    manifest, reference = audited
    done = nightly_audit(str(night), str(tmp_path / "out"), str(tmp_path / "audit.duckdb"), validate=False)
    record, counts = done.record, done.loaded
    told = [o for name in ("round_replays", "settlements") for o in record.outputs[name]]
    assert len(told) >= 8  # four groups: a replay file and a settlement file each
    assert contents(tmp_path / "audit.duckdb") == contents(reference)
    assert counts == {name: rows_in_files(record.__dict__, name) for name in TABLES}


def test_the_in_process_runner_announces_every_output_file_as_it_is_written(night, tmp_path):
    announced: list[tuple[str, str]] = []
    record = run(["--input", str(night), "--output", str(tmp_path / "out")],
                 on_output_file=lambda name, path: announced.append((name, path)))
    # (an output with no rows, here blackjack's replays on a baccarat night, gets its empty file after the run)
    assert sorted(announced) == sorted((name, o["path"]) for name in TABLES for o in record.outputs[name]
                                       if not o["path"].endswith("/empty.parquet"))


def _inserted(loading: WarehouseLoad, n: int) -> None:
    """Wait until the background thread has inserted `n` files."""
    deadline = time.monotonic() + 120
    while len(loading.inserted) < n:
        assert time.monotonic() < deadline, "the background thread did not insert the files"
        time.sleep(0.05)


def test_a_file_inserted_twice_or_not_in_the_manifest_is_not_counted_twice(audited, tmp_path):
    manifest, reference = audited
    settlement_files = [o["path"] for o in manifest["outputs"]["settlements"]]
    stray = tmp_path / "stray.parquet"  # a copy of a real file at a path the manifest does not list
    shutil.copyfile(settlement_files[0], stray)
    for odd in (settlement_files[0], str(stray)):
        warehouse = tmp_path / "audit.duckdb"
        warehouse.unlink(missing_ok=True)
        with WarehouseLoad(str(warehouse), manifest["run_id"]) as loading:
            for path in settlement_files:
                loading.insert_soon("settlements", path)
            _inserted(loading, len(settlement_files))
            loading.insert_soon("settlements", odd)
            _inserted(loading, len(settlement_files) + 1)
            counts = loading.finish(manifest)
        assert loading.inserted_early == 0  # every file inserted again, from the manifest
        assert counts["settlements"] == rows_in_files(manifest, "settlements")
        assert contents(warehouse) == contents(reference)


def test_files_inserted_early_are_not_inserted_again(audited, tmp_path):
    manifest, reference = audited
    with WarehouseLoad(str(tmp_path / "audit.duckdb"), manifest["run_id"]) as loading:
        for o in manifest["outputs"]["round_replays"]:
            loading.insert_soon("round_replays", o["path"])
        _inserted(loading, len(manifest["outputs"]["round_replays"]))
        counts = loading.finish(manifest)
    assert loading.inserted_early == len(manifest["outputs"]["round_replays"])
    assert counts["round_replays"] == rows_in_files(manifest, "round_replays")
    assert contents(tmp_path / "audit.duckdb") == contents(reference)


def test_files_that_wait_are_inserted_a_few_at_a_time(audited, tmp_path, monkeypatch):
    """However far the background insert falls behind, a statement takes at most FILES_PER_STATEMENT
    files: finish() waits for the statement under way before inserting the rest on every core."""
    manifest, reference = audited
    statements: list[int] = []
    real = WarehouseLoad._insert

    def slow_insert(self, name, paths):
        statements.append(len(paths))
        time.sleep(0.3 if len(statements) == 1 else 0)  # meanwhile the other files are announced
        real(self, name, paths)

    monkeypatch.setattr(WarehouseLoad, "_insert", slow_insert)
    files = [(name, o["path"]) for name in ("round_replays", "settlements") for o in manifest["outputs"][name]]
    with WarehouseLoad(str(tmp_path / "audit.duckdb"), manifest["run_id"]) as loading:
        for name, path in files:
            loading.insert_soon(name, path)
        _inserted(loading, len(files))
        early = list(statements)
        counts = loading.finish(manifest)
    assert len(files) > 2 * FILES_PER_STATEMENT
    assert max(early) == FILES_PER_STATEMENT and sum(early) == len(files)
    assert loading.inserted_early == len(files)
    assert counts == {name: rows_in_files(manifest, name) for name in TABLES}
    assert contents(tmp_path / "audit.duckdb") == contents(reference)


def test_a_failed_run_leaves_the_warehouse_as_it_was(audited, tmp_path):
    manifest, reference = audited
    warehouse = tmp_path / "audit.duckdb"
    shutil.copyfile(reference, warehouse)
    before = hashlib.sha256(warehouse.read_bytes()).hexdigest()
    with pytest.raises(RuntimeError, match="the audit failed"):
        with WarehouseLoad(str(warehouse), new_run_id()) as loading:
            for o in manifest["outputs"]["settlements"]:
                loading.insert_soon("settlements", o["path"])
            raise RuntimeError("the audit failed")
    assert hashlib.sha256(warehouse.read_bytes()).hexdigest() == before
    assert not warehouse.with_name(warehouse.name + ".loading").exists()


def test_a_load_begun_for_one_run_refuses_another_runs_manifest(audited, tmp_path):
    manifest, _ = audited
    with WarehouseLoad(str(tmp_path / "audit.duckdb"), "some-other-run") as loading:
        with pytest.raises(ValueError, match="is not the run"):
            loading.finish(manifest)
    assert not (tmp_path / "audit.duckdb").exists()


def test_one_load_of_a_warehouse_at_a_time(audited, tmp_path):
    manifest, reference = audited
    warehouse = tmp_path / "audit.duckdb"
    with WarehouseLoad(str(warehouse), manifest["run_id"]) as first:
        with pytest.raises(RuntimeError, match="another load of this warehouse is running"):
            with WarehouseLoad(str(warehouse), new_run_id()):
                pass
        first.finish(manifest)
    assert contents(warehouse) == contents(reference)
    with WarehouseLoad(str(warehouse), new_run_id()):  # free again
        pass


# ---------------------------------------------------------------- pitboss.nightly: suites beside the pipeline


def test_the_nightly_audit_runs_the_suites_and_loads_the_run(night, audited, tmp_path):
    _, reference = audited
    done = nightly_audit(str(night), str(tmp_path / "out"), str(tmp_path / "audit.duckdb"))
    assert done.quality is not None and done.quality.structural_failures == []
    assert done.quality.total_rows > 0
    assert contents(tmp_path / "audit.duckdb") == contents(reference)


def test_a_structural_failure_stops_the_night_before_anything_is_loaded(night, tmp_path):
    from pitboss.nightly import StructuralFailure

    broken = tmp_path / "in"
    shutil.copytree(night, broken)
    for f in (broken / "bets").rglob("*.parquet"):
        pq.write_table(pq.read_table(f).drop_columns(["stake"]), f)
    with pytest.raises(StructuralFailure, match="stake"):
        nightly_audit(str(broken), str(tmp_path / "out"), str(tmp_path / "audit.duckdb"))
    assert not (tmp_path / "audit.duckdb").exists()
    assert not (tmp_path / "out" / "_manifest.json").exists()


def test_a_structural_failure_found_after_the_pipeline_unfinishes_the_run(tmp_path):
    from concurrent.futures import Future

    from audits.validate import ValidationReport
    from pitboss.nightly import StructuralFailure, _stop_if_structural

    manifest = tmp_path / "_manifest.json"
    manifest.write_text("{}")
    quality: Future = Future()
    quality.set_result(ValidationReport(structural_failures=["bets.parquet: column stake is missing"]))
    with pytest.raises(StructuralFailure, match="column stake is missing"):
        _stop_if_structural(quality, unfinish=str(manifest))
    assert not manifest.exists()


# ---------------------------------------------------------------- the reference table across versions

_REFERENCE_LAYOUT = ("SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns "
                     "WHERE table_name = 'theoretical_rtp' ORDER BY ordinal_position")


def test_an_older_warehouses_reference_table_gains_the_selection_key(audited, tmp_path):
    """theoretical_rtp as a version before `selection` wrote it (no such column, no key) is brought to the
    fresh layout by the next load: the columns last (selection never null, '-' by default; ruleset_sha256; bundled
    never null), the unique key on (ruleset_sha256, bet_type, mode, selection) and every row per selection and
    text; and by the load after (the key's index, which forbids setting a constraint, is dropped and made again
    around the table's changes)."""
    manifest, reference = audited
    warehouse = tmp_path / "audit.duckdb"
    con = duckdb.connect(str(warehouse))
    con.execute("CREATE TABLE theoretical_rtp (ruleset VARCHAR NOT NULL, bet_type VARCHAR NOT NULL, mode VARCHAR "
                "NOT NULL, rtp DOUBLE NOT NULL, rtp_exact VARCHAR NOT NULL, return_stddev DOUBLE)")
    con.execute("INSERT INTO theoretical_rtp VALUES ('old_ruleset', 'OLD', '-', 0.5, '1/2', NULL)")
    con.close()
    fresh = duckdb.connect(str(reference), read_only=True)
    layout, rows = fresh.execute(_REFERENCE_LAYOUT).fetchall(), fresh.execute(
        "SELECT * FROM theoretical_rtp ORDER BY ALL").fetchall()
    fresh.close()
    assert layout[-3:] == [("selection", "VARCHAR", "NO", "'-'"), ("ruleset_sha256", "VARCHAR", "YES", None),
                           ("bundled", "BOOLEAN", "NO", None)]
    assert any(r[6] == "17" and r[1] == "TOTAL" for r in rows) and not any(r[0] == "old_ruleset" for r in rows)
    for run_id in ("FIRST-LOAD", "SECOND-LOAD"):
        load(str(warehouse), {**manifest, "run_id": run_id})
        c = duckdb.connect(str(warehouse), read_only=True)
        try:
            assert c.execute(_REFERENCE_LAYOUT).fetchall() == layout, run_id
            assert c.execute("SELECT * FROM theoretical_rtp ORDER BY ALL").fetchall() == rows, run_id
            assert c.execute("SELECT is_unique, sql FROM duckdb_indexes() WHERE table_name = 'theoretical_rtp'"
                             ).fetchall() == [(True, 'CREATE UNIQUE INDEX theoretical_rtp_key ON theoretical_rtp('
                                                     'ruleset_sha256, bet_type, "mode", selection);')], run_id
        finally:
            c.close()


def test_a_reference_table_before_the_texts_were_priced_keeps_its_rows_as_bundled_until_a_load(audited, tmp_path):
    """theoretical_rtp as the version before the texts were priced wrote it (selection, its key on the ruleset id)
    opened by a load that writes no reference rows (the surveillance's): its rows stay, each the bundled file of
    its id (bundled true, its text not named), so the rounds loaded before the texts were kept are still priced;
    the next audit's load replaces them by the texts' own."""
    from pipelines.warehouse import open_for_load

    manifest, _ = audited
    warehouse = tmp_path / "audit.duckdb"
    con = duckdb.connect(str(warehouse))
    con.execute("CREATE TABLE theoretical_rtp (ruleset VARCHAR NOT NULL, bet_type VARCHAR NOT NULL, mode VARCHAR "
                "NOT NULL, rtp DOUBLE NOT NULL, rtp_exact VARCHAR NOT NULL, return_stddev DOUBLE, selection VARCHAR "
                "NOT NULL DEFAULT '-')")
    con.execute("CREATE UNIQUE INDEX theoretical_rtp_key ON theoretical_rtp (ruleset, bet_type, mode, selection)")
    con.execute("INSERT INTO theoretical_rtp VALUES ('old_ruleset', 'OLD', '-', 0.5, '1/2', NULL, '-')")
    con.close()
    open_for_load(str(warehouse)).close()
    with duckdb.connect(str(warehouse), read_only=True) as c:
        assert c.execute("SELECT * FROM theoretical_rtp").fetchall() == [
            ("old_ruleset", "OLD", "-", 0.5, "1/2", None, "-", None, True)]
    load(str(warehouse), manifest)
    with duckdb.connect(str(warehouse), read_only=True) as c:
        assert c.execute("SELECT count(*) FILTER (WHERE ruleset = 'old_ruleset'), count(*) FILTER (WHERE "
                         "ruleset_sha256 IS NULL), count(*) FROM theoretical_rtp").fetchone()[:2] == (0, 0)


def test_a_night_whose_commit_outgrows_its_memory_limit_is_loaded_again_unlimited(audited, tmp_path, monkeypatch):
    """DuckDB's checkpoint fails fatally above COMMIT_MEMORY_LIMIT, and its need grows with the night: the load
    then starts again from the manifest and commits without the limit, to the same warehouse."""
    import pipelines.warehouse as warehouse_module

    manifest, reference = audited
    monkeypatch.setattr(warehouse_module, "COMMIT_MEMORY_LIMIT", "1MB")
    warehouse = tmp_path / "audit.duckdb"
    with WarehouseLoad(str(warehouse), manifest["run_id"]) as loading:
        for o in manifest["outputs"]["settlements"][:2]:
            loading.insert_soon("settlements", o["path"])
        loading.finish(manifest)
    assert loading.unlimited_commit
    assert contents(warehouse) == contents(reference)
    assert not any(p.name.endswith((".loading", ".reloading")) for p in tmp_path.iterdir())


def test_a_night_within_the_commit_memory_limit_is_loaded_once(audited, tmp_path):
    manifest, reference = audited
    with WarehouseLoad(str(tmp_path / "audit.duckdb"), manifest["run_id"]) as loading:
        loading.finish(manifest)
    assert not loading.unlimited_commit
    assert contents(tmp_path / "audit.duckdb") == contents(reference)


def _old_format_warehouse(manifest: dict, path: Path, monkeypatch) -> Path:
    """The run of `manifest` loaded into `path` the way a pitboss writing storage v1.0.0 did."""
    import pipelines.warehouse as warehouse_module

    with monkeypatch.context() as m:
        m.setattr(warehouse_module, "STORAGE_VERSION", "v1.0.0")
        load(str(path), manifest)
    assert storage_version(path) == "v1.0.0+"
    return path


def _objects(warehouse: Path) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    tables = con.execute("SELECT table_name, column_name, data_type, is_nullable FROM duckdb_columns() "
                         "WHERE database_name = current_database() ORDER BY ALL").fetchall()
    views = con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall()
    runs = con.execute("SELECT * FROM audit_runs ORDER BY run_id").fetchall()
    con.close()
    return [*tables, *views, *runs]


def test_a_warehouse_in_an_older_storage_format_is_copied_whole_into_the_current_one(audited, tmp_path, monkeypatch):
    manifest, _ = audited
    older = _old_format_warehouse(manifest, tmp_path / "older.duckdb", monkeypatch)
    copy = tmp_path / 'night-2026 "12".duckdb'  # (DuckDB names the database after the file: quoted in the copy)
    assert upgraded_copy(older, copy)
    assert storage_version(copy) == STORAGE_VERSION + "+"
    assert contents(copy) == contents(older)
    assert _objects(copy) == _objects(older)
    # one already in the current format is copied byte for byte
    assert not upgraded_copy(copy, tmp_path / "again.duckdb")
    assert (tmp_path / "again.duckdb").read_bytes() == copy.read_bytes()


def test_the_next_load_of_an_older_format_warehouse_upgrades_it_and_keeps_its_nights(audited, tmp_path, monkeypatch):
    manifest, reference = audited
    warehouse = _old_format_warehouse(manifest, tmp_path / "audit.duckdb", monkeypatch)
    again = {**manifest, "run_id": manifest["run_id"] + "-again"}
    with WarehouseLoad(str(warehouse), again["run_id"]) as loading:
        loading.finish(again)
    assert loading.upgraded
    assert storage_version(warehouse) == STORAGE_VERSION + "+"
    after = contents(warehouse)
    assert after.pop("runs") == [(2,)]  # the first run kept, superseded by the second
    assert after == {k: v for k, v in contents(reference).items() if k != "runs"}
