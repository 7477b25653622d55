"""`pitboss demo`: a demo day end to end: record it (with planted faults), audit it on the embedded
default (in-process Beam + a DuckDB file), and show that the findings are exactly the planted faults."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table


def demo(
    folder: Annotated[Path, typer.Option("--folder", help="Where the demo data, outputs and warehouse go.")] = Path(
        "demo"
    ),
    rounds_per_table: int = typer.Option(200, "--rounds-per-table", help="Rounds per table of the demo day."),
    seed: int = typer.Option(2026, "--seed"),
) -> None:
    """Generate a demo day with planted faults, audit it, compare findings with the planted faults."""
    import pyarrow.parquet as pq

    from pitboss.commands.audit import print_summary
    from pitboss.faultcheck import compare
    from pitboss.nightly import nightly_audit
    from pitboss.recorder import GenerateConfig, generate

    console = Console()
    data, out, warehouse = folder / "data", folder / "out", folder / "audit.duckdb"
    shutil.rmtree(data, ignore_errors=True)
    console.rule("1. Record a demo day (4 baccarat tables, one per ruleset, 2 blackjack, 1 roulette, 1 sic bo and "
                 "1 casino stud table; faults planted)")
    generate(GenerateConfig(out=data, tables=4, blackjack_tables=2, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, rounds_per_table=rounds_per_table, seed=seed, fault_rate=0.01,
                            quiet=True))
    console.rule("2. Audit it: Beam in-process runner -> Parquet -> DuckDB")
    night = nightly_audit(str(data), str(out), str(warehouse), validate=False)
    record = night.record
    print_summary(record.__dict__, night.loaded, str(warehouse))
    console.rule("3. Findings against the planted faults (faults.parquet), per game and kind")
    faults = pq.read_table(data / "faults.parquet")
    findings = pq.read_table(Path(record.output_dir) / "findings")
    scores, missed, unexplained = compare(faults, findings)
    t = Table()
    for col in ("game / kind", "planted", "found", "matched", "recall", "precision"):
        t.add_column(col, justify="left" if col == "game / kind" else "right", no_wrap=True)
    for game, game_scores in _per_game(compare, pq.read_table(data / "tables.parquet"), faults, findings):
        t.add_row(f"[bold]{game}[/bold]", style="cyan")
        for s in game_scores:
            t.add_row(s.kind, str(s.planted), str(s.found), str(s.matched), f"{s.recall:.0%}", f"{s.precision:.0%}")
        t.add_section()
    console.print(t)
    if missed or unexplained:
        console.print(f"[red]{len(missed)} planted fault(s) not found, {len(unexplained)} finding(s) unexplained[/red]")
        raise typer.Exit(1)
    console.print("[green]Every planted fault found on its row; every finding explained by a planted fault.[/green]")
    console.print(f"Try: pitboss query --warehouse {warehouse} \"SELECT kind, count(*) FROM findings GROUP BY 1\"")


def _per_game(compare, tables, faults, findings):
    """(game, its scores) for every game of the day, in the order its tables come: the planted faults and the
    findings of its tables compared."""
    import pyarrow as pa
    import pyarrow.compute as pc

    games: dict[str, list[str]] = {}
    for row in tables.select(["table_id", "game"]).to_pylist():
        games.setdefault(row["game"], []).append(row["table_id"])
    for game, ids in games.items():
        ids_ = pa.array(ids, pa.string())
        yield game, compare(faults.filter(pc.is_in(faults["table_id"], value_set=ids_)),
                            findings.filter(pc.is_in(findings["table_id"], value_set=ids_)))[0]
