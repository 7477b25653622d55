"""`pitboss generate`: simulate live baccarat (and blackjack, roulette, sic bo, casino stud) tables and write a
dataset with planted faults."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from pitboss.errors import fail
from pitboss.exit_codes import USAGE


def generate(
    out: Annotated[
        Path | None, typer.Option("--output", "-o", show_default="required",
                                  help="Folder to write (tables/limits/faults.parquet, shoes/, rounds/, bets/).")
    ] = None,
    tables: Annotated[
        int, typer.Option("--tables", help="Baccarat tables, cycling over the four baccarat rulesets; 0 for a day "
                                           "of other games only.")
    ] = 4,
    blackjack_tables: Annotated[
        int, typer.Option("--blackjack-tables", help="Blackjack tables (blackjack_8d_live), after the baccarat ones.")
    ] = 0,
    roulette_tables: Annotated[
        int, typer.Option("--roulette-tables",
                          help="Roulette tables (roulette_single_zero_live), after the blackjack ones.")
    ] = 0,
    sic_bo_tables: Annotated[
        int, typer.Option("--sic-bo-tables", help="Sic bo tables (sic_bo_live), after the roulette ones.")
    ] = 0,
    stud_tables: Annotated[
        int, typer.Option("--stud-tables",
                          help="Casino stud tables (casino_stud_live, a jackpot pool each), after the sic bo ones.")
    ] = 0,
    days: Annotated[int, typer.Option("--days", help="Business days to simulate.")] = 1,
    rounds_per_table: Annotated[
        int, typer.Option("--rounds-per-table",
                          help="Rounds per table per day (shoes are finished, never split; one session of spins or "
                               "rolls per roulette or sic bo table-day).")
    ] = 200,
    bets_per_round: Annotated[
        float, typer.Option("--bets-per-round", help="Mean bets per round (negative binomial around it).")
    ] = 50.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed: the same arguments give byte-identical files.")] = 0,
    start_date: Annotated[str, typer.Option("--start-date", help="First business date, YYYY-MM-DD.")] = "2026-11-28",
    fault_rate: Annotated[
        float, typer.Option("--fault-rate", help="Probability per eligible item per fault kind; 0 = fault-free.")
    ] = 0.01,
    fault_kinds: Annotated[
        str, typer.Option("--fault-kinds", help="Comma-separated fault kinds to plant (default: all).")
    ] = "",
    patterns: Annotated[
        bool, typer.Option("--patterns",
                           help="Also plant surveillance patterns (a counting account, colluding pairs, a repeated "
                                "shoe and a long run, a weak shuffle, a biased wheel and die, a dealer signature, a "
                                "dealer who overpays one account), listed in patterns.parquet. Off: every file as "
                                "without it.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar and no summary.")] = False,
    old_out: Annotated[Path | None, typer.Option("--out", hidden=True, help="The former name of --output.")] = None,
) -> None:
    """Simulate live baccarat, blackjack, roulette, sic bo and casino stud tables over business days; write the
    recorded data and fault manifest."""
    from rich.console import Console
    from rich.table import Table

    from pitboss.recorder import BLACKJACK_FAULT_KINDS, FAULT_KINDS, GenerateConfig
    from pitboss.recorder import generate as run
    from pitboss.recorder.casino_stud import STUD_FAULT_KINDS
    from pitboss.recorder.outcomes import OUTCOME_FAULT_KINDS

    out = out or old_out
    if out is None:
        fail("generate needs --output FOLDER, the folder to write", USAGE)
    try:
        first = date.fromisoformat(start_date)
    except ValueError:
        fail(f"--start-date {start_date!r} is not a date YYYY-MM-DD", USAGE)
    kinds = tuple(k.strip().upper() for k in fault_kinds.split(",") if k.strip()) or None
    config = GenerateConfig(
        out=out, tables=tables, blackjack_tables=blackjack_tables, roulette_tables=roulette_tables,
        sic_bo_tables=sic_bo_tables, stud_tables=stud_tables, days=days, rounds_per_table=rounds_per_table,
        bets_per_round=bets_per_round,
        seed=seed, start_date=first, fault_rate=fault_rate, fault_kinds=kinds, quiet=quiet, patterns=patterns,
    )  # fmt: skip
    try:
        config.validate()
    except ValueError as e:
        fail(e, USAGE)
    summary = run(config)
    if quiet:
        return
    out_console = Console()
    if not out_console.is_terminal:
        out_console = Console(width=120)  # piped or captured: no need to squeeze into 80 columns
    speed = f"{summary.bets_per_second:,.0f} bets/s"
    t = Table(title=f"Recorded {summary.bets:,} bets in {summary.seconds:.1f} s ({speed}) -> {out}")
    for col in ("table", "ruleset", "shoes", "rounds", "cancelled", "bets", "staked EUR", "paid EUR"):
        t.add_column(
            col, justify="left" if col in ("table", "ruleset") else "right", no_wrap=col in ("table", "ruleset")
        )
    for s in summary.tables:
        t.add_row(s.table_id, s.ruleset, f"{s.shoes:,}", f"{s.rounds:,}", f"{s.cancelled:,}", f"{s.bets:,}",
                  f"{s.staked / 100:,.2f}", f"{s.paid / 100:,.2f}")  # fmt: skip
    out_console.print(t)
    if summary.faults:
        f = Table(title="Planted faults (faults.parquet rows)")
        f.add_column("kind")
        f.add_column("rows", justify="right")
        for kind in dict.fromkeys(FAULT_KINDS + BLACKJACK_FAULT_KINDS + OUTCOME_FAULT_KINDS + STUD_FAULT_KINDS):
            if kind in summary.faults:
                f.add_row(kind, f"{summary.faults[kind]:,}")
        out_console.print(f)
    else:
        out_console.print("No faults planted (fault-free dataset).")
    if summary.patterns:
        f = Table(title="Planted patterns (patterns.parquet rows)")
        f.add_column("pattern")
        f.add_column("rows", justify="right")
        for pattern, rows in summary.patterns.items():
            f.add_row(pattern, f"{rows:,}")
        out_console.print(f)
