"""The recorder run: tables x business days, shoe by shoe, streamed to Parquet with the fault manifest."""

from __future__ import annotations

import shutil
import time
from contextlib import nullcontext
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.cards import CARD_CODES
from pitboss.recorder.blackjack import BlackjackRecorder
from pitboss.recorder.config import (
    CURRENCY,
    DAY_OPENS_AT,
    SECOND,
    GenerateConfig,
    Summary,
    TableSpec,
    TableStats,
    make_tables,
)
from pitboss.recorder.faults import MANIFEST_SCHEMA, FaultPlanner
from pitboss.recorder.outcomes import OutcomeRecorder
from pitboss.recorder.patterns import PatternPlanter
from pitboss.recorder.roulette import GAME as ROULETTE
from pitboss.recorder.sic_bo import GAME as SIC_BO
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
    TableClock,
    deal_shoe,
    side_codes_of,
)
from pitboss.recorder.writer import (
    FileWriter,
    PartitionedWriter,
    limits_table,
    prepare_out,
    tables_table,
    timestamps,
    write_single,
)
from schemas.contract import CARDS, game_schema

BLOCK_BETS = 16_384  # bets are generated and settled for blocks of rounds of about this many bets
_SUFFIX_CACHE: list[pa.Array] = []


def _epoch_us(d: date) -> int:
    return int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()) * SECOND


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
        schema=game_schema("shoes", "baccarat"),
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
        schema=game_schema("rounds", "baccarat"),
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
        schema=game_schema("bets", "baccarat"),
    )


def _pool_size(bets_per_round: float) -> int:
    return max(200, int(bets_per_round * 10))


