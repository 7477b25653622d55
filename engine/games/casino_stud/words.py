"""The explanations of the rounds the kernel settled (quiet.py), laid out as pieces of text and written at once by a
kernel (pieces.py): the lines explain.explain_round and the audit's bet lines give such a round (settled, dealt as
its deck says, its instants one a letter), each hand described once per distinct
strength, the amounts by the kernel (betting_lines.put_money), each instant by numpy (engine.betting.us_bytes).
explain.py and audit.py state the words; the kernel's tests hold these to them (tests/test_kernels_casino_stud.py:
every round's explanation as the readable audit writes it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import us_bytes
from engine.cards import CARD_CODES
from engine.decision_times import timing_line
from engine.kernels import spans

from . import BET_CODES
from .dealing import positions
from .dealt import DealtBets
from .explain import positions_text
from .hands import RANK_NAMES, HandRank, describe
from .kernel import LOSE, WIN
from .pieces import Pieces
from .quiet import QuietDay
from .round_findings import decided, inferred, recorded_as
from .rules import POOLS, CasinoStudRules

_ANTE = BET_CODES[0]  # the bet type (the audit's ANTE; kernel.ANTE is its code)
REVEAL = "the dealer's four cards revealed"  # what happened at dealer_revealed_at, in the timing line


class _Described:
    """hands.describe by the kernel's strength (the category is its top bits), each of the 7,462 ranks described
    once in the process: the strengths described so far, ascending, with their words (one pair, replaced whole:
    threads share it)."""

    def __init__(self) -> None:
        self.known = (np.zeros(0, np.int64), pa.array([], pa.string()))

    def __call__(self, strength: np.ndarray) -> tuple[np.ndarray, pa.Array, np.ndarray]:
        """(the strengths described so far, their words, where each of `strength` is among them)."""
        strengths, words = self.known
        at = np.searchsorted(strengths, strength)
        if len(strength) and (not len(strengths) or (strengths[np.minimum(at, len(strengths) - 1)] != strength).any()):
            strengths = np.union1d(strengths, strength)
            words = pa.array([describe(HandRank(RANK_NAMES[s >> 20], s)) for s in strengths.tolist()], pa.string())
            self.known = strengths, words
            at = np.searchsorted(strengths, strength)
        return strengths, words, at


_described = _Described()


class _Words:
    """The pieces of one table-day's quiet explanations, with the vocabularies its lines share."""

    def __init__(self, currency: str | None, day: QuietDay, box_rows: np.ndarray, rounds: np.ndarray):
        """`box_rows`, `rounds`: those whose hands the lines describe (`box`, `dealer`: the ids of their words)."""
        self.text = text = Pieces(currency)
        mine = np.zeros(len(day.strength), np.bool_)
        mine[box_rows] = True
        described = np.flatnonzero(mine)
        # (each hand looked up once, every one at once: a bet's hand is its box's)
        _, words, at = _described(np.concatenate([day.strength[described], day.dealer_strength[rounds]]))
        base = text.column(words)
        self.box, self.dealer = (np.zeros(len(of), np.int64) for of in (day.strength, day.dealer_strength))
        self.box[described], self.dealer[rounds] = base + at[:len(described)], base + at[len(described):]
        self.cards, self.categories = text.texts(CARD_CODES), text.texts(RANK_NAMES)
        self.space = text.text(" ")

    def hand(self, codes: np.ndarray) -> np.ndarray:
        """explain's format_cards of five card codes a row: (rows, 9) ids."""
        five = np.asarray(codes, np.int64).reshape(-1, 5)
        out = np.full((len(five), 9), self.space, np.int64)
        out[:, ::2] = self.cards + five
        return out


