"""Arrow <-> engine: turn one shoe's canonical input rows into engine arguments and the engine's
results into output rows. No Beam here, so it is tested without a pipeline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting_columns import FINDING_COLUMNS, finding_columns
from engine.cards import CARD_CODES
from engine.findings import SEVERITY, Finding
from engine.games.baccarat.betting_audit import BetColumns
from engine.games.baccarat.dealing_audit import (
    DECISION_TEXTS,
    NO_SCORE,
    OUTCOMES,
    DealingColumns,
    RecordedRound,
    RoundColumns,
    ShoeColumns,
)
from engine.games.baccarat.ruleset import BET_CODES, MODES, load_ruleset
from engine.games.baccarat.shoe_audit import TableInfo, audit_shoes
from pipelines.arrow_columns import codes_in, integers, micros, one_chunk, plain, plain_table, utc_days
from pipelines.neighbours import quarantined_bets
from pipelines.records import record_texts
from schemas.contract import CARDS
from schemas.games.baccarat import REPLAYS
from schemas.outputs import FINDINGS, QUARANTINE, SETTLEMENTS


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> TableInfo:
    """A baccarat table's TableInfo with its ruleset (loaded once per process) and limits."""
    return TableInfo(row["table_id"], load_ruleset(row["ruleset"]), row["currency"], row["table_max"], limits)


def shoe_days(shoes: pa.Table, rounds: pa.Table) -> pa.Array:
    """Each shoe's business day (a date a row of `shoes`): the business day of its first round among `rounds`
    (the UTC date its betting opened), its opening date where it has none. It is the day of the shoe's group
    (pipelines.transforms._ShoeGroupIndex), so a shoe's own findings are dated with its rounds: a shoe opened
    at 23:59 for rounds from 00:01 is of the next day, and a run does not claim the day before."""
    first = pa.table({"shoe_id": plain(rounds["shoe_id"]).cast(pa.string()),
                      "day": utc_days(rounds["betting_opened_at"])}).group_by("shoe_id").aggregate([("day", "min")])
    at = pc.index_in(plain(shoes["shoe_id"]).cast(pa.string()), first["shoe_id"])
    days = pc.coalesce(first["day_min"].take(at), utc_days(shoes["opened_at"]))
    return one_chunk(days)


def audit_shoes_tables(
    table: TableInfo, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *, compact: bool = False,
    neighbours: pa.Table | None = None,
) -> tuple[pa.Table, pa.Table, pa.Table, pa.Table]:
    """Audit many shoes of one table at once (the same results as engine.games.baccarat.shoe_audit.audit_shoe
    shoe by shoe, in one pass of the engine: audit_shoes). Every shoe_id of `shoes` must be
    there once, every round's shoe among them, every bet's round among the rounds; a bet matches its
    round by `_shoe_id` too when it has that column (round ids repeated across shoes). The rounds'
    `round_id` is plain strings; the bets' may be dictionary-encoded, as the pipeline reads them.

    `compact`: the settlements may keep repeated strings dictionary-encoded (cheaper to shuffle; the
    output writer casts them to the schema's plain strings). `neighbours`: the quarantined bets on these
    rounds (pipelines/neighbours.py), seen by the rules on an account's other bets, never settled."""
    shoe_of_round = pc.index_in(rounds["shoe_id"], shoes["shoe_id"])
    if shoe_of_round.null_count:
        raise ValueError("audit_shoes_tables: a round's shoe is not among the shoes")
    return _audit(table, shoes, rounds, shoe_of_round.to_numpy(zero_copy_only=False).astype(np.int64), bets,
                  compact, neighbours)


_CARD_CODES = pa.array(CARD_CODES, pa.string())
_DECISIONS = pa.array(DECISION_TEXTS, pa.string())
_OUTCOMES = pa.array(OUTCOMES, pa.string())
_BET_CODES = pa.array(BET_CODES, pa.string())
_MODES = pa.array(MODES, pa.string())


