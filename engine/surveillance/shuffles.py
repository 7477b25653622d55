"""Surveillance of shuffles (issue 32 § 3): a shoe that repeats an earlier shoe (`shoe_repeat`), a shuffle
that keeps the previous shoe's dealt order (`weak_shuffle`, `weak_shuffle_pair`) and card positions
against uniform (`card_positions`). Three `Detector`s sharing one feature table (a table's shoes with
their cards as card indexes); tests over every table's features of a run. Pure numpy on Arrow.

Card games only: a shoe with no cards (a roulette or sic bo session) is skipped, so the detectors
name no game (`games` ()) and a card game that lands later plugs in. A card that is not a code counts
as one more card kind (index 52), so a damaged shoe is still compared (its SHOE_COMPOSITION is the
audit's finding).

shoe_repeat: the statistic of a shoe S is L, the longest run of consecutive cards S shares with any
earlier shoe of the run (earlier: opened_at, then table_id, shoe_no, shoe_id), at any offsets. Its
p-value bounds P(an independently shuffled S shares a run >= L with one of the earlier shoes):

* Two shoes A (N_A = T a cards: T kinds, a copies each) and B (N_B = T b), independently shuffled.
  A window of k cards at a given offset of A equals the window at a given offset of B with probability
  q_k = sum_w P_A(w) P_B(w) over the k-sequences w; P_A(w) = prod_t (a)_{c_t} / (N_A)_k, where c_t is
  how often kind t occurs in w and (x)_c the falling factorial (the exact probability of a given
  sequence at given positions of a shuffled multiset). Grouping the k!/prod c_t! sequences of one
  count vector, (a)_c (b)_c / c! = C(a, c) (b)_c, so q_k = k! [x^k] g(x)^T / ((N_A)_k (N_B)_k) with
  g(x) = sum_c C(a, c) (b)_c x^c: exact integers (`match_coefficients`).
* A maximal common run of length >= k starts at exactly one left-maximal pair of offsets (i, j): the
  k windows agree and i = 0 or j = 0 or A[i-1] != B[j-1]. Its probability is q_k at the (N_A-k+1) +
  (N_B-k+1) - 1 border pairs and q_k - q_{k+1} at the (N_A-k)(N_B-k) inner ones, so the expected
  number of maximal common runs of length >= k is exactly
      mu_k = (N_A-k+1)(N_B-k+1) q_k - (N_A-k)(N_B-k) q_{k+1}                  (`expected_maximal_runs`)
  and P(L >= k) <= mu_k (Markov: L >= k iff at least one such run). Declumping by left-maximal starts
  is what keeps the bound tight for multi-deck shoes, where equal cards make clumps of short matches;
  the bound is tight wherever it is small (two separate long runs are O(mu_k^2)): tests check it
  against every pair of permutations of tiny decks and against a seeded simulation of 8-deck shoes.
* S is compared with every earlier shoe, so its p-value is min(1, sum over the earlier shoes r of
  mu_L(S, r)): the union bound over the pairs compared (for n earlier shoes of S's composition, n times
  the pair bound). The multiplicity is spent inside the shoe's test because the shoe is the subject (one
  row per shoe, its statistic a maximum over the earlier shoes); Benjamini-Hochberg (`adjust`) then
  controls the false discoveries across the shoes of the run, which a row per pair (n^2 / 2 rows of
  near-certain nulls) would only dilute.

Finding L for every shoe (`longest_earlier_runs`): k-grams of card indexes (base 53) are exact int64
codes for k <= 10. For k = 1, 2, ... each k-gram is grouped with its equals by a stable sort, which
tells whether an earlier shoe holds it; a k-gram survives to k + 1 only if its k-gram group spans two
shoes (a (k+1)-match extends a k-match). Past k = 10 the surviving 10-card seeds are paired within their
group, kept where left-maximal and extended card by card. Cost: O(sum_k C_k log C_k), C_k the k-grams
whose (k-1)-gram occurs in two shoes (every card of the run for k <= 3 in 8-deck shoes, then a few
percent, none past the longest chance run: 6 or 7 passes), plus the length of each common run of 10
or more cards; seed pairs grow with the square of how often one 10-card sequence recurs (a deck reused
m times: m^2 / 2 per position). Measured: a night of 100 8-deck baccarat tables x 18 shoes, 20 6-deck
blackjack tables x 20 and 8 stud tables x 500 decks (6,200 shoes, 1.08M cards) in 0.8 s on one core
(weak_shuffle 0.4 s, card_positions 0.2 s, features 0.13 s).

weak_shuffle: for consecutive shoes P, Q of a table, X counts the positions j of Q whose adjacent pair
(Q[j], Q[j+1]) is an adjacent pair, in the same order, of P as dealt (P[0:cut_index], the whole shoe
where there is no cut card). Each position counts once, so under a fair shuffle of Q's own cards
E[X] = sum over the distinct pairs (x, y) of P of n_x (n_y - [x = y]) / N (n: Q's count of each kind,
N its length), exact. X is a sum of weakly dependent indicators with a variance below its mean
(binomial-like: 52 against 60 for 8 decks), so the Poisson(E[X]) upper tail is a conservative p-value
(tests check the calibration by a seeded simulation). Per table and period, the sum of X against the
sum of the means, Poisson again (each Q is shuffled afresh: given the past, each pair's mean is known).
Rows: `weak_shuffle` per table and period (settings period "day", a pair on its next shoe's business
date, or "run") and `weak_shuffle_pair` per pair, two detector names so that `adjust` holds each level
to its own false-discovery rate. One pair is enough to test (min_sample 1): a single riffle keeps about
half of the 415 pairs of an 8-deck shoe against ~60 by chance, a strip shuffle nearly all of them.

card_positions: over the shoes of a table (or of a ruleset's deck count) and a period, the cards of
each rank counted by decile of the shoe (position * 10 // length) against uniform. Within a shoe both
margins are fixed (the rank counts by the composition, the decile sizes by the length): the table is
multivariate hypergeometric, so Pearson's statistic of independence, scaled by (M - 1) / M (M cards a
shoe: the hypergeometric's exact first moment), is chi-square with (ranks - 1)(deciles - 1) = 108 df.
(Not stats.chi_square: that is goodness of fit with cells - 1 df, too many for a table whose margins
are fixed.) min_sample, in shoes (`positions_min_shoes`, from the settings `strength`, `power` and
`level`): 80% power at p <= 0.0005 against one rank 50% over-represented in one decile and as much
short in another, and every expected cell >= 5: 43 shoes of 8 decks, 58 of 6, 348 stud decks. The
level is what Benjamini-Hochberg at 1% asks of one anomalous table among 20 tested together (its
q = 20 p); at p <= 1% for one table alone 35 shoes of 8 decks were enough (87%), but among 20 tables
they found it 52% of the time (bench/README.md). Rows name the cell furthest from uniform (rank, decile,
count).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import optimize, special
from scipy import stats as sps

from engine.cards import CARD_CODES, RANKS
from engine.surveillance.detector import Detector, TableData
from engine.surveillance.tests import SurveillanceTest, as_test_columns

KINDS = len(CARD_CODES)  # 52 card kinds
UNKNOWN = KINDS  # the index of a string that is not a card code (or a null card)
BASE = KINDS + 1  # k-gram codes in base 53
EXACT_GRAM = 10  # 53**10 < 2**63: a 10-gram is one exact int64
DECILES = 10

FEATURE_SCHEMA = pa.schema([
    ("table_id", pa.string()),
    ("game", pa.string()),
    ("ruleset", pa.string()),
    ("shoe_id", pa.string()),
    ("shoe_no", pa.int32()),
    ("opened_at", pa.timestamp("us", tz="UTC")),
    ("business_date", pa.string()),
    ("decks", pa.int8()),
    ("cut_index", pa.int32()),
    ("cards", pa.list_(pa.int8())),  # CARD_INDEX of each card in shoe order, UNKNOWN for a non-code
])


# ---------------------------------------------------------------------------------------------------
# Features: one table's shoes with cards, as card indexes
# ---------------------------------------------------------------------------------------------------

def _dates_of_days(micros: np.ndarray) -> np.ndarray:
    return np.datetime_as_string(micros.astype("datetime64[us]"), unit="D").astype(object)


def shoe_features(table: TableData) -> pa.Table:
    """The shoes of one table that hold cards: keys, business date, composition, cut and the cards as
    card indexes (FEATURE_SCHEMA). The business date of a shoe is its rounds' earliest, else the UTC
    date it was opened."""
    shoes = table.shoes
    if shoes.num_rows == 0 or "cards" not in shoes.column_names:
        return FEATURE_SCHEMA.empty_table()
    cards = shoes.column("cards")
    lengths = pc.fill_null(pc.list_value_length(cards), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    keep = np.flatnonzero(lengths > 0)
    if keep.size == 0:
        return FEATURE_SCHEMA.empty_table()
    flat = pc.cast(pc.list_flatten(cards), pa.string())
    index = pc.fill_null(pc.index_in(flat, value_set=pa.array(CARD_CODES)), UNKNOWN)
    values = index.to_numpy().astype(np.int8) if index.num_chunks else np.zeros(0, np.int8)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    new_offsets = np.concatenate([[0], np.cumsum(lengths[keep])])
    take = np.arange(new_offsets[-1]) + np.repeat(offsets[keep] - new_offsets[:-1], lengths[keep])
    shoes = shoes.take(pa.array(keep))
    n = shoes.num_rows

    opened = pc.cast(shoes.column("opened_at"), pa.timestamp("us", tz="UTC"))
    micros = pc.cast(opened, pa.int64()).to_numpy(zero_copy_only=False)
    dates = _dates_of_days(micros)
    rounds = table.rounds
    if rounds.num_rows and {"shoe_id", "business_date"} <= set(rounds.column_names):
        firsts = (pa.table({"shoe_id": pc.cast(rounds.column("shoe_id"), pa.string()),
                            "d": pc.cast(rounds.column("business_date"), pa.string())})
                  .group_by("shoe_id").aggregate([("d", "min")]))
        by_shoe = dict(zip(firsts.column("shoe_id").to_pylist(), firsts.column("d_min").to_pylist(), strict=True))
        ids = pc.cast(shoes.column("shoe_id"), pa.string()).to_pylist()
        dates = np.array([by_shoe.get(s) or d for s, d in zip(ids, dates, strict=True)], dtype=object)

    def col(name: str, typ: pa.DataType) -> pa.Array:
        if name in shoes.column_names:
            return pc.cast(shoes.column(name), typ).combine_chunks()
        return pa.nulls(n, typ)

    decks = col("decks", pa.int64()).to_numpy(zero_copy_only=False)
    decks = np.where(np.isnan(decks.astype(float)), 0, decks).astype(np.int64)
    decks = np.where(decks > 0, decks, np.maximum(1, np.rint(lengths[keep] / KINDS))).astype(np.int8)
    info = table.table
    return pa.table({
        "table_id": pa.array([str(info.get("table_id"))] * n, pa.string()),
        "game": pa.array([info.get("game")] * n, pa.string()),
        "ruleset": pa.array([info.get("ruleset")] * n, pa.string()),
        "shoe_id": col("shoe_id", pa.string()),
        "shoe_no": col("shoe_no", pa.int32()),
        "opened_at": opened.combine_chunks(),
        "business_date": pa.array(list(dates), pa.string()),
        "decks": pa.array(decks, pa.int8()),
        "cut_index": col("cut_index", pa.int32()),
        "cards": pa.ListArray.from_arrays(pa.array(new_offsets, pa.int32()), pa.array(values[take], pa.int8())),
    }, schema=FEATURE_SCHEMA)


class _Texts:
    """A text column of the run's shoes read a row at a time: as Python strings, a 30M-bet night's ~150k shoes
    (every casino stud deck is one) held ~100 MB in lists of them. A null reads as `null`."""

    def __init__(self, values: pa.Array, null: str | None = None):
        self.values, self.null = values, null

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> str | None:
        value = self.values[i].as_py()
        return self.null if value is None else value


@dataclass(frozen=True)
class _Shoes:
    """Every shoe of the run in the order of the run (opened_at, table_id, shoe_no, shoe_id)."""

    table_id: _Texts
    ruleset: _Texts  # "" where null
    shoe_id: _Texts
    date: _Texts
    decks: np.ndarray  # int64
    cut: np.ndarray  # int64, -1 where null
    flat: np.ndarray  # int8 card indexes of every shoe, one after the other
    start: np.ndarray  # int64, len n + 1: shoe i is flat[start[i]:start[i + 1]]

    @property
    def n(self) -> int:
        return len(self.shoe_id)

    def cards(self, i: int) -> np.ndarray:
        return self.flat[self.start[i]:self.start[i + 1]]

    def dealt(self, i: int) -> np.ndarray:
        cards = self.cards(i)
        cut = int(self.cut[i])
        return cards[:cut] if 0 < cut <= cards.size else cards


def _shoes(features: pa.Table) -> _Shoes:
    f = features
    table_id = pc.cast(f.column("table_id"), pa.string()).combine_chunks()
    shoe_id = pc.cast(f.column("shoe_id"), pa.string()).combine_chunks()
    opened = pc.cast(pc.cast(f.column("opened_at"), pa.timestamp("us", tz="UTC")), pa.int64())
    # the run's order, nulls as "" / -1 / 0 (a stable sort; strings compared as UTF-8 bytes, which is code points'
    # order, as Python compares them)
    keys = pa.table({"opened": pc.fill_null(opened, 0), "table_id": pc.fill_null(table_id, ""),
                     "shoe_no": pc.fill_null(pc.cast(f.column("shoe_no"), pa.int64()), -1),
                     "shoe_id": pc.fill_null(shoe_id, "")})
    order = pc.sort_indices(keys, [(name, "ascending") for name in keys.column_names])
    del keys
    at = order.to_numpy()
    cards = f.column("cards")
    lengths = pc.fill_null(pc.list_value_length(cards), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    flat, start = _cards_in_order(cards, at, lengths)
    del cards
    ruleset = pc.cast(f.column("ruleset"), pa.string()).combine_chunks()
    date = pc.cast(f.column("business_date"), pa.string()).combine_chunks()
    decks = pc.cast(f.column("decks"), pa.int64()).to_numpy(zero_copy_only=False)
    cut = pc.fill_null(pc.cast(f.column("cut_index"), pa.int64()), -1).to_numpy(zero_copy_only=False)
    return _Shoes(
        table_id=_Texts(table_id.take(order)), ruleset=_Texts(ruleset.take(order), null=""),
        shoe_id=_Texts(shoe_id.take(order)), date=_Texts(date.take(order)),
        decks=np.asarray(decks, np.int64)[at], cut=np.asarray(cut, np.int64)[at], flat=flat, start=start)


GATHER_ROWS = 1024  # shoes whose cards are placed at once (an index a card: ~3 MB for 1,024 eight-deck shoes)
SCAN_CARDS = 1 << 22  # cards compared with a first card at once (a bool a card)


def _cards_in_order(cards: pa.ChunkedArray, at: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The shoes' cards in run order (`at`: the rows in the run's order) as one int8 array, and where each shoe
    starts in it. Each block of GATHER_ROWS rows is placed where its shoes go: the night's cards flattened at once
    and gathered by an index a card held ~10 bytes a card (22.5M cards on a 30M-bet night)."""
    start = np.concatenate([[0], np.cumsum(lengths[at])]).astype(np.int64)
    place = np.empty(at.size, np.int64)  # a row's first card in the run's order
    place[at] = start[:-1]
    flat = np.empty(int(start[-1]), np.int8)
    row = 0
    for chunk in cards.chunks:
        for lo in range(0, len(chunk), GATHER_ROWS):
            hi = min(lo + GATHER_ROWS, len(chunk))
            values = chunk.slice(lo, hi - lo).flatten().to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
            n = lengths[row + lo:row + hi]
            within = np.arange(values.size) - np.repeat(np.cumsum(n) - n, n)
            flat[np.repeat(place[row + lo:row + hi], n) + within] = values
        row += len(chunk)
    return flat, start