def _filled(values: pa.Array) -> pa.Array:
    """The texts, "None" for a null (as the readable audit's f-strings write one)."""
    return values.fill_null("None") if values.null_count else values


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
        return np.zeros(0, np.int64), pa.array([], pa.string())
    box_at = day.box_at
    n_boxes = box_at[q + 1] - box_at[q]
    mine, n_bets = _bets_of(q, bets.round_index, len(day.quiet))
    bet_round = np.repeat(np.arange(len(q)), n_bets)
    bet_place = np.arange(len(bet_round)) - np.repeat(np.cumsum(n_bets) - n_bets, n_bets)
    ledger = day.ledger[q]
    fed = np.flatnonzero(day.jackpot_bets[q] > 0)
    won = fed[(ledger[fed, 3:7] != 0).any(axis=1)]  # a prize from a pool or the house, or the reset
    n_ledger = np.zeros(len(q), np.int64)
    n_ledger[fed] += 1
    n_ledger[won] += 1
    taken = pa.array(q)
    times, shown_at = rounds["box_action_times"].take(taken), rounds["dealer_revealed_at"].take(taken)
    revealed = np.asarray(pc.is_valid(shown_at), np.bool_)
    timed = (np.asarray(pc.is_valid(times), np.bool_) | revealed).astype(np.int64)

    # the lines in their places: header, boxes, dealer, qualification, bets, pools before, ledger, pools after,
    # decision instants
    n_lines = 1 + n_boxes + 2 + n_bets + 1 + n_ledger + 1 + timed
    at = np.cumsum(n_lines) - n_lines
    mid = at + 3 + n_boxes + n_bets  # the pools before
    rows, box_round = _ranges(box_at[q], box_at[q + 1])
    box_row = _bet_box_rows(day, bets, mine, q[bet_round])
    words = _Words(currency, day, np.concatenate([rows, box_row]), q)
    text = words.text
    burn = f" after {rules.burn_cards} burned" if rules.burn_cards else ""
    text.add(at, "round ", text.column(_filled(rounds["round_id"])) + q, " (settled), deck ",
             text.column(_filled(rounds["shoe_id"])) + q, f": 52 cards, dealt {rules.deal_order}{burn}")
    _hand_lines(rules, words, rounds, q, day, at, n_boxes, rows, box_round)
    _bet_lines(rules, words, bets, mine, q[bet_round], box_row, day,
               at[bet_round] + 3 + n_boxes[bet_round] + bet_place)
    _pool_lines(rules, text, rounds, q, pools[:, q], known[:, q], ledger, fed, won, mid, n_ledger)
    # (a round with a decision not C or F may hold no instant or several for a box: its line as decision_times says)
    odd = day.undecided[q] & (timed > 0)
    if odd.any():
        times = pc.if_else(pa.array(odd), pa.nulls(len(q), times.type), times)
        lines = [timing_line(r["boxes"], r["box_actions"], r["box_action_times"], r["dealer_revealed_at"], REVEAL)
                 for r in rounds.select(["boxes", "box_actions", "box_action_times", "dealer_revealed_at"]).take(
                     pa.array(q[odd])).to_pylist()]
        text.add((mid + 2 + n_ledger)[odd], text.texts(lines) + np.arange(len(lines)))
    timed = timed & ~odd
    _timing_lines(text, times, shown_at, day, box_at[q], timed, revealed, (mid + 2 + n_ledger)[timed > 0])
    return n_lines, text.write()


