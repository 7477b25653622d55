"""Collusion (issue 32 § 2): accounts that bet opposite sides of the same rounds with matched stakes,
and accounts that bet the same rounds far more often than chance says. Two detectors of the shape of
docs/surveillance.md (features per table, tests over every table's features); pure numpy / Arrow /
scipy.sparse, no loop in Python over rounds, bets or account pairs in the features.

Both test every pair of accounts that shared a round (~1.3M on a 1M-bet floor) and list, as TEST_COLUMNS, only the
pairs with p at or below `screen_p` (SCREEN_P_REASON) with a summary row per table counting the rest, which still
count in the m of Benjamini-Hochberg (engine/surveillance/tests.py `adjust`: the flags are exact).

`opposite_betting` — which bets are opposite is each game's knowledge (`Game.opposite_bets`:
baccarat PLAYER/BANKER, roulette RED/BLACK, ODD/EVEN, LOW/HIGH, sic bo SMALL/BIG, ODD/EVEN).

* A *position* is an account's net stake on one opposite pair in one settled round: its stake on the
  first code less its stake on the second (an account on both sides of a pair holds the difference;
  exactly even holds nothing). Cancelled rounds are refunded and ignored. A round counts once per
  opposite pair both accounts hold a position on (a roulette round where both bet RED/BLACK and
  ODD/EVEN counts twice); on baccarat that is the round.
* Two positions of one round are *opposite-matched* when they are on opposite sides and their stakes
  differ by at most `tolerance` (10%) of the larger (exact integer arithmetic on minor units).
* Null model (independence): each account's positions are draws from its own frequencies of
  (side, stake) on that pair at that table, independent of the other account. For a pair of
  accounts sharing a round, the chance it is opposite-matched is
  p = sum over (a, b) of f_A(a) f_B(b) [a, b opposite-matched], exact over their positions (plug-in
  frequencies, which include the shared rounds themselves: conservative). Over the pair's n shared
  rounds the count X of opposite-matched rounds is Poisson-binomial (one p per table and opposite
  pair); the test is the exact binomial tail P(X >= x) at the mean chance p_bar, which Hoeffding (1956,
  theorem 4) proves is at least the Poisson-binomial tail for x >= n p_bar + 1 (conservative where it
  matters; on clean synthetic nights 0.2% of tested pairs fall below p = 0.01).
  Tested per (pair, currency) over every table both play.
* Money: the matched stake (sum over opposite-matched rounds of the smaller stake, what each side
  put up) and the net transfer between them (per round, what the winner won that the loser lost:
  min(win, loss); the house keeps the commission, and a zero or a triple takes both).

`shared_rounds` — per (pair, table, business day), the rounds both bet on (any bet), inside the window where both
were playing that day: from the later of their first rounds to the earlier of their last rounds, both ends
excluded (the ends are rounds one of them bet on by construction). A round's day is its business_date, the UTC
date its betting opened. One test per (pair, table): the days' counts summed, against the convolution of the days'
conditional hypergeometrics (below), exact; one day alone is that day's hypergeometric tail. Null model: inside
that window each account's rounds are a random subset of the table's rounds (its activity kept: how many rounds it
bet), so the rounds shared are hypergeometric. Sessions that merely overlap are not evidence (two accounts that
bet every round of overlapping sessions share everything their window holds by necessity, p = 1); accounts that
pick the same rounds inside it are. Only pairs sharing at least one round of their window are enumerated (every
other pair of a night would be millions of rows), so the p-value is conditional on that selection: P(S >= s | S >=
1), exact. `groups` joins flagged pairs into groups (connected components). Limit: two accounts that each leave
the table for a while at the same time inside their window (two sessions each) look alike to this null.
Busy rounds: rounds are not alike, some draw a crowd, and two accounts that each favour the busy ones meet
there more often than a random subset says (the chance two given accounts both bet a round grows with the
square of how busy it is). So the window is counted as rounds of an even crowd: with d a round's accounts
other than the pair, (sum d)^2 / sum d (d - 1) over the window (the window itself when no round holds two
others, and never more; a constant crowd, or accounts arriving independently as a Poisson stream, leave it
at the window). The hypergeometric over that many rounds has the mean of a null where each account's
chance of a round is in proportion to its crowd. Measured on simulated floors whose crowd per round is
negative binomial (shape 5, ~3 accounts a round: the recorder's), the plain window gave 2.2 times the
nominal rate of p < 1e-4 among 100,000 pairs and flagged pool accounts of `pitboss demo --surveillance`;
the even-crowd window gives 0.4 times (a fair crowd: 0.4 either way, discreteness).
Stages of the shoe: accounts that both play the end of the shoe share its last rounds more than random subsets of
the window do. Where the table records shoes, the window is also counted as rounds of the stages both played
(SHOE_STAGES tenths of a shoe's rounds, a_k, b_k, w_k each one's and the window's rounds in stage k): a b / sum
a_k b_k / w_k rounds, the hypergeometric with the stratified null's mean; the smaller of it and the even crowd's.
Days: each day's count S_d given S_d >= 1 (the pair is enumerated on that day because it shared a round), the days
independent; the sum of the S_d is the exact conditional test of a common odds ratio over the days' 2 x 2 tables
(docs/surveillance.md § shared_rounds over several days).

Complexity per table of B bets, R rounds, P positions (bets on opposite codes, netted), with m_r the
positions of round r: sorting O(B log B); the co-occurrence of accounts by a sparse product
(scipy.sparse, C++) O(sum m_r^2); the opposite-matched rounds by a sorted-window join of each side
against the other side's positions of the same round (stakes sorted, `searchsorted` on the tolerance
window) O(P log P + matches); the null chance of every co-occurring pair from per-account (side, stake)
histograms, expanding the account with fewer distinct values, O(sum over pairs of min(d_A, d_B) log).
Tests: O(F log F) over F feature rows, the tails by scipy on arrays; a row (TEST_COLUMNS) only for each pair at
or below the screen (`screen_p`, SCREEN_P_REASON) and one summary row a table counting the others.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import sparse
from scipy.special import gammaln

from engine.findings import format_money
from engine.games import game as game_of
from engine.games import game_names
from engine.surveillance.detector import Detector, TableData
from engine.surveillance.stats import binomial_upper_tail, hypergeometric_upper_tail
from engine.surveillance.tests import ALPHA, TEST_COLUMNS, SurveillanceTest

TOLERANCE = Fraction(1, 10)  # matched stakes differ by at most this share of the larger

MIN_SHARED_ROUNDS = 20
MIN_SHARED_ROUNDS_REASON = (
    "a pair is tested from 20 shared rounds: the chance of each round comes from each account's own "
    "frequencies of side and stake, which need rounds to mean anything, and at 20 a perfect hedge at a "
    "chance of 1/2 a round (p = 2^-20 = 9.5e-7) or 16 of 20 at a chance of 1/4 (p = 3.8e-7) passes "
    "Benjamini-Hochberg at 1% across 10^4 tested pairs"
)
SCREEN_P = 0.05
SCREEN_P_REASON = (
    "a pair detector lists only the pairs with p at or below its screen (never below the run's alpha), and a summary "
    "row per table counts the others: a 1M-bet floor has ~1.3M pairs that shared a round, a 10M one 10-18M, and a row "
    "each does not fit in memory; every pair still counts in the m of Benjamini-Hochberg, and a flag needs q <= "
    "alpha, so p <= alpha: no pair that could be flagged is left out, and the q-values at or below the screen are "
    "exact (engine/surveillance/tests.py adjust)"
)
MIN_WINDOW_ROUNDS = 15
PMF_CHUNK = 1 << 18  # pmf terms of the multi-day pairs computed at once (shared_rounds_p_values): ~120 bytes of
# temporaries a term (1 << 21: a busy 1M-bet table's tests raised the peak by 243 MB, 1 << 18 by 55)
SHOE_STAGES = 10  # a shoe's rounds in tenths: accounts that play its end (or its start) are alike, not colluding
MIN_WINDOW_ROUNDS_REASON = (
    "a pair is tested when each account bet at least 15 rounds inside the window where both played: "
    "two accounts betting the same 15 of 30 rounds (each at an activity of 1/2) reach p = 1/C(30,15) "
    "= 6.5e-9, enough to pass Benjamini-Hochberg at 1% across 10^5 tested pairs; on fewer rounds even "
    "a perfect overlap cannot"
)

OPPOSITE_SCHEMA = pa.schema([
    ("table_id", pa.string()), ("currency", pa.string()),
    ("account_a", pa.string()), ("account_b", pa.string()),  # account_a < account_b
    ("shared", pa.int64()),  # rounds (x opposite pairs) both held a position on
    ("matched", pa.int64()),  # of them, opposite-matched
    ("expected", pa.float64()),  # sum of the null chances of the shared rounds
    ("matched_stake", pa.int64()),  # sum of the smaller stake of the opposite-matched rounds, minor units
    ("transfer", pa.int64()),  # net won by account_a from account_b on those rounds, minor units
    ("tolerance", pa.float64()),
    ("first_date", pa.date32()), ("last_date", pa.date32()),  # of the matched rounds (else the table's)
])

SHARED_SCHEMA = pa.schema([
    ("table_id", pa.string()), ("currency", pa.string()),
    ("account_a", pa.string()), ("account_b", pa.string()),
    ("shared", pa.int64()),  # every round both bet on
    ("window", pa.int64()),  # rounds strictly between the later first and the earlier last round
    ("rounds_a", pa.int64()), ("rounds_b", pa.int64()),  # each account's rounds inside the window
    ("shared_window", pa.int64()),  # rounds both bet on inside the window
    ("window_effective", pa.int64()),  # the window as rounds of an even crowd and of the pair's stages of the shoe
    # (<= window; shared_rounds docs)
    ("window_stages", pa.int64()),  # the window as rounds of the pair's stages of the shoe alone (the window where
    # the table records no shoe)
    ("stake_a", pa.int64()), ("stake_b", pa.int64()),  # each account's stake on the shared rounds
    ("first_date", pa.date32()), ("last_date", pa.date32()),  # the window's ends
])


# ---------------------------------------------------------------------------------------------------
# common: codes, rounds, dates


def _codes(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Integer codes of a string column, in the lexical order of its values, and the sorted values."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    enc = arr.dictionary_encode() if not pa.types.is_dictionary(arr.type) else arr
    values = enc.dictionary
    order = pc.sort_indices(values).to_numpy()
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)], values.take(pa.array(order))


def _row_keys(columns: Sequence[pa.ChunkedArray | pa.Array]) -> np.ndarray:
    """Each row's values of `columns` as one int64, in their lexical order column by column: the columns' codes
    (`_codes`) in mixed radix. (Not the values joined into one string and coded: a string a row and a dictionary of
    every distinct one took ~300 MB for the 1.6M opposite pairs' rows of a 3M-bet night.)"""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        codes, values = _codes(column)
        key = key * max(len(values), 1) + codes
    return key


def _np(column) -> np.ndarray:
    return (column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column).to_numpy(zero_copy_only=False)


def _values_at(column: pa.ChunkedArray | pa.Array, rows: np.ndarray) -> list:
    """column[rows] as Python values, only those rows made objects: a string column as a numpy array is a Python
    string a row (~400 MB for the 3.4M opposite pairs' rows of a 3M-bet night, where a few hundred are listed)."""
    return column.take(pa.array(rows, pa.int64())).to_pylist()


def _round_index(table: TableData) -> np.ndarray:
    """Each bet's row in `table.rounds` (-1 where the round is not recorded)."""
    idx = pc.index_in(table.bets["round_id"], value_set=table.rounds["round_id"].combine_chunks())
    return _np(pc.fill_null(idx, -1)).astype(np.int64)


def _round_days(rounds: pa.Table) -> np.ndarray:
    """Each round's business date as days since 1970 (the UTC date betting opened where not recorded)."""
    if "business_date" in rounds.column_names:
        col = rounds["business_date"]
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = pc.cast(col, pa.date32())
        return _np(pc.cast(col, pa.date32())).astype("datetime64[D]").astype(np.int64)
    for name in ("betting_opened_at", "betting_closed_at"):
        if name in rounds.column_names:
            return _np(rounds[name]).astype("datetime64[D]").astype(np.int64)
    return np.zeros(rounds.num_rows, dtype=np.int64)


def _groups(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, starts, unique keys): `keys[order]` sorted, `starts` the first index of each run."""
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]]) if ks.size else np.zeros(0, dtype=np.int64)
    return order, starts, ks[starts]


def _expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs of the given lengths: (run index, offset within its run) of every element."""
    total = int(counts.sum())
    run = np.repeat(np.arange(counts.size), counts)
    offset = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return run, offset


def _cooccurrence(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int,
                  weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (i < j) of rows (accounts) sharing columns (rounds) and how many: the upper triangle of
    M M^T for the 0/1 incidence M, by scipy's sparse product."""
    m = sparse.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)), shape=(n_rows, n_cols))
    c = sparse.triu(m @ m.T, k=1).tocoo()
    return c.row.astype(np.int64), c.col.astype(np.int64), c.data.astype(np.int64)


