"""What to generate: the run configuration, the live tables with their limits, and the run summary."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from engine.games.baccarat.ruleset import MAIN_BETS, Ruleset, load_ruleset

# The four baccarat rulesets, in the order tables cycle over them, and the table-id suffix of each.
TABLE_RULESETS: tuple[tuple[str, str], ...] = (
    ("baccarat_8d_extended", "BAC8X"),
    ("baccarat_8d_standard", "BAC8S"),
    ("mini_baccarat_6d", "MINI6"),
    ("baccarat_live_pairs", "BACLP"),
)
OPERATORS = {
    "baccarat_8d_extended": "Provider A Live",
    "baccarat_8d_standard": "Provider B Live",
    "mini_baccarat_6d": "Online Casino C",
    "baccarat_live_pairs": "Live Dealer D",
}
TABLE_NAMES = {
    "baccarat_8d_extended": "Baccarat Extended",
    "baccarat_8d_standard": "Baccarat",
    "mini_baccarat_6d": "Mini Baccarat",
    "baccarat_live_pairs": "Baccarat Pairs",
}
CURRENCY = "EUR"

# Money in minor units (cents).
TABLE_MAX = 500_000  # 5,000.00 EUR
MIN_STAKE = 100  # 1.00 EUR
TIE_MAX = 100_000
SIDE_MAX = 50_000
# 004: the limits row of a pair bet allows up to 20% of table_max, the rule allows 10%: a stake in
# between breaks the share rule only (SIDE_BET_ABOVE_SHARE, not STAKE_ABOVE_MAX).
PAIR_LIMIT_SHARE = 5  # table_max / 5 = 20%

# Timing of a round, microseconds.
SECOND = 1_000_000
BETTING_WINDOW = 15 * SECOND
DAY_OPENS_AT = 6 * 3600 * SECOND  # business day opens 06:00 UTC
MAX_ROUNDS_PER_DAY = 2400  # ~30 s per round: a table cannot deal much more in 24 h


@dataclass(frozen=True)
class GenerateConfig:
    """Arguments of `pitboss generate` (and of the Python API `generate(config)`)."""

    out: Path
    tables: int = 4
    blackjack_tables: int = 0  # blackjack_8d_live tables, after the baccarat ones (pitboss/recorder/blackjack.py)
    roulette_tables: int = 0  # roulette_single_zero_live tables, after blackjack's (pitboss/recorder/roulette.py)
    sic_bo_tables: int = 0  # sic_bo_live tables, after the roulette ones (pitboss/recorder/sic_bo.py)
    stud_tables: int = 0  # casino_stud_live tables, after the sic bo ones (pitboss/recorder/casino_stud.py)
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

    def validate(self) -> None:
        from pitboss.recorder.blackjack import BLACKJACK_FAULT_KINDS
        from pitboss.recorder.casino_stud import STUD_FAULT_KINDS
        from pitboss.recorder.faults import FAULT_KINDS
        from pitboss.recorder.outcomes import OUTCOME_FAULT_KINDS

        if self.tables < 0:
            raise ValueError("--tables must be >= 0")
        if self.blackjack_tables < 0:
            raise ValueError("--blackjack-tables must be >= 0")
        if self.roulette_tables < 0:
            raise ValueError("--roulette-tables must be >= 0")
        if self.sic_bo_tables < 0:
            raise ValueError("--sic-bo-tables must be >= 0")
        if self.stud_tables < 0:
            raise ValueError("--stud-tables must be >= 0")
        if self.all_tables < 1:  # any one game's tables make a day (a roulette-only floor is one)
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
        known = tuple(dict.fromkeys(FAULT_KINDS + BLACKJACK_FAULT_KINDS + OUTCOME_FAULT_KINDS + STUD_FAULT_KINDS))
        unknown = [k for k in self.fault_kinds or () if k not in known]
        if unknown:
            raise ValueError(f"unknown fault kind(s) {', '.join(unknown)}; known: {', '.join(known)}")
        if self.row_group_rows < 1 or self.rows_per_file < self.row_group_rows:
            raise ValueError("rows_per_file must be >= row_group_rows >= 1")

    @property
    def all_tables(self) -> int:
        """Tables of every game."""
        return self.tables + self.blackjack_tables + self.roulette_tables + self.sic_bo_tables + self.stud_tables

    @property
    def kinds(self) -> tuple[str, ...]:
        from pitboss.recorder.faults import FAULT_KINDS, kinds_to_plant

        return kinds_to_plant(FAULT_KINDS, self.fault_kinds, self.fault_rate)


@dataclass(frozen=True)
class TableSpec:
    index: int  # 0-based
    table_id: str
    ruleset: Ruleset
    table_max: int
    limits: dict[str, tuple[int, int]]  # bet code -> (min_stake, max_stake)
    operator: str
    name: str

    @property
    def game(self) -> str:
        return self.ruleset.game

    @property
    def ruleset_id(self) -> str:
        return self.ruleset.id

    @property
    def side_share_cap(self) -> int | None:
        share = self.ruleset.limits.side_bet_max_share_of_table_max
        return None if share is None else self.table_max * share.numerator // share.denominator


def table_limits(rs: Ruleset, table_max: int) -> dict[str, tuple[int, int]]:
    offered = sorted({c for codes in rs.modes.values() for c in codes})
    out = {}
    for code in offered:
        if code in ("PLAYER", "BANKER"):
            hi = table_max
        elif code == "TIE":
            hi = min(TIE_MAX, table_max)
        elif rs.limits.side_bet_max_share_of_table_max is not None:
            hi = table_max // PAIR_LIMIT_SHARE
        else:
            hi = min(SIDE_MAX, table_max)
        out[code] = (MIN_STAKE, hi)
    return out


def make_tables(n: int) -> list[TableSpec]:
    width = max(2, len(str(n)))
    specs = []
    for i in range(n):
        rs_id, suffix = TABLE_RULESETS[i % len(TABLE_RULESETS)]
        rs = load_ruleset(rs_id)
        assert set(rs.bets) >= MAIN_BETS
        table_id = f"T{i + 1:0{width}d}-{suffix}"
        specs.append(
            TableSpec(
                index=i,
                table_id=table_id,
                ruleset=rs,
                table_max=TABLE_MAX,
                limits=table_limits(rs, TABLE_MAX),
                operator=OPERATORS[rs_id],
                name=f"{TABLE_NAMES[rs_id]} {i + 1}",
            )
        )
    return specs


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
