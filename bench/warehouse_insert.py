"""What the warehouse load spends on the settlements, column by column:

    python -m bench.warehouse_insert RUN_OUTPUT_DIR      # the folder `pitboss audit --output` wrote

Inserts the run's settlements files into a scratch warehouse exactly as the load does while the audit
goes on (pipelines.warehouse: the same storage version, settings and statement, one DuckDB thread, one
transaction), first with every column, then with no column but run_id (every other one left NULL: what
any row costs), then each column alone. Reports the CPU seconds of each insert and its rate. The load is
the largest piece of CPU in the full audit (bench/README.md); this tells whether a cheaper column, type
or codec could shrink it, or whether the insert itself is the cost.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from pipelines.io import files_in
from pipelines.warehouse import FILES_PER_STATEMENT, insert_beside_audit, insert_statement, open_for_load
from schemas.outputs import OUTPUTS


def insert_cpu(files: list[str], columns: list[str] | None, scratch: Path) -> tuple[float, int]:
    """(CPU seconds, rows) of inserting `columns` (every column: None; none: []) of the settlements
    `files` into a new warehouse in `scratch`, as the load does beside the audit."""
    path = scratch / "insert.duckdb"
    path.unlink(missing_ok=True)
    con = open_for_load(str(path))
    try:
        insert_beside_audit(con)
        con.execute("BEGIN TRANSACTION")
        sql = insert_statement("settlements", columns)
        cpu0 = time.process_time()
        for i in range(0, len(files), FILES_PER_STATEMENT):
            con.execute(sql, ["bench", files[i:i + FILES_PER_STATEMENT]])
        cpu = time.process_time() - cpu0
        rows = con.execute("SELECT count(*) FROM settlements").fetchone()[0]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.warehouse_insert", description=__doc__.splitlines()[0])
    parser.add_argument("output_dir", type=Path, help="the --output folder of a `pitboss audit` run")
    args = parser.parse_args(argv)
    results = anatomy(args.output_dir)
    print(f"settlements of {args.output_dir} ({results[0]['rows']:,} rows), one DuckDB thread, pid {os.getpid()}")
    print("| inserted | CPU s | rows/s |\n|---|---:|---:|")
    for r in results:
        print(f"| {r['what']} | {r['cpu_s']:.2f} | {r['rows'] / max(r['cpu_s'], 1e-9):,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