def _pair_lookup(keys_sorted: np.ndarray, values: np.ndarray, wanted: np.ndarray, fill=0) -> np.ndarray:
    """values[k] for each wanted key k of the sorted `keys_sorted`, `fill` where absent."""
    out = np.full(wanted.size, fill, dtype=values.dtype)
    if keys_sorted.size == 0:
        return out
    i = np.minimum(np.searchsorted(keys_sorted, wanted), keys_sorted.size - 1)
    hit = keys_sorted[i] == wanted
    out[hit] = values[i[hit]]
    return out


def _empty(schema: pa.Schema) -> pa.Table:
    return schema.empty_table()


# ---------------------------------------------------------------------------------------------------
# opposite betting: features


def _positions(table: TableData, pairs: tuple[tuple[str, str], ...]):
    """Net positions (market, account, signed stake, result) on the table's opposite pairs; market =
    round row * K + pair index. None when there is none."""
    bets, rounds = table.bets, table.rounds
    ridx = _round_index(table)
    settled = _np(pc.equal(rounds["status"], "settled")).astype(bool)
    ok = ridx >= 0
    ok[ok] = settled[ridx[ok]]
    acct, names = _codes(bets["account_id"])
    bet_type = bets["bet_type"]
    stake = _np(bets["stake"]).astype(np.int64)
    paid = _np(bets["paid"]).astype(np.int64)
    parts = []
    for k, (first, second) in enumerate(pairs):
        for code, sign in ((first, 1), (second, -1)):
            sel = np.flatnonzero(ok & _np(pc.fill_null(pc.equal(bet_type, code), False)).astype(bool))
            parts.append((ridx[sel] * len(pairs) + k, acct[sel], sign * stake[sel], paid[sel] - stake[sel]))
    market = np.concatenate([p[0] for p in parts])
    if market.size == 0:
        return None
    account = np.concatenate([p[1] for p in parts])
    n_acct = len(names)
    order, starts, keys = _groups(market * n_acct + account)
    net = np.add.reduceat(np.concatenate([p[2] for p in parts])[order], starts)
    result = np.add.reduceat(np.concatenate([p[3] for p in parts])[order], starts)
    held = net != 0
    return keys[held] // n_acct, keys[held] % n_acct, net[held], result[held], names


