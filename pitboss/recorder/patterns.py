"""Surveillance patterns planted by `pitboss generate --patterns` (issue 32 § 4), and their manifest.

A pattern is what a surveillance team wants found: never a fault. Every planted round is a legal round the
audit settles exactly, except the dealer who overpays one account, whose overpayments are OVERPAID faults and
are written to faults.parquet like any other (so the audit's findings still equal the fault manifest). What
was planted, where and how strongly is written to `patterns.parquet` beside faults.parquet (PATTERN_SCHEMA;
docs/surveillance.md § Ground truth).

The patterns, each planted every business day at fixed tables of the run (chosen by `Assignment`):

* **counting_account** at the first baccarat table offering PLAYER_PAIR without a round cutoff
  (baccarat_live_pairs; else the first offering it at all, within its cutoff): an account that bets its usual
  main bet (PLAYER or BANKER, 25.00) on 60% of the rounds and PLAYER_PAIR (100.00, with a main bet) on every
  round whose remaining-shoe RTP of PLAYER_PAIR exceeds 100%, and never otherwise. The remaining shoe is the
  shoe's cards from the round's first card on (what was left when betting closed); its RTP is the exact
  composition-dependent return (`_RemainingRtp`). Strength 1.0: the share of its PLAYER_PAIR bets placed above
  100%. Such moments are rare (about one 8-deck shoe in three has one, late in the shoe).
* **colluding_pair** at a baccarat table (PLAYER against BANKER) and at the first roulette table (RED against
  BLACK): two accounts that play the same 50% of the rounds; on 90% of them (the strength) one takes a side at
  random and the other the opposite side with the same stake (drawn afresh each round from 20.00-500.00), on
  the rest each bets a side and a stake of its own.
* **repeated_shoe**: the second 8-deck table's first shoe opened after the first table's first shoe deals that
  shoe's card order exactly (a pre-arranged or recycled shoe); strength 416, the cards shared in one run.
* **shoe_long_run**: the third such table's first shoe opened after the second table's first shoe carries a run
  of 60 consecutive cards of it (its own cards otherwise: the composition stays 8 full decks); strength 60.
* **weak_shuffle**: the first 8-deck table's second shoe of each day is its first shoe's cards in their order
  (dealt cards, then the stub behind the cut card) cut into 4 packs of about a quarter each, each pack riffled
  once (Gilbert-Shannon-Reeds: a binomial cut, cards dropped from each half in proportion to what it holds),
  the packs stacked in a random order. Strength: the share of the new shoe's adjacent pairs of cards that are
  adjacent pairs, in the same order, of the previous shoe (about 0.6; a fair shuffle keeps ~0.14 by chance
  with 8 decks' repeated cards).
* **biased_wheel** at the first roulette table: a sector of 5 adjacent pockets on the wheel (WHEEL_ORDER) at
  1.5 times its probability (each 1.5/37, the sector 7.5/37 = 20.3% of spins; the other 32 pockets evenly
  lower); strength 7.5/37.
* **dealer_signature** at the same wheel: one dealer whose spin, when the previous spin was also theirs, lands
  25% of the time at a preferred distance (5 adjacent distances along the wheel, clockwise) from the previous
  pocket, else on the wheel as it is; strength 0.25 + 0.75 x 5/37 = 0.351, the chance of landing in that
  window (5/37 = 0.135 by chance).
* **biased_die** at the first sic bo table: the first die of the shaker shows one face with probability 0.30
  (1/6 = 0.167 fair; the other faces 0.14 each); the two other dice fair. Strength 0.30.
* **dealer_overpays** at the first baccarat table: an account (PLAYER or BANKER, 50.00, on 60% of the rounds)
  whose winning bets on one dealer's rounds are paid one unit of odds more (2:1 for PLAYER's 1:1, 1.95:1 for
  BANKER's 0.95:1) 80% of the time (the strength), never on the other dealers' rounds. Each such bet is an
  OVERPAID row of faults.parquet.

Strengths, and why (docs/surveillance.md § Ground truth has the table): each is far above what chance gives
and what a surveillance team would want caught, and at or above the strength each detector of
engine/surveillance is designed to find at its minimum sample. A 200-round day holds enough for the colluding
pairs, the shoes, the weak shuffle and the overpaying dealer; the wheel, the die and the signature need the
detectors' 1,900 spins, 1,550 rolls and 330 successive spins of one dealer (a table deals at most ~1,950
spins from its opening to 06:00 the next day, when its next business day opens: over several days, period
"run"); the counting account meets a remaining-shoe RTP above 100% late in about one 8-deck shoe in three,
several rounds in a row, so it takes ~25 bets (~4,500 rounds of its table) to prove.

Pattern bets are added after the fault planting of their rounds, by accounts of their own (after the table's
pool of accounts: no fault is planted on them), only on settled rounds free of round-level faults;
they respect the table's limits, cutoffs, share caps and main-bet rules. Randomness comes from streams of
their own, seeded from (seed, table, business day), never from a table's own: a table without a pattern
records exactly what it records without the flag.
Off by default: without --patterns nothing here runs and every file is byte-identical to a run without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from fractions import Fraction
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from engine.cards import CARD_CODES
from pitboss.recorder.config import BETTING_WINDOW, DAY_OPENS_AT, SECOND
from pitboss.recorder.faults import bet_id
from pitboss.recorder.outcomes import BETTING_WINDOW as SPIN_WINDOW
from pitboss.recorder.outcomes import _Bet
from pitboss.recorder.simulate import (
    BET_INDEX,
    I_BANKER,
    I_PLAYER,
    MODE_INDEX,
    MODES,
    Bets,
    DealingHooks,
    Round,
    Shoe,
    TableClock,
)

if TYPE_CHECKING:
    from pitboss.recorder.baccarat import TableSpec

PATTERN_SCHEMA = pa.schema(
    [
        pa.field("pattern", pa.string(), nullable=False),
        pa.field("table_id", pa.string(), nullable=False),
        pa.field("subject", pa.string(), nullable=False),
        pa.field("strength", pa.float64(), nullable=False),
        pa.field("business_date", pa.date32(), nullable=False),
        pa.field("detail", pa.string(), nullable=False),
    ]
)
PATTERNS = ("counting_account", "colluding_pair", "repeated_shoe", "shoe_long_run", "weak_shuffle", "biased_wheel",
            "dealer_signature", "biased_die", "dealer_overpays")  # fmt: skip

# The single-zero wheel clockwise from zero (the standard European wheel; engine/surveillance/equipment.py
# holds the same order for its sector and signature tests).
WHEEL_ORDER: tuple[int, ...] = (0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10, 5, 24, 16,
                                33, 1, 20, 14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26)  # fmt: skip
WHEEL_POSITION = {pocket: i for i, pocket in enumerate(WHEEL_ORDER)}
POCKETS = len(WHEEL_ORDER)

# -- strengths (module docstring: what each means and why) --------------------------------------------------
COUNT_CODE = "PLAYER_PAIR"
COUNT_THRESHOLD = 1.0  # bets COUNT_CODE only when its remaining-shoe RTP exceeds this
COUNT_MAIN_STAKE = 2_500  # 25.00, its usual main bet
COUNT_SIDE_STAKE = 10_000  # 100.00 on COUNT_CODE (within a 10%-of-table-max share cap of 500.00)
COUNT_PLAYS = 0.6  # share of the other rounds it plays (a main bet only)
PAIR_PLAYS = 0.5  # share of the rounds the colluding pair plays
PAIR_MATCHED = 0.9  # of those, opposite sides with the same stake
PAIR_STAKES = np.array([2_000, 5_000, 10_000, 20_000, 25_000, 50_000])
LONG_RUN = 60  # cards of an earlier shoe in one run
WEAK_PACKS = 4
SECTOR = 5  # adjacent pockets
SECTOR_FACTOR = 1.5  # each sector pocket at 1.5/37
SECTOR_MIX = (SECTOR_FACTOR - 1) * SECTOR / (POCKETS - SECTOR)  # chance a spin is drawn from the sector alone
SIGNATURE_OVERRIDE = 0.25  # the dealer's spin lands in the window on purpose this often
SIGNATURE_WINDOW = 5  # adjacent distances
DIE_PROBABILITY = 0.30  # the loaded face of the first die
OVERPAY_STAKE = 5_000
OVERPAY_PLAYS = 0.6
OVERPAY_SHARE = 0.8  # of the account's wins on the dealer's rounds

# Pattern accounts come after a table's pool of accounts (index pool + k).
COUNTER, COLLUDER_A, COLLUDER_B, FAVOURED = 0, 1, 2, 3
_CARD_OBJ = np.array(CARD_CODES, dtype=object)


def _mode_of(ruleset) -> int:
    """The betting mode of the pattern accounts: commission where the table has it."""
    return MODE_INDEX["commission" if "commission" in ruleset.modes else next(iter(ruleset.modes))]


def sector_strength() -> float:
    return SECTOR_FACTOR * SECTOR / POCKETS


def signature_strength() -> float:
    return SIGNATURE_OVERRIDE + (1 - SIGNATURE_OVERRIDE) * SIGNATURE_WINDOW / POCKETS


def favoured_dealer(table_index: int, day_us: int) -> str:
    """The dealer at work 45 minutes after the table opens (the table's second shift of the day), as
    simulate.TableClock names dealers."""
    at = day_us + DAY_OPENS_AT + (table_index % 12) * 5 * 60 * SECOND + 45 * 60 * SECOND
    return TableClock(SimpleNamespace(index=table_index), at, day_us).dealer(at)  # type: ignore[arg-type]


def kept_share(previous: np.ndarray, shoe: np.ndarray) -> float:
    """Share of `shoe`'s adjacent pairs of cards that are adjacent pairs, in the same order, of `previous`
    (card kinds: with several decks a pair can come from any copy)."""
    prev = previous.astype(np.int64)
    pairs = np.unique(prev[:-1] * 52 + prev[1:])
    cur = shoe.astype(np.int64)
    return float(np.isin(cur[:-1] * 52 + cur[1:], pairs).mean())


def riffle(pack: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One Gilbert-Shannon-Reeds riffle: a binomial cut, then each card dropped from a half with probability
    proportional to the cards that half still holds."""
    cut = int(rng.binomial(len(pack), 0.5))
    left, right = list(pack[:cut]), list(pack[cut:])
    out, i, j = [], 0, 0
    u = rng.random(len(pack))
    for k in range(len(pack)):
        nl, nr = len(left) - i, len(right) - j
        if u[k] * (nl + nr) < nl:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return np.array(out, dtype=pack.dtype)


def weak_shuffle(order: np.ndarray, rng: np.random.Generator, packs: int = WEAK_PACKS) -> np.ndarray:
    """`order` cut into `packs` packs of about equal size (each cut within 5% of the shoe of its even place),
    each riffled once, stacked in a random order."""
    n = len(order)
    jitter = max(1, n // 20)
    cuts = [0] + [n * k // packs + int(rng.integers(-jitter, jitter + 1)) for k in range(1, packs)] + [n]
    pieces = [order[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    return np.concatenate([riffle(pieces[p], rng) for p in rng.permutation(packs)])


def with_run(own: np.ndarray, run: np.ndarray, at: int) -> np.ndarray:
    """`own` with `run` inserted at `at` and one copy of each of its cards taken out elsewhere (the
    composition unchanged)."""
    need = np.bincount(run.astype(np.int64), minlength=52)
    keep = np.ones(len(own), dtype=bool)
    for k, card in enumerate(own.tolist()):
        if need[card]:
            need[card] -= 1
            keep[k] = False
    assert not need.any(), "the run's cards are not all in the shoe"
    rest = own[keep]
    return np.concatenate([rest[:at], run, rest[at:]]).astype(own.dtype)


class _RemainingRtp:
    """The exact return per unit staked of one baccarat bet on the cards left in the shoe: the composition-
    dependent RTP of engine.surveillance.composition (the detectors' own); where that module is absent, a bet
    paying on one hand's pair alone in closed form (the hand's two cards are two cards drawn from those left:
    a pair with probability sum_rank c (c - 1) / (N (N - 1))), any other by engine.games.baccarat.rtp's
    shoe_distribution (exact, seconds a round)."""

    def __init__(self, ruleset, code: str, mode: str):
        self.ruleset, self.code, self.mode = ruleset, code, mode
        self.paytable = ruleset.paytable(code, mode)
        try:
            from engine.surveillance.composition import BaccaratReturns
        except ImportError:
            self.fast = None
            self.cache: dict[bytes, float] = {}
        else:
            self.fast = BaccaratReturns(ruleset, [(code, mode)])
        rule = self.paytable[0] if len(self.paytable) == 1 else None
        pair = rule is not None and rule.odds is not None and len(rule.when) == 1 and \
            rule.when[0][0] in ("player_pair", "banker_pair") and tuple(rule.when[0][1]) == (True,)  # fmt: skip
        self.pair_credit = 1 + rule.odds if pair and rule is not None and rule.odds is not None else None

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        """Returns of an (n, 52) array of compositions."""
        if self.fast is not None:
            return self.fast.returns(counts)[:, 0] if len(counts) else np.zeros(0)
        out = np.empty(len(counts))
        for i, row in enumerate(counts):
            key = row.astype(np.int16).tobytes()
            if key not in self.cache:
                self.cache[key] = float(self._exact(row))
            out[i] = self.cache[key]
        return out

    def _exact(self, row: np.ndarray) -> Fraction:
        n = int(row.sum())
        if self.pair_credit is not None:
            ranks = row.reshape(13, 4).sum(axis=1).tolist()  # CARD_CODES: 4 suits of each rank in turn
            return self.pair_credit * Fraction(sum(r * (r - 1) for r in ranks), n * (n - 1))
        from engine.games.baccarat.rtp import _credit_per_unit, facts_of, shoe_distribution
        from engine.games.baccarat.settlement import matching_rule

        dist = shoe_distribution({CARD_CODES[c]: int(k) for c, k in enumerate(row) if k})
        return sum((p * _credit_per_unit(matching_rule(self.paytable, facts_of(f))) for f, p in dist.items()),
                   Fraction(0))  # fmt: skip


@dataclass
class Assignment:
    """Which table carries which pattern (fixed for the run)."""

    counting: TableSpec | None = None
    colluding: TableSpec | None = None
    overpay: TableSpec | None = None
    weak: TableSpec | None = None
    repeat: tuple[TableSpec, TableSpec] | None = None  # (source, target)
    long_run: tuple[TableSpec, TableSpec] | None = None

    @staticmethod
    def of(tables: list[TableSpec]) -> Assignment:
        a = Assignment()
        betting = [t for t in tables if not t.ruleset.limits.one_position_per_round]
        pair = [t for t in betting if COUNT_CODE in t.limits and all(t.ruleset.offered(COUNT_CODE, m)
                                                                      for m in t.ruleset.modes)]  # fmt: skip
        a.counting = next((t for t in pair if t.ruleset.bets[COUNT_CODE].cutoff is None), pair[0] if pair else None)
        if betting:
            a.overpay = betting[0]
            a.colluding = next((t for t in betting if t not in (a.overpay, a.counting)), betting[-1])
        shoes = [t for t in tables if not t.ruleset.shoe.reshuffle_every_hand]
        if shoes:
            a.weak = shoes[0]
        if len(shoes) >= 2:
            a.repeat = (shoes[0], shoes[1])
        if len(shoes) >= 3:
            a.long_run = (shoes[1], shoes[2])
        return a


@dataclass
class _Row:
    pattern: str
    table_id: str
    subject: str
    strength: float
    business_date: date
    detail: str  # may hold {n}, filled with `count`
    count: int = 0


@dataclass
class _AccountsView:
    """A table's accounts with the pattern accounts after them (what bets_table reads)."""

    ids: pa.Array
    seat: np.ndarray | None
    channel: np.ndarray


@dataclass
class _TableDay:
    rng: np.random.Generator
    day_us: int
    business: date


class PatternPlanter:
    """Plants the patterns of one `pitboss generate --patterns` run and collects their manifest."""

    def __init__(self, config, tables: list, pool_size: int):
        """`tables`: every table of the run; the shoe and counting patterns go to baccarat's."""
        tables = [t for t in tables if t.game == "baccarat"]
        self.seed = config.seed
        self.tables = tables
        self.pool = pool_size
        self.assign = Assignment.of(tables)
        self.rows: dict[tuple, _Row] = {}
        self.business: date | None = None
        self.day = 0
        self.unit: _TableDay | None = None
        self.day_shoes: dict[int, list[Shoe]] = {}  # table index -> its shoes of the day so far
        self.orders: dict[str, np.ndarray] = {}  # shoe_id -> card order before any fault touched it
        self.rtp: _RemainingRtp | None = None
        if self.assign.counting is not None:
            rs = self.assign.counting.ruleset
            self.rtp = _RemainingRtp(rs, COUNT_CODE, MODES[_mode_of(rs)])
        self.outcome_state: dict[str, Any] = {}

    # -- bookkeeping -------------------------------------------------------------------------------

    def start_day(self, day: int, business: date) -> None:
        self.day, self.business = day, business
        self.day_shoes = {}
        self.orders = {}

    def start_table_day(self, table: TableSpec, day_us: int) -> None:
        assert self.business is not None
        self.unit = _TableDay(np.random.default_rng([self.seed, 40, table.index, self.day]), day_us, self.business)

    def row(self, pattern: str, table_id: str, subject: str, strength: float, detail: str) -> _Row:
        assert self.business is not None
        key = (table_id, self.business, pattern, subject)
        if key not in self.rows:
            self.rows[key] = _Row(pattern, table_id, subject, float(strength), self.business, detail)
        return self.rows[key]

    def table(self) -> pa.Table:
        rows = [self.rows[k] for k in sorted(self.rows)]
        return pa.table(
            {
                "pattern": [r.pattern for r in rows],
                "table_id": [r.table_id for r in rows],
                "subject": [r.subject for r in rows],
                "strength": [r.strength for r in rows],
                "business_date": [r.business_date for r in rows],
                "detail": [r.detail.format(n=r.count) for r in rows],
            },
            schema=PATTERN_SCHEMA,
        )

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows.values():
            out[r.pattern] = out.get(r.pattern, 0) + 1
        return {p: out[p] for p in PATTERNS if p in out}

    def account_id(self, table_index: int, k: int) -> str:
        return f"A{table_index + 1:03d}-{self.pool + k:06d}"

    def accounts(self, table: TableSpec, pool) -> _AccountsView:
        """A baccarat table's `pool` (simulate.Accounts) with the four pattern accounts after it."""
        extra = [self.account_id(table.index, k) for k in range(4)]
        seat = None if pool.seat is None else np.concatenate([pool.seat, np.ones(4, dtype=pool.seat.dtype)])
        return _AccountsView(pa.concat_arrays([pool.ids, pa.array(extra, pa.string())]), seat,
                             np.concatenate([pool.channel, np.ones(4, dtype=pool.channel.dtype)]))  # fmt: skip

    # -- shoes -------------------------------------------------------------------------------------

    def hooks(self, planner: DealingHooks) -> DealingHooks:
        return _ShoeHooks(self, planner)

    def shoe_order(self, table: TableSpec, shoe: Shoe, cards: list[str]) -> bool:
        """Plant a shoe pattern on `shoe` (before the fault planner sees it). True if the shoe must stay
        exactly as planted (no shoe fault)."""
        unit = self.unit
        assert unit is not None and self.business is not None
        a = self.assign
        n_in_day = int(shoe.shoe_id.rsplit("-S", 1)[1])
        exact = False
        new: np.ndarray | None = None
        if a.weak is table and n_in_day == 2 and self.day_shoes.get(table.index):
            prev = self.day_shoes[table.index][0]
            order = self.orders[prev.shoe_id]
            new = weak_shuffle(order, unit.rng)
            kept = kept_share(order, new)
            self.row("weak_shuffle", table.table_id, shoe.shoe_id, kept,
                     f"shoe {shoe.shoe_id} is {prev.shoe_id}'s cards in their order (dealt, then the stub) cut into "
                     f"{WEAK_PACKS} packs, each riffled once, stacked in a random order: {kept:.1%} of its adjacent "
                     f"pairs are adjacent pairs of {prev.shoe_id}")  # fmt: skip
        for pattern, pair in (("repeated_shoe", a.repeat), ("shoe_long_run", a.long_run)):
            if pair is None or pair[1] is not table or n_in_day < 2 or new is not None:
                continue
            # the source: the source table's first shoe of the day opened earlier whose recorded cards are its
            # order (a shoe fault may have changed one behind the cut card)
            src = next((x for x in self.day_shoes.get(pair[0].index, ()) if x.opened_us < shoe.opened_us
                        and np.array_equal(x.cards, self.orders[x.shoe_id])), None)  # fmt: skip
            if src is None or len(src.cards) > len(shoe.cards):
                continue
            if any(r.table_id == table.table_id and r.pattern == pattern and r.business_date == self.business
                   for r in self.rows.values()):  # fmt: skip
                continue  # once a table-day
            order = self.orders[src.shoe_id]
            if pattern == "repeated_shoe":
                if len(src.cards) != len(shoe.cards):
                    continue
                new, exact = order.copy(), True
                self.row(pattern, table.table_id, shoe.shoe_id, float(len(new)),
                         f"shoe {shoe.shoe_id} deals the card order of {src.shoe_id} ({pair[0].table_id}, opened "
                         f"earlier) exactly: {len(new)} cards in one run")  # fmt: skip
            else:
                src_end = src.cut_index if src.cut_index is not None else len(order)
                end = shoe.cut_index if shoe.cut_index is not None else len(shoe.cards)
                if src_end - LONG_RUN - 20 < 10 or end - LONG_RUN - 20 < 10:
                    continue
                s = int(unit.rng.integers(10, src_end - LONG_RUN - 20))
                at = int(unit.rng.integers(10, end - LONG_RUN - 20))
                new = with_run(shoe.cards.copy(), order[s : s + LONG_RUN], at)
                self.row(pattern, table.table_id, shoe.shoe_id, float(LONG_RUN),
                         f"shoe {shoe.shoe_id} holds {LONG_RUN} consecutive cards of {src.shoe_id} ({pair[0].table_id},"
                         f" opened earlier): its cards {s}-{s + LONG_RUN - 1} at {at}-{at + LONG_RUN - 1}; the rest "
                         f"its own shuffle (8 full decks)")  # fmt: skip
        if new is not None:
            shoe.cards[:] = new
            cards[:] = _CARD_OBJ[shoe.cards[: len(cards)]].tolist()
        self.orders[shoe.shoe_id] = shoe.cards.copy()
        self.day_shoes.setdefault(table.index, []).append(shoe)
        return exact

    # -- baccarat bets -----------------------------------------------------------------------------

    def plant_bets(self, table: TableSpec, shoes: list[Shoe], rounds: list[Round], bets: Bets, maker,
                   planner) -> Bets:  # fmt: skip
        """The pattern accounts' bets of one block of rounds, after the fault planting (`planner`: the
        fault planner, which lists the overpayments)."""
        a = self.assign
        if table not in (a.counting, a.colluding, a.overpay):
            return bets
        unit = self.unit
        assert unit is not None
        rng = unit.rng
        ok = np.array([not r.cancelled and r.fault is None for r in rounds])  # no bet on a round-level fault
        R = len(rounds)
        rs = table.ruleset
        mode = _mode_of(rs)
        new: list[tuple[int, int, int, int, int]] = []  # (round, account k, type, stake, placed)

        def placed(r: int, after: int | None = None) -> int:
            rnd = rounds[r]
            if after is not None:
                return min(after + int(rng.integers(SECOND // 5, 2 * SECOND)), rnd.closed_us - SECOND // 2)
            return rnd.open_us + int(rng.integers(SECOND // 2, BETTING_WINDOW - SECOND))

        if table is a.counting:
            assert self.rtp is not None
            cutoff = rs.bets[COUNT_CODE].cutoff
            shoe_of = {s.shoe_id: s for s in shoes}
            cand = [i for i in range(R) if ok[i] and (cutoff is None or rounds[i].round_no <= cutoff)]
            counts = np.array([np.bincount(shoe_of[rounds[i].shoe_id].cards[rounds[i].start:], minlength=52)
                               for i in cand], dtype=np.int64).reshape(-1, 52)  # fmt: skip
            rtp = self.rtp(counts)
            favourable = {i for i, x in zip(cand, rtp.tolist(), strict=True) if x > COUNT_THRESHOLD}
            plays = rng.random(R) < COUNT_PLAYS
            side = rng.integers(0, 2, R)
            for i in range(R):
                if not ok[i] or not (plays[i] or i in favourable):
                    continue
                t = placed(i)
                new.append((i, COUNTER, (I_PLAYER, I_BANKER)[side[i]], COUNT_MAIN_STAKE, t))
                if i in favourable:
                    new.append((i, COUNTER, BET_INDEX[COUNT_CODE], COUNT_SIDE_STAKE, placed(i, t)))
            row = self.row("counting_account", table.table_id, self.account_id(table.index, COUNTER), 1.0,
                           f"bets {COUNT_CODE} {COUNT_SIDE_STAKE / 100:.2f} only on a round whose remaining-shoe RTP "
                           f"of {COUNT_CODE} exceeds {COUNT_THRESHOLD:.0%} ({{n}} such bets), with its usual "
                           f"{COUNT_MAIN_STAKE / 100:.2f} main bet, which it plays on {COUNT_PLAYS:.0%} of the other "
                           "rounds")  # fmt: skip
            row.count += len(favourable)
        if table is a.colluding:
            plays = rng.random(R) < PAIR_PLAYS
            matched = rng.random(R) < PAIR_MATCHED
            sides = rng.integers(0, 2, (R, 2))
            stakes = PAIR_STAKES[rng.integers(0, len(PAIR_STAKES), (R, 2))]
            n = 0
            for i in range(R):
                if not ok[i] or not plays[i]:
                    continue
                if matched[i]:
                    n += 1
                    side_a, side_b = sides[i, 0], 1 - sides[i, 0]
                    stake_a = stake_b = int(stakes[i, 0])
                else:
                    side_a, side_b = sides[i]
                    stake_a, stake_b = int(stakes[i, 0]), int(stakes[i, 1])
                t = placed(i)
                new.append((i, COLLUDER_A, (I_PLAYER, I_BANKER)[side_a], stake_a, t))
                new.append((i, COLLUDER_B, (I_PLAYER, I_BANKER)[side_b], stake_b, placed(i, t)))
            pair = "|".join(sorted(self.account_id(table.index, k) for k in (COLLUDER_A, COLLUDER_B)))
            row = self.row("colluding_pair", table.table_id, pair, PAIR_MATCHED,
                           f"two accounts play the same {PAIR_PLAYS:.0%} of the rounds; on {PAIR_MATCHED:.0%} of them "
                           "one bets PLAYER and the other BANKER with the same stake ({n} rounds this day)")
            row.count += n
        favoured: list[int] = []
        if table is a.overpay:
            plays = rng.random(R) < OVERPAY_PLAYS
            side = rng.integers(0, 2, R)
            for i in range(R):
                if ok[i] and plays[i]:
                    favoured.append(len(new))
                    new.append((i, FAVOURED, (I_PLAYER, I_BANKER)[side[i]], OVERPAY_STAKE, placed(i)))
        if not new:
            return bets
        ridx = np.array([x[0] for x in new], dtype=bets.ridx.dtype)
        acc = np.array([self.pool + x[1] for x in new], dtype=bets.acc.dtype)
        types = np.array([x[2] for x in new], dtype=bets.type.dtype)
        modes = np.full(len(new), mode, dtype=bets.mode.dtype)
        stake = np.array([x[3] for x in new], dtype=bets.stake.dtype)
        put = np.array([x[4] for x in new], dtype=bets.placed.dtype)
        paid = maker.settle(rounds, ridx, types, modes, stake).astype(bets.paid.dtype)
        # Bet numbers after the round's own (and its faults'), in the order placed.
        next_n = np.zeros(R, dtype=np.int64)
        real = ~bets.ghost
        np.maximum.at(next_n, bets.ridx[real], bets.n[real])
        order = np.lexsort((acc, put, ridx))
        n = np.empty(len(new), dtype=bets.n.dtype)
        for k in order.tolist():
            next_n[ridx[k]] += 1
            n[k] = next_n[ridx[k]]
        if favoured:
            self._overpay(table, rounds, favoured, ridx, types, stake, paid, n, planner)
        added = Bets(ridx, acc, types, modes, stake, paid, put, n, np.zeros(len(new), bool),
                     np.zeros(len(new), bets.dup.dtype))  # fmt: skip
        allb = Bets.concat([bets, added])
        return allb.take(np.lexsort((allb.dup, allb.n, allb.ghost, allb.ridx)))

    def _overpay(self, table: TableSpec, rounds: list[Round], idx: list[int], ridx, types, stake, paid, n,
                 planner) -> None:  # fmt: skip
        unit = self.unit
        assert unit is not None
        dealer = favoured_dealer(table.index, unit.day_us)
        account = self.account_id(table.index, FAVOURED)
        u = unit.rng.random(len(idx))
        done = 0
        for k, j in enumerate(idx):
            rnd = rounds[ridx[j]]
            if rnd.dealer_id != dealer or paid[j] <= stake[j] or u[k] >= OVERPAY_SHARE:
                continue
            old = int(paid[j])
            paid[j] = old + stake[j]
            odds = "2:1 instead of 1:1" if types[j] == I_PLAYER else "1.95:1 instead of 0.95:1"
            code = "PLAYER" if types[j] == I_PLAYER else "BANKER"
            _record_fault(planner, "OVERPAID", rnd.shoe_id, rnd.round_id, bet_id(rnd.round_id, int(n[j])),
                          f"{code} win paid at {odds}: paid {old} -> {int(paid[j])} (dealer {dealer} overpays "
                          f"account {account}: pattern dealer_overpays)")  # fmt: skip
            done += 1
        row = self.row("dealer_overpays", table.table_id, f"{dealer}|{account}", OVERPAY_SHARE,
                       f"dealer {dealer} pays account {account}'s winning PLAYER/BANKER bets one unit of odds more on "
                       f"{OVERPAY_SHARE:.0%} of them ({{n}} OVERPAID faults this day), never at another dealer's "
                       "rounds")  # fmt: skip
        row.count += done

    # -- roulette and sic bo (pitboss/recorder/outcomes.py) ----------------------------------------

    def outcome(self, rec, table, session, dealer: str, outcome: Any) -> Any:
        """The outcome of a spin or roll as the planted wheel, die or dealer makes it (from the fair one)."""
        game = rec.spec.name
        st = self._outcome_state(rec, table, session)
        if st is None:
            return outcome
        rng = st["rng"]
        if game == "roulette":
            u, v = rng.random(), rng.random()
            if u < SECTOR_MIX:
                outcome = st["sector"][int(v * SECTOR)]
            prev = session.rounds[-1] if session.rounds else None
            w, x = rng.random(), rng.random()
            if dealer == st["dealer"] and prev is not None and prev.dealer_id == dealer and w < SIGNATURE_OVERRIDE:
                d = st["distance"] - SIGNATURE_WINDOW // 2 + int(x * SIGNATURE_WINDOW)
                outcome = WHEEL_ORDER[(WHEEL_POSITION[prev.outcome] + d) % POCKETS]
            return outcome
        if rng.random() < (DIE_PROBABILITY - 1 / 6) / (1 - 1 / 6):  # else the fair die's own face
            outcome = [st["face"], *outcome[1:]]
        return outcome

    def _outcome_state(self, rec, table, session) -> dict | None:
        game = rec.spec.name
        if table is not rec.tables[0]:
            return None
        key = session.shoe_id
        st = self.outcome_state.get(key)
        if st is not None:
            return st
        run_rng = np.random.default_rng([self.seed, 41, table.index])  # the equipment's defect: the same each day
        rng = np.random.default_rng([self.seed, 42, table.index, self.day])
        number = table.table_id.split("-")[0]
        equipment = f"{rec.spec.equipment}-{number}"
        st = {"rng": rng, "equipment": equipment}
        assert self.business is not None
        day_us = int(datetime(*self.business.timetuple()[:3], tzinfo=UTC).timestamp()) * SECOND
        if game == "roulette":
            start = int(run_rng.integers(POCKETS))
            st["sector"] = [WHEEL_ORDER[(start + j) % POCKETS] for j in range(SECTOR)]
            st["distance"] = int(run_rng.integers(SIGNATURE_WINDOW, POCKETS - SIGNATURE_WINDOW))
            st["dealer"] = favoured_dealer(table.index, day_us)
            self.row("biased_wheel", table.table_id, equipment, sector_strength(),
                     f"wheel {equipment}: sector {'-'.join(map(str, st['sector']))} ({SECTOR} adjacent pockets) at "
                     f"{SECTOR_FACTOR:g} times its probability: {sector_strength():.1%} of spins (fair "
                     f"{SECTOR / POCKETS:.1%}), each of its pockets {SECTOR_FACTOR:g}/37")  # fmt: skip
            lo = st["distance"] - SIGNATURE_WINDOW // 2
            self.row("dealer_signature", table.table_id, f"{st['dealer']}|{equipment}", signature_strength(),
                     f"dealer {st['dealer']} at wheel {equipment}: after their own spin, the next pocket lands "
                     f"{lo}-{lo + SIGNATURE_WINDOW - 1} positions on (clockwise) with probability "
                     f"{signature_strength():.3f} (fair {SIGNATURE_WINDOW / POCKETS:.3f})")  # fmt: skip
        else:
            st["face"] = int(run_rng.integers(1, 7))
            self.row("biased_die", table.table_id, equipment, DIE_PROBABILITY,
                     f"shaker {equipment}: its first die shows {st['face']} with probability {DIE_PROBABILITY:.2f} "
                     "(fair 1/6), the other faces evenly less; the two other dice fair")  # fmt: skip
        self.outcome_state[key] = st
        return st

    def outcome_bets(self, rec, table, acc, r) -> None:
        """The colluding pair's RED and BLACK bets on a roulette round (after its faults)."""
        if rec.spec.name != "roulette" or table is not rec.tables[0] or r.cancelled or r.fault is not None:
            return
        st = self.outcome_state[r.session_id]
        rng = st["rng"]
        if len(acc.ids) == acc.size:  # the pattern accounts after the table's pool (never drawn by it)
            acc.ids.extend(self.account_id(table.index, k) for k in range(4))
            acc.channel.extend([1] * 4)
        a, b = acc.size + COLLUDER_A, acc.size + COLLUDER_B
        if "row" not in st:
            st["row"] = self.row("colluding_pair", table.table_id, "|".join(sorted((acc.ids[a], acc.ids[b]))),
                                 PAIR_MATCHED, f"two accounts play the same {PAIR_PLAYS:.0%} of the spins; on "
                                 f"{PAIR_MATCHED:.0%} of them one bets RED and the other BLACK with the same stake "
                                 "({n} spins this day)")  # fmt: skip
        play, match = rng.random(2)
        side_a, side_b = rng.integers(0, 2, 2).tolist()
        k_a, k_b = rng.integers(0, len(PAIR_STAKES), 2).tolist()
        t = r.open_us + int(rng.integers(SECOND // 2, SPIN_WINDOW - 2 * SECOND))
        if play >= PAIR_PLAYS:
            return
        if match < PAIR_MATCHED:
            side_b, k_b = 1 - side_a, k_a
            st["row"].count += 1
        last = max((x.n for x in r.bets if not x.ghost), default=0)
        for k, (who, side, stake_k, at) in enumerate(((a, side_a, k_a, t), (b, side_b, k_b, t + SECOND // 2))):
            code, stake = ("RED", "BLACK")[side], int(PAIR_STAKES[stake_k])
            selection = rec.legal[code][0]
            r.bets.append(_Bet(last + 1 + k, who, code, selection, stake, rec.credit(r, code, selection, stake), at))
        r.bets.sort(key=lambda x: (x.ghost, x.n, x.dup))


def _record_fault(planner, kind: str, shoe_id: str, round_id: str, bet: str, change: str) -> None:
    """A manifest row through the fault planner of the table-day (its fault ids), whether or not the run
    plants `kind` itself."""
    planner.n_unit += 1
    planner.rows.append((f"{planner.prefix}{planner.n_unit:05d}", kind, planner.table.table_id, shoe_id, round_id,
                         bet, change))  # fmt: skip
    planner.counts[kind] = planner.counts.get(kind, 0) + 1


class _ShoeHooks(DealingHooks):
    """The fault planner's dealing hooks with the shoe patterns planted first."""

    def __init__(self, patterns: PatternPlanter, planner: DealingHooks):
        self.patterns, self.planner = patterns, planner

    def shoe_fault(self, table: TableSpec, shoe: Shoe, cards: list[str]) -> int:
        if self.patterns.shoe_order(table, shoe, cards):
            return 0  # an exact repeat stays exact
        return self.planner.shoe_fault(table, shoe, cards)

    def round_fault(self, table, shoe, rnd, dealt, cards) -> None:
        self.planner.round_fault(table, shoe, rnd, dealt, cards)

    def extra_round(self, table, shoe, last) -> bool:
        return self.planner.extra_round(table, shoe, last)

    def burn_recorded(self, table, shoe, first, offset) -> None:
        self.planner.burn_recorded(table, shoe, first, offset)
