"""A table-day's rounds and bets as the compiled kernel takes them (kernel.rank_hands, kernel.settle_day), and
what it gives back: which rounds are quiet (nothing in them for the readable audit to explain but the plain
checks of a bet), their hands' ranks, every bet's credit on them and the pools they leave.

A round is put to the kernel only when what it cannot see is as the readable audit wants it (`_as_dealt`:
settled, one entry a box in every list, boxes ascending seats of the table, its deck one full deck with the
shape of one, every card where the deck deals it, one decision letter a box, its instants one a letter and
none after the reveal); the kernel judges the rest (ranks, balances, bets).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.betting import TableFacts
from engine.cards import CARD_CODES, CARD_INDEX
from engine.kernels import ROUNDING_CODES

from . import BET_CODES
from .dealing import positions
from .hands import CATEGORY_INDEX, RANK_NAMES, HandRank
from .kernel import PERCENT, RULE_INTS, UNITS, rank_hands, settle_day
from .rules import POOLS, CasinoStudRules

_ACTION = {"C": 0, "F": 1}
_NO_SEAT = -(2**62)  # a bet's seat not recorded (None): one value of its own, as the readable `antes` set sees it


@dataclass(frozen=True)
class QuietDay:
    """The kernel's results as Python lists (the audit reads them round by round)."""

    quiet: list[bool]  # by round
    qualifies: list[bool]
    after: list[list[int]]  # by round: the expected jackpot and next pool after
    ledger: list[list[int]]  # by round: to jackpot, next pool, house; from jackpot, next pool, house; reset
    jackpot_bets: list[int]
    box_at: list[int]  # round r's boxes: box_at[r]:box_at[r + 1] of category, strength
    category: list[int]
    strength: list[int]
    dealer_category: list[int]
    dealer_strength: list[int]
    credit: list[int]  # by bet
    outcome: list[int]  # an ANTE's kernel.FOLDED...LOSE; a percentage prize's base
    call_flag: list[bool]  # by bet: its recorded call is not its box's decision's
    check_flag: list[bool]  # by bet: paid, limits or window to be checked in words
    refund: list[int]  # by bet: kernel.NO_ANTE, NOT_OFFERED, EMPTY_BOX (its finding and words), 0 none
    box_no: np.ndarray  # by box row: its box (seat) number, its decision code, its five card codes (5 a row)
    action: np.ndarray
    cards: np.ndarray
    dealer_cards: np.ndarray  # by round: the dealer's five card codes (5 a round; -1 where not readable)

    def hand(self, k: int) -> HandRank:
        return hand_rank(self.category[k], self.strength[k])

    def dealer(self, i: int) -> HandRank:
        return hand_rank(self.dealer_category[i], self.dealer_strength[i])


_HANDS: dict[int, HandRank] = {}


def hand_rank(category: int, strength: int) -> HandRank:
    """The HandRank of a kernel's (category, strength), one object a strength."""
    hand = _HANDS.get(strength)
    if hand is None:
        hand = _HANDS[strength] = HandRank(RANK_NAMES[category], strength)
    return hand


_FULL_DECK = frozenset(CARD_CODES)


def one_full_deck(deck: Sequence[str | None]) -> bool:
    """The 52 codes once each (check_composition(deck, 1).ok, without the counting)."""
    return len(deck) == len(_FULL_DECK) and _FULL_DECK.issuperset(deck) and len(set(deck)) == len(_FULL_DECK)


def _as_dealt(rules: CasinoStudRules, r) -> bool:
    """What the kernel does not judge of a round is as the readable audit wants it (the module's docstring)."""
    n, deck = len(r.boxes), r.deck
    if (r.status != "settled" or not n or len(r.box_cards) != n or len(r.box_actions) != n
            or r.decks != 1 or r.cut_index is not None or not one_full_deck(deck)):
        return False
    if not all(isinstance(b, int) and 1 <= b <= rules.max_boxes for b in r.boxes) or list(r.boxes) != sorted(
            set(r.boxes)):
        return False
    box_pos, dealer_pos = positions(rules, n)
    if any(tuple(cards) != tuple(deck[p] for p in pos) for pos, cards in zip(box_pos, r.box_cards, strict=True)):
        return False
    if tuple(r.dealer_cards) != tuple(deck[p] for p in dealer_pos):
        return False
    if any(a not in _ACTION for a in r.box_actions):
        return False
    times = r.box_action_times
    if times is None:
        return True
    if len(times) != n or any(t is not None and len(t) != 1 for t in times):
        return False
    revealed = r.dealer_revealed_at
    return revealed is None or all(t is None or t[0] is None or t[0] <= revealed for t in times)


def rule_ints(rules: CasinoStudRules) -> np.ndarray:
    """The ruleset as kernel.settle_day takes it (RULE_INTS)."""
    jp = rules.jackpot
    facts = {"call_multiple": rules.call_multiple,
             "max_call_payout": -1 if rules.max_call_payout is None else rules.max_call_payout,
             "share_jackpot": jp.shares["jackpot"], "share_next_pool": jp.shares["next_pool"],
             "share_house": jp.shares["house"], "remainder_to": POOLS.index(jp.remainder_to),
             "fixed_from_house": jp.fixed_prizes_from == "house",
             "contributions_before_prizes": jp.contributions_before_prizes,
             "reset_next_pool": jp.reset == "next_pool", "requires_ante": jp.requires_ante,
             "rounding": ROUNDING_CODES[rules.rounding], "deal_box_by_box": rules.deal_order == "box_by_box",
             "burn_cards": rules.burn_cards}
    return np.array([int(facts[name]) for name in RULE_INTS], np.int64)