class _Strings:
    """A string column the engine reads only where it indexes it (the texts of flagged bets): turning
    every bet's id into a Python string would cost more than auditing the bet. Indexed by an int it
    gives that string; by an array of rows, another _Strings (`tolist()` gives the strings)."""

    def __init__(self, array: pa.Array):
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, rows):
        if isinstance(rows, int | np.integer):
            return self.array[int(rows)].as_py()
        return _Strings(self.array.take(pa.array(np.asarray(rows, dtype=np.int64))))

    def tolist(self) -> list:
        # (a dictionary array's to_pylist builds a scalar per row: ~15x slower than its plain values')
        return plain(self.array).to_pylist()


def _dictionary(indices: np.ndarray, values: pa.Array) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(indices.astype(np.int32)), values)


def _card_lists(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A list<string> column of cards -> (card indices of every list, one after the other; offsets);
    a null list counts as empty."""
    lists = one_chunk(column)
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return codes_in(lists.flatten(), _CARD_CODES, np.int16), offsets


def _const(value: str, n: int) -> pa.Array:
    return pa.array([value], pa.string()).take(pa.array(np.zeros(n, dtype=np.int64)))


def _hands(cards: np.ndarray) -> pa.Array:
    """(rounds, 3) card indices (-1 after the last card) -> list<string> (no card: an empty list)."""
    present = cards >= 0
    offsets = np.concatenate([[0], np.cumsum(present.sum(axis=1))]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), _CARD_CODES.take(pa.array(cards[present].astype(np.int64))),
                                    type=CARDS)


def _nullable(values: np.ndarray, none: int, type_: pa.DataType) -> pa.Array:
    return pa.array(values, type=type_, mask=values == none)


def _audit(table: TableInfo, shoes: pa.Table, rounds: pa.Table, shoe_of_round: np.ndarray, bets: pa.Table,
           compact: bool = False, neighbours: pa.Table | None = None):
    shoes = shoes.combine_chunks()
    # rounds sorted by shoe, round_no, round_id (the order audit_dealing replays them in)
    order = pc.sort_indices(pa.table({"s": shoe_of_round, "n": rounds["round_no"], "r": rounds["round_id"]}),
                            sort_keys=[("s", "ascending"), ("n", "ascending"), ("r", "ascending")])
    rounds = rounds.take(order).combine_chunks()
    round_shoe = shoe_of_round[order.to_numpy()]
    R = rounds.num_rows

    cards = shoes["cards"]
    shoe_codes, shoe_offsets = _card_lists(cards)
    shoe_ids = shoes["shoe_id"].to_numpy(zero_copy_only=False)
    shoe_cols = ShoeColumns(shoe_ids, integers(shoes["decks"], 0), integers(shoes["cut_index"], -1), shoe_codes,
                            shoe_offsets, lambda s: tuple(cards[s].as_py() or ()))
    round_ids = rounds["round_id"].to_numpy(zero_copy_only=False)
    p_codes, p_offsets = _card_lists(rounds["player_cards"])
    b_codes, b_offsets = _card_lists(rounds["banker_cards"])
    status = rounds["status"]

    # Rounds as the scalar checks take them, built only for the flagged rounds, taken together.
    fields = [one_chunk(rounds[c]) for c in ("round_id", "round_no", "status", "player_cards", "banker_cards",
                                          "player_score", "banker_score", "outcome")]

    def recorded(ks) -> list[RecordedRound]:
        rows = pa.array(np.asarray(ks, dtype=np.int64), pa.int64())
        return [RecordedRound(round_id, round_no, status, tuple(player or ()), tuple(banker or ()), player_score,
                              banker_score, outcome)
                for round_id, round_no, status, player, banker, player_score, banker_score, outcome
                in zip(*(f.take(rows).to_pylist() for f in fields), strict=True)]

    round_cols = RoundColumns(
        round_shoe, round_ids, integers(rounds["round_no"], 0),
        pc.fill_null(pc.equal(status, "settled"), False).to_numpy(zero_copy_only=False),
        pc.fill_null(pc.equal(status, "cancelled"), False).to_numpy(zero_copy_only=False),
        p_codes, p_offsets, b_codes, b_offsets, integers(rounds["player_score"], NO_SCORE),
        integers(rounds["banker_score"], NO_SCORE), codes_in(rounds["outcome"], _OUTCOMES), recorded)

    # bets -> their round (by round_id; by shoe and round_id where round ids repeat across shoes)
    bets = bets.combine_chunks()
    if "_shoe_id" in bets.column_names and pc.count_distinct(rounds["round_id"]).as_py() < R:
        sep = "\x1f"
        keys = pc.binary_join_element_wise(pa.array(shoe_ids[round_shoe], pa.string()), rounds["round_id"], sep)
        ri = codes_in(pc.binary_join_element_wise(plain(bets["_shoe_id"]), plain(bets["round_id"]), sep), keys)
    else:  # (the bets' round ids arrive dictionary-encoded: each distinct id is looked up once)
        ri = codes_in(bets["round_id"], one_chunk(rounds["round_id"]))
    if (ri < 0).any():
        raise ValueError("audit_shoes_tables: a bet's round is not among the rounds")
    accounts = one_chunk(bets["account_id"]).dictionary_encode()
    rank = np.empty(len(accounts.dictionary), dtype=np.int64)
    rank[pc.sort_indices(accounts.dictionary).to_numpy()] = np.arange(len(accounts.dictionary))
    bet_cols = BetColumns(
        bet_id=_Strings(one_chunk(bets["bet_id"])), round_index=ri, account_id=_Strings(one_chunk(bets["account_id"])),
        placed_at=micros(bets["placed_at"]), bet_type=_Strings(one_chunk(bets["bet_type"])),
        mode=_Strings(one_chunk(bets["mode"])), stake=integers(bets["stake"], 0), paid=integers(bets["paid"], 0),
        bet_type_code=codes_in(bets["bet_type"], _BET_CODES), mode_code=codes_in(bets["mode"], _MODES),
        account_code=rank[accounts.indices.to_numpy(zero_copy_only=False).astype(np.int64)],
    )
    result = audit_shoes(table, shoe_cols, round_cols, micros(rounds["betting_closed_at"]), bet_cols,
                         _quarantined(neighbours, shoe_ids[round_shoe], round_ids))

    round_dates = utc_days(rounds["betting_opened_at"])
    shoe_dates = shoe_days(shoes, rounds)
    shoe_id_of_round = pa.array(shoe_ids, pa.string()).take(pa.array(round_shoe))
    return (
        _replays(table.table_id, rounds, shoe_id_of_round, result.dealing, round_dates),
        _settlements(table, rounds, shoe_ids, round_shoe, bets, ri, result, round_dates, compact),
        _findings(table.table_id, result, ri, bets, round_ids, shoe_id_of_round, round_dates, shoe_dates),
        _unsettleable(bets, result, round_dates, ri),
    )


def _quarantined(neighbours: pa.Table | None, shoe_of_round: np.ndarray, round_ids: np.ndarray) -> list:
    """The quarantined bets on these rounds (pipelines/neighbours.py), each on its round's index, shoe by shoe."""
    if neighbours is None or not neighbours.num_rows:
        return []
    by_shoe: dict[str, dict[str, int]] = {}
    for k, (shoe_id, round_id) in enumerate(zip(shoe_of_round.tolist(), round_ids.tolist(), strict=True)):
        by_shoe.setdefault(shoe_id, {})[round_id] = k
    return [q for shoe_id, index in by_shoe.items() for q in quarantined_bets(neighbours, index, shoe_id)]


def _replays(table_id: str, rounds: pa.Table, shoe_ids: pa.Array, d: DealingColumns, round_dates: pa.Array
             ) -> pa.Table:
    R = rounds.num_rows
    empty = pa.scalar([], CARDS)
    decided = d.decisions >= 0
    return pa.Table.from_arrays([
        round_dates, _const(table_id, R), shoe_ids, rounds["round_id"], rounds["round_no"], rounds["status"],
        _nullable(d.shoe_position, -1, pa.int32()), pa.array(d.rounds_before, pa.int32()),
        _hands(d.expected_player), _hands(d.expected_banker),
        _nullable(d.expected_player_score, -1, pa.int8()), _nullable(d.expected_banker_score, -1, pa.int8()),
        _OUTCOMES.take(pa.array(d.expected_outcome.astype(np.int64), mask=d.expected_outcome < 0)),
        pc.fill_null(rounds["player_cards"], empty), pc.fill_null(rounds["banker_cards"], empty),
        rounds["player_score"], rounds["banker_score"], rounds["outcome"],
        pa.array(d.cut_card_round, pa.bool_()), pa.array(d.after_cut, pa.bool_()),
        pa.ListArray.from_arrays(pa.array(np.concatenate([[0], np.cumsum(decided.sum(axis=1))]).astype(np.int32)),
                                 _DECISIONS.take(pa.array(d.decisions[decided].astype(np.int64)))),
        _finding_kinds(d.finding_kinds, R),
    ], schema=REPLAYS.schema)


def _finding_kinds(kinds: dict[int, list[str]], rounds: int) -> pa.Array:
    """Each round's finding kinds as a list<string> column (an empty list for a round without any)."""
    flagged = sorted(kinds)
    counts = np.zeros(rounds, dtype=np.int32)
    counts[flagged] = [len(kinds[k]) for k in flagged]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(
        np.array([kind for k in flagged for kind in kinds[k]], dtype=object), pa.string()))


