"""The recorder of tables whose round records one outcome and no cards (a wheel's pocket, three dice), beside
the other games' tables. Names no game: a game gives an `OutcomeGame` (in its module, pitboss/recorder/<game>.py)
with its ruleset, limits, the legal selections of its engine's layout, how an outcome is drawn
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
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from engine.betting import BetVerdict, RecordedBet
from pitboss.recorder.config import SECOND
from pitboss.recorder.manifest import kinds_to_plant
from pitboss.recorder.players import Accounts, TableClock, chips, clip
from pitboss.recorder.registry import GameRecorder
from pitboss.recorder.rounds import (
    BetFaults,
    GameTable,
    RoundRecorder,
    Streams,
    bets_table,
    contract_table,
    make_tables,
    round_columns,
)
from pitboss.recorder.writer import timestamps
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

    def recorder(self, field: str, help: str) -> GameRecorder:
        """Its entry in the registry: its tables recorded by OutcomeRecorder."""
        return GameRecorder(game=self.name, field=field, help=help, fault_kinds=OUTCOME_FAULT_KINDS,
                            record=partial(OutcomeRecorder, self))


def make_outcome_tables(spec: OutcomeGame, n: int, first_index: int) -> list[GameTable]:
    rules = spec.load_rules(spec.ruleset)
    assert all(rules.offers(code) for code in spec.limits), spec.name
    return make_tables(spec.name, rules, n, first_index, suffix=spec.suffix, title=spec.title, operator=spec.operator,
                       table_max=spec.table_max, limits=spec.limits)


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
    added = None  # (no stake is added in play)


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

    @property
    def shoe_id(self) -> str:
        return self.session_id


@dataclass
class _Session:
    shoe_id: str
    shoe_no: int
    opened_us: int
    equipment_id: str
    rounds: list[_Round] = field(default_factory=list)
    closed_us: int = 0


class OutcomeRecorder(RoundRecorder):
    """The tables of one outcome game in a `pitboss generate` run: rows, files, statistics and manifest."""

    def __init__(self, spec: OutcomeGame, config, out: Path, n_tables: int, first_index: int):
        game = spec.name
        super().__init__(config, out, game, make_outcome_tables(spec, n_tables, first_index),
                         kinds_of(config.fault_kinds, config.fault_rate),
                         Streams(f"{game}-spins", f"{game}-faults", f"{game}-accounts", 17))
        self.spec = spec
        self.rules = spec.load_rules(spec.ruleset)
        self.trap_wanted = "OVERPAID" in self.kinds  # the first bet a trap can be planted on gets it
        self.codes = [c for c in spec.weights if c in spec.limits]
        self.code_weights = [spec.weights[c] for c in self.codes]
        self.legal = {c: spec.selections(self.rules, c) for c in self.codes}
        self.can_invalidate = {c for c in self.codes if spec.invalid_selection(random.Random(0), c) is not None}
        self.account_cap = int(spec.table_max * ACCOUNT_SHARE)

    # -- the run's hooks ----------------------------------------------------------------------------

    def record_table_day(self, k: int, table: GameTable, day: int, business: date, clock: TableClock,
                         rnd: random.Random) -> int:
        """One session for the business day."""
        self.nrng = np.random.default_rng(rnd.getrandbits(64))
        number = table.table_id.split("-")[0]
        session = _Session(f"{table.table_id}-{business:%Y%m%d}-S0001", day + 1, clock.now,
                           f"{self.spec.equipment}-{number}")
        clock.now += rnd.randrange(60 * SECOND, 180 * SECOND)  # the wheel or shaker checked, the table opens
        for round_no in range(1, self.config.rounds_per_table + 1):
            session.rounds.append(self.play_round(table, self.accounts[k], session, round_no, clock, rnd))
        session.closed_us = session.rounds[-1].settled_us + rnd.randrange(30 * SECOND, 120 * SECOND)
        rounds = session.rounds
        self.write(k, self.shoes_table(table, [session]), rounds, self.rounds_table(table, rounds),
                   bets_table(self.spec.name, table, rounds, self.accounts[k], _own_columns))
        return len(rounds)

    # -- a round -------------------------------------------------------------------------------------

    def play_round(self, table: GameTable, acc: Accounts, session: _Session, round_no: int, clock: TableClock,
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

    def plant_bets(self, table: GameTable, acc: Accounts, r: _Round) -> None:
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

    # -- rows -------------------------------------------------------------------------------------------

    def shoes_table(self, table: GameTable, sessions: list[_Session]) -> pa.Table:
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

    def rounds_table(self, table: GameTable, rounds: list[_Round]) -> pa.Table:
        return contract_table("rounds", self.spec.name, {
            **round_columns(table, rounds),
            self.spec.outcome_column: pa.array([r.recorded for r in rounds], self.spec.outcome_type),
        })  # fmt: skip


def _own_columns(bets: list[_Bet]) -> dict[str, pa.Array]:
    return {"selection": pa.array([b.selection for b in bets], pa.string()), "seat": pa.nulls(len(bets), pa.int8())}


# ---------------------------------------------------------------------------------------------
# Bet faults


class _BetFaults(BetFaults):
    """The bet faults of one round (docs/findings.md), each keeping every other rule intact; no fault takes an
    account's total on the round above table_max but the one planted to."""

    def __init__(self, rec: OutcomeRecorder, table: GameTable, acc: Accounts, r: _Round):
        super().__init__(rec, table, acc, r)
        self.spec = rec.spec
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

    def add(self, b: _Bet) -> _Bet:
        self.totals[b.acc] = self.totals.get(b.acc, 0) + b.stake
        return super().add(b)

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

    def plant_late_bet(self, b: _Bet) -> bool:
        return self.plant_late(b, "", f"paid {b.paid} is right")

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

    def plant_duplicate_bet(self, b: _Bet) -> bool:
        self.totals[b.acc] += b.stake
        return super().plant_duplicate_bet(b)