def _positions_of(flat: np.ndarray, card: int, index: type) -> np.ndarray:
    """The positions of `card` in `flat`, ascending, scanned SCAN_CARDS at a time (a bool a card of the night at
    once: 22.5 MB at 30M)."""
    parts = [np.flatnonzero(flat[lo:lo + SCAN_CARDS] == card) + lo for lo in range(0, flat.size, SCAN_CARDS)]
    return np.concatenate(parts).astype(index) if parts else np.zeros(0, index)


def _period(dates: Sequence[str]) -> str:
    lo, hi = min(dates), max(dates)
    return lo if lo == hi else f"{lo}..{hi}"


def _p_text(p: float, log10p: float | None = None) -> str:
    if p == 0.0 and log10p is not None:
        return f"p = 10^{log10p:.0f}"
    return f"p = {p:.2g}"


# ---------------------------------------------------------------------------------------------------
# shoe_repeat: the null of the longest common run, and the run of every shoe with its earlier shoes
# ---------------------------------------------------------------------------------------------------

@lru_cache(maxsize=256)
def match_coefficients(a: int, b: int, kinds: int = KINDS) -> tuple[int, ...]:
    """[x^k] (sum_c C(a, c) (b)_c x^c)^kinds for k = 0 .. kinds * min(a, b): the count-vector sum of q_k."""
    g = [math.comb(a, c) * math.perm(b, c) for c in range(min(a, b) + 1)]
    # Kronecker substitution: every coefficient of g^kinds is below g(1)^kinds, so slots of that many
    # bits pack the polynomial into one integer and Python's integer power multiplies it
    bits = (sum(g) ** kinds).bit_length() + 1
    packed = pow(sum(c << (i * bits) for i, c in enumerate(g)), kinds)
    mask = (1 << bits) - 1
    return tuple((packed >> (i * bits)) & mask for i in range(kinds * (len(g) - 1) + 1))


