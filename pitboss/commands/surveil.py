"""`pitboss surveil`: the surveillance pipeline over an audited night, the warehouse load, the summary."""

from __future__ import annotations

import posixpath

import typer
from rich.console import Console
from rich.table import Table

from engine.surveillance import HISTORY_DAYS
from pitboss.commands.audit import DEFAULT_OUTPUT, default_output
from pitboss.errors import fail
from pitboss.exit_codes import BAD_INPUT, USAGE
from pitboss.progress import progress_option, showing, shown

console = Console()


def surveil(
    ctx: typer.Context,
    input: str = typer.Option(..., "--input", "-i", help="The audit's input folder (tables, shoes, rounds, bets)."),
    output: str | None = typer.Option(None, "--output", "-o", show_default=DEFAULT_OUTPUT,
                                      help="The audit's output folder, where a finished `pitboss audit` run wrote "
                                      "its results; the surveillance writes its own beside them."),
    warehouse: str | None = typer.Option(None, "--warehouse", "-w", show_default="none, the results stay in Parquet",
                                         help="DuckDB file to load the tests into."),
    alpha: float = typer.Option(0.01, "--alpha", help="False-discovery rate of the flags (Benjamini-Hochberg per "
                                "detector over the run's tests)."),
    period: str = typer.Option("day", "--period", help="day: each detector by the business day (its default); "
                               "run: every subject tested over all the business dates of the input (a week's "
                               "folder: one run over the week)."),
    history_days: int = typer.Option(HISTORY_DAYS, "--history-days",
                                     help="The wheel, dice, dealer and advantage tests count the "
                                     "nights of this many days back, from the warehouse's history and the run itself "
                                     "(0: each period alone)."),
    reset_history: bool = typer.Option(False, "--reset-history", help="Forget the warehouse's stored nights "
                                       "(surveillance_daily_*): this run reads none and its load empties them "
                                       "before storing its own."),
    progress: bool | None = progress_option("the surveillance and the load"),
) -> None:
    """Run every surveillance detector over an audited night: tests, flags, review findings.

    Run after `pitboss audit` on the same folders; writes surveillance_tests and surveillance_findings
    beside the audit's outputs. Beam options go after `--`, as for `pitboss audit`.
    """
    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1, got {alpha}", USAGE)
    if period not in ("day", "run"):
        fail(f"--period must be day or run, got {period!r}", USAGE)
    if history_days < 0:
        fail(f"--history-days must be 0 or more, got {history_days}", USAGE)
    if reset_history and not warehouse:
        fail("--reset-history needs --warehouse (the history is kept there)", USAGE)
    output = output or default_output(warehouse)
    run_surveillance(input, output, warehouse, alpha, list(ctx.args), period=period, history_days=history_days,
                     reset_history=reset_history, progress=shown(progress, console))


def run_surveillance(input_dir: str, output_dir: str, warehouse: str | None, alpha: float = 0.01,
                     beam_args: list[str] | None = None, period: str = "day", history_days: int = HISTORY_DAYS,
                     reset_history: bool = False, progress: bool = False) -> dict:
    """The surveillance of the audit in `output_dir`, its wheels and shakers over the nights of the last
    `history_days` days the warehouse holds (none with `reset_history`, which also empties them on load), loaded
    into `warehouse` if given, its summary printed; returns the run's manifest. Folders that cannot be surveilled
    (no finished audit, another input) exit USAGE with one line, an input file that breaks the contract
    BAD_INPUT. `progress`: the surveillance's and the load's progress shown on stderr."""
    from pipelines.surveillance import SurveillanceError, run
    from pipelines.warehouse import load_surveillance
    from schemas.readers import ContractError

    try:
        history = ["--history", warehouse] if warehouse and not reset_history else []
        with showing(progress):  # (stopped before a failure is told)
            record = run(["--input", input_dir, "--output", output_dir, "--alpha", repr(alpha), "--period", period,
                          "--history-days", str(history_days), *history, *(beam_args or [])])
            manifest = record.__dict__
            loaded = load_surveillance(warehouse, manifest, reset_history) if warehouse else None
    except (SurveillanceError, ContractError) as e:
        fail(e, USAGE if isinstance(e, SurveillanceError) else BAD_INPUT)
    print_summary(manifest, loaded, warehouse)
    return manifest


def print_summary(manifest: dict, loaded: dict | None, warehouse: str | None) -> None:
    """Per detector: rows, tests that ran, flags; then every flagged test."""
    import duckdb

    files = [o["path"] for o in manifest["outputs"]["surveillance_tests"]]
    con = duckdb.connect()
    per_detector = con.execute(
        # ran: the detector's tests, its m (detector_tests: a screened pair detector's count every pair, listed or not)
        "SELECT detector, count(*), coalesce(max(detector_tests), 0), "
        "count(*) FILTER (WHERE flagged) FROM read_parquet(?) GROUP BY detector ORDER BY detector", [files]).fetchall()
    flagged = con.execute(
        "SELECT detector, subject, period, q_value, detail FROM read_parquet(?) WHERE flagged "
        "ORDER BY detector, q_value, subject, period", [files]).fetchall()
    dates = manifest["business_dates"]
    period = f"{dates[0]}..{dates[-1]}" if len(dates) > 1 else (dates[0] if dates else "no business date")
    by = "over the run" if manifest.get("period") == "run" else "by the day"
    head = Table(title=f"Surveillance run {manifest['run_id']} of audit {manifest['audit_run_id']} ({period}, {by}, "
                       f"alpha {manifest['alpha']:g})")
    for col in ("detector", "rows", "ran", "flagged"):
        head.add_column(col, justify="left" if col == "detector" else "right")
    for detector, tests, ran, flags in per_detector:
        head.add_row(detector, f"{tests:,}", f"{ran:,}", f"[yellow]{flags:,}[/yellow]" if flags else "0")
    head.add_row("total", f"{sum(r[1] for r in per_detector):,}", f"{sum(r[2] for r in per_detector):,}",
                 f"{sum(r[3] for r in per_detector):,}")
    console.print(head)
    if manifest.get("history_days"):
        stored = [f"{name} {h['nights']} nights ({h['first']}..{h['last']})"
                  for name, h in sorted((manifest.get("history") or {}).items()) if h.get("rows")]
        console.print(f"History: wheels, shakers, dealers and accounts tested over {manifest['history_days']} days "
                      "back; read from the "
                      f"warehouse: {', '.join(stored) if stored else 'nothing (no earlier night stored)'}",
                      highlight=False, soft_wrap=True)
    if flagged:
        console.print(f"[yellow]Flagged for review[/yellow] ({len(flagged):,}, in surveillance_findings):",
                      highlight=False)
        for detector, subject, period_, q, detail in flagged:
            console.print(f"  {detector} {subject} ({period_}), q = {q:.2g}: {detail}", highlight=False,
                          soft_wrap=True)
    else:
        console.print("Nothing flagged.")
    names = ", ".join(manifest["outputs"])
    console.print(f"outputs: {posixpath.join(manifest['output_dir'], '')}{{{names}}}  "
                  f"manifest: _surveillance_manifest.json", highlight=False, soft_wrap=True)
    if warehouse:
        from pitboss.commands.audit import loaded_table

        console.print(loaded_table(loaded, warehouse))
