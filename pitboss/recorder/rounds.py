"""What the round-by-round recorders share (a game whose tables are simulated in pure Python, a round at a
time): their tables, the table-day loop with its seeded streams and manifest spill, the contract rows every
game's rounds and bets record, and the bet faults every such game plants the same way. Names no game: a game's
recorder subclasses `RoundRecorder` and `BetFaults` (pitboss/recorder/<game>.py, or outcomes.py for a game
whose round is one outcome).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pitboss.recorder.config import CURRENCY, SECOND, TableStats
from pitboss.recorder.manifest import GHOST, Manifest, bet_id, instant_text
from pitboss.recorder.players import CHANNELS, Accounts, TableClock, pool_size
from pitboss.recorder.writer import GameWriter, RecorderHooks, timestamps
from schemas.contract import CARDS, game_schema


@dataclass(frozen=True)
class GameTable:
    index: int  # 0-based, after the tables of the games before it (account ids, dealer ids and the manifest use it)
    table_id: str
    game: str
    rules: Any
    table_max: int
    limits: dict[str, tuple[int, int]]  # every code the table offers -> (min_stake, max_stake)
    operator: str
    name: str

    @property
    def ruleset_id(self) -> str:
        return self.rules.id


def make_tables(game: str, rules, n: int, first_index: int, *, suffix: str, title: str, operator: str,
                table_max: int, limits: dict[str, tuple[int, int]], cls: type = GameTable) -> list:
    """`n` tables of one ruleset, numbered on from the `first_index` tables before them: T05-<suffix>."""
    width = max(2, len(str(first_index + n)))
    return [cls(i, f"T{i + 1:0{width}d}-{suffix}", game, rules, table_max, dict(limits), operator, f"{title} {i + 1}")
            for i in range(first_index, first_index + n)]  # fmt: skip


@dataclass(frozen=True)
class Streams:
    """The names of a game's seeded random streams (fixed: the same seed gives the same rows)."""

    deal: str  # a table-day's play: "<seed>/<deal>/<table index>/<day>"
    faults: str  # a table-day's fault choices
    accounts: str  # a table's pool of accounts: "<seed>/<accounts>/<table index>"
    manifest: int  # the manifest's numpy stream of a table-day: [seed, manifest, table index, day]


class RoundRecorder(RecorderHooks):
    """The tables of one game in a `pitboss generate` run: their writers, manifest, statistics and accounts, and
    the table-day loop; a game gives `record_table_day` (its rounds, planted and written; returns how many)."""

    def __init__(self, config, out: Path, game: str, tables: list, kinds: tuple[str, ...], streams: Streams):
        self.config, self.tables, self.kinds, self.streams = config, tables, kinds, streams
        self.writers = game_writers(out, config, game)
        self.planner = Manifest(kinds, config.fault_rate)
        self.stats = [TableStats(t.table_id, t.ruleset_id) for t in tables]
        self.accounts = [Accounts(t, random.Random(f"{config.seed}/{streams.accounts}/{t.index}"),
                                  pool_size(config.bets_per_round))
                         for t in tables]  # fmt: skip
        self.frnd = random.Random(0)  # the table-day's fault stream (set for each table-day)

    def record_day(self, day: int, business: date, day_us: int, spill: Path, progress=None, task=None) -> None:
        """Every table's rounds for one business day; the manifest rows spilled per table-day."""
        seed, streams, iso = self.config.seed, self.streams, business.isoformat()
        for k, table in enumerate(self.tables):
            rnd = random.Random(f"{seed}/{streams.deal}/{table.index}/{day}")
            self.frnd = random.Random(f"{seed}/{streams.faults}/{table.index}/{day}")
            self.planner.start_unit(table, iso, np.random.default_rng([seed, streams.manifest, table.index, day]))
            done = self.record_table_day(k, table, day, business, TableClock.opening(table, day_us), rnd)
            self.planner.spill(spill, table.index, day)
            if progress is not None:  # a table-day may deal more rounds than asked (a shoe is never split)
                progress.advance(task, done)
                progress.update(task, total=progress.tasks[0].total + done - self.config.rounds_per_table)

    def record_table_day(self, k: int, table, day: int, business: date, clock: TableClock, rnd: random.Random
                         ) -> int:
        raise NotImplementedError

    def pick(self, candidates: list[str]) -> str | None:
        """The kind to plant on an item eligible for `candidates` (a needed kind is forced), if any."""
        return self.planner.pick(candidates, self.frnd)

    def write(self, k: int, shoes: pa.Table, rounds: list, rounds_rows: pa.Table, bets: pa.Table) -> None:
        """A table-day's rows to the files, and into its table's statistics (staked: with what play added)."""
        st = self.stats[k]
        for name, rows in (("shoes", shoes), ("rounds", rounds_rows), ("bets", bets)):
            self.writers[name].write(rows)
        st.shoes += shoes.num_rows
        st.rounds += len(rounds)
        st.cancelled += sum(r.cancelled for r in rounds)
        st.bets += bets.num_rows
        st.staked += sum(b.stake + (b.added or 0) for r in rounds for b in r.bets)
        st.paid += sum(b.paid for r in rounds for b in r.bets)


