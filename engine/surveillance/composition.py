"""The exact expected return of a bet given the cards still in the shoe (the composition-dependent RTP),
fast enough for every round of a night.

A composition is a vector of 52 counts: copies of each card code (engine.cards.CARD_CODES order) still
in the shoe; many compositions are an (n, 52) array and every function here answers all of them at
once. A return is the expected credit per unit staked (stake included), as engine.games.baccarat.rtp's
`bet_rtp` gives it for a full shoe, but in floating point.

Baccarat, two exact paths chosen per paytable by the round facts its rules read:

* **by point values** (outcome, scores, card counts, naturals, margin: TIE, the LUCKY_SIX / LUCKY_SEVEN /
  SUPER_LUCKY_SEVEN family, the naturals and bonuses, PLAYER and BANKER). A round is the ordered
  6-card prefix of the shoe (cards 5 and 6 that the round does not use are "don't care", as in
  engine/games/baccarat/rtp.py), so every round is one of the 10**6 sequences of six point values.
  Each sequence's draw/stand path is worked out once (engine.games.baccarat.dealing's rules) and its
  credit for each bet once (engine.games.baccarat.features' facts, settlement's paytable match). The
  chance of a sequence depends only on the multiset of its values: prod over values v of
  c_v (c_v - 1) ... (c_v - m_v + 1) / N (N - 1) ... (N - 5), with c_v the cards of value v left and m_v
  the times v occurs. So the 10**6 sequences fold, once per ruleset, into a table A[multiset, bet] =
  sum of credits of the sequences with that multiset (5,005 multisets of six values), and a
  composition's returns are its 5,005 multiset weights (each the product of two precomputed halves,
  values 0-4 and 5-9, 462 sub-multisets each) times A: no enumeration per round. ~20 us a round for
  every bet of a ruleset at once, in chunks of 64 compositions (bench/surveillance_advantage.py).
* **closed form from rank and suit counts** (player_pair, banker_pair, any_pair, perfect_pair: the
  pair bets). The two hands' first two cards are two disjoint pairs of positions; the chance of
  each of the 9 joint states (no pair / a pair of ranks not codes / a pair of codes, for each hand)
  is a sum of falling factorials of the rank and code counts (`pair_states`).

A paytable whose rules read both kinds of facts has no fast path here: `BaccaratReturns` refuses it
(NotImplementedError) rather than answer wrong. engine.games.baccarat.rtp.shoe_distribution is the
exact oracle (tests/test_surveillance_advantage.py holds the two to 1e-12).

Blackjack: the PAIR side bet in closed form (the box's first two cards are two cards drawn from the
remaining shoe), and for the main bet the Hi-Lo true count, not a return: the main bet's EV by
composition depends on the strategy played and is out of scope here.

Floating point: a falling factorial of six cards out of an 8-deck shoe is below 2**53, so the
weights are exact integers in float64; the returns carry ~1e-15 relative rounding (the tests hold
them to the exact Fractions at 1e-12). Returns are cached by composition (`BaccaratReturns.returns`, an
LRU of 65,536 compositions): within a night a composition recurs mostly at the start of a shoe without
a burn (mini-baccarat's every hand) and when the replay asks for the same round again.
"""

from __future__ import annotations

import functools
import itertools
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from threadpoolctl import ThreadpoolController

from engine.cards import CARD_CODES, CARD_INDEX, RANKS, SUITS
from engine.games.baccarat.dealing import banker_decision, player_decision
from engine.games.baccarat.features import round_features
from engine.games.baccarat.ruleset import PayRule, Ruleset
from engine.games.baccarat.settlement import matching_rule

N_CODES = len(CARD_CODES)
PAIR_FACTS = frozenset({"player_pair", "banker_pair", "any_pair", "perfect_pair"})
_NONE = 10  # "no third card" in a compact round's third-card slot


