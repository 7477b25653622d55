"""Planting faults in what the tables record, and the ground-truth manifest of the findings they cause.

docs/findings.md is the contract: one manifest row per expected finding. Each kind is planted with
probability `rate` per eligible item (a shoe for shoe kinds, a round for round kinds, a bet for bet
kinds); a requested kind not planted yet is forced on the first eligible item met, so a run of
modest size holds every kind. Faults never share an item: a shoe with a shoe-level fault gets no
round-level fault, a round with a round-level fault gets no bet fault, and an account gets at most
one bet fault per round. Bets of cancelled rounds only get 'cancelled round not refunded'.
"""

from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction

import numpy as np
import pyarrow as pa

from engine.baccarat import BANKER, PLAYER, TIE, DealtRound, deal_round, dealing_order, score, third_card_decisions
from engine.cards import CARD_CODES, SUITS
from engine.ruleset import BET_CODES
from engine.settlement import matching_rule, settle
from pitboss.recorder.config import SECOND, TableSpec
from pitboss.recorder.simulate import (
    BET_INDEX,
    I_BANKER,
    I_PLAYER,
    I_TIE,
    MODE_INDEX,
    MODES,
    Accounts,
    BetMaker,
    Bets,
    DealingHooks,
    Round,
    Shoe,
    chips,
    record_dealt,
)

SHOE_KINDS = ("SHOE_COMPOSITION", "BURN_MISMATCH")
ROUND_KINDS = ("CARD_SEQUENCE_MISMATCH", "THIRD_CARD_RULE", "SCORE_MISMATCH", "ROUND_AFTER_CUT")
BET_KINDS = (
    "OVERPAID", "UNDERPAID", "STAKE_BELOW_MIN", "STAKE_ABOVE_MAX", "PB_DIFFERENCE_LIMIT",
    "SIDE_BET_CUTOFF", "PAIR_WITHOUT_MAIN", "SIDE_BET_ABOVE_SHARE", "MULTIPLE_POSITIONS", "LATE_BET",
    "BET_TYPE_NOT_OFFERED", "UNKNOWN_ROUND", "DUPLICATE_BET",
)  # fmt: skip
FAULT_KINDS: tuple[str, ...] = SHOE_KINDS + ROUND_KINDS + BET_KINDS

