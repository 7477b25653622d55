"""Planting faults in what the baccarat tables record (the manifest they are written to: manifest.py).

docs/findings.md is the contract: one manifest row per expected finding. Each kind is planted with
probability `rate` per eligible item (a shoe for shoe kinds, a round for round kinds, a bet for bet
kinds); a requested kind not planted yet is forced on the first eligible item met, so a run of
modest size holds every kind. Faults never share an item: a shoe with a shoe-level fault gets no
round-level fault, a round with a round-level fault gets no bet fault, and an account gets at most
one bet fault per round. Bets of cancelled rounds only get 'cancelled round not refunded'.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from engine.cards import CARD_CODES, SUITS
from engine.games.baccarat.dealing import (
    BANKER,
    PLAYER,
    TIE,
    DealtRound,
    deal_round,
    dealing_order,
    score,
    third_card_decisions,
)
from engine.games.baccarat.features import feature_columns
from engine.games.baccarat.ruleset import BET_CODES
from engine.games.baccarat.settlement import matching_rule, settle_columns
from pitboss.recorder.config import BETTING_WINDOW, SECOND
from pitboss.recorder.manifest import GHOST, MANIFEST_SCHEMA, Manifest, bet_id, instant_text, kinds_to_plant
from pitboss.recorder.simulate import (
    BET_CODES_NP,
    BET_INDEX,
    DUMMY_FEATURES,
    I_BANKER,
    I_PLAYER,
    I_TIE,
    MODE_INDEX,
    MODES,
    MODES_NP,
    OUTCOME_CODE,
    Accounts,
    BetMaker,
    Bets,
    DealingHooks,
    Round,
    Shoe,
    chips,
    record_dealt,
)

if TYPE_CHECKING:
    from pitboss.recorder.baccarat import TableSpec

__all__ = ["FAULT_KINDS", "GHOST", "MANIFEST_SCHEMA", "FaultPlanner", "bet_id", "instant_text", "kinds_to_plant"]

SHOE_KINDS = ("SHOE_COMPOSITION", "BURN_MISMATCH")
ROUND_KINDS = ("CARD_SEQUENCE_MISMATCH", "THIRD_CARD_RULE", "SCORE_MISMATCH", "ROUND_AFTER_CUT")
BET_KINDS = (
    "OVERPAID", "UNDERPAID", "STAKE_BELOW_MIN", "STAKE_ABOVE_MAX", "PB_DIFFERENCE_LIMIT",
    "SIDE_BET_CUTOFF", "PAIR_WITHOUT_MAIN", "SIDE_BET_ABOVE_SHARE", "MULTIPLE_POSITIONS", "LATE_BET",
    "BET_TYPE_NOT_OFFERED", "UNKNOWN_ROUND", "DUPLICATE_BET",
)  # fmt: skip
FAULT_KINDS: tuple[str, ...] = SHOE_KINDS + ROUND_KINDS + BET_KINDS


def _odds(f: Fraction) -> str:
    return f"{f.numerator}:{f.denominator}"


def occurrences(cards: list[str], block: tuple[str, ...], lo: int, hi: int) -> list[int]:
    """Starts in [lo, hi] where `cards` continues with `block`."""
    n = len(block)
    return [s for s in range(max(lo, 0), min(hi, len(cards) - n) + 1) if tuple(cards[s : s + n]) == block]


def third_card_broken(player: tuple[str, ...], banker: tuple[str, ...]) -> bool:
    """The recorded hands took or skipped a third card against the rule."""
    p_dec, b_dec = third_card_decisions(player, banker)
    return (len(player) > 2) != p_dec.draws or (len(banker) > 2) != b_dec.draws


class FaultPlanner(Manifest, DealingHooks):
    """Baccarat's faults: planted while a shoe is dealt (DealingHooks) and on each block of bets."""

    # -- shoe and round faults (DealingHooks) ---------------------------------------------------

    def shoe_fault(self, table: TableSpec, shoe: Shoe, cards: list[str]) -> int:
        if not self.kinds:
            return 0
        proc = table.ruleset.shoe
        kind = self.pick(["SHOE_COMPOSITION"] + (["BURN_MISMATCH"] if proc.burn else []))
        if kind == "SHOE_COMPOSITION":
            # A card behind the cut card (never dealt: the cut-card round ends at most 6 cards past it).
            lo = shoe.cut_index + 8 if shoe.cut_index is not None else 8
            j = int(self.rng.integers(lo, len(shoe.cards)))
            old = int(shoe.cards[j])
            new = (old + int(self.rng.integers(1, 52))) % 52
            shoe.cards[j] = new
            if j < len(cards):
                cards[j] = CARD_CODES[new]
            shoe.fault = kind
            was, now = CARD_CODES[old], CARD_CODES[new]
            change = f"shoes.cards[{j}] {was} replaced by a copy of {now} (never dealt): {was} short, {now} extra"
            self.record(kind, shoe.shoe_id, None, None, change)
            return 0
        if kind == "BURN_MISMATCH":
            from engine.games.baccarat.shoe import burn_procedure

            start = burn_procedure(cards, proc).first_round_start
            for delta in (1, -1) if self.rng.random() < 0.5 else (-1, 1):
                # The first round must be found at one offset only near the burn (the audit looks there).
                block = deal_round(cards, start + delta).dealing_order
                if occurrences(cards, block, 0, start + 24) == [start + delta]:
                    shoe.fault = kind
                    return delta
        return 0

    def burn_recorded(self, table: TableSpec, shoe: Shoe, first: Round, offset: int) -> None:
        from engine.games.baccarat.shoe import burn_procedure

        burn = burn_procedure([CARD_CODES[i] for i in shoe.cards[:1]], table.ruleset.shoe)
        first.fault = "BURN_MISMATCH"
        self.record("BURN_MISMATCH", shoe.shoe_id, first.round_id, None,
                    f"turned card {burn.turned_card} burns {burn.burned}; dealer burned {burn.burned + offset}: "
                    f"first round dealt from card {first.start} instead of {first.start - offset}")  # fmt: skip

    def round_fault(self, table: TableSpec, shoe: Shoe, rnd: Round, dealt: DealtRound, cards: list[str]) -> None:
        if not self.kinds or shoe.fault is not None:
            return
        p, b = rnd.player, rnd.banker
        swappable = [("player", i) for i in range(len(p)) if i == 2 or p[0][0] != p[1][0]]
        swappable += [("banker", i) for i in range(len(b)) if i == 2 or b[0][0] != b[1][0]]
        candidates = ["CARD_SEQUENCE_MISMATCH"] if swappable else []
        if shoe.cut_index is None or rnd.start + 7 <= shoe.cut_index:
            candidates.append("THIRD_CARD_RULE")  # away from the cut card: it cannot move the last round
        candidates.append("SCORE_MISMATCH")
        kind = self.pick(candidates)
        if kind is None:
            return
        rnd.fault = kind
        if kind == "CARD_SEQUENCE_MISMATCH":
            # One card read with another suit (same rank, not a card of a pair). The misread block must
            # not occur in the shoe near the round, else it would look dealt from another position.
            options = [(hand, i, suit) for hand, i in swappable for suit in SUITS]
            for k in self.rng.permutation(len(options)):
                hand, i, suit = options[int(k)]
                new_p, new_b = list(p), list(b)
                hand_cards = new_p if hand == "player" else new_b
                old = hand_cards[i]
                if suit == old[1]:
                    continue
                hand_cards[i] = old[0] + suit
                if not occurrences(cards, dealing_order(new_p, new_b), rnd.start - 12, rnd.start + 20):
                    break
            else:
                rnd.fault = None
                return
            before = rnd.features
            record_dealt(rnd, tuple(new_p), tuple(new_b), rnd.start)
            assert rnd.features == before
            change = f"{hand} card {i + 1} recorded as {hand_cards[i]}, the shoe dealt {old} (same rank)"
            self.record(kind, shoe.shoe_id, rnd.round_id, None, change)
        elif kind == "THIRD_CARD_RULE":
            start = rnd.start
            natural = score(p[:2]) >= 8 or score(b[:2]) >= 8
            if natural:
                new_p, new_b = p[:2] + (cards[start + 4],), b[:2]
                what = f"Player took a third card ({new_p[2]}) on a natural"
            elif len(b) > 2:
                new_p, new_b = p, b[:2]
                what = f"Banker stood on {score(b[:2])} where the rule draws (withheld {b[2]})"
            else:
                new_p, new_b = p, b[:2] + (cards[start + len(p) + 2],)
                what = f"Banker drew a third card ({new_b[2]}) on {score(b[:2])} where the rule stands"
            assert third_card_broken(new_p, new_b)
            before = f"{rnd.player_score}-{rnd.banker_score} {rnd.outcome}"
            record_dealt(rnd, new_p, new_b, start)
            self.record(kind, shoe.shoe_id, rnd.round_id, None,
                        f"{what}; recorded {' '.join(new_p)} / {' '.join(new_b)}, "
                        f"{rnd.player_score}-{rnd.banker_score} {rnd.outcome} (by the rule: {before})")  # fmt: skip
        else:
            field = ("player_score", "banker_score", "outcome")[int(self.rng.integers(3))]
            old = getattr(rnd, field)
            if field == "outcome":
                new = [o for o in (PLAYER, BANKER, TIE) if o != old][int(self.rng.integers(2))]
            else:
                new = (old + int(self.rng.integers(1, 10))) % 10
            setattr(rnd, field, new)
            self.record(kind, shoe.shoe_id, rnd.round_id, None, f"{field} recorded as {new}, the cards give {old}")

    def extra_round(self, table: TableSpec, shoe: Shoe, last: Round) -> bool:
        if not self.kinds or shoe.fault is not None:
            return False
        if self.pick(["ROUND_AFTER_CUT"]) is None:
            return False
        self.record("ROUND_AFTER_CUT", shoe.shoe_id, f"{shoe.shoe_id}-R{last.round_no + 1:03d}", None,
                    f"round {last.round_no + 1} dealt after the cut-card round {last.round_no} "
                    f"(cut_index {shoe.cut_index}, cut card out at card {last.end - 1})")  # fmt: skip
        return True

    # -- bet faults -----------------------------------------------------------------------------

    def plant_bets(
        self, table: TableSpec, rounds: list[Round], bets: Bets, maker: BetMaker, accounts: Accounts,
        kept: np.ndarray | None = None,
    ) -> Bets:
        """The bet faults of a block of rounds; `kept`: bets that carry a fault already (ruleset_change.py),
        left alone with their (round, account)."""
        kinds = [k for k in BET_KINDS if k in self.kinds]
        if not kinds or len(bets) == 0:
            return bets
        return _BetPlanting(self, table, rounds, bets, maker, accounts, kept).run(kinds)


