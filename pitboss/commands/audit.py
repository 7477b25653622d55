"""`pitboss audit`: run the nightly audit pipeline, load the warehouse, print the summary."""

from __future__ import annotations

import posixpath
import re
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pitboss.errors import fail
from pitboss.exit_codes import BAD_INPUT, USAGE
from pitboss.progress import ProgressDisplay, progress_option, showing, shown

if TYPE_CHECKING:
    from pipelines.progress import Work

console = Console()

# where audit and surveil read and write a run's results when --output is not given
DEFAULT_OUTPUT = "<warehouse>_runs/latest beside the --warehouse file, else ./out"
SHOWN_REASONS = 20  # quarantine groups the summary lists; the others in one row (shown_reasons)


# the ruleset options' own panel of the help (issue 44): the others keep their columns' widths
_RULESETS_PANEL = "Rulesets (docs/data-contract.md table_rulesets)"


def default_output(warehouse: str | None) -> str:
    """The run's output folder when --output is not given (DEFAULT_OUTPUT)."""
    return str(Path(warehouse).with_suffix("")) + "_runs/latest" if warehouse else "out"



def audit(
    ctx: typer.Context,
    input: str = typer.Option(..., "--input", "-i", help="Folder to read: tables, limits, shoes, rounds, bets "
                              "(Parquet)."),
    warehouse: str | None = typer.Option(None, "--warehouse", "-w", show_default="none, the results stay in Parquet",
                                         help="DuckDB file to load the results into."),
    output: str | None = typer.Option(None, "--output", "-o", show_default=f"{DEFAULT_OUTPUT}",
                                      help="Folder to write the Parquet results to."),
    shards: int = typer.Option(4, "--shards", help="Files of findings and of quarantine to write."),
    workers: int | None = typer.Option(None, "--workers", show_default="this machine's cores",
                                       help="Table-days audited side by side (threads); 1: one at a time. Any "
                                       "number gives the same results."),
    validate: bool = typer.Option(True, "--validate/--no-validate",
                                  help="Run the data-quality suites (audits/expectations) on the input, beside the "
                                  "pipeline."),
    surveil: bool = typer.Option(False, "--surveil", help="Then run the surveillance on the same folders "
                                 "(pitboss surveil) and load it too."),
    progress: bool | None = progress_option("the suites, the audit, the load (and the surveillance)"),
    rulesets: str | None = typer.Option(None, "--rulesets", show_default="none, the bundled rulesets only",
                                        rich_help_panel=_RULESETS_PANEL,
                                        help="Folder of the operator's own ruleset files (<id>.toml), beside the "
                                        "bundled ones, checked as strictly."),
    rulesets_from_warehouse: bool = typer.Option(
        False, "--rulesets-from-warehouse", rich_help_panel=_RULESETS_PANEL,
        help="Settle with the ruleset texts the --warehouse kept for the input's dates: a night audited again as it "
        "was first."),
) -> None:
    """Replay every shoe, recompute every settlement, flag what disagrees.

    Beam options go after `--`, e.g. `pitboss audit --input data -- --runner=FlinkRunner ...`.
    """
    from engine.ruleset_file import RulesetError
    from pipelines.side_by_side import bad_workers
    from pitboss.nightly import StructuralFailure, nightly_audit
    from schemas.readers import ContractError

    if workers is not None and bad_workers(workers):
        fail(bad_workers(workers), USAGE)
    output = output or default_output(warehouse)
    on = shown(progress, console)
    if rulesets_from_warehouse and (warehouse is None or not Path(warehouse).is_file()):
        fail("--rulesets-from-warehouse reads the ruleset texts an existing --warehouse kept"
             + (f": {warehouse} does not exist" if warehouse else ""), USAGE)
    try:
        in_force = given_rulesets(input, rulesets, warehouse if rulesets_from_warehouse else None)
        with showing(on) as display:
            night = nightly_audit(input, output, warehouse, validate=validate, shards=shards, beam_args=ctx.args,
                                  progress=RichAuditProgress(display) if display else None, in_force=in_force,
                                  workers=workers)
    except (StructuralFailure, ContractError, RulesetError) as e:
        _bad_input(str(e))
    except Exception as e:
        # a worker that met a broken row group: Beam re-raises it wrapped, with the message kept
        found = re.search(r"schemas\.readers\.ContractError: (.*?)(?: \[while running .*)?$", str(e), re.S)
        if found is None:
            raise
        _bad_input(found.group(1))
    if night.quality is not None:
        _print_quality(night.quality)
    print_summary(night.record.__dict__, night.loaded, warehouse)  # (exits 1 first if bets are unaccounted for)
    if surveil:
        from pitboss.commands.surveil import run_surveillance

        run_surveillance(input, output, warehouse, beam_args=list(ctx.args), progress=on)


