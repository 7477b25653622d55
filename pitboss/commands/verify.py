"""`pitboss verify --run RUN_ID`: tamper evidence. Recompute the sha256 of every input and output file
of a run, and the code version, and report anything that changed since the run: an audit run with the
surveillance runs that read it, or one surveillance run given by its id."""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.console import Console

from pitboss.errors import fail
from pitboss.exit_codes import CHECK_FAILED, USAGE


@dataclass
class Checked:
    files: int = 0
    changed: int = 0  # changed or missing
    added: int = 0


def _check(console: Console, label: str, files: dict[str, dict[str, list[dict]]],
           extra_folders: dict[str, list[str]] | None = None) -> Checked:
    """Each listed file's sha256 against the run's ({side: {name: [{path, sha256}]}}), and the files of
    its output folders the run did not list; one line per file changed, missing or added, `label` naming
    the run ('' for an audit run, whose lines read as they always have)."""
    from pipelines.audit import sha256_of
    from pipelines.io import files_in

    out = Checked()
    for side, by_name in files.items():
        for name, fs in by_name.items():
            for f in fs:
                out.files += 1
                try:
                    digest, _ = sha256_of(f["path"])
                    status = "ok" if digest == f["sha256"] else "[red]CHANGED[/red]"
                except OSError:
                    status = "[red]MISSING[/red]"
                if status != "ok":
                    out.changed += 1
                    console.print(f"{status} {label}{side} ({name}): {f['path']}", soft_wrap=True, highlight=False)
    # a file added to an output folder since the run would be read with the run's files
    for name, fs in files.get("output", {}).items():
        listed = {f["path"] for f in fs}
        folders = {posixpath.dirname(p) for p in listed} | set((extra_folders or {}).get(name, []))
        for folder in sorted(folders):
            for extra in sorted(set(files_in(folder)) - listed):
                out.added += 1
                console.print(f"[red]ADDED[/red] {label}output ({name}): {extra}", soft_wrap=True, highlight=False)
    return out


def _code(run_code: str | None, now: str) -> str:
    run_code = run_code or ""
    return "same" if now == run_code else f"[yellow]differs[/yellow] (run: {run_code[:12]}, now: {now[:12]})"


def _surveillance_runs(con, where: str, params: list) -> list[dict]:
    """Rows of surveillance_runs (none where the warehouse predates it)."""
    if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'surveillance_runs'"
                       ).fetchone()[0]:
        return []
    cur = con.execute("SELECT run_id, audit_run_id, output_dir, outputs, code_version FROM surveillance_runs "
                      f"WHERE {where} ORDER BY started_at, run_id", params)
    return [dict(zip(("run_id", "audit_run_id", "output_dir", "outputs", "code_version"), r, strict=True))
            for r in cur.fetchall()]


def _unloaded_manifest(output_dir: str | None, audit_run_id: str, loaded: set[str]) -> dict | None:
    """The `_surveillance_manifest.json` in an audit's output folder, where it is of a finished surveillance of
    that audit run the warehouse does not hold (`pitboss surveil` without --warehouse)."""
    if not output_dir:
        return None
    from pipelines.surveillance import read_surveillance_manifest

    try:
        manifest = read_surveillance_manifest(output_dir)
    except (ValueError, OSError):
        return None
    if manifest.get("audit_run_id") != audit_run_id or manifest.get("run_id") in loaded:
        return None
    return {"run_id": manifest["run_id"], "audit_run_id": audit_run_id, "output_dir": manifest.get("output_dir"),
            "outputs": manifest.get("outputs", {}), "code_version": manifest.get("code_version"), "unloaded": True}


def verify(
    run: str = typer.Option("latest", "--run", help="Run id (audit_runs.run_id or surveillance_runs.run_id) or "
                                                    "'latest' (the latest audit run)."),
    warehouse: str = typer.Option(..., "--warehouse", "-w", help="The DuckDB warehouse holding the run's manifest."),
) -> None:
    """Check that no input or output file of a run changed since the run, and that no file was added
    to its output folders: an audit run and every surveillance run of it the warehouse shows (or one
    surveillance run, by its id)."""
    import duckdb

    from pipelines.audit import code_version

    console = Console()
    if not Path(warehouse).exists():
        fail(f"warehouse {warehouse} not found", USAGE)
    con = duckdb.connect(warehouse, read_only=True)
    query = ("SELECT run_id, inputs, outputs, code_version, output_dir FROM audit_runs "
             + ("ORDER BY started_at DESC LIMIT 1" if run == "latest" else "WHERE run_id = ?"))
    row = con.execute(query, [] if run == "latest" else [run]).fetchone()
    if row is not None:
        # the surveillance runs of this audit whose rows the warehouse shows (a superseded one's files may
        # have been replaced by the run that superseded it: verify it by its id)
        surveillance = _surveillance_runs(con, "audit_run_id = ? AND superseded_by IS NULL", [row[0]])
    else:
        surveillance = _surveillance_runs(con, "run_id = ?", [run]) if run != "latest" else []
    con.close()
    if row is None and not surveillance:
        fail(f"no run {run!r} in {warehouse}", USAGE)
    now = code_version()
    total = Checked()
    if row is not None:
        run_id, inputs, outputs, code, output_dir = row
        unloaded = _unloaded_manifest(output_dir, run_id, {s["run_id"] for s in surveillance})
        surveillance += [unloaded] if unloaded else []
        got = _check(console, "", {"input": json.loads(inputs), "output": json.loads(outputs)})
        total.changed, total.added = got.changed, got.added
        console.print(f"Run {run_id}: {got.files - got.changed} of {got.files} files unchanged since the run, "
                      f"{got.added} added; code version {_code(code, now)}.", soft_wrap=True)
        if not surveillance:
            console.print(f"No surveillance run of {run_id} in the warehouse.", soft_wrap=True)
    for s in surveillance:
        outputs = s["outputs"] if isinstance(s["outputs"], dict) else json.loads(s["outputs"])
        folders = {name: [posixpath.join(s["output_dir"], name)] for name in outputs} if s["output_dir"] else {}
        got = _check(console, f"surveillance run {s['run_id']} ", {"output": outputs}, folders)
        total.changed += got.changed
        total.added += got.added
        where = " (not loaded: its _surveillance_manifest.json)" if s.get("unloaded") else ""
        console.print(f"Surveillance run {s['run_id']} of audit run {s['audit_run_id']}{where}: "
                      f"{got.files - got.changed} of {got.files} files unchanged since the run, {got.added} added; "
                      f"code version {_code(s['code_version'], now)}.", soft_wrap=True)
    if total.changed or total.added:
        raise typer.Exit(CHECK_FAILED)
