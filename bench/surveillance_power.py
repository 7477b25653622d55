"""Power and false positives of every surveillance detector (issue 32 § 4), measured by simulation.

    python -m bench.surveillance_power                  # the full grid, ~640 s of CPU on --jobs 2; `make bench` runs it
    python -m bench.surveillance_power --quick          # a tiny grid, seconds (tests/test_bench_surveillance_smoke.py)
    python -m bench.surveillance_power --only wheel,dice --out /tmp/sp
    python -m bench.surveillance_power --render bench/results/surveillance_power.json   # re-render .md and .png

Each family simulates a run directly at the level of its detectors' inputs (`TableData` built in memory
with pyarrow, not the recorder: too slow for hundreds of replications), as the pipeline runs a detector:
`features` per table, concatenated, `tests`, `adjust` (Benjamini-Hochberg at alpha 0.01 over every row
of the detector in the run). A planted run holds **one** anomalous subject (a biased wheel, a counting
account, a colluding pair...) among a realistic number of clean ones, so BH's multiplicity is real; a
clean run holds none. Per cell (strength x sample), R seeded replications:

* recall: the share of planted runs in which a row of the family's detector for the planted subject is
  flagged (at the detector's default settings: below its min_sample it does not test, so it cannot flag);
* recall without the gate: the same tests with min_sample lowered to 1 (what the detector would find if
  it tested below its minimum; says whether the minimum costs power);
* false positives: clean subjects flagged per clean subject tested, in the planted runs and in the
  clean runs, and the share of clean runs with any flag (the run-level false-alarm rate).

Outputs (--out, default bench/results): surveillance_power.json (every cell, with counts), .md (the
tables) and .png (small multiples: recall against sample, a line per strength, min_sample marked).
Seeds: numpy SeedSequence of (family, strength, sample, replication); the same command gives the same
numbers, whatever --jobs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core per process: the machine is shared

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from engine.cards import CARD_CODES  # noqa: E402
from engine.surveillance.collusion import OPPOSITE_BETTING, SHARED_ROUNDS  # noqa: E402
from engine.surveillance.dealers import (  # noqa: E402
    DEALER_ACCOUNT,
    DEALER_FINDINGS,
    DEALER_RESULT,
    DEALER_SIGNATURE,
)
from engine.surveillance.detector import Detector, TableData  # noqa: E402
from engine.surveillance.equipment import (  # noqa: E402
    DICE_BIAS,
    DICE_PAIRS,
    POCKETS,
    WHEEL_BIAS,
    WHEEL_ORDER,
    WHEEL_SECTOR,
)
from engine.surveillance.shuffles import CARD_POSITIONS, SHOE_REPEAT, WEAK_SHUFFLE, positions_min_shoes  # noqa: E402
from engine.surveillance.tests import ALPHA, SurveillanceTest, adjust  # noqa: E402

ROOT = Path(__file__).resolve().parent
DAY = np.datetime64("2026-11-28", "D")
T0_US = int(np.datetime64("2026-11-28T12:00:00", "us").astype(np.int64))
CARDS = pa.array(CARD_CODES, pa.string())
EMPTY_FINDINGS = pa.table({"kind": pa.array([], pa.string()), "round_id": pa.array([], pa.string()),
                           "bet_id": pa.array([], pa.string())})
EMPTY = pa.table({"round_id": pa.array([], pa.string())})


# ---------------------------------------------------------------------------------------------------
# the shape of a family


@dataclass(frozen=True)
class Strength:
    label: str  # e.g. "pocket 2x"
    value: Any  # what the simulator plants
    row: str  # the SurveillanceTest.detector whose flag on the planted subject counts as found
    reps: int | None = None  # replications of its cells where not the family's (a strength found whatever the sample)


@dataclass
class Sim:
    """One simulated run: its tables, and per row detector the planted subjects (none on a clean run)."""

    tables: list[TableData]
    planted: dict[str, set[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    detectors: tuple[Detector, ...]  # run on the same tables
    strengths: tuple[Strength, ...]
    samples: tuple[int, ...]
    unit: str  # what the sample counts
    min_sample: dict[str, int]  # per row detector: the default minimum (marked on the plot)
    gate_off: dict[str, dict[str, Any]]  # per detector: settings that lower its minimum to 1
    simulate: Callable[[np.random.Generator, Any, int], Sim]
    reps: int
    clean_reps: int
    setup: str  # one line: what a run holds
    quick_samples: tuple[int, ...] = ()
    gate_unit: str | None = None  # the unit of the detector's own sample where not the grid's (its minimum
    # then is not on the grid's axis: the tests run with and without it at every sample)
    other_mins: dict[str, dict[str, int]] = field(default_factory=dict)  # row -> {what: its own minimum}, plotted

    def grid(self, quick: bool) -> tuple[tuple[Strength, ...], tuple[int, ...], int, int]:
        if quick:
            return self.strengths[:2], self.quick_samples or self.samples[-1:], 2, 2
        return self.strengths, self.samples, self.reps, self.clean_reps


# ---------------------------------------------------------------------------------------------------
# builders: TableData in memory


def _ids(prefix: str, n: int) -> pa.Array:
    return pa.array([f"{prefix}{i:06d}" for i in range(n)], pa.string())


def _times(n: int, offset_s: int = 0, every_s: int = 30) -> pa.Array:
    return pa.array(T0_US + (offset_s + np.arange(n, dtype=np.int64) * every_s) * 1_000_000, pa.timestamp("us", "UTC"))


def _days(n: int) -> pa.Array:
    return pa.array(np.full(n, DAY), pa.date32())


def outcome_table(table_id: str, game: str, *, equipment: str | None, pockets: np.ndarray | None = None,
                  dice: np.ndarray | None = None, dealers: np.ndarray | None = None, bets: pa.Table | None = None,
                  findings: pa.Table | None = None, round_ids: bool = False) -> TableData:
    """A roulette or sic bo table's day: one session on `equipment` (its wheel or shaker), a round per
    pocket (or roll), 30 s apart, every round settled."""
    n = len(pockets if pockets is not None else dice)
    shoe = f"{table_id}/S1"
    cols: dict[str, Any] = {
        "shoe_id": pa.array([shoe] * n, pa.string()), "status": pa.array(["settled"] * n, pa.string()),
        "business_date": _days(n), "betting_closed_at": _times(n)}
    if round_ids or bets is not None or findings is not None:
        cols["round_id"] = _ids(f"{table_id}-r", n)
    if dealers is not None:
        cols["dealer_id"] = pa.array(dealers, pa.string())
    if pockets is not None:
        cols["pocket"] = pa.array(pockets, pa.int8())
    if dice is not None:
        cols["dice"] = pa.ListArray.from_arrays(pa.array(np.arange(0, 3 * n + 1, 3), pa.int32()),
                                                pa.array(dice.reshape(-1), pa.int8()))
    shoes = pa.table({"shoe_id": [shoe], "equipment_id": pa.array([equipment], pa.string())})
    return TableData(table={"table_id": table_id, "game": game, "ruleset": "", "currency": "EUR"}, shoes=shoes,
                     rounds=pa.table(cols), bets=bets if bets is not None else EMPTY,
                     findings=findings if findings is not None else EMPTY_FINDINGS, positions=EMPTY)


def shoe_table(table_id: str, shoes: np.ndarray, *, first_shoe: int = 0, offset_min: int = 0) -> TableData:
    """A baccarat table's shoes (an (n, cards) array of card indexes 0-51), opened an hour apart, the cards
    dictionary-encoded (the strings are the card codes)."""
    n, m = shoes.shape
    flat = pa.DictionaryArray.from_arrays(pa.array(shoes.reshape(-1).astype(np.int8), pa.int8()), CARDS)
    ids = [f"{table_id}-S{first_shoe + i + 1:04d}" for i in range(n)]
    opened = pa.array(T0_US + (offset_min + np.arange(n, dtype=np.int64) * 60) * 60_000_000,
                      pa.timestamp("us", "UTC"))
    shoe_tab = pa.table({
        "shoe_id": ids, "shoe_no": pa.array(np.arange(first_shoe + 1, first_shoe + n + 1), pa.int32()),
        "opened_at": opened, "decks": pa.array(np.full(n, m // 52), pa.int8()),
        "cards": pa.ListArray.from_arrays(pa.array(np.arange(0, n * m + 1, m), pa.int32()), flat),
        "cut_index": pa.nulls(n, pa.int32()), "equipment_id": pa.nulls(n, pa.string())})
    rounds = pa.table({"round_id": [f"{s}-R1" for s in ids], "shoe_id": ids, "business_date": _days(n)})
    return TableData({"table_id": table_id, "game": "baccarat", "ruleset": "baccarat_8d", "currency": "EUR"},
                     shoe_tab, rounds, EMPTY, EMPTY_FINDINGS, EMPTY)


def fair_shoes(rng: np.random.Generator, n: int, decks: int = 8) -> np.ndarray:
    return rng.permuted(np.tile(np.repeat(np.arange(52, dtype=np.int64), decks), (n, 1)), axis=1)


# ---------------------------------------------------------------------------------------------------
# wheels, dealer signature, dice


WHEELS = 20


def wheel_probabilities(rng: np.random.Generator, plant: tuple | None) -> np.ndarray:
    """Pocket probabilities: uniform, or ("pocket", factor): one random pocket at factor x 1/37, or
    ("sector", k, boost): k adjacent pockets (a random start on the wheel) at (1 + boost) / 37; the other
    pockets evenly lower."""
    p = np.full(POCKETS, 1 / POCKETS)
    if plant is None:
        return p
    if plant[0] == "pocket":
        hot = [int(rng.integers(POCKETS))]
        factor = plant[1]
    else:
        start = int(rng.integers(POCKETS))
        hot = [WHEEL_ORDER[(start + j) % POCKETS] for j in range(plant[1])]
        factor = 1 + plant[2]
    p[hot] *= factor
    rest = np.setdiff1d(np.arange(POCKETS), hot)
    p[rest] = (1 - p[hot].sum()) / rest.size
    return p


def simulate_wheels(rng: np.random.Generator, plant: tuple | None, spins: int) -> Sim:
    """20 roulette tables, a wheel each, `spins` spins each over the period; one wheel biased."""
    bad = int(rng.integers(WHEELS)) if plant else -1
    tables = [outcome_table(f"RT-{w:02d}", "roulette", equipment=f"W-{w:02d}",
                            pockets=rng.choice(POCKETS, spins, p=wheel_probabilities(rng, plant if w == bad else None)))
              for w in range(WHEELS)]
    planted = {} if bad < 0 else {r: {f"W-{bad:02d}"} for r in ("wheel_bias", "wheel_pocket", "wheel_sector")}
    return Sim(tables, planted)


SIGNATURE_WHEELS, SIGNATURE_DEALERS = 5, 4  # 20 (dealer, wheel) subjects
SIGNATURE_WINDOW = (10, 15)  # the planted dealer's favoured distances: 5 adjacent values


def simulate_signature(rng: np.random.Generator, factor: float | None, pairs: int) -> Sim:
    """5 roulette wheels, each spun by 4 dealers in one shift of `pairs` + 1 spins each (so `pairs`
    successive pairs): 20 (dealer, wheel) subjects. The planted dealer's next pocket lands 10-14 positions
    on `factor` times as often as chance (the other distances evenly less); every other spin is uniform."""
    bad = int(rng.integers(SIGNATURE_WHEELS * SIGNATURE_DEALERS)) if factor else -1
    step = np.full(POCKETS, 1.0)
    if factor:
        lo, hi = SIGNATURE_WINDOW
        step[lo:hi] = factor
        rest = np.r_[0:lo, hi:POCKETS]
        step[rest] = (POCKETS - factor * (hi - lo)) / rest.size
    step /= step.sum()
    order = np.array(WHEEL_ORDER)
    tables = []
    for w in range(SIGNATURE_WHEELS):
        pockets, dealers = [], []
        for d in range(SIGNATURE_DEALERS):
            if w * SIGNATURE_DEALERS + d == bad:
                pos = (int(rng.integers(POCKETS)) + np.cumsum(rng.choice(POCKETS, pairs + 1, p=step))) % POCKETS
            else:
                pos = rng.integers(POCKETS, size=pairs + 1)
            pockets.append(order[pos])
            dealers += [f"D-{w}{d}"] * (pairs + 1)
        tables.append(outcome_table(f"RT-{w:02d}", "roulette", equipment=f"W-{w:02d}",
                                    pockets=np.concatenate(pockets), dealers=np.array(dealers), round_ids=True))
    planted = {}
    if bad >= 0:
        w, d = divmod(bad, SIGNATURE_DEALERS)
        planted = {"dealer_signature": {f"D-{w}{d}|W-{w:02d}"}}
    return Sim(tables, planted)


SHAKERS = 10


def simulate_dice(rng: np.random.Generator, six: float | None, rolls: int) -> Sim:
    """10 sic bo tables, a shaker each, `rolls` rolls each; on the planted shaker one of the three dice
    shows a 6 with probability `six` (its other faces evenly less)."""
    bad = int(rng.integers(SHAKERS)) if six else -1
    tables = []
    for s in range(SHAKERS):
        dice = rng.integers(1, 7, size=(rolls, 3))
        if s == bad:
            p = np.full(6, (1 - six) / 5)
            p[5] = six
            dice[:, int(rng.integers(3))] = rng.choice(np.arange(1, 7), rolls, p=p)
        tables.append(outcome_table(f"SB-{s:02d}", "sic_bo", equipment=f"K-{s:02d}", dice=dice, round_ids=True))
    planted = {} if bad < 0 else {r: {f"K-{bad:02d}"} for r in ("dice_bias", "dice_pairs", "dice_triples")}
    return Sim(tables, planted)


# ---------------------------------------------------------------------------------------------------
# shoes: repeats, weak shuffles, card positions


SHOE_TABLES = 20


def plant_run(rng: np.random.Generator, shoe: np.ndarray, source: np.ndarray, k: int) -> np.ndarray:
    """`shoe` (a shuffle) with `k` consecutive cards of `source` (from a random offset) placed at a
    random offset, by swaps: the composition is kept. k >= the shoe's length: the whole of `source`."""
    if k >= shoe.size:
        return source.copy()
    out = shoe.copy()
    i, j = int(rng.integers(source.size - k + 1)), int(rng.integers(out.size - k + 1))
    for t in range(k):
        want = source[i + t]
        free = np.flatnonzero(out == want)
        free = free[(free < j) | (free >= j + t)]  # not a card already placed
        m = int(free[rng.integers(free.size)])
        out[j + t], out[m] = out[m], out[j + t]
    return out


