"""The explanations of the rounds the kernel settled (quiet.py), joined column by column in Arrow: the lines
explain.explain_round and the audit's bet lines give such a round (settled, dealt as its deck says, its ranks
recorded right, one C or F a box, no decision late), each hand described once per distinct strength, the
amounts written by a kernel (betting_lines.amount_texts), each instant by numpy. explain.py and audit.py state
the words; the kernel's tests hold these to them (tests/test_kernels_casino_stud.py: every round's explanation as
the readable audit writes it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import us_texts
from engine.betting_lines import amount_texts
from engine.cards import CARD_CODES
from engine.kernels import spans

from . import BET_CODES
from .dealing import positions
from .dealt import DealtBets
from .explain import positions_text
from .hands import RANK_NAMES, describe
from .kernel import LOSE, WIN
from .quiet import QuietDay, hand_rank
from .rules import POOLS, CasinoStudRules

_join = pc.binary_join_element_wise
_ANTE = BET_CODES[0]  # the bet type (the audit's ANTE; kernel.ANTE is its code)
_CARDS = pa.array(CARD_CODES, pa.string())
_CATEGORIES = pa.array(RANK_NAMES, pa.string())
_POOL_COLUMNS = ["jackpot_before", "next_pool_before", "jackpot_after", "next_pool_after"]
REVEAL = "the dealer's four cards revealed"  # what happened at dealer_revealed_at, in the timing line


def _strings(values: Sequence[str]) -> pa.Array:
    return pa.array(values, pa.string())


class _Described:
    """hands.describe by the kernel's strength (the category is its top bits), each of the 7,462 ranks described
    once in the process: the strengths described so far, ascending, with their words (one pair, replaced whole:
    threads share it)."""

    def __init__(self) -> None:
        self.known = (np.zeros(0, np.int64), _strings([]))

    def __call__(self, strength: np.ndarray) -> pa.Array:
        strengths, words = self.known
        at = np.searchsorted(strengths, strength)
        if len(strength) and (not len(strengths) or (strengths[np.minimum(at, len(strengths) - 1)] != strength).any()):
            strengths = np.union1d(strengths, strength)
            words = _strings([describe(hand_rank(s >> 20, s)) for s in strengths.tolist()])
            self.known = strengths, words
            at = np.searchsorted(strengths, strength)
        return words.take(pa.array(at))


_described = _Described()


def _cards(codes: np.ndarray) -> pa.Array:
    """explain's format_cards of five card codes a row."""
    five = np.asarray(codes, np.int64).reshape(-1, 5)
    return _join(*(_CARDS.take(pa.array(five[:, k])) for k in range(5)), " ")


def _chosen(which: np.ndarray, options: Sequence[pa.Array | str], n: int) -> pa.Array:
    """Each row's text from options[which[row]] (a text, or a column of n rows)."""
    columns = [o if isinstance(o, pa.Array) else pa.repeat(pa.scalar(o, pa.string()), n) for o in options]
    return pc.choose(pa.array(np.asarray(which, np.int64)), *columns) if n else _strings([])