def _bets_of(q: np.ndarray, round_index: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(the bets of the rounds `q` (ascending, of n), round by round, a round's in record order; each round's
    count of them)."""
    place = np.full(n + 1, -1, np.int64)
    place[q] = np.arange(len(q))
    at = place[np.where((round_index >= 0) & (round_index < n), round_index, n)]
    mine = np.flatnonzero(at >= 0)
    return mine[np.argsort(at[mine], kind="stable")], np.bincount(at[mine], minlength=len(q))


def _bet_box_rows(day: QuietDay, bets: DealtBets, b: np.ndarray, bet_round: np.ndarray) -> np.ndarray:
    """Each bet b's box row (`bet_round` their rounds): rows are in round order, a round's boxes ascending seats
    (below 2**16); a refunded bet's seat may be no box of its round (its line does not name a hand: any row will
    do)."""
    box_at = day.box_at
    seat = np.asarray(bets.seat.take(pa.array(b)).fill_null(0), np.int64)
    row_key = np.repeat(np.arange(len(box_at) - 1), np.diff(box_at)) << 16 | day.box_no
    return np.minimum(np.searchsorted(row_key, bet_round << 16 | seat), len(row_key) - 1)


def _hand_lines(rules: CasinoStudRules, words: _Words, rounds: pa.RecordBatch, q: np.ndarray, day: QuietDay,
                at: np.ndarray, n_boxes: np.ndarray, rows: np.ndarray, box_round: np.ndarray) -> None:
    """The rounds `q`'s box lines (`rows` their box rows, `box_round` each one's round: an index into q), dealer
    and qualification lines, into their places (`at`: each round's first line); a rank recorded otherwise than the
    kernel's (quiet.py's columns) named as the readable audit names it, read from `rounds` where it is."""
    text = words.text
    place = rows - day.box_at[q][box_round]
    box_said, dealer_said = (np.full(m, text.EMPTY, np.int64) for m in (len(rows), len(q)))
    wrong = np.flatnonzero(day.hand_wrong[rows])
    if len(wrong):
        hands = rounds["box_hands"].take(pa.array(q[box_round[wrong]])).to_pylist()
        box_said[wrong] = text.texts([recorded_as(h[k] if h is not None and k < len(h) else None)
                                      for h, k in zip(hands, place[wrong].tolist(), strict=True)]) + np.arange(
                                          len(wrong))
    wrong = np.flatnonzero(day.dealer_wrong[q])
    if len(wrong):
        dealer_said[wrong] = text.texts([recorded_as(h) for h in rounds["dealer_hand"].take(
            pa.array(q[wrong])).to_pylist()]) + np.arange(len(wrong))
    most = int(n_boxes.max())
    where = [positions(rules, n) for n in range(most + 1)]  # by box count: where the deck dealt each box and the dealer
    box_where = text.texts([positions_text(where[n][0][k]) if k < n else "" for n in range(most + 1)
                            for k in range(most)])
    strength, dealer_strength = day.strength[rows], day.dealer_strength[q]
    text.add(at[box_round] + 1 + place, "box ", text.numbers(day.box_no[rows]), " (",
             box_where + n_boxes[box_round] * most + place, "): ", words.hand(day.cards.reshape(-1, 5)[rows]), ": ",
             words.box[rows], " (", words.categories + (strength >> 20), box_said, "); ",
             _decisions(text, rounds, q, day.action[rows], box_round, place))
    dealer_where = text.texts([f"deck card {where[n][1][0]} open, "
                               f"{positions_text(where[n][1][1:])[len('deck cards '):]} after the decisions"
                               for n in range(most + 1)])
    text.add(at + 1 + n_boxes, "dealer (", dealer_where + n_boxes, "): ",
             words.hand(day.dealer_cards.reshape(-1, 5)[q]), ": ", words.dealer[q], " (",
             words.categories + (dealer_strength >> 20), dealer_said, ")")
    qualifies = day.qualifies[q]
    text.add(at + 2 + n_boxes, text.texts([
        "the dealer does not qualify (below ace-king): every call is returned, antes pay 1:1",
        "the dealer qualifies (ace-king or better)"]) + qualifies.astype(np.int64))


def _decisions(text: Pieces, rounds: pa.RecordBatch, q: np.ndarray, action: np.ndarray, box_round: np.ndarray,
               place: np.ndarray) -> np.ndarray:
    """Each box's decision as its hand line says it (`action` dealt.py's codes): one not C or F (-1) read from
    `rounds` where it is, in round_findings' words."""
    said = text.texts(["calls", "folds"]) + np.maximum(action, 0)
    odd = np.flatnonzero(action < 0)
    if len(odd):
        recorded = rounds["box_actions"].take(pa.array(q[box_round[odd]])).to_pylist()
        said[odd] = text.texts([decided(a[k]) for a, k in zip(recorded, place[odd].tolist(), strict=True)]
                               ) + np.arange(len(odd))
    return said