MANIFEST_SCHEMA = pa.schema(
    [
        pa.field("fault_id", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("table_id", pa.string(), nullable=False),
        pa.field("shoe_id", pa.string()),
        pa.field("round_id", pa.string()),
        pa.field("bet_id", pa.string()),
        pa.field("change", pa.string(), nullable=False),
    ]
)
GHOST = "-GHOST"


def bet_id(round_id: str, n: int) -> str:
    return f"{round_id}-B{n:04d}"


def _odds(f: Fraction) -> str:
    return f"{f.numerator}:{f.denominator}"


def _ts(us: int) -> str:
    return datetime.fromtimestamp(us / SECOND, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def occurrences(cards: list[str], block: tuple[str, ...], lo: int, hi: int) -> list[int]:
    """Starts in [lo, hi] where `cards` continues with `block`."""
    n = len(block)
    return [s for s in range(max(lo, 0), min(hi, len(cards) - n) + 1) if tuple(cards[s : s + n]) == block]


def third_card_broken(player: tuple[str, ...], banker: tuple[str, ...]) -> bool:
    """The recorded hands took or skipped a third card against the rule."""
    p_dec, b_dec = third_card_decisions(player, banker)
    return (len(player) > 2) != p_dec.draws or (len(banker) > 2) != b_dec.draws


class FaultPlanner(DealingHooks):
    def __init__(self, kinds: tuple[str, ...], rate: float):
        self.kinds = frozenset(kinds)
        self.rate = rate
        self.needed = set(kinds)  # requested kinds not planted yet: forced on the next eligible item
        self.counts = {k: 0 for k in kinds}
        self.rng = np.random.default_rng(0)
        self.table: TableSpec | None = None
        self.prefix = ""
        self.rows: list[tuple] = []
        self.n_unit = 0

    # -- bookkeeping ----------------------------------------------------------------------------

    def start_unit(self, table: TableSpec, business_date: str, rng: np.random.Generator) -> None:
        """A new table-day: its own random stream and fault-id prefix."""
        self.table, self.rng = table, rng
        self.prefix = f"F-{table.table_id}-{business_date.replace('-', '')}-"
        self.n_unit = 0

    def record(self, kind: str, shoe_id: str | None, round_id: str | None, bet: str | None, change: str) -> None:
        assert self.table is not None
        self.n_unit += 1
        self.rows.append((f"{self.prefix}{self.n_unit:05d}", kind, self.table.table_id, shoe_id, round_id, bet, change))
        self.counts[kind] += 1
        self.needed.discard(kind)

    def take_rows(self) -> pa.Table:
        cols = list(zip(*self.rows, strict=True)) if self.rows else [[] for _ in MANIFEST_SCHEMA]
        self.rows = []
        return pa.table(
            [pa.array(c, f.type) for c, f in zip(cols, MANIFEST_SCHEMA, strict=True)], schema=MANIFEST_SCHEMA
        )

    def pick(self, candidates: list[str]) -> str | None:
        """The kind to plant on an item eligible for `candidates`, if any (at most one)."""
        for kind in candidates:
            if kind not in self.kinds:
                continue
            if kind in self.needed or self.rng.random() < self.rate:
                return kind
        return None

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
            from engine.shoe import burn_procedure

            start = burn_procedure(cards, proc).first_round_start
            for delta in (1, -1) if self.rng.random() < 0.5 else (-1, 1):
                # The first round must be found at one offset only near the burn (the audit looks there).
                block = deal_round(cards, start + delta).dealing_order
                if occurrences(cards, block, 0, start + 24) == [start + delta]:
                    shoe.fault = kind
                    return delta
        return 0

    def burn_recorded(self, table: TableSpec, shoe: Shoe, first: Round, offset: int) -> None:
        from engine.shoe import burn_procedure

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
        self, table: TableSpec, rounds: list[Round], bets: Bets, maker: BetMaker, accounts: Accounts
    ) -> Bets:
        kinds = [k for k in BET_KINDS if k in self.kinds]
        if not kinds or len(bets) == 0:
            return bets
        return _BetPlanting(self, table, rounds, bets, maker, accounts).run(kinds)


class _BetPlanting:
    """Bet faults of one block of rounds."""

    def __init__(self, planner: FaultPlanner, table: TableSpec, rounds: list[Round], bets: Bets,
                 maker: BetMaker, accounts: Accounts):  # fmt: skip
        self.p = planner
        self.rng = planner.rng
        self.table = table
        self.rs = table.ruleset
        self.rounds = rounds
        self.b = bets
        self.maker = maker
        self.accounts = accounts
        R = len(rounds)
        self.cancelled = np.array([r.cancelled for r in rounds], dtype=bool)
        self.rfault = np.array([r.fault is not None for r in rounds], dtype=bool)
        self.closed = np.array([r.closed_us for r in rounds], dtype=np.int64)
        self.next_n = np.bincount(bets.ridx, minlength=R) + 1
        self.ghost_n: dict[int, int] = {}
        self.taken = np.zeros(len(bets), dtype=bool)
        self.busy: set[tuple[int, int]] = set()  # (round, account) with a fault already
        self.added: list[tuple] = []  # rows of Bets fields

    def code(self, i: int) -> str:
        return BET_CODES[int(self.b.type[i])]

    def mode(self, i: int) -> str:
        return MODES[int(self.b.mode[i])]

    def credit(self, r: int, code: str, mode: str, stake: int) -> int:
        return settle(self.rs, code, mode, stake, self.rounds[r].features, cancelled=self.rounds[r].cancelled)

    def bet_id(self, i: int) -> str:
        return bet_id(self.rounds[int(self.b.ridx[i])].round_id, int(self.b.n[i]))

    def record(self, kind: str, r: int, bid: str, change: str, round_id: str | None = None, shoe: bool = True) -> None:
        rnd = self.rounds[r]
        self.p.record(kind, rnd.shoe_id if shoe else None, round_id or rnd.round_id, bid, change)

    def eligible(self, kind: str) -> np.ndarray:
        b, rs = self.b, self.rs
        ok = ~self.cancelled[b.ridx] & ~self.rfault[b.ridx]
        t = b.type
        is_pb = (t == I_PLAYER) | (t == I_BANKER)
        is_side = t > I_TIE
        pb_rule = rs.limits.player_banker_difference
        share_rule = rs.limits.side_bet_max_share_of_table_max is not None
        outcome = np.array(
            [{PLAYER: 0, BANKER: 1, TIE: 2}.get(r.outcome, -1) if r.features else -1 for r in self.rounds]
        )
        oc = outcome[b.ridx]
        won_odds = is_side & (b.paid > b.stake)
        none = np.zeros(len(b), dtype=bool)
        if kind == "OVERPAID":
            return ok & (((t == I_BANKER) & (b.mode == MODE_INDEX["commission"]) & (oc == 1)) | won_odds)
        if kind == "UNDERPAID":
            return (ok & ((is_pb & (oc == 2)) | won_odds)) | (self.cancelled[b.ridx] & ~self.rfault[b.ridx])
        if kind == "STAKE_BELOW_MIN":
            return ok
        if kind == "STAKE_ABOVE_MAX":
            return ok & ~(pb_rule & is_pb) & ~(share_rule & is_side)
        if kind == "PB_DIFFERENCE_LIMIT":
            return ok & is_pb if pb_rule else none
        if kind == "SIDE_BET_CUTOFF":
            cutoffs = [c for c in self.maker.side_cutoffs if c is not None]
            if not cutoffs:
                return none
            round_no = np.array([r.round_no for r in self.rounds])
            return ok & (round_no[b.ridx] > min(cutoffs))
        if kind == "PAIR_WITHOUT_MAIN":
            return ok if rs.limits.side_bets_require_main_bet and self.maker.side_codes else none
        if kind == "SIDE_BET_ABOVE_SHARE":
            return ok & is_side if share_rule else none
        if kind == "MULTIPLE_POSITIONS":
            return ok & (b.placed < self.closed[b.ridx] - SECOND) if rs.limits.one_position_per_round else none
        if kind == "LATE_BET":
            return ok
        if kind == "BET_TYPE_NOT_OFFERED":
            return ok if self.not_offered() else none
        if kind == "UNKNOWN_ROUND":
            return ok
        if kind == "DUPLICATE_BET":
            return ok & ~(pb_rule & is_pb) if not rs.limits.one_position_per_round else none
        raise ValueError(kind)

    def not_offered(self) -> list[str]:
        return [c for c in BET_CODES if c not in self.rs.bets]

    def run(self, kinds: list[str]) -> Bets:
        n = len(self.b)
        for kind in kinds:
            elig = self.eligible(kind)
            u = self.rng.random(n)
            forced = kind in self.p.needed
            cand = np.flatnonzero(elig & (u < self.p.rate))
            if forced and cand.size == 0:
                cand = np.flatnonzero(elig)
            for i in cand:
                i = int(i)
                key = (int(self.b.ridx[i]), int(self.b.acc[i]))
                if self.taken[i] or key in self.busy:
                    continue
                if self.plant(kind, i):
                    self.taken[i] = True
                    self.busy.add(key)
                    if forced and kind not in self.p.needed and u[i] >= self.p.rate:
                        break  # the forced one is planted; the random draws of this kind are done
        if not self.added:
            return self.b
        cols = zip(*self.added, strict=True)
        extra = Bets(
            *(np.array(c, getattr(self.b, f).dtype) for c, f in zip(cols, Bets.__dataclass_fields__, strict=True))
        )
        allb = Bets.concat([self.b, extra])
        order = np.lexsort((allb.dup, allb.n, allb.ghost, allb.ridx))
        return allb.take(order)

    def add(self, r: int, acc: int, code: str, mode: str, stake: int, paid: int, placed: int,
            ghost: bool = False, n: int | None = None, dup: int = 0) -> int:  # fmt: skip
        if n is None:
            if ghost:
                n = self.ghost_n.get(r, 0) + 1
                self.ghost_n[r] = n
            else:
                n = int(self.next_n[r])
                self.next_n[r] += 1
        self.added.append((r, acc, BET_INDEX[code], MODE_INDEX[mode], stake, paid, placed, n, ghost, dup))
        return n

    def idle_account(self, r: int) -> int | None:
        present = set(self.b.acc[self.b.ridx == r].tolist()) | {a for (rr, a) in self.busy if rr == r}
        for _ in range(50):
            a = int(self.rng.integers(self.accounts.size))
            if a not in present:
                return a
        return None

    def in_window(self, r: int) -> int:
        rnd = self.rounds[r]
        return rnd.open_us + int(self.rng.integers(SECOND // 2, rnd.closed_us - rnd.open_us))

    def side_stake(self, code: str) -> int:
        mn, mx = self.table.limits[code]
        cap = self.table.side_share_cap
        if cap is not None:
            mx = min(mx, cap)
        return int(
            np.clip(chips(np.array([self.accounts.base[int(self.rng.integers(self.accounts.size))]]))[0], mn, mx)
        )

    def plant(self, kind: str, i: int) -> bool:  # noqa: C901 - one branch per kind, as in findings.md
        b, rng = self.b, self.rng
        r = int(b.ridx[i])
        rnd = self.rounds[r]
        code, mode = self.code(i), self.mode(i)
        stake, paid = int(b.stake[i]), int(b.paid[i])
        bid = self.bet_id(i)
        if kind == "OVERPAID":
            if code == BANKER:
                new = 2 * stake
                change = f"BANKER commission-mode win paid 1:1 instead of 0.95:1: paid {paid} -> {new}"
            else:
                odds = matching_rule(self.rs.paytable(code, mode), rnd.features).odds
                new = paid + stake
                change = f"{code} win paid at {_odds(odds + 1)} instead of {_odds(odds)}: paid {paid} -> {new}"
            if new <= paid:
                return False
            b.paid[i] = new
        elif kind == "UNDERPAID":
            if rnd.cancelled:
                new = 0
                change = f"cancelled round not refunded: paid {paid} -> 0"
            elif code in (PLAYER, BANKER) and rnd.outcome == TIE:
                new = 0
                change = f"{code} bet on a tie not pushed: paid {paid} -> 0"
            else:
                odds = matching_rule(self.rs.paytable(code, mode), rnd.features).odds
                new = paid - stake
                change = f"{code} win paid at {_odds(odds - 1)} instead of {_odds(odds)}: paid {paid} -> {new}"
            if new >= paid:
                return False
            b.paid[i] = new
        elif kind == "STAKE_BELOW_MIN":
            mn = self.table.limits[code][0]
            options = [s for s in (10, 20, 25, 50) if s < mn]
            new = options[int(rng.integers(len(options)))]
            return self._restake(i, kind, new, f"stake {stake} -> {new} (min_stake {mn})")
        elif kind == "STAKE_ABOVE_MAX":
            mx = self.table.limits[code][1]
            new = mx + 100 * int(rng.integers(1, max(2, mx // 400)))
            return self._restake(i, kind, new, f"stake {stake} -> {new} (max_stake {mx})")
        elif kind == "PB_DIFFERENCE_LIMIT":
            other_code = BANKER if code == PLAYER else PLAYER
            same = (b.ridx == r) & (b.acc == b.acc[i]) & (b.type == BET_INDEX[other_code])
            other = int(b.stake[same].sum())
            mx = self.table.limits[code][1]
            new = mx + other + 500 * int(rng.integers(1, 200))
            return self._restake(
                i, kind, new, f"stake {stake} -> {new}: {code} {new} - {other_code} {other} > {code} max {mx}"
            )
        elif kind == "SIDE_BET_CUTOFF":
            late = [c for c, cut in zip(self.maker.side_codes, self.maker.side_cutoffs, strict=True)
                    if cut is not None and rnd.round_no > cut and self.rs.offered(c, mode)]  # fmt: skip
            if not late:
                return False
            new_code = late[int(rng.integers(len(late)))]
            st = self.side_stake(new_code)
            n = self.add(r, int(b.acc[i]), new_code, mode, st, self.credit(r, new_code, mode, st), self.in_window(r))
            self.record(
                kind,
                r,
                bet_id(rnd.round_id, n),
                f"{new_code} bet added on round {rnd.round_no} (cutoff {self.rs.bets[new_code].cutoff})",
            )
            return True
        elif kind == "PAIR_WITHOUT_MAIN":
            a = self.idle_account(r)
            if a is None:
                return False
            new_code = self.maker.side_codes[int(rng.integers(len(self.maker.side_codes)))]
            st = self.side_stake(new_code)
            n = self.add(
                r, a, new_code, "commission", st, self.credit(r, new_code, "commission", st), self.in_window(r)
            )
            self.busy.add((r, a))
            self.record(
                kind,
                r,
                bet_id(rnd.round_id, n),
                f"{new_code} bet added for account {self.accounts.ids[a].as_py()} with no main bet in the round",
            )
            return True
        elif kind == "SIDE_BET_ABOVE_SHARE":
            cap = self.table.side_share_cap
            mx = self.table.limits[code][1]
            new = cap + 500 * int(rng.integers(1, (mx - cap) // 500 + 1))
            return self._restake(
                i,
                kind,
                new,
                f"stake {stake} -> {new} (share cap {cap} of table_max {self.table.table_max}; limits max {mx})",
            )
        elif kind == "MULTIPLE_POSITIONS":
            new_code = [c for c in (PLAYER, BANKER, TIE) if c != code][int(rng.integers(2))]
            placed = int(b.placed[i])
            at = placed + 1 + int(rng.integers(0, int(self.closed[r]) - placed - 1))
            mn, mx = self.table.limits[new_code]
            st = int(np.clip(chips(np.array([stake]))[0], mn, mx))
            n = self.add(r, int(b.acc[i]), new_code, mode, st, self.credit(r, new_code, mode, st), at)
            self.record(
                kind,
                r,
                bet_id(rnd.round_id, n),
                f"second position {new_code} added for the account of {bid} ({code}) at {_ts(at)}",
            )
            return True
        elif kind == "LATE_BET":
            new = int(self.closed[r]) + int(rng.integers(SECOND // 5, 3 * SECOND))
            change = f"placed_at {_ts(int(b.placed[i]))} -> {_ts(new)} (betting closed {_ts(int(self.closed[r]))})"
            b.placed[i] = new
        elif kind == "BET_TYPE_NOT_OFFERED":
            codes = self.not_offered()
            new_code = codes[int(rng.integers(len(codes)))]
            if self.rs.limits.one_position_per_round:
                a = self.idle_account(r)  # a second bet of an account could read as a second position
                new_mode = "commission"
                if a is None:
                    return False
            else:
                a, new_mode = int(b.acc[i]), mode
            st = int(chips(np.array([int(rng.integers(1, 51)) * 100]))[0])
            n = self.add(r, a, new_code, new_mode, st, st, self.in_window(r))
            self.busy.add((r, a))
            self.record(
                kind,
                r,
                bet_id(rnd.round_id, n),
                f"{new_code} ({new_mode}) bet added, not offered by {self.rs.id}; refunded {st}",
            )
            return True
        elif kind == "UNKNOWN_ROUND":
            ghost_round = rnd.round_id + GHOST
            n = self.add(r, int(b.acc[i]), code, mode, stake, stake, int(b.placed[i]) + 1, ghost=True)
            self.record(
                kind,
                r,
                bet_id(ghost_round, n),
                f"bet on round_id {ghost_round}, which is not in rounds (copy of {bid}, refunded)",
                round_id=ghost_round,
                shoe=False,
            )
            return True
        elif kind == "DUPLICATE_BET":
            self.add(r, int(b.acc[i]), code, mode, stake, paid, int(b.placed[i]), n=int(b.n[i]), dup=1)
            self.record(kind, r, bid, f"bet row {bid} written twice")
            return True
        else:
            raise ValueError(kind)
        self.record(kind, r, bid, change)
        return True

    def _restake(self, i: int, kind: str, new: int, change: str) -> bool:
        r = int(self.b.ridx[i])
        paid = int(self.b.paid[i])
        new_paid = self.credit(r, self.code(i), self.mode(i), new)
        self.b.stake[i] = new
        self.b.paid[i] = new_paid
        self.record(kind, r, self.bet_id(i), f"{change}; paid {paid} -> {new_paid}")
        return True
