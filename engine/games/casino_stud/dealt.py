"""A table-day's rounds as the compiled kernel reads them (kernel.settle_day), straight from their Arrow list
columns (values and offsets; no Python object a round): the boxes' and the dealer's cards as card codes, box
numbers, decision and rank codes, and whether each round is as dealt.

A round is as dealt when what the kernel does not judge of it is as the readable audit wants it: settled, one
entry a box in every list, boxes ascending seats of the table, a deck of 52 cards, every card where it deals it, its
decision instants (where recorded) one a letter of its box's decision. Only such a round is put to the kernel; the
kernel judges the rest (ranks, balances, bets), and three findings of the round are read here for the kernel's path
to word: its deck not one full deck of the shape of one (decks 1, no cut card: `deck_wrong`, SHOE_COMPOSITION), a
decision missing or not one letter C or F (`action` -1: DECISION_MISSING, ILLEGAL_DECISION) and a decision after the
reveal (`late`: LATE_DECISION). A
column whose values are not of ROUND_TYPES' types makes no round as dealt: every round then goes through the
readable rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.cards import CARD_CODES
from engine.kernels import spans

from .dealing import positions
from .hands import RANK_NAMES
from .rules import CasinoStudRules

_STRINGS = pa.list_(pa.string())
# a round's columns as dealt_rounds reads them (a row a round, in the audit's order): the round's own, its deck's
# (`deck` its cards, `decks`, `cut_index`; null where it has none) and its instants as integer microseconds
ROUND_TYPES = {
    "round_id": pa.string(), "shoe_id": pa.string(), "round_no": pa.int64(), "status": pa.string(),
    "boxes": pa.list_(pa.int64()), "box_cards": pa.list_(_STRINGS), "box_actions": _STRINGS,
    "dealer_cards": _STRINGS, "box_hands": _STRINGS, "dealer_hand": pa.string(), "jackpot_before": pa.int64(),
    "next_pool_before": pa.int64(), "jackpot_after": pa.int64(), "next_pool_after": pa.int64(),
    "betting_closed_at": pa.int64(), "deck": _STRINGS, "decks": pa.int64(), "cut_index": pa.int64(),
    "box_action_times": pa.list_(pa.list_(pa.int64())), "dealer_revealed_at": pa.int64()}
_CARDS = pa.array(CARD_CODES, pa.string())
_ACTIONS = pa.array(["C", "F"], pa.string())  # kernel.CALL, kernel.FOLD
_CATEGORIES = pa.array(RANK_NAMES, pa.string())
_DECK = len(CARD_CODES)


@dataclass(frozen=True)
class DealtRounds:
    """The rounds as kernel.settle_day takes them; the boxes and cards of the rounds as dealt only."""

    status: np.ndarray  # 0 settled, 1 cancelled, 2 other
    readable: np.ndarray  # as dealt (the module's docstring)
    box_at: np.ndarray  # round r's boxes: rows box_at[r]:box_at[r + 1] of the box columns (none where not as dealt)
    box_no: np.ndarray
    action: np.ndarray  # kernel.CALL, FOLD; -1 not one letter C or F (DECISION_MISSING, ILLEGAL_DECISION)
    box_hand: np.ndarray  # the recorded rank's category index (-1: none, or another text)
    cards: np.ndarray  # five card codes a box
    hands_len: np.ndarray  # by round: how many ranks box_hands records
    dealer_hand: np.ndarray
    dealer: np.ndarray  # five card codes a round (-1 where not as dealt)
    pools: np.ndarray  # (2, n): the recorded jackpot and next pool before (0 where not recorded)
    known: np.ndarray  # (2, n): recorded
    closed: np.ndarray  # betting_closed_at, microseconds (0 where not recorded)
    late: np.ndarray  # by round as dealt: a decision after the reveal (LATE_DECISION: the kernel's path words it)
    deck_wrong: np.ndarray  # by round as dealt: its deck not one full deck of the shape of one (SHOE_COMPOSITION)
    read: pa.RecordBatch  # ROUND_TYPES' columns as read (the words of the rounds the kernel settles)


def dealt_rounds(rules: CasinoStudRules, rounds: pa.Table) -> DealtRounds:
    """The rounds (ROUND_TYPES' columns) as the kernel reads them."""
    n = rounds.num_rows
    col = {name: _typed(rounds[name], kind) for name, kind in ROUND_TYPES.items()}
    typed = all(c is not None for c in col.values())
    col = {name: c if c is not None else pa.nulls(n, ROUND_TYPES[name]) for name, c in col.items()}
    status = _ints(pc.index_in(col["status"], pa.array(["settled", "cancelled"])), 2)
    n_boxes, boxes = _lists(col["boxes"])
    n_cards, box_cards = _lists(col["box_cards"])  # a row a box
    n_actions, actions = _lists(col["box_actions"])
    n_dealer, dealer = _lists(col["dealer_cards"])
    n_hands, hands = _lists(col["box_hands"])
    deck_len, deck = _lists(col["deck"])
    ok = (status == 0) & (n_boxes > 0) & (n_boxes <= rules.max_boxes) & (n_cards == n_boxes) & (
        n_actions == n_boxes) & (n_dealer == 5) & (deck_len == _DECK) & typed
    if rules.burn_cards + 5 * (rules.max_boxes + 1) > _DECK:  # (a deal past the deck: the readable rules say so)
        ok[:] = False
    deck_at, deck = _starts(deck_len), _cards(deck)
    full = np.flatnonzero(ok)
    ordered = np.sort(deck[spans(deck_at[full], np.full(len(full), _DECK))].reshape(-1, _DECK), axis=1)
    # SHOE_COMPOSITION: not 52 distinct codes (one full deck), or not the shape of one
    deck_wrong = np.ones(n, np.bool_)
    deck_wrong[full] = ~(ordered == np.arange(_DECK)).all(axis=1)
    deck_wrong |= (_ints(col["decks"], 0) != 1) | pc.is_valid(col["cut_index"]).to_numpy(zero_copy_only=False)

    # the boxes: seats of the table, ascending
    box_no, box_round = _ints(boxes, 0), np.repeat(np.arange(n), n_boxes)
    first = np.zeros(len(box_no), np.bool_)
    first[_starts(n_boxes)[:-1][n_boxes > 0]] = True
    wrong = (box_no < 1) | (box_no > rules.max_boxes) | (~first & (box_no <= np.roll(box_no, 1)))
    ok &= ~_any(box_round, wrong, n)

    # every card where the deck deals it (the rounds still ok have a box row a box, at most max_boxes)
    most = rules.max_boxes
    where = [positions(rules, k) for k in range(most + 1)]
    box_pos = np.zeros((most + 1, most, 5), np.int64)
    for k in range(1, most + 1):
        box_pos[k, :k] = where[k][0]
    dealer_pos = np.array([where[k][1] for k in range(most + 1)], np.int64)
    card_len, card_values = _lists(box_cards)
    codes, card_at = _cards(card_values), _starts(card_len)
    row_round = np.repeat(np.arange(n), n_cards)
    place = np.arange(len(row_round)) - np.repeat(_starts(n_cards)[:-1], n_cards)
    rows = np.flatnonzero(ok[row_round])
    ok &= ~_any(row_round[rows], card_len[rows] != 5, n)
    rows = rows[ok[row_round[rows]]]
    r = row_round[rows]
    dealt = deck[deck_at[r][:, None] + box_pos[n_boxes[r], place[rows]]]
    ok &= ~_any(r, (codes[spans(card_at[rows], np.full(len(rows), 5))].reshape(-1, 5) != dealt).any(axis=1), n)
    dealer_codes, dealer_at = _cards(dealer), _starts(n_dealer)
    r = np.flatnonzero(ok)  # (five cards each)
    dealt = deck[deck_at[r][:, None] + dealer_pos[n_boxes[r]]]
    ok[r] = (dealer_codes[spans(dealer_at[r], np.full(len(r), 5))].reshape(-1, 5) == dealt).all(axis=1)
    in_time, late = _in_time(col["box_action_times"], col["dealer_revealed_at"], actions, n_actions, n_boxes, n)
    ok &= in_time

    # the kernel's columns: the boxes of the rounds as dealt
    of_box = np.repeat(ok, n_boxes)
    hand_codes = _ints(pc.index_in(hands, _CATEGORIES), -1)
    box_place = np.arange(len(box_no)) - np.repeat(_starts(n_boxes)[:-1], n_boxes)
    hand_at = np.repeat(_starts(n_hands)[:-1], n_boxes) + box_place
    recorded = box_place < np.repeat(n_hands, n_boxes)
    box_hand = np.where(recorded, hand_codes[np.minimum(hand_at, max(len(hand_codes) - 1, 0))] if len(hand_codes)
                        else -1, -1)
    of_card = np.repeat(ok[row_round], card_len)
    dealer_out = np.full((n, 5), -1, np.int64)
    r = np.flatnonzero(ok)
    dealer_out[r] = deck[deck_at[r][:, None] + dealer_pos[n_boxes[r]]]
    before = [col["jackpot_before"], col["next_pool_before"]]
    return DealtRounds(
        status, ok, _starts(np.where(ok, n_boxes, 0)), box_no[of_box], _ints(pc.index_in(actions, _ACTIONS), -1)[
            np.repeat(ok, n_actions)], box_hand[of_box], codes[of_card], n_hands,
        _ints(pc.index_in(col["dealer_hand"], _CATEGORIES), -1), dealer_out.ravel(),
        np.array([_ints(p, 0) for p in before]).reshape(2, n),
        np.array([pc.is_valid(p).to_numpy(zero_copy_only=False) for p in before], np.bool_).reshape(2, n),
        _ints(col["betting_closed_at"], 0), late & ok, deck_wrong & ok, pa.record_batch(col))


def _in_time(times: pa.Array, revealed: pa.Array, actions: pa.Array, n_actions: np.ndarray, n_boxes: np.ndarray,
             n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per round: (the instants are as dealt: none recorded, or one entry a box, each none or one instant a letter
    of its box's decision (`actions` their values, `n_actions` a round's count; decision_times.times_problem); a
    decision after the reveal: LATE_DECISION, a decision exactly at the reveal on time)."""
    recorded = pc.is_valid(times).to_numpy(zero_copy_only=False)
    n_times, per_box = _lists(times)
    held, values = _lists(per_box)
    box_round = np.repeat(np.arange(n), n_times)
    # each entry's box's letters (where the round has as many decisions as entries: else it is not as dealt)
    letters = _ints(pc.utf8_length(actions), 0)
    place = np.arange(len(box_round)) - np.repeat(_starts(n_times)[:-1], n_times)
    aligned = (n_actions == n_times)[box_round]
    want = np.where(aligned, letters[np.minimum(_starts(n_actions)[:-1][box_round] + place, max(len(letters) - 1, 0))]
                    if len(letters) else 0, -1)
    wrong = pc.is_valid(per_box).to_numpy(zero_copy_only=False) & (held != want)
    shown = _ints(revealed, np.iinfo(np.int64).max)[np.repeat(box_round, held)]
    late = _ints(values, np.iinfo(np.int64).min) > shown
    return (~recorded | ((n_times == n_boxes) & ~_any(box_round, wrong, n)),
            _any(np.repeat(box_round, held), late, n))


@dataclass(frozen=True)
class DealtBets:
    """A table-day's bets as the kernel and the quiet rounds' words read them, a row a bet."""

    round_index: np.ndarray  # into the rounds (any other value: none of them)
    bet_id: pa.Array  # text (null: not recorded)
    account_id: pa.Array  # text (null: not recorded)
    bet_type: pa.Array  # text (null: not recorded)
    seat: pa.Array  # int64 (null: not recorded)
    stake: np.ndarray  # amounts as the kernel takes them: null 0; too large for its arithmetic, or not a number,
    added: np.ndarray  # 2**40 (the bet's round is not quiet)
    paid: np.ndarray
    placed: np.ndarray  # microseconds (0 where not recorded)


_TOO_LARGE = 2**40


def bet_columns(bets: pa.Table, round_index: np.ndarray) -> DealtBets:
    """The bets' columns (bet_id, account_id, bet_type, seat, stake, added_stake, paid; placed_at as int64
    microseconds), a row a bet, each in the rounds `round_index` gives it."""
    def amounts(name: str) -> np.ndarray:
        values = _typed(bets[name], pa.int64())
        if values is None:
            return np.full(bets.num_rows, _TOO_LARGE, np.int64)
        v = _ints(values, 0)
        return np.where(np.abs(v) < _TOO_LARGE, v, _TOO_LARGE)

    seat, bet_type = _typed(bets["seat"], pa.int64()), _typed(bets["bet_type"], pa.string())
    n = bets.num_rows
    return DealtBets(
        np.asarray(round_index, np.int64), _text(bets["bet_id"]), _text(bets["account_id"]),
        bet_type if bet_type is not None else pa.nulls(n, pa.string()),
        seat if seat is not None else pa.nulls(n, pa.int64()),
        amounts("stake"), amounts("added_stake"), amounts("paid"), _ints(bets["placed_at"], 0))


def bet_records(bets: Sequence) -> DealtBets:
    """audit.RecordedBet records as the kernel reads them."""
    def amounts(name: str) -> np.ndarray:
        return np.array([_amount(getattr(b, name)) for b in bets], np.int64)

    return DealtBets(
        np.array([b.round_index for b in bets], np.int64),
        *(pa.array([None if v is None else f"{v}" for v in (getattr(b, name) for b in bets)], pa.string())
          for name in ("bet_id", "account_id")),
        _array([b.bet_type for b in bets], pa.string()), _array([b.seat for b in bets], pa.int64()),
        amounts("stake"), amounts("added_stake"), amounts("paid"),
        np.array([b.placed_at if isinstance(b.placed_at, int) else 0 for b in bets], np.int64))


def _text(column) -> pa.Array:
    """A text column as one string array (a value as its text, as the findings name it)."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return column if column.type == pa.string() else column.cast(pa.string())


