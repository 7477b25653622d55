"""Load an audit run's Parquet outputs into the DuckDB warehouse: while the run goes on where its files
can be announced (WarehouseLoad), committed only once it has finished.

The warehouse accumulates nights. A run replaces the business dates it covers (a re-run of a date
never duplicates it), all in one transaction. The load works on a copy of the file that is swapped in
atomically, so a regulator reading the warehouse is never blocked and never sees a half-loaded night.
The file is written in a storage format that DuckDB 1.x clients from 1.3 on can open (STORAGE_VERSION).
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import re
import shutil
import threading
from importlib import resources
from pathlib import Path

import duckdb
import pyarrow as pa

from pipelines.crashpoints import crash_point
from pipelines.games import replay_outputs
from pipelines.progress import advanced, step
from pipelines.theoretical_rtp import THEORETICAL_COLUMNS, TheoreticalRtp, kept_texts
from schemas.outputs import OUTPUTS, SETTLEMENTS, SURVEILLANCE_OUTPUTS

# DuckDB's memory while it inserts beside the audit: it otherwise caches every block it has written
# (up to 80% of the machine), ~0.4 GB at 10M settlements; held to this, it spills and evicts instead,
# at no measurable cost (bench/README.md).
STREAMING_MEMORY_LIMIT = "256MB"
# ... and while finish() inserts what is left on every core. Unlimited, DuckDB held ~0.3 GB more for the
# ~half of the night's settlements left when the pipeline ends (10M full audit: 1,380-1,417 MB against
# 1,066-1,126 MB with this limit over five runs, ~+0.8 s).
FINAL_INSERT_MEMORY_LIMIT = "512MB"
# ... and while the commit checkpoints the run (on one thread: as fast as on two). Unlimited, DuckDB cached
# every block it wrote and the full audit's peak came here, after the pipeline: 10M mixed floor 2,859 MB,
# 1,308 MB held to this (the pipeline's own <= 1,075 MB). At 512 MB the checkpoint fails (it needs one
# ~190 MiB allocation with ~485 MB in use at 10M), so this leaves ~1.5x that.
COMMIT_MEMORY_LIMIT = "768MB"

# Files the background insert takes in one statement. It falls behind the audit (at 10M bets half the
# settlements files were still waiting when the pipeline ended), and finish() waits for the statement
# under way, on one thread, before it inserts the rest on every core: taking everything that waited
# made that one statement of 10-25 files (3-7 s); two files take under a second. (Measured at 10M over
# three runs each: the load after the pipeline 5.5-6.2 -> 4.2-4.8 s.)
FILES_PER_STATEMENT = 2

LOAD = "load"  # the step (pipelines.progress.step): one unit a table loaded, then the commit

# The storage format the warehouse is written in, so regulators on DuckDB 1.x (1.3 on) can open it. Not older: in
# the v1.0-v1.2 formats a table with nested columns (the replays' lists of bets) is not written to the file before
# the commit, and the part DuckDB cannot evict grows with the night (~0.1 GB a 10M night's roulette replays): a
# 100M night's load failed on the streaming memory limit, and no bounded limit fits every night. A warehouse
# written in an older format is copied into this one by its next load (upgraded_copy).
STORAGE_VERSION = "v1.3.0"

_DUCK_TYPES = {
    "date32[day]": "DATE", "string": "VARCHAR", "int8": "TINYINT", "int32": "INTEGER", "int64": "BIGINT",
    "bool": "BOOLEAN", "double": "DOUBLE", "timestamp[us, tz=UTC]": "TIMESTAMPTZ", "list<item: string>": "VARCHAR[]",
    "list<item: int8>": "TINYINT[]", "list<item: list<item: string>>": "VARCHAR[][]",
    "list<item: int32>": "INTEGER[]", "list<item: int64>": "BIGINT[]", "list<item: double>": "DOUBLE[]",
    "list<item: struct<bet_id: string, bet_type: string, selection: string, covered: list<item: int8>>>":
        "STRUCT(bet_id VARCHAR, bet_type VARCHAR, selection VARCHAR, covered TINYINT[])[]",
}  # fmt: skip


def _create_statements() -> list[str]:
    statements = []
    for name, schema in {**OUTPUTS, **SURVEILLANCE_OUTPUTS}.items():
        if name == "settlements":  # three tables behind the settlements view (SETTLEMENT_TABLES)
            continue
        cols = ", ".join(f'"{f.name}" {_DUCK_TYPES[str(f.type)]}' for f in schema)
        statements.append(f"CREATE TABLE IF NOT EXISTS {name} (run_id VARCHAR NOT NULL, {cols})")
    statements += [f"CREATE TABLE IF NOT EXISTS {name} ({cols})" for name, cols in _settlement_tables().items()]
    statements.append(
        "CREATE TABLE IF NOT EXISTS audit_runs (run_id VARCHAR PRIMARY KEY, started_at TIMESTAMPTZ, "
        "finished_at TIMESTAMPTZ, loaded_at TIMESTAMPTZ, runner VARCHAR, code_version VARCHAR, "
        "input_dir VARCHAR, output_dir VARCHAR, business_dates DATE[], inputs JSON, outputs JSON, counts JSON, "
        "superseded_by VARCHAR)"
    )
    # the surveillance runs loaded (pitboss surveil: load_surveillance), as audit_runs holds the audits
    statements.append(
        "CREATE TABLE IF NOT EXISTS surveillance_runs (run_id VARCHAR PRIMARY KEY, audit_run_id VARCHAR, "
        "started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, loaded_at TIMESTAMPTZ, runner VARCHAR, code_version VARCHAR, "
        "input_dir VARCHAR, output_dir VARCHAR, business_dates DATE[], alpha DOUBLE, detectors JSON, outputs JSON, "
        "counts JSON, superseded_by VARCHAR)"
    )
    # reference data for the regulator views (audits/views): exact RTP of every bet of every ruleset text
    # (pipelines/theoretical_rtp.py), and the tables audited. theoretical_rtp's key is (ruleset_sha256, bet_type,
    # mode, selection), held by a unique index. A warehouse written by an older version lacks columns: they are
    # added at the end, where a fresh table has them too (its rows, which the next audit's load replaces, are its
    # bundled files', their text not named). DuckDB will not set a constraint on a table with an index (SET NOT
    # NULL: a dependency error), so the index is dropped first and created again after (a few hundred rows).
    statements.append("DROP INDEX IF EXISTS theoretical_rtp_key")
    statements.append("CREATE TABLE IF NOT EXISTS theoretical_rtp (ruleset VARCHAR NOT NULL, bet_type VARCHAR NOT "
                      "NULL, mode VARCHAR NOT NULL, rtp DOUBLE NOT NULL, rtp_exact VARCHAR NOT NULL, "
                      "return_stddev DOUBLE, selection VARCHAR NOT NULL DEFAULT '-', ruleset_sha256 VARCHAR, "
                      "bundled BOOLEAN NOT NULL)")
    statements.append("ALTER TABLE theoretical_rtp ADD COLUMN IF NOT EXISTS return_stddev DOUBLE")
    # (ADD COLUMN IF NOT EXISTS cannot say NOT NULL: the default fills the old rows, then the constraint is set)
    statements.append("ALTER TABLE theoretical_rtp ADD COLUMN IF NOT EXISTS selection VARCHAR DEFAULT '-'")
    statements.append("ALTER TABLE theoretical_rtp ALTER COLUMN selection SET NOT NULL")
    statements.append("ALTER TABLE theoretical_rtp ADD COLUMN IF NOT EXISTS ruleset_sha256 VARCHAR")
    statements.append("ALTER TABLE theoretical_rtp ADD COLUMN IF NOT EXISTS bundled BOOLEAN")
    statements.append("UPDATE theoretical_rtp SET bundled = true WHERE bundled IS NULL")
    statements.append("ALTER TABLE theoretical_rtp ALTER COLUMN bundled SET NOT NULL")
    statements.append("CREATE UNIQUE INDEX IF NOT EXISTS theoretical_rtp_key ON theoretical_rtp "
                      "(ruleset_sha256, bet_type, mode, selection)")
    statements.append("CREATE TABLE IF NOT EXISTS audited_tables (table_id VARCHAR NOT NULL, game VARCHAR, "
                      "ruleset VARCHAR, currency VARCHAR, table_max BIGINT, run_id VARCHAR NOT NULL)")
    # every ruleset text a run settled with, once by its sha256 (a bundled file as it was, or an operator's):
    # settlement_rounds.ruleset_sha256 and round_rulesets name it; `pitboss audit --rulesets-from-warehouse`
    # settles with it again. A warehouse written before issue 44 gets the table and the column (null in the
    # rounds it held: settled before the texts were kept).
    statements.append("CREATE TABLE IF NOT EXISTS rulesets (sha256 VARCHAR PRIMARY KEY, ruleset VARCHAR NOT NULL, "
                      "game VARCHAR NOT NULL, text VARCHAR NOT NULL, first_run_id VARCHAR NOT NULL)")
    statements.append("ALTER TABLE settlement_rounds ADD COLUMN IF NOT EXISTS ruleset_sha256 VARCHAR")
    return statements


# The settlements, each fact once (issue 33). The Parquet output repeats on every bet its round's attributes,
# its input file's path and delta (= paid - expected); the warehouse keeps on the bet only what is the bet's
# (settlement_bets), the round's attributes once per round (settlement_rounds) and each input file's path once
# (source_files), and the `settlements` view (audits/views/00_settlements.sql) joins them back into the
# output's columns, names, types and rows (then its round's ruleset_sha256). A bet finds its round by
# round_key, a hash of the round's attributes (ROUND_COLUMNS), and its file by file_id, a hash of the path, both
# computed as the bet is inserted, so the insert needs no join; keys are unique within a run (checked when the
# run is committed) and joined with run_id.
ROUND_COLUMNS = ("business_date", "table_id", "shoe_id", "round_id", "round_no", "round_status", "currency")
DERIVED_COLUMNS = ("delta", "source_file")  # paid - expected; source_files.path of the bet's file_id
BET_COLUMNS = tuple(n for n in SETTLEMENTS.names if n not in ROUND_COLUMNS and n not in DERIVED_COLUMNS)
SETTLEMENT_TABLES = ("settlement_bets", "settlement_rounds", "source_files")


def _settlement_tables() -> dict[str, str]:
    """{table: its columns' DDL} of the three tables behind the settlements view."""
    def cols(names) -> str:
        return ", ".join(f'"{n}" {_DUCK_TYPES[str(SETTLEMENTS.field(n).type)]}' for n in names)
    bet_cols = cols(BET_COLUMNS[:-2])  # ... source_row and added_stake after file_id
    return {
        "settlement_bets": f"run_id VARCHAR NOT NULL, round_key UBIGINT NOT NULL, {bet_cols}, "
                           f"file_id UBIGINT NOT NULL, {cols(BET_COLUMNS[-2:])}",
        "settlement_rounds": f"run_id VARCHAR NOT NULL, round_key UBIGINT NOT NULL, {cols(ROUND_COLUMNS)}, "
                             "ruleset_sha256 VARCHAR",
        "source_files": "run_id VARCHAR NOT NULL, file_id UBIGINT NOT NULL, path VARCHAR",
    }


def wide_settlements_sql(name: str = "settlements") -> str:
    """CREATE TABLE of the settlements as one wide table, every column of the output: the layout of the
    warehouse before issue 33 (what migrate_settlements converts; the benchmark's and the tests' old layout)."""
    cols = ", ".join(f'"{f.name}" {_DUCK_TYPES[str(f.type)]}' for f in SETTLEMENTS)
    return f"CREATE TABLE {name} (run_id VARCHAR NOT NULL, {cols})"


_ROUND_KEY = "hash(" + ", ".join(f'"{c}"' for c in ROUND_COLUMNS) + ")"
_FILE_ID = 'hash("source_file")'


def settlement_statements(source: str = "read_parquet(?)") -> tuple[str, str]:
    """(rounds, bets): the two statements that insert settlements rows of `source` (by default the Parquet
    files, parameters (run_id, [paths]); else a table with run_id), the first their distinct rounds and files
    into the load's temp table run_round_files, the second the bets into settlement_bets. A row whose delta is
    not paid - expected (never, by the audit's own definition) fails the insert: the view could not give it back."""
    run = "?" if source == "read_parquet(?)" else "run_id"
    rounds = (f"INSERT INTO run_round_files SELECT DISTINCT {run} AS run_id, {_ROUND_KEY} AS round_key, "
              + ", ".join(f'"{c}"' for c in ROUND_COLUMNS)
              + f', {_FILE_ID} AS file_id, "source_file" FROM {source}')
    cols = ", ".join(f'"{c}"' for c in BET_COLUMNS)
    bets = (f"INSERT INTO settlement_bets (run_id, round_key, file_id, {cols}) SELECT {run}, {_ROUND_KEY}, "
            f"{_FILE_ID}, {cols} FROM {source} WHERE CASE WHEN delta IS NOT DISTINCT FROM paid - expected "
            f"THEN true ELSE error('settlements: a row whose delta is not paid - expected (bet ' || "
            f"coalesce(bet_id, 'null') || ')') END")
    return rounds, bets


def _begin_settlements(con: duckdb.DuckDBPyConnection) -> None:
    """The temp table of the rounds and files the load's settlements rows name, committed by
    _commit_settlements."""
    cols = ", ".join(f'"{c}" {_DUCK_TYPES[str(SETTLEMENTS.field(c).type)]}' for c in ROUND_COLUMNS)
    con.execute(f"CREATE OR REPLACE TEMP TABLE run_round_files (run_id VARCHAR, round_key UBIGINT, {cols}, "
                f"file_id UBIGINT, source_file VARCHAR)")


def _commit_settlements(con: duckdb.DuckDBPyConnection) -> None:
    """The rounds and files of run_round_files into settlement_rounds and source_files, once each; fails
    (and the load with it) if two different rounds, or files, of a run share a key."""
    names = ", ".join(f'"{c}"' for c in ROUND_COLUMNS)
    con.execute(f"INSERT INTO settlement_rounds (run_id, round_key, {names}) SELECT DISTINCT run_id, round_key, "
                f"{names} FROM run_round_files")
    con.execute("INSERT INTO source_files SELECT DISTINCT run_id, file_id, source_file FROM run_round_files")
    for table, key in (("settlement_rounds", "round_key"), ("source_files", "file_id")):
        clash = con.execute(f"SELECT run_id, {key} FROM {table} WHERE run_id IN (SELECT DISTINCT run_id FROM "
                            f"run_round_files) GROUP BY ALL HAVING count(*) > 1 LIMIT 1").fetchone()
        if clash:  # (a 64-bit hash: about one run in 10^9 at 10M bets)
            raise RuntimeError(f"run {clash[0]}: two {table} rows share the {key} {clash[1]}; the load is "
                               f"abandoned, the warehouse is unchanged (load the run again under a new run id)")
    con.execute("DELETE FROM run_round_files")


def _is_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND "
                       "schema_name = 'main' AND table_name = ?", [name]).fetchone()[0] > 0