def simulate_repeat(rng: np.random.Generator, run: int | None, shoes: int) -> Sim:
    """A run of `shoes` 8-deck shoes over 20 baccarat tables (opened in turn, an hour apart a table); the
    last shoe of the run shares `run` consecutive cards (416: the whole shoe) with a random earlier shoe
    of another table. Every shoe is a subject (BH over the run's shoes)."""
    cards = fair_shoes(rng, shoes)
    planted = {}
    if run:
        src = int(rng.integers(shoes - 1))
        cards[-1] = plant_run(rng, cards[-1], cards[src], run)
    tables = []
    for t in range(SHOE_TABLES):
        rows = np.arange(t, shoes, SHOE_TABLES)  # shoe i is at table i % 20, its (i // 20)-th
        if rows.size:
            tables.append(shoe_table(f"BT-{t:02d}", cards[rows], offset_min=t))
    if run:
        last = shoes - 1
        planted = {"shoe_repeat": {f"BT-{last % SHOE_TABLES:02d}-S{last // SHOE_TABLES + 1:04d}"}}
    return Sim(tables, planted)


def riffle(rng: np.random.Generator, pack: np.ndarray) -> np.ndarray:
    """One riffle (Gilbert-Shannon-Reeds): a binomial cut, the halves interleaved uniformly at random."""
    n = pack.size
    cut = int(rng.binomial(n, 0.5))
    left = np.zeros(n, bool)
    left[rng.choice(n, cut, replace=False)] = True
    out = np.empty_like(pack)
    out[left], out[~left] = pack[:cut], pack[cut:]
    return out