def _settlements(table, rounds, shoe_ids, round_shoe, bets, ri, result, round_dates, compact) -> pa.Table:
    keep = np.flatnonzero(result.settleable)
    b = bets if len(keep) == bets.num_rows else bets.take(pa.array(keep))
    r = ri[keep]
    idx = pa.array(r)
    expected = result.expected[keep]
    if compact:  # the table, shoe and status of every bet as dictionaries (see audit_shoes_tables)
        status = one_chunk(rounds["status"]).dictionary_encode()
        per_bet = [_dictionary(np.zeros(len(keep)), pa.array([table.table_id], pa.string())),
                   _dictionary(round_shoe[r], pa.array(shoe_ids, pa.string())), b["round_id"],
                   rounds["round_no"].take(idx), _dictionary(status.indices.to_numpy(zero_copy_only=False)[r],
                                                             status.dictionary)]
    else:
        per_bet = [_const(table.table_id, len(keep)), pa.array(shoe_ids, pa.string()).take(pa.array(round_shoe[r])),
                   b["round_id"], rounds["round_no"].take(idx), rounds["status"].take(idx)]
    columns = [round_dates.take(idx), *per_bet, b["bet_id"], b["account_id"], b["placed_at"], b["bet_type"], b["mode"],
               b["currency"], b["stake"], b["paid"], pa.array(expected, pa.int64()),
               pa.array(integers(b["paid"], 0) - expected, pa.int64()), b["_source_file"], b["_source_row"],
               pa.nulls(len(keep), pa.int64())]  # added_stake: a baccarat bet adds none
    if compact:
        return pa.Table.from_arrays(columns, names=SETTLEMENTS.names)
    return pa.Table.from_arrays([plain(c) for c in columns], schema=SETTLEMENTS)