def window_match_probability(k: int, a: int, b: int, kinds: int = KINDS) -> Fraction:
    """q_k: P(k cards at given offsets of a shuffled shoe of `kinds` x `a` cards equal the k cards at given
    offsets of an independently shuffled shoe of `kinds` x `b` cards), exact."""
    coefficients = match_coefficients(a, b, kinds)
    if k >= len(coefficients):
        return Fraction(0)
    return Fraction(math.factorial(k) * coefficients[k], math.perm(kinds * a, k) * math.perm(kinds * b, k))


@lru_cache(maxsize=4096)
def expected_maximal_runs(k: int, a: int, b: int, kinds: int = KINDS) -> Fraction:
    """mu_k: the expected number of maximal common runs of length >= k (k >= 1) of two independently
    shuffled shoes of `kinds` x `a` and `kinds` x `b` cards, exact; P(longest common run >= k) <= mu_k."""
    na, nb = kinds * a, kinds * b
    if k > min(na, nb):
        return Fraction(0)
    return ((na - k + 1) * (nb - k + 1) * window_match_probability(k, a, b, kinds)
            - (na - k) * (nb - k) * window_match_probability(k + 1, a, b, kinds))


def repeat_p_value(run: int, decks: int, earlier_decks: dict[int, int], kinds: int = KINDS) -> tuple[float, float]:
    """(p-value, log10 of it) of a shoe of `decks` decks whose longest run with its earlier shoes is `run`
    cards, against `earlier_decks` (decks -> how many earlier shoes): min(1, sum n * mu_run)."""
    if run <= 0 or not earlier_decks:
        return 1.0, 0.0
    total = sum((n * expected_maximal_runs(run, decks, d, kinds) for d, n in earlier_decks.items()), Fraction(0))
    if total >= 1:
        return 1.0, 0.0
    if total == 0:
        return 0.0, -math.inf
    return float(total), math.log10(total.numerator) - math.log10(total.denominator)


