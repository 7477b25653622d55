"""Arrow <-> the blackjack engine: one table's shoes, rounds and bets into engine.games.blackjack.audit,
its results back as output tables. No Beam here (tested without a pipeline).

Rounds and bets go in as numpy columns (engine ShoeRounds, ShoeBets), encoded from the Arrow columns at once for
the whole table (card and decision codes from the list arrays' values and offsets, bet types, seats and accounts
as codes); the engine asks for a round or bet as Python values only where the readable audit reads it (a round
the kernel cannot clear, a bet beside a MAIN bet in quarantine). The results come back as columns (Gathered),
the findings of the bets the screen cannot clear made for all the table's shoes at once (bet_checks.bet_findings).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting_columns import finding_columns
from engine.cards import CARD_CODES
from engine.findings import Finding
from engine.games.blackjack import BET_CODES
from engine.games.blackjack.audit import (
    KERNEL_KINDS,
    Dealt,
    RecordedBet,
    RecordedRound,
    RoundReport,
    ShoeFacts,
    TableArrays,
    audit_plain_shoes,
    audit_shoe,
    played_lines,
    table_arrays,
)
from engine.games.blackjack.bet_checks import FlaggedBets, bet_findings
from engine.games.blackjack.kernel import LETTERS, NO_SEAT, OTHER
from engine.games.blackjack.records import NO_TIME, SEATS, ShoeBets, ShoeRounds, rounds_of
from engine.games.blackjack.rules import BlackjackRules, load_blackjack_rules
from engine.games.blackjack.strategy import BasicStrategyChart, load_basic_strategy
from engine.kernels import spans, utf8_texts
from pipelines.arrow_columns import coded, index_in, one_chunk, plain_table, us_column
from pipelines.arrow_columns import plain as plain_values
from pipelines.convert import dated_findings
from pipelines.games.rows import (
    BET_COLUMNS,
    NO_BETS,
    GameTable,
    bet_tables,
    bets_by_shoe,
    box_micros,
    day,
    dealing_place,
    instant_tuples,
    plain_bets,
    round_dates,
    table_facts,
    taken,
)
from pipelines.neighbours import quarantined_bets
from schemas.games.blackjack import REPLAYS
from schemas.outputs import FINDINGS

OUT_REPLAYS = "blackjack_round_replays"
QUARANTINED_ROUNDS = True  # dealt from a shoe in round order (pipelines.games.audit_group)


@dataclass(frozen=True)
class BlackjackTable(GameTable):
    game = "blackjack"
    rules: BlackjackRules
    chart: BasicStrategyChart
    arrays: TableArrays = field(compare=False)  # its rules, chart and limits as the kernels take them


@cache
def _chart(name: str) -> BasicStrategyChart:
    return load_basic_strategy(name)


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> BlackjackTable:
    rules = load_blackjack_rules(row["ruleset"])
    facts, chart = table_facts(row, limits), _chart(rules.basic_strategy)
    return BlackjackTable(facts, rules, chart, table_arrays(rules, chart, facts))


def audit_tables(table: BlackjackTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None,
                 quarantined_rounds: pa.Table | None = None) -> dict[str, pa.Table]:
    """Audit the shoes of one blackjack table: {blackjack_round_replays, settlements, findings, quarantine}.
    Every round's shoe is among `shoes`, every bet's round among `rounds` (matched by `_shoe_id` too
    where the bets carry it); `neighbours`: the quarantined bets on these rounds (pipelines/neighbours.py);
    `quarantined_rounds`: the round rows of these shoes put in quarantine as read (InShoe:
    their recorded cards are dealt past, nothing in them is checked).
    (`compact` is the baccarat adaptor's; these tables are plain already.)"""
    shoe_rows = shoes.select(["shoe_id", "decks", "cut_index", "opened_at"]).to_pylist()
    cards_n, shoe_cards = _lists(shoes["cards"])  # every shoe's cards as codes at once, shoe after shoe
    shoe_codes, shoe_at = _cards(shoe_cards), _starts(cards_n)
    round_rows = rounds.select(["round_id", "shoe_id", "round_no"]).to_pylist()
    # (as read: the texts the engine reads as codes coded a distinct value at a time, a dictionary-encoded column
    # decoded only where its rows are taken, the settlements' and the findings')
    read = plain_bets(bets, [*BET_COLUMNS, "added_stake"], decoded=False)
    bet = _bet_columns(read)
    by_shoe, bets_of_shoe = rounds_by_shoe(round_rows), bets_by_shoe(rounds, read["round_id"], read["_shoe_id"])
    gathered = Gathered(rounds)
    held_of_shoe = quarantined_of_shoe(quarantined_rounds, _ROUND_COLUMNS)
    orders = [by_shoe.get(shoe["shoe_id"], []) for shoe in shoe_rows]
    dealt = np.array([i for order in orders for i in order], np.int64)  # the table's rounds, shoe by shoe, in order
    columns = _round_columns(taken(rounds, dealt))
    records = _Records(rounds)  # (the rounds the readable audit reads)
    # each bet's round among the table's rounds as dealt, at once where the table's round ids are distinct (else
    # shoe by shoe, among the shoe's rounds)
    dealt_ids = taken(rounds["round_id"], dealt)
    distinct = pc.count_distinct(dealt_ids, mode="all").as_py() == len(dealt)
    in_dealt = _ints(index_in(read["round_id"], dealt_ids), -1)
    with_neighbours = neighbours is not None and neighbours.num_rows > 0
    # the shoes audited at once (audit_plain_shoes); a shoe with rounds or bets in quarantine is audited alone
    first = _starts(np.array([len(order) for order in orders], np.int64))
    round_shoe = np.repeat(np.arange(len(shoe_rows)), np.diff(first))
    others = np.array([shoe["shoe_id"] in held_of_shoe for shoe in shoe_rows], bool)
    if with_neighbours:
        others[round_shoe[pc.is_in(dealt_ids, plain_values(neighbours["round_id"])).to_numpy(
            zero_copy_only=False)]] = True
    if not distinct or not gathered.by_row or len({shoe["shoe_id"] for shoe in shoe_rows}) < len(shoe_rows):
        others[:] = True  # (a round id or shoe id repeated: each shoe alone, its rounds found among its own)
    bet_shoe = np.full(len(read), -1, np.int64)
    for s, shoe in enumerate(shoe_rows):
        bet_shoe[bets_of_shoe.get(shoe["shoe_id"], NO_BETS)] = s
    placed = np.flatnonzero(np.append(np.diff(first), 0)[bet_shoe] > 0)  # (the bets of a shoe with rounds)
    placed_shoe = bet_shoe[placed]
    local = in_dealt[placed] - first[placed_shoe]
    shoe_n = first[placed_shoe + 1] - first[placed_shoe]
    # (a bet whose round is not its shoe's: on the shoe's last round, as _round_index reads it)
    on_round = first[placed_shoe] + np.where((local >= 0) & (local < shoe_n), local, shoe_n - 1)
    cuts, decks = (np.array([-1 if shoe[c] is None else shoe[c] for shoe in shoe_rows], np.int64)
                   for c in ("cut_index", "decks"))
    shoe_ids = np.array([shoe["shoe_id"] for shoe in shoe_rows], object)
    by_table = audit_plain_shoes(
        table.rules, table.chart, table.facts, table.arrays,
        replace(columns, recorded=lambda at: records(dealt[at])),
        Dealt(round_shoe, first[round_shoe], shoe_codes, shoe_at, cuts), shoe_ids, decks,
        ShoeBets(on_round, *(bet[c][placed] for c in _ENGINE_BET_COLUMNS),
                 recorded=lambda at: _recorded_bets(read, bet, placed[at], on_round[at])), placed_shoe, others)
    on_table, at_once = by_table.shoes[round_shoe], by_table.bets
    gathered.plain_shoes(round_shoe[on_table], dealt[on_table], shoe_ids,
                         [by_table.reports.get(i) for i in np.flatnonzero(on_table).tolist()], placed_shoe[at_once],
                         placed[at_once], dealt[on_round[at_once]], by_table.expected,
                         np.searchsorted(at_once, by_table.flagged.bet), by_table.findings,
                         round_shoe[by_table.found_in], dealt[by_table.found_in])
    # the kernel's replay of the table's shoes reports and explains the rounds without a report at once, those of
    # the shoes audited alone too (the rounds their audit leaves plain: the replay's own, a shoe's as alone)
    played = by_table.played
    flagged: list[FlaggedBets] = [by_table.flagged]  # the shoes' bets checked at once (bet_checks.bet_findings)
    records.ahead(dealt[by_table.named])
    for s in np.flatnonzero(~by_table.shoes).tolist():
        shoe, order = shoe_rows[s], orders[s]
        start, rows = int(first[s + 1]), dealt[first[s]:first[s + 1]]
        held = held_of_shoe.get(shoe["shoe_id"], [])
        if held:  # its rounds, and those put in quarantine at their places, as records (a rare shoe)
            # (when betting opened places a round numbered out of range: read for this shoe's rounds only)
            opened = rounds["betting_opened_at"].take(pa.array(order, pa.int64())).to_pylist()
            for i, at in zip(order, opened, strict=True):
                round_rows[i]["betting_opened_at"] = at
            in_shoe = InShoe.of(order, round_rows, held)
            engine_rounds, audited = _with_quarantined(records, order, in_shoe), in_shoe.audited
        else:
            engine_rounds = rounds_of(columns, start - len(order), start,
                                      lambda at, rows=rows: records(rows[at]))
            audited = np.arange(len(order))
        mine = bets_of_shoe.get(shoe["shoe_id"], NO_BETS)
        kept, index = rows[audited[audited >= 0]], np.flatnonzero(audited >= 0)
        ids = rounds["round_id"].take(pa.array(kept, pa.int64())) if held or not distinct or with_neighbours else None
        if held or not distinct:
            round_index = _round_index(ids, index, read["round_id"], mine)
        else:  # (its bets' rounds found among the table's at once; not its own: its last round, as _round_index)
            local = in_dealt[mine] - (start - len(order))
            round_index = np.where((local >= 0) & (local < len(order)), local, len(order) - 1)
        position = dict(zip(ids.to_pylist(), index.tolist(), strict=True)) if with_neighbours else {}
        engine_bets = ShoeBets(round_index, *(bet[c][mine] for c in _ENGINE_BET_COLUMNS), recorded=lambda at,
                               mine=mine, k=round_index: _recorded_bets(read, bet, mine[at], k[at]))
        codes = shoe_codes[shoe_at[s]:shoe_at[s + 1]]
        facts = ShoeFacts(shoe["shoe_id"], shoe["decks"], _shoe_cards(shoes["cards"], s, codes), shoe["cut_index"],
                          codes)
        # (a shoe with rounds in quarantine has its reports renumbered: explained here, as records; another's
        # rounds are the table's replay's, their plain ones reported and explained with the table's)
        result = audit_shoe(table.rules, table.chart, table.facts, facts, engine_rounds, engine_bets,
                            quarantined=quarantined_bets(neighbours, position, shoe["shoe_id"]), explained=bool(held),
                            arrays=table.arrays, replayed=None if held else (played, int(first[s])))
        if held:
            result = replace(result, rounds=in_shoe.reports(result.rounds))
        flagged.append(result.flagged)
        gathered.shoe(s, shoe, order, round_rows, mine, audited[round_index], result, result.on_bet,
                      result.flagged.bet)
    said, quiet = played_lines(played).joined(np.arange(len(dealt))), played.reported()
    return gathered.tables(table.table_id, OUT_REPLAYS, REPLAYS.schema, read, bets,
                           lambda *replayed: _replay_columns(*replayed, said, quiet),
                           lambda texts: bet_findings(table.rules, table.facts, FlaggedBets.joined(flagged), texts))


_ROUND_COLUMNS = ["round_id", "shoe_id", "round_no", "betting_opened_at", "status", "dealer_cards", "boxes",
                  "box_cards", "box_actions", "box_auto_played"]


# what a RecordedRound holds: the values read as Python, the instants as microseconds
_RECORD_VALUES = [c for c in _ROUND_COLUMNS if c not in ("shoe_id", "betting_opened_at")]


def _record_table(rounds: pa.Table) -> pa.Table:
    """The columns of `rounds` a RecordedRound holds, its instants as integer microseconds: cast once a table, the
    records read from it (_Records)."""
    return rounds.select(_RECORD_VALUES).append_column("closed", us_column(rounds["betting_closed_at"])).append_column(
        "times", box_micros(rounds, "box_action_times")).append_column(
        "revealed", us_column(rounds["dealer_revealed_at"]))


class _Records:
    """The table's rounds as the engine's records, each read once from _record_table's columns: those the shoes
    are known to need read at once (ahead), any other when asked (a shoe reads a few: each a slice, no take of the
    columns)."""

    def __init__(self, rounds: pa.Table):
        self.table, self.read = _record_table(rounds), {}

    def ahead(self, rows: np.ndarray) -> None:
        read = self.table.take(pa.array(rows, pa.int64())).to_pylist()
        self.read.update(zip(rows.tolist(), map(_recorded_round, read), strict=True))

    def __call__(self, rows: np.ndarray) -> list[RecordedRound]:
        """The rounds `rows` (rows of the table's rounds)."""
        new = [i for i in np.asarray(rows, np.int64).tolist() if i not in self.read]
        if len(new) > 4:  # (many at once, as audit_plain_shoes asks: one take)
            self.ahead(np.unique(new))
        return [self.read[i] if i in self.read else _recorded_round(self.table.slice(i, 1).to_pylist()[0])
                for i in np.asarray(rows, np.int64).tolist()]


def _with_quarantined(records: _Records, order: list[int], in_shoe: InShoe) -> list[RecordedRound]:
    """A shoe's rounds with those put in quarantine at their places, as records: a quarantined round goes to the
    engine as a cancelled one (its cards dealt past, nothing in it checked)."""
    ordered = iter(records(np.asarray(order, np.int64)[in_shoe.audited[in_shoe.audited >= 0]]))
    return [next(ordered) if a >= 0 else _recorded_round({**r, "status": "cancelled", "closed": 0, "times": None,
                                                          "revealed": None})
            for r, a in zip(in_shoe.rows, in_shoe.audited, strict=True)]


def _recorded_round(r: dict) -> RecordedRound:
    """A row of _record_table as the engine's record."""
    return RecordedRound(
        r["round_id"], r["round_no"], r["status"], r["closed"] or 0, tuple(r["dealer_cards"] or ()),
        tuple(r["boxes"] or ()), tuple(tuple(c or ()) for c in r["box_cards"] or ()),
        tuple(a or "" for a in r["box_actions"] or ()),
        # box_auto_played is optional: not recorded means no box was auto-played
        tuple(bool(a) for a in r["box_auto_played"]) if r["box_auto_played"] is not None
        else (False,) * len(r["boxes"] or ()),
        instant_tuples(r["times"]), r["revealed"])


def _lists(column) -> tuple[np.ndarray, pa.Array]:
    """A list column's lengths (0 where null) and its values (those of the lists that are not null)."""
    column = one_chunk(column)
    return _ints(pc.list_value_length(column)), pc.list_flatten(column)


def _ints(values, none: int = 0) -> np.ndarray:
    values = pc.cast(values, pa.int64())
    if values.null_count:  # (filling copies the column: only where it has a null)
        values = pc.fill_null(values, none)
    return values.to_numpy(zero_copy_only=False).astype(np.int64)


def _cards(values: pa.Array) -> np.ndarray:
    """Each card's code (CARD_CODES' index; -1: null or not a card code), read from its two bytes (every card code
    is two ASCII characters: a table of them, no hash of each text)."""
    data, at = utf8_texts(pc.cast(values, pa.string()))
    two = np.flatnonzero(np.diff(at) == 2)
    codes = np.full(len(at) - 1, -1, np.int64)
    first = at[two].astype(np.int64)
    codes[two] = _CARD_OF_BYTES[data[first].astype(np.int64) << 8 | data[first + 1]]
    return codes


def _shoe_cards(cards: pa.ChunkedArray | pa.Array, s: int, codes: np.ndarray) -> tuple[str | None, ...]:
    """Shoe `s`'s cards as recorded (none where its list is null), from its codes where each is a card code."""
    return tuple(_CARD_TEXTS[codes]) if (codes >= 0).all() else tuple(cards[s].as_py() or ())


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


_CARD_CODES = pa.array(CARD_CODES, pa.string())
_CARD_OF_BYTES = np.full(1 << 16, -1, np.int64)  # a card code's two bytes (first << 8 | second) -> its code
_CARD_OF_BYTES[[ord(code[0]) << 8 | ord(code[1]) for code in CARD_CODES]] = np.arange(len(CARD_CODES))
_CARD_TEXTS = np.array(CARD_CODES, object)
_BET_CODES = pa.array(BET_CODES, pa.string())
_KERNEL_KINDS = pa.array(KERNEL_KINDS, pa.string())
_LETTER_OF_BYTE = np.full(256, -1, np.int64)
_LETTER_OF_BYTE[[ord(letter) for letter in LETTERS]] = np.arange(len(LETTERS))


def _letters(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Each text's length in characters (null: none) and the code of each of its characters (kernel.LETTERS'
    index, -1 for any other), one text after another."""
    texts = pc.fill_null(texts, "")
    data, offsets = utf8_texts(pc.cast(texts, pa.large_string()))
    if (data[offsets[0]:offsets[-1]] >= 0x80).any():  # (a character not ASCII made one byte, not a letter: rare)
        data, offsets = utf8_texts(pc.cast(pc.replace_substring_regex(texts, r"[^\x00-\x7F]", "?"), pa.large_string()))
    return np.diff(offsets), _LETTER_OF_BYTE[data[offsets[0]:offsets[-1]]]


def _instants(values, none: int = NO_TIME) -> np.ndarray:
    return _ints(us_column(values), none)


def _round_columns(r: pa.Table) -> ShoeRounds:
    """The rounds `r` as the engine's columns (records.ShoeRounds, what ShoeRounds.of makes of their records;
    `recorded` left to each shoe's), at once for the whole table."""
    n, at = r.num_rows, np.arange(r.num_rows)
    dealer_n, dealer = _lists(r["dealer_cards"])
    boxes_n, box_values = _lists(r["boxes"])
    box_no = _ints(box_values, -1)
    cards_n, box_cards = _lists(r["box_cards"])
    card_n, cards = _lists(box_cards)
    actions_n, actions = _lists(r["box_actions"])
    act_n, act = _letters(actions)
    auto_null = pc.is_null(r["box_auto_played"]).to_numpy(zero_copy_only=False)
    auto_n, auto_values = _lists(r["box_auto_played"])
    # records.record_problem is None: boxes 1-7 ascending, an entry a box in every list, a dealer card, two a box
    box_round, card_round = np.repeat(at, boxes_n), np.repeat(at, cards_n)
    descending = np.zeros(len(box_no), bool)
    descending[1:] = (box_no[1:] <= box_no[:-1]) & (box_round[1:] == box_round[:-1])
    readable = ((np.bincount(box_round[(box_no < SEATS.start) | (box_no >= SEATS.stop) | descending], minlength=n) == 0)
                & (cards_n == boxes_n) & (actions_n == boxes_n) & (auto_null | (auto_n == boxes_n))
                & ((boxes_n == 0) | (dealer_n >= 1)) & (np.bincount(card_round[card_n < 2], minlength=n) == 0))
    box_at, dealer_at = _starts(boxes_n * readable), _starts(dealer_n * readable)
    kept_box, kept_cards, kept_actions = readable[box_round], readable[card_round], np.repeat(readable, actions_n)
    auto = np.zeros(int(box_at[-1]), bool)
    auto[~auto_null[box_round[kept_box]]] = _ints(auto_values, 0)[np.repeat(readable, auto_n)].astype(bool)
    # decisions in time (records.timed_plainly): an instant a letter of each box whose instants are recorded,
    # none after the reveal
    times_null = pc.is_null(r["box_action_times"]).to_numpy(zero_copy_only=False)
    times_n, box_times = _lists(r["box_action_times"])
    box_timed = pc.is_valid(box_times).to_numpy(zero_copy_only=False)
    time_n, times = _lists(box_times)
    times = _instants(times)
    revealed = _instants(r["dealer_revealed_at"])
    aligned = readable & ~times_null & (times_n == boxes_n)  # an entry a box, the box's letters beside it
    entry_round = np.repeat(at, times_n)
    entry_box = np.arange(len(entry_round)) - _starts(times_n)[entry_round]  # its box's place in the round
    beside = np.where(aligned[entry_round], _starts(actions_n)[entry_round] + entry_box, len(act_n))
    miscounted = aligned[entry_round] & box_timed & (time_n != np.append(act_n, 0)[beside])
    time_round = np.repeat(entry_round, time_n)
    late = (times != NO_TIME) & (revealed[time_round] != NO_TIME) & (times > revealed[time_round])
    unplain = np.bincount(entry_round[miscounted], minlength=n) + np.bincount(time_round[late], minlength=n)
    timed = readable & (times_null | (aligned & (unplain == 0)))
    # the instants of the letters of the rounds timed (NO_TIME where not recorded)
    act_at = _starts(act_n[kept_actions])
    given = (timed & ~times_null)[entry_round]
    kept_entry = box_at[entry_round[given]] + entry_box[given]  # its box among the kept ones
    timed_box = np.zeros(int(box_at[-1]), bool)
    timed_box[kept_entry] = box_timed[given]
    act_time = np.full(int(act_at[-1]), NO_TIME, np.int64)
    with_times = given & box_timed
    act_time[spans(act_at[box_at[entry_round[with_times]] + entry_box[with_times]], time_n[with_times])] = \
        times[spans(_starts(time_n)[:-1][with_times], time_n[with_times])]
    return ShoeRounds(
        cancelled=pc.fill_null(pc.equal(r["status"], "cancelled"), False).to_numpy(zero_copy_only=False),
        numbered=pc.fill_null(pc.greater_equal(r["round_no"], 1), False).to_numpy(zero_copy_only=False),
        closed=_instants(r["betting_closed_at"], 0), readable=readable,
        used=dealer_n + np.bincount(card_round, weights=card_n, minlength=n).astype(np.int64),
        dealer=_cards(dealer)[np.repeat(readable, dealer_n)], dealer_at=dealer_at, box_no=box_no[kept_box],
        box_at=box_at, auto=auto, card=_cards(cards)[np.repeat(kept_cards, card_n)],
        card_at=_starts(card_n[kept_cards]), act=act[np.repeat(kept_actions, act_n)],
        act_at=act_at, timed=timed, times_recorded=~times_null, revealed=revealed, box_timed=timed_box,
        act_time=act_time, recorded=lambda at: [])


# the bet columns the engine reads (ShoeBets' fields but the round index, in their order)
_ENGINE_BET_COLUMNS = ("bet_type", "seat", "account", "stake", "added_stake", "paid", "placed_at")


def _bet_columns(read: pa.Table) -> dict[str, np.ndarray]:
    """The bet columns the engine reads (ShoeBets'), int64: amounts (added_stake 0 where none), placed_at
    (microseconds), bet types as codes (BET_CODES' index, OTHER for any other), seats (NO_SEAT: none) and
    accounts (equal codes for equal account ids, null one of its own); `read`: the bets as read (a column plain or
    dictionary-encoded)."""
    plain = {c: plain_values(read[c]) for c in ("placed_at", "stake", "paid", "added_stake", "seat")}
    placed = us_column(plain["placed_at"])
    account = read["account_id"]
    if pa.types.is_dictionary(account.type):
        accounts = coded(account)[0]
    else:
        accounts = pc.cast(account, pa.string()).combine_chunks().dictionary_encode(
            null_encoding="encode").indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return {"stake": _ints(plain["stake"]), "paid": _ints(plain["paid"]), "added_stake": _ints(plain["added_stake"]),
            "placed_at": _ints(placed), "seat": _ints(plain["seat"], NO_SEAT),
            "bet_type": _ints(index_in(read["bet_type"], _BET_CODES), OTHER), "account": accounts}


def _recorded_bets(read: pa.Table, bet: dict[str, np.ndarray], rows: np.ndarray, round_index: np.ndarray
                   ) -> list[RecordedBet]:
    """The bets `rows` of `read` (the bets as read) as the engine's records, on their rounds' indexes."""
    texts = read.select(["bet_id", "account_id", "bet_type", "seat"]).take(pa.array(rows, pa.int64())).to_pylist()
    numbers = zip(*(bet[c][rows].tolist() for c in ("stake", "added_stake", "paid", "placed_at")), strict=True)
    return [RecordedBet(t["bet_id"], k, t["account_id"], t["bet_type"], t["seat"], stake, added, paid, placed)
            for t, k, (stake, added, paid, placed) in zip(texts, round_index.tolist(), numbers, strict=True)]


def _round_index(ids: pa.Array, index: np.ndarray, round_ids: pa.ChunkedArray, mine: np.ndarray) -> np.ndarray:
    """Each of the bets `mine` on its round's engine index (`ids`: the shoe's audited rounds' ids, `index` their
    engine indexes; a round id recorded twice: its last round, as a dict of them reads)."""
    last = pc.index_in(plain_values(round_ids.take(pa.array(mine, pa.int64()))), ids[::-1])
    return index[len(ids) - 1 - pc.fill_null(last, 0).to_numpy(zero_copy_only=False).astype(np.int64)]


def _explanations(reports: list[RoundReport | None], said: tuple[np.ndarray, pa.Array]) -> pa.Array:
    """Each report's explanation: its own, else (a round the kernel replayed) its lines among `said` (each line's
    report, ascending, and the line)."""
    own = [(k, line) for k, rep in enumerate(reports) if rep is not None for line in rep.explanation]
    at, text = said
    if own:  # (a report's own lines put among the kernel's at its place: slices joined, no take of every line)
        own_at = np.array([k for k, _ in own], np.int64)
        lines, cut = pa.array([line for _, line in own], text.type), np.searchsorted(at, own_at)
        first = np.flatnonzero(np.diff(own_at, prepend=-1)).tolist()  # each report's first own line
        pieces, done = [], 0
        for a, b in zip(first, [*first[1:], len(own)], strict=True):
            pieces += [text.slice(done, int(cut[a]) - done), lines.slice(a, b - a)]
            done = int(cut[a])
        text, at = pa.concat_arrays([*pieces, text.slice(done)]), np.insert(at, cut, own_at)
    return pa.ListArray.from_arrays(pa.array(np.searchsorted(at, np.arange(len(reports) + 1)).astype(np.int32)), text)


def _placed(n: int, kind: pa.DataType, *parts: tuple[np.ndarray, pa.Array | list]) -> pa.Array:
    """A column of `n` rows: each part's values (an array, or Python values) at its rows, a later part's over an
    earlier's; a part at every row in order as it is (no take)."""
    parts = tuple((rows, values) for rows, values in parts if len(rows))
    if not parts:  # (no row)
        return pa.nulls(n, kind)
    if len(parts) == 1 and len(parts[0][0]) == n and (np.diff(parts[0][0]) == 1).all():
        values = parts[0][1]
        return values.cast(kind) if isinstance(values, pa.Array) else pa.array(values, kind)
    at, start = np.zeros(n, np.int64), 0
    for rows, _ in parts:
        at[rows] = start + np.arange(len(rows))
        start += len(rows)
    return pa.concat_arrays([(values if isinstance(values, pa.Array) else pa.array(values, kind)).cast(kind)
                             for _, values in parts]).take(pa.array(at))


def _replay_columns(table_id: str, rounds: pa.Table, rows: np.ndarray, shoe_ids: list[str],
                    reports: list[RoundReport | None], said: tuple[np.ndarray, pa.Array],
                    quiet: tuple[np.ndarray, ...]) -> dict[str, pa.Array]:
    """The blackjack_round_replays columns of the replayed rounds (`rows` of `rounds`, each's shoe and report;
    `said`: the lines of the reports without their own explanation, each's report and the line; `quiet`: the
    rounds without a report as the kernel reports them (audit._Played.reported): each's report, how many rounds
    came before each in its shoe, its position, dealer total, cut card, findings of audit.KERNEL_KINDS and the
    dealer's hand by the rule where it drew against it; its other expected cards the recorded ones)."""
    schema, n = REPLAYS.schema, len(reports)
    own = np.array([k for k, rep in enumerate(reports) if rep is not None], np.int64)
    mine = [reports[k] for k in own.tolist()]
    quiet_at, before, position, dealer_total, cut, found, redrawn, by_rule_n, by_rule = quiet
    # the recorded columns taken once (a quiet round's expected cards are its recorded ones, but a redrawn dealer's)
    recorded = taken(rounds.select(["round_id", "round_no", "status", "boxes", "box_actions", "box_cards",
                                    "dealer_cards"]), rows)

    def as_read(column: str, name: str) -> pa.Array:
        return recorded[column].combine_chunks().cast(schema.field(name).type)

    def reported(name: str, quiet_values: np.ndarray, values: list) -> pa.Array:
        """A number column: the quiet rounds' values and the reports' (None: null) at their rows."""
        column, none = np.zeros(n, np.asarray(quiet_values).dtype), np.zeros(n, bool)
        column[quiet_at], column[own], none[own] = quiet_values, [v or 0 for v in values], [v is None for v in values]
        return pa.array(column, schema.field(name).type, mask=none if none.any() else None)

    dealer = as_read("dealer_cards", "recorded_dealer_cards")
    dealt = pa.ListArray.from_arrays(pa.array(_starts(by_rule_n).astype(np.int32)), _CARD_CODES.take(
        pa.array(by_rule, pa.int64()))).cast(dealer.type)
    kinds = pa.ListArray.from_arrays(pa.array(_starts(found.sum(axis=1)).astype(np.int32)),
                                     _KERNEL_KINDS.take(pa.array(np.nonzero(found)[1])))
    box_cards, every = as_read("box_cards", "recorded_box_cards"), np.arange(n)
    return {
        "table_id": pa.array([table_id] * len(rows), pa.string()), "shoe_id": pa.array(shoe_ids, pa.string()),
        "round_id": as_read("round_id", "round_id"), "round_no": as_read("round_no", "round_no"),
        "status": as_read("status", "status"),
        "shoe_position": reported("shoe_position", position, [rep.shoe_position for rep in mine]),
        "rounds_before": reported("rounds_before", before, [rep.rounds_before for rep in mine]),
        "boxes": as_read("boxes", "boxes"), "box_actions": as_read("box_actions", "box_actions"),
        "expected_box_cards": _placed(n, box_cards.type, (every, box_cards),
                                      (own, [rep.expected_box_cards for rep in mine])),
        "recorded_box_cards": box_cards,
        "expected_dealer_cards": _placed(n, dealer.type, (every, dealer), (quiet_at[redrawn], dealt),
                                         (own, [rep.expected_dealer_cards for rep in mine])),
        "recorded_dealer_cards": dealer,
        "recorded_dealer_total": reported("recorded_dealer_total", dealer_total, [rep.dealer_total for rep in mine]),
        "cut_card_round": reported("cut_card_round", cut, [rep.cut_card_round for rep in mine]),
        "after_cut": reported("after_cut", np.zeros(len(before), bool), [rep.after_cut for rep in mine]),
        "explanation": _explanations(reports, said).cast(schema.field("explanation").type),
        "finding_kinds": _placed(n, schema.field("finding_kinds").type, (quiet_at, kinds),
                                 (own, [list(rep.finding_kinds) for rep in mine])),
    }


def rounds_by_shoe(round_rows: list[dict]) -> dict[str, list[int]]:
    """shoe_id -> its rounds' indexes in round order (round_no, then round_id)."""
    by_shoe: dict[str, list[int]] = {}
    for i, r in enumerate(round_rows):
        by_shoe.setdefault(r["shoe_id"], []).append(i)
    return {s: sorted(rows, key=lambda i: (round_rows[i]["round_no"], round_rows[i]["round_id"]))
            for s, rows in by_shoe.items()}


@dataclass(frozen=True)
class InShoe:
    """A shoe's rounds as its engine deals them: its audited rounds (`order`, indexes into the table's round
    rows) with, at their place by round_no, its rounds put in quarantine as they were read. A quarantined
    round still took the cards it records from the shoe, so the rounds after it are replayed after those
    cards; it is checked for nothing and gives no replay (its quarantine row says why)."""

    rows: list[dict]  # every round the engine is given, in dealing order
    audited: np.ndarray  # int64, per engine round: its index in `order`, -1 for a quarantined round

    @classmethod
    def of(cls, order: list[int], round_rows: list[dict], quarantined: list[dict]) -> InShoe:
        """(`round_rows` and `quarantined` hold round_no and betting_opened_at: dealing_place)"""
        rounds = [(round_rows[i]["round_no"], 0, round_rows[i]["round_id"] or "", k, round_rows[i])
                  for k, i in enumerate(order)]
        audited = [(round_rows[i]["round_no"], round_rows[i]["betting_opened_at"]) for i in order]
        # (a quarantined round before an audited one of the same round_no: it is the one out of place)
        for r in quarantined:
            at = dealing_place(r.get("round_no"), r.get("betting_opened_at"), audited)
            rounds.append((at, -1, r.get("round_id") or "", -1, {**r, "round_no": at}))
        rounds.sort(key=lambda x: x[:3])
        return cls([x[4] for x in rounds], np.array([x[3] for x in rounds], np.int64))

    def reports(self, reports: list) -> list:
        """The engine's round reports of the audited rounds, each on its index in `order`."""
        return [replace(rep, round_index=int(self.audited[rep.round_index])) for rep in reports
                if self.audited[rep.round_index] >= 0]


def quarantined_of_shoe(quarantined: pa.Table | None, columns: list[str]) -> dict[str, list[dict]]:
    """shoe_id -> the quarantined round rows of that shoe (`columns` those the table has; the others None)."""
    if quarantined is None or not quarantined.num_rows:
        return {}
    have = [c for c in columns if c in quarantined.column_names]
    by_shoe: dict[str, list[dict]] = {}
    for row in plain_table(quarantined.select(have)).to_pylist():
        by_shoe.setdefault(row.get("shoe_id"), []).append({c: row.get(c) for c in columns})
    return by_shoe


NO_DAY = np.iinfo(np.int32).max  # a day number for no date (above every real one: a shoe's least is its first)


def day_numbers(dates: pa.Array) -> np.ndarray:
    """Dates as int64 days since the epoch (date32's own numbers), NO_DAY where null."""
    return pc.fill_null(pc.cast(dates, pa.int32()), NO_DAY).to_numpy(zero_copy_only=False).astype(np.int64)


@dataclass
class Gathered:
    """The engine's results of a table's shoes, gathered as columns (a shoe at a time, or many shoes at once) and
    put in shoe order: the replayed rounds (rows of the table's rounds) with their reports, the bets (indexes into
    the table's bets), each bet's round (its row in the table's rounds) and the credit the engine expects (null:
    unsettled, with its reason), the findings with their business dates."""

    rounds: pa.Table  # the table's rounds, in the order of `round_rows` given to shoe()
    # each replay's shoe (its number), round (its row in `rounds`), the shoe's id and its report
    replay_of: list[np.ndarray] = field(default_factory=list)
    replay_rows: list[np.ndarray] = field(default_factory=list)
    replay_shoes: list[np.ndarray] = field(default_factory=list)  # (object: str or None)
    reports: list = field(default_factory=list)
    # each bet's shoe, its row in the table's bets, its round's row in `rounds`, its credit where `settled`; and
    # why each bet not settled is not (its reason, object: str or None; entries of the bets not settled only)
    bet_of: list[np.ndarray] = field(default_factory=list)
    bets: list[np.ndarray] = field(default_factory=list)
    round_rows: list[np.ndarray] = field(default_factory=list)
    expected: list[np.ndarray] = field(default_factory=list)
    settled: list[np.ndarray] = field(default_factory=list)
    unsettled: list[np.ndarray] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    # the business day of each of `findings` (day numbers, NO_DAY: none) and its place: its shoe's number and its
    # bet's row in the table's bets + 1 (0: the shoe's or a round's)
    finding_days: list[np.ndarray] = field(default_factory=list)
    finding_shoes: list[np.ndarray] = field(default_factory=list)
    finding_bets: list[np.ndarray] = field(default_factory=list)
    # the bets whose findings come after the shoes, as columns (tables' bet_findings): their shoes' numbers, their
    # rows in the table's bets, their rounds' rows in `rounds`, and the day numbers of their findings
    flagged: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.dates = round_dates(self.rounds)
        self.days = day_numbers(self.dates)  # each round's business day
        # (a round's day found by its own row, not by its round_id among its shoe's, where no two rounds share one)
        ids = plain_values(self.rounds["round_id"])
        self.by_row = bool(pc.count_distinct(ids, mode="all").as_py() == len(ids)
                           and not pc.any(pc.fill_null(pc.equal(ids, ""), True)).as_py())

    def shoe(self, shoe_no: int, shoe: dict, order: list[int], round_rows: list[dict], mine: np.ndarray,
             round_index: np.ndarray, result, on_bet: np.ndarray | None = None, flagged: np.ndarray = NO_BETS) -> None:
        """Shoe `shoe_no`'s audit (shoes numbered in their order): `order` its rounds (indexes into round_rows) in
        the engine's order, `mine` its bets' indexes and `round_index` each one's round in `order`, `result` the
        engine's (rounds, expected and settled as columns, unsettled, findings); `on_bet` each finding's bet (its
        index among `mine`, -1: none; None: every finding's is in bet order after the shoe's and rounds'), `flagged`
        the bets (indexes among `mine`) whose findings tables() is given as columns."""
        # (a report None: a round its game reports as columns, at its own index)
        self.replays(np.full(len(result.rounds), shoe_no, np.int64), np.array(
            [order[k if rep is None else rep.round_index] for k, rep in enumerate(result.rounds)], np.int64),
                     np.array([shoe["shoe_id"]] * len(result.rounds), object), result.rounds)
        if len(mine):
            # (why a bet is unsettled: the reasons of the few whose round cannot be settled only; np.array of the
            # whole list would look into each of its ~1,000 entries)
            at = np.flatnonzero(~np.asarray(result.settled, bool))
            unsettled = np.empty(len(at), object)
            unsettled[:] = [result.unsettled[i] for i in at.tolist()]
            self.bets_of(np.full(len(mine), shoe_no, np.int64), np.asarray(mine, np.int64),
                         np.asarray(order, np.int64)[round_index], result.expected, result.settled, unsettled)
        if not result.findings and not len(flagged):
            return
        ordered = np.asarray(order, np.int64)
        days = self.days[ordered]
        # the shoe's day: its first round's, its opening date's where no round has one (shoe_day)
        shoe_date = int(days.min(initial=NO_DAY))
        if shoe_date == NO_DAY:
            shoe_date = int(day_numbers(pa.array([day(shoe["opened_at"])], pa.date32()))[0])
        if self.by_row and not result.findings:
            round_day = {}
        else:  # (a round id its shoe repeats: the day of its last round, as a dict of them reads)
            round_day = {round_rows[i]["round_id"]: d for i, d in zip(order, days.tolist(), strict=True)}
        if result.findings:
            self.findings += result.findings
            self.finding_days.append(np.array([round_day.get(f.round_id, shoe_date) if f.round_id else shoe_date
                                               for f in result.findings], np.int64))
            on = np.zeros(len(result.findings), np.int64) if on_bet is None else np.asarray(on_bet, np.int64)
            self.finding_shoes.append(np.full(len(on), shoe_no, np.int64))
            self.finding_bets.append(np.where(on >= 0, np.asarray(mine, np.int64)[np.maximum(on, 0)] + 1, 0)
                                     if len(mine) else np.zeros(len(on), np.int64))
        if len(flagged):
            rows = ordered[round_index[flagged]]
            self.flagged.append((np.full(len(flagged), shoe_no, np.int64), np.asarray(mine, np.int64)[flagged], rows,
                                 self.days[rows] if self.by_row
                                 else np.array([round_day.get(rid, shoe_date) if rid else shoe_date
                                                for rid in (round_rows[i]["round_id"] for i in rows.tolist())],
                                               np.int64)))

    def plain_shoes(self, round_shoe: np.ndarray, rows: np.ndarray, shoe_ids: np.ndarray,
                    reports: list[RoundReport | None], bet_shoe: np.ndarray, bets: np.ndarray, bet_rounds: np.ndarray,
                    expected: np.ndarray, flagged: np.ndarray, findings: list[Finding], finding_shoes: np.ndarray,
                    finding_rounds: np.ndarray) -> None:
        """Many shoes' audits at once, where every bet is settled and every finding is a round's or a flagged bet's
        (audit.audit_plain_shoes): their rounds (`rows`, each's shoe `round_shoe`, its report: None where the
        kernel's replay reports it; `shoe_ids` every shoe's id by its number), their bets (`bets`, each's shoe,
        round row and credit), those whose findings tables() is given as columns (`flagged`: indexes among `bets`),
        and their rounds' findings (each's shoe and round row). (The findings' days by their rounds' rows: for a
        table whose round ids are distinct and not empty, by_row.)"""
        self.replays(round_shoe, rows, shoe_ids[round_shoe], reports)
        self.bets_of(bet_shoe, bets, bet_rounds, expected, np.ones(len(bets), bool), np.zeros(0, object))
        self.flagged.append((bet_shoe[flagged], bets[flagged], bet_rounds[flagged], self.days[bet_rounds[flagged]]))
        self.findings += findings
        self.finding_days.append(self.days[finding_rounds])
        self.finding_shoes.append(finding_shoes)
        self.finding_bets.append(np.zeros(len(findings), np.int64))

    def replays(self, shoe_no: np.ndarray, rows: np.ndarray, shoe_ids: np.ndarray, reports: list) -> None:
        self.replay_of.append(shoe_no)
        self.replay_rows.append(rows)
        self.replay_shoes.append(shoe_ids)
        self.reports += reports

    def bets_of(self, shoe_no: np.ndarray, bets: np.ndarray, round_rows: np.ndarray, expected: np.ndarray,
                settled: np.ndarray, unsettled: np.ndarray) -> None:
        for gathered, part in ((self.bet_of, shoe_no), (self.bets, bets), (self.round_rows, round_rows),
                               (self.expected, expected), (self.settled, settled), (self.unsettled, unsettled)):
            gathered.append(part)

    def tables(self, table_id: str, out_replays: str, replay_schema: pa.Schema, plain: pa.Table, bets: pa.Table,
               replay_columns: Callable[..., dict[str, pa.Array]],
               bet_findings: Callable[[pa.Table], tuple[pa.Table, np.ndarray]] | None = None
               ) -> dict[str, pa.Table]:
        """{the game's round replays, settlements, findings, quarantine}; `plain` the bets as plain_bets
        gave them (a column dictionary-encoded or not), `bets` as read; replay_columns(table_id, rounds, replay
        rows, their shoes, their reports) -> the replay table's columns but business_date; bet_findings(the flagged
        bets' bet_id, bet_type, account_id, round_id and shoe_id) -> their findings (FINDING_COLUMNS, bet by bet)
        and each one's bet (its flagged row)."""
        settled = self.bet_tables(table_id, plain, bets)
        order = _shoe_order(self.replay_of)
        rows = _joined(self.replay_rows, np.int64)[order]
        replays = {"business_date": taken(self.dates, rows),
                   **replay_columns(table_id, self.rounds, rows, _joined(self.replay_shoes, object)[order],
                                    [self.reports[i] for i in order.tolist()])}
        return {
            out_replays: pa.Table.from_arrays([replays[f.name] for f in replay_schema], schema=replay_schema),
            "settlements": settled["settlements"],
            "findings": self.findings_table(plain, bet_findings),
            "quarantine": settled["quarantine"],
        }

    def findings_table(self, plain: pa.Table, bet_findings) -> pa.Table:
        """The findings gathered and those of the flagged bets (see tables), each in its place: shoe by shoe, the
        shoe's and its rounds' first, then bet by bet."""
        found = [finding_columns(self.findings)]
        days, shoes, bets = ([NO_BETS, *parts] for parts in (self.finding_days, self.finding_shoes, self.finding_bets))
        if self.flagged:
            bet_rows, round_rows = (pa.array(np.concatenate([f[k] for f in self.flagged])) for k in (1, 2))
            texts = plain.select(["bet_id", "bet_type", "account_id"]).take(bet_rows)
            columns, on = bet_findings(texts.append_column("round_id", self.rounds["round_id"].take(round_rows))
                                       .append_column("shoe_id", self.rounds["shoe_id"].take(round_rows)))
            found.append(columns)
            days.append(np.concatenate([f[3] for f in self.flagged])[on])
            shoes.append(np.concatenate([f[0] for f in self.flagged])[on])
            bets.append(bet_rows.to_numpy()[on] + 1)
        every_day = np.concatenate(days)
        if not len(every_day):
            return FINDINGS.empty_table()
        order = np.lexsort((np.concatenate(bets), np.concatenate(shoes)))  # (stable: the order within a place kept)
        every_day = every_day[order]
        return dated_findings(pa.concat_tables(found).take(pa.array(order, pa.int64())),
                              pa.array(every_day, pa.int32(), mask=every_day == NO_DAY).cast(pa.date32()))

    def bet_tables(self, table_id: str, plain: pa.Table, bets: pa.Table) -> dict[str, pa.Table]:
        """{settlements, quarantine} of the bets gathered."""
        order, settled = _shoe_order(self.bet_of), _joined(self.settled, bool)
        expected, in_order = _joined(self.expected, np.int64)[order], settled[order]
        # (the reasons of the bets not settled, each put at its place in shoe order: no object column of every bet)
        unsettled = np.full(len(order), None, object)
        unsettled[~in_order] = _joined(self.unsettled, object)[np.searchsorted(np.flatnonzero(~settled),
                                                                               order[~in_order])]
        return bet_tables(table_id, plain, bets, self.rounds, _joined(self.bets, np.int64)[order],
                          _joined(self.round_rows, np.int64)[order], pa.array(expected, pa.int64(), mask=~in_order),
                          unsettled)


def _joined(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate([np.zeros(0, dtype), *parts]).astype(dtype, copy=False)


def _shoe_order(shoe_of: list[np.ndarray]) -> np.ndarray:
    """The gathered entries (each's shoe number) in shoe order, a shoe's in the order gathered."""
    return np.argsort(_joined(shoe_of, np.int64), kind="stable")


# its rounds in the warehouse's all_rounds view (audits/views/05_all_rounds.sql: its columns, in their order)
ALL_ROUNDS = """\
SELECT
    'blackjack' AS game, r.business_date, r.table_id, r.shoe_id, r.round_id, r.round_no, r.status, r.shoe_position,
    r.rounds_before, r.cut_card_round, r.after_cut,
    coalesce(b.recorded || '; ', '') || 'dealer: ' || coalesce(array_to_string(r.recorded_dealer_cards, ' '), '-')
        || ' (' || coalesce(CAST(r.recorded_dealer_total AS VARCHAR), '?') || ')' AS recorded_round,
    CASE WHEN r.expected_box_cards IS NULL THEN '-' ELSE coalesce(b.expected || '; ', '') || 'dealer: '
        || coalesce(array_to_string(r.expected_dealer_cards, ' '), '-') END AS expected_round,
    array_to_string(r.explanation, '; ') AS decisions,
    coalesce(array_to_string(r.finding_kinds, ','), '') AS finding_kinds,
    r.run_id
FROM blackjack_round_replays AS r, LATERAL (
    SELECT
        string_agg('box ' || CAST(box AS VARCHAR) || ': ' || coalesce(array_to_string(rec, ' '), '-'), '; ' ORDER BY i)
            AS recorded,
        string_agg('box ' || CAST(box AS VARCHAR) || ': ' || coalesce(array_to_string(exp, ' '), '-'), '; ' ORDER BY i)
            AS expected
    FROM (SELECT unnest(r.boxes) AS box, unnest(r.recorded_box_cards) AS rec, unnest(r.expected_box_cards) AS exp,
                 generate_subscripts(r.boxes, 1) AS i)
) AS b"""