def settle_quiet(rules: CasinoStudRules, table: TableFacts, rounds: Sequence, bets: Sequence,
                 held: set[int]) -> QuietDay:
    """The kernel over a table-day (audit.RecordedRound, audit.RecordedBet); `held`: the rounds with a bet in
    quarantine."""
    n = len(rounds)
    status, readable, box_at, box_no, action, box_hand, hands_len, dealer_hand = [], [], [0], [], [], [], [], []
    cards, dealer, pools, known, closed, seats = [], [], [], [], [], []
    for r in rounds:
        ok = _as_dealt(rules, r)
        status.append(0 if r.status == "settled" else 1 if r.status == "cancelled" else 2)
        readable.append(ok)
        closed.append(r.betting_closed_at)
        pool = (r.jackpot_before, r.next_pool_before)
        pools.append([p if isinstance(p, int) else 0 for p in pool])
        known.append([isinstance(p, int) for p in pool])
        seats.append({b: k for k, b in enumerate(r.boxes, len(box_no))} if ok else {})
        if ok:
            box_no += r.boxes
            action += (_ACTION[a] for a in r.box_actions)
            box_hand += (CATEGORY_INDEX.get(h, -1) if isinstance(h, str) else -1 for h in r.box_hands[:len(r.boxes)])
            box_hand += [-1] * (len(r.boxes) - len(r.box_hands))
            for c in r.box_cards:
                cards += (CARD_INDEX[x] for x in c)
            dealer += (CARD_INDEX[x] for x in r.dealer_cards)
        else:
            dealer += [-1] * 5
        hands_len.append(len(r.box_hands))
        dealer_hand.append(CATEGORY_INDEX.get(r.dealer_hand, -1) if isinstance(r.dealer_hand, str) else -1)
        box_at.append(len(box_no))
    fives = np.arange(0, 5 * len(box_no) + 1, 5, dtype=np.int64)
    cards, dealers = np.array(cards, np.int64), np.array(dealer, np.int64)
    category, strength = rank_hands(cards, fives)
    dealer_cat, dealer_str = rank_hands(dealers, np.arange(0, 5 * n + 1, 5, dtype=np.int64))
    bet_round = np.array([b.round_index if 0 <= b.round_index < n else -1 for b in bets], np.int64)
    bet_box = np.array([seats[k].get(b.seat, -1) if k >= 0 else -1 for b, k in zip(bets, bet_round.tolist(),
                                                                                    strict=True)], np.int64)
    types = {name: code for code, name in enumerate(BET_CODES)}  # ANTE 0, JACKPOT 1, then the day's others
    bet_type = np.array([types.setdefault(b.bet_type, len(types)) for b in bets], np.int64)
    limits = [table.limits.get(name) for name in types]
    low, high = (np.array([lim[end] if lim else 0 for lim in limits], np.int64) for end in (0, 1))
    prizes = [rules.jackpot.prize_of(name) for name in RANK_NAMES]
    held_rounds = np.zeros(n, np.bool_)
    held_rounds[[i for i in held if 0 <= i < n]] = True
    out = settle_day(
        np.array(status, np.int64), np.array(box_at, np.int64), np.array(box_no, np.int64),
        np.array(action, np.int64), category, strength, np.array(box_hand, np.int64), np.array(hands_len, np.int64),
        dealer_cat, dealer_str,
        np.array(dealer_hand, np.int64), np.array(readable, np.bool_),
        np.array(pools, np.int64).reshape(n, 2).T.copy(), np.array(known, np.bool_).reshape(n, 2).T.copy(),
        bet_round, bet_type, np.array([b.seat if b.seat is not None else _NO_SEAT for b in bets], np.int64), bet_box,
        *(np.array([_int(getattr(b, c)) for b in bets], np.int64) for c in ("stake", "added_stake", "paid")),
        np.array([b.placed_at if isinstance(b.placed_at, int) else 0 for b in bets], np.int64),
        np.array(closed, np.int64), held_rounds, np.array([lim is not None for lim in limits], np.bool_), low, high,
        np.array([rules.call_payouts[name] for name in RANK_NAMES], np.int64),
        np.array([0 if p is None else PERCENT if p[0] == "percent" else UNITS for p in prizes], np.int64),
        np.array([0 if p is None else p[1] for p in prizes], np.int64), rule_ints(rules))
    quiet, qualifies, after, ledger, jackpot_bets, credit, outcome, refund, flags = out
    return QuietDay(quiet.tolist(), qualifies.tolist(), after.T.tolist(), ledger.T.tolist(), jackpot_bets.tolist(),
                    box_at, category.tolist(), strength.tolist(), dealer_cat.tolist(), dealer_str.tolist(),
                    credit.tolist(), outcome.tolist(), flags[0].tolist(), flags[1:].any(axis=0).tolist(),
                    refund.tolist(),
                    np.array(box_no, np.int64), np.array(action, np.int64), cards, dealers)


def _int(value) -> int:
    """An amount as the kernel takes it: None 0; one too large for int64 arithmetic, or not a number, is 2**40
    (its round is not quiet)."""
    if value is None:
        return 0
    return value if isinstance(value, int) and -(2**40) < value < 2**40 else 2**40