def _amount(value) -> int:
    if value is None:
        return 0
    return value if isinstance(value, int) and -_TOO_LARGE < value < _TOO_LARGE else _TOO_LARGE


def records_table(rounds: Sequence) -> pa.Table:
    """audit.RecordedRound records as dealt_rounds reads them (a value not of its column's type: null)."""
    rows = {
        "round_id": [r.round_id for r in rounds], "shoe_id": [r.shoe_id for r in rounds],
        "round_no": [r.round_no for r in rounds],
        "status": [r.status for r in rounds], "boxes": [r.boxes for r in rounds],
        "box_cards": [r.box_cards for r in rounds], "box_actions": [r.box_actions for r in rounds],
        "dealer_cards": [r.dealer_cards for r in rounds], "box_hands": [r.box_hands for r in rounds],
        "dealer_hand": [r.dealer_hand for r in rounds], "jackpot_before": [r.jackpot_before for r in rounds],
        "next_pool_before": [r.next_pool_before for r in rounds], "jackpot_after": [r.jackpot_after for r in rounds],
        "next_pool_after": [r.next_pool_after for r in rounds],
        "betting_closed_at": [r.betting_closed_at for r in rounds], "deck": [r.deck for r in rounds],
        "decks": [r.decks for r in rounds], "cut_index": [r.cut_index for r in rounds],
        "box_action_times": [r.box_action_times for r in rounds],
        "dealer_revealed_at": [r.dealer_revealed_at for r in rounds]}
    return pa.table({name: _array(values, ROUND_TYPES[name]) for name, values in rows.items()})


