"""A table-day's rounds and bets as the compiled kernel takes them (kernel.rank_hands, kernel.settle_day), and
what it gives back: which rounds are quiet (nothing in them for the readable audit to explain but the plain
checks of a bet), their hands' ranks, every bet's credit on them and the pools they leave.

A round is put to the kernel only when what it cannot see is as the readable audit wants it (as dealt:
dealt.py reads that from the rounds' columns); the kernel judges the rest (ranks, balances, bets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import TableFacts
from engine.kernels import ROUNDING_CODES

from . import BET_CODES
from .dealt import DealtBets, DealtRounds
from .hands import RANK_NAMES, HandRank
from .kernel import PERCENT, RULE_INTS, UNITS, rank_hands, settle_day
from .rules import POOLS, CasinoStudRules

_NO_SEAT = -(2**62)  # a bet's seat not recorded (None): one value of its own, as the readable `antes` set sees it


@dataclass(frozen=True, eq=False)
class QuietDay:
    """The kernel's results, numpy arrays (int64 unless said)."""

    quiet: np.ndarray  # by round (bool)
    qualifies: np.ndarray  # by round (bool)
    after: np.ndarray  # (rounds, 2): the expected jackpot and next pool after
    ledger: np.ndarray  # (rounds, 7): to jackpot, next pool, house; from jackpot, next pool, house; reset
    jackpot_bets: np.ndarray  # by round
    payment: np.ndarray  # by round (bool): a jackpot bet's payment finding (settle_day's)
    box_at: np.ndarray  # round r's boxes: box_at[r]:box_at[r + 1] of category, strength
    category: np.ndarray
    strength: np.ndarray
    dealer_category: np.ndarray  # by round
    dealer_strength: np.ndarray
    credit: np.ndarray  # by bet
    outcome: np.ndarray  # an ANTE's kernel.FOLDED...LOSE; a percentage prize's base
    flags: np.ndarray  # (5, bets): settle_day's flag_call, flag_paid, flag_low, flag_high, flag_late
    refund: np.ndarray  # by bet: kernel.NO_ANTE, NOT_OFFERED, EMPTY_BOX (its finding and words), 0 none
    judged: np.ndarray  # by bet: kernel.NOT_WON, WRONG_BALANCE (a jackpot payment's finding), 0 none
    bet_box: np.ndarray  # by bet: its box row (-1: none of its round's boxes)
    box_no: np.ndarray  # by box row: its box (seat) number, its decision code, its five card codes (5 a row)
    action: np.ndarray
    cards: np.ndarray
    dealer_cards: np.ndarray  # by round: the dealer's five card codes (5 a round; -1 where not readable)
    # a quiet round's findings the kernel's path words (bool): HAND_RANK_MISMATCH's by box row (`hand_wrong`) and by
    # round (`dealer_wrong`, `rank_wrong`: _ranks_recorded), LATE_DECISION, SHOE_COMPOSITION, a decision not C or F
    hand_wrong: np.ndarray
    dealer_wrong: np.ndarray
    rank_wrong: np.ndarray
    late: np.ndarray
    deck_wrong: np.ndarray
    undecided: np.ndarray

    def hand(self, k: int) -> HandRank:
        return HandRank(RANK_NAMES[self.category[k]], int(self.strength[k]))

    def dealer(self, i: int) -> HandRank:
        return HandRank(RANK_NAMES[self.dealer_category[i]], int(self.dealer_strength[i]))


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


def _ranks_recorded(rounds: DealtRounds, category: np.ndarray, dealer_category: np.ndarray, quiet: np.ndarray
                    ) -> dict[str, np.ndarray]:
    """round_findings.rank_mismatches as columns, of the quiet rounds: `hand_wrong` by box row (its recorded rank
    not its cards'), `dealer_wrong` and `rank_wrong` by round (the dealer's; any, or more ranks than boxes: the
    round's HAND_RANK_MISMATCH)."""
    box_round = np.repeat(np.arange(len(quiet)), np.diff(rounds.box_at))
    hand_wrong = (rounds.box_hand != category) & quiet[box_round]
    dealer_wrong = (rounds.dealer_hand != dealer_category) & quiet
    rank_wrong = dealer_wrong | (quiet & (rounds.hands_len > np.diff(rounds.box_at)))
    rank_wrong[box_round[hand_wrong]] = True
    return {"hand_wrong": hand_wrong, "dealer_wrong": dealer_wrong, "rank_wrong": rank_wrong}


