"""`pitboss generate`: simulate the live tables of every registered game (pitboss/recorder/registry.py) and write a
dataset with planted faults. Names no game: each game's table-count option comes from its recorder."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from typer import _click as click  # the click typer vendors (typer 0.28)
from typer.core import TyperCommand, TyperOption

from pitboss.errors import fail
from pitboss.exit_codes import USAGE

GAME_TABLES = "pitboss.game_tables"  # ctx.meta key: tables.game -> the tables asked for


def _store_tables(game: str):
    def store(ctx: click.Context, param: click.Parameter, value: int) -> int:
        ctx.meta.setdefault(GAME_TABLES, {})[game] = value
        return value

    return store


def game_table_options() -> list[TyperOption]:
    """Each registered game's table-count option (--tables for the first, --<game>-tables ...), from the
    recorder registry (pitboss/recorder/registry.py)."""
    from pitboss.recorder.registry import recorders

    return [TyperOption(param_decls=[rec.option, rec.field], type=int, default=rec.default_tables, show_default=True,
                        help=rec.help, expose_value=False, callback=_store_tables(rec.game))
            for rec in recorders()]  # fmt: skip


class GenerateCommand(TyperCommand):
    """`generate` with each game's table-count option added after --output the first time its parameters are
    looked at (its help, its run): other commands start without importing every game's recorder."""

    @property
    def params(self) -> list[click.Parameter]:
        if not self._with_games:
            self._params[1:1] = game_table_options()
            self._with_games = True
        return self._params

    @params.setter
    def params(self, value: list[click.Parameter]) -> None:
        self._params, self._with_games = value, False


def generate(
    ctx: typer.Context,
    out: Annotated[
        Path | None, typer.Option("--output", "-o", show_default="required",
                                  help="Folder to write (tables/limits/faults.parquet, shoes/, rounds/, bets/).")
    ] = None,
    days: Annotated[int, typer.Option("--days", help="Business days to simulate.")] = 1,
    rounds_per_table: Annotated[
        int, typer.Option("--rounds-per-table",
                          help="Rounds per table per day (shoes are finished, never split; a table whose round is one "
                               "outcome, a spin or a roll, deals them in one session).")
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
    ruleset_change: Annotated[
        bool, typer.Option("--ruleset-change/--no-ruleset-change",
                           help="The first table of document 000 changes to document 001's paytable mid-night, "
                                "in table_rulesets.parquet (never with --patterns). Off: every table plays its "
                                "tables.ruleset all night.")
    ] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar and no summary.")] = False,
    old_out: Annotated[Path | None, typer.Option("--out", hidden=True, help="The former name of --output.")] = None,
) -> None:
    """Simulate live tables of every game over business days; write the recorded data and fault manifest."""
    from rich.console import Console
    from rich.table import Table

    from pitboss.recorder import GenerateConfig
    from pitboss.recorder import generate as run
    from pitboss.recorder.manifest import instant_text
    from pitboss.recorder.registry import fault_kinds as every_kind

    out = out or old_out
    if out is None:
        fail("generate needs --output FOLDER, the folder to write", USAGE)
    try:
        first = date.fromisoformat(start_date)
    except ValueError:
        fail(f"--start-date {start_date!r} is not a date YYYY-MM-DD", USAGE)
    kinds = tuple(k.strip().upper() for k in fault_kinds.split(",") if k.strip()) or None
    config = GenerateConfig(
        out=out, game_tables=tuple(ctx.meta.get(GAME_TABLES, {}).items()), days=days,
        rounds_per_table=rounds_per_table, bets_per_round=bets_per_round, seed=seed, start_date=first,
        fault_rate=fault_rate, fault_kinds=kinds, quiet=quiet, patterns=patterns, ruleset_change=ruleset_change,
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
    for change in summary.ruleset_changes:  # table_rulesets.parquet
        at = instant_text(change["effective_from"])
        out_console.print(f"{change['table_id']} plays {change['ruleset']} ({change['version']}) from {at}: "
                          "table_rulesets.parquet", highlight=False)
    if summary.faults:
        f = Table(title="Planted faults (faults.parquet rows)")
        f.add_column("kind")
        f.add_column("rows", justify="right")
        for kind in every_kind():
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