def settlements_view_sql() -> str:
    return dict(view_sql())["00_settlements.sql"]


def migrate_settlements(con: duckdb.DuckDBPyConnection) -> int:
    """A warehouse written before issue 33 holds the settlements as one wide table: its rows are converted into
    settlement_bets, settlement_rounds and source_files, the table dropped and the view made in its place, in
    the transaction under way (the load's). Returns the rows converted (0: nothing to convert)."""
    if not _is_table(con, "settlements"):
        return 0
    rows = con.execute("SELECT count(*) FROM settlements").fetchone()[0]
    _begin_settlements(con)
    rounds, bets = settlement_statements("settlements")
    con.execute(rounds)
    con.execute(bets)
    _commit_settlements(con)
    con.execute("DROP TABLE settlements")
    con.execute(settlements_view_sql())
    return rows


def _add_missing_columns(con: duckdb.DuckDBPyConnection) -> None:
    """An output table of a warehouse written by an older version lacks the columns added to its schema since
    (settlements.added_stake): each is added at the end, where a fresh table has it too (a new output field is
    appended to its schema), null in the rows the table held."""
    have: dict[str, set[str]] = {}
    for table, column in con.execute("SELECT table_name, column_name FROM duckdb_columns() "
                                     "WHERE database_name = current_database() AND schema_name = 'main'").fetchall():
        have.setdefault(table, set()).add(column)
    for name, schema in {**OUTPUTS, **SURVEILLANCE_OUTPUTS}.items():
        if name == "settlements" and not _is_table(con, name):  # the view (or not made yet): its tables are new
            continue
        for f in schema:
            if f.name not in have.get(name, set()):
                con.execute(f'ALTER TABLE {name} ADD COLUMN "{f.name}" {_DUCK_TYPES[str(f.type)]}')


