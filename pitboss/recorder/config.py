"""What to generate: the run configuration, the timing every game's tables share, and the run summary."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from datetime import date
from pathlib import Path

CURRENCY = "EUR"

# Timing of a round, microseconds.
SECOND = 1_000_000
BETTING_WINDOW = 15 * SECOND
DAY_OPENS_AT = 6 * 3600 * SECOND  # business day opens 06:00 UTC
MAX_ROUNDS_PER_DAY = 2400  # ~30 s per round: a table cannot deal much more in 24 h


@dataclass(frozen=True, init=False)
class GenerateConfig:
    """Arguments of `pitboss generate` (and of the Python API `generate(config)`).

    Each game's table count is a keyword its recorder names (registry.GameRecorder.field), e.g.
    `GenerateConfig(out=..., tables=4)`; `game_tables` holds them all, in table order."""

    out: Path
    game_tables: tuple[tuple[str, int], ...]  # (tables.game, its tables) for every registered game, in table order
    days: int = 1
    rounds_per_table: int = 200  # per table per business day (a target: shoes are never split)
    bets_per_round: float = 50.0  # mean; the count per round is negative binomial around it
    seed: int = 0
    start_date: date = date(2026, 11, 28)
    fault_rate: float = 0.01  # probability per eligible item per fault kind; 0 = fault-free
    fault_kinds: tuple[str, ...] | None = None  # None = every kind
    quiet: bool = True
    cancel_rate: float = 0.003  # share of rounds cancelled (incidents), not a fault
    row_group_rows: int = 131_072  # bets/rounds row-group size (fixed: byte-identical output)
    rows_per_file: int = 4_194_304  # a new part file after this many rows
    patterns: bool = False  # --patterns: plant surveillance patterns, listed in patterns.parquet (recorder/patterns.py)
    # a table's ruleset changed mid-night, in table_rulesets.parquet (recorder/ruleset_change.py; never with
    # patterns); False: every table plays tables.ruleset all night (the recorder's output before issue 44)
    ruleset_change: bool = True

    def __init__(self, out: Path, game_tables: tuple[tuple[str, int], ...] | None = None, **options) -> None:
        from pitboss.recorder.registry import recorders

        counts = dict(game_tables or ())
        for rec in recorders():
            counts.setdefault(rec.game, options.pop(rec.field, rec.default_tables))
        object.__setattr__(self, "out", out)
        object.__setattr__(self, "game_tables", tuple(counts.items()))
        for f in fields(self)[2:]:
            object.__setattr__(self, f.name, options.pop(f.name, f.default))
        if options:
            raise TypeError(f"GenerateConfig got unknown option(s) {', '.join(options)}")

    def tables_of(self, game: str) -> int:
        return dict(self.game_tables).get(game, 0)

    def __getattr__(self, name: str) -> int:
        """A game's table count by its keyword (registry.GameRecorder.field)."""
        from pitboss.recorder.registry import recorders

        game = None if name.startswith("__") else next((rec.game for rec in recorders() if rec.field == name), None)
        if game is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.tables_of(game)

    def validate(self) -> None:
        from pitboss.recorder.registry import fault_kinds, recorders

        for rec in recorders():
            if self.tables_of(rec.game) < 0:
                raise ValueError(f"{rec.option} must be >= 0")
        if self.all_tables < 1:  # any one game's tables make a day (a floor of one game is one)
            raise ValueError("no table to simulate: give --tables or another game's --*-tables at least 1")
        if self.days < 1:
            raise ValueError("--days must be at least 1")
        if not 1 <= self.rounds_per_table <= MAX_ROUNDS_PER_DAY:
            raise ValueError(
                f"--rounds-per-table must be between 1 and {MAX_ROUNDS_PER_DAY} (rounds of ~30 s in a day)"
            )
        if not (self.bets_per_round >= 0 and math.isfinite(self.bets_per_round)):
            raise ValueError("--bets-per-round must be >= 0")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError("--fault-rate must be between 0 and 1")
        known = fault_kinds()
        unknown = [k for k in self.fault_kinds or () if k not in known]
        if unknown:
            raise ValueError(f"unknown fault kind(s) {', '.join(unknown)}; known: {', '.join(known)}")
        if self.row_group_rows < 1 or self.rows_per_file < self.row_group_rows:
            raise ValueError("rows_per_file must be >= row_group_rows >= 1")

    @property
    def all_tables(self) -> int:
        """Tables of every game."""
        return sum(n for _, n in self.game_tables)


@dataclass
class TableStats:
    table_id: str
    ruleset: str
    shoes: int = 0
    rounds: int = 0
    cancelled: int = 0
    bets: int = 0
    staked: int = 0
    paid: int = 0


@dataclass
class Summary:
    out: Path
    tables: list[TableStats]
    faults: dict[str, int]  # kind -> manifest rows
    seconds: float = 0.0
    files: dict[str, int] = field(default_factory=dict)  # table name -> number of parquet files
    patterns: dict[str, int] = field(default_factory=dict)  # --patterns: pattern -> patterns.parquet rows
    ruleset_changes: list[dict] = field(default_factory=list)  # the table_rulesets.parquet rows

    @property
    def bets(self) -> int:
        return sum(t.bets for t in self.tables)

    @property
    def rounds(self) -> int:
        return sum(t.rounds for t in self.tables)

    @property
    def shoes(self) -> int:
        return sum(t.shoes for t in self.tables)

    @property
    def bets_per_second(self) -> float:
        return self.bets / self.seconds if self.seconds > 0 else float("nan")