def game_writers(out: Path, config, game: str) -> dict[str, GameWriter]:
    """A game's shoes, rounds and bets part files (shoes in smaller row groups: a shoe row is a shoe's cards)."""
    rg, per_file = config.row_group_rows, config.rows_per_file
    return {
        "shoes": GameWriter(out / "shoes", game_schema("shoes", game), max(1, rg // 64), max(1, per_file // 64), game),
        "rounds": GameWriter(out / "rounds", game_schema("rounds", game), rg, per_file, game),
        "bets": GameWriter(out / "bets", game_schema("bets", game), rg, per_file, game),
    }


# ---------------------------------------------------------------------------------------------
# Contract rows (columns by name, in the contract's order for the game)


def contract_table(name: str, game: str, cols: dict[str, pa.Array]) -> pa.Table:
    schema = game_schema(name, game)
    assert set(cols) == set(schema.names), set(cols) ^ set(schema.names)
    return pa.Table.from_arrays([cols[n] for n in schema.names], schema=schema)


def round_columns(table, rounds: list) -> dict[str, pa.Array]:
    """The rounds columns every game records (each round has round_id, shoe_id, round_no, open_us, closed_us,
    settled_us, status and dealer_id)."""
    n = len(rounds)
    return {
        "round_id": pa.array([r.round_id for r in rounds], pa.string()),
        "shoe_id": pa.array([r.shoe_id for r in rounds], pa.string()),
        "table_id": pa.array([table.table_id] * n, pa.string()),
        "round_no": pa.array([r.round_no for r in rounds], pa.int32()),
        "betting_opened_at": timestamps([r.open_us for r in rounds]),
        "betting_closed_at": timestamps([r.closed_us for r in rounds]),
        "settled_at": timestamps([r.settled_us for r in rounds]),
        "status": pa.array([r.status for r in rounds], pa.string()),
        "dealer_id": pa.array([r.dealer_id for r in rounds], pa.string()),
        "video_ref": pa.array([f"vod://{table.table_id}/{r.round_id}.mp4" for r in rounds], pa.string()),
    }


def bets_table(game: str, table, rounds: list, acc: Accounts, own) -> pa.Table:
    """The rounds' bets (a bet planted on a round not in rounds under its GHOST round id): the columns every
    game records, and `own(bets)`, the game's own columns of these bets."""
    rows = [(r, b) for r in rounds for b in r.bets]
    n = len(rows)
    rid = [r.round_id + (GHOST if b.ghost else "") for r, b in rows]
    return contract_table("bets", game, {
        "bet_id": pa.array([bet_id(x, b.n) for x, (_, b) in zip(rid, rows, strict=True)], pa.string()),
        "round_id": pa.array(rid, pa.string()),
        "table_id": pa.array([table.table_id] * n, pa.string()),
        "account_id": pa.array([acc.ids[b.acc] for _, b in rows], pa.string()),
        "placed_at": timestamps([b.placed for _, b in rows]),
        "bet_type": pa.array([b.type for _, b in rows], pa.string()),
        "stake": pa.array([b.stake for _, b in rows], pa.int64()),
        "currency": pa.array([CURRENCY] * n, pa.string()),
        "paid": pa.array([b.paid for _, b in rows], pa.int64()),
        "settled_at": timestamps([r.settled_us for r, _ in rows]),
        "channel": pa.array([CHANNELS[acc.channel[b.acc]] for _, b in rows], pa.string()),
        **own([b for _, b in rows]),
    })  # fmt: skip


def boxed_bet_columns(bets: list) -> dict[str, pa.Array]:
    """The own bets columns of a game whose bets are on a box (seat) and may have a stake added in play."""
    return {"added_stake": pa.array([b.added for b in bets], pa.int64()),
            "seat": pa.array([b.seat for b in bets], pa.int8())}  # fmt: skip


def boxed_round_columns(rounds: list) -> dict[str, pa.Array]:
    """The own rounds columns of a game that deals cards to boxes and to a dealer, as recorded (each round has
    dealer_cards, boxes, box_cards and actions)."""
    return {
        "dealer_cards": pa.array([list(r.dealer_cards) for r in rounds], CARDS),
        "boxes": pa.array([list(r.boxes) for r in rounds], pa.list_(pa.int8())),
        "box_cards": pa.array([[list(c) for c in r.box_cards] for r in rounds], pa.list_(CARDS)),
        "box_actions": pa.array([list(r.actions) for r in rounds], pa.list_(pa.string())),
    }


# ---------------------------------------------------------------------------------------------
# Bet faults


class BetFaults:
    """The bet faults of one round, each keeping every other rule intact: the bookkeeping every game's share,
    and the faults they plant alike. Each bet has n, acc, type, stake, paid, placed, ghost and dup."""

    not_offered: tuple[str, ...] = ()  # bet codes of other games, for BET_TYPE_NOT_OFFERED

    def __init__(self, rec: RoundRecorder, table, acc: Accounts, r, busy: set[int] | None = None):
        self.rec, self.table, self.acc, self.r = rec, table, acc, r
        self.f = rec.frnd
        self.busy: set[int] = set() if busy is None else busy  # accounts with a fault in this round
        self.taken: set[int] = set()  # bets (by n) with a fault
        self.next_n = len(r.bets) + 1
        self.next_ghost = 1

    def record(self, kind: str, b, change: str, round_id: str | None = None, shoe: str | None = "") -> None:
        rid = round_id or self.r.round_id
        self.rec.planner.record(kind, self.r.shoe_id if shoe == "" else shoe, rid, bet_id(rid, b.n), change)

    def add(self, b):
        b.n = self.next_n
        self.next_n += 1
        self.r.bets.append(b)
        return b

    def plant(self, kind: str, b) -> bool:
        return getattr(self, "plant_" + kind.lower())(b)

    def idle_account(self) -> int | None:
        """An account with no bet and no fault in the round (marked busy)."""
        present = {b.acc for b in self.r.bets} | self.busy
        got = self.acc.draw(self.f, 1, present)
        if got:
            self.busy.add(got[0])
            return got[0]
        return None

    def plant_late(self, b, what: str, paid: str) -> bool:
        """Past posting: `b` placed 1 us to 3 s after betting closed (a fifth of them 1 us after), paid right."""
        old, closed = b.placed, self.r.closed_us
        b.placed = closed + (1 if self.f.random() < 0.2 else self.f.randrange(1, 3 * SECOND))
        self.record("LATE_BET", b, f"{what}placed_at {instant_text(old)} -> {instant_text(b.placed)} (betting closed "
                                   f"{instant_text(closed)}: past posting); {paid}")
        return True

    def plant_bet_type_not_offered(self, b) -> bool:
        """A bet of another game's code (`not_offered`) added for `b`'s account on its box, refunded (a game whose
        bets are on boxes; a game of selections plants its own)."""
        code = self.f.choice(self.not_offered)
        stake = 100 * self.f.randrange(1, 51)
        new = self.add(replace(b, n=0, type=code, stake=stake, paid=stake, added=None,
                               placed=self.rec.in_window(self.r, self.f)))  # fmt: skip
        self.record("BET_TYPE_NOT_OFFERED", new, f"{code} bet added on box {b.seat}, not offered by "
                                                 f"{self.rec.rules.id}; refunded {stake}")
        return True

    def ghost_paid(self, b) -> int:
        """What a copy of `b` on a round that is not in rounds is paid: refunded."""
        return b.stake

    def plant_unknown_round(self, b) -> bool:
        ghost = replace(b, n=self.next_ghost, paid=self.ghost_paid(b), placed=b.placed + 1, ghost=True)
        self.next_ghost += 1
        self.r.bets.append(ghost)
        rid = self.r.round_id + GHOST
        self.record("UNKNOWN_ROUND", ghost, f"bet on round {rid}, which is not in rounds (copy of "
                                            f"{bet_id(self.r.round_id, b.n)})", round_id=rid, shoe=None)
        return True

    def plant_duplicate_bet(self, b) -> bool:
        self.r.bets.append(replace(b, dup=True))
        self.record("DUPLICATE_BET", b, "bet row written twice (same bet_id, same values)")
        return True


    def restake(self, kind: str, b, new: int, limit: str) -> bool:
        """`b`'s stake -> `new`, breaking `limit`, paid as the engine settles it (the game's)."""
        raise NotImplementedError

    def plant_stake_below_min(self, b) -> bool:
        mn = self.table.limits[b.type][0]
        return self.restake("STAKE_BELOW_MIN", b, self.f.choice([x for x in (10, 20, 25, 50) if x < mn]),
                            f"min_stake {mn}")

    def plant_stake_above_max(self, b) -> bool:
        mx = self.table.limits[b.type][1]
        return self.restake("STAKE_ABOVE_MAX", b, mx + 100 * self.f.randrange(1, max(2, mx // 400)),
                            f"max_stake {mx}")