def weak_shuffle(rng: np.random.Generator, shoe: np.ndarray, plant: tuple) -> np.ndarray:
    """("riffle", r): the shoe cut into 8 packs of 52, each riffled r times, the packs stacked in a random
    order; ("strips", c): the shoe cut into strips of c cards, stacked in a random order."""
    if plant[0] == "riffle":
        packs = np.array_split(shoe, 8)
        for _ in range(plant[1]):
            packs = [riffle(rng, p) for p in packs]
        return np.concatenate([packs[i] for i in rng.permutation(len(packs))])
    strips = [shoe[i:i + plant[1]] for i in range(0, shoe.size, plant[1])]
    return np.concatenate([strips[i] for i in rng.permutation(len(strips))])


def simulate_weak(rng: np.random.Generator, plant: tuple | None, pairs: int) -> Sim:
    """20 baccarat tables, each `pairs` + 1 consecutive 8-deck shoes in the day; at the planted table every
    shoe is the previous one (as dealt, no cut card) shuffled weakly."""
    bad = int(rng.integers(SHOE_TABLES)) if plant else -1
    tables = []
    for t in range(SHOE_TABLES):
        cards = fair_shoes(rng, pairs + 1)
        if t == bad:
            for i in range(1, pairs + 1):
                cards[i] = weak_shuffle(rng, cards[i - 1], plant)
        tables.append(shoe_table(f"BT-{t:02d}", cards, offset_min=t))
    planted = {}
    if bad >= 0:
        tid = f"BT-{bad:02d}"
        planted = {"weak_shuffle": {tid},
                   "weak_shuffle_pair": {f"{tid}-S{i:04d}>{tid}-S{i + 1:04d}" for i in range(1, pairs + 1)}}
    return Sim(tables, planted)


def simulate_positions(rng: np.random.Generator, strength: float | None, shoes: int) -> Sim:
    """20 baccarat tables, `shoes` 8-deck shoes each; at the planted table one rank (a random one) is
    over-represented by `strength` in one decile of every shoe and as much short in another: each card
    of the rank in the short decile moves, with probability `strength`, to a random place in the long
    one (swapped with a card of another rank)."""
    bad = int(rng.integers(SHOE_TABLES)) if strength else -1
    tables = []
    for t in range(SHOE_TABLES):
        cards = fair_shoes(rng, shoes)
        if t == bad:
            rank = int(rng.integers(13))
            long, short = rng.choice(10, 2, replace=False)
            m = cards.shape[1]
            decile = np.arange(m) * 10 // m
            for s in range(shoes):
                shoe = cards[s]
                of_rank = shoe // 4 == rank
                movers = np.flatnonzero(of_rank & (decile == short))
                movers = movers[rng.random(movers.size) < strength]
                targets = np.flatnonzero(~of_rank & (decile == long))
                targets = rng.choice(targets, min(movers.size, targets.size), replace=False)
                shoe[movers[:targets.size]], shoe[targets] = shoe[targets], shoe[movers[:targets.size]].copy()
        tables.append(shoe_table(f"BT-{t:02d}", cards, offset_min=t))
    return Sim(tables, {} if bad < 0 else {"card_positions": {f"BT-{bad:02d}"}})


# ---------------------------------------------------------------------------------------------------
# collusion: baccarat bettors


LEVELS = np.array([500, 1000, 2000, 2500, 5000, 10000, 20000, 25000, 50000])  # chip levels, minor units
COLLUSION_TABLES, COLLUSION_ROUNDS, SESSIONS = 2, 400, 40


