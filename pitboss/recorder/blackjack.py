"""The recorder of live blackjack tables (document 004, ruleset blackjack_8d_live), beside the baccarat ones.

Pure Python, round by round (a round is a few boxes, each with a few decisions): each shoe is shuffled
and dealt in 004's order by a small incremental player that takes every decision where the engine
would ask for it (basic strategy from the chart, a few legal human mistakes, auto-played boxes by the
chart exactly); the round as recorded is then replayed with `engine.games.blackjack.play.replay_round`
and every bet is credited with `engine.games.blackjack.settlement`. Faults are planted on the way, each
written to the manifest with the finding it must cause (and kept from causing any other):

* shoe level: SHOE_COMPOSITION (a card behind everything dealt replaced by a copy of another code);
  ROUND_AFTER_CUT (one more round dealt after the cut-card round);
* round level (one per round, none on a cancelled round or a shoe with a shoe-level fault):
  CARD_SEQUENCE_MISMATCH, DEALER_DRAW_RULE, ILLEGAL_DECISION, DECISION_MISSING, AUTO_PLAY_DEVIATION;
* bet level (none on a round with a round-level fault, at most one per account and round; the bets of
  a cancelled round only get "not refunded"): OVERPAID, UNDERPAID, ADDED_STAKE_MISMATCH,
  INSURANCE_NOT_OFFERED, INSURANCE_ABOVE_SHARE, BET_BEHIND_BY_SEATED, BET_ON_EMPTY_BOX,
  PAIR_WITHOUT_MAIN, SIDE_BET_ABOVE_SHARE, STAKE_BELOW_MIN, STAKE_ABOVE_MAX, LATE_BET,
  BET_TYPE_NOT_OFFERED, UNKNOWN_ROUND, DUPLICATE_BET.

Randomness: Python `random.Random` streams seeded from (seed, table index, business day), so the same
arguments give the same rows; nothing here touches the baccarat tables' streams.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow as pa

from engine.cards import CARD_CODES, SUITS, rank
from engine.games.baccarat.ruleset import BET_CODES as BACCARAT_BET_CODES
from engine.games.blackjack import BET_CODES
from engine.games.blackjack.hand import card_value, dealer_decision, hand_total
from engine.games.blackjack.play import BoxActions, RoundPlay, dealt_positions, hand_is_blackjack, replay_round
from engine.games.blackjack.rules import BlackjackRules, load_blackjack_rules
from engine.games.blackjack.settlement import (
    settle_bet_behind,
    settle_box,
    settle_insurance,
    settle_pair,
    total_staked,
)
from engine.games.blackjack.strategy import BasicStrategyChart, basic_strategy_decision, load_basic_strategy
from pitboss.recorder import rounds as shared  # the pieces every round-by-round recorder shares
from pitboss.recorder.config import BETTING_WINDOW, SECOND
from pitboss.recorder.manifest import bet_id, instant_text, kinds_to_plant
from pitboss.recorder.players import Accounts, TableClock, chips, clip
from pitboss.recorder.registry import GameRecorder
from pitboss.recorder.writer import timestamps
from schemas.contract import CARDS, game_schema

MAIN, PAIR, INSURANCE, BET_BEHIND = BET_CODES
RULESET = "blackjack_8d_live"
SUFFIX = "BJ8"
GAME = "blackjack"
TABLE_MAX = 500_000  # 5,000.00 EUR
LIMITS: dict[str, tuple[int, int]] = {
    MAIN: (100, 100_000),
    # the limits row allows 20% of table_max, the rule 10%: a stake in between is SIDE_BET_ABOVE_SHARE only
    PAIR: (100, TABLE_MAX // 5),
    INSURANCE: (50, 50_000),
    BET_BEHIND: (100, 100_000),
}
OPERATOR = "Live Dealer E"
BOXES = tuple(range(1, 8))
BOX_WEIGHTS = (3, 5, 8, 12, 16, 20, 22)  # how many boxes are occupied (1..7)
AUTO_PLAY_RATE = 0.05  # boxes played for a disconnected player (basic strategy, exactly)
HUMAN_ERROR_RATE = 0.03  # decisions where a human takes a legal action the chart does not say
CUT_SHARE = (0.75, 0.80)
CARD_US = 1_600_000  # a card dealt
DECISION_US = 1_500_000  # a decision taken
EXTRA_ROUND_ROOM = 45  # cards left behind the cut-card round for a ROUND_AFTER_CUT round to be dealt

# Fault kinds this recorder plants, in planting order; the blackjack-only ones are in engine.findings too.
SHOE_KINDS = ("SHOE_COMPOSITION",)
ROUND_KINDS = ("CARD_SEQUENCE_MISMATCH", "DEALER_DRAW_RULE", "ILLEGAL_DECISION", "DECISION_MISSING",
               "AUTO_PLAY_DEVIATION", "ROUND_AFTER_CUT")  # fmt: skip
BET_KINDS = ("OVERPAID", "UNDERPAID", "ADDED_STAKE_MISMATCH", "INSURANCE_NOT_OFFERED", "INSURANCE_ABOVE_SHARE",
             "BET_BEHIND_BY_SEATED", "BET_ON_EMPTY_BOX", "PAIR_WITHOUT_MAIN", "SIDE_BET_ABOVE_SHARE",
             "STAKE_BELOW_MIN", "STAKE_ABOVE_MAX", "LATE_BET", "UNKNOWN_ROUND", "DUPLICATE_BET")  # fmt: skip
# BET_TYPE_NOT_OFFERED is not planted on blackjack tables: a bet of another game's code needs a code of a
# game without modes (a baccarat code with no mode is a bad row, quarantined by the readers), and no
# other such game exists yet; the audit's check is tested on its own (tests/test_blackjack_audit.py).
BLACKJACK_FAULT_KINDS: tuple[str, ...] = SHOE_KINDS + ROUND_KINDS + BET_KINDS
# Bet codes of another game (baccarat's), for BET_TYPE_NOT_OFFERED.
NOT_OFFERED_CODES = tuple(c for c in BACCARAT_BET_CODES if c not in BET_CODES)


def kinds_of(fault_kinds: tuple[str, ...] | None, fault_rate: float) -> tuple[str, ...]:
    """The blackjack kinds to plant for `--fault-kinds` (None = all) at `--fault-rate` (0 = none)."""
    return kinds_to_plant(BLACKJACK_FAULT_KINDS, fault_kinds, fault_rate)


# ---------------------------------------------------------------------------------------------
# Tables


@dataclass(frozen=True)
class BlackjackTable(shared.GameTable):
    @property
    def pair_cap(self) -> int:
        share = self.rules.pair_max_share_of_table_max
        return self.table_max * share.numerator // share.denominator


def make_blackjack_tables(n: int, first_index: int) -> list[BlackjackTable]:
    return shared.make_tables(GAME, load_blackjack_rules(RULESET), n, first_index, suffix=SUFFIX, title="Blackjack",
                       operator=OPERATOR, table_max=TABLE_MAX, limits=LIMITS, cls=BlackjackTable)


# ---------------------------------------------------------------------------------------------
# Playing a round


@dataclass
class _Hand:
    cards: list[str]
    index: list[int]  # shoe index of each card
    from_split: bool = False
    doubled: bool = False
    done: bool = False

    @property
    def split_aces(self) -> bool:
        return self.from_split and rank(self.cards[0]) == "A"


@dataclass
class _Plan:
    """What a round-level fault changes in the play (None: the play is fault-free)."""

    box: int | None = None  # index into the round's boxes
    what: str | None = None  # "deviate" | "double3" | "splitKT"
    dealer: str | None = None  # "stand_soft17" | "draw_hard17"
    applied: bool = False


@dataclass
class _Sim:
    actions: list[str]
    box_cards: list[tuple[str, ...]]  # per box, in shoe order
    box_index: list[tuple[int, ...]]  # their shoe indexes (relative to the round's first card)
    dealer: tuple[str, ...]
    used: int
    live: bool  # a box hand waited for the dealer's total (not bust, not a blackjack)


class _Player:
    """Deals one round from `cards[start:]` in 004's order and takes each box's decisions."""

    def __init__(self, rules: BlackjackRules, chart: BasicStrategyChart):
        self.rules, self.chart = rules, chart

    def allowed(self, hand: _Hand, splits: int) -> tuple[bool, bool]:
        """(can double, can split) as the engine allows them at this point."""
        rules, cards = self.rules, hand.cards
        two = len(cards) == 2
        can_double = rules.double_on_first_two_cards and not hand.doubled and two
        if hand.split_aces and not rules.double_on_split_aces:
            can_double = False
        elif hand.from_split and not rules.double_after_split:
            can_double = False
        can_split = two and splits < rules.max_splits and card_value(cards[0]) == card_value(cards[1])
        if rules.split_same_rank_only and two and rank(cards[0]) != rank(cards[1]):
            can_split = False
        return can_double, can_split

    def play(
        self,
        cards: list[str],
        start: int,
        boxes: tuple[int, ...],
        auto: tuple[bool, ...],
        seed: int,
        plan: _Plan | None = None,
    ) -> _Sim:
        rules = self.rules
        rnd = random.Random(seed)
        at = start

        def deal(hand: _Hand) -> None:
            nonlocal at
            hand.cards.append(cards[at])
            hand.index.append(at - start)
            at += 1

        hands = [[_Hand([], [])] for _ in boxes]
        for h in hands:
            deal(h[0])
        dealer = _Hand([], [])
        deal(dealer)
        up = dealer.cards[0]
        for h in hands:
            deal(h[0])
        actions = []
        for bi, box_hands in enumerate(hands):
            letters: list[str] = []
            splits = 0
            i = 0
            while i < len(box_hands):
                hand = box_hands[i]
                while not hand.done:  # once more after a split (the hand starts again with one card)
                    if len(hand.cards) < 2:
                        deal(hand)
                    if self.ends_on_two(hand):
                        hand.done = True
                        break
                    split = False
                    while not hand.done and not split:
                        letter = self.decide(hand, splits, up, auto[bi], bi, i, len(letters), rnd, plan)
                        letters.append(letter)
                        if letter == "H":
                            deal(hand)
                            value = hand_total(hand.cards).value
                            hand.done = value >= 21
                        elif letter == "S":
                            hand.done = True
                        elif letter == "D":
                            hand.doubled = True
                            deal(hand)
                            hand.done = True
                        else:  # split: the second card starts the next hand; this one starts again
                            second = _Hand([hand.cards[1]], [hand.index[1]], from_split=True)
                            hand.cards, hand.index, hand.from_split = hand.cards[:1], hand.index[:1], True
                            box_hands.insert(i + 1, second)
                            splits += 1
                            split = True
                i += 1
            actions.append("".join(letters))
        # The dealer: the second card once every box has played, then H17 unless no hand is live.
        deal(dealer)
        live = any(
            hand_total(h.cards).value <= 21 and not hand_is_blackjack(rules, h.cards, from_split=h.from_split)
            for box_hands in hands for h in box_hands
        )  # fmt: skip
        if live:
            while True:
                decision = dealer_decision(dealer.cards, hits_soft_17=rules.hits_soft_17)
                if (
                    plan is not None
                    and plan.dealer == "stand_soft17"
                    and not plan.applied
                    and decision.draws
                    and decision.total.value == 17
                    and decision.total.soft
                ):
                    plan.applied = True
                    break
                if (
                    plan is not None
                    and plan.dealer == "draw_hard17"
                    and not plan.applied
                    and not decision.draws
                    and not decision.total.soft
                ):
                    plan.applied = True
                    deal(dealer)
                    break
                if not decision.draws:
                    break
                deal(dealer)
        box_cards, box_index = [], []
        for box_hands in hands:
            pairs = sorted((x, c) for h in box_hands for c, x in zip(h.cards, h.index, strict=True))
            box_cards.append(tuple(c for _, c in pairs))
            box_index.append(tuple(x for x, _ in pairs))
        return _Sim(actions, box_cards, box_index, tuple(dealer.cards), at - start, live)

    def ends_on_two(self, hand: _Hand) -> bool:
        """A blackjack, a split ace with its one card, or 21 on two cards takes no decision."""
        if hand_is_blackjack(self.rules, hand.cards, from_split=hand.from_split):
            return True
        if hand.split_aces and self.rules.split_aces_one_card:
            return True
        return hand_total(hand.cards).value == 21

    def decide(
        self,
        hand: _Hand,
        splits: int,
        up: str,
        auto: bool,
        bi: int,
        i: int,
        k: int,
        rnd: random.Random,
        plan: _Plan | None,
    ) -> str:
        can_double, can_split = self.allowed(hand, splits)
        chart_action = basic_strategy_decision(self.chart, hand.cards, up, can_double=can_double, can_split=can_split)
        if plan is not None and plan.box == bi and not plan.applied:
            if plan.what == "deviate" and k == 0:
                plan.applied = True
                return self.alternative(chart_action, hand, up, can_double)
            if plan.what == "splitKT" and k == 0:
                plan.applied = True
                return "P"  # K and T are not a pair under split_same_rank_only: illegal, carried out
            if plan.what == "double3" and k == 1 and i == 0 and len(hand.cards) == 3:
                plan.applied = True
                return "D"  # a double on three cards: illegal, carried out (one card, stake doubled)
        if auto:
            return chart_action
        if rnd.random() < HUMAN_ERROR_RATE and not (chart_action == "S" and hand_total(hand.cards).value >= 19):
            return self.alternative(chart_action, hand, up, can_double)
        return chart_action

    def alternative(self, chart_action: str, hand: _Hand, up: str, can_double: bool) -> str:
        """A legal action other than the chart's (a human's mistake, or an auto-play deviation)."""
        if chart_action == "P":
            return basic_strategy_decision(self.chart, hand.cards, up, can_double=can_double, can_split=False)
        return "H" if chart_action == "S" else "S"


# ---------------------------------------------------------------------------------------------
# Rounds, bets, accounts


@dataclass(slots=True)
class _Bet:
    n: int
    acc: int
    type: str
    seat: int
    stake: int
    paid: int
    added: int | None  # MAIN only
    placed: int
    ghost: bool = False
    dup: bool = False


@dataclass
class _Round:
    round_id: str
    shoe_id: str
    round_no: int
    open_us: int
    closed_us: int
    settled_us: int
    dealer_id: str
    start: int
    sim: _Sim
    boxes: tuple[int, ...]
    auto: tuple[bool, ...]
    seated: tuple[int, ...]  # the account of each box
    play: RoundPlay  # the round as recorded, what its bets are paid on
    status: str = "settled"
    fault: str | None = None
    box_cards: list[tuple[str, ...]] = field(default_factory=list)  # as recorded
    dealer_cards: tuple[str, ...] = ()  # as recorded
    actions: list[str] = field(default_factory=list)  # as recorded
    bets: list[_Bet] = field(default_factory=list)
    credits: dict[tuple[str, int, int], int] = field(default_factory=dict)

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"

    @property
    def end(self) -> int:
        return self.start + self.sim.used


@dataclass
class _Shoe:
    shoe_id: str
    shoe_no: int
    opened_us: int
    cards: list[str]
    cut_index: int
    rounds: list[_Round] = field(default_factory=list)
    closed_us: int = 0
    fault: str | None = None


# ---------------------------------------------------------------------------------------------
# The recorder


class BlackjackRecorder(shared.RoundRecorder):
    """The blackjack tables of a `pitboss generate` run: their rows, files, statistics and manifest."""

    def __init__(self, config, out: Path, n_tables: int, first_index: int):
        tables = make_blackjack_tables(n_tables, first_index)
        super().__init__(config, out, GAME, tables, kinds_of(config.fault_kinds, config.fault_rate),
                         shared.Streams("bj-deal", "bj-faults", "bj-accounts", 13))
        self.rules = tables[0].rules if tables else load_blackjack_rules(RULESET)
        self.chart = load_basic_strategy(self.rules.basic_strategy)
        self.player = _Player(self.rules, self.chart)
        self.shoe_no = [0] * len(tables)

    # -- the run's hooks ----------------------------------------------------------------------------

    def record_table_day(self, k: int, table: BlackjackTable, day: int, business: date, clock: TableClock,
                         rnd: random.Random) -> int:
        """The table's shoes for one business day."""
        shoes: list[_Shoe] = []
        done = n_in_day = 0
        while done < self.config.rounds_per_table:
            n_in_day += 1
            self.shoe_no[k] += 1
            shoe_id = f"{table.table_id}-{business:%Y%m%d}-S{n_in_day:04d}"
            shoe = self.deal_shoe(table, self.accounts[k], shoe_id, self.shoe_no[k], clock, rnd)
            shoes.append(shoe)
            done += len(shoe.rounds)
            clock.now += rnd.randrange(240 * SECOND, 420 * SECOND)  # shuffle the next shoe
        rounds = [r for s in shoes for r in s.rounds]
        self.write(k, shoes_table(table, shoes), rounds, rounds_table(table, rounds),
                   shared.bets_table(GAME, table, rounds, self.accounts[k], shared.boxed_bet_columns))
        return done

    # -- dealing -------------------------------------------------------------------------------------

    def deal_shoe(
        self,
        table: BlackjackTable,
        accounts: Accounts,
        shoe_id: str,
        shoe_no: int,
        clock: TableClock,
        rnd: random.Random,
    ) -> _Shoe:
        rules = self.rules
        cards = list(CARD_CODES) * rules.decks
        rnd.shuffle(cards)
        cut_index = int(len(cards) * rnd.uniform(*CUT_SHARE))
        shoe = _Shoe(shoe_id, shoe_no, clock.now, cards, cut_index)
        if self.kinds and self.pick(["SHOE_COMPOSITION"]):
            shoe.fault = "SHOE_COMPOSITION"  # planted once every round is dealt (behind every dealt card)
        clock.now += rnd.randrange(20 * SECOND, 45 * SECOND)  # shuffle check, burn
        position = rules.burn_cards
        round_no = 0
        while True:
            round_no += 1
            rnd_ = self.deal_round(table, accounts, shoe, round_no, position, clock, rnd, extra=False)
            shoe.rounds.append(rnd_)
            position = rnd_.end
            if position > cut_index:  # the cut card came out in this round: the shoe's last round
                break
        room = len(cards) - position >= EXTRA_ROUND_ROOM  # (always, in practice: the cut is at most 80% in)
        if self.kinds and shoe.fault is None and room and self.pick(["ROUND_AFTER_CUT"]):
            last = shoe.rounds[-1]
            extra = self.deal_round(table, accounts, shoe, round_no + 1, position, clock, rnd, extra=True)
            shoe.rounds.append(extra)
            self.planner.record("ROUND_AFTER_CUT", shoe_id, extra.round_id, None,
                                f"round {round_no + 1} dealt after the cut-card round {round_no} (cut_index "
                                f"{cut_index}, the cut card came out in round {round_no}, cards {last.start}.."
                                f"{last.end - 1})")  # fmt: skip
            position = extra.end
        if shoe.fault == "SHOE_COMPOSITION":
            j = self.frnd.randrange(position, len(cards))
            old = cards[j]
            new = CARD_CODES[(CARD_CODES.index(old) + self.frnd.randrange(1, 52)) % 52]
            cards[j] = new
            self.planner.record("SHOE_COMPOSITION", shoe_id, None, None,
                                f"shoes.cards[{j}] {old} replaced by a copy of {new} (never dealt: the shoe's "
                                f"rounds used cards up to {position - 1}): {old} short, {new} extra")  # fmt: skip
        shoe.closed_us = shoe.rounds[-1].settled_us
        return shoe

    def deal_round(
        self,
        table: BlackjackTable,
        accounts: Accounts,
        shoe: _Shoe,
        round_no: int,
        start: int,
        clock: TableClock,
        rnd: random.Random,
        extra: bool,
    ) -> _Round:
        rules = self.rules
        n_boxes = rnd.choices(range(1, 8), weights=BOX_WEIGHTS)[0]
        boxes = tuple(sorted(rnd.sample(BOXES, n_boxes)))
        auto = tuple(rnd.random() < AUTO_PLAY_RATE for _ in boxes)
        seed = rnd.getrandbits(64)
        sim = self.player.play(shoe.cards, start, boxes, auto, seed)
        final = start + sim.used > shoe.cut_index
        # Cancelled after the deal (an incident at settlement: the cards came out as recorded, every bet
        # refunded); never the first round, the cut-card round, or a box that doubled or split (so that
        # a refund of the stake is the refund of everything staked).
        cancel = (not extra and round_no > 1 and not final and rnd.random() < self.config.cancel_rate
                  and not any(c in a for a in sim.actions for c in "DP"))  # fmt: skip
        rid = f"{shoe.shoe_id}-R{round_no:03d}"
        fault, change, plan = None, None, None
        if extra:
            fault = "ROUND_AFTER_CUT"
        elif self.kinds and not cancel and shoe.fault is None:
            fault, plan, change = self.round_fault(shoe, start, boxes, auto, seed, sim)
            if plan is not None:
                sim = self.player.play(shoe.cards, start, boxes, auto, seed, plan)
                assert plan.applied, plan
        # Times: betting window, the deal, the decisions, settlement.
        open_us = clock.now
        closed_us = open_us + BETTING_WINDOW
        n_cards = sim.used
        n_decisions = sum(len(a) for a in sim.actions)
        settled_us = closed_us + 4 * SECOND + n_cards * CARD_US + n_decisions * DECISION_US
        settled_us += rnd.randrange(0, 2 * SECOND)
        if cancel:
            settled_us += rnd.randrange(10 * SECOND, 60 * SECOND)
        clock.now = settled_us + rnd.randrange(2 * SECOND, 5 * SECOND)
        play = replay_round(rules, shoe.cards[start:], [BoxActions(b, a, x) for b, a, x in
                                                        zip(boxes, sim.actions, auto, strict=True)])  # fmt: skip
        assert play.complete, play.incomplete_reason
        assert _box_cards(play) == sim.box_cards, (play, sim)
        if play.dealer != sim.dealer:  # DEALER_DRAW_RULE: the bets follow the dealer's hand as dealt
            assert fault == "DEALER_DRAW_RULE"
            nb = len(boxes)
            play = replace(
                play, dealer=sim.dealer, dealer_shoe_indexes=(nb, *range(sim.used - len(sim.dealer) + 1, sim.used))
            )
        seated = tuple(accounts.draw(rnd, len(boxes), set()))
        assert len(seated) == len(boxes)
        r = _Round(rid, shoe.shoe_id, round_no, open_us, closed_us, settled_us, clock.dealer(open_us), start, sim,
                   boxes, auto, seated, play, "cancelled" if cancel else "settled", fault,
                   list(sim.box_cards), sim.dealer, list(sim.actions))  # fmt: skip
        if fault is not None and fault != "ROUND_AFTER_CUT":
            self.record_round_fault(r, fault, change)
        self.make_bets(table, accounts, r, rnd)
        if self.kinds and not r.fault:
            self.plant_bets(table, accounts, r)
        return r

    # -- round faults ------------------------------------------------------------------------------

    def round_fault(self, shoe: _Shoe, start: int, boxes, auto, seed: int, sim: _Sim):
        """(kind, the play it needs or None, what it is) for a round, or (None, None, None)."""
        rules = self.rules
        cands = ["CARD_SEQUENCE_MISMATCH"]  # the dealer's second card can always be misread
        dealer_opts = []
        if sim.live:
            d = sim.dealer
            for k in range(2, len(d) + 1):
                dec = dealer_decision(d[:k], hits_soft_17=rules.hits_soft_17)
                if dec.draws and dec.total.value == 17 and dec.total.soft:
                    dealer_opts.append("stand_soft17")
            final = hand_total(d)
            if 17 <= final.value <= 21 and not final.soft and start + sim.used < len(shoe.cards):
                dealer_opts.append("draw_hard17")
        if dealer_opts:
            cands.append("DEALER_DRAW_RULE")
        illegal = []
        for bi, (actions, cards) in enumerate(zip(sim.actions, sim.box_cards, strict=True)):
            if auto[bi]:
                continue
            first_two = cards[:2]
            if all(rank(c) in "TJQK" for c in first_two) and rank(first_two[0]) != rank(first_two[1]):
                illegal.append((bi, "splitKT"))
            if actions.startswith("H") and len(cards) >= 3 and hand_total(cards[:3]).value < 21:
                illegal.append((bi, "double3"))
        if illegal:
            cands.append("ILLEGAL_DECISION")
        missing = [bi for bi, a in enumerate(sim.actions) if not auto[bi] and a.endswith("S")]
        if missing:
            cands.append("DECISION_MISSING")
        deviate = [bi for bi, a in enumerate(sim.actions) if auto[bi] and a]
        if deviate:
            cands.append("AUTO_PLAY_DEVIATION")
        kind = self.pick(cands)
        f = self.frnd
        if kind == "DEALER_DRAW_RULE":
            return kind, _Plan(dealer=f.choice(dealer_opts)), None
        if kind == "ILLEGAL_DECISION":
            bi, what = f.choice(illegal)
            return kind, _Plan(box=bi, what=what), None
        if kind == "DECISION_MISSING":
            return kind, None, f.choice(missing)
        if kind == "AUTO_PLAY_DEVIATION":
            return kind, _Plan(box=f.choice(deviate), what="deviate"), None
        return kind, None, None

    def record_round_fault(self, r: _Round, kind: str, detail) -> None:
        p, f = self.planner, self.frnd
        where = f"round {r.round_no}"
        if kind == "CARD_SEQUENCE_MISMATCH":
            # One card read with another suit (same rank): not a box's first two (the pair bet reads them)
            # and not the upcard; totals, decisions and settlement unchanged.
            options = [("dealer", None, i) for i in range(1, len(r.dealer_cards))]
            options += [("box", bi, i) for bi, cards in enumerate(r.box_cards) for i in range(2, len(cards))]
            who, bi, i = f.choice(options)
            old = r.dealer_cards[i] if who == "dealer" else r.box_cards[bi][i]
            new = old[0] + f.choice([s for s in SUITS if s != old[1]])
            if who == "dealer":
                r.dealer_cards = r.dealer_cards[:i] + (new,) + r.dealer_cards[i + 1 :]
                text = f"dealer card {i + 1}"
            else:
                cards = r.box_cards[bi]
                r.box_cards[bi] = cards[:i] + (new,) + cards[i + 1 :]
                text = f"box {r.boxes[bi]} card {i + 1}"
            change = f"{where}: {text} recorded as {new}, the shoe dealt {old} (same rank)"
        elif kind == "DEALER_DRAW_RULE":
            d = r.dealer_cards
            if dealer_decision(d, hits_soft_17=self.rules.hits_soft_17).draws:
                change = f"{where}: dealer stood on soft 17 ({' '.join(d)}) where H17 draws"
            else:
                before = hand_total(d[:-1]).value
                change = f"{where}: dealer drew {d[-1]} on hard {before} ({' '.join(d[:-1])}) where the rule stands"
            change += "; paid follows the dealer's hand as dealt; later rounds continue from the real shoe position"
        elif kind == "ILLEGAL_DECISION":
            d = next(x for x in r.play.decisions if not x.legal)
            change = (
                f"{where}: box {d.box} recorded {d.action} on {' '.join(d.cards)} ({d.reason}); the cards "
                f"were dealt as the action says, paid follows the play"
            )
        elif kind == "DECISION_MISSING":
            bi = detail
            r.actions[bi] = r.actions[bi][:-1]
            change = (
                f"{where}: box {r.boxes[bi]}'s last decision S dropped (recorded {r.actions[bi]!r}): its "
                f"last hand is left without a decision (played as a stand)"
            )
        else:  # AUTO_PLAY_DEVIATION
            d = next(
                x
                for x in r.play.decisions
                if x.auto_played
                and x.action
                != basic_strategy_decision(
                    self.chart, x.cards, x.upcard, can_double=x.can_double, can_split=x.can_split
                )
            )
            want = basic_strategy_decision(
                self.chart, d.cards, d.upcard, can_double=d.can_double, can_split=d.can_split
            )
            change = (
                f"{where}: auto-played box {d.box} took {d.action} on {' '.join(d.cards)} against {d.upcard}, "
                f"basic strategy says {want}; paid follows the play"
            )
        p.record(kind, r.shoe_id, r.round_id, None, change)

    # -- bets ------------------------------------------------------------------------------------------

    def settle(self, r: _Round, bet_type: str, seat: int, stake: int) -> int:
        """The engine's credit of a bet on the round as recorded (cached per round: many bets behind
        follow the same box at the same stake)."""
        if r.cancelled:
            return stake
        key = (bet_type, seat, stake)
        if key not in r.credits:
            rules, play = self.rules, r.play
            if bet_type == MAIN:
                credit = settle_box(rules, play, seat, stake)
            elif bet_type == PAIR:
                credit = settle_pair(rules, play, seat, stake)
            elif bet_type == INSURANCE:
                credit = settle_insurance(rules, play, stake, box=seat)
            elif bet_type == BET_BEHIND:
                credit = settle_bet_behind(rules, play, seat, stake)
            else:
                credit = stake  # a bet type the table does not offer: refunded
            r.credits[key] = credit
        return r.credits[key]

    def added(self, r: _Round, seat: int, stake: int) -> int:
        return total_staked(r.play, seat, stake) - stake

    def in_window(self, r: _Round, rnd: random.Random) -> int:
        return r.open_us + int(BETTING_WINDOW * rnd.random() ** 0.6)

    def insurance_time(self, r: _Round, rnd: random.Random) -> int:
        """After the first two cards of every box and the upcard (and before settlement)."""
        return r.closed_us + (2 * len(r.boxes) + 1) * CARD_US + rnd.randrange(SECOND // 5, 3 * SECOND)

    def insurance_stake(self, main: int, rnd: random.Random) -> int:
        """A multiple of 0.50 EUR, at least the minimum, at most half the main stake."""
        half = main // 2
        lo, hi = LIMITS[INSURANCE]
        return clip(50 * int(half * rnd.uniform(0.2, 1.0) // 50), lo, min(half, hi))

    def make_bets(self, table: BlackjackTable, acc: Accounts, r: _Round, rnd: random.Random) -> None:
        bets: list[_Bet] = []
        lo_main, hi_main = LIMITS[MAIN]
        ace_up = r.dealer_cards[0][0] == "A"
        for box, a in zip(r.boxes, r.seated, strict=True):
            vary = rnd.choice((1, 1, 1, 2, 1, 1, 1, 1)) * (0.5 if rnd.random() < 0.15 else 1.0)
            stake = clip(chips(acc.base[a] * vary), lo_main, hi_main)
            bets.append(_Bet(0, a, MAIN, box, stake, self.settle(r, MAIN, box, stake), self.added(r, box, stake),
                             self.in_window(r, rnd)))  # fmt: skip
            if rnd.random() < acc.pair_p[a]:
                ps = clip(chips(acc.base[a] * rnd.uniform(0.05, 0.5)), LIMITS[PAIR][0], table.pair_cap)
                bets.append(_Bet(0, a, PAIR, box, ps, self.settle(r, PAIR, box, ps), None, self.in_window(r, rnd)))
            if ace_up and rnd.random() < acc.insurance_p[a]:
                ins = self.insurance_stake(stake, rnd)
                bets.append(_Bet(0, a, INSURANCE, box, ins, self.settle(r, INSURANCE, box, ins), None,
                                 self.insurance_time(r, rnd)))  # fmt: skip
        # Bet behind: accounts not seated in the round, on an occupied box, up to the table's bet count.
        mean = max(0.0, self.config.bets_per_round - len(bets))
        if mean > 0:
            shape = 5.0
            n = int(np.random.default_rng(rnd.getrandbits(64)).negative_binomial(shape, shape / (shape + mean)))
            n = min(n, acc.size // 2)
            lo, hi = LIMITS[BET_BEHIND]
            for a in acc.draw(rnd, n, set(r.seated)):
                box = rnd.choice(r.boxes)
                stake = clip(chips(acc.base[a] * rnd.uniform(0.2, 1.0)), lo, hi)
                bets.append(_Bet(0, a, BET_BEHIND, box, stake, self.settle(r, BET_BEHIND, box, stake), None,
                                 self.in_window(r, rnd)))  # fmt: skip
        bets.sort(key=lambda b: (b.placed, b.acc, BET_CODES.index(b.type), b.seat))
        for k, b in enumerate(bets, 1):
            b.n = k
        r.bets = bets

    # -- bet faults ------------------------------------------------------------------------------------

    def plant_bets(self, table: BlackjackTable, acc: Accounts, r: _Round) -> None:
        """Bet faults on one round: per kind, each eligible bet with probability `rate` (a needed kind:
        the first eligible one), at most one fault per account, none on a bet that has one."""
        kinds = [k for k in BET_KINDS if k in self.planner.kinds]
        if not kinds or not r.bets:
            return
        f, p = self.frnd, self.planner
        busy: set[int] = set()  # accounts with a fault in this round
        taken: set[int] = set()  # bets (by n) with a fault
        state = _BetFaults(self, table, acc, r, busy)
        for kind in kinds:
            for b in list(r.bets):
                if kind not in p.needed and f.random() >= p.rate:
                    continue
                if b.n in taken or b.acc in busy or b.ghost or b.dup or not state.eligible(kind, b):
                    continue
                if state.plant(kind, b):
                    taken.add(b.n)
                    busy.add(b.acc)
        r.bets.sort(key=lambda b: (b.ghost, b.n, b.dup))

class _BetFaults(shared.BetFaults):
    """The bet faults of one round (docs/findings.md), each keeping every other rule intact."""

    not_offered = NOT_OFFERED_CODES

    def __init__(self, rec: BlackjackRecorder, table: BlackjackTable, acc: Accounts, r: _Round, busy: set[int]):
        super().__init__(rec, table, acc, r, busy)
        self.main_of = {b.seat: b for b in r.bets if b.type == MAIN}
        self.insured = {b.seat for b in r.bets if b.type == INSURANCE}

    def staked(self, b: _Bet) -> int:
        return b.stake + (b.added or 0)

    def eligible(self, kind: str, b: _Bet) -> bool:
        r = self.r
        if r.cancelled:
            return kind == "UNDERPAID"
        t = b.type
        if kind == "OVERPAID":
            return (t in (MAIN, BET_BEHIND) and b.paid == self.staked(b)) or (t == PAIR and b.paid > b.stake)
        if kind == "UNDERPAID":
            return t in (MAIN, BET_BEHIND) and b.paid > self.staked(b)
        if kind in ("ADDED_STAKE_MISMATCH", "BET_BEHIND_BY_SEATED", "BET_TYPE_NOT_OFFERED"):
            return t == MAIN
        if kind == "INSURANCE_NOT_OFFERED":
            return t == MAIN and r.dealer_cards[0][0] != "A"
        if kind == "INSURANCE_ABOVE_SHARE":
            return t == INSURANCE and self.main_of[b.seat].stake < 2 * LIMITS[INSURANCE][1]
        # (bets added for an idle account: anchored on the round's MAIN bets, one chance per box)
        if kind == "BET_ON_EMPTY_BOX":
            return t == MAIN and len(r.boxes) < len(BOXES)
        if kind == "PAIR_WITHOUT_MAIN":
            return t == MAIN
        if kind == "SIDE_BET_ABOVE_SHARE":
            return t == PAIR
        if kind == "STAKE_BELOW_MIN":
            # a MAIN with an insurance bet on its box keeps it: a smaller main would break the share
            return t == BET_BEHIND or (t == MAIN and b.seat not in self.insured)
        if kind == "STAKE_ABOVE_MAX":
            return t in (MAIN, BET_BEHIND)
        if kind == "LATE_BET":
            return t in (MAIN, PAIR, BET_BEHIND)
        if kind in ("UNKNOWN_ROUND", "DUPLICATE_BET"):
            return True
        raise ValueError(kind)

    def plant_overpaid(self, b: _Bet) -> bool:
        old, b.paid = b.paid, b.paid + b.stake
        what = "won pair paid one unit of odds more" if b.type == PAIR else f"{b.type} push paid as a win"
        self.record("OVERPAID", b, f"{what}: paid {old} -> {b.paid}")
        return True

    def plant_underpaid(self, b: _Bet) -> bool:
        old = b.paid
        if self.r.cancelled:
            b.paid = 0
            what = "cancelled round not refunded"
        elif (
            b.type == MAIN
            and (b.added or 0) == 0
            and len(box := self.r.play.box(b.seat).hands) == 1
            and hand_is_blackjack(self.rec.rules, box[0].cards, from_split=False)
        ):
            b.paid = 2 * b.stake
            what = "player blackjack paid 1:1 instead of 3:2"
        else:
            b.paid = self.staked(b)
            what = f"{b.type} win paid as a push"
        self.record("UNDERPAID", b, f"{what}: paid {old} -> {b.paid}")
        return True

    def plant_added_stake_mismatch(self, b: _Bet) -> bool:
        old = b.added or 0
        b.added = 0 if old else b.stake
        self.record(
            "ADDED_STAKE_MISMATCH",
            b,
            f"added_stake recorded {b.added}, the box's doubles and splits add {old}; paid {b.paid} is right",
        )
        return True

    def plant_insurance_not_offered(self, b: _Bet) -> bool:
        r = self.r
        stake = self.rec.insurance_stake(b.stake, self.f)
        new = self.add(_Bet(0, b.acc, INSURANCE, b.seat, stake, stake, None, self.rec.insurance_time(r, self.f)))
        self.record(
            "INSURANCE_NOT_OFFERED",
            new,
            f"INSURANCE {stake} taken on box {b.seat} against upcard {r.dealer_cards[0]}; refunded {stake}",
        )
        return True

    def plant_insurance_above_share(self, b: _Bet) -> bool:
        main = self.main_of[b.seat].stake
        lo, hi = (main // 2 // 50 + 1) * 50, min(LIMITS[INSURANCE][1], main)
        if lo > hi:
            return False
        new = lo + 50 * self.f.randrange(0, (hi - lo) // 50 + 1)
        assert 2 * new > main and LIMITS[INSURANCE][0] <= new <= LIMITS[INSURANCE][1]
        old_s, old_p = b.stake, b.paid
        b.stake, b.paid = new, self.rec.settle(self.r, INSURANCE, b.seat, new)
        self.record(
            "INSURANCE_ABOVE_SHARE",
            b,
            f"stake {old_s} -> {new} (half the main stake {main} is {main / 2:g}); paid {old_p} -> {b.paid}",
        )
        return True

    def plant_bet_behind_by_seated(self, b: _Bet) -> bool:
        r = self.r
        box = self.f.choice(r.boxes)
        lo, hi = LIMITS[BET_BEHIND]
        stake = clip(chips(self.acc.base[b.acc] * self.f.uniform(0.2, 1.0)), lo, hi)
        new = self.add(_Bet(0, b.acc, BET_BEHIND, box, stake, self.rec.settle(r, BET_BEHIND, box, stake), None,
                            self.rec.in_window(r, self.f)))  # fmt: skip
        self.record(
            "BET_BEHIND_BY_SEATED",
            new,
            f"BET_BEHIND on box {box} added for {self.acc.ids[b.acc]}, "
            f"seated on box {b.seat} (MAIN {bet_id(r.round_id, b.n)})",
        )
        return True

    def plant_bet_on_empty_box(self, b: _Bet) -> bool:
        r = self.r
        a = self.idle_account()
        if a is None:
            return False
        box = self.f.choice([x for x in BOXES if x not in r.boxes])
        lo, hi = LIMITS[BET_BEHIND]
        stake = clip(chips(self.acc.base[a] * self.f.uniform(0.2, 1.0)), lo, hi)
        new = self.add(_Bet(0, a, BET_BEHIND, box, stake, stake, None, self.rec.in_window(r, self.f)))
        self.record(
            "BET_ON_EMPTY_BOX",
            new,
            f"BET_BEHIND on box {box}, which nobody occupies (boxes {list(r.boxes)}); refunded {stake}",
        )
        return False  # the anchor bet itself is untouched (its account may still get a fault)

    def plant_pair_without_main(self, b: _Bet) -> bool:
        r = self.r
        a = self.idle_account()
        if a is None:
            return False
        box = self.f.choice(r.boxes)
        stake = clip(chips(self.acc.base[a] * self.f.uniform(0.05, 0.5)), LIMITS[PAIR][0], self.table.pair_cap)
        new = self.add(_Bet(0, a, PAIR, box, stake, self.rec.settle(r, PAIR, box, stake), None,
                            self.rec.in_window(r, self.f)))  # fmt: skip
        self.record(
            "PAIR_WITHOUT_MAIN",
            new,
            f"PAIR on box {box} added for {self.acc.ids[a]}, who has no MAIN on "
            f"it (the box is {self.acc.ids[r.seated[r.boxes.index(box)]]}'s)",
        )
        return False

    def plant_side_bet_above_share(self, b: _Bet) -> bool:
        cap, mx = self.table.pair_cap, LIMITS[PAIR][1]
        new = cap + 500 * self.f.randrange(1, (mx - cap) // 500 + 1)
        old_s, old_p = b.stake, b.paid
        b.stake, b.paid = new, self.rec.settle(self.r, PAIR, b.seat, new)
        self.record(
            "SIDE_BET_ABOVE_SHARE",
            b,
            f"stake {old_s} -> {new} (share cap {cap} of table_max "
            f"{self.table.table_max}; limits max {mx}); paid {old_p} -> {b.paid}",
        )
        return True

    def restake(self, kind: str, b: _Bet, new: int, limit: str) -> bool:
        old_s, old_p, old_a = b.stake, b.paid, b.added
        b.stake, b.paid = new, self.rec.settle(self.r, b.type, b.seat, new)
        text = f"stake {old_s} -> {new} ({limit}); paid {old_p} -> {b.paid}"
        if b.type == MAIN:
            b.added = self.rec.added(self.r, b.seat, new)
            if b.added != old_a:
                text += f"; added_stake {old_a} -> {b.added} (the box's doubles and splits at the new stake)"
        self.record(kind, b, text)
        return True

    def plant_late_bet(self, b: _Bet) -> bool:
        old = b.placed
        b.placed = self.r.closed_us + self.f.randrange(SECOND // 5, 3 * SECOND)
        self.record(
            "LATE_BET",
            b,
            f"placed_at {instant_text(old)} -> {instant_text(b.placed)} "
            f"(betting closed {instant_text(self.r.closed_us)})",
        )
        return True



def _box_cards(play: RoundPlay) -> list[tuple[str, ...]]:
    """Each box's cards in the order they were dealt (as the contract records them)."""
    by_box: dict[int, list[str]] = {b.box: [] for b in play.boxes}
    for d in dealt_positions(play):
        if d.box is not None:
            by_box[d.box].append(d.card)
    return [tuple(by_box[b.box]) for b in play.boxes]


# ---------------------------------------------------------------------------------------------
# Arrow tables


def shoes_table(table: BlackjackTable, shoes: list[_Shoe]) -> pa.Table:
    n = len(shoes)
    return pa.Table.from_arrays(
        [
            pa.array([s.shoe_id for s in shoes], pa.string()),
            pa.array([table.table_id] * n, pa.string()),
            pa.array([s.shoe_no for s in shoes], pa.int32()),
            timestamps([s.opened_us for s in shoes]),
            timestamps([s.closed_us for s in shoes]),
            pa.array([len(s.cards) // 52 for s in shoes], pa.int8()),
            pa.array([s.cards for s in shoes], CARDS),
            pa.array([s.cut_index for s in shoes], pa.int32()),
            pa.array([f"SHF-{s.shoe_id}" for s in shoes], pa.string()),
        ],
        schema=game_schema("shoes", GAME),
    )


def rounds_table(table: BlackjackTable, rounds: list[_Round]) -> pa.Table:
    return shared.contract_table("rounds", GAME, {
        **shared.round_columns(table, rounds),
        **shared.boxed_round_columns(rounds),
        "box_auto_played": pa.array([list(r.auto) for r in rounds], pa.list_(pa.bool_())),
    })  # fmt: skip


RECORDER = GameRecorder(game=GAME, field="blackjack_tables", fault_kinds=BLACKJACK_FAULT_KINDS,
                        record=BlackjackRecorder, help="Blackjack tables (blackjack_8d_live), after the baccarat ones.")
