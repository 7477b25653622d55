"""The baccarat tables of the recorder (document 004: the four baccarat rulesets), beside the other games':
which tables, and their table-days shoe by shoe: dealt by simulate.py, faults planted by faults.py (and
surveillance patterns by patterns.py with --patterns), bets generated and settled a block of rounds at a time,
written as the contract's rows. Its part files are the dataset's unnamed ones (part-NNNNN.parquet).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.games.baccarat.ruleset import MAIN_BETS, Ruleset, load_ruleset
from pitboss.recorder.config import CURRENCY, SECOND, TableStats
from pitboss.recorder.faults import FAULT_KINDS, FaultPlanner, kinds_to_plant
from pitboss.recorder.players import TableClock, pool_size
from pitboss.recorder.registry import GameRecorder
from pitboss.recorder.ruleset_change import planned_changes, plant_stale, segments
from pitboss.recorder.simulate import (
    BET_CODES_PA,
    CARD_CODES_PA,
    CHANNELS_PA,
    MODES_PA,
    Accounts,
    BetMaker,
    Bets,
    Round,
    Shoe,
    deal_shoe,
    side_codes_of,
)
from pitboss.recorder.writer import PartitionedWriter, RecorderHooks, timestamps
from schemas.contract import CARDS, game_schema

GAME = "baccarat"

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
# Money in minor units (cents).
TABLE_MAX = 500_000  # 5,000.00 EUR
MIN_STAKE = 100  # 1.00 EUR
TIE_MAX = 100_000
SIDE_MAX = 50_000
# 004: the limits row of a pair bet allows up to 20% of table_max, the rule allows 10%: a stake in
# between breaks the share rule only (SIDE_BET_ABOVE_SHARE, not STAKE_ABOVE_MAX).
PAIR_LIMIT_SHARE = 5  # table_max / 5 = 20%

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


BLOCK_BETS = 16_384  # bets are generated and settled for blocks of rounds of about this many bets
_SUFFIX_CACHE: list[pa.Array] = []


def _const(value: str, n: int) -> pa.Array:
    return pa.array([value], pa.string()).take(pa.array(np.zeros(n, dtype=np.int32)))


def _suffixes(max_n: int) -> pa.Array:
    """'-B0001', '-B0002', ... as an Arrow array (index n-1)."""
    if not _SUFFIX_CACHE or len(_SUFFIX_CACHE[0]) < max_n:
        size = max(max_n, 4096)
        _SUFFIX_CACHE[:] = [pa.array([f"-B{i:04d}" for i in range(1, size + 1)], pa.string())]
    return _SUFFIX_CACHE[0]


def shoes_table(table: TableSpec, shoes: list[Shoe]) -> pa.Table:
    lengths = np.array([len(s.cards) for s in shoes], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    values = CARD_CODES_PA.take(pa.array(np.concatenate([s.cards for s in shoes]).astype(np.int32)))
    cards = pa.ListArray.from_arrays(pa.array(offsets), values, type=CARDS)
    return pa.Table.from_arrays(
        [
            pa.array([s.shoe_id for s in shoes], pa.string()),
            _const(table.table_id, len(shoes)),
            pa.array([s.shoe_no for s in shoes], pa.int32()),
            timestamps([s.opened_us for s in shoes]),
            timestamps([s.closed_us for s in shoes]),
            pa.array([s.decks for s in shoes], pa.int8()),
            cards,
            pa.array([s.cut_index for s in shoes], pa.int32()),
            pa.array([s.shuffle_id for s in shoes], pa.string()),
        ],
        schema=game_schema("shoes", GAME),
    )


def rounds_table(table: TableSpec, rounds: list[Round]) -> pa.Table:
    return pa.Table.from_arrays(
        [
            pa.array([r.round_id for r in rounds], pa.string()),
            pa.array([r.shoe_id for r in rounds], pa.string()),
            _const(table.table_id, len(rounds)),
            pa.array([r.round_no for r in rounds], pa.int32()),
            timestamps([r.open_us for r in rounds]),
            timestamps([r.closed_us for r in rounds]),
            timestamps([r.settled_us for r in rounds]),
            pa.array([r.status for r in rounds], pa.string()),
            pa.array([list(r.player) for r in rounds], CARDS),
            pa.array([list(r.banker) for r in rounds], CARDS),
            pa.array([r.player_score for r in rounds], pa.int8()),
            pa.array([r.banker_score for r in rounds], pa.int8()),
            pa.array([r.outcome for r in rounds], pa.string()),
            pa.array([r.dealer_id for r in rounds], pa.string()),
            pa.array([f"vod://{table.table_id}/{r.round_id}.mp4" for r in rounds], pa.string()),
        ],
        schema=game_schema("rounds", GAME),
    )


def bets_table(table: TableSpec, rounds: list[Round], bets: Bets, accounts: Accounts) -> pa.Table:
    n = len(bets)
    R = len(rounds)
    round_ids = pa.array([r.round_id for r in rounds] + [r.round_id + "-GHOST" for r in rounds], pa.string())
    ridx = pa.array(bets.ridx + bets.ghost.astype(np.int64) * R)
    round_col = round_ids.take(ridx)
    max_n = int(bets.n.max()) if n else 1
    bet_ids = pc.binary_join_element_wise(round_col, _suffixes(max_n).take(pa.array(bets.n - 1)), "")
    settled = np.array([r.settled_us for r in rounds], dtype=np.int64)[bets.ridx]
    seat = (pa.array(accounts.seat[bets.acc].astype(np.int8), pa.int8()) if accounts.seat is not None
            else pa.nulls(n, pa.int8()))  # fmt: skip
    return pa.Table.from_arrays(
        [
            bet_ids,
            round_col,
            _const(table.table_id, n),
            accounts.ids.take(pa.array(bets.acc)),
            timestamps(bets.placed),
            BET_CODES_PA.take(pa.array(bets.type)),
            MODES_PA.take(pa.array(bets.mode)),
            pa.array(bets.stake, pa.int64()),
            _const(CURRENCY, n),
            pa.array(bets.paid, pa.int64()),
            timestamps(settled),
            seat,
            CHANNELS_PA.take(pa.array(accounts.channel[bets.acc])),
        ],
        schema=game_schema("bets", GAME),
    )


class BaccaratRecorder(RecorderHooks):
    """The baccarat tables of a `pitboss generate` run: their rows, files, statistics and manifest."""

    def __init__(self, config, out: Path, n_tables: int, first_index: int):
        assert first_index == 0  # (the first game of the registry: its tables lead the run's)
        self.config = config
        self.tables = make_tables(n_tables)
        rg, per_file = config.row_group_rows, config.rows_per_file
        self.writers = {
            "shoes": PartitionedWriter(out / "shoes", game_schema("shoes", GAME), max(1, rg // 64),
                                       max(1, per_file // 64)),
            "rounds": PartitionedWriter(out / "rounds", game_schema("rounds", GAME), rg, per_file),
            "bets": PartitionedWriter(out / "bets", game_schema("bets", GAME), rg, per_file),
        }  # fmt: skip
        self.planner = FaultPlanner(kinds_to_plant(FAULT_KINDS, config.fault_kinds, config.fault_rate),
                                    config.fault_rate)
        self.stats = [TableStats(t.table_id, t.ruleset.id) for t in self.tables]
        self.pools = [Accounts(t, np.random.default_rng([config.seed, 1, t.index]), pool_size(config.bets_per_round),
                               side_codes_of(t))
                      for t in self.tables]  # fmt: skip
        self.makers = [BetMaker(t, a, config.bets_per_round) for t, a in zip(self.tables, self.pools, strict=True)]
        self.shoe_no = [0] * len(self.tables)
        # a table whose ruleset changes mid-night (ruleset_change.py): none on a --patterns floor
        self.changes = {} if config.patterns or not config.ruleset_change else planned_changes(
            self.tables, self.pools, table_limits, config.bets_per_round, config.rounds_per_table)
        self.block_rounds = int(min(2048, max(64, BLOCK_BETS / max(config.bets_per_round, 1.0))))

    def record_day(self, day: int, business: date, day_us: int, spill: Path, progress=None, task=None) -> None:
        """Every baccarat table's shoes for one business day; the manifest rows spilled per table-day."""
        config, planner, patterns = self.config, self.planner, self.patterns
        iso = business.isoformat()
        dealing = patterns.hooks(planner) if patterns else planner  # --patterns: shoe patterns, then the faults
        for table, pool, maker, st in zip(self.tables, self.pools, self.makers, self.stats, strict=True):
            rng = np.random.default_rng([config.seed, 2, table.index, day])
            planner.start_unit(table, iso, np.random.default_rng([config.seed, 3, table.index, day]))
            pool.streak[:] = 0
            clock = TableClock.opening(table, day_us)
            if patterns:
                patterns.start_table_day(table, day_us)
            mini = table.ruleset.shoe.reshuffle_every_hand
            done = 0
            n_in_day = 0
            while done < config.rounds_per_table:
                # A block: whole shoes (mini-baccarat: hands) worth about BLOCK_BETS bets.
                shoes: list[Shoe] = []
                in_block = 0
                while in_block < self.block_rounds and done + in_block < config.rounds_per_table:
                    n_in_day += 1
                    self.shoe_no[table.index] += 1
                    shoe_id = f"{table.table_id}-{business:%Y%m%d}-S{n_in_day:04d}"
                    shoe = deal_shoe(table, shoe_id, self.shoe_no[table.index], clock, rng, dealing,
                                     config.cancel_rate)  # fmt: skip
                    shoes.append(shoe)
                    in_block += len(shoe.rounds)
                    if not mini:
                        clock.now += int(rng.integers(240 * SECOND, 420 * SECOND))  # shuffle the next shoe
                rounds = [r for s in shoes for r in s.rounds]
                self.writers["shoes"].write(shoes_table(table, shoes))
                self.writers["rounds"].write(rounds_table(table, rounds))
                change = self.changes.get(table.index)
                # the bets of each part of the block under one ruleset (two where the table's changes in it)
                for spec, by, part, straddled in segments(change, table, maker, rounds, day, done):
                    bets = by.make(part, rng)
                    kept = None
                    if change is not None and spec is change.after:
                        bets, kept = plant_stale(change, planner, part, bets, straddled, pool)
                    bets = planner.plant_bets(spec, part, bets, by, pool, kept)
                    if patterns:  # the pattern accounts' bets, after the faults
                        bets = patterns.plant_bets(spec, shoes, part, bets, by, planner)
                    self.writers["bets"].write(bets_table(spec, part, bets,
                                                          patterns.accounts(spec, pool) if patterns else pool))
                    st.bets += len(bets)
                    st.staked += int(bets.stake.sum())
                    st.paid += int(bets.paid.sum())
                done += len(rounds)
                st.shoes += len(shoes)
                st.rounds += len(rounds)
                st.cancelled += sum(r.cancelled for r in rounds)
                if progress:
                    progress.advance(task, len(rounds))
            planner.spill(spill, table.index, day)
            if progress:  # shoes are never split: a table-day may deal more rounds than asked
                progress.update(task, total=progress.tasks[0].total + done - config.rounds_per_table)

    @property
    def ruleset_changes(self) -> list[dict]:
        """The table_rulesets rows of the run (a change not reached, none)."""
        return [c.row() for c in self.changes.values() if c.at_us is not None]


RECORDER = GameRecorder(
    game=GAME, field="tables", default_tables=4, fault_kinds=FAULT_KINDS, record=BaccaratRecorder, base_files=True,
    help="Baccarat tables, cycling over the four baccarat rulesets; 0 for a day of other games only.",
)
