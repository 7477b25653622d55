"""The explanations of the rounds the kernel settled (quiet.py), joined column by column in Arrow: the lines
explain.explain_round and the audit's bet lines give such a round (settled, dealt as its deck says, its ranks
recorded right, one C or F a box, no decision late), each hand described once per distinct strength, each
amount formatted once per distinct value, each instant by numpy. explain.py and audit.py state the words; the
kernel's tests hold these to them (tests/test_kernels_casino_stud.py: every round's explanation as the readable
audit writes it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import us_texts
from engine.betting_columns import distinct
from engine.cards import CARD_CODES
from engine.findings import format_money
from engine.kernels import spans

from . import BET_CODES
from .dealing import positions
from .explain import positions_text
from .hands import RANK_NAMES, describe
from .kernel import LOSE, WIN
from .ledger import Pools
from .quiet import QuietDay, hand_rank
from .rules import POOLS, CasinoStudRules

_join = pc.binary_join_element_wise
_ANTE = BET_CODES[0]  # the bet type (the audit's ANTE; kernel.ANTE is its code)
_CARDS = pa.array(CARD_CODES, pa.string())
_CATEGORIES = pa.array(RANK_NAMES, pa.string())
REVEAL = "the dealer's four cards revealed"  # what happened at dealer_revealed_at, in the timing line


def _strings(values: Sequence[str]) -> pa.Array:
    return pa.array(values, pa.string())


def _texts(values: np.ndarray, text, known: dict[int, str]) -> pa.Array:
    """text(value) of each value, worked out once per distinct value (`known`: those worked out already)."""
    if not len(values):
        return _strings([])
    values_of, value_of = distinct(np.asarray(values, np.int64))
    said = []
    for v in values_of.tolist():
        words = known.get(v)
        if words is None:
            words = known[v] = text(v)
        said.append(words)
    return _strings(said).take(pa.array(value_of))


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


def quiet_explanations(rules: CasinoStudRules, currency: str, rounds: Sequence, bets: Sequence,
                       quiet_rounds: Sequence[int], by_round: dict[int, list[int]], day: QuietDay,
                       pools_before: Sequence[Pools | None], pools_after: Sequence[Pools | None]
                       ) -> tuple[np.ndarray, pa.Array]:
    """(each of `quiet_rounds`' count of lines, their lines end to end) as the readable audit explains those
    rounds: `rounds`, `bets` the audit's (RecordedRound, RecordedBet), `by_round` each round's bets in record
    order, `day` the kernel's, `pools_before`/`pools_after` the expected pools by round (the audit's chain)."""
    q = np.asarray(quiet_rounds, np.int64)
    if not len(q):
        return np.zeros(0, np.int64), _strings([])
    known: dict[int, str] = {}

    def money(values) -> pa.Array:
        return _texts(np.asarray(values, np.int64), lambda v: format_money(v, currency), known)

    quiet = [rounds[i] for i in q.tolist()]
    burn = f" after {rules.burn_cards} burned" if rules.burn_cards else ""
    header = _join("round ", _strings([f"{r.round_id}" for r in quiet]), " (settled), deck ",
                   _strings([f"{r.shoe_id}" for r in quiet]), f": 52 cards, dealt {rules.deal_order}{burn}", "")
    n_boxes, box_round, place, hands = _hand_lines(rules, q, day)
    mine = [by_round.get(i, []) for i in q.tolist()]
    n_bets = np.array([len(m) for m in mine], np.int64)
    bet_round = np.repeat(np.arange(len(q)), n_bets)
    bet_place = np.arange(len(bet_round)) - np.repeat(np.cumsum(n_bets) - n_bets, n_bets)
    bet_lines = _bet_lines(rules, [bets[b] for m in mine for b in m], np.array([b for m in mine for b in m], np.int64),
                           q[bet_round], day, money)
    before, after, fed, won, ledger_lines = _pool_lines(rules, quiet, q, day, pools_before, pools_after, money)
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


def _bet_lines(rules: CasinoStudRules, ours: Sequence, b: np.ndarray, bet_round: np.ndarray, day: QuietDay,
               money) -> pa.Array:
    """The audit's line of each bet `ours` (RecordedBet; `b` their indexes, `bet_round` their rounds')."""
    box_at = np.asarray(day.box_at, np.int64)
    strength, dealer_strength = np.asarray(day.strength, np.int64), np.asarray(day.dealer_strength, np.int64)
    stake = np.array([x.stake for x in ours], np.int64)
    added = np.array([x.added_stake or 0 for x in ours], np.int64)
    is_ante = np.array([x.bet_type == _ANTE for x in ours], np.bool_)
    credit, outcome = np.asarray(day.credit, np.int64)[b], np.asarray(day.outcome, np.int64)[b]
    refund = np.asarray(day.refund, np.int64)[b]
    # each bet's box row: rows are in round order, a round's boxes ascending seats (below 2**16); a refunded bet's
    # seat may be no box of its round (its line does not name a hand: any row will do)
    seats = pa.array([x.seat for x in ours], pa.int64())
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
    types = _strings([x.bet_type for x in ours]).fill_null("None")
    seat_text = pc.cast(seats, pa.string()).fill_null("None")
    why = _chosen(which, [
        "folded: the ante is lost", "called; the dealer does not qualify: the ante pays 1:1, the call is returned",
        win, _join("called; equal hands (", bw, "): ante and call push", ""),
        _join("called; the dealer's ", dw, " beats ", bw, ": ante and call lost", ""), no_prize, percent,
        prize_words, "no ante on its box: refunded, feeds no pool",
        _join(f"{rules.id} does not offer ", types, ": refunded", ""),
        _join("box ", seat_text, " was not dealt: refunded", "")], m)
    call = _chosen(is_ante & (added != 0), ["", _join(", call ", money(added), "")], m)
    return _join("Bet ", _strings([f"{x.bet_id}" for x in ours]), " (", types,
                 ", stake ", money(stake), call, ") on box ", seat_text, ": ", why,
                 "; owed ", money(credit), ", paid ", money(np.array([x.paid for x in ours], np.int64)), "")


def _pool_lines(rules: CasinoStudRules, quiet: Sequence, q: np.ndarray, day: QuietDay,
                pools_before: Sequence[Pools | None], pools_after: Sequence[Pools | None], money
                ) -> tuple[pa.Array, pa.Array, np.ndarray, np.ndarray, list[pa.Array]]:
    """The pools' lines of the rounds `q` (`quiet` their records): (before, after, the rounds with jackpot bets
    (indexes into q), those with a prize or a reset, [their ledger lines: what the bets fed, the prizes])."""

    def pools_text(pools: Sequence[Pools | None]) -> pa.Array:
        known = np.array([p is not None for p in pools], np.bool_)
        jackpot = np.array([p.jackpot if p is not None else 0 for p in pools], np.int64)
        next_pool = np.array([p.next_pool if p is not None else 0 for p in pools], np.int64)
        return _chosen(known, ["not known", _join("jackpot ", money(jackpot), ", next pool ", money(next_pool), "")],
                       len(pools))

    before = _join("pools before: ", pools_text([pools_before[i] for i in q.tolist()]), " (expected); recorded ",
                   pools_text([r.pools_before for r in quiet]), "")
    after = _join("pools after: ", pools_text([pools_after[i] for i in q.tolist()]), " (expected); recorded ",
                  pools_text([r.pools_after for r in quiet]), "")
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


def _timing_lines(quiet: Sequence, day: QuietDay, box_at: np.ndarray) -> tuple[np.ndarray, pa.Array]:
    """(1 where the round has decision_times' timing line, 0 where not; the lines): a quiet round's instants
    are one a box's letter, none late."""
    timed = np.array([r.box_action_times is not None or r.dealer_revealed_at is not None for r in quiet], np.int64)
    rows, instants, count = [], [], []
    revealed = []
    for j in np.flatnonzero(timed).tolist():
        r = quiet[j]
        said = [(int(box_at[j]) + k, t[0]) for k, t in enumerate(r.box_action_times or ()) if t is not None
                and t[0] is not None]
        rows += [k for k, _ in said]
        instants += [at for _, at in said]
        count.append(len(said))
        revealed.append(r.dealer_revealed_at)
    if not len(count):
        return timed, _strings([])
    rows_at = np.asarray(rows, np.int64)
    said = _join("box ", pc.cast(pa.array(day.box_no[rows_at] if len(rows) else np.zeros(0, np.int64)), pa.string()),
                 " ", _strings(["C", "F"]).take(pa.array(day.action[rows_at] if len(rows) else np.zeros(0, np.int64))),
                 " at ", _strings(us_texts(np.asarray(instants, np.int64))), "")
    offsets = np.concatenate([[0], np.cumsum(count)]).astype(np.int32)
    joined = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), said), "; ")
    joined = pc.if_else(pc.equal(joined, ""), "none recorded", joined)
    shown_at = np.array([t if t is not None else 0 for t in revealed], np.int64)
    shown = _chosen(np.array([t is not None for t in revealed], np.int64),
                    ["not recorded", _join("at ", _strings(us_texts(shown_at)), "")], len(revealed))
    return timed, _join("decisions in time: ", joined, f"; {REVEAL} ", shown, "")
