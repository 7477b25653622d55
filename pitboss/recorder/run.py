"""The recorder run: every registered game's tables (pitboss/recorder/registry.py) over the business days, streamed
to Parquet with the fault manifest. Names no game: each game's recorder records its own table-days."""

from __future__ import annotations

import shutil
import time
from contextlib import nullcontext
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq

from pitboss.recorder.config import SECOND, GenerateConfig, Summary
from pitboss.recorder.manifest import MANIFEST_SCHEMA
from pitboss.recorder.patterns import PatternPlanter
from pitboss.recorder.players import pool_size
from pitboss.recorder.registry import recorders
from pitboss.recorder.writer import (
    FileWriter,
    limits_table,
    prepare_out,
    table_rulesets_table,
    tables_table,
    write_single,
)


def _epoch_us(d: date) -> int:
    return int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()) * SECOND


def _recorders(config: GenerateConfig, out: Path) -> list:
    """The recorder of each game with tables (and of the game whose files are the base ones), in table order:
    each game's tables after those of the games before it."""
    recs, first = [], 0
    for game in recorders():
        n = config.tables_of(game.game)
        if n or game.base_files:
            recs.append(game.record(config, out, n, first))
        first += n
    return recs


def generate(config: GenerateConfig) -> Summary:
    """Simulate the tables over the business days and write the dataset under `config.out`."""
    config.validate()
    started = time.perf_counter()
    out = Path(config.out)
    prepare_out(out)
    recs = _recorders(config, out)
    every_table = [t for rec in recs for t in rec.tables]
    # --patterns: surveillance patterns planted on the way (pitboss/recorder/patterns.py), listed in patterns.parquet.
    patterns = PatternPlanter(config, every_table, pool_size(config.bets_per_round)) if config.patterns else None
    (out / "patterns.parquet").unlink(missing_ok=True)
    for rec in recs:
        rec.patterns = patterns
    write_single(out / "tables.parquet", tables_table(every_table))
    write_single(out / "limits.parquet", limits_table(every_table))
    # The manifest is spilled per table-day (sorted) and assembled table by table at the end.
    spill = out / ".faults-spill"
    shutil.rmtree(spill, ignore_errors=True)
    spill.mkdir()

    progress_cm = nullcontext(None)
    if not config.quiet:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress_cm = Progress(TextColumn("[bold]recording"), BarColumn(), MofNCompleteColumn(),
                               TextColumn("rounds"), TimeElapsedColumn(), transient=False)  # fmt: skip
    with progress_cm as progress:
        task = progress.add_task("rounds", total=config.all_tables * config.days * config.rounds_per_table) \
            if progress else None  # fmt: skip
        for day in range(config.days):
            business = config.start_date + timedelta(days=day)
            if patterns:
                patterns.start_day(day, business)
            for rec in recs:
                rec.open(business.isoformat())
                rec.record_day(day, business, _epoch_us(business), spill, progress, task)
        for rec in recs:
            rec.close()
    faults = FileWriter(out / "faults.parquet", MANIFEST_SCHEMA, config.row_group_rows)
    for part in sorted(spill.glob("*.parquet")):  # by table, then business day
        faults.write(pq.read_table(part))
    faults.close()
    shutil.rmtree(spill)
    if patterns:
        write_single(out / "patterns.parquet", patterns.table())
    # a table whose ruleset changes mid-night (pitboss/recorder/ruleset_change.py): the optional input table
    changes = [row for rec in recs for row in rec.ruleset_changes]
    if changes:
        write_single(out / "table_rulesets.parquet", table_rulesets_table(changes))
    summary = Summary(out, [], {}, time.perf_counter() - started)
    summary.ruleset_changes = changes
    summary.patterns = patterns.counts if patterns else {}
    for rec in recs:
        summary.tables += rec.stats
        counts = rec.counts
        kinds = dict.fromkeys([*summary.faults, *counts])
        summary.faults = {k: summary.faults.get(k, 0) + counts.get(k, 0) for k in kinds}
        for name, writer in rec.writers.items():
            summary.files[name] = summary.files.get(name, 0) + writer.files
    return summary