def bettors(rng: np.random.Generator, table: int, n_rounds: int, sessions: int, n_accounts: int):
    """Ordinary, independent bettors at one baccarat table (the model of tests/test_surveillance_collusion.py):
    each session an account that bets a random share (30-100%) of the rounds of a stretch (1/8 to 1/2 of
    the day), PLAYER or BANKER at its own odds, a stake at its chip level or a step off, a TIE beside it
    one time in ten. Rows (round, account, bet_type, stake)."""
    accts = rng.choice(n_accounts, sessions, replace=False)
    length = rng.integers(n_rounds // 8, n_rounds // 2, sessions)
    start = rng.integers(-n_rounds // 10, n_rounds, sessions)
    rate = rng.uniform(0.3, 1.0, sessions)
    p_player = rng.uniform(0.2, 0.8, n_accounts)
    level = rng.integers(0, LEVELS.size, n_accounts)
    sess = np.repeat(np.arange(sessions), length)
    rnd = np.repeat(start, length) + (np.arange(sess.size) - np.repeat(np.cumsum(length) - length, length))
    keep = (rnd >= 0) & (rnd < n_rounds) & (rng.random(sess.size) < rate[sess])
    sess, rnd = sess[keep], rnd[keep]
    acct = accts[sess]
    side = np.where(rng.random(acct.size) < p_player[acct], "PLAYER", "BANKER")
    stake = LEVELS[np.clip(level[acct] + rng.choice([-1, 0, 0, 0, 1], acct.size), 0, LEVELS.size - 1)]
    names = np.char.add("A", np.char.zfill(acct.astype(str), 5))
    tie = rng.random(acct.size) < 0.1
    return (np.r_[rnd, rnd[tie]], np.r_[names, names[tie]], np.r_[side, np.full(int(tie.sum()), "TIE")],
            np.r_[stake, stake[tie] // 5])


def baccarat_table(rng: np.random.Generator, table_id: str, n_rounds: int, rows) -> TableData:
    rnd, acct, bet_type, stake = rows
    outcome = rng.choice(np.array(["PLAYER", "BANKER", "TIE"]), n_rounds, p=[0.446, 0.458, 0.096])[rnd]
    paid = np.select([bet_type == "TIE", outcome == "TIE", bet_type != outcome, bet_type == "PLAYER"],
                     [np.where(outcome == "TIE", 9 * stake, 0), stake, 0, 2 * stake], stake + stake * 95 // 100)
    round_ids = _ids(f"{table_id}-r", n_rounds)
    rounds = pa.table({"round_id": round_ids, "status": pa.array(["settled"] * n_rounds, pa.string()),
                       "business_date": _days(n_rounds), "betting_closed_at": _times(n_rounds, every_s=50)})
    order = rng.permutation(rnd.size)
    bets = pa.table({"bet_id": _ids(f"{table_id}-b", rnd.size), "round_id": round_ids.take(pa.array(rnd[order])),
                     "account_id": pa.array(acct[order], pa.string()),
                     "bet_type": pa.array(bet_type[order], pa.string()),
                     "stake": pa.array(stake[order].astype(np.int64)), "paid": pa.array(paid[order].astype(np.int64))})
    return TableData({"table_id": table_id, "game": "baccarat", "ruleset": "baccarat_8d", "currency": "EUR"},
                     pa.table({"shoe_id": pa.array([], pa.string())}), rounds, bets, EMPTY_FINDINGS, EMPTY)


def _floor(rng: np.random.Generator, extra: Callable[[int], tuple] | None) -> list[TableData]:
    """2 baccarat tables x 400 rounds, 40 sessions each from 120 accounts; `extra(t)` adds rows at table t."""
    tables = []
    for t in range(COLLUSION_TABLES):
        rows = bettors(rng, t, COLLUSION_ROUNDS, SESSIONS, 120)
        if extra is not None and t == 0:
            rows = tuple(np.r_[a, b] for a, b in zip(rows, extra(t), strict=True))
        tables.append(baccarat_table(rng, f"BT-{t:02d}", COLLUSION_ROUNDS, rows))
    return tables


def simulate_opposite(rng: np.random.Generator, hedged: float | None, shared: int) -> Sim:
    """The floor of `_floor`, and (planted) accounts P1 and P2 who sit together at BT-00 for `shared`
    consecutive rounds and bet every one of them: on a share `hedged` of them (exactly, at random) P1
    bets a side at random and P2 the other side, its stake 95-100% of P1's; on the others each bets its
    own side at random. Both play at the same chip level as ordinary accounts do (a step off one time
    in five), so a chance match is likely: about 1 shared round in 5 by chance."""
    if not hedged:
        return Sim(_floor(rng, None))

    def pair(_t: int):
        start = int(rng.integers(COLLUSION_ROUNDS - shared + 1))
        rnd = start + np.arange(shared)
        level = int(rng.integers(1, LEVELS.size - 1))
        hedge = np.zeros(shared, bool)
        hedge[rng.choice(shared, round(hedged * shared), replace=False)] = True
        s1 = LEVELS[level + rng.choice([-1, 0, 0, 0, 1], shared)]
        s2 = np.where(hedge, (s1 * rng.uniform(0.95, 1.0, shared)).astype(np.int64),
                      LEVELS[level + rng.choice([-1, 0, 0, 0, 1], shared)])
        side1 = rng.random(shared) < 0.5
        side2 = np.where(hedge, ~side1, rng.random(shared) < 0.5)
        names = np.r_[np.full(shared, "P1"), np.full(shared, "P2")]
        sides = np.where(np.r_[side1, side2], "PLAYER", "BANKER")
        return np.r_[rnd, rnd], names, sides, np.r_[s1, s2]

    return Sim(_floor(rng, pair), {"opposite_betting": {"P1|P2"}})


def simulate_shared(rng: np.random.Generator, overlap: float | None, rounds: int) -> Sim:
    """The floor of `_floor`, and (planted) accounts P1 and P2 at BT-00 over a stretch of 2 x `rounds`
    rounds (inside the window both play: both bet its first and last round), each betting exactly
    `rounds` of them (PLAYER or BANKER, as ordinary accounts): P1 a random half, P2 each of P1's rounds
    with probability `overlap` (Binomial) and the rest of its `rounds` among the others (by chance they
    would share half their rounds)."""
    if not overlap:
        return Sim(_floor(rng, None))

    def pair(_t: int):
        w = 2 * rounds
        start = int(rng.integers(COLLUSION_ROUNDS - w - 1))
        inner = rng.permutation(w)
        mine, others = inner[:rounds], inner[rounds:]
        k = int(rng.binomial(rounds, overlap))
        theirs = np.r_[rng.choice(mine, k, replace=False), rng.choice(others, rounds - k, replace=False)]
        ends = np.array([0, w + 1])  # the window's ends: both bet them, the window excludes them
        r1, r2 = start + np.r_[ends, 1 + mine], start + np.r_[ends, 1 + theirs]
        level = int(rng.integers(1, LEVELS.size - 1))
        n = r1.size + r2.size
        return (np.r_[r1, r2], np.r_[np.full(r1.size, "P1"), np.full(r2.size, "P2")],
                np.where(rng.random(n) < 0.5, "PLAYER", "BANKER"), LEVELS[level + rng.choice([-1, 0, 0, 0, 1], n)])

    return Sim(_floor(rng, pair), {"shared_rounds": {"P1|P2"}})


# ---------------------------------------------------------------------------------------------------
# dealers: one account overpaid, finding rates, house result


ACCOUNTS, DEALERS, TURN = 40, 4, 20
BACKGROUND_BAD = 0.005  # an account's rounds with an honest OVERPAID (and, apart, UNDERPAID) bet


def simulate_dealer_account(rng: np.random.Generator, bad: int | None, rounds: int) -> Sim:
    """One table, `rounds` rounds, dealers D-1..D-4 in turns of 20 rounds (a quarter each), 40 accounts
    each betting every round; honest mistakes: each (account, round) OVERPAID with probability 0.5% and
    UNDERPAID with 0.5% of its winning bets, whatever the dealer. Planted: dealer D-2 overpays one account
    on `bad` more of its rounds (rounds of D-2's the account was not already overpaid on)."""
    dealer = (np.arange(rounds) // TURN) % DEALERS
    over = rng.random((ACCOUNTS, rounds)) < BACKGROUND_BAD
    under = rng.random((ACCOUNTS, rounds)) < BACKGROUND_BAD
    target = int(rng.integers(ACCOUNTS)) if bad else -1
    if bad:
        free = np.flatnonzero((dealer == 1) & ~over[target])
        over[target, rng.choice(free, min(bad, free.size), replace=False)] = True
    acct = np.repeat(np.arange(ACCOUNTS), rounds)
    rnd = np.tile(np.arange(rounds), ACCOUNTS)
    stake = np.full(acct.size, 1000, np.int64)
    expected = np.where(rng.random(acct.size) < 0.5, 2 * stake, 0)  # an even-money bet a round, won or lost
    o = over.reshape(-1)
    u = under.reshape(-1) & ~o & (expected > 0)  # underpaid: a winning bet paid short
    paid = expected + np.where(o, 500, 0) - np.where(u, 500, 0)
    round_ids = _ids("RT-00-r", rounds)
    bet_ids = _ids("b", acct.size)
    bets = pa.table({"bet_id": bet_ids, "round_id": round_ids.take(pa.array(rnd)),
                     "account_id": pa.array(np.char.add("A-", np.char.zfill(acct.astype(str), 2)), pa.string()),
                     "stake": pa.array(stake), "paid": pa.array(paid), "expected": pa.array(expected)})
    marked = np.flatnonzero(o | u)
    findings = pa.table({"kind": pa.array(np.where(o[marked], "OVERPAID", "UNDERPAID"), pa.string()),
                         "round_id": round_ids.take(pa.array(rnd[marked])), "bet_id": bet_ids.take(pa.array(marked))})
    table = outcome_table("RT-00", "roulette", equipment="W-00", pockets=np.zeros(rounds, np.int64),
                          dealers=np.char.add("D-", (dealer + 1).astype(str)), bets=bets, findings=findings)
    return Sim([table], {} if target < 0 else {"dealer_account": {f"D-2|A-{target:02d}"}})


FINDING_TABLES, BASE_RATE = 5, 0.01


def simulate_dealer_findings(rng: np.random.Generator, factor: float | None, rounds: int) -> Sim:
    """5 tables, each dealt by 4 dealers in turns of 20 rounds (`rounds` rounds each: 20 dealers); a
    finding kind (LATE_BET) on 1% of rounds; the planted dealer's rounds carry it `factor` times as
    often."""
    bad = int(rng.integers(FINDING_TABLES * DEALERS)) if factor else -1
    tables = []
    for t in range(FINDING_TABLES):
        n = DEALERS * rounds
        dealer = (np.arange(n) // TURN) % DEALERS
        rate = np.where(t * DEALERS + dealer == bad, BASE_RATE * (factor or 1), BASE_RATE)
        hit = np.flatnonzero(rng.random(n) < rate)
        round_ids = _ids(f"T{t}-r", n)
        findings = pa.table({"kind": pa.array(["LATE_BET"] * hit.size, pa.string()),
                             "round_id": round_ids.take(pa.array(hit)), "bet_id": pa.nulls(hit.size, pa.string())})
        tables.append(outcome_table(f"T{t}", "roulette", equipment=f"W-{t}", pockets=np.zeros(n, np.int64),
                                    dealers=np.char.add(f"D-{t}", dealer.astype(str)), findings=findings))
    planted = {}
    if bad >= 0:
        t, d = divmod(bad, DEALERS)
        planted = {"dealer_findings": {f"D-{t}{d}"}}
    return Sim(tables, planted)


RED_RTP = 36 / 37
RED_VARIANCE = 4 * 18 / 37 - RED_RTP**2  # of the credit per unit staked


def simulate_dealer_result(rng: np.random.Generator, shortfall: float | None, bets: int) -> Sim:
    """5 roulette tables, 4 dealers each (20 dealers), `bets` even-money bets a dealer (RED/BLACK at
    36/37, theoretical variance 0.999 a unit), one a spin, stakes 5, 10 or 25.00; the planted dealer's
    bets win more often, so that the house result falls `shortfall` of the stakes short of the theory."""
    bad = int(rng.integers(FINDING_TABLES * DEALERS)) if shortfall else -1
    tables = []
    for t in range(FINDING_TABLES):
        n = DEALERS * bets
        # in turns of 20 bets, a last shorter turn each: every dealer exactly `bets` bets (the minimum, 2,626, is
        # no multiple of 20: plain turns would leave three dealers of four just below it)
        whole = bets // TURN * TURN * DEALERS
        dealer = np.r_[(np.arange(whole) // TURN) % DEALERS, np.repeat(np.arange(DEALERS), bets % TURN)]
        win = np.where(t * DEALERS + dealer == bad, (RED_RTP + (shortfall or 0)) / 2, 18 / 37)
        stake = rng.choice(np.array([500, 1000, 2500], np.int64), n)
        paid = np.where(rng.random(n) < win, 2 * stake, 0)
        round_ids = _ids(f"T{t}-r", n)
        bet_tab = pa.table({"bet_id": _ids(f"T{t}-b", n), "round_id": round_ids, "stake": pa.array(stake),
                            "paid": pa.array(paid), "theoretical_rtp": pa.array(np.full(n, RED_RTP)),
                            "theoretical_variance": pa.array(np.full(n, RED_VARIANCE))})
        tables.append(outcome_table(f"T{t}", "roulette", equipment=f"W-{t}", pockets=np.zeros(n, np.int64),
                                    dealers=np.char.add(f"D-{t}", dealer.astype(str)), bets=bet_tab))
    planted = {}
    if bad >= 0:
        t, d = divmod(bad, DEALERS)
        planted = {"dealer_result": {f"D-{t}{d}"}}
    return Sim(tables, planted)


# ---------------------------------------------------------------------------------------------------
# advantage play: a counting account at a baccarat table


ADVANTAGE_RULESET = "baccarat_live_pairs"  # 004: its pair bets have no cutoff, and late in the shoe pay most


def simulate_advantage(rng: np.random.Generator, counter: dict | None, rounds: int) -> Sim:
    """One baccarat table's day of `rounds` rounds dealt by the rule (ruleset 004) with 40 ordinary
    accounts betting a random side bet on a quarter of the rounds, blind to the cards, and (planted) one
    counting account: tests/test_surveillance_advantage.py's `baccarat_day`, as bench/surveillance_advantage.py
    uses it."""
    from engine.games.baccarat.ruleset import load_ruleset
    from tests.test_surveillance_advantage import baccarat_day

    seed = int(rng.integers(2**31))
    ruleset = load_ruleset(ADVANTAGE_RULESET)
    if counter is None:
        return Sim([baccarat_day(seed, rounds=rounds, ruleset=ruleset)])
    day = baccarat_day(seed, rounds=rounds, ruleset=ruleset, counter={"account": "COUNTER", **counter})
    return Sim([day], {"advantage_play": {"COUNTER"}})


def _advantage_family() -> Family | None:
    """The advantage_play family where the detector is on main (it landed after this bench was written)."""
    try:
        from engine.surveillance.advantage import ADVANTAGE_PLAY
    except ModuleNotFoundError:
        return None
    pair = ("PLAYER_PAIR",)
    return Family(
        "advantage", "Advantage play (advantage_play)", (ADVANTAGE_PLAY,),
        (Strength("PLAYER_PAIR only when its RTP > 95%",
                  {"mode": "only", "threshold": 0.95, "bets": pair, "stake": 10_000}, "advantage_play"),
         Strength("PLAYER_PAIR only when its RTP > 100%",
                  {"mode": "only", "threshold": 1.0, "bets": pair, "stake": 10_000}, "advantage_play"),
         Strength("PLAYER_PAIR every round, 5x when its RTP > 95%",
                  {"mode": "5x", "threshold": 0.95, "bets": pair, "stake": 2_000}, "advantage_play")),
        (600, 1200, 2400), "rounds of the table", {"advantage_play": ADVANTAGE_PLAY.settings["min_bets"]},
        {"advantage_play": {"min_bets": 1}}, simulate_advantage, reps=30, clean_reps=20,
        setup="one baccarat table (004) of N rounds dealt by the rule, 40 ordinary accounts betting a random side "
              "bet on a quarter of the rounds, blind to the cards; a counter bets PLAYER_PAIR only when its return "
              "on the remaining cards is above 95% (100%), or every round and 5x then",
        quick_samples=(600,), gate_unit="bets of the account")


# ---------------------------------------------------------------------------------------------------
# the families


def one_period(detector: Detector) -> Detector:
    """The detector over one period alone (history_days 0: no window of earlier nights, no spending over nightly
    looks), what this grid measures; bench/surveillance_history.py measures the nightly windows."""
    return replace(detector, settings={**detector.settings, "history_days": 0})


def _families() -> list[Family]:
    sector = WHEEL_SECTOR.settings["sectors"]
    # the two minima worked out from their detectors' settings (8-deck shoes; the dealer's bets)
    settings = CARD_POSITIONS.settings
    positions_min = positions_min_shoes(8, settings["strength"], settings["power"], settings["level"])
    result_min = DEALER_RESULT.settings["min_bets"]
    return [
        Family(
            "wheel", "Roulette wheels (wheel_bias, wheel_sector; wheel_pocket beside it)",
            (one_period(WHEEL_BIAS), one_period(WHEEL_SECTOR)),
            (Strength("pocket 1.5x", ("pocket", 1.5), "wheel_bias"),
             Strength("pocket 2x", ("pocket", 2.0), "wheel_bias"),
             Strength("pocket 3x", ("pocket", 3.0), "wheel_bias"),
             Strength("sector of 5 +20%", ("sector", 5, 0.2), "wheel_sector"),
             Strength("sector of 5 +30%", ("sector", 5, 0.3), "wheel_sector"),
             Strength("sector of 5 +50%", ("sector", 5, 0.5), "wheel_sector")),
            (500, 1000, 1900, 4000), "spins", {"wheel_bias": WHEEL_BIAS.settings["min_spins"],
                                               "wheel_sector": min(v for k, v in sector.items() if k > 1),
                                               "wheel_pocket": sector[1]},
            {"wheel_bias": {"min_spins": 1}, "wheel_sector": {"sectors": {k: 1 for k in sector}}},
            simulate_wheels, reps=50, clean_reps=100,
            setup="20 wheels (a table each), one biased: a pocket at 1.5/2/3x 1/37 or a sector of 5 adjacent "
                  "pockets at +20/30/50% (the rest evenly lower); the spins of one period, without history "
                  "(bench/surveillance_history.py: night after night); wheel_sector tests sectors of 5 and 9 (BH over "
                  "both), wheel_pocket the hottest pocket",
            quick_samples=(1900,), other_mins={"wheel_sector": {"k = 9": sector[9]}}),
        Family(
            "signature", "Dealer signature (dealer_signature)", (one_period(DEALER_SIGNATURE),),
            (Strength("5 distances at 1.5x", 1.5, "dealer_signature"),
             Strength("5 distances at 2x", 2.0, "dealer_signature"),
             Strength("5 distances at 3x", 3.0, "dealer_signature")),
            (150, 330, 660, 1300), "successive spins", {"dealer_signature": DEALER_SIGNATURE.settings["min_pairs"]},
            {"dealer_signature": {"min_pairs": 1}}, simulate_signature, reps=60, clean_reps=100,
            setup="5 wheels x 4 dealers = 20 (dealer, wheel) subjects, one shift each; the planted dealer's next "
                  "pocket lands 10-14 positions on at 1.5/2/3x chance, every pocket still uniform",
            quick_samples=(330,)),
        Family(
            "dice", "Sic bo shakers (dice_bias; dice_pairs and dice_triples beside it)",
            (one_period(DICE_BIAS), one_period(DICE_PAIRS)),
            (Strength("a die's 6 at 1/5", 1 / 5, "dice_bias"), Strength("a die's 6 at 1/4", 1 / 4, "dice_bias"),
             Strength("a die's 6 at 1/3", 1 / 3, "dice_bias")),
            (500, 1000, 1550, 3000), "rolls", {"dice_bias": DICE_BIAS.settings["min_rolls"],
                                               "dice_pairs": DICE_PAIRS.settings["min_rolls"],
                                               "dice_triples": DICE_PAIRS.settings["min_rolls_triples"]},
            {"dice_bias": {"min_rolls": 1}, "dice_pairs": {"min_rolls": 1, "min_rolls_triples": 1}},
            simulate_dice, reps=40, clean_reps=100,
            setup="10 shakers (a table each), one with a loaded die: its 6 at 1/5, 1/4 or 1/3 (the other faces "
                  "evenly less)", quick_samples=(1550,)),
        Family(
            "shoe_repeat", "Repeated shoes (shoe_repeat)", (SHOE_REPEAT,),
            (Strength("whole shoe", 416, "shoe_repeat", reps=15), Strength("60-card run", 60, "shoe_repeat", reps=15),
             Strength("30-card run", 30, "shoe_repeat", reps=15), Strength("20-card run", 20, "shoe_repeat", reps=20),
             Strength("10-card run", 10, "shoe_repeat"), Strength("8-card run", 8, "shoe_repeat"),
             Strength("7-card run", 7, "shoe_repeat")),
            (20, 100, 400, 1000), "shoes in the run", {"shoe_repeat": SHOE_REPEAT.settings["min_earlier_shoes"]}, {},
            simulate_repeat, reps=30, clean_reps=30,
            setup="a run of N 8-deck shoes over 20 tables; its last shoe shares a run of k consecutive cards (the "
                  "whole shoe) with a random earlier shoe; every shoe a subject", quick_samples=(100,)),
        Family(
            "weak_shuffle", "Weak shuffles (weak_shuffle per table; weak_shuffle_pair beside it)", (WEAK_SHUFFLE,),
            (Strength("strips of 20", ("strips", 20), "weak_shuffle", reps=20),
             Strength("packs riffled once", ("riffle", 1), "weak_shuffle", reps=20),
             Strength("packs riffled 3x", ("riffle", 3), "weak_shuffle", reps=30),
             Strength("packs riffled 4x", ("riffle", 4), "weak_shuffle"),
             Strength("packs riffled 5x", ("riffle", 5), "weak_shuffle"),
             Strength("packs riffled 6x", ("riffle", 6), "weak_shuffle")),
            (1, 2, 4, 8), "consecutive shoe pairs", {"weak_shuffle": WEAK_SHUFFLE.settings["min_pairs"]}, {},
            simulate_weak, reps=50, clean_reps=100,
            setup="20 tables, N + 1 consecutive 8-deck shoes each; at one table each shoe is the previous one cut "
                  "into 8 packs, each riffled r times (GSR), restacked, or cut into strips of 20 and restacked",
            quick_samples=(2,)),
        Family(
            "card_positions", "Card positions (card_positions)", (CARD_POSITIONS,),
            (Strength("a rank +50% / -50% in two deciles", 0.5, "card_positions"),
             Strength("+75% / -75%", 0.75, "card_positions"), Strength("+100% / -100%", 1.0, "card_positions")),
            (10, 20, positions_min, 50, 70), "shoes a table", {"card_positions": positions_min},
            {"card_positions": {"strength": 3.0}}, simulate_positions, reps=40, clean_reps=40,
            setup="20 tables, N 8-deck shoes each; at one table a random rank is over-represented in one decile "
                  "and as much short in another", quick_samples=(positions_min,)),
        Family(
            "opposite", "Opposite betting (opposite_betting)", (OPPOSITE_BETTING,),
            (Strength("50% hedged", 0.5, "opposite_betting"), Strength("75% hedged", 0.75, "opposite_betting"),
             Strength("100% hedged", 1.0, "opposite_betting")),
            (10, 20, 40, 80), "shared rounds", {"opposite_betting": OPPOSITE_BETTING.settings["min_shared_rounds"]},
            {"opposite_betting": {"min_shared_rounds": 1}}, simulate_opposite, reps=100, clean_reps=100,
            setup="2 baccarat tables x 400 rounds, 40 sessions each of random independent bettors (120 accounts); "
                  "a pair shares N rounds and hedges (opposite sides, matched stakes) a share of them",
            quick_samples=(40,)),
        Family(
            "shared", "Shared rounds (shared_rounds)", (SHARED_ROUNDS,),
            (Strength("75% of rounds shared", 0.75, "shared_rounds"),
             Strength("90% shared", 0.9, "shared_rounds"), Strength("100% shared", 1.0, "shared_rounds")),
            (10, 15, 30, 60), "rounds each in the window",
            {"shared_rounds": SHARED_ROUNDS.settings["min_window_rounds"]},
            {"shared_rounds": {"min_window_rounds": 1}}, simulate_shared, reps=100, clean_reps=100,
            setup="the same floor; a pair inside a window of 2N rounds, each betting N of them, sharing 75/90/100% "
                  "of their rounds (50% by chance)", quick_samples=(30,)),
        Family(
            "dealer_account", "A dealer who overpays one account (dealer_account)", (DEALER_ACCOUNT,),
            (Strength("3 bad rounds", 3, "dealer_account"), Strength("5 bad rounds", 5, "dealer_account"),
             Strength("10 bad rounds", 10, "dealer_account")),
            (100, 300, 1000, 3000), "rounds of the account",
            {"dealer_account": DEALER_ACCOUNT.settings["min_findings"]}, {"dealer_account": {"min_findings": 1}},
            simulate_dealer_account, reps=60, clean_reps=60,
            setup="one table, 4 dealers in turns of 20 rounds, 40 accounts betting every round; honest mistakes "
                  "0.5% OVERPAID and 0.5% UNDERPAID an account-round; one dealer overpays one account k more times",
            quick_samples=(300,), gate_unit="overpaid rounds of the account"),
        Family(
            "dealer_findings", "A dealer's finding rate (dealer_findings)", (DEALER_FINDINGS,),
            (Strength("2x the kind's rate", 2.0, "dealer_findings"), Strength("3x", 3.0, "dealer_findings"),
             Strength("5x", 5.0, "dealer_findings")),
            (150, 300, 600, 1200), "rounds of the dealer",
            {"dealer_findings": DEALER_FINDINGS.settings["min_rounds"]}, {"dealer_findings": {"min_rounds": 1}},
            simulate_dealer_findings, reps=100, clean_reps=100,
            setup="5 tables x 4 dealers (20 dealers) in turns; a finding kind on 1% of rounds, on the planted "
                  "dealer's at 2/3/5x", quick_samples=(300,)),
        Family(
            "dealer_result", "A dealer's house result (dealer_result)", (DEALER_RESULT,),
            (Strength("5% of stakes short", 0.05, "dealer_result"), Strength("10% short", 0.10, "dealer_result"),
             Strength("20% short", 0.20, "dealer_result")),
            (500, 1000, result_min, 4000), "bets of the dealer", {"dealer_result": result_min},
            {"dealer_result": {"min_bets": 1, "min_rounds": 1}}, simulate_dealer_result, reps=50, clean_reps=60,
            setup="5 tables x 4 dealers (20 dealers), even-money bets (RED/BLACK, RTP 36/37) one a spin; the planted "
                  "dealer's bets win more, the house 5/10/20% of stakes short", quick_samples=(result_min,)),
        *filter(None, [_advantage_family()]),
    ]


FAMILIES: dict[str, Family] = {f.name: f for f in _families()}


# ---------------------------------------------------------------------------------------------------
# running


def seed_of(*parts: Any) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([zlib.crc32(str(p).encode()) for p in parts]))


def features_of(detector: Detector, tables: list[TableData]) -> pa.Table:
    """As the pipeline computes them: per table, concatenated."""
    return pa.concat_tables([detector.features(t) for t in tables])


def tests_of(detector: Detector, features: pa.Table, settings: dict[str, Any] | None = None) -> list[SurveillanceTest]:
    """As the pipeline tests: the detector's settings (and `settings` over them), tests, adjust at ALPHA. A screened
    pair detector lists every pair here (screen_p 1: the same flags and q-values at any screen), since the tally
    counts every clean tested subject and the planted pair's p-value wherever it falls."""
    every = {"screen_p": 1.0} if "screen_p" in detector.settings else {}
    return adjust(detector.tests(features, {**detector.settings, **every, **(settings or {})}), ALPHA)


def run_detector(detector: Detector, tables: list[TableData], settings: dict[str, Any] | None = None
                 ) -> list[SurveillanceTest]:
    return tests_of(detector, features_of(detector, tables), settings)


@dataclass
class Tally:
    """Counts over the replications of one cell, per row detector."""

    runs: int = 0
    found: dict[str, int] = field(default_factory=dict)  # runs with a planted subject flagged
    clean_tested: dict[str, int] = field(default_factory=dict)  # clean subjects with a tested row
    clean_flagged: dict[str, int] = field(default_factory=dict)  # clean subjects flagged
    runs_with_flag: dict[str, int] = field(default_factory=dict)  # runs with any clean subject flagged
    planted_p: dict[str, list] = field(default_factory=dict)  # per run, the planted subject's least p (None: untested)
    planted_sample: dict[str, list] = field(default_factory=dict)  # per run, its rows' largest own sample

    def add(self, rows: list[SurveillanceTest], planted: dict[str, set[str]]) -> None:
        for name in sorted({r.detector for r in rows}):
            mine = [r for r in rows if r.detector == name]
            bad = planted.get(name, set())
            found = any(r.flagged and r.subject in bad for r in mine)
            if bad:
                ps = [r.p_value for r in mine if r.subject in bad and r.tested]
                self.planted_p.setdefault(name, []).append(min(ps) if ps else None)
                self.planted_sample.setdefault(name, []).append(max((r.sample for r in mine if r.subject in bad),
                                                                    default=0))
            tested = {r.subject for r in mine if r.tested and r.subject not in bad}
            flagged = {r.subject for r in mine if r.flagged and r.subject not in bad}
            for d, v in ((self.found, found), (self.clean_tested, len(tested)), (self.clean_flagged, len(flagged)),
                         (self.runs_with_flag, bool(flagged))):
                d[name] = d.get(name, 0) + int(v)

    def as_dict(self) -> dict[str, Any]:
        out = {"runs": self.runs, "found": self.found, "clean_tested": self.clean_tested,
               "clean_flagged": self.clean_flagged, "runs_with_flag": self.runs_with_flag}
        if self.planted_p:  # the planted subject's p-value over the runs: median and largest (None: untested)
            out["planted_p"] = {k: {"median": _median(v), "max": _median(v, 1.0), "untested": v.count(None)}
                                for k, v in self.planted_p.items()}
            out["planted_sample"] = {k: float(np.mean(v)) for k, v in self.planted_sample.items()}
        return out


def _median(values: list, q: float = 0.5) -> float | None:
    tested = sorted(v for v in values if v is not None)
    return float(np.quantile(tested, q)) if tested else None


def run_cell(family: Family, strength: Strength | None, sample: int, reps: int) -> dict[str, Any]:
    label = "clean" if strength is None else strength.label  # seeds by label: the grid's order changes nothing
    gated, ungated = Tally(), Tally()
    gate_needed = bool(family.gate_off) and (family.gate_unit is not None
                                             or any(sample < m for m in family.min_sample.values()))
    for r in range(reps):
        rng = seed_of(family.name, label, sample, r)
        sim = family.simulate(rng, None if strength is None else strength.value, sample)
        gated.runs += 1
        ungated.runs += 1
        computed: dict[Callable, pa.Table] = {}  # a features function shared by detectors runs once, as in the pipeline
        for d in family.detectors:
            if d.features not in computed:
                computed[d.features] = features_of(d, sim.tables)
            features = computed[d.features]
            gated.add(tests_of(d, features), sim.planted)
            if gate_needed:
                ungated.add(tests_of(d, features, family.gate_off.get(d.name)), sim.planted)
    out: dict[str, Any] = {"strength": None if strength is None else strength.label, "sample": sample,
                           "row": None if strength is None else strength.row, "gate_needed": gate_needed,
                           "default": gated.as_dict()}
    out["ungated"] = ungated.as_dict() if gate_needed else out["default"]
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def _tasks(family: Family, quick: bool) -> list[tuple]:
    """The family's cells: (family name, strength index or None for a clean cell, sample, reps)."""
    strengths, samples, reps, clean_reps = family.grid(quick)
    out = [(family.name, si, n, reps if quick or s.reps is None else s.reps)
           for si, s in enumerate(strengths) for n in samples]
    return out + [(family.name, None, n, clean_reps) for n in samples]


COST_HINT = {"advantage": 50, "dice": 4, "shoe_repeat": 4}  # the slow families' cells start first


def _run_task(task: tuple) -> tuple[tuple, dict[str, Any], float]:
    name, si, sample, reps = task
    family = FAMILIES[name]
    started = time.process_time()
    cell = run_cell(family, None if si is None else family.strengths[si], sample, reps)
    return task, cell, time.process_time() - started


def run_families(families: list[Family], quick: bool, jobs: int) -> list[dict[str, Any]]:
    """Every cell of every family, on `jobs` processes (each cell seeded on its own: the numbers do not
    depend on `jobs`), the largest cells first."""
    tasks = [t for f in families for t in _tasks(f, quick)]
    tasks.sort(key=lambda t: -t[2] * t[3] * COST_HINT.get(t[0], 1))
    done: dict[tuple, tuple[dict, float]] = {}
    left = {f.name: len(_tasks(f, quick)) for f in families}
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for task, cell, cpu in pool.imap_unordered(_run_task, tasks):
                done[task] = (cell, cpu)
                _progress(task, left)
    else:
        for t in tasks:
            task, cell, cpu = _run_task(t)
            done[task] = (cell, cpu)
            _progress(task, left)
    out = []
    for f in families:
        strengths, samples, reps, clean_reps = f.grid(quick)
        mine = _tasks(f, quick)
        cells = [done[t][0] for t in mine if t[1] is not None]
        clean = [done[t][0] for t in mine if t[1] is None]
        for c in cells:
            row = c["row"]
            for key in ("default", "ungated"):
                t = c[key]
                t["recall"] = t["found"].get(row, 0) / t["runs"] if t["runs"] else None
                t["recall_ci95"] = wilson(t["found"].get(row, 0), t["runs"])
        out.append({"name": f.name, "title": f.title, "setup": f.setup, "unit": f.unit, "gate_unit": f.gate_unit,
                    "other_mins": f.other_mins,
                    "detectors": [d.name for d in f.detectors], "min_sample": f.min_sample,
                    "strengths": [{"label": s.label, "row": s.row, "reps": reps if quick or s.reps is None else s.reps}
                                  for s in strengths],
                    "samples": list(samples), "reps": reps, "clean_reps": clean_reps, "cells": cells, "clean": clean,
                    "cpu_seconds": round(sum(done[t][1] for t in mine), 1)})
    return out


def _progress(task: tuple, left: dict[str, int]) -> None:
    left[task[0]] -= 1
    if left[task[0]] == 0:
        print(f"surveillance power: {task[0]} done", flush=True)


# ---------------------------------------------------------------------------------------------------
# reporting


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _rate(flagged: int, tested: int) -> str:
    return "no test" if tested == 0 else f"{flagged}/{tested:,} ({flagged / tested:.2%})"


def family_markdown(f: dict[str, Any]) -> list[str]:
    samples = f["samples"]
    unit = f.get("gate_unit")
    reps = sorted({s["reps"] for s in f["strengths"]})
    lines = [f"### {f['title']}", "", f"{f['setup']}. R = {'/'.join(map(str, reps))} planted runs a cell, "
             f"{f['clean_reps']} clean runs a sample size ({f['cpu_seconds']:.0f} s of CPU). Min sample: "
             + ", ".join(f"{k} {v:,}" for k, v in f["min_sample"].items()) + (f" {unit}" if unit else "") + ".", ""]
    lines.append(f"| strength \\ {f['unit']} | " + " | ".join(f"{n:,}" for n in samples) + " |")
    lines.append("|---|" + "---:|" * len(samples))
    by = {(c["strength"], c["sample"]): c for c in f["cells"]}
    for s in f["strengths"]:
        cells = []
        for n in samples:
            c = by[(s["label"], n)]
            d, u = c["default"]["recall"], c["ungated"]["recall"]
            below = unit is None and n < f["min_sample"].get(s["row"], 0)
            cells.append(f"- ({_pct(u)})" if below else f"{_pct(d)} ({_pct(u)})" if u != d else _pct(d))
        lines.append(f"| {s['label']} ({s['row']}) | " + " | ".join(cells) + " |" if len(f["detectors"]) > 1
                     or s["row"] != f["detectors"][0] else f"| {s['label']} | " + " | ".join(cells) + " |")
    lines.append("")
    if unit:  # the detector's own sample is not the grid's: what the planted subject had of it
        lines += [f"The planted subject's own sample ({unit}, mean over the runs): " + "; ".join(
            f"{s['label']}: " + ", ".join(f"{by[(s['label'], n)]['default']['planted_sample'][s['row']]:,.1f}"
                                          for n in samples) for s in f["strengths"]) + ".", ""]
    cross = []  # the planted subject flagged by the family's other rows (e.g. wheel_sector on a hot pocket)
    for s in f["strengths"]:
        others = sorted({r for n in samples for r in by[(s["label"], n)]["default"].get("planted_p", {})} - {s["row"]})
        for r in others:
            cells = [_pct(by[(s["label"], n)]["default"]["found"].get(r, 0) / by[(s["label"], n)]["default"]["runs"])
                     for n in samples]
            cross.append(f"| {s['label']} | {r} | " + " | ".join(cells) + " |")
    if cross:
        lines += ["The same plants, flagged by the family's other rows (default settings):", "",
                  f"| strength | flagged by \\ {f['unit']} | " + " | ".join(f"{n:,}" for n in samples) + " |",
                  "|---|---|" + "---:|" * len(samples), *cross, ""]
    rows = sorted({r for c in f["clean"] for r in c["default"]["clean_tested"]}
                  | {r for c in f["clean"] for r in c["default"]["runs_with_flag"]})
    lines.append("False positives (clean subjects flagged / clean subjects tested; clean runs with any flag):")
    lines.append("")
    lines.append(f"| detector | {f['unit']} | clean runs: flagged / tested | clean runs with a flag | "
                 "planted runs: clean subjects flagged / tested | without the gate, clean runs |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        for c in f["clean"]:
            n = c["sample"]
            d, u = c["default"], c["ungated"]
            planted_flag = sum(x["default"]["clean_flagged"].get(r, 0) for x in f["cells"] if x["sample"] == n)
            planted_test = sum(x["default"]["clean_tested"].get(r, 0) for x in f["cells"] if x["sample"] == n)
            below = c.get("gate_needed") and (unit is not None or n < f["min_sample"].get(r, 0))
            ung = _rate(u["clean_flagged"].get(r, 0), u["clean_tested"].get(r, 0)) if below else "(tested anyway)"
            lines.append(f"| {r} | {n:,} | {_rate(d['clean_flagged'].get(r, 0), d['clean_tested'].get(r, 0))} | "
                         f"{d['runs_with_flag'].get(r, 0)}/{d['runs']} | {_rate(planted_flag, planted_test)} | {ung} |")
    lines.append("")
    return lines


def markdown(payload: dict[str, Any]) -> str:
    lines = ["# Surveillance detectors: power and false positives", "",
             f"`{payload['command']}`, {payload['started_at']} - {payload['finished_at']} "
             f"({payload['seconds']:.0f} s, code {payload['code']}). Alpha {payload['alpha']} (Benjamini-Hochberg "
             "over each detector's rows of a run).", "",
             "Recall = share of planted runs in which the planted subject is flagged. `- (x%)`: below the "
             "detector's min_sample it does not test (recall 0); x% is the recall with the minimum lowered to 1 "
             "(also shown beside a recall where the minimum counts another unit than the grid's and changes it).",
             ""]
    for f in payload["families"]:
        lines += family_markdown(f)
    if payload.get("left_out"):
        lines += [f"Left out: {payload['left_out']}", ""]
    return "\n".join(lines)


def plot(payload: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fams = payload["families"]
    panels = []  # (family, row detector, strengths of that row)
    for f in fams:
        for row in dict.fromkeys(s["row"] for s in f["strengths"]):
            panels.append((f, row, [s for s in f["strengths"] if s["row"] == row]))
    cols = 4
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (f, row, strengths) in zip(axes.flat, panels, strict=False):
        by = {(c["strength"], c["sample"]): c for c in f["cells"]}
        xs = f["samples"]
        for i, s in enumerate(strengths):
            color = plt.cm.viridis(i / max(1, len(strengths) - 1) * 0.9)
            ys = [by[(s["label"], n)]["default"]["recall"] for n in xs]
            yu = [by[(s["label"], n)]["ungated"]["recall"] for n in xs]
            ax.plot(xs, ys, "o-", color=color, label=s["label"], lw=1.6, ms=4)
            if yu != ys:
                ax.plot(xs, yu, ":", color=color, lw=1.2)
        m = f["min_sample"].get(row)
        title = row
        if m and f.get("gate_unit"):  # the minimum counts another unit than the axis
            title += f" (min {m:,} {f['gate_unit']})"
        elif m and m > 1:
            mins = {"": m, **f.get("other_mins", {}).get(row, {})}
            for what, x in mins.items():
                ax.axvline(x, color="crimson", ls="--", lw=1)
                ax.text(x, 0.02, f" min {x:,}" + (f" ({what})" if what else ""), color="crimson", fontsize=7,
                        va="bottom")
        ax.set_xscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{n:,}" for n in xs], fontsize=7)
        ax.minorticks_off()
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f["unit"], fontsize=8)
        ax.set_ylabel("recall", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="best")
    fig.suptitle("Surveillance detectors: recall against sample (a line per planted strength; dotted: with the "
                 "minimum sample lowered to 1; red: the detector's min_sample)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    families = list(FAMILIES.values())
    parser = argparse.ArgumentParser(prog="python -m bench.surveillance_power", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny grid: 2 strengths, one sample, 2 runs a cell")
    parser.add_argument("--out", type=Path, default=ROOT / "results", help="where surveillance_power.* go")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="processes (default: 2, the machine's cores; the numbers do not depend on it)")
    parser.add_argument("--only", default="", help="comma-separated families: " + ",".join(f.name for f in families))
    parser.add_argument("--render", type=Path, help="only re-render the .md and .png of this surveillance_power.json")
    args = parser.parse_args(argv)
    if args.render:
        payload = json.loads(args.render.read_text())
        args.render.with_suffix(".md").write_text(markdown(payload) + "\n")
        plot(payload, args.render.with_suffix(".png"))
        return 0
    only = [x for x in args.only.split(",") if x]
    unknown = set(only) - {f.name for f in families}
    if unknown:
        parser.error(f"unknown families {sorted(unknown)}")
    started = time.perf_counter()
    payload: dict[str, Any] = {
        "command": "python -m bench.surveillance_power" + (" --quick" if args.quick else "")
                   + (f" --only {args.only}" if only else ""),
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"), "quick": args.quick, "alpha": ALPHA,
        "code": _code(), "families": []}
    payload["jobs"] = args.jobs
    payload["families"] = run_families([f for f in families if not only or f.name in only], args.quick, args.jobs)
    if "advantage" not in FAMILIES:
        payload["left_out"] = "advantage_play (engine/surveillance/advantage.py is not on this checkout)"
    payload["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    payload["seconds"] = round(time.perf_counter() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "surveillance_power.json").write_text(json.dumps(payload, indent=1) + "\n")
    (args.out / "surveillance_power.md").write_text(markdown(payload) + "\n")
    plot(payload, args.out / "surveillance_power.png")
    print(f"surveillance power: wrote {args.out}/surveillance_power.{{json,md,png}} in {payload['seconds']:.0f} s",
          flush=True)
    return 0


def _code() -> str:
    import subprocess

    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT.parent)
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    raise SystemExit(main())