@functools.cache
def _threadpools() -> ThreadpoolController:
    return ThreadpoolController()  # (the BLAS numpy loaded; looked up once: ~15 ms, each limit ~6 us after)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS on one thread inside. The products here are small (a few dozen paytables x 5,005
    multisets by 64 compositions): OpenBLAS splits each over every core, and on a machine whose cores are
    busy its threads spin waiting for each other, 15 -> ~1,100 us of CPU a composition on two shared cores
    (75x; the advantage detector took minutes on a 1M-bet floor). One thread also rounds the same whatever
    the machine's core count (a product split across threads differs in its last bit)."""
    with _threadpools().limit(limits=1, user_api="blas"):
        yield


def counts_of(cards: Iterable[str] | Mapping[str, int]) -> np.ndarray:
    """The 52-count composition of card codes (a sequence of codes, or code -> copies); codes that are
    not cards are ignored (a shoe's bad codes are the audit's SHOE_COMPOSITION finding)."""
    out = np.zeros(N_CODES, dtype=np.int64)
    items = cards.items() if isinstance(cards, Mapping) else ((c, 1) for c in cards)
    for code, n in items:
        i = CARD_INDEX.get(code) if isinstance(code, str) else None
        if i is not None:
            out[i] += n
    return out


def card_indices(cards: Sequence[object]) -> np.ndarray:
    """Card index of each code of a shoe, -1 for anything that is not a card code."""
    return np.fromiter((CARD_INDEX.get(c, -1) if isinstance(c, str) else -1 for c in cards), np.int64, len(cards))