def connect_for_write(path: str) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(path, config={"storage_compatibility_version": STORAGE_VERSION})


def _version(tag: str) -> tuple[int, ...]:
    """(1, 3, 0) of DuckDB's storage version tag 'v1.3.0' or 'v1.3.0+'."""
    return tuple(int(n) for n in tag.strip("v+").split("."))


def storage_version(path: Path) -> str:
    """The storage format the DuckDB file at `path` is written in ('v1.0.0+': that format or a later one)."""
    con = duckdb.connect(":memory:")
    try:
        con.execute("ATTACH ? AS checked (READ_ONLY)", [str(path)])
        return con.execute("SELECT tags['storage_version'] FROM duckdb_databases() "
                           "WHERE database_name = 'checked'").fetchone()[0]
    finally:
        con.close()


def upgraded_copy(source: Path, copy: Path) -> bool:
    """`copy`: `source` in STORAGE_VERSION's format when it is written in an older one (every table, view and row
    copied by DuckDB's COPY FROM DATABASE); else a byte copy. Returns whether the format was upgraded."""
    if _version(storage_version(source)) >= _version(STORAGE_VERSION):
        shutil.copyfile(source, copy)
        return False
    con = connect_for_write(str(copy))
    try:
        con.execute("ATTACH ? AS older (READ_ONLY)", [str(source)])
        into = con.execute("SELECT current_database()").fetchone()[0]  # (the file's name: quoted)
        con.execute(f'COPY FROM DATABASE older TO "{into.replace(chr(34), chr(34) * 2)}"')
    finally:
        con.close()
    return True


