"""The recorder of tables whose round records one outcome and no cards (a wheel's pocket, three dice), beside
the baccarat and blackjack ones. Names no game: a game gives an `OutcomeGame` (pitboss/recorder/roulette.py,
sic_bo.py) with its ruleset, limits, the legal selections of its engine's layout, how an outcome is drawn
and how its engine settles a bet.

One session per table-day (a `shoes` row: decks 0, no cards, the wheel or shaker as `equipment_id`); a
round every ~45 s: a betting window, the outcome drawn from the seeded stream (a uniform pocket, fair
dice), bets of every code with legal selections, every `paid` the engine's credit; a few cancelled rounds
(every bet refunded; the outcome sometimes never recorded). Faults are planted on the way, each written to
the manifest with the row the audit reports it on, and kept from causing any other finding:

* round level (none on a cancelled round; the round then gets no bet fault, its bets are quarantined by
  the audit): OUTCOME_INVALID (an outcome outside the game's values), OUTCOME_MISSING (a settled round
  without one);
* bet level (none on a round with a round-level fault, at most one per account and round; the bets of a
  cancelled round only get "not refunded"): OVERPAID (incl. the traps: zero paying an even chance, a
  triple paying small/big), UNDERPAID, SELECTION_INVALID, STAKE_BELOW_MIN, STAKE_ABOVE_MAX, LATE_BET (past
  posting: 1 us to 3 s after the close, still paid right), BET_TYPE_NOT_OFFERED (a code of the other game),
  ROUND_STAKE_ABOVE_TABLE_MAX, UNKNOWN_ROUND, DUPLICATE_BET.

No fault takes an account's total on a round above the table maximum except the one planted to.
Randomness: `random.Random` streams seeded from (seed, game, table index, business day); nothing here
touches the other tables' streams, so their files are byte-identical with or without these tables.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.betting import BetVerdict, RecordedBet
from pitboss.recorder.config import CURRENCY, DAY_OPENS_AT, SECOND, TableStats
from pitboss.recorder.faults import GHOST, FaultPlanner, bet_id, instant_text, kinds_to_plant
from pitboss.recorder.players import Accounts, chips, clip
from pitboss.recorder.simulate import CHANNELS, TableClock
from pitboss.recorder.writer import GameWriter, RecorderHooks, timestamps
from schemas.contract import CARDS, game_schema

ROUND_KINDS = ("OUTCOME_INVALID", "OUTCOME_MISSING")
BET_KINDS = ("OVERPAID", "UNDERPAID", "SELECTION_INVALID", "STAKE_BELOW_MIN", "STAKE_ABOVE_MAX", "LATE_BET",
             "BET_TYPE_NOT_OFFERED", "ROUND_STAKE_ABOVE_TABLE_MAX", "UNKNOWN_ROUND", "DUPLICATE_BET")  # fmt: skip
OUTCOME_FAULT_KINDS: tuple[str, ...] = ROUND_KINDS + BET_KINDS

BETTING_WINDOW = 18 * SECOND  # "place your bets" to "no more bets"
ACCOUNT_SHARE = 0.4  # an account's bets on a round stay within this share of table_max (room for the faults)
CHIPS_PER_ACCOUNT = (1, 2, 3, 4, 5, 6)
CHIPS_WEIGHTS = (40, 25, 15, 10, 6, 4)


def kinds_of(fault_kinds: tuple[str, ...] | None, fault_rate: float) -> tuple[str, ...]:
    """The kinds to plant on these tables for `--fault-kinds` (None = all) at `--fault-rate` (0 = none)."""
    return kinds_to_plant(OUTCOME_FAULT_KINDS, fault_kinds, fault_rate)


@dataclass(frozen=True)
class OutcomeGame:
    """What a game gives the recorder."""

    name: str  # tables.game
    ruleset: str
    suffix: str  # of the table id: T05-RL
    title: str  # of the table's name
    operator: str
    equipment: str  # equipment_id prefix: WHEEL-T05
    outcome_column: str
    outcome_type: pa.DataType
    table_max: int
    limits: dict[str, tuple[int, int]]  # every code the ruleset offers -> (min_stake, max_stake)
    weights: dict[str, float]  # how often players choose each code
    load_rules: Callable[[str], Any]
    selections: Callable[[Any, str], tuple[str | None, ...]]  # (rules, code) -> legal selections (the layout's)
    draw: Callable[[random.Random], Any]  # a fair outcome
    judge: Callable[[Any, RecordedBet, Any], BetVerdict]  # the engine's settlement of a bet on a valid outcome
    describe: Callable[[Any], str]
    invalid_outcome: Callable[[random.Random], tuple[Any, str]]  # an outcome the game cannot have, in words
    missing_outcome: Callable[[random.Random], Any]  # what a console records when it records none
    invalid_selection: Callable[[random.Random, str], tuple[str, str] | None]  # (code) -> (selection, why)
    foreign_bet: Callable[[random.Random], tuple[str, str | None]]  # a code of another game, with a selection
    trap: Callable[[Any, str, Any], str | None]  # (rules, code, outcome): a loss a careless dealer pays as a win
    even_money: tuple[str, ...]  # codes with the highest limit (the table-max fault piles them up)


@dataclass(frozen=True)
class OutcomeTable:
    index: int  # 0-based, after the tables of the games before it
    table_id: str
    game: str
    rules: Any
    table_max: int
    limits: dict[str, tuple[int, int]]
    operator: str
    name: str

    @property
    def ruleset_id(self) -> str:
        return self.rules.id


def make_tables(spec: OutcomeGame, n: int, first_index: int) -> list[OutcomeTable]:
    rules = spec.load_rules(spec.ruleset)
    assert all(rules.offers(code) for code in spec.limits), spec.name
    width = max(2, len(str(first_index + n)))
    return [OutcomeTable(i, f"T{i + 1:0{width}d}-{spec.suffix}", spec.name, rules, spec.table_max, dict(spec.limits),
                         spec.operator, f"{spec.title} {i + 1}")
            for i in range(first_index, first_index + n)]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Rounds and bets


@dataclass(slots=True)
class _Bet:
    n: int
    acc: int
    type: str
    selection: str | None
    stake: int
    paid: int
    placed: int
    ghost: bool = False
    dup: bool = False


@dataclass
class _Round:
    round_id: str
    session_id: str
    round_no: int
    open_us: int
    closed_us: int
    settled_us: int
    dealer_id: str
    outcome: Any  # what the bets are owed on
    recorded: Any  # what the round records
    status: str = "settled"
    fault: str | None = None
    bets: list[_Bet] = field(default_factory=list)
    credits: dict[tuple[str, str | None, int], BetVerdict] = field(default_factory=dict)

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"


@dataclass
class _Session:
    shoe_id: str
    shoe_no: int
    opened_us: int
    equipment_id: str
    rounds: list[_Round] = field(default_factory=list)
    closed_us: int = 0


class OutcomeRecorder(RecorderHooks):
    """The tables of one outcome game in a `pitboss generate` run: rows, files, statistics and manifest."""

    def __init__(self, spec: OutcomeGame, config, out: Path, n_tables: int, first_index: int):
        self.spec, self.config = spec, config
        self.tables = make_tables(spec, n_tables, first_index)
        self.rules = spec.load_rules(spec.ruleset)
        rg, per_file = config.row_group_rows, config.rows_per_file
        game = spec.name
        self.writers = {
            "shoes": GameWriter(out / "shoes", game_schema("shoes", game), max(1, rg // 64), max(1, per_file // 64),
                                game),
            "rounds": GameWriter(out / "rounds", game_schema("rounds", game), rg, per_file, game),
            "bets": GameWriter(out / "bets", game_schema("bets", game), rg, per_file, game),
        }
        self.kinds = kinds_of(config.fault_kinds, config.fault_rate)
        self.planner = FaultPlanner(self.kinds, config.fault_rate)
        self.trap_wanted = "OVERPAID" in self.kinds  # the first bet a trap can be planted on gets it
        self.stats = [TableStats(t.table_id, t.ruleset_id) for t in self.tables]
        pool = max(200, int(config.bets_per_round * 10))
        self.accounts = [Accounts(t, random.Random(f"{config.seed}/{game}-accounts/{t.index}"), pool)
                         for t in self.tables]  # fmt: skip
        self.codes = [c for c in spec.weights if c in spec.limits]
        self.code_weights = [spec.weights[c] for c in self.codes]
        self.legal = {c: spec.selections(self.rules, c) for c in self.codes}
        self.can_invalidate = {c for c in self.codes if spec.invalid_selection(random.Random(0), c) is not None}
        self.account_cap = int(spec.table_max * ACCOUNT_SHARE)
        self.patterns = None  # --patterns: a patterns.PatternPlanter (set by the run)

    # -- the run's hooks ----------------------------------------------------------------------------

    def record_day(self, day: int, business, day_us: int, spill: Path, progress=None, task=None) -> None:
        """One session per table for the business day; the manifest rows spilled per table-day."""
        iso, game = business.isoformat(), self.spec.name
        for k, table in enumerate(self.tables):
            rnd = random.Random(f"{self.config.seed}/{game}-spins/{table.index}/{day}")
            self.frnd = random.Random(f"{self.config.seed}/{game}-faults/{table.index}/{day}")
            self.nrng = np.random.default_rng(rnd.getrandbits(64))
            self.planner.start_unit(table, iso, np.random.default_rng([self.config.seed, 17, table.index, day]))
            clock = TableClock(table, day_us + DAY_OPENS_AT + (table.index % 12) * 5 * 60 * SECOND, day_us)
            number = table.table_id.split("-")[0]
            session = _Session(f"{table.table_id}-{business:%Y%m%d}-S0001", day + 1, clock.now,
                               f"{self.spec.equipment}-{number}")
            clock.now += rnd.randrange(60 * SECOND, 180 * SECOND)  # the wheel or shaker checked, the table opens
            for round_no in range(1, self.config.rounds_per_table + 1):
                session.rounds.append(self.play_round(table, self.accounts[k], session, round_no, clock, rnd))
            session.closed_us = session.rounds[-1].settled_us + rnd.randrange(30 * SECOND, 120 * SECOND)
            self.write(table, self.accounts[k], session, self.stats[k])
            rows = self.planner.take_rows()
            if rows.num_rows:
                order = [(c, "ascending") for c in ("shoe_id", "round_id", "bet_id", "kind")]
                pq.write_table(rows.sort_by(order), spill / f"{table.index:06d}-{day:06d}.parquet")
            if progress is not None:
                progress.advance(task, len(session.rounds))

    def pick(self, candidates: list[str]) -> str | None:
        p = self.planner
        for kind in candidates:
            if kind in p.kinds and (kind in p.needed or self.frnd.random() < p.rate):
                return kind
        return None

    # -- a round -------------------------------------------------------------------------------------

    def play_round(self, table: OutcomeTable, acc: Accounts, session: _Session, round_no: int, clock: TableClock,
                   rnd: random.Random) -> _Round:
        outcome = self.spec.draw(rnd)
        if self.patterns is not None:  # --patterns: a biased wheel or die, a dealer's signature (patterns.py)
            outcome = self.patterns.outcome(self, table, session, clock.dealer(clock.now), outcome)
        cancel = rnd.random() < self.config.cancel_rate
        recorded = outcome
        if cancel and rnd.random() < 0.5:
            recorded = None  # cancelled before the result (a ball off the wheel, dice off the table)
        open_us = clock.now
        closed_us = open_us + BETTING_WINDOW
        settled_us = closed_us + rnd.randrange(14 * SECOND, 22 * SECOND) + rnd.randrange(SECOND, 4 * SECOND)
        if cancel:
            settled_us += rnd.randrange(10 * SECOND, 60 * SECOND)
        clock.now = settled_us + rnd.randrange(3 * SECOND, 7 * SECOND)
        r = _Round(f"{session.shoe_id}-R{round_no:04d}", session.shoe_id, round_no, open_us, closed_us, settled_us,
                   clock.dealer(open_us), outcome, recorded, "cancelled" if cancel else "settled")
        if self.kinds and not cancel:
            self.round_fault(r)
        self.make_bets(acc, r, rnd)
        if self.kinds and r.fault is None:
            self.plant_bets(table, acc, r)
        if self.patterns is not None:  # --patterns: the colluding pair's bets, after the faults (patterns.py)
            self.patterns.outcome_bets(self, table, acc, r)
        return r

    def round_fault(self, r: _Round) -> None:
        kind = self.pick(list(ROUND_KINDS))
        if kind is None:
            return
        r.fault = kind
        what = self.spec.describe(r.outcome)
        if kind == "OUTCOME_INVALID":
            r.recorded, text = self.spec.invalid_outcome(self.frnd)
            change = f"{self.spec.outcome_column} recorded as {text}, the round gave {what}"
        else:
            r.recorded = self.spec.missing_outcome(self.frnd)
            change = f"settled with no {self.spec.outcome_column} recorded ({r.recorded!r}); the round gave {what}"
        self.planner.record(kind, r.session_id, r.round_id, None, change + "; its bets cannot be settled")

    def verdict(self, r: _Round, code: str, selection: str | None, stake: int) -> BetVerdict:
        """The engine's verdict on a bet on the round's real outcome (cached per round)."""
        key = (code, selection, stake)
        if key not in r.credits:
            bet = RecordedBet("", 0, "", code, selection, stake, 0, 0)
            r.credits[key] = self.spec.judge(self.rules, bet, r.outcome)
        return r.credits[key]

    def credit(self, r: _Round, code: str, selection: str | None, stake: int) -> int:
        return stake if r.cancelled else self.verdict(r, code, selection, stake).credit

    def in_window(self, r: _Round, rnd: random.Random) -> int:
        """Placed during the window, at least a second before "no more bets"."""
        return r.open_us + SECOND // 2 + int((BETTING_WINDOW - 3 * SECOND // 2) * rnd.random() ** 0.7)

    def make_bets(self, acc: Accounts, r: _Round, rnd: random.Random) -> None:
        mean = self.config.bets_per_round
        shape = 5.0
        n = int(self.nrng.negative_binomial(shape, shape / (shape + mean))) if mean > 0 else 0
        bets: list[_Bet] = []
        players = acc.draw(rnd, max(1, n), set()) if n else []
        for a in players:
            if len(bets) >= n:
                break
            count = min(n - len(bets), rnd.choices(CHIPS_PER_ACCOUNT, weights=CHIPS_WEIGHTS)[0])
            total = 0
            for _ in range(count):
                code = rnd.choices(self.codes, weights=self.code_weights)[0]
                selection = rnd.choice(self.legal[code])
                lo, hi = self.spec.limits[code]
                stake = clip(chips(acc.base[a] * rnd.uniform(0.1, 1.0)), lo, hi)
                stake = min(stake, self.account_cap - total)
                if stake < lo:
                    break
                total += stake
                bets.append(_Bet(0, a, code, selection, stake, self.credit(r, code, selection, stake),
                                 self.in_window(r, rnd)))  # fmt: skip
        bets.sort(key=lambda b: (b.placed, b.acc, b.type, b.selection or ""))
        for k, b in enumerate(bets, 1):
            b.n = k
        r.bets = bets

    def plant_bets(self, table: OutcomeTable, acc: Accounts, r: _Round) -> None:
        """Bet faults on one round: per kind, each eligible bet with probability `rate` (a needed kind: the
        first eligible one), at most one fault per account, none on a bet that has one."""
        kinds = [k for k in BET_KINDS if k in self.planner.kinds]
        if not kinds or not r.bets:
            return
        f, p = self.frnd, self.planner
        state = _BetFaults(self, table, acc, r)
        for kind in kinds:
            for b in list(r.bets):
                forced = kind in p.needed or (kind == "OVERPAID" and self.trap_wanted and state.trap(b) is not None)
                if not forced and f.random() >= p.rate:
                    continue
                if b.n in state.taken or b.acc in state.busy or b.ghost or b.dup or not state.eligible(kind, b):
                    continue
                if state.plant(kind, b):
                    state.taken.add(b.n)
                    state.busy.add(b.acc)
        r.bets.sort(key=lambda b: (b.ghost, b.n, b.dup))

    # -- writing -------------------------------------------------------------------------------------

    def write(self, table: OutcomeTable, acc: Accounts, session: _Session, st: TableStats) -> None:
        rounds = session.rounds
        self.writers["shoes"].write(self.shoes_table(table, [session]))
        self.writers["rounds"].write(self.rounds_table(table, rounds))
        bets = self.bets_table(table, rounds, acc)
        self.writers["bets"].write(bets)
        st.shoes += 1
        st.rounds += len(rounds)
        st.cancelled += sum(r.cancelled for r in rounds)
        st.bets += bets.num_rows
        st.staked += sum(b.stake for r in rounds for b in r.bets)
        st.paid += sum(b.paid for r in rounds for b in r.bets)

    def shoes_table(self, table: OutcomeTable, sessions: list[_Session]) -> pa.Table:
        n = len(sessions)
        return pa.Table.from_arrays(
            [
                pa.array([s.shoe_id for s in sessions], pa.string()),
                pa.array([table.table_id] * n, pa.string()),
                pa.array([s.shoe_no for s in sessions], pa.int32()),
                timestamps([s.opened_us for s in sessions]),
                timestamps([s.closed_us for s in sessions]),
                pa.array([0] * n, pa.int8()),
                pa.array([[] for _ in sessions], CARDS),
                pa.nulls(n, pa.int32()),
                pa.nulls(n, pa.string()),
                pa.array([s.equipment_id for s in sessions], pa.string()),
            ],
            schema=game_schema("shoes", self.spec.name),
        )

    def rounds_table(self, table: OutcomeTable, rounds: list[_Round]) -> pa.Table:
        n = len(rounds)
        return pa.Table.from_arrays(
            [
                pa.array([r.round_id for r in rounds], pa.string()),
                pa.array([r.session_id for r in rounds], pa.string()),
                pa.array([table.table_id] * n, pa.string()),
                pa.array([r.round_no for r in rounds], pa.int32()),
                timestamps([r.open_us for r in rounds]),
                timestamps([r.closed_us for r in rounds]),
                timestamps([r.settled_us for r in rounds]),
                pa.array([r.status for r in rounds], pa.string()),
                pa.array([r.recorded for r in rounds], self.spec.outcome_type),
                pa.array([r.dealer_id for r in rounds], pa.string()),
                pa.array([f"vod://{table.table_id}/{r.round_id}.mp4" for r in rounds], pa.string()),
            ],
            schema=game_schema("rounds", self.spec.name),
        )

    def bets_table(self, table: OutcomeTable, rounds: list[_Round], acc: Accounts) -> pa.Table:
        rows = [(r, b) for r in rounds for b in r.bets]
        n = len(rows)
        rid = [r.round_id + (GHOST if b.ghost else "") for r, b in rows]
        return pa.Table.from_arrays(
            [
                pa.array([bet_id(x, b.n) for x, (_, b) in zip(rid, rows, strict=True)], pa.string()),
                pa.array(rid, pa.string()),
                pa.array([table.table_id] * n, pa.string()),
                pa.array([acc.ids[b.acc] for _, b in rows], pa.string()),
                timestamps([b.placed for _, b in rows]),
                pa.array([b.type for _, b in rows], pa.string()),
                pa.array([b.stake for _, b in rows], pa.int64()),
                pa.array([CURRENCY] * n, pa.string()),
                pa.array([b.paid for _, b in rows], pa.int64()),
                pa.array([b.selection for _, b in rows], pa.string()),
                timestamps([r.settled_us for r, _ in rows]),
                pa.nulls(n, pa.int8()),
                pa.array([CHANNELS[acc.channel[b.acc]] for _, b in rows], pa.string()),
            ],
            schema=game_schema("bets", self.spec.name),
        )


# ---------------------------------------------------------------------------------------------
# Bet faults


class _BetFaults:
    """The bet faults of one round (docs/findings.md), each keeping every other rule intact."""

    def __init__(self, rec: OutcomeRecorder, table: OutcomeTable, acc: Accounts, r: _Round):
        self.rec, self.table, self.acc, self.r = rec, table, acc, r
        self.spec = rec.spec
        self.f = rec.frnd
        self.busy: set[int] = set()  # accounts with a fault in this round
        self.taken: set[int] = set()  # bets (by n) with a fault
        self.next_n = len(r.bets) + 1
        self.next_ghost = 1
        self.totals: dict[int, int] = {}
        for b in r.bets:
            self.totals[b.acc] = self.totals.get(b.acc, 0) + b.stake

    def trap(self, b: _Bet) -> str | None:
        if self.r.cancelled or b.paid:
            return None
        return self.spec.trap(self.rec.rules, b.type, self.r.outcome)

    def fits(self, b: _Bet, extra: int) -> bool:
        """The account's total on the round stays within table_max with `extra` more staked."""
        return self.totals[b.acc] + extra <= self.table.table_max

    def eligible(self, kind: str, b: _Bet) -> bool:
        r = self.r
        if r.cancelled:
            return kind == "UNDERPAID"
        if kind == "OVERPAID":
            return b.paid > 0 or self.trap(b) is not None
        if kind == "UNDERPAID":
            return b.paid > b.stake
        if kind == "SELECTION_INVALID":
            return b.type in self.rec.can_invalidate
        if kind in ("STAKE_BELOW_MIN", "STAKE_ABOVE_MAX", "LATE_BET", "BET_TYPE_NOT_OFFERED", "UNKNOWN_ROUND",
                    "ROUND_STAKE_ABOVE_TABLE_MAX"):
            return True
        if kind == "DUPLICATE_BET":
            return self.fits(b, b.stake)
        raise ValueError(kind)

    def record(self, kind: str, b: _Bet, change: str, round_id: str | None = None, shoe: str | None = "") -> None:
        rid = round_id or self.r.round_id
        self.rec.planner.record(kind, self.r.session_id if shoe == "" else shoe, rid, bet_id(rid, b.n), change)

    def add(self, b: _Bet) -> _Bet:
        b.n = self.next_n
        self.next_n += 1
        self.r.bets.append(b)
        self.totals[b.acc] = self.totals.get(b.acc, 0) + b.stake
        return b

    def plant(self, kind: str, b: _Bet) -> bool:
        return getattr(self, "plant_" + kind.lower())(b)

    def what(self, b: _Bet) -> str:
        return b.type + (f" {b.selection}" if b.selection else "")

    def plant_overpaid(self, b: _Bet) -> bool:
        old, outcome = b.paid, self.spec.describe(self.r.outcome)
        trap = self.trap(b)
        if trap is not None:
            b.paid = 2 * b.stake
            self.rec.trap_wanted = False
            text = f"{self.what(b)} paid as an even-money win on {outcome} ({trap})"
        else:
            b.paid = old + b.stake
            text = f"{self.what(b)} win on {outcome} paid one unit of odds more"
        self.record("OVERPAID", b, f"{text}: paid {old} -> {b.paid}")
        return True

    def plant_underpaid(self, b: _Bet) -> bool:
        old = b.paid
        if self.r.cancelled:
            b.paid = 0
            text = "cancelled round not refunded"
        else:
            b.paid = old - b.stake
            text = f"{self.what(b)} win on {self.spec.describe(self.r.outcome)} paid one unit of odds less"
        self.record("UNDERPAID", b, f"{text}: paid {old} -> {b.paid}")
        return True

    def plant_selection_invalid(self, b: _Bet) -> bool:
        got = self.spec.invalid_selection(self.f, b.type)
        assert got is not None
        selection, why = got
        verdict = self.rec.verdict(self.r, b.type, selection, b.stake)
        assert verdict.finding == "SELECTION_INVALID", verdict
        old_s, old_p = b.selection, b.paid
        b.selection, b.paid = selection, verdict.credit
        self.record("SELECTION_INVALID", b, f"{b.type} selection {old_s!r} -> {selection!r} ({why}); "
                                            f"paid {old_p} -> {b.paid} ({self.rec.rules.invalid_selection})")
        return True

    def restake(self, kind: str, b: _Bet, new: int, limit: str) -> bool:
        if not self.fits(b, new - b.stake):
            return False
        old_s, old_p = b.stake, b.paid
        self.totals[b.acc] += new - old_s
        b.stake, b.paid = new, self.rec.credit(self.r, b.type, b.selection, new)
        self.record(kind, b, f"{self.what(b)} stake {old_s} -> {new} ({limit}); paid {old_p} -> {b.paid}")
        return True

    def plant_stake_below_min(self, b: _Bet) -> bool:
        mn = self.table.limits[b.type][0]
        return self.restake("STAKE_BELOW_MIN", b, self.f.choice([x for x in (10, 20, 25, 50) if x < mn]),
                            f"min_stake {mn}")

    def plant_stake_above_max(self, b: _Bet) -> bool:
        mx = self.table.limits[b.type][1]
        return self.restake("STAKE_ABOVE_MAX", b, mx + 100 * self.f.randrange(1, max(2, mx // 400)),
                            f"max_stake {mx}")

    def plant_late_bet(self, b: _Bet) -> bool:
        old, closed = b.placed, self.r.closed_us
        b.placed = closed + (1 if self.f.random() < 0.2 else self.f.randrange(1, 3 * SECOND))
        self.record("LATE_BET", b, f"placed_at {instant_text(old)} -> {instant_text(b.placed)} (betting closed "
                                   f"{instant_text(closed)}: past posting); paid {b.paid} is right")
        return True

    def plant_bet_type_not_offered(self, b: _Bet) -> bool:
        code, selection = self.spec.foreign_bet(self.f)
        stake = 100 * self.f.randrange(1, 51)
        if not self.fits(b, stake):
            return False
        verdict = self.rec.verdict(self.r, code, selection, stake)
        assert verdict.finding == "BET_TYPE_NOT_OFFERED" and verdict.credit == stake, verdict
        new = self.add(_Bet(0, b.acc, code, selection, stake, stake, self.rec.in_window(self.r, self.f)))
        self.record("BET_TYPE_NOT_OFFERED", new, f"{code}{f' {selection}' if selection else ''} bet added for "
                                                 f"{self.acc.ids[b.acc]}, not offered by {self.rec.rules.id}; "
                                                 f"refunded {stake}")
        return True

    def plant_round_stake_above_table_max(self, b: _Bet) -> bool:
        """Even-money bets at their maximum added for the account, placed after its others, until the
        last one takes its total above table_max (only that one: the total before it is within)."""
        r, cap = self.r, self.table.table_max
        mine = [x for x in r.bets if x.acc == b.acc]
        last = max(x.placed for x in mine)
        total = self.totals[b.acc]
        code = self.f.choice(self.spec.even_money)
        stake = self.table.limits[code][1]
        k = (cap - total) // stake + 1
        if last + k > r.closed_us:
            return False
        times = sorted(self.f.sample(range(last + 1, r.closed_us + 1), k))
        added = []
        for at in times:
            code = self.f.choice(self.spec.even_money)
            stake = self.table.limits[code][1]
            selection = self.rec.legal[code][0]
            added.append(self.add(_Bet(0, b.acc, code, selection, stake, self.rec.credit(r, code, selection, stake),
                                       at)))  # fmt: skip
        over = added[-1]
        assert self.totals[b.acc] - over.stake <= cap < self.totals[b.acc]
        self.record("ROUND_STAKE_ABOVE_TABLE_MAX", over,
                    f"{len(added)} {'/'.join(dict.fromkeys(x.type for x in added))} bet(s) at their maximum added for "
                    f"{self.acc.ids[b.acc]} after its {len(mine)} bet(s) of {total}: this one takes the total to "
                    f"{self.totals[b.acc]} (table_max {cap}); each paid right")
        return True

    def plant_unknown_round(self, b: _Bet) -> bool:
        ghost = replace(b, n=self.next_ghost, paid=b.stake, placed=b.placed + 1, ghost=True)
        self.next_ghost += 1
        self.r.bets.append(ghost)
        rid = self.r.round_id + GHOST
        self.record("UNKNOWN_ROUND", ghost, f"bet on round {rid}, which is not in rounds (copy of "
                                            f"{bet_id(self.r.round_id, b.n)})", round_id=rid, shoe=None)
        return True

    def plant_duplicate_bet(self, b: _Bet) -> bool:
        self.r.bets.append(replace(b, dup=True))
        self.totals[b.acc] += b.stake
        self.record("DUPLICATE_BET", b, "bet row written twice (same bet_id, same values)")
        return True