def remaining_counts(shoe: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """(len(positions), 52) compositions of `shoe[p:]` for each position p (`shoe` as `card_indices`;
    -1 entries count as no card). One cumulative count over the shoe, not a count per position."""
    shoe = np.asarray(shoe, dtype=np.int64)
    positions = np.clip(np.asarray(positions, dtype=np.int64), 0, len(shoe))
    onehot = np.zeros((len(shoe) + 1, N_CODES), dtype=np.int32)
    valid = np.flatnonzero(shoe >= 0)
    onehot[valid + 1, shoe[valid]] = 1
    dealt = np.cumsum(onehot, axis=0)  # dealt[p] = counts of shoe[:p]
    return (dealt[-1] - dealt[positions]).astype(np.int64)


def _value_counts(counts: np.ndarray) -> np.ndarray:
    """(n, 10): cards of each point value (A = 1 ... 9 = 9, T J Q K = 0) of (n, 52) compositions."""
    ranks = counts.reshape(-1, len(RANKS), len(SUITS)).sum(axis=2)  # A 2 ... 9 T J Q K
    values = np.empty((len(counts), 10), dtype=np.int64)
    values[:, 1:] = ranks[:, :9]
    values[:, 0] = ranks[:, 9:].sum(axis=1)
    return values


def _falling_table(counts: np.ndarray, k: int) -> np.ndarray:
    """(n, m, k + 1): c (c - 1) ... (c - j + 1) for j = 0..k of every count (0 once c < j), float64."""
    c = np.asarray(counts, dtype=np.float64)
    out = np.empty((*c.shape, k + 1), dtype=np.float64)
    out[..., 0] = 1.0
    for j in range(1, k + 1):
        out[..., j] = out[..., j - 1] * np.maximum(c - (j - 1), 0.0)
    return out


def _as_batch(counts: np.ndarray) -> tuple[np.ndarray, bool]:
    counts = np.asarray(counts, dtype=np.int64)
    single = counts.ndim == 1
    counts = counts.reshape(-1, N_CODES)
    if (counts < 0).any():
        raise ValueError("a composition holds a negative count")
    return counts, single


# --- baccarat: the point-value path ------------------------------------------------------------------


@dataclass(frozen=True)
class _ValueTables:
    """Every 6-value sequence, folded by multiset. A multiset's weight prod_v falling(c_v, m_v) is the
    product of two halves (values 0-4 and 5-9, 462 sub-multisets each): `low_cells[h]` / `high_cells[h]`
    are half h's five (value, multiplicity) cells as flat indices v * 7 + j into a (10, 7) table of
    falling factorials, and multiset m = half `low[m]` x half `high[m]`. `cell_m, cell_c, cell_ways`:
    how many sequences of multiset m deal compact round c (the nonzero cells only)."""

    low_cells: np.ndarray  # (462, 5)
    high_cells: np.ndarray  # (462, 5)
    low: np.ndarray  # (M,)
    high: np.ndarray  # (M,)
    cell_m: np.ndarray
    cell_c: np.ndarray
    cell_ways: np.ndarray
    compacts: tuple[tuple[int, int, int, int], ...]  # c -> (player two, banker two, p3 or 10, b3 or 10)

    @property
    def multisets(self) -> int:
        return len(self.low)


@functools.cache
def _value_tables() -> _ValueTables:
    # the million sequences as int8 rows, one a draw, and each half's multiset key summed a draw at a time: as an
    # (n, 6) int64 table and an (n, 10) int64 multiplicity table they raised a process's peak by ~240 MB (once per
    # process: the first baccarat table's features, the peak of a 1M-bet night's surveillance); the same integers
    seq = np.indices((10,) * 6, dtype=np.int8).reshape(6, -1)  # P1 B1 P2 B2 X5 X6, every sequence
    p2 = (seq[0] + seq[2]) % 10
    b2 = (seq[1] + seq[3]) % 10
    # The engine's own draw/stand rule, tabulated: 100 player decisions, 1,100 banker decisions.
    player_draws = np.array([[player_decision(p, b).draws for b in range(10)] for p in range(10)])
    banker_draws = np.array(
        [[[banker_decision(p, b, t if t < 10 else None).draws for t in range(11)] for b in range(10)]
         for p in range(10)]
    )  # [p2, b2, player third value or 10 = stood]
    pd = player_draws[p2, b2]
    p3 = np.where(pd, seq[4], np.int8(_NONE))
    bd = banker_draws[p2, b2, p3]
    b3 = np.where(bd, np.where(pd, seq[5], seq[4]), np.int8(_NONE))
    compact_code = ((p2.astype(np.int64) * 10 + b2) * 11 + p3) * 11 + b3
    del p2, b2, pd, p3, bd, b3
    compact_values, compact_index = np.unique(compact_code, return_inverse=True)
    del compact_code
    compacts = tuple(
        (int(c // 1210), int(c // 121 % 10), int(c // 11 % 11), int(c % 11)) for c in compact_values
    )
    base = 7 ** np.arange(5, dtype=np.int64)
    # a half's key: sum over its values v of (how many of the six draws are v) * 7^(v - its first value)
    low_power = np.r_[base, np.zeros(5, np.int64)]
    high_power = np.r_[np.zeros(5, np.int64), base]
    low_key, high_key = np.zeros(seq.shape[1], np.int64), np.zeros(seq.shape[1], np.int64)
    for j in range(6):
        low_key += low_power[seq[j]]
        high_key += high_power[seq[j]]
    del seq
    key = low_key * 7**5 + high_key
    multisets, first, multiset_index = np.unique(key, return_index=True, return_inverse=True)
    del key
    low_keys, low = np.unique(low_key[first], return_inverse=True)
    high_keys, high = np.unique(high_key[first], return_inverse=True)
    del low_key, high_key

    def cells(keys: np.ndarray, first_value: int) -> np.ndarray:
        digits = keys[:, None] // base[None, :] % 7  # multiplicity of each of the half's five values
        return (first_value + np.arange(5))[None, :] * 7 + digits

    cell = multiset_index.reshape(-1) * len(compacts) + compact_index.reshape(-1)
    nonzero, ways = np.unique(cell, return_counts=True)
    return _ValueTables(cells(low_keys, 0), cells(high_keys, 5), low.reshape(-1), high.reshape(-1),
                        nonzero // len(compacts), nonzero % len(compacts), ways.astype(np.float64), compacts)


def _representative_hand(two: int, third: int) -> list[str]:
    """Two cards scoring `two`, not a pair, plus a third of value `third` (10 = none)."""
    rank_of_value = {0: "T", **{v: RANKS[v - 1] for v in range(1, 10)}}
    hand = ["TS", ("J" if two == 0 else rank_of_value[two]) + "H"]
    if third != _NONE:
        hand.append(rank_of_value[third] + "D")
    return hand


def _credit(rule: PayRule | None) -> float:
    if rule is None:
        return 0.0
    return 1.0 if rule.odds is None else float(1 + rule.odds)


def _credit_exact(rule: PayRule | None) -> Fraction:
    if rule is None:
        return Fraction(0)
    return Fraction(1) if rule.odds is None else 1 + rule.odds


# --- baccarat: the pair path -------------------------------------------------------------------------

# The 9 joint states of the two hands' first two cards: per hand 0 no pair, 1 a pair of ranks that is
# not a pair of codes, 2 a pair of codes (a perfect pair); state index = 3 * player + banker.
PAIR_STATES: tuple[tuple[int, int], ...] = tuple(itertools.product(range(3), repeat=2))


def pair_state_facts(player: int, banker: int) -> dict[str, bool]:
    return {
        "player_pair": player > 0,
        "banker_pair": banker > 0,
        "any_pair": player > 0 or banker > 0,
        "perfect_pair": player == 2 or banker == 2,
    }


def pair_states(counts: np.ndarray) -> np.ndarray:
    """(n, 9) chance of each PAIR_STATES state of P1 P2 (player) and B1 B2 (banker), exact in closed form
    ((9,) for one composition; NaN with fewer than 4 cards).

    With r_k the copies of rank k and n_c of code c, N the cards, N4 = N (N-1) (N-2) (N-3):
    P(ranks pair) = sum r_k (r_k - 1) / N (N-1), P(codes pair) = sum n_c (n_c - 1) / N (N-1);
    P(both hands pair ranks) = [S_R**2 - sum (r_k (r_k-1))**2 + sum r_k (r_k-1)(r_k-2)(r_k-3)] / N4 with
    S_R = sum r_k (r_k - 1) (a second pair of the same rank draws from what the first left), the same for
    codes, and P(player pairs codes, banker pairs ranks) = sum_c n_c (n_c-1) [S_R - r (r-1) + (r-2)(r-3)] / N4
    (r the copies of c's rank). The 9 states follow by inclusion-exclusion."""
    counts, single = _as_batch(counts)
    n = counts.sum(axis=1).astype(np.float64)
    ranks = counts.reshape(-1, len(RANKS), len(SUITS)).sum(axis=2).astype(np.float64)
    codes = counts.astype(np.float64)
    fr, fc = _falling_table(ranks, 4), _falling_table(codes, 4)
    n2 = n * (n - 1)
    n4 = n2 * (n - 2) * (n - 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        s_r, s_c = fr[..., 2].sum(axis=1), fc[..., 2].sum(axis=1)
        p_r, p_c = s_r / n2, s_c / n2
        p_rr = (s_r**2 - (fr[..., 2] ** 2).sum(axis=1) + fr[..., 4].sum(axis=1)) / n4
        p_cc = (s_c**2 - (fc[..., 2] ** 2).sum(axis=1) + fc[..., 4].sum(axis=1)) / n4
        r_of_code = np.repeat(ranks, len(SUITS), axis=1)  # copies of each code's rank
        same_rank_left = np.maximum(r_of_code - 2, 0) * np.maximum(r_of_code - 3, 0)
        p_cr = (fc[..., 2] * (s_r[:, None] - r_of_code * (r_of_code - 1) + same_rank_left)).sum(axis=1) / n4
    # Exclusive states per hand: codes pair (C), ranks but not codes (R), none (0).
    cc = p_cc
    cr = p_cr - p_cc  # player codes, banker ranks not codes
    rr = p_rr - 2 * p_cr + p_cc
    c0 = p_c - p_cr  # player codes, banker no pair
    r0 = p_r - p_c - p_rr + p_cr
    out = np.empty((len(counts), 9), dtype=np.float64)
    out[:, 3 * 2 + 2] = cc
    out[:, 3 * 2 + 1] = out[:, 3 * 1 + 2] = cr
    out[:, 3 * 1 + 1] = rr
    out[:, 3 * 2 + 0] = out[:, 3 * 0 + 2] = c0
    out[:, 3 * 1 + 0] = out[:, 3 * 0 + 1] = r0
    out[:, 0] = 1.0 - out[:, 1:].sum(axis=1)
    out[n < 4] = np.nan
    return out[0] if single else out


# --- baccarat: every bet of a ruleset ------------------------------------------------------------------


def paytable_path(paytable: tuple[PayRule, ...]) -> str:
    """'pairs' when the rules read only pair facts, 'values' when they read none (point values decide)."""
    names = {name for rule in paytable for name, _ in rule.when}
    if names <= PAIR_FACTS and names:
        return "pairs"
    if not names & PAIR_FACTS:
        return "values"
    raise NotImplementedError(
        f"a paytable reading pair facts ({', '.join(sorted(names & PAIR_FACTS))}) together with "
        f"{', '.join(sorted(names - PAIR_FACTS))} has no fast composition path: extend "
        "engine/surveillance/composition.py (engine.games.baccarat.rtp.shoe_distribution is exact but slow)"
    )


class BaccaratReturns:
    """The composition-dependent return of each bet of a baccarat ruleset.

    `bets` are (bet code, mode) pairs (default: every bet the ruleset offers, mode by mode).
    `returns(counts)` gives an (n, len(bets)) array for an (n, 52) array of compositions (NaN where fewer
    than 6 cards are left: a round cannot always complete); results are cached by composition."""

    def __init__(self, ruleset: Ruleset, bets: Sequence[tuple[str, str]] | None = None, cache_size: int = 65_536):
        self.ruleset = ruleset
        if bets is None:
            bets = [(code, mode) for mode, codes in ruleset.modes.items() for code in codes]
        self.bets: tuple[tuple[str, str], ...] = tuple(bets)
        for code, mode in self.bets:
            if not ruleset.offered(code, mode):
                raise ValueError(f"{ruleset.id} does not offer {code} in {mode} mode")
        # Bets with the same paytable (a side bet offered in both modes) share one computed column.
        paytables = [ruleset.paytable(code, mode) for code, mode in self.bets]
        distinct = list(dict.fromkeys(paytables))
        self._column_of = np.array([distinct.index(p) for p in paytables], dtype=np.int64)
        paths = [paytable_path(p) for p in distinct]
        self.paths = tuple(paths[k] for k in self._column_of)
        self._value_cols = [k for k, p in enumerate(paths) if p == "values"]
        self._pair_cols = [k for k, p in enumerate(paths) if p == "pairs"]
        self._n_distinct = len(distinct)
        if self._value_cols:
            tables = _value_tables()
            credit = np.zeros((len(tables.compacts), len(self._value_cols)), dtype=np.float64)
            for c, (p_two, b_two, p3, b3) in enumerate(tables.compacts):
                facts = round_features(_representative_hand(p_two, p3), _representative_hand(b_two, b3))
                for j, k in enumerate(self._value_cols):
                    credit[c, j] = _credit(matching_rule(distinct[k], facts))
            self._tables = tables
            # (M, value paytables): the credits of every sequence of a multiset, summed
            self._a = np.stack([
                np.bincount(tables.cell_m, tables.cell_ways * credit[tables.cell_c, j], tables.multisets)
                for j in range(len(self._value_cols))
            ], axis=1)
        if self._pair_cols:
            self._pair_credit = np.array(
                [[_credit(matching_rule(distinct[k], pair_state_facts(p, b))) for k in self._pair_cols]
                 for p, b in PAIR_STATES]
            )  # (9, pair paytables)
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    def column(self, code: str, mode: str | None = None) -> int:
        """Index in `bets` of a bet (its first mode when `mode` is None)."""
        for i, (c, m) in enumerate(self.bets):
            if c == code and mode in (None, m):
                return i
        raise KeyError(f"{code} ({mode or 'any mode'}) is not among the bets of this BaccaratReturns")

    def _compute(self, counts: np.ndarray) -> np.ndarray:
        out = np.empty((len(counts), self._n_distinct), dtype=np.float64)
        with one_blas_thread():
            if self._value_cols:
                out[:, self._value_cols] = self._value_returns(counts)
            if self._pair_cols:
                out[:, self._pair_cols] = pair_states(counts) @ self._pair_credit
        out[counts.sum(axis=1) < 6] = np.nan
        return out[:, self._column_of]

    def _value_returns(self, counts: np.ndarray, chunk: int = 64) -> np.ndarray:
        t = self._tables
        values = _value_counts(counts)
        n = values.sum(axis=1).astype(np.float64)
        denom = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
        out = np.empty((len(counts), self._a.shape[1]), dtype=np.float64)
        falling = _falling_table(values, 6).reshape(-1, 70)  # falling(c_v, j) at column v * 7 + j
        for s in range(0, len(counts), chunk):
            f = falling[s : s + chunk].T.copy()  # (70, chunk): a chunk small enough to stay in cache
            low, high = f[t.low_cells[:, 0]], f[t.high_cells[:, 0]]
            for v in range(1, 5):
                low *= f[t.low_cells[:, v]]
                high *= f[t.high_cells[:, v]]
            w = low[t.low]
            w *= high[t.high]  # (M, chunk): ordered ways to draw each 6-value sequence
            with np.errstate(invalid="ignore", divide="ignore"):
                out[s : s + chunk] = (self._a.T @ w).T / denom[s : s + chunk, None]
        return out

    def returns(self, counts: np.ndarray, cache: bool = True) -> np.ndarray:
        """(n, len(bets)) returns of (n, 52) compositions ((len(bets),) for one composition). `cache=False`
        computes every row without looking up or filling the cache (compositions that never recur)."""
        counts, single = _as_batch(counts)
        if not cache:
            out = self._compute(counts)
            return out[0] if single else out
        if single:  # one composition (a replay): no sorting of rows
            key = counts[0].astype(np.int16).tobytes()
            hit = self._cache.get(key)
            if hit is None:
                hit = self._cache[key] = self._compute(counts)[0]
                if len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            else:
                self._cache.move_to_end(key)
            return hit.copy()
        unique, inverse = np.unique(counts, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        keys = [row.astype(np.int16).tobytes() for row in unique]
        result = np.empty((len(unique), len(self.bets)), dtype=np.float64)
        missing = []
        for i, key in enumerate(keys):
            hit = self._cache.get(key)
            if hit is None:
                missing.append(i)
            else:
                self._cache.move_to_end(key)
                result[i] = hit
        if missing:
            computed = self._compute(unique[missing])
            result[missing] = computed
            for i, row in zip(missing, computed, strict=True):
                self._cache[keys[i]] = row
                if len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        out = result[inverse]
        return out[0] if single else out


_SHARED: dict[str, BaccaratReturns] = {}


def baccarat_returns(ruleset: Ruleset) -> BaccaratReturns:
    """A shared `BaccaratReturns` of every bet of a ruleset (built once per process and ruleset)."""
    shared = _SHARED.get(ruleset.id)
    if shared is None or shared.ruleset != ruleset:
        shared = _SHARED[ruleset.id] = BaccaratReturns(ruleset)
    return shared


def side_bet_codes(ruleset: Ruleset, mode: str | None = None) -> tuple[str, ...]:
    """The bets whose return a count moves: every side bet of the mode, and TIE."""
    mode = mode or next(iter(ruleset.modes))
    return tuple(c for c in ruleset.modes.get(mode, ()) if ruleset.bets[c].kind == "side" or c == "TIE")


def side_bet_moments(ruleset, remaining_cards: Iterable[str] | Mapping[str, int] | np.ndarray,
                     mode: str | None = None) -> dict[str, float]:
    """{bet code: return per unit staked} of each side bet at a round, given the cards still in the shoe
    when betting closed (codes, code -> copies, or 52 counts): what `pitboss replay` shows as the
    remaining-shoe RTP of each side bet at that moment. Baccarat (a Ruleset or its id): every side bet
    offered in `mode` (default the ruleset's first mode) and TIE; blackjack (BlackjackRules or its id): PAIR.
    NaN where too few cards are left for a round (6 in baccarat, 2 for the pair)."""
    counts = remaining_cards if isinstance(remaining_cards, np.ndarray) else counts_of(remaining_cards)
    if isinstance(ruleset, str):
        from engine.games.baccarat.ruleset import load_ruleset, ruleset_ids

        if ruleset in ruleset_ids():
            ruleset = load_ruleset(ruleset)
        else:
            from engine.games.blackjack.rules import load_blackjack_rules

            ruleset = load_blackjack_rules(ruleset)
    if not isinstance(ruleset, Ruleset):  # blackjack
        return {"PAIR": float(blackjack_pair_return(ruleset.pair_odds, counts))}
    mode = mode or next(iter(ruleset.modes))
    table = baccarat_returns(ruleset)
    row = table.returns(counts)
    return {code: float(row[table.column(code, mode)]) for code in side_bet_codes(ruleset, mode)}


def exact_returns(ruleset: Ruleset, bets: Sequence[tuple[str, str]], shoe: Mapping[str, int]) -> list[Fraction]:
    """The exact return of each (bet code, mode) on one composition (card code -> copies), from
    engine.games.baccarat.rtp.shoe_distribution (slow: ~0.3 s for a full shoe): the oracle the fast path
    is tested against."""
    from engine.games.baccarat.rtp import facts_of, shoe_distribution

    distribution = [(facts_of(key), p) for key, p in shoe_distribution(shoe).items()]
    return [
        sum((p * _credit_exact(matching_rule(ruleset.paytable(code, mode), facts)) for facts, p in distribution),
            Fraction(0))
        for code, mode in bets
    ]


# --- blackjack -----------------------------------------------------------------------------------------

_RED = np.array([s in "HD" for s in SUITS])


def blackjack_pair_return(pair_odds: Mapping[str, Fraction], counts: np.ndarray) -> np.ndarray:
    """Return of the blackjack pair side bet on a box's first two cards, two cards drawn from the
    composition: perfect (same code), coloured (same rank and colour, other suit), mixed (same rank,
    other colour), paid at 1 + pair_odds[kind]; (n,) for (n, 52) compositions."""
    counts, single = _as_batch(counts)
    by = counts.reshape(-1, len(RANKS), len(SUITS)).astype(np.float64)
    n = counts.sum(axis=1).astype(np.float64)
    perfect = (by * (by - 1)).sum(axis=(1, 2))
    red, black = by[:, :, _RED], by[:, :, ~_RED]
    same_colour = (red.sum(axis=2) ** 2 - (red**2).sum(axis=2) + black.sum(axis=2) ** 2
                   - (black**2).sum(axis=2)).sum(axis=1)  # ordered, different suits of one colour
    mixed = 2 * (red.sum(axis=2) * black.sum(axis=2)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (perfect * float(1 + pair_odds["perfect"]) + same_colour * float(1 + pair_odds["coloured"])
               + mixed * float(1 + pair_odds["mixed"])) / (n * (n - 1))
    out[n < 2] = np.nan
    return out[0] if single else out


# Hi-Lo: 2-6 count +1, 7-9 count 0, T J Q K A count -1.
HI_LO = np.array([{"A": -1, "T": -1, "J": -1, "Q": -1, "K": -1, "7": 0, "8": 0, "9": 0}.get(c[0], 1)
                  for c in CARD_CODES], dtype=np.int64)


def hi_lo_true_count(shoe: np.ndarray, seen_from: int, positions: np.ndarray) -> np.ndarray:
    """The Hi-Lo true count at each position of a shoe (`card_indices`): the running count of the cards
    a player has seen (`shoe[seen_from:p]`, the burned cards before `seen_from` unseen) divided by the
    decks not yet seen ((cards - seen) / 52). NaN once nothing is left to see."""
    shoe = np.asarray(shoe, dtype=np.int64)
    tags = np.where(shoe >= 0, HI_LO[np.maximum(shoe, 0)], 0)
    running = np.concatenate([[0], np.cumsum(tags)])
    positions = np.clip(np.asarray(positions, dtype=np.int64), 0, len(shoe))
    start = min(seen_from, len(shoe))
    seen_at = np.maximum(positions - start, 0)
    rc = running[np.maximum(positions, start)] - running[start]
    decks_left = (len(shoe) - seen_at) / 52.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(decks_left > 0, rc / decks_left, np.nan)