def _bet_lines(rules: CasinoStudRules, words: _Words, bets: DealtBets, b: np.ndarray, bet_round: np.ndarray,
               box_row: np.ndarray, day: QuietDay, places: np.ndarray) -> None:
    """The audit's line of each bet b of `bets` (`bet_round` their rounds', `box_row` their box rows) into
    `places` (a quiet round's amounts are all below the kernel's 2**40)."""
    text = words.text
    strength = day.strength
    taken = pa.array(b)
    stake, added = bets.stake[b], bets.added[b]
    types = bets.bet_type.take(taken)
    is_ante = np.asarray(pc.fill_null(pc.equal(types, _ANTE), False), np.bool_)
    credit, outcome = day.credit[b], day.outcome[b]
    refund = day.refund[b]
    category = strength[box_row] >> 20
    m = len(b)
    bw, dw = words.box[box_row], words.dealer[bet_round]
    odds = np.array([rules.call_payouts[name] for name in RANK_NAMES], np.int64)[category]
    cap = rules.max_call_payout
    capped = (outcome == WIN) & (cap is not None) & (rules.call_of(stake) * odds > (cap if cap is not None else 0))
    names = words.categories + category
    win = ["called; ", bw, " beats the dealer's ", dw, ": the ante pays 1:1, the call ", text.numbers(odds), ":1 (",
           names, ")", np.where(capped, text.text(f" (capped at {cap} minor units)"), text.EMPTY)]
    jp = rules.jackpot
    prizes = [jp.prize_of(name) for name in RANK_NAMES]
    kind = np.array([0 if p is None else 1 if p[0] == "percent" else 2 for p in prizes], np.int64)[category]
    to = [stake * jp.shares[pool] // 100 for pool in POOLS]  # ledger.contribution
    to[POOLS.index(jp.remainder_to)] += stake - to[0] - to[1] - to[2]
    no_prize = [names, ": no prize; feeds the jackpot ", text.money(to[0]), ", the next pool ", text.money(to[1]),
                ", the house ", text.money(to[2])]
    prize_words = text.texts([f"{name} wins {p[1]}% of the {jp.percentage_prizes_from.replace('_', ' ')} "
                              if p is not None and p[0] == "percent" else
                              f"{name} wins {p[1]} units, paid by the {jp.fixed_prizes_from.replace('_', ' ')}"
                              if p is not None else "" for name, p in zip(RANK_NAMES, prizes, strict=True)]) + category
    percent = [prize_words, np.where(outcome >= 0, text.money(np.maximum(outcome, 0)), text.text("none"))]
    # an ANTE by its outcome (FOLDED ... LOSE), a JACKPOT by prize, a refund by its reason (audit.refund's words)
    which = np.where(refund > 0, LOSE + 3 + refund, np.where(is_ante, outcome, LOSE + 1 + kind))
    type_of = text.column(_filled(types)) + np.arange(m)
    seat_of = text.column(_filled(pc.cast(bets.seat.take(taken), pa.string()))) + np.arange(m)
    why = text.chosen(which, [
        ["folded: the ante is lost"], ["called; the dealer does not qualify: the ante pays 1:1, the call is returned"],
        win, ["called; equal hands (", bw, "): ante and call push"],
        ["called; the dealer's ", dw, " beats ", bw, ": ante and call lost"], no_prize, percent,
        [prize_words], ["no ante on its box: refunded, feeds no pool"],
        [f"{rules.id} does not offer ", type_of, ": refunded"], ["box ", seat_of, " was not dealt: refunded"]])
    call = text.chosen(is_ante & (added != 0), [[], [", call ", text.money(added)]])
    # an ANTE on a box with no legal decision: settled as its recorded call says (audit.ante's words)
    guessed = np.where(is_ante & (refund == 0) & (day.action[box_row] < 0), text.texts(
        [inferred(False), inferred(True)]) + (added > 0), text.EMPTY)
    text.add(places, "Bet ", text.column(_filled(bets.bet_id)) + b, " (", type_of, ", stake ",
             text.money(stake), call, ") on box ", seat_of, ": ", why, guessed, "; owed ", text.money(credit),
             ", paid ", text.money(bets.paid[b]))


def _pool_lines(rules: CasinoStudRules, text: Pieces, rounds: pa.RecordBatch, q: np.ndarray, pools: np.ndarray,
                known: np.ndarray, ledger: np.ndarray, fed: np.ndarray, won: np.ndarray, mid: np.ndarray,
                n_ledger: np.ndarray) -> None:
    """The pools' lines of the rounds `q` (`pools` and `known` their expected pools as quiet_explanations takes
    them, `ledger` their kernel's ledger, `fed` and `won` those with jackpot bets and with a prize or a reset:
    indexes into q) into their places (`mid`: each round's pools before)."""

    def pools_text(known: np.ndarray, jackpot: np.ndarray, next_pool: np.ndarray) -> np.ndarray:
        return text.chosen(known, [["not known"], ["jackpot ", text.money(jackpot), ", next pool ",
                                                   text.money(next_pool)]])

    def recorded(jackpot: str, next_pool: str) -> np.ndarray:
        jp, nxt = (rounds[c].take(pa.array(q)) for c in (jackpot, next_pool))
        return pools_text(np.asarray(pc.and_(pc.is_valid(jp), pc.is_valid(nxt)), np.bool_),
                          *(np.asarray(c.fill_null(0), np.int64) for c in (jp, nxt)))

    text.add(mid, "pools before: ", pools_text(known[0], pools[0], pools[1]), " (expected); recorded ",
             recorded("jackpot_before", "next_pool_before"))
    text.add(mid + 1 + n_ledger, "pools after: ", pools_text(known[1], pools[2], pools[3]), " (expected); recorded ",
             recorded("jackpot_after", "next_pool_after"))
    text.add(mid[fed] + 1, "losing jackpot bets feed the jackpot ", text.money(ledger[fed, 0]), ", the next pool ",
             text.money(ledger[fed, 1]), ", the house ", text.money(ledger[fed, 2]),
             " (before the prizes)" if rules.jackpot.contributions_before_prizes else " (after the prizes)")
    text.add(mid[won] + 2, "prizes: from the jackpot ", text.money(ledger[won, 3]), ", from the next pool ",
             text.money(ledger[won, 4]), ", paid by the house ", text.money(ledger[won, 5]),
             np.where(ledger[won, 6] != 0, text.text("; the jackpot was won: the next pool became the jackpot"),
                      text.EMPTY))


def _timing_lines(text: Pieces, times: pa.Array, shown_at: pa.Array, day: QuietDay, box_at: np.ndarray,
                  timed: np.ndarray, revealed: np.ndarray, places: np.ndarray) -> None:
    """decision_times' timing line of each round with one (`timed`; `times`, `shown_at` the rounds' columns,
    `box_at` their first box rows; `revealed`: dealer_revealed_at recorded) into `places`: a quiet round's instants
    are one a box's letter, one after the reveal marked LATE."""
    if not timed.any():
        return
    per_round = np.asarray(pc.list_value_length(times).fill_null(0), np.int64)
    per_box = pc.list_flatten(times)  # a quiet round's: one entry a box, none or one instant
    instant = pc.list_element(per_box, 0) if len(per_box) else pa.array([], pa.int64())
    said = np.asarray(pc.is_valid(instant), np.bool_)
    rows = (np.repeat(box_at, per_round) + np.arange(len(per_box)) - np.repeat(np.cumsum(per_round) - per_round,
                                                                               per_round))[said]
    # each line: its head, then a unit of 8 pieces an instant, then its tail (units padded to 8 with EMPTY)
    of_round = np.repeat(np.arange(len(per_round)), per_round)[said]
    line_of = (np.cumsum(timed) - 1)[of_round]
    lines = int(timed.sum())
    count = np.bincount(line_of, minlength=lines)
    first = np.cumsum(count) - count
    unit_at = 2 * np.arange(lines) + first  # each line's head unit
    units = np.full((2 * lines + len(rows), 8), text.EMPTY, np.int64)
    units[unit_at, 0] = text.text("decisions in time: ")
    item = unit_at[line_of] + 1 + np.arange(len(rows)) - first[line_of]
    at = np.asarray(instant.filter(pa.array(said)), np.int64)
    late = at > np.asarray(shown_at.fill_null(np.iinfo(np.int64).max), np.int64)[of_round]  # (is_late's boundary)
    units[item] = text.row(len(rows), "; ", "box ", text.numbers(day.box_no[rows]), " ", text.texts(["C", "F"]) +
                           day.action[rows], " at ", text.column(us_bytes(at)) + np.arange(len(rows)),
                           np.where(late, text.text(" LATE"), text.EMPTY))
    units[item[np.arange(len(rows)) == first[line_of]], 0] = text.EMPTY  # (no "; " before a line's first)
    shown = text.column(us_bytes(np.asarray(shown_at.filter(pa.array(timed > 0)).fill_null(0), np.int64)))
    revealed = revealed[timed > 0]
    tail = unit_at + 1 + count
    units[tail] = text.row(lines, np.where(count == 0, text.text("none recorded"), text.EMPTY), f"; {REVEAL} ",
                           np.where(revealed, text.text("at "), text.text("not recorded")),
                           np.where(revealed, shown + np.arange(lines), text.EMPTY), "", "", "", "")
    text.add_ragged(places, units.reshape(-1), 8 * (2 + count))