def given_rulesets(input: str, folder: str | None, warehouse: str | None):
    """The ruleset texts of --rulesets (an operator's folder) and --rulesets-from-warehouse (`warehouse`: the
    texts it kept for the input's ruleset ids and dates), as pipelines.ruleset_periods.RulesetsInForce; None:
    neither. Raises RulesetError (or ContractError, reading the input)."""
    from pipelines.ruleset_texts import operator_rulesets, rulesets_and_dates, together, warehouse_rulesets

    own = operator_rulesets(folder) if folder is not None else None
    if warehouse is None:
        return own
    ids, dates = rulesets_and_dates(input)
    kept = warehouse_rulesets(warehouse, dates, ids)
    return together(own, kept) if own is not None else kept


class RichAuditProgress:
    """The audit's line of the progress display (pipelines.progress.AuditProgress): groups of shoes (table-days)
    audited of all, the bets they settled of those read, elapsed time and bets settled a second. Shown from
    the moment the pipeline starts to when it ends, only where the runner runs it in this process (it is
    never begun otherwise); the line stays on the screen, at its final counts."""

    def __init__(self, display: ProgressDisplay):
        self.display, self._task, self._total, self._bets = display, None, None, 0
        self._lock = threading.Lock()
        self.groups = self.bets = 0

    def begin(self, work: Work) -> None:
        self._total, self._bets, self._began = work.groups, work.bets, time.monotonic()
        self._task = self.display.add("auditing", work.groups, self._settled(), rate=self._rate())

    def _settled(self) -> str:
        return f"table-days {self.bets:,} of {self._bets:,} bets settled"

    def _rate(self) -> str:
        return f"{self.bets / max(time.monotonic() - self._began, 1e-9):,.0f} bets/s"

    def group_audited(self, bets: int) -> None:  # (from the pipeline's thread)
        with self._lock:
            self.groups += 1
            self.bets += bets
            if self._total is not None:  # groups of their own (see pipelines.progress.work_of) add to it
                self._total = max(self._total, self.groups)
            self.display.update(self._task, completed=self.groups, total=self._total, unit=self._settled(),
                                rate=self._rate())

    def end(self) -> None:
        """Every group audited: the total is what was audited (the input's table-days whose every shoe was
        quarantined are not groups of the audit)."""
        with self._lock:
            self.display.stop_line(self._task)


def _print_quality(report) -> None:
    """Data quality before integrity: failed row-level expectations are reported, their rows quarantined by
    the pipeline or judged by the audit (a structural failure has stopped the run before this)."""
    failed = report.failed
    line = (f"data quality: {report.total_rows:,} rows checked against {len(report.suites)} suites in "
            f"{report.seconds:.1f} s: ")
    if not failed:
        console.print(line + "every expectation met", highlight=False)
        return
    console.print(line + f"[yellow]{len(failed)} expectation(s) not met[/yellow] (details: pitboss validate)",
                  highlight=False)
    for outcome in failed:
        console.print(f"  {outcome.describe()}", highlight=False, soft_wrap=True)


def _bad_input(message: str) -> None:
    fail(message, BAD_INPUT)


def summary_figures(manifest: dict) -> dict:
    """Headline counts of a finished run, read back from its Parquet outputs (not from metrics)."""
    import duckdb
    import pyarrow.parquet as pq

    from pipelines.io import open_input

    con = duckdb.connect()
    files = {name: [o["path"] for o in outs] for name, outs in manifest["outputs"].items()}
    bets_in = 0
    for i in manifest["inputs"]["bets"]:  # (opened through Beam's filesystems: the input may be remote)
        with open_input(i["path"]) as f:
            bets_in += pq.ParquetFile(f).metadata.num_rows
    s = con.execute(
        "SELECT count(*), count(DISTINCT round_id), coalesce(sum(stake),0), coalesce(sum(paid),0), "
        "coalesce(sum(expected),0) FROM read_parquet(?)", [files["settlements"]]).fetchone()
    rounds = rounds_by_game(manifest)
    findings = con.execute("SELECT kind, severity, count(*) FROM read_parquet(?) GROUP BY ALL ORDER BY 1",
                           [files["findings"]]).fetchall()
    quarantine = con.execute("SELECT source_table, reason, count(*) FROM read_parquet(?) GROUP BY ALL ORDER BY 1, 2",
                             [files["quarantine"]]).fetchall()
    bets_quarantined = sum(n for table, _, n in quarantine if table == "bets")
    return dict(bets_read=bets_in, bets_settled=s[0], bets_quarantined=bets_quarantined, rounds=rounds,
                stakes=s[2], paid=s[3], expected=s[4], findings=findings, quarantine=quarantine)