@dataclass(frozen=True)
class EarlierRuns:
    """Per shoe of the run: its longest common run with an earlier shoe and where (-1: none)."""

    length: np.ndarray
    earlier: np.ndarray  # the earlier shoe's index in the run
    at: np.ndarray  # the run's first card in the shoe
    at_earlier: np.ndarray  # and in the earlier shoe


def longest_earlier_runs(flat: np.ndarray, start: np.ndarray) -> EarlierRuns:
    """For every shoe i (flat[start[i]:start[i + 1]], shoes in run order) the longest run of consecutive
    cards it shares with any shoe before it, exact (module docstring: cost). A run's k-grams all begin with its
    first card, so the cards are taken a first card at a time (`_runs_from`), each time ~1/52 of the run's: what a
    pass holds does not grow with the night (every card at once: +349 MB on a 10M-bet night), and each shoe keeps
    the best of the 53 (`_Best`)."""
    n = start.size - 1
    start = np.asarray(start, np.int64)
    index = np.int32 if flat.size + EXACT_GRAM < np.iinfo(np.int32).max else np.int64
    best = _Best(n)
    for kind in range(BASE):  # (a kind no shoe holds: an empty pass. np.bincount would widen the cards to int64)
        _runs_from(flat, start, _positions_of(flat, kind, index), best)
    return best.runs(start)