def settle_quiet(rules: CasinoStudRules, table: TableFacts, rounds: DealtRounds, bets: DealtBets,
                 held: set[int]) -> QuietDay:
    """The kernel over a table-day: its rounds and bets as dealt.py reads them; `held`: the rounds with a bet in
    quarantine."""
    n = len(rounds.status)
    fives = np.arange(0, len(rounds.cards) + 1, 5, dtype=np.int64)
    category, strength = rank_hands(rounds.cards, fives)
    dealer_cat, dealer_str = rank_hands(rounds.dealer, np.arange(0, 5 * n + 1, 5, dtype=np.int64))
    bet_round = np.where((bets.round_index >= 0) & (bets.round_index < n), bets.round_index, -1)
    bet_seat = np.asarray(pc.fill_null(bets.seat, _NO_SEAT), np.int64)
    # each bet's box row: a box of its round on its seat (rows are in round order, a round's seats ascending)
    key = np.repeat(np.arange(n), np.diff(rounds.box_at)) << 8 | rounds.box_no
    seat = np.clip(bet_seat, 0, 255)
    row = np.minimum(np.searchsorted(key, bet_round << 8 | seat), max(len(key) - 1, 0))
    bet_box = np.where((bet_round >= 0) & (bet_seat == seat) & (key[row] == (bet_round << 8 | seat))
                       if len(key) else False, row, -1).astype(np.int64)
    # ANTE 0, JACKPOT 1, then the day's other names (a type not recorded: one more)
    names = [*BET_CODES, *(t for t in pc.unique(bets.bet_type).to_pylist() if t is not None and t not in BET_CODES)]
    bet_type = np.asarray(pc.fill_null(pc.index_in(bets.bet_type, pa.array(names, pa.string())), len(names)),
                          np.int64)
    limits = [table.limits.get(name) for name in names] + [None]
    low, high = (np.array([lim[end] if lim else 0 for lim in limits], np.int64) for end in (0, 1))
    prizes = [rules.jackpot.prize_of(name) for name in RANK_NAMES]
    held_rounds = np.zeros(n, np.bool_)
    held_rounds[[i for i in held if 0 <= i < n]] = True
    out = settle_day(
        rounds.status, rounds.box_at, rounds.box_no, rounds.action, category, strength, dealer_cat, dealer_str,
        rounds.readable, rounds.pools, rounds.known,
        bet_round, bet_type, bet_seat, bet_box, bets.stake, bets.added, bets.paid, bets.placed,
        rounds.closed, held_rounds, np.array([lim is not None for lim in limits], np.bool_), low, high,
        np.array([rules.call_payouts[name] for name in RANK_NAMES], np.int64),
        np.array([0 if p is None else PERCENT if p[0] == "percent" else UNITS for p in prizes], np.int64),
        np.array([0 if p is None else p[1] for p in prizes], np.int64), rule_ints(rules))
    quiet, qualifies, after, ledger, jackpot_bets, payment, credit, outcome, refund, flags, judged = out
    quiet = np.asarray(quiet, np.bool_)
    box_round = np.repeat(np.arange(n), np.diff(rounds.box_at))
    undecided = np.zeros(n, np.bool_)  # a box's decision not one letter C or F (DECISION_MISSING, ILLEGAL_DECISION)
    undecided[box_round[rounds.action < 0]] = True
    ints = {name: np.ascontiguousarray(values, np.int64) for name, values in (
        ("after", after.T), ("ledger", ledger.T), ("jackpot_bets", jackpot_bets), ("box_at", rounds.box_at),
        ("category", category), ("strength", strength), ("dealer_category", dealer_cat),
        ("dealer_strength", dealer_str), ("credit", credit), ("outcome", outcome), ("refund", refund),
        ("judged", judged))}
    return QuietDay(
        quiet=quiet, qualifies=np.asarray(qualifies, np.bool_), payment=np.asarray(payment, np.bool_), flags=flags,
        bet_box=bet_box, box_no=rounds.box_no, action=rounds.action, cards=rounds.cards, dealer_cards=rounds.dealer,
        late=rounds.late & quiet, deck_wrong=rounds.deck_wrong & quiet, undecided=undecided & quiet, **ints,
        **_ranks_recorded(rounds, ints["category"], ints["dealer_category"], quiet))
