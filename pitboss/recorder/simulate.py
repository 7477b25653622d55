"""Pure simulation of a live baccarat table: shuffling and dealing shoes, and the bets of each round.

Dealing is done round by round with the engine (`engine.games.baccarat.dealing.deal_round`); the faults module
may change what is recorded through the `DealingHooks` it passes in (the default plants nothing).
Bets are generated with numpy for a whole block of rounds at once (a shoe, or a run of
mini-baccarat hands) from a pool of accounts with habits, and credited with
`engine.games.baccarat.settlement.settle_columns`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from engine.cards import CARD_CODES
from engine.games.baccarat.dealing import BANKER, PLAYER, TIE, DealtRound, deal_round
from engine.games.baccarat.features import feature_columns, round_features
from engine.games.baccarat.ruleset import BET_CODES, MODES
from engine.games.baccarat.settlement import settle_columns
from engine.games.baccarat.shoe import burn_procedure
from pitboss.recorder.config import BETTING_WINDOW, SECOND
from pitboss.recorder.players import CHANNELS, NICE_STAKES, NICE_WEIGHTS, TableClock

if TYPE_CHECKING:
    from pitboss.recorder.baccarat import TableSpec

BET_INDEX = {code: i for i, code in enumerate(BET_CODES)}
I_PLAYER, I_BANKER, I_TIE = BET_INDEX[PLAYER], BET_INDEX[BANKER], BET_INDEX[TIE]
BET_CODES_NP = np.array(BET_CODES)
BET_CODES_PA = pa.array(BET_CODES, pa.string())
MODES_NP = np.array(MODES)
MODES_PA = pa.array(MODES, pa.string())
MODE_INDEX = {m: i for i, m in enumerate(MODES)}
CARD_CODES_PA = pa.array(CARD_CODES, pa.string())
CHANNELS_PA = pa.array(CHANNELS, pa.string())
OUTCOME_CODE = {PLAYER: 0, BANKER: 1, TIE: 2}
# A stand-in for the features of a round cancelled before the deal (never read: its bets refund).
DUMMY_FEATURES = round_features(("TS", "TH"), ("TD", "TC"))


@dataclass
class Round:
    round_id: str
    shoe_id: str
    round_no: int
    open_us: int
    closed_us: int
    settled_us: int
    dealer_id: str
    status: str = "settled"  # or "cancelled"
    cancel: str | None = None  # None | "before" (no cards) | "after" (cards dealt, consumed)
    player: tuple[str, ...] = ()  # as recorded
    banker: tuple[str, ...] = ()
    player_score: int | None = None  # as recorded
    banker_score: int | None = None
    outcome: str | None = None
    start: int | None = None  # index in the shoe of the round's first card
    features: dict[str, Any] | None = None  # of the recorded cards: what the bets are paid on
    fault: str | None = None  # round-level fault planted on this round

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"

    @property
    def end(self) -> int:
        assert self.start is not None
        return self.start + len(self.player) + len(self.banker)


@dataclass
class Shoe:
    shoe_id: str
    shoe_no: int
    opened_us: int
    cards: np.ndarray  # card indices into CARD_CODES, the whole shoe in order
    cut_index: int | None
    shuffle_id: str
    rounds: list[Round] = field(default_factory=list)
    closed_us: int = 0
    fault: str | None = None  # shoe-level fault planted on this shoe (or the shoe hosts a round fault)

    @property
    def decks(self) -> int:
        return len(self.cards) // 52


def record_dealt(rnd: Round, player: tuple[str, ...], banker: tuple[str, ...], start: int) -> None:
    """Record hands as dealt (recorded scores and outcome agree with the cards)."""
    rnd.player, rnd.banker, rnd.start = tuple(player), tuple(banker), start
    rnd.features = round_features(rnd.player, rnd.banker)
    rnd.player_score = rnd.features["player_score"]
    rnd.banker_score = rnd.features["banker_score"]
    rnd.outcome = rnd.features["outcome"]


class DealingHooks:
    """Where the fault planner steps into the dealing. The default plants nothing."""

    def shoe_fault(self, table: TableSpec, shoe: Shoe, cards: list[str]) -> int:
        """Called before dealing; may change `cards`/`shoe.cards`. Returns a burn offset (0 = none)."""
        return 0

    def round_fault(self, table: TableSpec, shoe: Shoe, rnd: Round, dealt: DealtRound, cards: list[str]) -> None:
        """Called after a (not cancelled) round was dealt and recorded; may change the record."""

    def extra_round(self, table: TableSpec, shoe: Shoe, last: Round) -> bool:
        """Called after the cut-card round: deal one more round (ROUND_AFTER_CUT)?"""
        return False

    def burn_recorded(self, table: TableSpec, shoe: Shoe, first: Round, offset: int) -> None:
        """Called once the first round of a shoe dealt at a wrong burn offset is known."""


def _round_times(clock: TableClock, rng: np.random.Generator, n_cards: int, cancel: str | None) -> tuple[int, int, int]:
    open_us = clock.now
    closed_us = open_us + BETTING_WINDOW
    deal_us = 4 * SECOND + n_cards * 1_600_000 + int(rng.integers(0, 2 * SECOND))
    settled_us = closed_us + (0 if cancel == "before" else deal_us)
    if cancel is not None:
        settled_us += int(rng.integers(10 * SECOND, 60 * SECOND))  # the incident, then cancelled
    clock.now = settled_us + int(rng.integers(2 * SECOND, 5 * SECOND))
    return open_us, closed_us, settled_us


_UNSHUFFLED: dict[int, np.ndarray] = {}
_CARD_OBJ = np.array(CARD_CODES, dtype=object)


def shuffle(rng: np.random.Generator, decks: int) -> np.ndarray:
    """A shuffled shoe of `decks` full decks, as card indices."""
    if decks not in _UNSHUFFLED:
        _UNSHUFFLED[decks] = np.tile(np.arange(52, dtype=np.int16), decks)
    return rng.permutation(_UNSHUFFLED[decks])


def deal_shoe(
    table: TableSpec,
    shoe_id: str,
    shoe_no: int,
    clock: TableClock,
    rng: np.random.Generator,
    hooks: DealingHooks,
    cancel_rate: float,
) -> Shoe:
    """Shuffle, burn and deal one shoe (one hand for mini-baccarat) by the rule."""
    rs = table.ruleset
    proc = rs.shoe
    idx = shuffle(rng, rs.decks)
    cut_index = len(idx) - int(rng.integers(40, 81)) if proc.cut_card else None
    shoe = Shoe(shoe_id, shoe_no, clock.now, idx, cut_index, f"SHF-{shoe_id}")
    mini = proc.reshuffle_every_hand
    # The card codes the dealing reads (a mini-baccarat hand never reads past its first 6 cards).
    cards = _CARD_OBJ[idx[:16] if mini else idx].tolist()
    burn_offset = hooks.shoe_fault(table, shoe, cards)
    position = burn_procedure(cards, proc).first_round_start + burn_offset
    clock.now += int(rng.integers(20 * SECOND, 45 * SECOND)) if proc.burn else int(rng.integers(1 * SECOND, 3 * SECOND))
    round_no = 0
    while True:
        round_no += 1
        rid = f"{shoe_id}-R{round_no:03d}"
        u_cancel = rng.random()
        if not mini and round_no > 1 and u_cancel < cancel_rate / 2:
            # Cancelled before the deal: no cards came out; the next round deals them.
            times = _round_times(clock, rng, 0, "before")
            shoe.rounds.append(Round(rid, shoe_id, round_no, *times, clock.dealer(times[0]), "cancelled", "before"))
            continue
        dealt = deal_round(cards, position, round_no)
        final = cut_index is not None and dealt.end > cut_index
        # Cancelled after the deal (cards recorded and consumed); never the first or the cut-card round.
        cancel = "after" if (mini or (round_no > 1 and not final)) and u_cancel < cancel_rate else None
        n_cards = len(dealt.player_cards) + len(dealt.banker_cards)
        times = _round_times(clock, rng, n_cards, cancel)
        rnd = Round(rid, shoe_id, round_no, *times, clock.dealer(times[0]))
        record_dealt(rnd, dealt.player_cards, dealt.banker_cards, position)
        if cancel:
            rnd.status, rnd.cancel = "cancelled", cancel
        else:
            hooks.round_fault(table, shoe, rnd, dealt, cards)
        shoe.rounds.append(rnd)
        if burn_offset and round_no == 1:
            hooks.burn_recorded(table, shoe, rnd, burn_offset)
        position = rnd.end  # the next round starts where the recorded cards ended
        final = mini or (cut_index is not None and position > cut_index)
        if final:
            break
    if not mini and hooks.extra_round(table, shoe, shoe.rounds[-1]):
        round_no += 1
        dealt = deal_round(cards, position, round_no)
        times = _round_times(clock, rng, len(dealt.player_cards) + len(dealt.banker_cards), None)
        rnd = Round(f"{shoe_id}-R{round_no:03d}", shoe_id, round_no, *times, clock.dealer(times[0]))
        record_dealt(rnd, dealt.player_cards, dealt.banker_cards, position)
        rnd.fault = "ROUND_AFTER_CUT"
        shoe.rounds.append(rnd)
    shoe.closed_us = shoe.rounds[-1].settled_us
    return shoe


# ---------------------------------------------------------------------------------------------
# Accounts and bets


class Accounts:
    """The accounts playing at one table, with their habits (fixed across the days)."""

    def __init__(self, table: TableSpec, rng: np.random.Generator, size: int, side_codes: list[str]):
        rs = table.ruleset
        one_pos = rs.limits.one_position_per_round
        self.size = size
        self.ids = pa.array([f"A{table.index + 1:03d}-{k:06d}" for k in range(size)], pa.string())
        weights = rng.lognormal(0.0, 1.0, size)
        self.cum_weight = np.cumsum(weights) / weights.sum()
        # Main-bet style: P, B, T alone, or both P and B (a hedge; not where one position is the rule).
        alpha = np.array([0.44, 0.50, 0.03, 0.0 if one_pos else 0.03]) * 60 + 1e-9
        probs = rng.dirichlet(alpha, size)
        self.main_th = np.cumsum(probs, axis=1)[:, :3]
        self.hedge_p = probs[:, 3]
        self.tie_p = np.zeros(size) if one_pos else rng.beta(1.0, 12.0, size)
        side_bettor = rng.random(size) < 0.35
        self.side_p = np.where(side_bettor, rng.uniform(0.2, 0.8, size), 0.02)
        if not side_codes:
            self.side_p[:] = 0.0
        self.side_fav = rng.integers(0, max(len(side_codes), 1), size)
        if "no_commission" in rs.modes and "commission" in rs.modes:
            self.mode = np.where(rng.random(size) < 0.8, MODE_INDEX["commission"], MODE_INDEX["no_commission"])
        else:
            self.mode = np.full(size, MODE_INDEX[next(iter(rs.modes))])
        self.base = NICE_STAKES[rng.choice(len(NICE_STAKES), size, p=NICE_WEIGHTS / NICE_WEIGHTS.sum())]
        self.martingale = rng.random(size) < 0.12
        self.channel = rng.choice(len(CHANNELS), size, p=[0.58, 0.37, 0.05])
        self.seat = rng.integers(1, 6, size) if one_pos else None  # mini-baccarat: 5 betting boxes
        self.streak = np.zeros(size, dtype=np.int64)  # losses in a row (martingale), per day

    def bets_per_visit(self, side_open: float) -> float:
        """Mean bets of an account in a round it plays (`side_open`: share of rounds offering side bets)."""
        not_tie = 1 - (self.main_th[:, 2] - self.main_th[:, 1])
        return float(1 + self.hedge_p.mean() + (self.tie_p * not_tie).mean() + self.side_p.mean() * side_open)

    def draws_for(self, visitors: float) -> float:
        """Draws (with repeats, by activity weight) that give `visitors` distinct accounts on average."""
        w = np.diff(self.cum_weight, prepend=0.0)
        lo, hi = 0.0, max(1.0, visitors) * 50
        for _ in range(60):
            mid = (lo + hi) / 2
            if float((1 - (1 - w) ** mid).sum()) < visitors:
                lo = mid
            else:
                hi = mid
        return hi


@dataclass
class Bets:
    """Columns of the bets of one block of rounds (`ridx` points at the block's round list)."""

    ridx: np.ndarray
    acc: np.ndarray
    type: np.ndarray  # index into BET_CODES
    mode: np.ndarray  # index into MODES
    stake: np.ndarray
    paid: np.ndarray
    placed: np.ndarray  # microseconds
    n: np.ndarray  # bet number in its round (bet_id suffix)
    ghost: np.ndarray  # bool: on a round that does not exist (UNKNOWN_ROUND)
    dup: np.ndarray  # int8: 1 for an exact copy (DUPLICATE_BET)

    def __len__(self) -> int:
        return len(self.ridx)

    @staticmethod
    def concat(parts: list[Bets]) -> Bets:
        return Bets(*(np.concatenate([getattr(p, f) for p in parts]) for f in Bets.__dataclass_fields__))

    def take(self, order: np.ndarray) -> Bets:
        return Bets(*(getattr(self, f)[order] for f in Bets.__dataclass_fields__))


def side_codes_of(table: TableSpec) -> list[str]:
    """Side bets offered in every mode, the longest-lived first (a prefix is offered at any round)."""
    rs = table.ruleset
    codes = [
        c for c in BET_CODES if rs.bets.get(c) and rs.bets[c].kind == "side" and all(rs.offered(c, m) for m in rs.modes)
    ]
    return sorted(codes, key=lambda c: -(rs.bets[c].cutoff or 10**9))


def chips(x: np.ndarray) -> np.ndarray:
    """Round amounts down to what chips make: 1 EUR steps, 5 EUR steps from 100 EUR."""
    x = np.asarray(x, dtype=np.int64)
    return np.where(x >= 10_000, x // 500 * 500, x // 100 * 100)


class BetMaker:
    """Generates the bets of blocks of rounds at one table for one business day."""

    def __init__(self, table: TableSpec, accounts: Accounts, bets_per_round: float):
        self.table = table
        self.rs = table.ruleset
        self.accounts = accounts
        self.side_codes = side_codes_of(table)
        self.side_idx = np.array([BET_INDEX[c] for c in self.side_codes], dtype=np.int64)
        self.side_cutoffs = [self.rs.bets[c].cutoff for c in self.side_codes]
        # Side bets still offered at round n (n < 1000): a prefix of side_codes of this length.
        self.k_side = np.array([sum(1 for c in self.side_cutoffs if c is None or n <= c) for n in range(1000)])
        side_open = float(np.mean(self.k_side[1:71] > 0))  # a shoe deals about 70 rounds
        visitors = min(bets_per_round / accounts.bets_per_visit(side_open), accounts.size * 0.9)
        self.visit_mean = accounts.draws_for(visitors) if bets_per_round > 0 else 0.0
        lo = np.zeros(len(BET_CODES), dtype=np.int64)
        hi = np.zeros(len(BET_CODES), dtype=np.int64)
        for code, (mn, mx) in table.limits.items():
            lo[BET_INDEX[code]], hi[BET_INDEX[code]] = mn, mx
        cap = table.side_share_cap
        if cap is not None:
            for i in self.side_idx:
                hi[i] = min(hi[i], cap)
        self.lo, self.hi = lo, hi

    def make(self, rounds: list[Round], rng: np.random.Generator) -> Bets:
        acc_ = self.accounts
        R = len(rounds)
        round_no = np.array([r.round_no for r in rounds])
        outcome = np.array([-1 if r.cancelled else OUTCOME_CODE[r.outcome] for r in rounds])
        open_us = np.array([r.open_us for r in rounds], dtype=np.int64)
        k_side = self.k_side[np.minimum(round_no, len(self.k_side) - 1)]

        # Visits: accounts betting in each round (negative binomial count, weighted accounts, no repeats).
        if self.visit_mean > 0:
            shape = 5.0
            n_visit = rng.negative_binomial(shape, shape / (shape + self.visit_mean), R)
        else:
            n_visit = np.zeros(R, dtype=np.int64)
        n_visit = np.minimum(n_visit, 20 * acc_.size)
        vr = np.repeat(np.arange(R), n_visit)
        va = np.searchsorted(acc_.cum_weight, rng.random(vr.size), side="right").clip(0, acc_.size - 1)
        key = np.unique(vr.astype(np.int64) * acc_.size + va)
        vr, va = key // acc_.size, key % acc_.size
        V = vr.size

        # What each visit bets on.
        u = rng.random(V)
        th = acc_.main_th[va]
        style = (u >= th[:, 0]).astype(np.int8) + (u >= th[:, 1]) + (u >= th[:, 2])  # 0 P, 1 B, 2 T, 3 P+B
        hedge = style == 3
        tie_extra = (style != 2) & (rng.random(V) < acc_.tie_p[va])
        ks = k_side[vr]
        side = (ks > 0) & (rng.random(V) < acc_.side_p[va])
        fav = acc_.side_fav[va]
        side_pos = np.where(fav < ks, fav, (rng.random(V) * np.maximum(ks, 1)).astype(np.int64))

        # Stakes: the account's base stake, doubled after each loss in a row for martingale players.
        oc = outcome[vr]
        lost = ((style == 0) & (oc == 1)) | ((style == 1) & (oc == 0)) | ((style == 2) & ((oc == 0) | (oc == 1)))
        streak = self._streaks(va, lost)
        base = acc_.base[va]
        vary = np.array([1, 1, 1, 2, 1, 1, 1, 1])[rng.integers(0, 8, V)] * np.where(rng.random(V) < 0.15, 0.5, 1.0)
        main_stake = np.where(acc_.martingale[va], base * (2 ** np.minimum(streak, 6)), base * vary)
        main_type = np.array([I_PLAYER, I_BANKER, I_TIE, I_PLAYER])[style]
        hedge_stake = main_stake * rng.uniform(0.2, 1.0, V)
        tie_stake = base * rng.uniform(0.05, 0.3, V)
        side_stake = base * rng.uniform(0.05, 0.5, V)

        h, t, s = np.flatnonzero(hedge), np.flatnonzero(tie_extra), np.flatnonzero(side)
        visit = np.concatenate([np.arange(V), h, t, s])
        btype = np.concatenate(
            [main_type, np.full(h.size, I_BANKER), np.full(t.size, I_TIE), self.side_idx[side_pos[s]]]
        )
        raw = np.concatenate([main_stake, hedge_stake[h], tie_stake[t], side_stake[s]])
        stake = np.clip(chips(raw), self.lo[btype], self.hi[btype])
        ridx = vr[visit]
        acc = va[visit]
        N = ridx.size
        placed = open_us[ridx] + (BETTING_WINDOW * rng.random(N) ** 0.6).astype(np.int64)

        order = np.lexsort((btype, acc, placed, ridx))
        ridx, acc, btype, stake, placed = ridx[order], acc[order], btype[order], stake[order], placed[order]
        counts = np.bincount(ridx, minlength=R)
        starts = np.cumsum(counts) - counts
        n = np.arange(N) - starts[ridx] + 1
        mode = acc_.mode[acc]
        paid = self.settle(rounds, ridx, btype, mode, stake)
        return Bets(ridx, acc, btype, mode, stake, paid, placed, n, np.zeros(N, bool), np.zeros(N, np.int8))

    def settle(
        self, rounds: list[Round], ridx: np.ndarray, btype: np.ndarray, mode: np.ndarray, stake: np.ndarray
    ) -> np.ndarray:
        feats = feature_columns([r.features if r.features is not None else DUMMY_FEATURES for r in rounds])
        cancelled = np.array([r.cancelled for r in rounds], dtype=bool)
        return settle_columns(self.rs, BET_CODES_NP[btype], MODES_NP[mode], stake, ridx, feats, cancelled)

    def _streaks(self, va: np.ndarray, lost: np.ndarray) -> np.ndarray:
        """Losses in a row before each visit (visits are in round order), carrying the day's state."""
        V = va.size
        if V == 0:
            return np.zeros(0, dtype=np.int64)
        order = np.argsort(va, kind="stable")  # by account, then round (visits come round by round)
        a = va[order]
        lo = lost[order]
        pos = np.arange(V)
        new_group = np.ones(V, dtype=bool)
        new_group[1:] = a[1:] != a[:-1]
        g_start = np.maximum.accumulate(np.where(new_group, pos, 0))
        resets = np.where(~lo, pos, -1)
        prev = np.empty(V, dtype=np.int64)
        prev[0] = -1
        prev[1:] = np.maximum.accumulate(resets)[:-1]
        in_group = prev >= g_start
        streak_sorted = np.where(in_group, pos - prev - 1, pos - g_start + self.accounts.streak[a])
        # The state after the block: each account's last visit.
        last = np.ones(V, dtype=bool)
        last[:-1] = a[1:] != a[:-1]
        self.accounts.streak[a[last]] = np.where(lo[last], streak_sorted[last] + 1, 0)
        out = np.empty(V, dtype=np.int64)
        out[order] = streak_sorted
        return out