class _Best:
    """Each shoe's best run so far: k-gram passes (the longest k, then the first position in the shoe) and, past
    EXACT_GRAM, seeds extended (they replace the passes' where a shoe has any: the longest run, then the earliest
    shoe, then the first positions)."""

    def __init__(self, n: int):
        self.length = np.zeros(n, np.int64)
        self.pos = np.full(n, -1, np.int64)  # the run's first card, and the earlier shoe's, as positions of the run
        self.src = np.full(n, -1, np.int64)
        self.seed = np.zeros(n, np.int64)  # a seed's run (0: none), its earlier shoe and positions
        self.seed_earlier = np.full(n, -1, np.int64)
        self.seed_pos = np.full(n, -1, np.int64)
        self.seed_src = np.full(n, -1, np.int64)

    def gram(self, shoes: np.ndarray, k: int, pos: np.ndarray, src: np.ndarray) -> None:
        """Shoes whose first k-gram met in an earlier shoe is at `pos` (the gram's first position `src`)."""
        better = (k > self.length[shoes]) | ((k == self.length[shoes]) & (pos < self.pos[shoes]))
        s = shoes[better]
        self.length[s], self.pos[s], self.src[s] = k, pos[better], src[better]

    def seeds(self, shoes: np.ndarray, run: np.ndarray, earlier: np.ndarray, pos: np.ndarray,
              src: np.ndarray) -> None:
        old = (-self.seed[shoes], self.seed_earlier[shoes], self.seed_pos[shoes], self.seed_src[shoes])
        new = (-run, earlier, pos, src)
        better = self.seed[shoes] == 0
        decided = better.copy()
        for o, v in zip(old, new, strict=True):  # lexicographic: the first key that differs decides
            better |= ~decided & (v < o)
            decided |= v != o
        s = shoes[better]
        self.seed[s], self.seed_earlier[s] = run[better], earlier[better]
        self.seed_pos[s], self.seed_src[s] = pos[better], src[better]

    def runs(self, start: np.ndarray) -> EarlierRuns:
        length, pos, src = self.length.copy(), self.pos.copy(), self.src.copy()
        seeded = self.seed > 0
        length[seeded], pos[seeded], src[seeded] = self.seed[seeded], self.seed_pos[seeded], self.seed_src[seeded]
        found = length > 0
        earlier = np.full(length.size, -1, np.int64)
        earlier[found] = _shoe_of(start, src[found])
        at, at_earlier = np.full(length.size, -1, np.int64), np.full(length.size, -1, np.int64)
        at[found] = pos[found] - start[:-1][found]
        at_earlier[found] = src[found] - start[earlier[found]]
        return EarlierRuns(length, earlier, at, at_earlier)


