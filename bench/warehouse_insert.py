"""What the warehouse load spends on the settlements, column by column:

    python -m bench.warehouse_insert RUN_OUTPUT_DIR      # the folder `pitboss audit --output` wrote
    python -m bench.warehouse_insert RUN_OUTPUT_DIR --layouts [--repeat N]

Inserts the run's settlements files into a scratch warehouse exactly as the load does while the audit
goes on (pipelines.warehouse: the same storage version, settings and statement, one DuckDB thread, one
transaction), first with every column, then with no column but run_id (every other one left NULL: what
any row costs), then each column alone, all into the one wide table of the layout before issue 33
(pipelines.warehouse.wide_settlements_sql). Reports the CPU seconds of each insert and its rate. The load is
the largest piece of CPU in the full audit (bench/README.md); this tells whether a cheaper column, type
or codec could shrink it, or whether the insert itself is the cost.

`--layouts` compares the two layouts instead, old and new in turn (`--repeat` times): the wide table
against the load's own insert (settlement_bets, settlement_rounds, source_files, issue 33: each fact once),
each committed and checkpointed; it reports the CPU of the insert (and of the commit: the rounds and files
written once, the keys checked) and the bytes the settlements take in the file.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import duckdb

from pipelines.io import files_in
from pipelines.warehouse import (
    FILES_PER_STATEMENT,
    SETTLEMENT_TABLES,
    _begin_settlements,
    _commit_settlements,
    insert_beside_audit,
    insert_statement,
    open_for_load,
    settlement_statements,
    wide_settlements_sql,
)
from schemas.outputs import OUTPUTS

WIDE = "wide_settlements"  # the scratch table of the layout before issue 33


def insert_cpu(files: list[str], columns: list[str] | None, scratch: Path) -> tuple[float, int]:
    """(CPU seconds, rows) of inserting `columns` (every column: None; none: []) of the settlements
    `files` into a new warehouse in `scratch`, as the load does beside the audit."""
    path = scratch / "insert.duckdb"
    path.unlink(missing_ok=True)
    con = open_for_load(str(path))
    try:
        insert_beside_audit(con)
        con.execute("BEGIN TRANSACTION")
        con.execute(wide_settlements_sql(WIDE))
        sql = insert_statement("settlements", columns, into=WIDE)
        cpu0 = time.process_time()
        for i in range(0, len(files), FILES_PER_STATEMENT):
            con.execute(sql, ["bench", files[i:i + FILES_PER_STATEMENT]])
        cpu = time.process_time() - cpu0
        rows = con.execute(f"SELECT count(*) FROM {WIDE}").fetchone()[0]
        con.execute("ROLLBACK")
    finally:
        con.close()
        path.unlink(missing_ok=True)
    return cpu, rows


def anatomy(output_dir: Path, scratch: Path | None = None) -> list[dict]:
    """One row per insert measured: `what`, `cpu_s`, `rows`."""
    files = files_in(str(output_dir / "settlements"))
    if not files:
        raise FileNotFoundError(f"{output_dir}: no settlements/*.parquet (the --output folder of a `pitboss audit`)")
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        plan = [("every column", None), ("run_id only (the rest NULL)", [])]
        plan += [(name, [name]) for name in OUTPUTS["settlements"].names]
        results = []
        for what, columns in plan:
            cpu, rows = insert_cpu(files, columns, Path(tmp))
            results.append({"what": what, "cpu_s": cpu, "rows": rows})
    return results


def _settlements_bytes(con: duckdb.DuckDBPyConnection, tables: tuple[str, ...]) -> int:
    """Bytes of the blocks holding `tables` in the (checkpointed) file."""
    union = " UNION ".join(f"SELECT block_id FROM pragma_storage_info('{t}') WHERE block_id >= 0" for t in tables)
    blocks = con.execute(f"SELECT count(DISTINCT block_id) FROM ({union})").fetchone()[0]
    return blocks * con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]


def layout_cost(files: list[str], layout: str, scratch: Path) -> dict:
    """The settlements `files` loaded into a new warehouse in `scratch` in `layout` ("wide": one table, as
    before issue 33; "split": the load's settlement_bets, settlement_rounds and source_files), as the load
    does beside the audit, then committed and checkpointed: {layout, insert_cpu_s, commit_cpu_s, rows,
    settlements_bytes, file_bytes}."""
    path = scratch / f"{layout}.duckdb"
    path.unlink(missing_ok=True)
    con = open_for_load(str(path))
    try:
        insert_beside_audit(con)
        con.execute("BEGIN TRANSACTION")
        if layout == "wide":
            con.execute(wide_settlements_sql(WIDE))
            statements, tables = [insert_statement("settlements", into=WIDE)], (WIDE,)
        else:
            _begin_settlements(con)
            statements, tables = list(settlement_statements()), SETTLEMENT_TABLES
        cpu0 = time.process_time()
        for i in range(0, len(files), FILES_PER_STATEMENT):
            for sql in statements:
                con.execute(sql, ["bench", files[i:i + FILES_PER_STATEMENT]])
        cpu1 = time.process_time()
        if layout != "wide":
            _commit_settlements(con)
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
        cpu2 = time.process_time()
        rows = con.execute(f"SELECT count(*) FROM {tables[0]}").fetchone()[0]
        stored = _settlements_bytes(con, tables)
    finally:
        con.close()
    size = path.stat().st_size
    path.unlink(missing_ok=True)
    return {"layout": layout, "insert_cpu_s": cpu1 - cpu0, "commit_cpu_s": cpu2 - cpu1, "rows": rows,
            "settlements_bytes": stored, "file_bytes": size}


def layouts(output_dir: Path, repeat: int = 1, scratch: Path | None = None) -> list[dict]:
    """layout_cost of the run's settlements in either layout, alternately, `repeat` times each."""
    files = files_in(str(output_dir / "settlements"))
    if not files:
        raise FileNotFoundError(f"{output_dir}: no settlements/*.parquet (the --output folder of a `pitboss audit`)")
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        return [layout_cost(files, layout, Path(tmp)) for _ in range(repeat) for layout in ("wide", "split")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.warehouse_insert", description=__doc__.splitlines()[0])
    parser.add_argument("output_dir", type=Path, help="the --output folder of a `pitboss audit` run")
    parser.add_argument("--layouts", action="store_true", help="the wide table against the load's layout")
    parser.add_argument("--repeat", type=int, default=1, help="--layouts: runs of each, alternately")
    args = parser.parse_args(argv)
    if args.layouts:
        results = layouts(args.output_dir, args.repeat)
        print(f"settlements of {args.output_dir} ({results[0]['rows']:,} rows), one DuckDB thread, pid {os.getpid()}")
        print("| layout | insert CPU s | commit + checkpoint CPU s | rows/s (insert) | settlements MB | file MB |\n"
              "|---|---:|---:|---:|---:|---:|")
        for r in results:
            print(f"| {r['layout']} | {r['insert_cpu_s']:.2f} | {r['commit_cpu_s']:.2f} | "
                  f"{r['rows'] / max(r['insert_cpu_s'], 1e-9):,.0f} | {r['settlements_bytes'] / 1e6:.1f} | "
                  f"{r['file_bytes'] / 1e6:.1f} |")
        return 0
    results = anatomy(args.output_dir)
    print(f"settlements of {args.output_dir} ({results[0]['rows']:,} rows), one DuckDB thread, pid {os.getpid()}")
    print("| inserted | CPU s | rows/s |\n|---|---:|---:|")
    for r in results:
        print(f"| {r['what']} | {r['cpu_s']:.2f} | {r['rows'] / max(r['cpu_s'], 1e-9):,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
