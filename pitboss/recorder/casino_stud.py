"""The recorder of live casino five-card stud tables with their jackpot pools (document 004, ruleset
casino_stud_live; docs/casino-stud.md is the design), beside the other games' tables.

Round by round, in pure Python: a fresh 52-card deck shuffled for every round (its own `shoes` row:
decks 1, the 52 cards in the order the shuffler dealt them), 1-7 boxes with an ANTE each, the cards dealt
by the engine (`engine.games.casino_stud.dealing.deal`) and ranked by it (`hands.rank_hand`), each box
calling or folding by a simple strategy (call with a pair or better and with most ace-king hands, fold
the rest, a few human choices either way), JACKPOT bets of one jackpot unit beside many antes. Every
ANTE is paid by the engine's settlement (`settlement.ante_credit`), every JACKPOT bet by its ledger
(`ledger.settle_round`), which also keeps the table's jackpot and next pool: they carry from round to
round and from one business day to the next (the first day opens on OPENING_POOLS), and each round
records them when betting closed and after it settled. A few rounds are cancelled: every stake (the
call too) refunded, no pool moved.

Prize hands, the recorder's choice (not a fault): a natural royal flush is 1 in 649,740 hands, so a demo
day would hold no jackpot prize. Every table-day therefore deals two rounds from a *stacked* deck: one in
which a box holds a royal flush (the round is kept free of faults: the day's jackpot is won, paid right
and replaced by the next pool) and one in which a box holds a straight flush (10% of the jackpot; kept
for JACKPOT_PRIZE_WRONG_BALANCE while that kind is still to be planted); and, at STACK_RATES per round, a
deck in which one box holds a straight flush or four of a kind. A stacked deck is still a legal shuffle:
the 52 distinct cards, the prize hand where the engine's dealing order puts that box's cards, the other 47
shuffled around it. The box holding a planted hand bets the jackpot and stakes the table's minimum ante,
so that the call's 20:1 to 100:1 on these hands leaves the ANTE's return on a recorded day near its
theoretical value. Flushes and full houses come as they are dealt.

Faults are planted on the way, each written to the manifest with the one finding it must cause
(engine/games/casino_stud/audit.py) and kept from causing any other:

* round level (one per round; none on a cancelled round or the planted royal flush's): SHOE_COMPOSITION
  (an undealt card of the deck replaced by a copy of another), CARD_SEQUENCE_MISMATCH (a card read with
  another suit, the hand's strength unchanged), DECISION_MISSING, ILLEGAL_DECISION (the ANTE's recorded
  call still says what the box did), HAND_RANK_MISMATCH (a box's or the dealer's recorded rank),
  JACKPOT_BALANCE_MISMATCH (a pool balance that drifts by one minor unit: a before-balance that is not
  the previous round's after, or an after-balance that is not the ledger's; the operator's pools carry
  on from what was recorded);
* bet level (none on a round with a round-level fault, at most one per account, i.e. per box, and
  round; the bets of a cancelled round only get "not refunded"): ADDED_STAKE_MISMATCH,
  JACKPOT_WITHOUT_ANTE, STAKE_BELOW_MIN, STAKE_ABOVE_MAX, LATE_BET, BET_TYPE_NOT_OFFERED, then on the
  settled amounts JACKPOT_PRIZE_WRONG_BALANCE (a straight flush paid 10% of the next pool), OVERPAID and
  UNDERPAID (of an ANTE, and of a jackpot prize: the first prizes met get them), JACKPOT_PRIZE_NOT_WON
  (a flush's prize on a lower hand), then UNKNOWN_ROUND and DUPLICATE_BET (an ANTE: a repeated jackpot
  bet would also be counted twice into the pools). A paid prize's pools follow the payment, as the
  operator's would.

Randomness: `random.Random` streams seeded from (seed, table index, business day); nothing here touches
the other games' streams, so their files are byte-identical with or without stud tables.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import ClassVar

import pyarrow as pa

from engine.cards import CARD_CODES, SUITS
from engine.games.casino_stud import BET_CODES
from engine.games.casino_stud.dealing import cards_needed, deal, positions
from engine.games.casino_stud.hands import (
    CATEGORY_INDEX,
    FOUR_OF_A_KIND,
    HIGH_CARD,
    PAIR,
    RANK_NAMES,
    ROYAL_FLUSH,
    STRAIGHT_FLUSH,
    VALUE,
    HandRank,
    rank_hand,
)
from engine.games.casino_stud.ledger import JackpotBet, Pools, RoundLedger, settle_round
from engine.games.casino_stud.rules import load_casino_stud_rules
from engine.games.casino_stud.settlement import (
    CALL,
    FOLD,
    FOLDED,
    LOSE,
    NOT_QUALIFIED,
    PUSH,
    WIN,
    ante_credit,
    settle_box,
)
from engine.money import round_to_unit
from pitboss.recorder import rounds as shared  # the pieces every round-by-round recorder shares
from pitboss.recorder.config import BETTING_WINDOW, SECOND
from pitboss.recorder.manifest import kinds_to_plant
from pitboss.recorder.players import TableClock, chips, clip
from pitboss.recorder.registry import GameRecorder
from pitboss.recorder.writer import timestamps

ANTE, JACKPOT = BET_CODES
RULESET = "casino_stud_live"
GAME = "casino_stud"
SUFFIX = "CS"
OPERATOR = "Live Dealer G"
TABLE_MAX = 500_000  # 5,000.00 EUR
JACKPOT_UNIT = 100  # one jackpot chip, 1.00 EUR: the limits row gives it as min = max
LIMITS: dict[str, tuple[int, int]] = {ANTE: (100, 50_000), JACKPOT: (JACKPOT_UNIT, JACKPOT_UNIT)}
OPENING_POOLS = Pools(jackpot=500_000, next_pool=50_000)  # the first business day: 5,000.00 and 500.00 EUR
BOX_WEIGHTS = (4, 6, 10, 14, 18, 22, 26)  # how many boxes have an ante (1..7)
# Decks stacked at these rates per round (besides the royal flush of every table-day): one box gets the hand.
STACK_RATES: tuple[tuple[str, float], ...] = ((STRAIGHT_FLUSH, 0.01), (FOUR_OF_A_KIND, 0.01))
CARD_US = 700_000  # a card dealt
DECIDE_US = (5 * SECOND, 10 * SECOND)  # the boxes' decisions
HUMAN_RATE = 0.04  # decisions taken against the strategy (still legal)
_OUTCOME = {FOLDED: "a fold", NOT_QUALIFIED: "the dealer not qualified", WIN: "a win", PUSH: "a push",
            LOSE: "a loss"}
# Bet codes of other games without a mode or a selection, for BET_TYPE_NOT_OFFERED (refunded).
NOT_OFFERED_CODES = ("RED", "BLACK", "SMALL", "BIG", "ANY_TRIPLE")

# Fault kinds this recorder plants, in planting order.
ROUND_KINDS = ("SHOE_COMPOSITION", "CARD_SEQUENCE_MISMATCH", "DECISION_MISSING", "ILLEGAL_DECISION",
               "HAND_RANK_MISMATCH", "JACKPOT_BALANCE_MISMATCH")  # fmt: skip
STAKE_KINDS = ("ADDED_STAKE_MISMATCH", "JACKPOT_WITHOUT_ANTE", "STAKE_BELOW_MIN", "STAKE_ABOVE_MAX", "LATE_BET",
               "BET_TYPE_NOT_OFFERED")  # fmt: skip
PAYMENT_KINDS = ("JACKPOT_PRIZE_WRONG_BALANCE", "OVERPAID", "UNDERPAID", "JACKPOT_PRIZE_NOT_WON")
COPY_KINDS = ("UNKNOWN_ROUND", "DUPLICATE_BET")
BET_KINDS = STAKE_KINDS + PAYMENT_KINDS + COPY_KINDS
STUD_FAULT_KINDS: tuple[str, ...] = ROUND_KINDS + BET_KINDS


def kinds_of(fault_kinds: tuple[str, ...] | None, fault_rate: float) -> tuple[str, ...]:
    """The stud kinds to plant for `--fault-kinds` (None = all) at `--fault-rate` (0 = none)."""
    return kinds_to_plant(STUD_FAULT_KINDS, fault_kinds, fault_rate)


# ---------------------------------------------------------------------------------------------
# Tables


def make_stud_tables(n: int, first_index: int) -> list[shared.GameTable]:
    return shared.make_tables(GAME, load_casino_stud_rules(RULESET), n, first_index, suffix=SUFFIX, title="Casino Stud",
                       operator=OPERATOR, table_max=TABLE_MAX, limits=LIMITS)


# ---------------------------------------------------------------------------------------------
# Decks and decisions


def prize_hand(rnd: random.Random, category: str) -> list[str]:
    """Five cards making `category` (ROYAL_FLUSH, STRAIGHT_FLUSH or FOUR_OF_A_KIND), drawn at random."""
    ranks = "A23456789TJQK"
    if category == ROYAL_FLUSH:
        suit = rnd.choice(SUITS)
        return [r + suit for r in "TJQKA"]
    if category == STRAIGHT_FLUSH:
        suit = rnd.choice(SUITS)
        top = rnd.randrange(5, 14)  # 5 (the wheel) .. 13 (king high); 14 would be the royal flush
        values = [14 if v == 1 else v for v in range(top - 4, top + 1)]
        by_value = {VALUE[r]: r for r in ranks}
        return [by_value[v] + suit for v in values]
    if category == FOUR_OF_A_KIND:
        r = rnd.choice(ranks)
        kicker = rnd.choice([c for c in CARD_CODES if c[0] != r])
        return [r + s for s in SUITS] + [kicker]
    raise ValueError(category)


def decide(rank: HandRank, cards: tuple[str, ...], up: str, rnd: random.Random) -> str:
    """Call or fold, as a sensible player does: a pair or better calls; ace-king calls where the dealer's
    open card pairs one of the box's cards, is an ace or a king, or the box holds a queen or jack besides;
    anything lower folds. A few human choices either way (a small pair folded, ace-queen called)."""
    human = rnd.random() < HUMAN_RATE
    if rank.category != HIGH_CARD:
        small_pair = rank.category == PAIR and rank.ranks[0] <= 5
        return FOLD if human and small_pair else CALL
    values = rank.ranks
    if values[:2] == (14, 13):
        up_value = VALUE[up[0]]
        good = up_value in values or up_value >= 13 or values[2] >= 11
        if human:
            good = not good
        return CALL if good else FOLD
    if human and values[:2] == (14, 12):
        return CALL
    return FOLD


# ---------------------------------------------------------------------------------------------
# Rounds, bets


@dataclass(slots=True)
class _Bet:
    n: int
    acc: int
    type: str
    seat: int
    stake: int
    paid: int
    added: int | None  # ANTE: the call (0 on a fold); None for other codes
    placed: int
    ghost: bool = False
    dup: bool = False


@dataclass
class _Round:
    round_id: str
    shoe_id: str
    shoe_no: int
    open_us: int
    closed_us: int
    settled_us: int
    dealer_id: str
    deck: list[str]  # as shoes.cards records it
    boxes: tuple[int, ...]
    seated: tuple[int, ...]  # the account of each box
    dealt: tuple[tuple[str, ...], ...]  # each box's five as the deck dealt them
    dealer_dealt: tuple[str, ...]
    ranks: tuple[HandRank, ...]  # the engine's, of the cards dealt (what the bets are paid on)
    dealer_rank: HandRank
    decisions: tuple[str, ...]  # C / F: what each box did
    stacked: str | None = None  # a prize hand the recorder dealt (to box `stacked_box`)
    stacked_box: int | None = None
    status: str = "settled"
    fault: str | None = None
    # as recorded
    box_cards: list[tuple[str, ...]] = field(default_factory=list)
    dealer_cards: tuple[str, ...] = ()
    actions: list[str | None] = field(default_factory=list)
    box_hands: list[str] = field(default_factory=list)
    dealer_hand: str = ""
    before: Pools = OPENING_POOLS
    after: Pools = OPENING_POOLS
    bets: list[_Bet] = field(default_factory=list)
    jackpot_bets: list[_Bet] = field(default_factory=list)  # settled on a hand, in prize order
    ledger: RoundLedger | None = None
    round_no: ClassVar[int] = 1  # a deck a round: the round is its deck's first

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"

    def rank_of(self, seat: int) -> HandRank:
        return self.ranks[self.boxes.index(seat)]


# ---------------------------------------------------------------------------------------------
# The recorder


class StudRecorder(shared.RoundRecorder):
    """The casino stud tables of a `pitboss generate` run: their rows, files, statistics, manifest and pools."""

    def __init__(self, config, out: Path, n_tables: int, first_index: int):
        tables = make_stud_tables(n_tables, first_index)
        super().__init__(config, out, GAME, tables, kinds_of(config.fault_kinds, config.fault_rate),
                         shared.Streams("stud-deal", "stud-faults", "stud-accounts", 19))
        self.rules = tables[0].rules if tables else load_casino_stud_rules(RULESET)
        assert self.rules.max_boxes == 7 and self.rules.jackpot.requires_ante
        # a prize paid wrong is rare at a modest rate: the first prizes met get these kinds (once each)
        self.jackpot_wanted = {"OVERPAID", "UNDERPAID"} & set(self.kinds)
        # how keen each account is on the jackpot bet
        self.jackpot_p = []
        for t, acc in zip(self.tables, self.accounts, strict=True):
            r = random.Random(f"{config.seed}/stud-jackpot/{t.index}")
            self.jackpot_p.append([r.uniform(0.7, 0.95) if r.random() < 0.6 else r.uniform(0.1, 0.4)
                                   for _ in range(acc.size)])  # fmt: skip
        self.pools = [OPENING_POOLS for _ in self.tables]  # carried from round to round, day to day
        self.shoe_no = [0] * len(self.tables)

    # -- the run's hooks ----------------------------------------------------------------------------

    def record_table_day(self, k: int, table: shared.GameTable, day: int, business: date, clock: TableClock,
                         rnd: random.Random) -> int:
        """The table's rounds for one business day."""
        n = self.config.rounds_per_table
        # the table-day's royal flush and straight flush (the recorder's choice, not a fault)
        royal_at, flush_at = rnd.sample(range(n), 2) if n > 1 else (0, None)
        rounds = []
        for i in range(n):
            self.shoe_no[k] += 1
            shoe_id = f"{table.table_id}-{business:%Y%m%d}-S{i + 1:04d}"
            planted = ROYAL_FLUSH if i == royal_at else STRAIGHT_FLUSH if i == flush_at else None
            rounds.append(self.play_round(table, k, shoe_id, i, clock, rnd, planted))
        self.write(k, shoes_table(table, rounds), rounds, rounds_table(table, rounds),
                   shared.bets_table(GAME, table, rounds, self.accounts[k], shared.boxed_bet_columns))
        return n

    # -- a round -------------------------------------------------------------------------------------

    def shuffle(self, rnd: random.Random, n_boxes: int, stack: str | None, at: int | None) -> list[str]:
        """A fresh deck; stacked: the prize hand where the dealing order puts box `at`'s five cards."""
        if stack is None:
            deck = list(CARD_CODES)
            rnd.shuffle(deck)
            return deck
        hand = prize_hand(rnd, stack)
        rnd.shuffle(hand)
        rest = [c for c in CARD_CODES if c not in hand]
        rnd.shuffle(rest)
        where = positions(self.rules, n_boxes)[0][at]
        deck: list[str] = []
        cards = iter(rest)
        for p in range(len(CARD_CODES)):
            deck.append(hand[where.index(p)] if p in where else next(cards))
        return deck

    def play_round(self, table: shared.GameTable, k: int, shoe_id: str, i: int, clock: TableClock, rnd: random.Random,
                   planted: str | None) -> _Round:
        """A round; `planted`: the prize hand of the table-day's deck stacked for it (never cancelled)."""
        rules, acc = self.rules, self.accounts[k]
        n_boxes = rnd.choices(range(1, 8), weights=BOX_WEIGHTS)[0]
        boxes = tuple(sorted(rnd.sample(range(1, rules.max_boxes + 1), n_boxes)))
        seated = tuple(acc.draw(rnd, n_boxes, set()))
        assert len(seated) == n_boxes
        stack, royal = planted, planted == ROYAL_FLUSH
        for category, rate in STACK_RATES:
            if stack is None and rnd.random() < rate:
                stack = category
        at = rnd.randrange(n_boxes) if stack else None
        deck = self.shuffle(rnd, n_boxes, stack, at)
        dealt, dealer = deal(rules, deck, n_boxes)
        ranks = tuple(rank_hand(c) for c in dealt)
        dealer_rank = rank_hand(dealer)
        if stack is not None:
            assert ranks[at].category == stack, (stack, dealt[at])
        decisions = tuple(decide(rank, cards, dealer[0], rnd) for rank, cards in zip(ranks, dealt, strict=True))
        cancel = planted is None and rnd.random() < self.config.cancel_rate
        # Times: betting window, the deal, the decisions, the dealer's four cards, settlement.
        open_us = clock.now
        closed_us = open_us + BETTING_WINDOW
        settled_us = (closed_us + 2 * SECOND + (5 * n_boxes + 1) * CARD_US + rnd.randrange(*DECIDE_US)
                      + 4 * CARD_US + rnd.randrange(SECOND, 3 * SECOND))  # fmt: skip
        if cancel:
            settled_us += rnd.randrange(10 * SECOND, 60 * SECOND)
        clock.now = settled_us + rnd.randrange(3 * SECOND, 8 * SECOND)
        r = _Round(f"{shoe_id}-R001", shoe_id, self.shoe_no[k], open_us, closed_us, settled_us,
                   clock.dealer(open_us), deck, boxes, seated, dealt, dealer, ranks, dealer_rank, decisions,
                   stack, boxes[at] if stack else None, "cancelled" if cancel else "settled",
                   box_cards=list(dealt), dealer_cards=dealer, actions=list(decisions),
                   box_hands=[x.category for x in ranks], dealer_hand=dealer_rank.category)  # fmt: skip
        self.make_bets(k, r, rnd)
        # the day's planted straight flush is kept for a prize paid from the wrong balance while none is planted
        kept = planted == STRAIGHT_FLUSH and "JACKPOT_PRIZE_WRONG_BALANCE" in self.planner.needed
        faults = bool(self.kinds) and not cancel and not royal and not kept
        balance = None
        if faults:
            balance = self.round_fault(r)
        state = _BetFaults(self, table, acc, r) if self.kinds and r.fault is None and not royal else None
        if state is not None:
            state.run(STAKE_KINDS)
        r.before = self.pools[k]
        if balance == "before":
            r.before = self.drift(r.before)
        self.settle(r)
        if state is not None:
            state.run(PAYMENT_KINDS)
            if r.ledger is not None:  # the balances follow what was paid (the audit does not check them then)
                r.after = settle_round(self.rules, r.before, self.jackpot_list(r), [b.paid for b in r.jackpot_bets]
                                       ).after  # fmt: skip
        if balance is not None:
            self.record_balance_fault(r, balance, self.pools[k])
        if state is not None:
            state.run(COPY_KINDS)
        r.bets.sort(key=lambda b: (b.ghost, b.n, b.dup))
        self.pools[k] = r.after  # the operator's pools go on from what was recorded
        return r

    # -- bets and their settlement -------------------------------------------------------------------

    def in_window(self, r: _Round, rnd: random.Random) -> int:
        """Placed during the window, at least two seconds before "no more bets"."""
        return r.open_us + SECOND // 2 + int((BETTING_WINDOW - 5 * SECOND // 2) * rnd.random() ** 0.7)

    def make_bets(self, k: int, r: _Round, rnd: random.Random) -> None:
        acc, (lo, hi) = self.accounts[k], LIMITS[ANTE]
        bets: list[_Bet] = []
        for box, a, decision in zip(r.boxes, r.seated, r.decisions, strict=True):
            vary = rnd.choice((1, 1, 1, 2, 1, 1, 1, 1)) * (0.5 if rnd.random() < 0.15 else 1.0)
            # the box dealt a planted prize hand plays the table minimum: the ANTE's return stays near its own
            ante = lo if box == r.stacked_box else clip(chips(acc.base[a] * vary), lo, hi)
            placed = self.in_window(r, rnd)
            call = self.rules.call_of(ante) if decision == CALL else 0
            bets.append(_Bet(0, a, ANTE, box, ante, 0, call, placed))
            if box == r.stacked_box or rnd.random() < self.jackpot_p[k][a]:
                at = placed + rnd.randrange(SECOND // 5, r.closed_us - placed - SECOND // 2)  # after the ante
                bets.append(_Bet(0, a, JACKPOT, box, JACKPOT_UNIT, 0, None, at))
        bets.sort(key=lambda b: (b.placed, b.acc, BET_CODES.index(b.type), b.seat))
        for n, b in enumerate(bets, 1):
            b.n = n
        r.bets = bets

    def jackpot_list(self, r: _Round) -> list[JackpotBet]:
        return [JackpotBet(b.stake, r.rank_of(b.seat).category) for b in r.jackpot_bets]

    def settle(self, r: _Round) -> None:
        """Every bet's paid by the engine (ANTE: settlement; JACKPOT: the ledger, in box order from the pools
        as they stood when betting closed) and the pools after the round."""
        live = [b for b in r.bets if not b.ghost and not b.dup]
        if r.cancelled:
            for b in live:
                b.paid = b.stake + (b.added or 0)
            r.after, r.ledger, r.jackpot_bets = r.before, None, []
            return
        antes = {b.seat for b in live if b.type == ANTE}
        jackpots = []
        for b in live:
            if b.type == ANTE:
                k = r.boxes.index(b.seat)
                b.paid = ante_credit(self.rules, r.ranks[k], r.dealer_rank, r.decisions[k], b.stake)
            elif b.type == JACKPOT and b.seat in antes:
                jackpots.append(b)
            else:  # a jackpot bet without an ante, a bet the table does not offer: refunded
                b.paid = b.stake
        r.jackpot_bets = sorted(jackpots, key=lambda b: (r.boxes.index(b.seat), b.n))
        r.ledger = settle_round(self.rules, r.before, self.jackpot_list(r))
        for b, prize in zip(r.jackpot_bets, r.ledger.bets, strict=True):
            b.paid = prize.prize
        r.after = r.ledger.after

    # -- round faults --------------------------------------------------------------------------------

    def misreads(self, r: _Round) -> list[tuple[int | None, int, str]]:
        """(box index or None for the dealer, card index, the card read instead): one card read with another
        suit, not a card of the round, the hand's strength unchanged (the settlement follows the cards)."""
        used = set(r.deck[: cards_needed(self.rules, len(r.boxes))])
        out = []
        for who, cards, rank in [*((bi, c, x) for bi, (c, x) in enumerate(zip(r.dealt, r.ranks, strict=True))),
                                 (None, r.dealer_dealt, r.dealer_rank)]:  # fmt: skip
            for j, card in enumerate(cards):
                for suit in SUITS:
                    new = card[0] + suit
                    if new in used:
                        continue
                    if rank_hand(cards[:j] + (new,) + cards[j + 1 :]).strength == rank.strength:
                        out.append((who, j, new))
        return out

    def round_fault(self, r: _Round) -> str | None:
        """Plant a round-level fault (JACKPOT_BALANCE_MISMATCH: returns "before" or "after", planted once the
        round is settled)."""
        misreads = self.misreads(r)
        cands = [k for k in ROUND_KINDS if k != "CARD_SEQUENCE_MISMATCH" or misreads]
        kind = self.pick(cands)
        if kind is None:
            return None
        r.fault = kind
        f, where = self.frnd, f"round {r.shoe_id}"
        if kind == "JACKPOT_BALANCE_MISMATCH":
            first = r.shoe_id.endswith("-S0001")  # the day's first round opens the chain: its before is not checked
            return "after" if first or f.random() < 0.5 else "before"
        if kind == "SHOE_COMPOSITION":
            needed = cards_needed(self.rules, len(r.boxes))
            j = f.randrange(needed, len(r.deck))
            old = r.deck[j]
            new = f.choice([c for c in CARD_CODES if c != old])
            r.deck[j] = new
            change = (f"shoes.cards[{j}] {old} replaced by a copy of {new} (never dealt: the round used cards "
                      f"0-{needed - 1}): {old} short, {new} twice")
            self.planner.record(kind, r.shoe_id, None, None, change)
            return None
        if kind == "CARD_SEQUENCE_MISMATCH":
            bi, j, new = f.choice(misreads)
            if bi is None:
                old = r.dealer_cards[j]
                r.dealer_cards = r.dealer_cards[:j] + (new,) + r.dealer_cards[j + 1 :]
                who = "the dealer"
            else:
                old = r.box_cards[bi][j]
                r.box_cards[bi] = r.box_cards[bi][:j] + (new,) + r.box_cards[bi][j + 1 :]
                who = f"box {r.boxes[bi]}"
            change = f"{where}: {who}'s card {j + 1} recorded as {new}, the deck dealt {old} (same rank, same hand)"
        elif kind == "DECISION_MISSING":
            bi = f.randrange(len(r.boxes))
            old, r.actions[bi] = r.actions[bi], f.choice(("", None))
            change = (f"{where}: box {r.boxes[bi]}'s decision {old} not recorded ({r.actions[bi]!r}); its ANTE's "
                      f"call ({'2 x ante' if old == CALL else 'none'}) says what it did, paid right")
        elif kind == "ILLEGAL_DECISION":
            bi = f.randrange(len(r.boxes))
            old = r.actions[bi]
            r.actions[bi] = f.choice(("CC", "FC", "R") if old == CALL else ("FF", "CF", "X"))
            change = (f"{where}: box {r.boxes[bi]}'s decision {old} recorded as {r.actions[bi]!r}; its ANTE's "
                      f"call ({'2 x ante' if old == CALL else 'none'}) says what it did, paid right")
        else:  # HAND_RANK_MISMATCH
            dealer = f.random() < 0.3
            bi = f.randrange(len(r.boxes))
            old = r.dealer_hand if dealer else r.box_hands[bi]
            i = CATEGORY_INDEX[old]
            new = RANK_NAMES[f.choice([x for x in (i - 1, i + 1) if 0 <= x < len(RANK_NAMES)])]
            if dealer:
                r.dealer_hand, who = new, "the dealer's"
            else:
                r.box_hands[bi], who = new, f"box {r.boxes[bi]}'s"
            change = f"{where}: {who} hand recorded as {new}, the cards make {old}; paid on the cards"
        self.planner.record(kind, r.shoe_id, r.round_id, None, change)
        return None

    def drift(self, pools: Pools) -> Pools:
        """The pools with one balance one minor unit off (never below 0)."""
        f = self.frnd
        delta = f.choice((1, -1))
        if f.random() < 0.5:
            return replace(pools, jackpot=pools.jackpot + (delta if pools.jackpot > 0 else 1))
        return replace(pools, next_pool=pools.next_pool + (delta if pools.next_pool > 0 else 1))

    def record_balance_fault(self, r: _Round, where: str, previous: Pools) -> None:
        if where == "before":
            what = _pool_change(previous, r.before)
            change = (f"round {r.shoe_id}: the {what} when betting closed (the previous round closed on "
                      f"{previous.jackpot}/{previous.next_pool}); the round settled on it and the pools carry on")
        else:
            right = r.after
            r.after = self.drift(right)
            what = _pool_change(right, r.after)
            change = f"round {r.shoe_id}: the {what} after the round (its ledger's); the pools carry on from it"
        self.planner.record("JACKPOT_BALANCE_MISMATCH", r.shoe_id, r.round_id, None, change)

def _pool_change(was: Pools, now: Pools) -> str:
    if was.jackpot != now.jackpot:
        return f"jackpot recorded as {now.jackpot} instead of {was.jackpot}"
    return f"next pool recorded as {now.next_pool} instead of {was.next_pool}"


class _BetFaults(shared.BetFaults):
    """The bet faults of one round (docs/casino-stud.md § What the audit finds), each keeping every other
    rule intact: per kind, each eligible bet with probability `rate` (a needed kind: the first eligible
    one), at most one fault per account (= box) and round, none on a bet that has one."""

    not_offered = NOT_OFFERED_CODES

    def run(self, kinds: tuple[str, ...]) -> None:
        p, wanted = self.rec.planner, self.rec.jackpot_wanted
        for kind in kinds:
            if kind not in p.kinds:
                continue
            for b in list(self.r.bets):
                prize = kind in wanted and b.type == JACKPOT and b.paid > 0 and self.prize(b) is not None
                if not (prize or kind in p.needed) and self.f.random() >= p.rate:
                    continue
                if b.n in self.taken or b.acc in self.busy or b.ghost or b.dup or not self.eligible(kind, b):
                    continue
                if self.kept(b) and kind != "JACKPOT_PRIZE_WRONG_BALANCE":
                    continue
                if getattr(self, "plant_" + kind.lower())(b):
                    self.taken.add(b.n)
                    self.busy.add(b.acc)
                    if prize:
                        wanted.discard(kind)

    # -- which bets --------------------------------------------------------------------------------------

    def kept(self, b: _Bet) -> bool:
        """A bet of the box holding a planted straight flush, while no prize has been paid from the wrong
        balance yet: kept for that kind alone."""
        r = self.r
        return (r.stacked == STRAIGHT_FLUSH and b.seat == r.stacked_box
                and "JACKPOT_PRIZE_WRONG_BALANCE" in self.rec.planner.needed)  # fmt: skip

    def index(self, b: _Bet) -> int | None:
        """Where a jackpot bet settled on a hand is in the round's prize order, or None."""
        return next((i for i, x in enumerate(self.r.jackpot_bets) if x is b), None)

    def prize(self, b: _Bet):
        """The ledger's entry of a jackpot bet settled on a hand, or None."""
        i = self.index(b)
        return None if i is None or self.r.ledger is None else self.r.ledger.bets[i]

    def eligible(self, kind: str, b: _Bet) -> bool:
        r = self.r
        if r.cancelled:
            return kind == "UNDERPAID"
        if kind in ("ADDED_STAKE_MISMATCH", "BET_TYPE_NOT_OFFERED", "DUPLICATE_BET"):
            return b.type == ANTE
        if kind == "JACKPOT_WITHOUT_ANTE":
            return b.type == ANTE and len(r.boxes) < self.rec.rules.max_boxes
        if kind in ("STAKE_BELOW_MIN", "STAKE_ABOVE_MAX", "LATE_BET", "UNKNOWN_ROUND"):
            return b.type in (ANTE, JACKPOT)
        if kind == "OVERPAID":
            return b.type == ANTE or (self.prize(b) is not None and self.prize(b).prize > 0)
        if kind == "UNDERPAID":
            return b.paid > 0 and (b.type == ANTE or self.prize(b) is not None)
        if kind == "JACKPOT_PRIZE_NOT_WON":
            prize = self.prize(b)
            return prize is not None and prize.rule is None
        if kind == "JACKPOT_PRIZE_WRONG_BALANCE":
            prize = self.prize(b)
            if prize is None or prize.rule is None or prize.rule[0] != "percent" or r.stacked == ROYAL_FLUSH:
                return False
            earlier = r.ledger.bets[: self.index(b)]  # the other pool as it stands: untouched before it
            return all(x.rule is None or x.rule[0] != "percent" for x in earlier) and self.other_pool(b) > 0
        raise ValueError(kind)

    # -- bookkeeping ---------------------------------------------------------------------------------------

    def what(self, b: _Bet) -> str:
        return f"{b.type} on box {b.seat}"

    def other_pool(self, b: _Bet) -> int:
        """A percentage prize's percentage of the pool it is not taken from (the pools before the round)."""
        r, rules = self.r, self.rec.rules
        kind, amount = self.prize(b).rule
        other = r.before.next_pool if rules.jackpot.percentage_prizes_from == "jackpot" else r.before.jackpot
        return round_to_unit(other * amount, 100, rules.rounding)

    # -- stakes, before settlement ---------------------------------------------------------------------------

    def plant_added_stake_mismatch(self, b: _Bet) -> bool:
        old = b.added
        b.added = b.stake if old else self.rec.rules.call_of(b.stake)
        what = "called: the call recorded as 1 x ante" if old else "folded: a call recorded anyway"
        self.record("ADDED_STAKE_MISMATCH", b, f"box {b.seat} {what}, added_stake {old} -> {b.added}; paid right")
        return True

    def plant_jackpot_without_ante(self, b: _Bet) -> bool:
        r = self.r
        a = self.idle_account()
        if a is None:
            return False
        box = self.f.choice([x for x in range(1, self.rec.rules.max_boxes + 1) if x not in r.boxes])
        new = self.add(_Bet(0, a, JACKPOT, box, JACKPOT_UNIT, JACKPOT_UNIT, None,
                            self.rec.in_window(r, self.f)))  # fmt: skip
        self.record("JACKPOT_WITHOUT_ANTE", new, f"JACKPOT on box {box} added for {self.acc.ids[a]}, with no ANTE "
                                                 f"there (boxes {list(r.boxes)}); refunded {JACKPOT_UNIT}")
        return False  # the anchor bet itself is untouched (its account may still get a fault)

    def restake(self, kind: str, b: _Bet, new: int, limit: str) -> bool:
        old = b.stake
        b.stake = new
        text = f"{self.what(b)} stake {old} -> {new} ({limit}); paid as the engine settles it"
        if b.type == ANTE and b.added:
            old_call, b.added = b.added, self.rec.rules.call_of(new)
            text += f"; the call {old_call} -> {b.added}"
        self.record(kind, b, text)
        return True

    def plant_late_bet(self, b: _Bet) -> bool:
        return self.plant_late(b, f"{self.what(b)} ", "paid right")

    # -- payments, after settlement -------------------------------------------------------------------------

    def repay(self, kind: str, b: _Bet, new: int, text: str) -> bool:
        """`paid` -> new; a percentage prize never to the other pool's percentage (that is the wrong balance)."""
        prize = self.prize(b)
        if prize is not None and prize.rule is not None and prize.rule[0] == "percent" and new == self.other_pool(b):
            return False
        old, b.paid = b.paid, new
        self.record(kind, b, f"{text} on box {b.seat}: paid {old} -> {new}")
        return True

    def prize_text(self, b: _Bet) -> str:
        kind, amount = self.prize(b).rule
        return f"jackpot prize of {self.r.rank_of(b.seat).category} ({amount}{'%' if kind == 'percent' else ' units'})"

    def plant_overpaid(self, b: _Bet) -> bool:
        if b.type == ANTE:
            return self.repay("OVERPAID", b, b.paid + b.stake, f"ANTE ({_OUTCOME[self.r_outcome(b)]}) paid one "
                                                               "ante more")
        prize = self.prize(b)
        more = b.stake if prize.rule[0] == "percent" else prize.prize  # a unit more / the fixed prize twice
        return self.repay("OVERPAID", b, b.paid + more, f"{self.prize_text(b)} overpaid")

    def plant_underpaid(self, b: _Bet) -> bool:
        if self.r.cancelled:
            return self.repay("UNDERPAID", b, 0, f"{b.type} of a cancelled round not refunded")
        if b.type == ANTE:
            return self.repay("UNDERPAID", b, b.paid - b.stake, f"ANTE ({_OUTCOME[self.r_outcome(b)]}) paid one "
                                                                "ante less")
        return self.repay("UNDERPAID", b, b.paid - b.stake, f"{self.prize_text(b)} paid one unit less")

    def r_outcome(self, b: _Bet) -> str:
        r = self.r
        k = r.boxes.index(b.seat)
        return settle_box(self.rec.rules, r.ranks[k], r.dealer_rank, r.decisions[k], b.stake).outcome

    def plant_jackpot_prize_not_won(self, b: _Bet) -> bool:
        rank = self.r.rank_of(b.seat).category
        old, b.paid = b.paid, 50 * b.stake
        self.record("JACKPOT_PRIZE_NOT_WON", b, f"JACKPOT on box {b.seat} paid a flush's prize on {rank}: "
                                                f"paid {old} -> {b.paid}")
        return True

    def plant_jackpot_prize_wrong_balance(self, b: _Bet) -> bool:
        prize = self.prize(b)
        old, b.paid = b.paid, self.other_pool(b)
        if b.paid == old:
            b.paid = old
            return False
        self.record("JACKPOT_PRIZE_WRONG_BALANCE", b,
                    f"JACKPOT on box {b.seat} ({self.r.rank_of(b.seat).category}) paid {prize.rule[1]}% of the next "
                    f"pool {self.r.before.next_pool} instead of the jackpot {prize.base}: paid {old} -> {b.paid}; "
                    f"the pools follow the payment")
        return True

    # -- copies (UNKNOWN_ROUND, DUPLICATE_BET: planted by the shared BetFaults) ------------------------------------

    def ghost_paid(self, b: _Bet) -> int:
        return b.stake + (b.added or 0)


# ---------------------------------------------------------------------------------------------
# Arrow tables (columns by name, in the contract's order for the game)


def shoes_table(table: shared.GameTable, rounds: list[_Round]) -> pa.Table:
    n = len(rounds)
    return shared.contract_table("shoes", GAME, {
        "shoe_id": pa.array([r.shoe_id for r in rounds], pa.string()),
        "table_id": pa.array([table.table_id] * n, pa.string()),
        "shoe_no": pa.array([r.shoe_no for r in rounds], pa.int32()),
        "opened_at": timestamps([r.open_us for r in rounds]),
        "closed_at": timestamps([r.settled_us for r in rounds]),
        "decks": pa.array([1] * n, pa.int8()),
        "cards": pa.array([r.deck for r in rounds], pa.list_(pa.string())),
        "cut_index": pa.nulls(n, pa.int32()),
        "shuffle_id": pa.array([f"SHF-{r.shoe_id}" for r in rounds], pa.string()),
    })  # fmt: skip


def rounds_table(table: shared.GameTable, rounds: list[_Round]) -> pa.Table:
    return shared.contract_table("rounds", GAME, {
        **shared.round_columns(table, rounds),
        **shared.boxed_round_columns(rounds),
        "box_hands": pa.array([list(r.box_hands) for r in rounds], pa.list_(pa.string())),
        "dealer_hand": pa.array([r.dealer_hand for r in rounds], pa.string()),
        "jackpot_before": pa.array([r.before.jackpot for r in rounds], pa.int64()),
        "jackpot_after": pa.array([r.after.jackpot for r in rounds], pa.int64()),
        "next_pool_before": pa.array([r.before.next_pool for r in rounds], pa.int64()),
        "next_pool_after": pa.array([r.after.next_pool for r in rounds], pa.int64()),
    })  # fmt: skip


RECORDER = GameRecorder(game=GAME, field="stud_tables", fault_kinds=STUD_FAULT_KINDS, record=StudRecorder,
                        help="Casino stud tables (casino_stud_live, a jackpot pool each), after the sic bo ones.")