def _array(values: list, kind: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, kind)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return pa.concat_arrays([_array([v], kind) if len(values) > 1 else pa.nulls(1, kind) for v in values])


def _typed(column, kind: pa.DataType) -> pa.Array | None:
    """The column as one array of `kind`; None where its values are not of that kind."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if column.type == kind:
        return column
    try:
        return column.cast(kind)
    except (pa.ArrowException, TypeError, ValueError):
        return None


def _lists(column: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """A list column's lengths (0 where null) and its values (those of the lists that are not null)."""
    return _ints(pc.list_value_length(column), 0), pc.list_flatten(column)


def _ints(values, none: int) -> np.ndarray:
    if not values.null_count and pa.types.is_integer(values.type):  # (most: as they are, no Arrow cast or fill)
        return np.asarray(values.to_numpy(), np.int64)
    return pc.fill_null(pc.cast(values, pa.int64()), none).to_numpy(zero_copy_only=False).astype(np.int64)


# a two-byte card text's code by its bytes (-1: not a card); every card code is two bytes
_CARD_OF_BYTES = np.full(1 << 16, -1, np.int64)
_CARD_OF_BYTES[[code[0] << 8 | code[1] for code in (c.encode() for c in CARD_CODES)]] = np.arange(_DECK)


def _cards(values: pa.Array) -> np.ndarray:
    """Each text's card code (-1: not a card): read from its two bytes where every text has two (a day's cards, a
    few hundred thousand a table: no hashing of each), else looked up by Arrow."""
    if values.type == pa.string() and not values.null_count and len(values):
        offsets = np.frombuffer(values.buffers()[1], np.int32, len(values) + 1, 4 * values.offset)
        at = offsets[:-1]
        if (offsets[1:] - at == 2).all():
            data = np.frombuffer(values.buffers()[2], np.uint8)
            return _CARD_OF_BYTES[data[at].astype(np.int64) << 8 | data[at + 1]]
    return _ints(pc.index_in(values, _CARDS), -1)


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def _any(row_of: np.ndarray, wrong: np.ndarray, n: int) -> np.ndarray:
    """Per row of n: any `wrong` among the items `row_of` gives it."""
    return np.bincount(row_of[wrong], minlength=n)[:n] > 0 if len(row_of) else np.zeros(n, np.bool_)