def _findings(table_id, result, ri, bets, round_ids, shoe_ids, round_dates, shoe_dates) -> pa.Table:
    """The findings table: the dealing findings (few Finding objects), then the bet findings (columns)."""
    dealing, found = result.dealing, result.bet_findings
    rows = np.asarray(found.row, dtype=np.int64)
    bet_rounds = ri[rows]
    day = pc.cast(round_dates, pa.int32()).to_numpy(zero_copy_only=False)
    shoe_day = pc.cast(shoe_dates, pa.int32()).to_numpy(zero_copy_only=False)
    k = dealing.finding_round
    dates = np.concatenate([np.where(k >= 0, day[np.maximum(k, 0)] if len(day) else 0, shoe_day[dealing.finding_shoe]),
                            day[bet_rounds]]).astype(np.int32)
    take = pa.array(rows)
    on_bets = pa.Table.from_arrays([  # (the bets' ids as they were read: no Python string per row)
        pa.array(found.kind, pa.string()), _const(table_id, len(rows)),
        one_chunk(plain(shoe_ids.take(pa.array(bet_rounds)))), pa.array(round_ids[bet_rounds].tolist(), pa.string()),
        one_chunk(plain(bets["bet_id"].take(take))),
        *(pa.array(texts, pa.string()) for texts in (found.expected, found.recorded, found.message)),
        one_chunk(plain(bets["account_id"].take(take)))], schema=FINDING_COLUMNS)
    return dated_findings(pa.concat_tables([finding_columns(dealing.findings), on_bets]),
                          pa.array(dates, pa.int32()).cast(pa.date32()))


