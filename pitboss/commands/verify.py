"""`pitboss verify --run RUN_ID`: tamper evidence. Recompute the sha256 of every input and output file
of a run, and the code version, and report anything that changed since the run."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

import typer
from rich.console import Console

from pitboss.exit_codes import CHECK_FAILED, USAGE


def verify(
    run: str = typer.Option("latest", "--run", help="Run id (audit_runs.run_id) or 'latest'."),
    warehouse: str = typer.Option(..., "--warehouse", help="The DuckDB warehouse holding the run's manifest."),
) -> None:
    """Check that no input or output file of a run changed since the run, and that no file was added
    to its output folders."""
    import duckdb

    from pipelines.audit import code_version, sha256_of
    from pipelines.io import files_in

    console, err = Console(), Console(stderr=True)
    if not Path(warehouse).exists():
        err.print(f"[red]error:[/red] warehouse {warehouse} not found")
        raise typer.Exit(USAGE)
    con = duckdb.connect(warehouse, read_only=True)
    query = ("SELECT run_id, inputs, outputs, code_version FROM audit_runs "
             + ("ORDER BY started_at DESC LIMIT 1" if run == "latest" else "WHERE run_id = ?"))
    row = con.execute(query, [] if run == "latest" else [run]).fetchone()
    con.close()
    if row is None:
        err.print(f"[red]error:[/red] no run {run!r} in {warehouse}")
        raise typer.Exit(USAGE)
    run_id, inputs, outputs, code = row
    files = [("input", t, f) for t, fs in json.loads(inputs).items() for f in fs]
    files += [("output", t, f) for t, fs in json.loads(outputs).items() for f in fs]
    changed = 0
    for side, name, f in files:
        try:
            digest, _ = sha256_of(f["path"])
            status = "ok" if digest == f["sha256"] else "[red]CHANGED[/red]"
        except OSError:
            status = "[red]MISSING[/red]"
        changed += status != "ok"
        if status != "ok":
            console.print(f"{status} {side} ({name}): {f['path']}", soft_wrap=True, highlight=False)
    # a file added to an output folder since the run would be read with the run's files
    added = 0
    for name, fs in json.loads(outputs).items():
        listed = {f["path"] for f in fs}
        for folder in sorted({posixpath.dirname(p) for p in listed}):
            for extra in sorted(set(files_in(folder)) - listed):
                added += 1
                console.print(f"[red]ADDED[/red] output ({name}): {extra}", soft_wrap=True, highlight=False)
    now = code_version()
    code_status = "same" if now == code else f"[yellow]differs[/yellow] (run: {code[:12]}, now: {now[:12]})"
    console.print(f"Run {run_id}: {len(files) - changed} of {len(files)} files unchanged since the run, "
                  f"{added} added; code version {code_status}.")
    if changed or added:
        raise typer.Exit(CHECK_FAILED)