def _shoe_of(start: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The shoe of each position of the run."""
    return np.searchsorted(start, positions, side="right") - 1


def _runs_from(flat: np.ndarray, start: np.ndarray, cand: np.ndarray, best: _Best) -> None:
    """The k-gram passes over the positions `cand` (ascending, one first card): for k = 1, 2, ... each k-gram
    grouped with its equals by a stable sort tells whether an earlier shoe holds it; a k-gram survives to k + 1
    only if its group spans two shoes (a (k+1)-match extends a k-match); past EXACT_GRAM the surviving seeds are
    extended (`_extend_seeds`)."""
    index = cand.dtype.type
    code = flat[cand].astype(np.int64)
    for k in range(1, EXACT_GRAM + 1):
        if k > 1:
            ok = cand + (k - 1) < start[_shoe_of(start, cand) + 1]
            cand = cand[ok]
            code = code[ok] * BASE + flat[cand + (k - 1)]
            del ok
        if cand.size == 0:
            return
        order = np.argsort(code, kind="stable")
        sc = code[order]
        first = np.r_[True, sc[1:] != sc[:-1]]
        del sc
        sp = cand[order]
        ss = _shoe_of(start, sp).astype(index)
        gid = np.cumsum(first, dtype=index) - 1
        gstart = np.flatnonzero(first)
        del first
        gend = np.r_[gstart[1:], sp.size]
        source = sp[gstart][gid]  # the gram's first position: in its earliest shoe
        matched = ss[gstart][gid] < ss
        if not matched.any():
            return
        # the first matched position of each shoe names its run, with the gram's earliest shoe
        pos, src, shoes = sp[matched], source[matched], ss[matched]
        by = np.argsort(pos, kind="stable")
        pos, src, shoes = pos[by], src[by], shoes[by]
        head = np.r_[True, shoes[1:] != shoes[:-1]]
        best.gram(shoes[head].astype(np.int64), k, pos[head].astype(np.int64), src[head].astype(np.int64))
        del source, matched, pos, src, shoes, by, head
        multi = (ss[gend - 1] > ss[gstart])[gid]
        if k == EXACT_GRAM:
            _extend_seeds(flat, start, (sp[multi], ss[multi], gid[multi]), best)
            return
        del sp, ss, gid
        keep = np.empty(multi.size, bool)
        keep[order] = multi
        del order, multi
        cand, code = cand[keep], code[keep]
        del keep


def _extend_seeds(flat: np.ndarray, start: np.ndarray, seeds: tuple[np.ndarray, np.ndarray, np.ndarray],
                  best: _Best) -> None:
    """Every pair of equal 10-card seeds in two shoes, the earlier first: kept where left-maximal,
    extended card by card; each shoe keeps its longest (ties: the earliest shoe, then positions)."""
    sp, ss, gid = (np.asarray(v, np.int64) for v in seeds)
    # the kept seeds are grouped (sorted by code, then position): pair each with those before it
    first = np.r_[True, gid[1:] != gid[:-1]]
    group_start = np.flatnonzero(first)[np.cumsum(first) - 1]
    rank = np.arange(sp.size) - group_start
    later = np.repeat(np.arange(sp.size), rank)
    before = group_start[later] + np.arange(later.size) - np.repeat(np.cumsum(rank) - rank, rank)
    a, b = sp[before], sp[later]  # a in the earlier shoe, b in the later
    keep = ss[before] < ss[later]
    a, b = a[keep], b[keep]
    shoe_a, shoe_b = _shoe_of(start, a), _shoe_of(start, b)
    left = (a == start[shoe_a]) | (b == start[shoe_b])
    left |= flat[np.maximum(a - 1, 0)] != flat[np.maximum(b - 1, 0)]
    a, b, shoe_a, shoe_b = a[left], b[left], shoe_a[left], shoe_b[left]
    if a.size == 0:  # (the runs' left-maximal starts begin with another card: that card's pass extends them)
        return
    end_a, end_b = start[shoe_a + 1], start[shoe_b + 1]
    run = np.full(a.size, EXACT_GRAM, np.int64)
    active = np.arange(a.size)
    last = flat.size - 1
    while active.size:
        na, nb = a[active] + run[active], b[active] + run[active]
        go = (na < end_a[active]) & (nb < end_b[active])
        go &= flat[np.minimum(na, last)] == flat[np.minimum(nb, last)]
        active = active[go]
        run[active] += 1
    order = np.lexsort((a, b, shoe_a, -run, shoe_b))
    order = order[np.r_[True, shoe_b[order][1:] != shoe_b[order][:-1]]]
    best.seeds(shoe_b[order], run[order], shoe_a[order], b[order], a[order])


REPEAT_ROWS = 8192  # shoe_repeat's tests a part (a row per shoe of the night)


def shoe_repeat_tests(features: pa.Table, settings: dict[str, Any]) -> Iterator[pa.Table]:
    """One row per shoe: its longest common run with any earlier shoe of the run (every table). As TEST_COLUMNS
    tables of REPEAT_ROWS rows, each made as SurveillanceTest objects: a 30M-bet night has ~190k shoes (every casino
    stud deck is one), ~87 MB of rows, which the pipeline spills a part at a time."""
    shoes = _shoes(features)
    if shoes.n == 0:
        return
    runs = longest_earlier_runs(shoes.flat, shoes.start)
    min_sample = int(settings.get("min_earlier_shoes", 1))
    seen: dict[int, int] = defaultdict(int)
    out: list[SurveillanceTest] = []
    for i in range(shoes.n):
        if len(out) == REPEAT_ROWS:
            yield as_test_columns(out)
            out = []
        size = int(shoes.start[i + 1] - shoes.start[i])
        decks, sample = int(shoes.decks[i]), sum(seen.values())
        name, table, date = shoes.shoe_id[i], shoes.table_id[i], shoes.date[i]
        if sample < min_sample:
            out.append(SurveillanceTest(
                "shoe_repeat", name, date, "longest common run = n/a", None, None,
                "not tested", sample, min_sample,
                detail=f"shoe {name} ({table}, {date}): no earlier shoe in the run to compare with "
                       f"(needs {min_sample}: a repeat needs an earlier shoe)"))
            seen[decks] += 1
            continue
        run = int(runs.length[i])
        p, log10p = repeat_p_value(run, decks, dict(seen))
        j = int(runs.earlier[i])
        other = (f"{shoes.shoe_id[j]} ({shoes.table_id[j]}, {shoes.date[j]})" if j >= 0 else "no earlier shoe")
        if j >= 0 and run == size == shoes.start[j + 1] - shoes.start[j]:
            detail = f"shoe {name} ({table}) repeats {run} of {size} cards of {other}"
        elif j >= 0:
            x, y = int(runs.at[i]), int(runs.at_earlier[i])
            detail = (f"shoe {name} ({table}, {date}) shares {run} consecutive cards (its cards {x + 1}-{x + run}) "
                      f"with {other} (cards {y + 1}-{y + run})")
        else:
            detail = f"shoe {name} ({table}, {date}) shares no card with an earlier shoe"
        out.append(SurveillanceTest(
            "shoe_repeat", name, date, f"longest common run = {run} of {size} cards", float(run), p,
            f"exact expected maximal common runs >= {run} of two shuffles of the compositions, union bound "
            f"over {sample} earlier shoes (upper bound)", sample, min_sample,
            effect=run / size, detail=f"{detail}; {_p_text(p, log10p)}"))
        seen[decks] += 1
    yield as_test_columns(out)


# ---------------------------------------------------------------------------------------------------
# weak_shuffle: the previous shoe's dealt adjacent pairs kept in the next shoe
# ---------------------------------------------------------------------------------------------------

def kept_pairs(dealt: np.ndarray, nxt: np.ndarray) -> tuple[int, float, int]:
    """(X, E[X] under a fair shuffle of `nxt`, distinct pairs of `dealt`): X counts the positions j of
    `nxt` whose (nxt[j], nxt[j + 1]) is an adjacent pair, in that order, of `dealt` (module docstring)."""
    dealt = np.asarray(dealt, np.int64)
    nxt = np.asarray(nxt, np.int64)
    present = np.zeros(BASE * BASE, bool)
    if dealt.size > 1:
        present[dealt[:-1] * BASE + dealt[1:]] = True
    pairs = np.flatnonzero(present)
    if nxt.size < 2 or pairs.size == 0:
        return 0, 0.0, int(pairs.size)
    x = int(present[nxt[:-1] * BASE + nxt[1:]].sum())
    counts = np.bincount(nxt, minlength=BASE)
    first, second = pairs // BASE, pairs % BASE
    mean = float((counts[first] * (counts[second] - (first == second))).sum()) / nxt.size
    return x, mean, int(pairs.size)


def _poisson_upper(x: int, mean: float) -> float:
    if x <= 0:
        return 1.0
    return float(special.pdtrc(x - 1, mean)) if mean > 0 else 0.0  # P(Poisson(mean) > x - 1)


def weak_shuffle_tests(features: pa.Table, settings: dict[str, Any]) -> Iterator[pa.Table]:
    """Per pair of consecutive shoes of a table (`weak_shuffle_pair`) and per table and period
    (`weak_shuffle`, period "day" or "run"): adjacent pairs of the previous shoe's dealt order kept. As TEST_COLUMNS
    tables, the pairs' REPEAT_ROWS a part and then the tables' (a 30M-bet night has ~189k pairs: as objects all at
    once they were the surveillance's peak, +1.6M Python objects)."""
    shoes = _shoes(features)
    by_table: dict[str, list[int]] = defaultdict(list)
    for i in range(shoes.n):
        by_table[shoes.table_id[i]].append(i)
    per_day = settings.get("period", "day") == "day"
    min_pairs = int(settings.get("min_pairs", 1))
    pair_rows, table_rows = [], []
    for table in sorted(by_table):
        groups: dict[str, list[tuple[int, int, int, float, int]]] = defaultdict(list)
        idx = by_table[table]
        for prev, nxt in zip(idx[:-1], idx[1:], strict=True):
            x, mean, distinct = kept_pairs(shoes.dealt(prev), shoes.cards(nxt))
            dealt_pairs = max(shoes.dealt(prev).size - 1, 1)
            p = _poisson_upper(x, mean)
            a, b, date = shoes.shoe_id[prev], shoes.shoe_id[nxt], shoes.date[nxt]
            if len(pair_rows) == REPEAT_ROWS:
                yield as_test_columns(pair_rows)
                pair_rows = []
            pair_rows.append(SurveillanceTest(
                "weak_shuffle_pair", f"{a}>{b}", date, f"kept adjacent pairs = {x} ({mean:.1f} expected)",
                float(x), p, "Poisson upper tail, exact mean for the next shoe's composition (conservative)",
                1, min_pairs, effect=(x - mean) / dealt_pairs,
                detail=f"shoe {b} ({table}, {date}) keeps {x} adjacent pairs of {a}'s dealt order "
                       f"({mean:.1f} expected from a fair shuffle); {_p_text(p)}"))
            groups[date if per_day else ""].append((prev, nxt, x, mean, dealt_pairs))
        for key in sorted(groups):
            rows = groups[key]
            dates = [shoes.date[j] for r in rows for j in r[:2]] if not per_day else [key]
            x = sum(r[2] for r in rows)
            mean = sum(r[3] for r in rows)
            worst = max(rows, key=lambda r: (r[2] - r[3], -r[1]))
            p = _poisson_upper(x, mean) if len(rows) >= min_pairs else None
            period = _period(dates)
            detail = (f"table {table} ({period}): {len(rows)} consecutive shoe pairs keep {x} adjacent pairs of "
                      f"the previous shoe's dealt order against {mean:.1f} expected; most: "
                      f"{shoes.shoe_id[worst[0]]}>{shoes.shoe_id[worst[1]]} ({worst[2]} against {worst[3]:.1f})")
            table_rows.append(SurveillanceTest(
                "weak_shuffle", table, period, f"kept adjacent pairs = {x} ({mean:.1f} expected)", float(x), p,
                "Poisson upper tail, exact mean for each next shoe's composition (conservative)",
                len(rows), min_pairs, effect=(x - mean) / sum(r[4] for r in rows),
                detail=detail + (f"; {_p_text(p)}" if p is not None else "")))
    if pair_rows:
        yield as_test_columns(pair_rows)
    yield as_test_columns(table_rows)


# ---------------------------------------------------------------------------------------------------
# card_positions: ranks by decile of the shoe against uniform
# ---------------------------------------------------------------------------------------------------

def position_counts(cards: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, int]:
    """(observed, expected, smallest shoe) rank x decile tables (13 x 10) over shoes of card indexes:
    a card at position j of a shoe of M cards is in decile j * 10 // M; expected from each shoe's own
    rank counts and decile sizes (the fixed margins). Cards that are not codes are left out."""
    observed = np.zeros((len(RANKS), DECILES))
    expected = np.zeros((len(RANKS), DECILES))
    smallest = 0
    for shoe in cards:
        shoe = np.asarray(shoe, np.int64)
        m = shoe.size
        if m == 0:
            continue
        smallest = m if smallest == 0 else min(smallest, m)
        bucket = np.arange(m) * DECILES // m
        ok = shoe < KINDS
        rank = shoe[ok] // 4
        table = np.bincount(rank * DECILES + bucket[ok], minlength=len(RANKS) * DECILES)
        observed += table.reshape(len(RANKS), DECILES)
        expected += np.outer(np.bincount(rank, minlength=len(RANKS)), np.bincount(bucket, minlength=DECILES)) / m
    return observed, expected, smallest


def position_chi_square(observed: np.ndarray, expected: np.ndarray, cards_per_shoe: int) -> tuple[float, float, int]:
    """(statistic, p-value, df): Pearson's sum (O - E)^2 / E scaled by (M - 1) / M, chi-square with
    (rows - 1)(columns - 1) df over the rows and columns that hold cards."""
    rows, cols = expected.sum(axis=1) > 0, expected.sum(axis=0) > 0
    o, e = observed[rows][:, cols], expected[rows][:, cols]
    df = (o.shape[0] - 1) * (o.shape[1] - 1)
    if df <= 0:
        return 0.0, 1.0, 0
    stat = float(((o - e) ** 2 / e).sum()) * (cards_per_shoe - 1) / cards_per_shoe
    return stat, float(sps.chi2.sf(stat, df)), df


@lru_cache(maxsize=64)
def positions_min_shoes(decks: int, strength: float = 0.5, power: float = 0.8, level: float = 0.0005) -> int:
    """Shoes of `decks` decks the rank x decile test needs: `power` at p <= `level` against one rank
    over-represented by `strength` in one decile and as much short in another, and every expected cell >= 5.

    Noncentrality a shoe: the plant moves d = strength x e_s cards of the rank from its short decile s to
    its long decile l (e_j = 4 decks x |decile j| / M, the rank's expected cards in decile j, M = 52 decks
    cards), and the other ranks (R - 1 = 12 of them) take their place, d / 12 each: d^2 (1 / e_l + 1 / e_s)
    (1 + 1 / (R - 1)), averaged over the ordered pairs of deciles (they differ by a card in size), times
    (M - 1) / M as the statistic is scaled. Shoes add their noncentralities (the same rank and deciles
    every shoe), so the minimum is the noncentrality the chi-square (108 df) needs for `power` at `level`
    over that of a shoe."""
    ranks = len(RANKS)
    df = (ranks - 1) * (DECILES - 1)
    critical = sps.chi2.isf(level, df)
    needed = optimize.brentq(lambda lam: sps.ncx2.sf(critical, df, lam) - power, 1e-6, 1e5)
    cards = KINDS * decks
    e = 4 * decks * np.bincount(np.arange(cards) * DECILES // cards, minlength=DECILES) / cards
    short, long = np.meshgrid(e, e, indexing="ij")
    pairs = ~np.eye(DECILES, dtype=bool)
    moved = strength * short[pairs]
    per_shoe = float(np.mean(moved ** 2 * (1 / long[pairs] + 1 / short[pairs])))
    per_shoe *= ranks / (ranks - 1) * (cards - 1) / cards
    for_power = math.ceil(needed / per_shoe)
    smallest_decile = cards // DECILES
    for_cells = math.ceil(5 / (4 * decks * smallest_decile / cards))
    return max(for_power, for_cells)


def card_positions_tests(features: pa.Table, settings: dict[str, Any]) -> list[SurveillanceTest]:
    """Per table (group_by "table") or ruleset and deck count ("ruleset"), and period ("run" or "day"):
    cards of each rank by decile of the shoe, chi-square against uniform."""
    shoes = _shoes(features)
    by_ruleset = settings.get("group_by", "table") == "ruleset"
    per_day = settings.get("period", "run") == "day"
    strength = float(settings.get("strength", 0.5))
    power, level = float(settings.get("power", 0.8)), float(settings.get("level", 0.0005))
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i in range(shoes.n):
        subject = f"{shoes.ruleset[i]}/{shoes.decks[i]} decks" if by_ruleset else shoes.table_id[i]
        groups[(subject, shoes.date[i] if per_day else "")].append(i)
    out = []
    for subject, day in sorted(groups):
        idx = groups[(subject, day)]
        period = day or _period([shoes.date[i] for i in idx])
        decks = int(min(shoes.decks[i] for i in idx))
        min_sample = positions_min_shoes(decks, strength, power, level)
        observed, expected, smallest = position_counts([shoes.cards(i) for i in idx])
        reason = (f"{min_sample} shoes of {decks} decks: {power:.0%} power at p <= {level:g} against one rank "
                  f"{strength:.0%} over-represented in one decile, every expected cell >= 5")
        if len(idx) < min_sample:
            out.append(SurveillanceTest(
                "card_positions", subject, period, "chi2 = n/a", None, None, "not tested", len(idx), min_sample,
                detail=f"{subject} ({period}): {len(idx)} shoes, below the {reason}"))
            continue
        stat, p, df = position_chi_square(observed, expected, smallest)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(expected > 0, (observed - expected) / np.sqrt(expected), 0.0)
        r, c = np.unravel_index(int(np.argmax(np.abs(z))), z.shape)
        excess = float(observed[r, c] / expected[r, c] - 1)
        out.append(SurveillanceTest(
            "card_positions", subject, period, f"chi2 = {stat:.1f} ({df} df)", stat, p,
            f"chi-square, {df} df (rank x decile, hypergeometric scale (M-1)/M)", len(idx), min_sample,
            effect=excess,
            detail=(f"{subject} ({period}), {len(idx)} shoes: rank {RANKS[r]} is {excess:+.0%} in decile {c + 1} "
                    f"of the shoe ({observed[r, c]:.0f} cards against {expected[r, c]:.1f} expected); "
                    f"{_p_text(p)}")))
    return out


# ---------------------------------------------------------------------------------------------------
# The detectors
# ---------------------------------------------------------------------------------------------------

SHOE_REPEAT = Detector("shoe_repeat", "SHOE_REPEATED", (), shoe_features, shoe_repeat_tests,
                       {"min_earlier_shoes": 1})
WEAK_SHUFFLE = Detector("weak_shuffle", "WEAK_SHUFFLE", (), shoe_features, weak_shuffle_tests,
                        {"period": "day", "min_pairs": 1})
CARD_POSITIONS = Detector("card_positions", "CARD_POSITION_BIAS", (), shoe_features, card_positions_tests,
                          # the minimum's design: a rank +-50% in two deciles, found with 80% power at p <= 0.0005
                          # (Benjamini-Hochberg at 1%, one table among 20)
                          {"group_by": "table", "period": "run", "strength": 0.5, "power": 0.8, "level": 0.0005})
DETECTORS = (SHOE_REPEAT, WEAK_SHUFFLE, CARD_POSITIONS)
