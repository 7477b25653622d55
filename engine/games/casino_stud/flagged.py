"""The findings of the bets the kernel flagged in the rounds it settled (quiet.py), joined column by column in
Arrow: a refund's (JACKPOT_WITHOUT_ANTE, BET_TYPE_NOT_OFFERED, BET_ON_EMPTY_BOX) or a call's
(ADDED_STAKE_MISMATCH), then paid against owed, the limits of its type and the window (engine.betting's
BET_WORDS), in the order and the words the readable audit raises them (audit._Auditor.refund, check_call,
check_bet): no Python object a flagged bet. The kernel's tests hold them to the readable audit's
(tests/test_kernels_casino_stud.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import BET_WORDS, TableFacts, Wording, us_texts
from engine.betting_columns import FINDING_COLUMNS, filled, filled_wording, paid_findings
from engine.betting_lines import amount_texts

from .dealt import DealtBets
from .hands import RANK_NAMES
from .kernel import CALL, EMPTY_BOX, NO_ANTE, NOT_OFFERED, NOT_WON
from .quiet import QuietDay
from .round_findings import (
    decision_findings,
    deck_finding,
    late_finding,
    not_won,
    paid_from_the_other_pool,
    rank_finding,
    rank_mismatches,
    where,
)
from .rules import CasinoStudRules

# a flagged bet's findings in the order the readable audit raises them: its refund's or its call's (a first pass
# over the round's bets), a jackpot payment's (the jackpot bets in box order), then paid, limits, window (a second
# pass)
_REFUND, _JACKPOT, _PAID, _LIMIT, _LATE = range(5)
# the words of audit._Auditor.refund and check_call
_NO_ANTE = Wording(
    "an ANTE on box {seat}", "none",
    "{what}: no ANTE bet on box {seat} in round {round}; the jackpot bet is placed after the ante (refunded).")
_EMPTY_BOX = Wording(
    "one of the dealt boxes [{boxes}]", "box {seat}",
    "{what} is on box {seat}, which was not dealt in round {round}: refunded.")
_CALL = Wording(
    "{want}", "{recorded}",
    "{what}: box {seat} {did}, so the call is {want} ({multiple} x the ante on a call, nothing on a fold); recorded "
    "{recorded}.")


@dataclass(frozen=True)
class FlaggedFindings:
    table: pa.Table  # FINDING_COLUMNS, round by round in the audit's order
    round_index: np.ndarray  # each finding's round
    kinds: pa.Array  # by round: the distinct kinds of its findings, in the order raised (list<string>)


def flagged_findings(rules: CasinoStudRules, table: TableFacts, rounds: pa.RecordBatch, bets: DealtBets,
                     day: QuietDay) -> FlaggedFindings:
    """The findings of the quiet rounds: their own (a decision late, a rank recorded otherwise: a round's first, as
    the readable audit raises them before its bets'), then their flagged bets' (`rounds`, `bets` as dealt.py reads them,
    `day` the kernel's)."""
    n = len(day.quiet)
    found, round_of = _bet_findings(rules, table, rounds, bets, day)
    own, own_rounds = _round_findings(table, rounds, day)
    if own.num_rows:
        key = np.concatenate([2 * own_rounds, 2 * round_of + 1])
        order = np.argsort(key, kind="stable")
        found, round_of = pa.concat_tables([own, found]).take(pa.array(order)), key[order] // 2
    if not found.num_rows:
        return FlaggedFindings(found, round_of, _no_kinds(n))
    return FlaggedFindings(found, round_of, _kinds_by_round(round_of, found["kind"].combine_chunks(), n))


def _round_findings(table: TableFacts, rounds: pa.RecordBatch, day: QuietDay) -> tuple[pa.Table, np.ndarray]:
    """The quiet rounds' own findings (FINDING_COLUMNS; and each one's round), in the order the readable audit
    raises them: SHOE_COMPOSITION (a deck's: no round id), DECISION_MISSING, ILLEGAL_DECISION, LATE_DECISION
    (dealt.py's columns), HAND_RANK_MISMATCH (quiet.py's), worded by round_findings."""
    deck, undecided = day.deck_wrong, day.undecided
    late, ranks = day.late, day.rank_wrong
    i = np.flatnonzero(deck | undecided | late | ranks)
    if not len(i):
        return FINDING_COLUMNS.empty_table(), i
    box_at, category, dealer = day.box_at, day.category, day.dealer_category
    rows, round_of = [], []
    read = rounds.select(["round_id", "shoe_id", "boxes", "box_actions", "box_hands", "dealer_hand",
                          "box_action_times", "dealer_revealed_at", "deck", "decks", "cut_index"]).take(
        pa.array(i)).to_pylist()
    for r, rec in zip(i.tolist(), read, strict=True):
        said = where(rec["round_id"], rec["shoe_id"])
        found = [("SHOE_COMPOSITION", *deck_finding(rec["round_id"], rec["shoe_id"], rec["deck"], rec["decks"],
                                                    rec["cut_index"]))] if deck[r] else []
        if undecided[r]:
            found += decision_findings(said, rec["boxes"], rec["box_actions"])
        if late[r]:
            found.append(("LATE_DECISION", *late_finding(said, rec["boxes"], rec["box_actions"],
                                                         rec["box_action_times"], rec["dealer_revealed_at"])))
        if ranks[r]:
            found.append(("HAND_RANK_MISMATCH", *rank_finding(said, rank_mismatches(
                rec["boxes"], [RANK_NAMES[c] for c in category[box_at[r]:box_at[r + 1]].tolist()],
                rec["box_hands"] or (), RANK_NAMES[dealer[r]], rec["dealer_hand"]))))
        rows += [(kind, table.table_id, rec["shoe_id"], rec["round_id"] if kind != "SHOE_COMPOSITION" else None,
                  None, *words, None) for kind, *words in found]
        round_of += [r] * len(found)
    return pa.Table.from_arrays([pa.array(c, pa.string()) for c in zip(*rows, strict=True)],
                                schema=FINDING_COLUMNS), np.asarray(round_of, np.int64)


def _bet_findings(rules: CasinoStudRules, table: TableFacts, rounds: pa.RecordBatch, bets: DealtBets,
                  day: QuietDay) -> tuple[pa.Table, np.ndarray]:
    """The findings of the quiet rounds' flagged bets (FINDING_COLUMNS, round by round in the audit's order; and
    each one's round)."""
    n = len(day.quiet)
    known = (bets.round_index >= 0) & (bets.round_index < n)
    r_all = np.where(known, bets.round_index, 0)
    flags, refund, judged = day.flags, day.refund, day.judged
    mine = known & np.append(day.quiet, False)[np.where(known, r_all, n)] & (
        (refund != 0) | flags.any(axis=0) | (judged != 0))
    i = np.flatnonzero(mine)
    r = r_all[i]
    if not len(i):
        return FINDING_COLUMNS.empty_table(), np.zeros(0, np.int64)

    def money(values: np.ndarray) -> pa.Array:
        return amount_texts(values, table.currency)

    def of(w: np.ndarray, column: pa.Array) -> pa.Array:
        return column.take(pa.array(w, pa.int64()))

    taken = pa.array(i, pa.int64())
    bet_type, seats = bets.bet_type.take(taken), bets.seat.take(taken)
    type_text, seat_text = bet_type.fill_null("None"), pc.cast(seats, pa.string()).fill_null("None")
    stake, added, paid, credit = bets.stake[i], bets.added[i], bets.paid[i], day.credit[i]
    round_id = rounds["round_id"].take(pa.array(r, pa.int64()))
    round_text = round_id.fill_null("None")
    what = filled("Bet {bet_id} ({bet_type}, stake {stake}, box {seat})", {
        "bet_id": bets.bet_id.take(taken).fill_null("None"), "bet_type": type_text, "stake": money(stake),
        "seat": seat_text})
    found: list[tuple[int, np.ndarray, list[pa.Array | str]]] = []  # (slot, which bets, kind expected recorded message)
    why = refund[i]
    w = np.flatnonzero(why == NO_ANTE)
    if len(w):
        found.append((_REFUND, w, ["JACKPOT_WITHOUT_ANTE", *filled_wording(_NO_ANTE, what=of(w, what),
                                                                          seat=of(w, seat_text),
                                                                          round=of(w, round_text))]))
    w = np.flatnonzero(why == NOT_OFFERED)
    if len(w):
        found.append((_REFUND, w, [
            "BET_TYPE_NOT_OFFERED", f"a bet type of {rules.id}", of(w, bet_type),
            filled("{what}: {ruleset} does not offer {bet_type} (refunded).",
                    {"what": of(w, what), "ruleset": rules.id, "bet_type": of(w, type_text)})]))
    w = np.flatnonzero(why == EMPTY_BOX)
    if len(w):
        boxes = pc.binary_join(pc.cast(rounds["boxes"].take(pa.array(r[w], pa.int64())), pa.list_(pa.string())), ", ")
        found.append((_REFUND, w, ["BET_ON_EMPTY_BOX", *filled_wording(_EMPTY_BOX, boxes=boxes, what=of(w, what),
                                                                      seat=of(w, seat_text),
                                                                      round=of(w, round_text))]))
    w = np.flatnonzero((why == 0) & flags[0, i])
    if len(w):
        action = day.action[day.bet_box[i[w]]]
        called = np.where(action >= 0, action == CALL, added[w] > 0)  # (none legal: the recorded call says)
        want = np.where(called, rules.call_multiple * stake[w], 0)
        found.append((_REFUND, w, ["ADDED_STAKE_MISMATCH", *filled_wording(
            _CALL, what=of(w, what), seat=of(w, seat_text), did=pa.array(np.where(called, "called", "folded")),
            want=money(want), recorded=money(added[w]), multiple=str(rules.call_multiple))]))
    w = np.flatnonzero(judged[i])
    if len(w):
        found.append((_JACKPOT, w, _judged(rules, day, i[w], judged[i[w]], of(w, what), of(w, round_text),
                                           money(paid[w]), money(credit[w]))))
    # (a judged payment has its own finding: no OVERPAID or UNDERPAID)
    found += [(_PAID, w, columns) for w, columns in paid_findings(
        paid, np.where(judged[i] != 0, paid, credit), what, round_text, money)]
    below, above = flags[2, i], flags[3, i] & ~flags[2, i]  # (stake_limit_breach: the minimum first)
    for kind, w, end in (("STAKE_BELOW_MIN", np.flatnonzero(below), 0), ("STAKE_ABOVE_MAX", np.flatnonzero(above), 1)):
        if len(w):
            types = of(w, bet_type).to_pylist()  # (a limited type: one of the table's, a few a day)
            limit = np.array([table.limits[t][end] for t in types], np.int64)
            found.append((_LIMIT, w, [kind, *filled_wording(
                BET_WORDS[kind], what=of(w, what), bet_type=of(w, type_text), stake=money(stake[w]),
                limit=money(limit))]))
    w = np.flatnonzero(flags[4, i])
    if len(w):
        closed = np.asarray(rounds["betting_closed_at"].fill_null(0), np.int64)[r[w]]
        found.append((_LATE, w, ["LATE_BET", *filled_wording(
            BET_WORDS["LATE_BET"], what=of(w, what), round=of(w, round_text),
            closed=pa.array(us_texts(closed), pa.string()),
            placed=pa.array(us_texts(bets.placed[i[w]]), pa.string()))]))

    # round by round; in a round, the first pass's (bet by bet), the jackpot payments' (by box, then bet), then the
    # second pass's (bet by bet, slot by slot)
    slot = np.concatenate([np.full(len(w), s) for s, w, _ in found])
    on = np.concatenate([w for _, w, _ in found])
    by_box = np.where(slot == _JACKPOT, day.bet_box[i[on]], 0)
    order = np.lexsort((slot, on, by_box, np.minimum(slot, _PAID), r[on]))
    take = pa.array(order, pa.int64())
    on = on[order]
    kind, expected, recorded, message = (pa.concat_arrays([
        c if isinstance(c, pa.Array) else pa.repeat(pa.scalar(c, pa.string()), len(w))
        for _, w, columns in found for c in [columns[k]]]).take(take) for k in range(4))
    rows = pa.array(on, pa.int64())
    found_table = pa.Table.from_arrays([
        kind, pa.repeat(pa.scalar(table.table_id, pa.string()), len(on)),
        rounds["shoe_id"].take(pa.array(r[on], pa.int64())), round_id.take(rows), bets.bet_id.take(taken).take(rows),
        expected, recorded, message, bets.account_id.take(taken).take(rows)], schema=FINDING_COLUMNS)
    return found_table, r[on]


def _judged(rules: CasinoStudRules, day: QuietDay, b: np.ndarray, judged: np.ndarray, what: pa.Array,
            round_text: pa.Array, paid: pa.Array, prize: pa.Array) -> list[pa.Array]:
    """The findings (kind, expected, recorded, message) of the jackpot bets b whose payment the kernel judged
    (`judged`: kernel.NOT_WON, WRONG_BALANCE), worded by round_findings (the readable audit's words), a few a day."""
    jp = rules.jackpot
    right = jp.percentage_prizes_from
    wrong = "next_pool" if right == "jackpot" else "jackpot"
    rows = []
    for code, box, said, round_id, paid_text, prize_text in zip(
            judged.tolist(), day.bet_box[b].tolist(), what.to_pylist(), round_text.to_pylist(), paid.to_pylist(),
            prize.to_pylist(), strict=True):
        category = RANK_NAMES[day.category[box]]
        if code == NOT_WON:
            rows.append(("JACKPOT_PRIZE_NOT_WON", *not_won(said, round_id, category, paid_text)))
        else:
            rows.append(("JACKPOT_PRIZE_WRONG_BALANCE", *paid_from_the_other_pool(
                said, round_id, jp.prize_of(category)[1], right, wrong, paid_text, prize_text)))
    return [pa.array(c, pa.string()) for c in zip(*rows, strict=True)]


def _kinds_by_round(round_of: np.ndarray, kind: pa.Array, n: int) -> pa.Array:
    """Each of the n rounds' distinct finding kinds in the order raised (`round_of` each finding's, ascending)."""
    coded = kind.dictionary_encode()
    codes = coded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    _, first = np.unique(round_of * len(coded.dictionary) + codes, return_index=True)
    first = np.sort(first)
    offsets = np.searchsorted(round_of[first], np.arange(n + 1)).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), coded.dictionary.take(pa.array(codes[first])))


def _no_kinds(n: int) -> pa.Array:
    return pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, np.int32)), pa.array([], pa.string()))