def open_for_load(path: str) -> duckdb.DuckDBPyConnection:
    """A write connection to `path` as a load uses it, with every warehouse table created."""
    con = connect_for_write(path)
    # rows are found by their columns (every view and query orders what it shows), not by the order
    # they were inserted in: letting DuckDB insert in any order loads 10M settlements ~25% faster
    con.execute("SET preserve_insertion_order = false")
    for statement in _create_statements():
        con.execute(statement)
    _add_missing_columns(con)
    if not _is_table(con, "settlements"):  # (an older warehouse's table: migrate_settlements, in the load)
        con.execute(settlements_view_sql())
    return con


def insert_beside_audit(con: duckdb.DuckDBPyConnection) -> None:
    """Hold `con` to what it may use while the audit runs: one thread (the other core runs the audit)
    and STREAMING_MEMORY_LIMIT."""
    con.execute("SET threads = 1")
    con.execute(f"SET memory_limit = '{STREAMING_MEMORY_LIMIT}'")


def insert_statement(name: str, columns: list[str] | None = None, into: str | None = None) -> str:
    """INSERT of output `name`'s Parquet files (`columns` of them, every one by default; none: run_id
    only) into its table (or `into`), parameters (run_id, [paths]). (The settlements go into three tables:
    settlement_statements.)"""
    schema = OUTPUTS[name] if name in OUTPUTS else SURVEILLANCE_OUTPUTS[name]
    cols = "".join(f', "{c}"' for c in (schema.names if columns is None else columns))
    return f"INSERT INTO {into or name} (run_id{cols}) SELECT ?{cols} FROM read_parquet(?)"


# A view's line that stands for every registered game's part (the views name no game):
#   -- @games all_rounds                 each game's SELECT of its rounds (its adaptor's ALL_ROUNDS)
#   -- @selection_replays: <SELECT>      the SELECT once per replay output whose bets carry a selection, its
#                                        `{replays}` that output's name
# each expanded into the parts joined by UNION ALL.
_GAMES_PART = re.compile(r"^([ \t]*)-- @(games all_rounds|selection_replays: (.*))$", re.M)


def _games_part(m: re.Match) -> str:
    from pipelines.games import all_rounds_sql, selection_replays

    indent, template = m.group(1), m.group(3)
    if template is None:
        parts = all_rounds_sql()
    else:
        parts = [template.replace("{replays}", name) for name in selection_replays()]
    return f"\n{indent}UNION ALL\n".join(indent + part.replace("\n", "\n" + indent) for part in parts)


def expand_games(sql: str) -> str:
    """A view's SQL with its lines standing for every game's part expanded from the registry (as it is now)."""
    return _GAMES_PART.sub(_games_part, sql)


def view_sql() -> list[tuple[str, str]]:
    """(file name, SQL) of every view under audits/views, in name order, every game's part in."""
    folder = resources.files("audits") / "views"
    if not folder.is_dir():
        return []
    return [(p.name, expand_games(p.read_text(encoding="utf-8")))
            for p in sorted(folder.iterdir(), key=lambda p: p.name) if p.name.endswith(".sql")]


# The copies a load works on beside the warehouse: its staging copy, and the one a night too big for the
# commit's memory bound is loaded again into (WarehouseLoad.finish).
STAGING_SUFFIXES = (".loading", ".reloading")