def _stake_windows(stakes: np.ndarray, tolerance: Fraction):
    """The table's distinct stakes U, each position's rank in U, and for each rank the ranks [lo, hi)
    of the stakes it matches: |s - t| <= tolerance * max(s, t), i.e. s (1 - tol) <= t <= s / (1 - tol)."""
    num, den = tolerance.numerator, tolerance.denominator
    u = np.unique(stakes)
    rank = np.searchsorted(u, stakes)
    low = -((-u * (den - num)) // den)  # ceil(u (1 - tol))
    high = (u * den) // (den - num)  # floor(u / (1 - tol))
    return u, rank, np.searchsorted(u, low, "left"), np.searchsorted(u, high, "right")


def _matched_rounds(market, account, side, rank, lo_r, hi_r, n_u, net_abs, result):
    """Every opposite-matched (position on side 0, position on side 1) of the same market: a sorted
    window join (side 1 sorted by market then stake rank; each side-0 position takes the run of side-1
    positions of its market whose rank is in its window)."""
    x = np.flatnonzero(side == 0)
    y = np.flatnonzero(side == 1)
    key_y = market[y] * (n_u + 1) + rank[y]
    oy = np.argsort(key_y, kind="stable")
    key_y = key_y[oy]
    base = market[x] * (n_u + 1)
    start = np.searchsorted(key_y, base + lo_r[rank[x]], "left")
    stop = np.searchsorted(key_y, base + hi_r[rank[x]], "left")
    xi, off = _expand(stop - start)
    yi = y[oy[np.repeat(start, stop - start) + off]]
    xi = x[xi]
    a, b = account[xi], account[yi]
    r_x, r_y = result[xi], result[yi]
    to_x = (np.minimum(np.maximum(r_x, 0), np.maximum(-r_y, 0))
            - np.minimum(np.maximum(r_y, 0), np.maximum(-r_x, 0)))
    swap = a > b
    return (np.where(swap, b, a), np.where(swap, a, b), np.minimum(net_abs[xi], net_abs[yi]),
            np.where(swap, -to_x, to_x), market[xi])


def _null_chances(pa_, pb_, account, side, rank, lo_r, hi_r, n_u, n_acct) -> np.ndarray:
    """For pairs (pa_[i], pb_[i]) of one opposite pair: the chance that a position drawn from A's
    positions and one drawn from B's are opposite-matched. Per account (side, stake rank) histograms;
    the account with fewer distinct values is expanded, the other's counts over the matching window
    come from cumulative sums (two searchsorted per value)."""
    stride = n_u + 1
    order, starts, bin_key = _groups((account * 2 + side) * stride + rank)
    bin_count = np.diff(np.r_[starts, account.size])
    cum = np.r_[0, np.cumsum(bin_count)]
    bin_acct = bin_key // (2 * stride)
    n_bins = np.bincount(bin_acct, minlength=n_acct)
    first_bin = np.cumsum(n_bins) - n_bins
    n_pos = np.bincount(account, minlength=n_acct).astype(float)
    expand_a = n_bins[pa_] <= n_bins[pb_]
    e = np.where(expand_a, pa_, pb_)
    o = np.where(expand_a, pb_, pa_)
    pid, off = _expand(n_bins[e])
    j = first_bin[e][pid] + off
    j_side = (bin_key[j] // stride) % 2
    j_rank = bin_key[j] % stride
    base = (o[pid] * 2 + (1 - j_side)) * stride
    i0 = np.searchsorted(bin_key, base + lo_r[j_rank], "left")
    i1 = np.searchsorted(bin_key, base + hi_r[j_rank], "left")
    hits = np.bincount(pid, weights=bin_count[j] * (cum[i1] - cum[i0]), minlength=pa_.size)
    return hits / (n_pos[pa_] * n_pos[pb_])


def opposite_betting_features(table: TableData, tolerance: Fraction = TOLERANCE) -> pa.Table:
    """Per (account pair, table): the rounds both held a position on an opposite pair, how many of them
    were opposite-matched, the null expectation of that count, the matched stake and the net transfer
    (OPPOSITE_SCHEMA). Every pair of accounts sharing a round is a row (the test sums them over tables)."""
    pairs = game_of(table.table["game"]).opposite_bets
    if not pairs or table.bets.num_rows == 0:
        return _empty(OPPOSITE_SCHEMA)
    found = _positions(table, pairs)
    if found is None:
        return _empty(OPPOSITE_SCHEMA)
    market, account, net, result, names = found
    n_acct, n_k = len(names), len(pairs)
    side = (net < 0).astype(np.int64)
    net_abs = np.abs(net)
    u, rank, lo_r, hi_r = _stake_windows(net_abs, Fraction(tolerance))
    days = _round_days(table.rounds)

    # pairs sharing rounds, and the null chance of each, per opposite pair k
    keys, shared, expected = [], [], []
    for k in range(n_k):
        on_k = market % n_k == k
        if not on_k.any():
            continue
        a, b, n = _cooccurrence(account[on_k], market[on_k] // n_k, n_acct, table.rounds.num_rows)
        p = _null_chances(a, b, account[on_k], side[on_k], rank[on_k], lo_r, hi_r, u.size, n_acct)
        keys.append(a * n_acct + b)
        shared.append(n)
        expected.append(n * p)
    order, starts, pair_key = _groups(np.concatenate(keys))
    shared_n = np.add.reduceat(np.concatenate(shared)[order], starts)
    expected_n = np.add.reduceat(np.concatenate(expected)[order], starts)

    # the opposite-matched rounds, per pair
    lo, hi, stake_min, transfer, m_market = _matched_rounds(market, account, side, rank, lo_r, hi_r, u.size,
                                                            net_abs, result)
    m_days = days[m_market // n_k]
    order, starts, m_key = _groups(lo * n_acct + hi)
    if m_key.size:
        m_count = np.diff(np.r_[starts, lo.size])
        m_stake = np.add.reduceat(stake_min[order], starts)
        m_transfer = np.add.reduceat(transfer[order], starts)
        m_first = np.minimum.reduceat(m_days[order], starts)
        m_last = np.maximum.reduceat(m_days[order], starts)
    else:
        m_count = m_stake = m_transfer = m_first = m_last = np.zeros(0, dtype=np.int64)
    held_days = days[np.unique(market // n_k)]
    t_first, t_last = int(held_days.min()), int(held_days.max())

    a_code, b_code = pair_key // n_acct, pair_key % n_acct
    n_rows = pair_key.size
    return pa.table({
        "table_id": pa.array([str(table.table["table_id"])] * n_rows, pa.string()),
        "currency": pa.array([table.table.get("currency")] * n_rows, pa.string()),
        "account_a": names.take(pa.array(a_code)),
        "account_b": names.take(pa.array(b_code)),
        "shared": pa.array(shared_n, pa.int64()),
        "matched": pa.array(_pair_lookup(m_key, m_count, pair_key), pa.int64()),
        "expected": pa.array(expected_n, pa.float64()),
        "matched_stake": pa.array(_pair_lookup(m_key, m_stake, pair_key), pa.int64()),
        "transfer": pa.array(_pair_lookup(m_key, m_transfer, pair_key), pa.int64()),
        "tolerance": pa.array(np.full(n_rows, float(tolerance)), pa.float64()),
        "first_date": pa.array(_pair_lookup(m_key, m_first, pair_key, t_first).astype("datetime64[D]"),
                               pa.date32()),
        "last_date": pa.array(_pair_lookup(m_key, m_last, pair_key, t_last).astype("datetime64[D]"),
                              pa.date32()),
    }, schema=OPPOSITE_SCHEMA)


# ---------------------------------------------------------------------------------------------------
# shared rounds: features


def _round_order(rounds: pa.Table, days: np.ndarray) -> np.ndarray:
    """Each round row's position in the table's order of play: by business day (`days`, each row's), then
    betting_closed_at, then round_id. A day's rounds are then one run of positions, whatever the clock says."""
    keys = [(c, "ascending") for c in ("betting_closed_at", "round_id") if c in rounds.column_names]
    cols = {"_day": pa.array(days, pa.int64()), **{c: rounds[c] for c, _ in keys}}
    order = pc.sort_indices(pa.table(cols), sort_keys=[("_day", "ascending"), *keys]).to_numpy()
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    return pos


def _shoe_stages(rounds: pa.Table, pos: np.ndarray, n_stages: int) -> np.ndarray | None:
    """Each position's stage in its shoe, 0 .. n_stages - 1: its rank among the shoe's rounds in the order of play,
    times n_stages, over the shoe's rounds (rounds without a shoe: one shoe); None where the table records no shoe."""
    if "shoe_id" not in rounds.column_names or rounds["shoe_id"].null_count == rounds.num_rows:
        return None
    shoe = np.empty(pos.size, dtype=np.int64)
    shoe[pos] = _codes(pc.fill_null(rounds["shoe_id"], ""))[0]
    order, starts, _ = _groups(shoe)  # stable: a shoe's positions in the order of play
    count = np.diff(np.r_[starts, shoe.size])
    run, rank = _expand(count)
    stage = np.empty(pos.size, dtype=np.int64)
    stage[order] = rank * n_stages // count[run]
    return stage


def shared_rounds_features(table: TableData) -> pa.Table:
    """Per (account pair, table, business day) sharing a round inside their joint window of that day: the
    window, each account's rounds in it, the rounds they shared in it and each one's stake on all the rounds
    they shared that day (SHARED_SCHEMA; first_date = last_date = the day). Every bet counts (any game, any
    bet type, cancelled rounds too: the choice of rounds is the evidence). A round's day is its
    `business_date` (the UTC date its betting opened)."""
    bets, rounds = table.bets, table.rounds
    if bets.num_rows == 0:
        return _empty(SHARED_SCHEMA)
    ridx = _round_index(table)
    ok = ridx >= 0
    n_rounds = rounds.num_rows
    row_days = _round_days(rounds)
    pos = _round_order(rounds, row_days)
    days = np.empty(n_rounds, dtype=np.int64)
    days[pos] = row_days
    day_values, day_of = np.unique(days, return_inverse=True)  # day_of[position]: the day's index
    n_days = day_values.size
    acct, names = _codes(bets["account_id"])
    # a unit is an account on one business day: every window below is one unit's rounds against another's,
    # and two units share a round only if they are of the same day, so each pair's window stays in its day
    n_acct = len(names) * n_days
    stake = _np(bets["stake"]).astype(np.int64)[ok]
    bet_pos = pos[ridx[ok]]
    order, starts, inc_key = _groups((acct[ok] * n_days + day_of[bet_pos]) * n_rounds + bet_pos)
    inc_stake = np.add.reduceat(stake[order], starts)
    inc_acct, inc_round = inc_key // n_rounds, inc_key % n_rounds

    a, b, shared = _cooccurrence(inc_acct, inc_round, n_acct, n_rounds)
    if a.size == 0:
        return _empty(SHARED_SCHEMA)
    m = sparse.csr_matrix((np.ones(inc_acct.size, dtype=np.int64), (inc_acct, inc_round)), shape=(n_acct, n_rounds))
    ms = sparse.csr_matrix((inc_stake, (inc_acct, inc_round)), shape=(n_acct, n_rounds))
    g = (ms @ m.T).tocoo()  # g[i, j] = i's stake on the rounds j also bet on
    g_order, _, g_key = _groups(g.row.astype(np.int64) * n_acct + g.col)
    g_val = g.data.astype(np.int64)[g_order]

    n_inc = np.bincount(inc_acct, minlength=n_acct)
    first_inc = np.cumsum(n_inc) - n_inc
    first = inc_round[np.minimum(first_inc, inc_round.size - 1)]
    last = inc_round[np.maximum(first_inc + n_inc - 1, 0)]
    lo = np.maximum(first[a], first[b])
    hi = np.minimum(last[a], last[b])
    width = np.maximum(hi - lo - 1, 0)

    def bet_on(x, r):
        i = np.minimum(np.searchsorted(inc_key, x * n_rounds + r), inc_key.size - 1)
        return inc_key[i] == x * n_rounds + r

    both_lo = bet_on(a, lo) & bet_on(b, lo)
    both_hi = (hi > lo) & bet_on(a, hi) & bet_on(b, hi)
    shared_window = shared - both_lo - both_hi
    keep = shared_window >= 1
    a, b, lo, hi, width, shared_window = a[keep], b[keep], lo[keep], hi[keep], width[keep], shared_window[keep]

    def span(x):  # the first and the end index, in inc_key order, of x's rounds strictly between lo and hi (> lo)
        start = np.searchsorted(inc_key, x * n_rounds + lo, "right")
        return start, np.searchsorted(inc_key, x * n_rounds + hi, "left")

    (a_start, a_stop), (b_start, b_stop) = span(a), span(b)
    rounds_a, rounds_b = a_stop - a_start, b_stop - b_start

    # The window as rounds of an even crowd: (sum d)^2 / sum d (d - 1) over its rounds, d a round's other
    # accounts (neither of the pair), at most the window. With c a round's accounts, x and y the pair's
    # presence: sum d = sum c - rounds_a - rounds_b and sum d (d - 1) = sum c (c - 1) - sum over the rounds
    # of each of the pair of (2c - 2) + 2 shared (d (d - 1) = c (c - 1) - (x + y) (2c - x - y - 1)).
    crowd = np.bincount(inc_round, minlength=n_rounds).astype(np.int64)
    c1 = np.concatenate([[0], np.cumsum(crowd)])
    c2 = np.concatenate([[0], np.cumsum(crowd * (crowd - 1))])
    g = np.concatenate([[0], np.cumsum(2 * crowd[inc_round] - 2)])  # over the incidences, in inc_key order

    inner_lo, inner_hi = np.minimum(lo + 1, hi), np.maximum(hi, lo + 1)
    others = (c1[inner_hi] - c1[inner_lo]) - rounds_a - rounds_b
    pairs_of_others = (c2[inner_hi] - c2[inner_lo]) - (g[a_stop] - g[a_start]) - (g[b_stop] - g[b_start]) \
        + 2 * shared_window
    even = np.where(pairs_of_others > 0, others.astype(float) ** 2 / np.maximum(pairs_of_others, 1), np.inf)

    # The window as rounds of the pair's stages of the shoe: a_k, b_k, w_k each one's rounds and the window's in
    # stage k (SHOE_STAGES of a shoe's rounds); each account's rounds a random subset of the window's within each
    # stage gives E[S] = sum a_k b_k / w_k, and the hypergeometric has that mean over a b / sum a_k b_k / w_k
    # rounds (>= max(a, b); kept at most the window). A table without shoes: the window.
    stage_window = np.full(a.size, np.inf)
    stages = _shoe_stages(rounds, pos, SHOE_STAGES)
    if stages is not None:
        chance = np.zeros(a.size)
        inc_stage = stages[inc_round]
        for k in range(SHOE_STAGES):
            w_k = np.concatenate([[0], np.cumsum(stages == k)])
            i_k = np.concatenate([[0], np.cumsum(inc_stage == k)])
            w_in = w_k[inner_hi] - w_k[inner_lo]
            a_in, b_in = i_k[a_stop] - i_k[a_start], i_k[b_stop] - i_k[b_start]
            chance += a_in * b_in / np.maximum(w_in, 1)  # a_in b_in = 0 where w_in = 0
        stage_window = rounds_a * rounds_b / chance  # chance > 0: the pair shares a round of the window
    effective = np.maximum(np.minimum(width, np.floor(np.minimum(np.minimum(even, stage_window), width)))
                           .astype(np.int64), np.maximum(rounds_a, rounds_b))
    n_rows = a.size
    return pa.table({
        "table_id": pa.array([str(table.table["table_id"])] * n_rows, pa.string()),
        "currency": pa.array([table.table.get("currency")] * n_rows, pa.string()),
        "account_a": names.take(pa.array(a // n_days)),
        "account_b": names.take(pa.array(b // n_days)),
        "shared": pa.array(shared[keep], pa.int64()),
        "window": pa.array(width, pa.int64()),
        "rounds_a": pa.array(rounds_a, pa.int64()),
        "rounds_b": pa.array(rounds_b, pa.int64()),
        "shared_window": pa.array(shared_window, pa.int64()),
        "window_effective": pa.array(effective, pa.int64()),
        "window_stages": pa.array(np.floor(np.minimum(stage_window, width)).astype(np.int64), pa.int64()),
        "stake_a": pa.array(_pair_lookup(g_key, g_val, a * n_acct + b), pa.int64()),
        "stake_b": pa.array(_pair_lookup(g_key, g_val, b * n_acct + a), pa.int64()),
        "first_date": pa.array(days[lo].astype("datetime64[D]"), pa.date32()),
        "last_date": pa.array(days[hi].astype("datetime64[D]"), pa.date32()),
    }, schema=SHARED_SCHEMA)


# ---------------------------------------------------------------------------------------------------
# tests


def _periods(first: np.ndarray, last: np.ndarray) -> list[str]:
    """'YYYY-MM-DD', or 'YYYY-MM-DD..YYYY-MM-DD' where the days differ, of days since 1970."""
    a = np.datetime_as_string(first.astype("datetime64[D]")).tolist()
    b = np.datetime_as_string(last.astype("datetime64[D]")).tolist()
    return [x if x == y else f"{x}..{y}" for x, y in zip(a, b, strict=True)]


def _tables(ids: list[str]) -> str:
    ids = sorted(set(ids))
    return ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


def _days(col) -> np.ndarray:
    return _np(col).astype("datetime64[D]").astype(np.int64)


def _flow(t: int, a: str, b: str, currency: str | None) -> str:
    if t == 0:
        return "no net transfer"
    return f"net {format_money(abs(t), currency)} from {b} to {a}" if t > 0 else \
        f"net {format_money(abs(t), currency)} from {a} to {b}"


def screen_of(settings: dict[str, Any]) -> float:
    """The screening p-value of a pair detector's run: its `screen_p`, never below its `alpha` (the pipeline sets
    `alpha` to the run's), so that no pair that could be flagged goes unlisted."""
    return max(float(settings.get("screen_p", SCREEN_P)), float(settings.get("alpha", ALPHA)))


def _listed(p: np.ndarray, tested: np.ndarray, screen: float, alpha: float) -> np.ndarray:
    """The pairs a pair detector lists (a row each): the tested ones at or below the screen; of those too small to
    test, the ones whose counts alone would have stood out (p below alpha, as before the screen)."""
    return np.where(tested, p <= screen, p < alpha)


def _test_table(columns: dict[str, Any], n: int) -> pa.Table:
    """TEST_COLUMNS of `n` rows from arrays and lists (a str for a constant column)."""
    out = {}
    for f in TEST_COLUMNS:
        v = columns.get(f.name)
        if isinstance(v, str):
            v = pa.array([v], f.type).take(np.zeros(n, dtype=np.int64))
        out[f.name] = pa.array(v, f.type) if v is not None else pa.nulls(n, f.type)
    return pa.table(out, schema=TEST_COLUMNS)


SUMMARY_COUNTS = pa.schema([  # a summary row's numbers (`_summary_counts`): what parts of a detector's pairs sum
    ("table", pa.string()), ("tested", pa.int64()), ("listed", pa.int64()), ("small", pa.int64()),
    ("small_listed", pa.int64()), ("first", pa.int64()), ("last", pa.int64()),  # days since 1970
])


def _summary_counts(table_of: np.ndarray, table_names: list[str], tested: np.ndarray, listed: np.ndarray,
                    first: np.ndarray, last: np.ndarray) -> pa.Table:
    """Per table of the pairs (`table_of`: each pair's table code), SUMMARY_COUNTS: the pairs tested, of them listed,
    the pairs too small to test, of them listed, and their first and last days."""
    order, starts, codes = _groups(table_of)

    def per_table(mask: np.ndarray) -> np.ndarray:
        return np.add.reduceat(mask[order].astype(np.int64), starts) if codes.size else np.zeros(0, np.int64)

    return pa.table({
        "table": [table_names[c] for c in codes.tolist()],
        "tested": per_table(tested), "listed": per_table(tested & listed),
        "small": per_table(~tested), "small_listed": per_table(~tested & listed),
        "first": np.minimum.reduceat(first[order], starts) if codes.size else np.zeros(0, np.int64),
        "last": np.maximum.reduceat(last[order], starts) if codes.size else np.zeros(0, np.int64),
    }, schema=SUMMARY_COUNTS)


def _merged_counts(counts: Sequence[pa.Table]) -> pa.Table:
    """SUMMARY_COUNTS of several parts of the pairs (no pair in two), summed per table, in table order."""
    both = pa.concat_tables(counts) if counts else SUMMARY_COUNTS.empty_table()
    summed = both.group_by("table").aggregate([(c, "sum") for c in ("tested", "listed", "small", "small_listed")]
                                              + [("first", "min"), ("last", "max")])
    summed = summed.rename_columns([name.rsplit("_", 1)[0] if name != "table" else name
                                    for name in summed.column_names])
    return summed.select(SUMMARY_COUNTS.names).cast(SUMMARY_COUNTS).sort_by("table")


def _summaries(detector: str, what: str, counts: pa.Table, screen: float, alpha: float) -> pa.Table:
    """One row per table of the pairs a detector tested there (SUMMARY_COUNTS, `_summary_counts`): how many were
    tested and how many are listed, so that every pair is accounted for; `unlisted`, the tested pairs above the
    screen, counts in the m of the detector's Benjamini-Hochberg (engine/surveillance/tests.py adjust). Not a test
    itself: no p-value."""
    if counts.num_rows == 0:
        return TEST_COLUMNS.empty_table()
    n, k, small, small_listed = (counts[c].to_numpy() for c in ("tested", "listed", "small", "small_listed"))
    periods = _periods(counts["first"].to_numpy(), counts["last"].to_numpy())
    names = counts["table"].to_pylist()
    details = []
    for name, period, n_, k_, u_, ul_ in zip(names, periods, n.tolist(), k.tolist(), small.tolist(),
                                             small_listed.tolist(), strict=True):
        text = (f"{n_:,} pairs of accounts tested {what} {name} ({period}): {k_:,} at or below the screen "
                f"p <= {screen:g}, listed (a row each); {n_ - k_:,} above it, not listed; all {n_:,} count in the m "
                f"of Benjamini-Hochberg")
        if u_:
            text += (f"; {u_:,} more pairs below the minimum sample, not tested ({ul_:,} listed: p < {alpha:g} on "
                     f"their counts alone)")
        details.append(text)
    return _test_table({
        "detector": detector, "subject": names, "period": periods,
        "statistic": [f"pairs tested = {v}" for v in n.tolist()], "value": n.astype(float),
        "method": f"summary of the pairs tested: those with p <= {screen:g} listed, the others counted",
        "sample": n, "min_sample": np.ones(n.size, dtype=np.int64), "detail": details, "unlisted": n - k,
    }, n.size)


OPPOSITE_METHOD = ("exact binomial tail at the mean null chance of the shared rounds (each account's own side and "
                   "stake frequencies, independent; conservative for the Poisson-binomial, Hoeffding 1956)")
SHARED_METHOD = ("exact hypergeometric tail, conditional on sharing a round (each account's rounds in the window "
                 "where both played a random subset of its rounds; the window counted as rounds of an even crowd)")
SHARED_DAYS_METHOD = ("exact tail of the rounds shared summed over the business days, each day's count hypergeometric "
                      "in that day's window and conditional on sharing a round, the days independent (their "
                      "convolution; each account's rounds in a day's window a random subset of its rounds; the window "
                      "counted as rounds of an even crowd)")


def opposite_betting_p_values(features: pa.Table) -> dict[str, Any]:
    """Per (account pair, currency) over every table's features: the sums of the pair's shared and matched rounds
    and of their null chances (n, x, expected) and the binomial tail of its opposite-matched rounds at its mean null
    chance (p), as arrays, one entry a pair; `order`, `starts`, `ends`: the pairs' runs of feature rows (what else a
    listed pair shows is summed for the listed ones alone: `_sums_of`)."""
    order, starts, _ = _groups(_row_keys([features["account_a"], features["account_b"],
                                          pc.fill_null(features["currency"], "")]))

    def total(name, dtype):
        return np.add.reduceat(_np(features[name]).astype(dtype)[order], starts)

    n, x = total("shared", np.int64), total("matched", np.int64)
    expected = total("expected", float)
    p = np.clip(np.atleast_1d(binomial_upper_tail(x, n, _chance(expected, n))), 0.0, 1.0)
    return {"order": order, "starts": starts, "ends": np.r_[starts[1:], order.size], "n": n, "x": x,
            "expected": expected, "p": p}


def _chance(expected: np.ndarray, n: np.ndarray) -> np.ndarray:
    """A pair's mean null chance of its shared rounds."""
    return np.clip(expected / n, 0.0, 1.0)


def _sums_of(column: pa.ChunkedArray, order: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The sums of an integer column over the runs of rows order[starts[i]:ends[i]] (the listed pairs'), int64."""
    size = ends - starts
    run, offset = _expand(size)
    rows = order[starts[run] + offset]
    values = column.take(pa.array(rows, pa.int64())).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.add.reduceat(values, np.cumsum(size) - size) if rows.size else np.zeros(0, np.int64)


def opposite_betting_tests(features: pa.Table, settings: dict[str, Any]) -> pa.Table:
    """One test per (account pair, currency) over every table's features: the opposite-matched rounds
    against the binomial at the pair's mean null chance (`opposite_betting_tests_by_part` over the features as one
    part)."""
    tests = list(opposite_betting_tests_by_part([features], settings))
    return pa.concat_tables(tests) if tests else TEST_COLUMNS.empty_table()


def opposite_betting_tests_by_part(parts: Iterable[pa.Table], settings: dict[str, Any]) -> Iterator[pa.Table]:
    """The tests of opposite_betting over features given in parts that no pair spans (`Detector.subjects`):
    each part's listed pairs as it comes, a part held at a time, then the summary rows of every part. One test per
    (account pair, currency) over every table's features; listed (a row each, TEST_COLUMNS): the tested pairs with
    p at or below the screen (`screen_of`), and the pairs below `min_shared_rounds` (no p-value) whose counts alone
    would have stood out (p below alpha), in the order of (account_a, account_b, currency) within a part; then a
    summary row per table (`_summaries`; a pair of several tables is counted at the first of them by table_id)."""
    min_sample = int(settings.get("min_shared_rounds", MIN_SHARED_ROUNDS))
    alpha = float(settings.get("alpha", ALPHA))
    screen = screen_of(settings)
    counts = []
    for features in parts:
        if features.num_rows:
            rows, part_counts = _opposite_betting_part(features, min_sample, alpha, screen)
            counts.append(part_counts)
            if rows is not None:
                yield rows
    if counts:
        yield _summaries("opposite_betting", "whose first table (by table_id) is", _merged_counts(counts), screen,
                         alpha)


def _opposite_betting_part(features: pa.Table, min_sample: int, alpha: float, screen: float
                           ) -> tuple[pa.Table | None, pa.Table]:
    """(the listed pairs' rows, None where none is; SUMMARY_COUNTS) of the pairs in `features`."""
    g = opposite_betting_p_values(features)
    order, starts, ends, n, x, p, expected = (g.pop(k) for k in ("order", "starts", "ends", "n", "x", "p", "expected"))
    tested = n >= min_sample
    listed = _listed(p, tested, screen, alpha)
    first_days = np.minimum.reduceat(_days(features["first_date"])[order], starts)
    last_days = np.maximum.reduceat(_days(features["last_date"])[order], starts)
    table_codes, table_names = _codes(features["table_id"])
    counts = _summary_counts(np.minimum.reduceat(table_codes[order], starts), table_names.to_pylist(), tested, listed,
                             first_days, last_days)
    shown = np.flatnonzero(listed)
    if shown.size == 0:
        return None, counts

    # the listed pairs' own (every pair's arrays let go before their texts are made)
    n, x, p, expected, tested = n[shown], x[shown], p[shown], expected[shown], tested[shown]
    starts, ends = starts[shown], ends[shown]
    periods = _periods(first_days[shown], last_days[shown])
    del first_days, last_days, listed
    first_row = order[starts]
    names = table_names.to_pylist()  # (a row's table_id is names[table_codes[row]])
    where = [names[c] for c in table_codes[first_row].tolist()]
    for j in np.flatnonzero(ends - starts > 1).tolist():  # a pair at several tables
        where[j] = _tables([names[c] for c in table_codes[order[starts[j]:ends[j]]].tolist()])
    del table_codes
    stake, transfer = (_sums_of(features[c], order, starts, ends) for c in ("matched_stake", "transfer"))
    del order
    acc_a, acc_b = _values_at(features["account_a"], first_row), _values_at(features["account_b"], first_row)
    cur = [c or None for c in _values_at(features["currency"], first_row)]
    tol = [f"{t:.0%}" for t in _values_at(features["tolerance"], first_row)]
    n_, x_, e_, s_, t_ = (v.tolist() for v in (n, x, expected, stake, transfer))
    ok_ = tested.tolist()
    statistic, detail = [], []
    for i in range(shown.size):
        a, b, c = acc_a[i], acc_b[i], cur[i]
        text = (f"accounts {a} and {b} took opposite sides with matched stakes (within {tol[i]}) on {x_[i]} of "
                f"{n_[i]} shared rounds at {where[i]} ({periods[i]}), chance {e_[i]:.1f}: "
                f"{format_money(s_[i], c)} each way, {_flow(t_[i], a, b, c)}")
        if not ok_[i]:
            text += f"; not tested: {n_[i]} shared rounds, below the {min_sample} needed ({MIN_SHARED_ROUNDS_REASON})"
        detail.append(text)
        statistic.append(f"opposite-matched = {x_[i]} of {n_[i]} (chance {e_[i]:.2f})")
    rows = _test_table({
        "detector": "opposite_betting", "subject": [f"{a}|{b}" for a, b in zip(acc_a, acc_b, strict=True)],
        "period": periods, "statistic": statistic, "value": x.astype(float),
        "p_value": pa.array(p, pa.float64(), mask=~tested), "method": OPPOSITE_METHOD,
        "sample": n, "min_sample": np.full(shown.size, min_sample, dtype=np.int64),
        "effect": x / n - _chance(expected, n), "money": stake, "detail": detail,
        "unlisted": np.zeros(shown.size, dtype=np.int64), "currency": cur,
    }, shown.size)
    return rows, counts


def _share_any(w: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(S >= 1) for S ~ Hypergeometric(w, a, b): 1 - C(w - a, b) / C(w, b), by log-gamma (exact to
    float precision; the same as hypergeometric_upper_tail(1, ...), ten times faster)."""
    w, a, b = (np.asarray(v, dtype=float) for v in (w, a, b))
    none = np.full(w.shape, -np.inf)
    can = a + b <= w
    w, a, b = w[can], a[can], b[can]
    none[can] = gammaln(w - a + 1) + gammaln(w - b + 1) - gammaln(w + 1) - gammaln(w - a - b + 1)
    return -np.expm1(none)


def _truncated_pmfs(w: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(S = k | S >= 1) for k = 0 .. min(a, b) of each row's S ~ Hypergeometric(w, a, b) (a day's rounds shared;
    0 at k = 0), all rows at once by log-gamma: (the rows' runs one after the other, each row's start)."""
    size = np.minimum(a, b) + 1
    row, k = _expand(size)
    w_, a_, b_ = w[row], a[row], b[row]
    ok = (k >= 1) & (b_ - k <= w_ - a_)
    k_ = np.where(ok, k, 1)

    def log_choose(n, r):
        return gammaln(n + 1) - gammaln(r + 1) - gammaln(n - r + 1)

    log = np.where(ok, log_choose(a_, k_) + log_choose(w_ - a_, np.where(ok, b_ - k_, 0)), -np.inf)
    starts = np.cumsum(size) - size
    top = np.maximum.reduceat(log, starts)  # every row has a k >= 1 that can be (it shares a round)
    pmf = np.exp(log - top[row])
    return pmf / np.add.reduceat(pmf, starts)[row], starts


def _days_tail(pmf: np.ndarray, starts: np.ndarray, ends: np.ndarray, s: int) -> float:
    """P(S_1 + ... + S_K >= s) for independent days of the given pmfs (`pmf[starts[d]:ends[d]]`, `_truncated_pmfs`):
    the exact convolution (sums of positive terms: no cancellation in the tail)."""
    dist = np.ones(1)
    for i, j in zip(starts.tolist(), ends.tolist(), strict=True):
        dist = np.convolve(dist, pmf[i:j])
    return float(dist[s:].sum()) if s < dist.size else 0.0


def shared_rounds_p_values(features: pa.Table) -> dict[str, Any]:
    """Per (account pair, table) over its feature rows (one a business day): the sums of the rows and the p-value
    of the rounds shared inside the days' windows (each day's window as rounds of an even crowd), conditional on
    sharing one each day, exact: a day alone, the hypergeometric tail; several, the tail of the sum of the days'
    counts (`_days_tail`). Arrays, one entry a pair and table, in the order of (account_a, account_b, table_id);
    `order`, `starts`, `ends`: its runs of feature rows; `days`: how many rows (business days) it sums."""
    key = _row_keys([features[c] for c in ("account_a", "account_b", "table_id")])
    order, starts, _ = _groups(key)
    ends = np.r_[starts[1:], key.size]
    row = {c: _np(features[c]).astype(np.int64)[order]
           for c in ("shared_window", "rounds_a", "rounds_b", "window_effective", "window_stages", "window", "stake_a",
                     "stake_b")}
    s, ra, rb, we = row["shared_window"], row["rounds_a"], row["rounds_b"], row["window_effective"]
    p_row = np.atleast_1d(hypergeometric_upper_tail(s, we, ra, rb)) / _share_any(we, ra, rb)
    p = p_row[starts]
    days = ends - starts
    several = np.flatnonzero(days > 1)
    # the pairs of several days, in chunks of about PMF_CHUNK pmf terms (memory stays bounded): their days' pmfs at
    # once, then each pair's convolution
    terms = np.add.reduceat(np.minimum(ra, rb) + 1, starts)[several] if several.size else several
    chunk = np.cumsum(terms) // PMF_CHUNK
    for c in np.unique(chunk).tolist():
        pairs = several[chunk == c]
        rows = np.concatenate([np.arange(starts[i], ends[i]) for i in pairs.tolist()])
        pmf, first = _truncated_pmfs(we[rows], ra[rows], rb[rows])
        last = np.r_[first[1:], pmf.size]
        at = np.cumsum(days[pairs]) - days[pairs]
        for i, j, n in zip(pairs.tolist(), at.tolist(), days[pairs].tolist(), strict=True):
            p[i] = _days_tail(pmf, first[j:j + n], last[j:j + n], int(s[starts[i]:ends[i]].sum()))
    out = {name: np.add.reduceat(v, starts) for name, v in row.items()}
    first = _days(features["first_date"])[order]
    last = _days(features["last_date"])[order]
    return {**out, "order": order, "starts": starts, "ends": ends, "days": days, "p": np.clip(p, 0.0, 1.0),
            "expected": np.add.reduceat(ra * rb / np.maximum(we, 1), starts),
            "first": np.minimum.reduceat(first, starts), "last": np.maximum.reduceat(last, starts)}


def shared_rounds_tests(features: pa.Table, settings: dict[str, Any]) -> pa.Table:
    """One test per (account pair, table) over the business days of its feature rows: the rounds shared inside
    their joint window of each day, against each day's hypergeometric conditional on sharing one, the days summed
    (exact). Sample = the fewer of the two accounts' rounds inside the windows. Listed (a row each, TEST_COLUMNS):
    the tested pairs with p at or below the screen (`screen_of`), and the pairs below `min_window_rounds` (no
    p-value) whose counts alone would have stood out (p below alpha), in the order of (account_a, account_b,
    table_id); then a summary row per table (`_summaries`) counting them all."""
    min_sample = int(settings.get("min_window_rounds", MIN_WINDOW_ROUNDS))
    alpha = float(settings.get("alpha", ALPHA))
    screen = screen_of(settings)
    if features.num_rows == 0:
        return TEST_COLUMNS.empty_table()
    g = shared_rounds_p_values(features)
    p, ra, rb = g["p"], g["rounds_a"], g["rounds_b"]
    sample = np.minimum(ra, rb)
    tested = sample >= min_sample
    listed = _listed(p, tested, screen, alpha)
    first_row = g["order"][g["starts"]]
    table_codes, table_names = _codes(features["table_id"])
    summaries = _summaries("shared_rounds", "at", _summary_counts(table_codes[first_row], table_names.to_pylist(),
                                                                  tested, listed, g["first"], g["last"]), screen, alpha)
    shown = np.flatnonzero(listed)
    if shown.size == 0:
        return summaries
    s, w, we, ws, expected = (g[k][shown] for k in ("shared_window", "window", "window_effective", "window_stages",
                                                      "expected"))
    ra, rb, sample, ok, n_days = ra[shown], rb[shown], sample[shown], tested[shown], g["days"][shown]
    stake = (g["stake_a"] + g["stake_b"])[shown]
    periods = _periods(g["first"][shown], g["last"][shown])
    rows_of = first_row[shown]
    acc_a, acc_b = _values_at(features["account_a"], rows_of), _values_at(features["account_b"], rows_of)
    tables, cur = _values_at(features["table_id"], rows_of), _values_at(features["currency"], rows_of)
    s_, w_, we_, ra_, rb_, n_, d_ = (v.tolist() for v in (s, w, we, ra, rb, sample, n_days))
    staged = (ws < w).tolist()
    e_, ok_, stake_ = expected.tolist(), ok.tolist(), stake.tolist()
    statistic, detail = [], []
    for i in range(shown.size):
        days = f", {d_[i]} business days, a window each" if d_[i] > 1 else ""
        text = (f"accounts {acc_a[i]} and {acc_b[i]} bet the same {s_[i]} rounds of their {ra_[i]} and {rb_[i]} at "
                f"{tables[i]} ({periods[i]}{days}), within the {w_[i]} rounds both were playing"
                + (f" (as {we_[i]} rounds of an even crowd" + (" and of the stages of the shoe both played" if staged[i]
                                                                 else "") + ")" if we_[i] < w_[i] else "")
                + f", chance {e_[i]:.1f}: {format_money(stake_[i], cur[i])} staked together")
        if not ok_[i]:
            text += f"; not tested: {n_[i]} rounds, below the {min_sample} needed ({MIN_WINDOW_ROUNDS_REASON})"
        detail.append(text)
        statistic.append(f"shared = {s_[i]} of {ra_[i]} and {rb_[i]} in {w_[i]} rounds (chance {e_[i]:.2f})"
                         + (f" over {d_[i]} days" if d_[i] > 1 else ""))
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = s / expected
    rows = _test_table({
        "detector": "shared_rounds", "subject": [f"{a}|{b}" for a, b in zip(acc_a, acc_b, strict=True)],
        "period": periods, "statistic": statistic, "value": s.astype(float),
        "p_value": pa.array(p[shown], pa.float64(), mask=~ok),
        "method": [SHARED_DAYS_METHOD if d > 1 else SHARED_METHOD for d in d_], "sample": sample,
        "min_sample": np.full(shown.size, min_sample, dtype=np.int64),
        "effect": pa.array(effect, pa.float64(), mask=expected == 0), "money": stake, "detail": detail,
        "unlisted": np.zeros(shown.size, dtype=np.int64),
    }, shown.size)
    return pa.concat_tables([rows, summaries])


def groups(tests: Sequence[SurveillanceTest]) -> list[tuple[str, ...]]:
    """Accounts linked by flagged pair tests ("A|B" subjects), as groups (connected components), largest
    first: three accounts flagged pairwise are one group of three."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for t in tests:
        if t.flagged and "|" in t.subject:
            a, b = t.subject.split("|", 1)
            parent[root(a)] = root(b)
    comps: dict[str, list[str]] = {}
    for x in parent:
        comps.setdefault(root(x), []).append(x)
    return sorted((tuple(sorted(c)) for c in comps.values()), key=lambda g: (-len(g), g))


OPPOSITE_BETTING = Detector(
    name="opposite_betting",
    finding_kind="OPPOSITE_BETTING",
    games=tuple(name for name in game_names() if game_of(name).opposite_bets),
    features=partial(opposite_betting_features, tolerance=TOLERANCE),
    tests=opposite_betting_tests,
    settings={"min_shared_rounds": MIN_SHARED_ROUNDS, "alpha": ALPHA, "screen_p": SCREEN_P},
    subjects=("account_a", "account_b"),  # a pair's rows at every table in one part
    tests_by_part=opposite_betting_tests_by_part,
)

SHARED_ROUNDS = Detector(
    name="shared_rounds",
    finding_kind="SHARED_ROUNDS",
    games=(),
    features=shared_rounds_features,
    tests=shared_rounds_tests,
    settings={"min_window_rounds": MIN_WINDOW_ROUNDS, "alpha": ALPHA, "screen_p": SCREEN_P},
    tests_per_table=True,  # a test a pair and table: screened in the per-table step, only the listed rows travel
)