def rounds_by_game(manifest: dict) -> dict[str, int]:
    """Rounds replayed per game (each game's replay output; the games with none left out), in the
    registry's order."""
    import pyarrow.parquet as pq

    from pipelines.games import replay_outputs

    counts = {game: sum(pq.ParquetFile(o["path"]).metadata.num_rows for o in manifest["outputs"].get(output, []))
              for game, output in replay_outputs().items()}
    return {game: n for game, n in counts.items() if n}


def loaded_table(loaded: dict | None, warehouse: str) -> Table:
    """The rows a load put into `warehouse`, a row per warehouse table (`pitboss audit` and `pitboss surveil`)."""
    rows = Table(title=f"Rows loaded into {escape(warehouse)}")
    rows.add_column("table")
    rows.add_column("rows", justify="right")
    for name, n in (loaded or {}).items():
        rows.add_row(name, f"{n:,}")
    return rows


def shown_reasons(quarantine: list[tuple]) -> tuple[list[tuple], list[tuple]]:
    """The (table, reason, rows) groups the summary lists, in their order, and the rest: the SHOWN_REASONS with
    the most rows (ties by order) when there are more. A reason names its round, so a night's groups grow with it:
    the 10M mixed floor's 1,741 made 2,983 lines of summary; a 100M night's would be ten times as many."""
    if len(quarantine) <= SHOWN_REASONS:
        return list(quarantine), []
    top = set(sorted(range(len(quarantine)), key=lambda i: (-quarantine[i][2], i))[:SHOWN_REASONS])
    return ([g for i, g in enumerate(quarantine) if i in top], [g for i, g in enumerate(quarantine) if i not in top])


def print_summary(manifest: dict, loaded: dict | None, warehouse: str | None) -> None:
    from pipelines.dead_letter import AUDIT_ERROR
    from pipelines.errorlog import ERROR_LOG

    f = summary_figures(manifest)
    head = Table(title=f"Audit run {manifest['run_id']} ({manifest['runner']})", show_header=False)
    head.add_row("rounds replayed", f"{sum(f['rounds'].values()):,}")
    for game, n in f["rounds"].items():
        head.add_row(f"  {game}", f"{n:,}")
    head.add_row("bets read", f"{f['bets_read']:,}")
    head.add_row("  settled", f"{f['bets_settled']:,}")
    head.add_row("  quarantined", f"{f['bets_quarantined']:,}")
    balanced = f["bets_read"] == f["bets_settled"] + f["bets_quarantined"]
    head.add_row("  accounted for", "[green]yes: read = settled + quarantined[/green]" if balanced
                 else "[red]NO: read != settled + quarantined[/red]")
    head.add_row("stakes (minor units)", f"{f['stakes']:,}")
    head.add_row("paid", f"{f['paid']:,}")
    head.add_row("expected", f"{f['expected']:,}")
    head.add_row("paid - expected", f"{f['paid'] - f['expected']:,}")
    console.print(head)
    kinds = Table(title="Findings")
    for col in ("kind", "severity", "count"):
        kinds.add_column(col)
    for kind, severity, n in f["findings"]:
        kinds.add_row(kind, severity, f"{n:,}")
    kinds.add_row("total", "", f"{sum(n for *_, n in f['findings']):,}")
    console.print(kinds)
    if f["quarantine"]:
        q = Table(title="Quarantined rows")
        for col in ("table", "reason", "rows"):
            q.add_column(col)
        listed, rest = shown_reasons(f["quarantine"])
        for table, reason, n in listed:
            q.add_row(table, reason, f"{n:,}")
        if rest:
            q.add_row("", f"{len(rest):,} more reason{'s' if len(rest) > 1 else ''}: every row in quarantine/ "
                          f"(and the warehouse's quarantine)",
                      f"{sum(n for *_, n in rest):,}")
        console.print(q)
    console.print(f"outputs: {posixpath.join(manifest['output_dir'], '')}  manifest: _manifest.json")
    failed = sum(n for kind, _, n in f["findings"] if kind == AUDIT_ERROR)
    if failed:
        console.print(f"[red]{failed:,} table-day(s) could not be audited[/red]: their rows are quarantined unjudged "
                      f"({AUDIT_ERROR}; traceback in {ERROR_LOG})", highlight=False, soft_wrap=True)
    if warehouse:
        console.print(loaded_table(loaded, warehouse))
    if not balanced:
        sys.exit(1)