def _remove_copy(copy: Path) -> None:
    """A load's copy and what DuckDB keeps beside it: its write-ahead log and its spill folder."""
    copy.unlink(missing_ok=True)
    copy.with_name(copy.name + ".wal").unlink(missing_ok=True)
    shutil.rmtree(copy.with_name(copy.name + ".tmp"), ignore_errors=True)


def remove_leftovers(target: Path) -> None:
    """Every file a load of `target` may leave behind (called holding the lock, so no load is using them).
    A load killed midway (SIGKILL, a power cut) leaves its copy and the copy's WAL; the warehouse itself is
    untouched until the copy is swapped in, so nothing is recovered from them (the killed run is simply not
    loaded). Removed before the names are used again: DuckDB would replay the stale WAL onto the next fresh
    copy, adding the killed night unannounced, or, where the warehouse changed in between, failing on every
    later load ("Corrupt database file")."""
    for suffix in STAGING_SUFFIXES:
        _remove_copy(target.with_name(target.name + suffix))


def load(warehouse: str, manifest: dict) -> dict[str, int]:
    """Load the run described by `manifest` (see pipelines.audit.AuditRun); returns rows loaded per table."""
    with WarehouseLoad(warehouse, manifest["run_id"]) as loading:
        return loading.finish(manifest)