def generate(config: GenerateConfig) -> Summary:
    """Simulate the tables over the business days and write the dataset under `config.out`."""
    config.validate()
    started = time.perf_counter()
    out = Path(config.out)
    prepare_out(out)
    tables = make_tables(config.tables)
    # Blackjack tables (if any) after the baccarat ones: their rows appended to tables and limits, their
    # shoes, rounds and bets in files of their own beside baccarat's (pitboss/recorder/blackjack.py).
    bj = BlackjackRecorder(config, out, len(tables)) if config.blackjack_tables else None
    # Roulette, then sic bo tables (if any) after the blackjack ones, the same way (pitboss/recorder/outcomes.py).
    others: list = [bj] if bj is not None else []
    first = config.tables + config.blackjack_tables
    for spec, n in ((ROULETTE, config.roulette_tables), (SIC_BO, config.sic_bo_tables)):
        if n:
            others.append(OutcomeRecorder(spec, config, out, n, first))
        first += n
    # Casino stud tables (if any) after the sic bo ones: a fresh deck a round, the jackpot pools carried
    # from round to round and day to day (pitboss/recorder/casino_stud.py).
    if config.stud_tables:
        from pitboss.recorder.casino_stud import StudRecorder

        others.append(StudRecorder(config, out, first))
    # --patterns: surveillance patterns planted on the way (pitboss/recorder/patterns.py), listed in patterns.parquet.
    patterns = PatternPlanter(config, tables, _pool_size(config.bets_per_round)) if config.patterns else None
    (out / "patterns.parquet").unlink(missing_ok=True)
    for rec in others:
        if isinstance(rec, OutcomeRecorder):
            rec.patterns = patterns
    every_table = [*tables, *(t for rec in others for t in rec.tables)]
    write_single(out / "tables.parquet", tables_table(every_table))
    write_single(out / "limits.parquet", limits_table(every_table))
    rg, per_file = config.row_group_rows, config.rows_per_file
    writers = {
        "shoes": PartitionedWriter(out / "shoes", game_schema("shoes", "baccarat"), max(1, rg // 64),
                                   max(1, per_file // 64)),
        "rounds": PartitionedWriter(out / "rounds", game_schema("rounds", "baccarat"), rg, per_file),
        "bets": PartitionedWriter(out / "bets", game_schema("bets", "baccarat"), rg, per_file),
    }
    planner = FaultPlanner(config.kinds, config.fault_rate)
    dealing = patterns.hooks(planner) if patterns else planner  # --patterns: shoe patterns, then the faults
    stats = [TableStats(t.table_id, t.ruleset.id) for t in tables]
    pools = [
        Accounts(
            t, np.random.default_rng([config.seed, 1, t.index]), _pool_size(config.bets_per_round), side_codes_of(t)
        )
        for t in tables
    ]
    makers = [BetMaker(t, a, config.bets_per_round) for t, a in zip(tables, pools, strict=True)]
    shoe_no = [0] * len(tables)
    # The manifest is spilled per table-day (sorted) and assembled table by table at the end.
    spill = out / ".faults-spill"
    shutil.rmtree(spill, ignore_errors=True)
    spill.mkdir()
    block_rounds = int(min(2048, max(64, BLOCK_BETS / max(config.bets_per_round, 1.0))))

    progress_cm = nullcontext(None)
    if not config.quiet:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress_cm = Progress(TextColumn("[bold]recording"), BarColumn(), MofNCompleteColumn(),
                               TextColumn("rounds"), TimeElapsedColumn(), transient=False)  # fmt: skip
    with progress_cm as progress:
        task = (
            progress.add_task(
                "rounds", total=config.all_tables * config.days * config.rounds_per_table
            )
            if progress
            else None
        )
        for day in range(config.days):
            business = config.start_date + timedelta(days=day)
            iso = business.isoformat()
            for w in writers.values():
                w.open(iso)
            if patterns:
                patterns.start_day(day, business)
            for table, pool, maker, st in zip(tables, pools, makers, stats, strict=True):
                rng = np.random.default_rng([config.seed, 2, table.index, day])
                planner.start_unit(table, iso, np.random.default_rng([config.seed, 3, table.index, day]))
                pool.streak[:] = 0
                day_us = _epoch_us(business)
                clock = TableClock(table, day_us + DAY_OPENS_AT + (table.index % 12) * 5 * 60 * SECOND, day_us)
                if patterns:
                    patterns.start_table_day(table, day_us)
                mini = table.ruleset.shoe.reshuffle_every_hand
                done = 0
                n_in_day = 0
                while done < config.rounds_per_table:
                    # A block: whole shoes (mini-baccarat: hands) worth about BLOCK_BETS bets.
                    shoes: list[Shoe] = []
                    in_block = 0
                    while in_block < block_rounds and done + in_block < config.rounds_per_table:
                        n_in_day += 1
                        shoe_no[table.index] += 1
                        shoe_id = f"{table.table_id}-{business:%Y%m%d}-S{n_in_day:04d}"
                        shoe = deal_shoe(table, shoe_id, shoe_no[table.index], clock, rng, dealing, config.cancel_rate)
                        shoes.append(shoe)
                        in_block += len(shoe.rounds)
                        if not mini:
                            clock.now += int(rng.integers(240 * SECOND, 420 * SECOND))  # shuffle the next shoe
                    rounds = [r for s in shoes for r in s.rounds]
                    bets = maker.make(rounds, rng)
                    bets = planner.plant_bets(table, rounds, bets, maker, pool)
                    if patterns:  # the pattern accounts' bets, after the faults
                        bets = patterns.plant_bets(table, shoes, rounds, bets, maker, planner)
                    writers["shoes"].write(shoes_table(table, shoes))
                    writers["rounds"].write(rounds_table(table, rounds))
                    writers["bets"].write(bets_table(table, rounds, bets,
                                                     patterns.accounts(table, pool) if patterns else pool))
                    done += len(rounds)
                    st.shoes += len(shoes)
                    st.rounds += len(rounds)
                    st.cancelled += sum(r.cancelled for r in rounds)
                    st.bets += len(bets)
                    st.staked += int(bets.stake.sum())
                    st.paid += int(bets.paid.sum())
                    if progress:
                        progress.advance(task, len(rounds))
                rows = planner.take_rows()
                if rows.num_rows:
                    order = [(c, "ascending") for c in ("shoe_id", "round_id", "bet_id", "kind")]
                    pq.write_table(rows.sort_by(order), spill / f"{table.index:06d}-{day:06d}.parquet")
                if progress:  # shoes are never split: a table-day may deal more rounds than asked
                    progress.update(task, total=progress.tasks[0].total + done - config.rounds_per_table)
            for rec in others:
                rec.open(iso)
                rec.record_day(day, business, _epoch_us(business), spill, progress, task)
        for w in writers.values():
            w.close()
        for rec in others:
            rec.close()
    faults = FileWriter(out / "faults.parquet", MANIFEST_SCHEMA, config.row_group_rows)
    for part in sorted(spill.glob("*.parquet")):  # by table, then business day
        faults.write(pq.read_table(part))
    faults.close()
    shutil.rmtree(spill)
    if patterns:
        write_single(out / "patterns.parquet", patterns.table())
    summary = Summary(out, stats, dict(planner.counts), time.perf_counter() - started)
    summary.patterns = patterns.counts if patterns else {}
    summary.files = {name: w.files for name, w in writers.items()}
    for rec in others:
        summary.tables += rec.stats
        counts = rec.counts
        kinds = dict.fromkeys([*summary.faults, *counts])
        summary.faults = {k: summary.faults.get(k, 0) + counts.get(k, 0) for k in kinds}
        summary.files = {name: n + rec.writers[name].files for name, n in summary.files.items()}
    return summary


assert len(CARD_CODES) == 52