def _unsettleable(bets, result, round_dates, ri) -> pa.Table:
    rows = np.flatnonzero(~result.settleable)
    if rows.size == 0:
        return QUARANTINE.empty_table()
    b = plain_table(bets.take(pa.array(rows)))
    return quarantine_table(b, "bets", "the bet's round is recorded as settled without two complete hands",
                            round_dates.take(pa.array(ri[rows])), "bet_id")


def findings_table(findings: Sequence[Finding], round_dates: Mapping[str, object], default_date,
                   dates: Sequence | None = None) -> pa.Table:
    """The findings' table, each dated by its round's date (round_dated), or by `dates`, one a finding, where
    given."""
    found = finding_columns(findings)
    return dated_findings(found, round_dated(found, round_dates, default_date) if dates is None else dates)


def round_dated(found: pa.Table, round_dates: Mapping[str, object], default_date) -> list:
    """The date of each finding of `found` (FINDING_COLUMNS): its round's, the default where it names no round
    or one not in `round_dates`."""
    return [round_dates.get(r, default_date) if r else default_date for r in found["round_id"].to_pylist()]


def dated_findings(found: pa.Table, dates: Sequence | pa.Array) -> pa.Table:
    """The findings table of findings given as columns (FINDING_COLUMNS), each on its business date (`dates`,
    one a finding): the one builder of the findings output's rows."""
    kinds = found["kind"].combine_chunks().dictionary_encode()
    severity = pa.array([SEVERITY[k] for k in kinds.dictionary.to_pylist()], pa.string()).take(kinds.indices)
    dates = dates if isinstance(dates, pa.Array) else pa.array(dates, pa.date32())
    columns = {"business_date": dates, "severity": severity}
    return pa.Table.from_arrays([columns[f.name] if f.name in columns else found[f.name] for f in FINDINGS],
                                schema=FINDINGS)


# the id column of each input table, as the quarantine's record_id
ID_COLUMN = {"tables": "table_id", "limits": "table_id", "shoes": "shoe_id", "rounds": "round_id", "bets": "bet_id"}


def rejected_rows(bad: pa.Table, source_table: str) -> pa.Table:
    """Quarantine rows for input rows that failed the contract's row rules (`bad` carries their `reason`),
    dated by the row's own timestamp where it has one."""
    return quarantine_table(bad, source_table, bad["reason"], _row_dates(bad), ID_COLUMN[source_table])


def _row_dates(rows: pa.Table) -> pa.Array | None:
    for col in ("betting_opened_at", "placed_at", "opened_at"):
        if col in rows.column_names:
            return utc_days(rows[col])
    return None


def quarantine_table(rows: pa.Table, source_table: str, reason: str | pa.Array, dates, id_column: str | None
                     ) -> pa.Table:
    """Quarantine rows with the reason; `rows` must carry _source_file/_source_row."""
    n = rows.num_rows
    records = record_texts(rows.select([c for c in rows.column_names if not c.startswith("_") and c != "reason"]))
    reasons = reason if isinstance(reason, pa.Array | pa.ChunkedArray) else pa.repeat(pa.scalar(reason, pa.string()), n)
    ids = (pc.cast(rows[id_column], pa.string()) if id_column and id_column in rows.column_names
           else pa.nulls(n, pa.string()))
    return pa.table({
        "business_date": dates if dates is not None else pa.nulls(n, pa.date32()),
        "source_table": pa.repeat(pa.scalar(source_table, pa.string()), n),
        "source_file": rows["_source_file"], "source_row": rows["_source_row"],
        "reason": reasons, "record_id": ids, "record": records,
    }, schema=QUARANTINE)