class WarehouseLoad:
    """The load of one run, which may begin before the run's audit ends.

        with WarehouseLoad(warehouse, run_id) as loading:
            record = pipelines.audit.run(argv, run_id, on_output_file=loading.insert_soon)
            loading.finish(record.__dict__)

    Inserting the night's settlements is most of a load (DuckDB compressing ~10M rows into its storage);
    given each output file as soon as the audit has written it (`insert_soon`), a background thread
    inserts it on one DuckDB thread while the audit goes on, on the core the audit's single-threaded
    Python leaves free. `finish` then checks those files against the run's manifest, inserts the rest,
    replaces the covered dates and commits. Everything happens in one transaction on a staging copy of
    the file, swapped in only after the commit: leaving the `with` without `finish` (a failed or
    interrupted run) discards the copy, and the warehouse stays as it was."""

    def __init__(self, warehouse: str, run_id: str):
        self.target = Path(warehouse)
        self.staging = self.target.with_name(self.target.name + ".loading")
        self.run_id = run_id
        self._con: duckdb.DuckDBPyConnection | None = None
        self._inserted: list[str] = []  # files inserted by the background thread, in order
        self._queue: queue.SimpleQueue[tuple[str, str] | None] = queue.SimpleQueue()
        self._failure: BaseException | None = None
        self.inserted_early = 0  # files inserted while the audit went on (known after finish)
        self._finishing = threading.Event()
        self._theoretical = TheoreticalRtp()
        self.upgraded = False  # the warehouse was in an older storage format, upgraded by this load (upgraded_copy)
        self.unlimited_commit = False  # the night was loaded again to commit without COMMIT_MEMORY_LIMIT (finish)
        self._worker = threading.Thread(target=self._insert_while_auditing, name="warehouse-load", daemon=True)

    def __enter__(self) -> WarehouseLoad:
        self.target.parent.mkdir(parents=True, exist_ok=True)
        # one load of a warehouse at a time: a second one, swapping in its own copy, would drop this one's run
        self._lock = open(self.target.with_name(self.target.name + ".lock"), "w")  # held until __exit__
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise RuntimeError(f"{self.target}: another load of this warehouse is running; try again when it has "
                               f"finished") from None
        remove_leftovers(self.target)
        self._worker.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop_worker()
        if self._con is not None:  # finish() did not swap the copy in
            self._con.close()
            self._con = None
        remove_leftovers(self.target)
        self._lock.close()  # (releases the lock)

    def insert_soon(self, name: str, path: str) -> None:
        """`path`, a finished output file of `name`, may be inserted now (called from the writer's thread)."""
        self._queue.put((name, path))

    @property
    def inserted(self) -> tuple[str, ...]:
        """The files inserted so far, in order."""
        return tuple(self._inserted)

    def _open(self) -> None:
        _remove_copy(self.staging)
        if self.target.exists():
            self.upgraded = upgraded_copy(self.target, self.staging)
        con = open_for_load(str(self.staging))
        crash_point("load-opened")
        con.execute("BEGIN TRANSACTION")
        migrate_settlements(con)
        _begin_settlements(con)
        self._con = con

    def _insert_while_auditing(self) -> None:
        try:
            self._open()
            # priced while the audit reads its input, long before its first file: the bundled files and the texts
            # the warehouse keeps (the run's own, when new, are priced as it commits)
            self._theoretical.add_bundled()
            self._theoretical.add_kept(kept_texts(self._con))
            insert_beside_audit(self._con)
            while (item := self._queue.get()) is not None and not self._finishing.is_set():
                batch = [item]  # and what else is waiting, up to FILES_PER_STATEMENT, in the same statement
                while (len(batch) < FILES_PER_STATEMENT and not self._queue.empty()
                       and (item := self._queue.get()) is not None):
                    batch.append(item)
                for name in sorted({name for name, _ in batch}):
                    self._insert(name, [path for n, path in batch if n == name])
                if item is None:
                    break
        except BaseException as e:  # re-raised by finish()
            self._failure = e

    def _stop_worker(self) -> None:
        """Let the worker end after its current statement: finish() inserts what is left, on every core."""
        self._finishing.set()
        if self._worker.is_alive():
            self._queue.put(None)
            self._worker.join()

    def _insert(self, name: str, paths: list[str]) -> None:
        if name == "settlements":
            for statement in settlement_statements():
                self._con.execute(statement, [self.run_id, paths])
        else:
            self._con.execute(insert_statement(name), [self.run_id, paths])
        self._inserted.extend(paths)

    def finish(self, manifest: dict) -> dict[str, int]:
        """Insert what is not in yet, replace the dates the run covers, commit and swap the file in;
        returns rows loaded per table."""
        if not manifest.get("finished_at"):
            raise ValueError(f"run {manifest.get('run_id')} did not finish: its outputs are not loaded")
        if manifest["run_id"] != self.run_id:
            raise ValueError(f"run {manifest['run_id']} is not the run {self.run_id} this load was begun for")
        with step(LOAD, len(OUTPUTS), "tables"):
            return self._finish(manifest)

    def _finish(self, manifest: dict) -> dict[str, int]:
        self._stop_worker()
        if self._failure is not None:
            raise self._failure
        con = self._con
        con.execute("RESET threads")
        con.execute(f"SET memory_limit = '{FINAL_INSERT_MEMORY_LIMIT}'")
        files = {name: [o["path"] for o in manifest["outputs"].get(name, [])] for name in OUTPUTS}
        early = list(self._inserted)
        if len(set(early)) != len(early) or not set(early) <= {p for ps in files.values() for p in ps}:
            # a file inserted twice, or one the manifest does not list: this run's rows go, and every file
            # is inserted again from the manifest
            for name in (*OUTPUTS.keys() - {"settlements"}, "settlement_bets", "run_round_files"):
                con.execute(f"DELETE FROM {name} WHERE run_id = ?", [self.run_id])
            early = []
        self.inserted_early, done = len(early), set(early)
        for name in OUTPUTS:
            rest = [p for p in files[name] if p not in done]
            if rest:
                self._insert(name, rest)
            advanced(LOAD)
        con.execute("SET threads = 1")
        con.execute(f"SET memory_limit = '{COMMIT_MEMORY_LIMIT}'")
        try:
            return self._commit(manifest)
        except (duckdb.FatalException, duckdb.OutOfMemoryException):
            # the checkpoint's need grows with the night (at 1M settlements it fails at 64 MB and holds at 128, at
            # 10M fails at 512 and holds at 768): a night too big for the limit loses this copy with its
            # connection, so it is loaded again from the manifest into a fresh copy and committed unlimited
            return self._load_again_unlimited(manifest, files)

    def _commit(self, manifest: dict) -> dict[str, int]:
        con = self._con
        _commit_settlements(con)
        _keep_rulesets(con, self.run_id, manifest.get("rulesets") or {})
        counts = self._replace_dates(manifest)
        crash_point("loading")
        con.execute("COMMIT")
        crash_point("load-committed")
        con.execute("CHECKPOINT")
        crash_point("load-checkpointed")
        con.close()
        self._con = None
        os.replace(self.staging, self.target)  # atomic: readers see the old night or the new one, never half of one
        crash_point("load-swapped")
        return counts

    def _load_again_unlimited(self, manifest: dict, files: dict[str, list[str]]) -> dict[str, int]:
        try:
            self._con.close()
        except duckdb.Error:  # (a connection a fatal error invalidated)
            pass
        self._con = None
        _remove_copy(self.staging)
        # a new file name: DuckDB keeps an invalidated database open under the old one
        self.staging = self.target.with_name(self.target.name + ".reloading")
        self._open()
        for name in OUTPUTS:
            if files[name]:
                self._insert(name, files[name])
        self.unlimited_commit = True
        return self._commit(manifest)

    def _replace_dates(self, manifest: dict) -> dict[str, int]:
        """Rows of the dates this run covers from earlier runs go, the run's record and the reference data
        are written, the views (re)created; returns this run's rows per table."""
        con, run_id = self._con, self.run_id
        # (from the rows inserted, every file of the manifest by now: no second read of the files)
        dates = sorted({
            row[0] for name in (*replay_outputs().values(), "settlement_rounds", "findings")
            for row in con.execute(f"SELECT DISTINCT business_date FROM {name} WHERE run_id = ? AND business_date "
                                   f"IS NOT NULL", [run_id]).fetchall()
        })
        replaced = [r[0] for r in con.execute(
            "SELECT run_id FROM audit_runs WHERE superseded_by IS NULL AND len(list_intersect(business_dates, ?)) > 0",
            [dates]).fetchall()]
        # rows of the covered dates, and undated rows of the runs this one replaces
        gone = ("run_id <> ? AND (business_date IN (SELECT unnest(?)) OR (business_date IS NULL AND run_id IN "
                "(SELECT unnest(?))))")
        counts: dict[str, int] = {}
        for name in OUTPUTS:
            if name == "settlements":
                counts[name] = _replace_settlements(con, run_id, gone, [run_id, dates, replaced])
                continue
            con.execute(f"DELETE FROM {name} WHERE {gone}", [run_id, dates, replaced])
            counts[name] = con.execute(f"SELECT count(*) FROM {name} WHERE run_id = ?", [run_id]).fetchone()[0]
        con.execute("UPDATE audit_runs SET superseded_by = ? WHERE run_id IN (SELECT unnest(?))", [run_id, replaced])
        con.execute(
            "INSERT INTO audit_runs VALUES (?, ?, ?, now(), ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
            [run_id, manifest["started_at"], manifest["finished_at"], manifest["runner"], manifest["code_version"],
             manifest["input_dir"], manifest["output_dir"], dates, json.dumps(manifest["inputs"]),
             json.dumps(manifest["outputs"]), json.dumps({**manifest.get("metrics", {}), **counts})],
        )
        con.execute("DELETE FROM theoretical_rtp")  # reference data: replaced on every load
        self._theoretical.add_kept(kept_texts(con))  # (the run's texts are kept by now: _keep_rulesets)
        con.executemany(f"INSERT INTO theoretical_rtp ({', '.join(THEORETICAL_COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(THEORETICAL_COLUMNS))})", self._theoretical.rows)
        table_files = [i["path"] for i in manifest.get("inputs", {}).get("tables", [])]
        if table_files:  # the run's tables replace earlier rows of the same table_id (first row of an id wins)
            con.execute(
                "CREATE TEMP TABLE run_tables AS SELECT * FROM (SELECT CAST(table_id AS VARCHAR) AS table_id, "
                "CAST(game AS VARCHAR) AS game, CAST(ruleset AS VARCHAR) AS ruleset, CAST(currency AS VARCHAR) AS "
                "currency, TRY_CAST(table_max AS BIGINT) AS table_max, filename AS f, file_row_number AS r "
                "FROM read_parquet(?, union_by_name = true, filename = true, file_row_number = true)) "
                "WHERE table_id IS NOT NULL QUALIFY row_number() OVER (PARTITION BY table_id ORDER BY f, r) = 1",
                [table_files])
            con.execute("DELETE FROM audited_tables WHERE table_id IN (SELECT table_id FROM run_tables)")
            con.execute("INSERT INTO audited_tables SELECT table_id, game, ruleset, currency, table_max, ? "
                        "FROM run_tables ORDER BY table_id", [run_id])
            con.execute("DROP TABLE run_tables")
        for _, sql in view_sql():
            con.execute(sql)
        return counts