class _BetPlanting:
    """Bet faults of one block of rounds: candidates drawn per kind with numpy and applied in bulk.

    Bets arrive sorted by round. A kind's candidates are its eligible bets whose draw is below the
    rate (or, while the kind is still needed, the first eligible bet), at most one per (round,
    account) pair and none on a bet or pair that already has a fault.
    """

    def __init__(
        self,
        planner: FaultPlanner,
        table: TableSpec,
        rounds: list[Round],
        bets: Bets,
        maker: BetMaker,
        accounts: Accounts,
        kept: np.ndarray | None = None,
    ):
        self.p = planner
        self.rng = planner.rng
        self.table = table
        self.rs = table.ruleset
        self.rounds = rounds
        self.b = bets
        self.maker = maker
        self.accounts = accounts
        R = len(rounds)
        self.round_ids = [r.round_id for r in rounds]
        self.shoe_ids = [r.shoe_id for r in rounds]
        self.cancelled = np.array([r.cancelled for r in rounds], dtype=bool)
        self.rfault = np.array([r.fault is not None for r in rounds], dtype=bool)
        self.open = np.array([r.open_us for r in rounds], dtype=np.int64)
        self.closed = np.array([r.closed_us for r in rounds], dtype=np.int64)
        self.round_no = np.array([r.round_no for r in rounds], dtype=np.int64)
        # Outcome of the cards (what the bets are paid on), -1 where none.
        self.outcome = np.array([OUTCOME_CODE[r.features["outcome"]] if r.features else -1 for r in rounds])
        self.feats = feature_columns([r.features or DUMMY_FEATURES for r in rounds])
        self.pool = accounts.size
        self.group = bets.ridx.astype(np.int64) * self.pool + bets.acc
        self.busy = np.zeros(R * self.pool, dtype=bool)  # (round, account) pairs with a fault
        self.taken = np.zeros(len(bets), dtype=bool)
        if kept is not None:
            self.taken |= kept
            self.busy[self.group[kept]] = True
        self.next_n = np.bincount(bets.ridx, minlength=R).astype(np.int64) + 1
        self.round_start = np.searchsorted(bets.ridx, np.arange(R + 1))
        lo = np.zeros(len(BET_CODES), dtype=np.int64)
        hi = np.zeros(len(BET_CODES), dtype=np.int64)
        for code, (mn, mx) in table.limits.items():
            lo[BET_INDEX[code]], hi[BET_INDEX[code]] = mn, mx
        self.lim_lo, self.lim_hi = lo, hi
        self.added: list[Bets] = []

    # -- helpers ----------------------------------------------------------------------------------

    def credit(self, ridx: np.ndarray, types: np.ndarray, modes: np.ndarray, stakes: np.ndarray) -> np.ndarray:
        """What a correct operator credits (the engine's vectorised settlement)."""
        return settle_columns(self.rs, BET_CODES_NP[types], MODES_NP[modes], stakes, ridx, self.feats, self.cancelled)

    def alloc_n(self, ridx: np.ndarray) -> np.ndarray:
        """Bet numbers for new bets on rounds `ridx`, after the round's existing ones."""
        out = np.empty(len(ridx), dtype=np.int64)
        for k, r in enumerate(ridx.tolist()):
            out[k] = self.next_n[r]
            self.next_n[r] += 1
        return out

    def add(self, ridx, acc, types, modes, stakes, paid, placed, n, ghost: bool = False, dup: int = 0) -> None:
        k = len(ridx)
        cols = (ridx, acc, types, modes, stakes, paid, placed, n, np.full(k, ghost), np.full(k, dup))
        self.added.append(
            Bets(
                *(
                    np.asarray(c).astype(getattr(self.b, f).dtype)
                    for c, f in zip(cols, Bets.__dataclass_fields__, strict=True)
                )
            )
        )

    def in_window(self, ridx: np.ndarray) -> np.ndarray:
        return self.open[ridx] + self.rng.integers(SECOND // 2, BETTING_WINDOW, len(ridx))

    def side_stakes(self, types: np.ndarray) -> np.ndarray:
        base = self.accounts.base[self.rng.integers(0, self.pool, len(types))]
        return np.clip(chips(base), self.maker.lo[types], self.maker.hi[types])

    def record(self, kind: str, ridx: np.ndarray, n: np.ndarray, changes: list[str], ghost: bool = False) -> None:
        suffix = GHOST if ghost else ""
        rids = [self.round_ids[r] + suffix for r in ridx.tolist()]
        bids = [bet_id(rid, k) for rid, k in zip(rids, n.tolist(), strict=True)]
        shoes = [None] * len(rids) if ghost else [self.shoe_ids[r] for r in ridx.tolist()]
        self.p.record_many(kind, shoes, rids, bids, changes)

    def record_at(self, kind: str, c: np.ndarray, changes: list[str]) -> None:
        self.record(kind, self.b.ridx[c], self.b.n[c], changes)

    def restake(self, kind: str, c: np.ndarray, new: np.ndarray, texts: list[str]) -> np.ndarray:
        b = self.b
        new = np.asarray(new, dtype=np.int64)
        new_paid = self.credit(b.ridx[c], b.type[c], b.mode[c], new)
        changes = [
            f"{t}; paid {o} -> {p}" for t, o, p in zip(texts, b.paid[c].tolist(), new_paid.tolist(), strict=True)
        ]
        b.stake[c] = new
        b.paid[c] = new_paid
        self.record_at(kind, c, changes)
        return c

    def idle_account(self, r: int) -> int | None:
        """An account with no bet and no fault in round r (marked busy)."""
        present = set(self.b.acc[self.round_start[r] : self.round_start[r + 1]].tolist())
        for _ in range(50):
            a = int(self.rng.integers(self.pool))
            if a not in present and not self.busy[r * self.pool + a]:
                self.busy[r * self.pool + a] = True
                return a
        return None

    def odds(self, i: int) -> Fraction:
        rule = matching_rule(self.rs.paytable(BET_CODES[self.b.type[i]], MODES[self.b.mode[i]]),
                             self.rounds[self.b.ridx[i]].features)  # fmt: skip
        return rule.odds

    def not_offered(self) -> list[str]:
        return [c for c in BET_CODES if c not in self.rs.bets]

    # -- eligibility and the loop -----------------------------------------------------------------

    def eligible(self, kind: str) -> np.ndarray:
        b, rs = self.b, self.rs
        ok = ~self.cancelled[b.ridx] & ~self.rfault[b.ridx]
        t = b.type
        is_pb = (t == I_PLAYER) | (t == I_BANKER)
        is_side = t > I_TIE
        pb_rule = rs.limits.player_banker_difference
        share_rule = rs.limits.side_bet_max_share_of_table_max is not None
        oc = self.outcome[b.ridx]
        won_odds = is_side & (b.paid > b.stake)
        none = np.zeros(len(b), dtype=bool)
        if kind == "OVERPAID":
            return ok & (((t == I_BANKER) & (b.mode == MODE_INDEX["commission"]) & (oc == 1)) | won_odds)
        if kind == "UNDERPAID":
            return (ok & ((is_pb & (oc == 2)) | won_odds)) | (self.cancelled[b.ridx] & ~self.rfault[b.ridx])
        if kind in ("STAKE_BELOW_MIN", "LATE_BET", "UNKNOWN_ROUND"):
            return ok
        if kind == "STAKE_ABOVE_MAX":
            return ok & ~(pb_rule & is_pb) & ~(share_rule & is_side)
        if kind == "PB_DIFFERENCE_LIMIT":
            return ok & is_pb if pb_rule else none
        if kind == "SIDE_BET_CUTOFF":
            cutoffs = [c for c in self.maker.side_cutoffs if c is not None]
            return ok & (self.round_no[b.ridx] > min(cutoffs)) if cutoffs else none
        if kind == "PAIR_WITHOUT_MAIN":
            return ok if rs.limits.side_bets_require_main_bet and self.maker.side_codes else none
        if kind == "SIDE_BET_ABOVE_SHARE":
            return ok & is_side if share_rule else none
        if kind == "MULTIPLE_POSITIONS":
            return ok & (b.placed < self.closed[b.ridx] - SECOND) if rs.limits.one_position_per_round else none
        if kind == "BET_TYPE_NOT_OFFERED":
            return ok if self.not_offered() else none
        if kind == "DUPLICATE_BET":
            # Not where a copy could read as a second position or add to a Player/Banker difference.
            return none if rs.limits.one_position_per_round else ok & ~(pb_rule & is_pb)
        raise ValueError(kind)

    def run(self, kinds: list[str]) -> Bets:
        n = len(self.b)
        for kind in kinds:
            elig = self.eligible(kind) & ~self.taken & ~self.busy[self.group]
            u = self.rng.random(n)
            cand = np.flatnonzero(elig & (u < self.p.rate))
            if cand.size == 0 and kind in self.p.needed:
                cand = np.flatnonzero(elig)[:1]  # forced: the first eligible bet
            if cand.size == 0:
                continue
            _, first = np.unique(self.group[cand], return_index=True)
            cand = cand[np.sort(first)]
            done = getattr(self, "plant_" + kind.lower())(cand)
            self.taken[done] = True
            self.busy[self.group[done]] = True
        if not self.added:
            return self.b
        allb = Bets.concat([self.b, *self.added])
        return allb.take(np.lexsort((allb.dup, allb.n, allb.ghost, allb.ridx)))

    # -- one method per kind (docs/findings.md) ---------------------------------------------------

    def plant_overpaid(self, c: np.ndarray) -> np.ndarray:
        b = self.b
        stake, paid = b.stake[c], b.paid[c]
        banker = b.type[c] == I_BANKER
        new = np.where(banker, 2 * stake, paid + stake)  # 1:1 instead of 0.95:1 / one unit of odds more
        changes = []
        for k, i in enumerate(c.tolist()):
            if banker[k]:
                changes.append(f"BANKER commission-mode win paid 1:1 instead of 0.95:1: paid {paid[k]} -> {new[k]}")
            else:
                odds = self.odds(i)
                changes.append(f"{BET_CODES[b.type[i]]} win paid at {_odds(odds + 1)} instead of {_odds(odds)}: "
                               f"paid {paid[k]} -> {new[k]}")  # fmt: skip
        b.paid[c] = new
        self.record_at("OVERPAID", c, changes)
        return c

    def plant_underpaid(self, c: np.ndarray) -> np.ndarray:
        b = self.b
        stake, paid, r = b.stake[c], b.paid[c], b.ridx[c]
        cancelled = self.cancelled[r]
        tie = ~cancelled & (b.type[c] <= I_BANKER) & (self.outcome[r] == 2)
        new = np.where(cancelled | tie, 0, paid - stake)  # not refunded / not pushed / one unit of odds less
        changes = []
        for k, i in enumerate(c.tolist()):
            code = BET_CODES[b.type[i]]
            if cancelled[k]:
                changes.append(f"cancelled round not refunded: paid {paid[k]} -> 0")
            elif tie[k]:
                changes.append(f"{code} bet on a tie not pushed: paid {paid[k]} -> 0")
            else:
                odds = self.odds(i)
                changes.append(
                    f"{code} win paid at {_odds(odds - 1)} instead of {_odds(odds)}: paid {paid[k]} -> {new[k]}"
                )
        b.paid[c] = new
        self.record_at("UNDERPAID", c, changes)
        return c

    def plant_stake_below_min(self, c: np.ndarray) -> np.ndarray:
        mn = self.lim_lo[self.b.type[c]]
        new = np.array([10, 20, 25, 50])[self.rng.integers(0, 4, len(c))]
        keep = new < mn
        c, new, mn = c[keep], new[keep], mn[keep]
        texts = [
            f"stake {s} -> {v} (min_stake {m})"
            for s, v, m in zip(self.b.stake[c].tolist(), new.tolist(), mn.tolist(), strict=True)
        ]
        return self.restake("STAKE_BELOW_MIN", c, new, texts)

    def plant_stake_above_max(self, c: np.ndarray) -> np.ndarray:
        mx = self.lim_hi[self.b.type[c]]
        new = mx + 100 * self.rng.integers(1, np.maximum(2, mx // 400))
        texts = [
            f"stake {s} -> {v} (max_stake {m})"
            for s, v, m in zip(self.b.stake[c].tolist(), new.tolist(), mx.tolist(), strict=True)
        ]
        return self.restake("STAKE_ABOVE_MAX", c, new, texts)

    def plant_pb_difference_limit(self, c: np.ndarray) -> np.ndarray:
        b = self.b
        size = len(self.busy)
        is_p, is_b = b.type == I_PLAYER, b.type == I_BANKER
        p_tot = np.bincount(self.group[is_p], weights=b.stake[is_p], minlength=size).astype(np.int64)
        b_tot = np.bincount(self.group[is_b], weights=b.stake[is_b], minlength=size).astype(np.int64)
        g = self.group[c]
        player = b.type[c] == I_PLAYER
        other = np.where(player, b_tot[g], p_tot[g])
        mx = self.lim_hi[b.type[c]]
        new = mx + other + 500 * self.rng.integers(1, 200, len(c))
        texts = [
            f"stake {s} -> {v}: {a} {v} - {z} {o} > {a} max {m}"
            for s, v, o, m, a, z in zip(b.stake[c].tolist(), new.tolist(), other.tolist(), mx.tolist(),
                                        np.where(player, PLAYER, BANKER), np.where(player, BANKER, PLAYER), strict=True)
        ]  # fmt: skip
        return self.restake("PB_DIFFERENCE_LIMIT", c, new, texts)

    def plant_side_bet_cutoff(self, c: np.ndarray) -> np.ndarray:
        b = self.b
        done, types = [], []
        for i in c.tolist():
            mode, rn = MODES[b.mode[i]], self.round_no[b.ridx[i]]
            late = [BET_INDEX[code] for code, cut in zip(self.maker.side_codes, self.maker.side_cutoffs, strict=True)
                    if cut is not None and rn > cut and self.rs.offered(code, mode)]  # fmt: skip
            if late:
                done.append(i)
                types.append(late[int(self.rng.integers(len(late)))])
        done_a, types_a = np.array(done, dtype=np.int64), np.array(types, dtype=np.int64)
        r = b.ridx[done_a]
        stakes = self.side_stakes(types_a)
        n = self.alloc_n(r)
        self.add(r, b.acc[done_a], types_a, b.mode[done_a], stakes, self.credit(r, types_a, b.mode[done_a], stakes),
                 self.in_window(r), n)  # fmt: skip
        changes = [f"{BET_CODES[t]} bet added on round {self.round_no[x]} (cutoff {self.rs.bets[BET_CODES[t]].cutoff})"
                   for t, x in zip(types_a.tolist(), r.tolist(), strict=True)]  # fmt: skip
        self.record("SIDE_BET_CUTOFF", r, n, changes)
        return done_a

    def _idle_bets(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        done, accs = [], []
        for i in c.tolist():
            a = self.idle_account(int(self.b.ridx[i]))
            if a is not None:
                done.append(i)
                accs.append(a)
        return np.array(done, dtype=np.int64), np.array(accs, dtype=np.int64)

    def plant_pair_without_main(self, c: np.ndarray) -> np.ndarray:
        done, accs = self._idle_bets(c)
        r = self.b.ridx[done]
        types = self.maker.side_idx[self.rng.integers(0, len(self.maker.side_idx), len(done))]
        modes = np.full(len(done), MODE_INDEX["commission"])
        stakes = self.side_stakes(types)
        n = self.alloc_n(r)
        self.add(r, accs, types, modes, stakes, self.credit(r, types, modes, stakes), self.in_window(r), n)
        ids = self.accounts.ids
        changes = [f"{BET_CODES[t]} bet added for account {ids[a].as_py()} with no main bet in the round"
                   for t, a in zip(types.tolist(), accs.tolist(), strict=True)]  # fmt: skip
        self.record("PAIR_WITHOUT_MAIN", r, n, changes)
        return done

    def plant_side_bet_above_share(self, c: np.ndarray) -> np.ndarray:
        cap = self.table.side_share_cap
        mx = self.lim_hi[self.b.type[c]]
        new = cap + 500 * self.rng.integers(1, (mx - cap) // 500 + 1)
        texts = [f"stake {s} -> {v} (share cap {cap} of table_max {self.table.table_max}; limits max {m})"
                 for s, v, m in zip(self.b.stake[c].tolist(), new.tolist(), mx.tolist(), strict=True)]  # fmt: skip
        return self.restake("SIDE_BET_ABOVE_SHARE", c, new, texts)

    def plant_multiple_positions(self, c: np.ndarray) -> np.ndarray:
        b = self.b
        r = b.ridx[c]
        others = np.array([[I_BANKER, I_TIE], [I_PLAYER, I_TIE], [I_PLAYER, I_BANKER]])
        types = others[b.type[c], self.rng.integers(0, 2, len(c))]
        placed = b.placed[c] + 1 + self.rng.integers(0, self.closed[r] - b.placed[c] - 1)
        stakes = np.clip(chips(b.stake[c]), self.maker.lo[types], self.maker.hi[types])
        n = self.alloc_n(r)
        self.add(r, b.acc[c], types, b.mode[c], stakes, self.credit(r, types, b.mode[c], stakes), placed, n)
        changes = [f"second position {BET_CODES[t]} added for the account of {bet_id(self.round_ids[x], k)} "
                   f"({BET_CODES[o]}) at {ts}"
                   for t, x, k, o, ts in zip(types.tolist(), r.tolist(), b.n[c].tolist(), b.type[c].tolist(),
                                             _ts_many(placed), strict=True)]  # fmt: skip
        self.record("MULTIPLE_POSITIONS", r, n, changes)
        return c

    def plant_late_bet(self, c: np.ndarray) -> np.ndarray:
        b = self.b
        closed = self.closed[b.ridx[c]]
        new = closed + self.rng.integers(SECOND // 5, 3 * SECOND, len(c))
        changes = [f"placed_at {a} -> {z} (betting closed {x})"
                   for a, z, x in zip(_ts_many(b.placed[c]), _ts_many(new), _ts_many(closed), strict=True)]  # fmt: skip
        b.placed[c] = new
        self.record_at("LATE_BET", c, changes)
        return c

    def plant_bet_type_not_offered(self, c: np.ndarray) -> np.ndarray:
        b = self.b
        codes = np.array([BET_INDEX[x] for x in self.not_offered()])
        if self.rs.limits.one_position_per_round:
            c, accs = self._idle_bets(c)  # a second bet of the account could read as a second position
            modes = np.full(len(c), MODE_INDEX["commission"])
        else:
            accs, modes = b.acc[c], b.mode[c]
        r = b.ridx[c]
        types = codes[self.rng.integers(0, len(codes), len(c))]
        stakes = 100 * self.rng.integers(1, 51, len(c))
        n = self.alloc_n(r)
        self.add(r, accs, types, modes, stakes, stakes, self.in_window(r), n)  # refunded
        changes = [f"{BET_CODES[t]} ({MODES[m]}) bet added, not offered by {self.rs.id}; refunded {s}"
                   for t, m, s in zip(types.tolist(), modes.tolist(), stakes.tolist(), strict=True)]  # fmt: skip
        self.record("BET_TYPE_NOT_OFFERED", r, n, changes)
        return c

    def plant_unknown_round(self, c: np.ndarray) -> np.ndarray:
        b = self.b
        r = b.ridx[c]
        run_start = np.r_[0, np.flatnonzero(np.diff(r)) + 1]
        n = np.arange(len(c)) - np.repeat(run_start, np.diff(np.r_[run_start, len(c)])) + 1
        self.add(r, b.acc[c], b.type[c], b.mode[c], b.stake[c], b.stake[c], b.placed[c] + 1, n, ghost=True)
        changes = [
            f"bet on round {self.round_ids[x]}{GHOST}, which is not in rounds (copy of {bet_id(self.round_ids[x], k)})"
            for x, k in zip(r.tolist(), b.n[c].tolist(), strict=True)
        ]
        self.record("UNKNOWN_ROUND", r, n, changes, ghost=True)
        return c

    def plant_duplicate_bet(self, c: np.ndarray) -> np.ndarray:
        b = self.b
        self.add(b.ridx[c], b.acc[c], b.type[c], b.mode[c], b.stake[c], b.paid[c], b.placed[c], b.n[c], dup=1)
        self.record_at("DUPLICATE_BET", c, ["bet row written twice (same bet_id, same values)"] * len(c))
        return c


def _ts_many(us: np.ndarray) -> list[str]:
    return [s + "Z" for s in np.datetime_as_string(np.asarray(us, dtype=np.int64).astype("datetime64[us]"), unit="us")]