def _ranges(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each row of the ranges starts[j]:ends[j], laid end to end; the range j it is of)."""
    lengths = ends - starts
    return spans(starts, lengths), np.repeat(np.arange(len(starts)), lengths)


def quiet_explanations(rules: CasinoStudRules, currency: str, rounds: pa.RecordBatch, bets: DealtBets,
                       quiet_rounds: Sequence[int], day: QuietDay,
                       pools: np.ndarray, known: np.ndarray) -> tuple[np.ndarray, pa.Array]:
    """(each of `quiet_rounds`' count of lines, their lines end to end) as the readable audit explains those
    rounds: `rounds`, `bets` as dealt.py reads them (the rounds' dealt.ROUND_TYPES columns), `day` the kernel's,
    `pools` the expected pools by round ((4, n): jackpot and next pool before, then after; `known` (2, n): before,
    after; the audit's chain)."""
    q = np.asarray(quiet_rounds, np.int64)
    if not len(q):
        return np.zeros(0, np.int64), _strings([])
    def money(values) -> pa.Array:
        return amount_texts(np.asarray(values, np.int64), currency)

    quiet = rounds.select(["round_id", "shoe_id", *_POOL_COLUMNS, "box_action_times", "dealer_revealed_at"]).take(
        pa.array(q))
    burn = f" after {rules.burn_cards} burned" if rules.burn_cards else ""
    header = _join("round ", quiet["round_id"].fill_null("None"), " (settled), deck ",
                   quiet["shoe_id"].fill_null("None"), f": 52 cards, dealt {rules.deal_order}{burn}", "")
    n_boxes, box_round, place, hands = _hand_lines(rules, q, day)
    mine, n_bets = _bets_of(q, bets.round_index, len(day.quiet))
    bet_round = np.repeat(np.arange(len(q)), n_bets)
    bet_place = np.arange(len(bet_round)) - np.repeat(np.cumsum(n_bets) - n_bets, n_bets)
    bet_lines = _bet_lines(rules, bets, mine, q[bet_round], day, money)
    before, after, fed, won, ledger_lines = _pool_lines(rules, quiet, q, day, pools[:, q], known[:, q], money)
    n_ledger = np.zeros(len(q), np.int64)
    n_ledger[fed] += 1
    n_ledger[won] += 1
    timed, timing_lines = _timing_lines(quiet, day, np.asarray(day.box_at, np.int64)[q])

    # the lines in their places: header, boxes, dealer, qualification, bets, pools before, ledger, pools after,
    # decision instants
    n_lines = 1 + n_boxes + 2 + n_bets + 1 + n_ledger + 1 + timed
    at = np.cumsum(n_lines) - n_lines
    mid = at + 3 + n_boxes + n_bets  # the pools before
    places = [at, at[box_round] + 1 + place, at + 1 + n_boxes, at + 2 + n_boxes,
              at[bet_round] + 3 + n_boxes[bet_round] + bet_place, mid, mid[fed] + 1, mid[won] + 2, mid + 1 + n_ledger,
              (mid + 2 + n_ledger)[timed > 0]]
    lines = pa.concat_arrays([header, *hands, bet_lines, before, *ledger_lines, after, timing_lines])
    into = np.empty(len(lines), np.int64)
    into[np.concatenate(places)] = np.arange(len(lines))
    return n_lines, lines.take(pa.array(into))


def _bets_of(q: np.ndarray, round_index: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(the bets of the rounds `q` (ascending, of n), round by round, a round's in record order; each round's
    count of them)."""
    place = np.full(n + 1, -1, np.int64)
    place[q] = np.arange(len(q))
    at = place[np.where((round_index >= 0) & (round_index < n), round_index, n)]
    mine = np.flatnonzero(at >= 0)
    return mine[np.argsort(at[mine], kind="stable")], np.bincount(at[mine], minlength=len(q))


def _hand_lines(rules: CasinoStudRules, q: np.ndarray, day: QuietDay
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[pa.Array]]:
    """The rounds `q`'s boxes and dealer: (each round's box count; each box line's round (an index into q) and
    place among its round's boxes; [the box lines, the dealer lines, the qualification lines])."""
    box_at = np.asarray(day.box_at, np.int64)
    n_boxes = box_at[q + 1] - box_at[q]
    rows, box_round = _ranges(box_at[q], box_at[q + 1])
    place = rows - box_at[q][box_round]
    most = int(n_boxes.max())
    where = [positions(rules, n) for n in range(most + 1)]  # by box count: where the deck dealt each box and the dealer
    box_where = _strings([positions_text(where[n][0][k]) if k < n else "" for n in range(most + 1)
                          for k in range(most)])
    strength, dealer_strength = np.asarray(day.strength, np.int64)[rows], np.asarray(day.dealer_strength, np.int64)[q]
    box_lines = _join("box ", pc.cast(pa.array(day.box_no[rows]), pa.string()), " (",
                      box_where.take(pa.array(n_boxes[box_round] * most + place)), "): ",
                      _cards(day.cards.reshape(-1, 5)[rows]), ": ", _described(strength), " (",
                      _CATEGORIES.take(pa.array(strength >> 20)), "); ",
                      _strings(["calls", "folds"]).take(pa.array(day.action[rows])), "")
    dealer_where = _strings([f"deck card {where[n][1][0]} open, "
                             f"{positions_text(where[n][1][1:])[len('deck cards '):]} after the decisions"
                             for n in range(most + 1)])
    dealer_lines = _join("dealer (", dealer_where.take(pa.array(n_boxes)), "): ",
                         _cards(day.dealer_cards.reshape(-1, 5)[q]), ": ", _described(dealer_strength), " (",
                         _CATEGORIES.take(pa.array(dealer_strength >> 20)), ")", "")
    qualifies = np.asarray(day.qualifies, np.bool_)[q]
    qualify_lines = _strings([
        "the dealer does not qualify (below ace-king): every call is returned, antes pay 1:1",
        "the dealer qualifies (ace-king or better)"]).take(pa.array(qualifies.astype(np.int64)))
    return n_boxes, box_round, place, [box_lines, dealer_lines, qualify_lines]


def _bet_lines(rules: CasinoStudRules, bets: DealtBets, b: np.ndarray, bet_round: np.ndarray, day: QuietDay,
               money) -> pa.Array:
    """The audit's line of each bet b of `bets` (`bet_round` their rounds'; a quiet round's amounts are all below
    the kernel's 2**40)."""
    box_at = np.asarray(day.box_at, np.int64)
    strength, dealer_strength = np.asarray(day.strength, np.int64), np.asarray(day.dealer_strength, np.int64)
    taken = pa.array(b)
    stake, added = bets.stake[b], bets.added[b]
    types = bets.bet_type.take(taken)
    is_ante = np.asarray(pc.fill_null(pc.equal(types, _ANTE), False), np.bool_)
    credit, outcome = np.asarray(day.credit, np.int64)[b], np.asarray(day.outcome, np.int64)[b]
    refund = np.asarray(day.refund, np.int64)[b]
    # each bet's box row: rows are in round order, a round's boxes ascending seats (below 2**16); a refunded bet's
    # seat may be no box of its round (its line does not name a hand: any row will do)
    seats = bets.seat.take(taken)
    seat = np.asarray(seats.fill_null(0), np.int64)
    row_key = np.repeat(np.arange(len(box_at) - 1), np.diff(box_at)) << 16 | day.box_no
    box_row = np.minimum(np.searchsorted(row_key, bet_round << 16 | seat), len(row_key) - 1)
    category = strength[box_row] >> 20
    m = len(b)
    bw, dw = _described(strength[box_row]), _described(dealer_strength[bet_round])
    odds = np.array([rules.call_payouts[name] for name in RANK_NAMES], np.int64)[category]
    cap = rules.max_call_payout
    capped = (outcome == WIN) & (cap is not None) & (rules.call_of(stake) * odds > (cap if cap is not None else 0))
    names = _CATEGORIES.take(pa.array(category))
    win = _join("called; ", bw, " beats the dealer's ", dw, ": the ante pays 1:1, the call ",
                pc.cast(pa.array(odds), pa.string()), ":1 (", names, ")",
                _chosen(capped, ["", f" (capped at {cap} minor units)"], m), "")
    jp = rules.jackpot
    prizes = [jp.prize_of(name) for name in RANK_NAMES]
    kind = np.array([0 if p is None else 1 if p[0] == "percent" else 2 for p in prizes], np.int64)[category]
    to = [stake * jp.shares[pool] // 100 for pool in POOLS]  # ledger.contribution
    to[POOLS.index(jp.remainder_to)] += stake - to[0] - to[1] - to[2]
    no_prize = _join(names, ": no prize; feeds the jackpot ", money(to[0]), ", the next pool ", money(to[1]),
                     ", the house ", money(to[2]), "")
    prize_words = _strings([f"{name} wins {p[1]}% of the {jp.percentage_prizes_from.replace('_', ' ')} "
                            if p is not None and p[0] == "percent" else
                            f"{name} wins {p[1]} units, paid by the {jp.fixed_prizes_from.replace('_', ' ')}"
                            if p is not None else "" for name, p in zip(RANK_NAMES, prizes, strict=True)])
    prize_words = prize_words.take(pa.array(category))
    percent = _join(prize_words, _chosen(outcome >= 0, ["none", money(np.maximum(outcome, 0))], m), "")
    # an ANTE by its outcome (FOLDED ... LOSE), a JACKPOT by prize, a refund by its reason (audit.refund's words)
    which = np.where(refund > 0, LOSE + 3 + refund, np.where(is_ante, outcome, LOSE + 1 + kind))
    types = types.fill_null("None")
    seat_text = pc.cast(seats, pa.string()).fill_null("None")
    why = _chosen(which, [
        "folded: the ante is lost", "called; the dealer does not qualify: the ante pays 1:1, the call is returned",
        win, _join("called; equal hands (", bw, "): ante and call push", ""),
        _join("called; the dealer's ", dw, " beats ", bw, ": ante and call lost", ""), no_prize, percent,
        prize_words, "no ante on its box: refunded, feeds no pool",
        _join(f"{rules.id} does not offer ", types, ": refunded", ""),
        _join("box ", seat_text, " was not dealt: refunded", "")], m)
    call = _chosen(is_ante & (added != 0), ["", _join(", call ", money(added), "")], m)
    return _join("Bet ", bets.bet_id.take(taken).fill_null("None"), " (", types, ", stake ", money(stake), call,
                 ") on box ", seat_text, ": ", why, "; owed ", money(credit), ", paid ", money(bets.paid[b]), "")


def _pool_lines(rules: CasinoStudRules, quiet: pa.RecordBatch, q: np.ndarray, day: QuietDay,
                pools: np.ndarray, known: np.ndarray, money
                ) -> tuple[pa.Array, pa.Array, np.ndarray, np.ndarray, list[pa.Array]]:
    """The pools' lines of the rounds `q` (`quiet` their columns, `pools` and `known` their expected pools as
    quiet_explanations takes them): (before, after, the rounds with jackpot bets (indexes into q), those with a
    prize or a reset, [their ledger lines: what the bets fed, the prizes])."""

    def pools_text(known: np.ndarray, jackpot: np.ndarray, next_pool: np.ndarray) -> pa.Array:
        return _chosen(known, ["not known", _join("jackpot ", money(jackpot), ", next pool ", money(next_pool), "")],
                       len(known))

    def recorded(jackpot: str, next_pool: str) -> pa.Array:
        known = pc.and_(pc.is_valid(quiet[jackpot]), pc.is_valid(quiet[next_pool]))
        return pools_text(np.asarray(known, np.bool_), *(np.asarray(quiet[c].fill_null(0), np.int64)
                                                          for c in (jackpot, next_pool)))

    before = _join("pools before: ", pools_text(known[0], pools[0], pools[1]), " (expected); recorded ",
                   recorded("jackpot_before", "next_pool_before"), "")
    after = _join("pools after: ", pools_text(known[1], pools[2], pools[3]), " (expected); recorded ",
                  recorded("jackpot_after", "next_pool_after"), "")
    ledger = np.asarray(day.ledger, np.int64).reshape(-1, 7)[q]
    fed = np.flatnonzero(np.asarray(day.jackpot_bets, np.int64)[q] > 0)
    fed_lines = _join("losing jackpot bets feed the jackpot ", money(ledger[fed, 0]), ", the next pool ",
                      money(ledger[fed, 1]), ", the house ", money(ledger[fed, 2]),
                      " (before the prizes)" if rules.jackpot.contributions_before_prizes else " (after the prizes)",
                      "")
    won = fed[(ledger[fed, 3:7] != 0).any(axis=1)]  # a prize from a pool or the house, or the reset
    won_lines = _join("prizes: from the jackpot ", money(ledger[won, 3]), ", from the next pool ",
                      money(ledger[won, 4]), ", paid by the house ", money(ledger[won, 5]),
                      _chosen(ledger[won, 6] != 0, ["", "; the jackpot was won: the next pool became the jackpot"],
                              len(won)), "")
    return before, after, fed, won, [fed_lines, won_lines]


def _timing_lines(quiet: pa.RecordBatch, day: QuietDay, box_at: np.ndarray) -> tuple[np.ndarray, pa.Array]:
    """(1 where the round has decision_times' timing line, 0 where not; the lines) of the rounds `quiet` (their
    columns; `box_at` their first box rows): a quiet round's instants are one a box's letter, none late."""
    times, shown_at = quiet["box_action_times"], quiet["dealer_revealed_at"]
    revealed = np.asarray(pc.is_valid(shown_at), np.bool_)
    timed = (np.asarray(pc.is_valid(times), np.bool_) | revealed).astype(np.int64)
    per_round = np.asarray(pc.list_value_length(times).fill_null(0), np.int64)
    per_box = pc.list_flatten(times)  # a quiet round's: one entry a box, none or one instant
    instant = pc.list_element(per_box, 0) if len(per_box) else pa.array([], pa.int64())
    said = np.asarray(pc.is_valid(instant), np.bool_)
    rows = (np.repeat(box_at, per_round) + np.arange(len(per_box)) - np.repeat(np.cumsum(per_round) - per_round,
                                                                               per_round))[said]
    of_round = np.repeat(np.arange(len(per_round)), per_round)[said]
    count = np.bincount(of_round, minlength=len(per_round))[timed > 0]
    if not timed.any():
        return timed, _strings([])
    lines = _join("box ", pc.cast(pa.array(day.box_no[rows]), pa.string()), " ",
                  _strings(["C", "F"]).take(pa.array(day.action[rows])), " at ",
                  _strings(us_texts(np.asarray(instant.filter(pa.array(said)), np.int64))), "")
    offsets = np.concatenate([[0], np.cumsum(count)]).astype(np.int32)
    joined = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), lines), "; ")
    joined = pc.if_else(pc.equal(joined, ""), "none recorded", joined)
    revealed = revealed[timed > 0]
    shown = _chosen(revealed.astype(np.int64), ["not recorded", _join(
        "at ", _strings(us_texts(np.asarray(shown_at.filter(pa.array(timed > 0)).fill_null(0), np.int64))), "")],
        len(revealed))
    return timed, _join("decisions in time: ", joined, f"; {REVEAL} ", shown, "")