def _keep_rulesets(con: duckdb.DuckDBPyConnection, run_id: str, used: dict) -> None:
    """The run's ruleset texts into `rulesets` (a text already kept stays as it was), and the hash each of the
    run's settled rounds was settled under into settlement_rounds: its round_rulesets row's (a table whose
    ruleset changed), else its table's tables.ruleset's (the manifest's `rulesets`, pipelines.audit.AuditRun)."""
    con.executemany("INSERT INTO rulesets VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [(sha, t["id"], t["game"], t["text"], run_id) for sha, t in used.get("texts", {}).items()])
    base = [(table_id, periods[0]["sha256"]) for table_id, periods in used.get("tables", {}).items() if periods]
    if not base:
        return
    con.execute("CREATE OR REPLACE TEMP TABLE run_base_rulesets (table_id VARCHAR, sha256 VARCHAR)")
    con.executemany("INSERT INTO run_base_rulesets VALUES (?, ?)", base)
    con.execute("UPDATE settlement_rounds AS s SET ruleset_sha256 = coalesce((SELECT any_value(r.ruleset_sha256) "
                "FROM round_rulesets AS r WHERE r.run_id = s.run_id AND r.round_id = s.round_id AND r.table_id = "
                "s.table_id), b.sha256) FROM run_base_rulesets AS b WHERE s.run_id = ? AND b.table_id = s.table_id",
                [run_id])
    con.execute("DROP TABLE run_base_rulesets")


def _replace_settlements(con: duckdb.DuckDBPyConnection, run_id: str, gone: str, params: list) -> int:
    """The settlements of the rounds matching `gone` (a condition on settlement_rounds) go: their bets,
    the rounds, and the files no bet of their run names any more. Returns the run's bets."""
    con.execute(f"CREATE TEMP TABLE gone_rounds AS SELECT run_id, round_key FROM settlement_rounds WHERE {gone}",
                params)
    if con.execute("SELECT count(*) FROM gone_rounds").fetchone()[0]:
        con.execute("DELETE FROM settlement_bets AS b USING gone_rounds AS g "
                    "WHERE b.run_id = g.run_id AND b.round_key = g.round_key")
        con.execute("DELETE FROM settlement_rounds AS r USING gone_rounds AS g "
                    "WHERE r.run_id = g.run_id AND r.round_key = g.round_key")
        con.execute("DELETE FROM source_files AS f WHERE run_id IN (SELECT DISTINCT run_id FROM gone_rounds) "
                    "AND NOT EXISTS (SELECT 1 FROM settlement_bets AS b WHERE b.run_id = f.run_id "
                    "AND b.file_id = f.file_id)")
    con.execute("DROP TABLE gone_rounds")
    return con.execute("SELECT count(*) FROM settlement_bets WHERE run_id = ?", [run_id]).fetchone()[0]


# The surveillance outputs that are history: each night's sufficient statistics of the wheel, dice, dealer and
# advantage tests, read back by later runs (read_history) and emptied by a reset (load_surveillance's reset_history).
HISTORY_TABLES = ("surveillance_daily_wheel", "surveillance_daily_dice", "surveillance_daily_dice_pairs",
                  "surveillance_daily_signature", "surveillance_daily_dealer_findings",
                  "surveillance_daily_dealer_accounts", "surveillance_daily_dealer_results",
                  "surveillance_daily_advantage")


def read_history(warehouse: str, tables: tuple[str, ...] | list[str], dates: list[str], days: int
                 ) -> dict[str, pa.Table]:
    """The nights a surveillance run of business `dates` tests its wheels and shakers over, besides its own: each
    history table's rows from `days` days before the run's first date to its last, the run's own dates left out
    (they are the run's to replace), business_date as 'YYYY-MM-DD' text (the detectors' features). A warehouse
    that does not exist, or has no such table yet, has no history. Read-only: nothing is locked or written."""
    if not Path(warehouse).exists() or not dates or days <= 0:
        return {}
    con = duckdb.connect(warehouse, read_only=True)
    try:
        out: dict[str, pa.Table] = {}
        for name in tables:
            if not _is_table(con.cursor(), name):  # (a cursor of its own: the query below runs on the connection)
                continue
            schema = SURVEILLANCE_OUTPUTS[name]
            cols = ", ".join('strftime("business_date", \'%Y-%m-%d\') AS business_date' if c == "business_date"
                             else f'"{c}"' for c in schema.names)
            out[name] = con.sql(
                f"SELECT {cols} FROM {name} WHERE business_date >= CAST($first AS DATE) - CAST($days AS INTEGER) AND "
                f"business_date <= CAST($last AS DATE) AND business_date NOT IN (SELECT CAST(unnest($dates) AS DATE)) "
                f"ORDER BY ALL", params={"first": min(dates), "days": days, "last": max(dates), "dates": dates}
            ).to_arrow_table()
        return out
    finally:
        con.close()


def load_surveillance(warehouse: str, manifest: dict, reset_history: bool = False) -> dict[str, int]:
    """Load a finished surveillance run (pipelines/surveillance.py: its `_surveillance_manifest.json`):
    its surveillance_tests and surveillance_findings replace the rows of the business dates it covers (the
    dates of the audit run it read) from earlier surveillance runs, which surveillance_runs marks
    superseded, in one transaction on a copy of the file swapped in once committed, as an audit's load
    (and never beside one: the same lock). The audit's tables are not touched. Its nightly statistics
    (HISTORY_TABLES) replace those of its dates the same way; `reset_history`: every earlier night of them goes
    too (the history starts again from this run). Returns rows loaded per table."""
    if not manifest.get("finished_at"):
        raise ValueError(f"surveillance run {manifest.get('run_id')} did not finish: its outputs are not loaded")
    target = Path(warehouse)
    staging = target.with_name(target.name + ".loading")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_name(target.name + ".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(f"{target}: another load of this warehouse is running; try again when it has "
                               f"finished") from None
        remove_leftovers(target)
        try:
            if target.exists():
                shutil.copyfile(target, staging)
            con = open_for_load(str(staging))
            try:
                with step(LOAD, len(SURVEILLANCE_OUTPUTS), "tables"):
                    con.execute("BEGIN TRANSACTION")
                    migrate_settlements(con)  # (a warehouse written before issue 33)
                    counts = _load_surveillance(con, manifest, reset_history)
                    crash_point("loading")
                    con.execute("COMMIT")
                    con.execute("CHECKPOINT")
            finally:
                con.close()
            os.replace(staging, target)
        finally:
            remove_leftovers(target)
    return counts


def _load_surveillance(con: duckdb.DuckDBPyConnection, manifest: dict, reset_history: bool = False) -> dict[str, int]:
    run_id, dates = manifest["run_id"], manifest["business_dates"]
    replaced = [r[0] for r in con.execute(
        "SELECT run_id FROM surveillance_runs WHERE run_id <> ? AND superseded_by IS NULL AND "
        "len(list_intersect(business_dates, CAST(? AS DATE[]))) > 0", [run_id, dates]).fetchall()]
    counts: dict[str, int] = {}
    for name in SURVEILLANCE_OUTPUTS:
        con.execute(f"DELETE FROM {name} WHERE run_id = ?", [run_id])  # (the same run loaded again)
        paths = [o["path"] for o in manifest["outputs"].get(name, [])]
        if paths:
            con.execute(insert_statement(name), [run_id, paths])
        # rows of the covered dates, and undated rows of the runs this one replaces
        con.execute(f"DELETE FROM {name} WHERE run_id <> ? AND (business_date IN (SELECT CAST(unnest(?) AS DATE)) OR "
                    f"(business_date IS NULL AND run_id IN (SELECT unnest(?))))", [run_id, dates, replaced])
        if reset_history and name in HISTORY_TABLES:
            con.execute(f"DELETE FROM {name} WHERE run_id <> ?", [run_id])
        counts[name] = con.execute(f"SELECT count(*) FROM {name} WHERE run_id = ?", [run_id]).fetchone()[0]
        advanced(LOAD)
    con.execute("UPDATE surveillance_runs SET superseded_by = ? WHERE run_id IN (SELECT unnest(?))", [run_id, replaced])
    con.execute("DELETE FROM surveillance_runs WHERE run_id = ?", [run_id])
    con.execute(
        "INSERT INTO surveillance_runs VALUES (?, ?, ?, ?, now(), ?, ?, ?, ?, CAST(? AS DATE[]), ?, ?, ?, ?, NULL)",
        [run_id, manifest["audit_run_id"], manifest["started_at"], manifest["finished_at"], manifest["runner"],
         manifest["code_version"], manifest["input_dir"], manifest["output_dir"], dates, manifest["alpha"],
         json.dumps(manifest["detectors"]), json.dumps(manifest["outputs"]),
         json.dumps({**manifest.get("metrics", {}), **counts})],
    )
    for _, sql in view_sql():
        con.execute(sql)
    return counts
