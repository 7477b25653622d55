"""Arrow <-> the casino stud engine: one table-day's decks, rounds and bets into
engine.games.casino_stud.audit, its results back as output tables. No Beam here (tested without a pipeline).

A stud round is dealt from a fresh deck, its own `shoes` row (docs/casino-stud.md § Recorded data), so a
table-day's group holds a deck per round. Unlike the other card games the rounds are not audited deck by
deck: the jackpot pools carry from round to round, so the engine takes every round of the table-day at
once, in betting_closed_at order (then round_id), each with its own deck, and chains the ledger across
them. Besides its round replays the game has one output of its own, the jackpot ledger (EXTRA_OUTPUTS).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from engine.games.casino_stud.audit import (
    LedgerRow,
    RecordedBet,
    RecordedRound,
    RoundReport,
    audit_table_rounds,
)
from engine.games.casino_stud.rules import CasinoStudRules, load_casino_stud_rules
from pipelines.convert import findings_table
from pipelines.games.rows import (
    BET_COLUMNS,
    NO_BETS,
    GameTable,
    bet_tables,
    day,
    gc_paused,
    micros,
    plain_bets,
    python_columns,
    table_facts,
)
from schemas.outputs import CASINO_STUD_JACKPOT_LEDGER, CASINO_STUD_ROUND_REPLAYS, FINDINGS

OUT_REPLAYS = "casino_stud_round_replays"
OUT_LEDGER = "casino_stud_jackpot_ledger"
EXTRA_OUTPUTS = (OUT_LEDGER,)

_ROUND_COLUMNS = ["round_id", "shoe_id", "round_no", "status", "betting_opened_at", "betting_closed_at",
                  "dealer_cards", "boxes", "box_cards", "box_actions", "box_hands", "dealer_hand", "jackpot_before",
                  "jackpot_after", "next_pool_before", "next_pool_after"]
# the bet columns the engine reads, as Python lists (placed_at as integer microseconds, apart)
_ENGINE_BET_COLUMNS = ["bet_id", "account_id", "bet_type", "seat", "stake", "added_stake", "paid", "round_id",
                       "_shoe_id"]
_JACKPOT = "JACKPOT"
# findings on a jackpot bet that refund it: it is settled, but not on a hand, and feeds no pool
_REFUNDING = ("JACKPOT_WITHOUT_ANTE", "BET_ON_EMPTY_BOX", "BET_TYPE_NOT_OFFERED")


@dataclass(frozen=True)
class CasinoStudTable(GameTable):
    game = "casino_stud"
    rules: CasinoStudRules


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> CasinoStudTable:
    return CasinoStudTable(table_facts(row, limits), load_casino_stud_rules(row["ruleset"]))


@gc_paused
def audit_tables(table: CasinoStudTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False) -> dict[str, pa.Table]:
    """Audit one casino stud table-day: {casino_stud_round_replays, casino_stud_jackpot_ledger, settlements,
    findings, quarantine}. Every round's deck is among `shoes`, every bet's round among `rounds` (matched by
    `_shoe_id` too where the bets carry it). (`compact` is the baccarat adaptor's; these tables are plain.)"""
    decks = {s["shoe_id"]: s for s in shoes.select(["shoe_id", "cards", "opened_at"]).to_pylist()}
    round_rows = _with_columns(rounds, _ROUND_COLUMNS).to_pylist()
    closed = micros(rounds["betting_closed_at"])
    order = sorted(range(len(round_rows)), key=lambda i: (closed[i] if closed[i] is not None else -1,
                                                           round_rows[i]["round_id"], round_rows[i]["shoe_id"]))
    plain = plain_bets(bets, [*BET_COLUMNS, "added_stake"])
    bet = python_columns(plain, _ENGINE_BET_COLUMNS)
    placed = micros(plain["placed_at"])

    # the rounds in the engine's order, and where each bet's round is among them
    index_of: dict[tuple[str | None, str], int] = {}
    for k, i in enumerate(order):
        r = round_rows[i]
        index_of[(r["shoe_id"], r["round_id"])] = k
        index_of.setdefault((None, r["round_id"]), k)  # a bet without _shoe_id: its round id alone
    recorded = [_recorded_round(round_rows[i], closed[i], decks.get(round_rows[i]["shoe_id"])) for i in order]
    mine, engine_bets = [], []
    ids, accounts, types, seats, stakes, added, paid = (bet[c] for c in _ENGINE_BET_COLUMNS[:7])
    for b, (round_id, shoe_id) in enumerate(zip(bet["round_id"], bet["_shoe_id"], strict=True)):
        k = index_of.get((shoe_id, round_id), index_of.get((None, round_id)))
        if k is None:  # (the pipeline gives a group only the bets of its rounds)
            k = len(order)  # not one of the rounds: the engine leaves it unsettled with the reason
        mine.append(b)
        engine_bets.append(RecordedBet(ids[b], k, accounts[b], types[b], seats[b], stakes[b], added[b], paid[b],
                                       placed[b]))
    result = audit_table_rounds(table.rules, table.facts, recorded, engine_bets)

    dates = [day(round_rows[i]["betting_opened_at"]) for i in order]
    # each bet's round as its row in `rounds` (-1: not one of them)
    row_of = np.append(np.asarray(order, np.int64), -1)
    bet_rows = row_of[np.asarray([bet.round_index for bet in engine_bets], np.int64)] if engine_bets else NO_BETS
    replays = [_replay_row(table, round_rows[order[rep.round_index]], rep, dates[rep.round_index])
               for rep in result.rounds]
    refunded = {f.bet_id for f in result.findings if f.kind in _REFUNDING}
    stakes = _jackpot_stakes(recorded, engine_bets, result.expected, refunded)
    ledger = [_ledger_row(table, round_rows[order[row.round_index]], row, dates[row.round_index],
                          stakes.get(row.round_index, 0)) for row in result.ledger]
    return {
        OUT_REPLAYS: pa.Table.from_pylist(replays, CASINO_STUD_ROUND_REPLAYS),
        OUT_LEDGER: pa.Table.from_pylist(ledger, CASINO_STUD_JACKPOT_LEDGER),
        **bet_tables(table.table_id, plain, bets, rounds, np.asarray(mine, np.int64), bet_rows,
                     pa.array(result.expected, pa.int64()), result.unsettled),
        "findings": _findings(result.findings, round_rows, order, dates, decks),
    }


def _with_columns(rounds: pa.Table, columns: list[str]) -> pa.Table:
    """The round columns read; a stud column the files do not have is all null (the audit judges it)."""
    return pa.table({c: rounds[c] if c in rounds.column_names else pa.nulls(rounds.num_rows) for c in columns})


def _recorded_round(r: dict, closed_us: int | None, deck: dict | None) -> RecordedRound:
    return RecordedRound(
        r["round_id"], r["round_no"], r["status"], closed_us or 0, r["shoe_id"],
        tuple((deck or {}).get("cards") or ()), tuple(r["boxes"] or ()),
        tuple(tuple(c or ()) for c in r["box_cards"] or ()), tuple(a or "" for a in r["box_actions"] or ()),
        tuple(r["dealer_cards"] or ()), tuple(r["box_hands"] or ()), r["dealer_hand"], r["jackpot_before"],
        r["jackpot_after"], r["next_pool_before"], r["next_pool_after"])


def _jackpot_stakes(rounds: list[RecordedRound], bets: list[RecordedBet], expected: list[int | None],
                    refunded: set[str]) -> dict[int, int]:
    """round index -> the stakes of its jackpot bets settled on a hand (a settled round's, not refunded): what
    the ledger's contributions and prizes come from."""
    stakes: dict[int, int] = {}
    for bet, credit in zip(bets, expected, strict=True):
        if (bet.bet_type == _JACKPOT and credit is not None and bet.bet_id not in refunded
                and rounds[bet.round_index].status == "settled"):
            stakes[bet.round_index] = stakes.get(bet.round_index, 0) + bet.stake
    return stakes


def _findings(found, round_rows: list[dict], order: list[int], dates: list, decks: dict) -> pa.Table:
    """The findings dated by their round, a deck's own (SHOE_COMPOSITION, no round) by the deck's opening."""
    if not found:
        return FINDINGS.empty_table()
    round_dates = {round_rows[i]["round_id"]: d for i, d in zip(order, dates, strict=True)}
    by_deck: dict[object, list] = {}
    for f in found:
        if f.round_id is None:
            deck = decks.get(f.shoe_id)
            by_deck.setdefault(day(deck["opened_at"]) if deck else None, []).append(f)
        else:
            by_deck.setdefault(round_dates.get(f.round_id), []).append(f)
    return pa.concat_tables([findings_table(fs, round_dates, d) for d, fs in by_deck.items()])


def _pool(pools, name: str) -> int | None:
    return getattr(pools, name) if pools is not None else None


def _replay_row(table: CasinoStudTable, r: dict, rep: RoundReport, business_date) -> dict:
    return {
        "business_date": business_date, "table_id": table.table_id, "shoe_id": r["shoe_id"],
        "round_id": r["round_id"], "round_no": r["round_no"], "status": r["status"], "boxes": r["boxes"],
        "box_actions": r["box_actions"],
        "expected_box_cards": [list(c) for c in rep.expected_box_cards] if rep.expected_box_cards is not None
        else None,
        "recorded_box_cards": r["box_cards"],
        "expected_dealer_cards": list(rep.expected_dealer_cards) if rep.expected_dealer_cards is not None else None,
        "recorded_dealer_cards": r["dealer_cards"],
        "box_ranks": list(rep.box_ranks), "recorded_box_hands": r["box_hands"],
        "dealer_rank": rep.dealer_rank, "recorded_dealer_hand": r["dealer_hand"],
        "dealer_qualifies": rep.dealer_qualifies,
        "expected_jackpot_before": _pool(rep.pools_before, "jackpot"), "recorded_jackpot_before": r["jackpot_before"],
        "expected_jackpot_after": _pool(rep.pools_after, "jackpot"), "recorded_jackpot_after": r["jackpot_after"],
        "expected_next_pool_before": _pool(rep.pools_before, "next_pool"),
        "recorded_next_pool_before": r["next_pool_before"],
        "expected_next_pool_after": _pool(rep.pools_after, "next_pool"),
        "recorded_next_pool_after": r["next_pool_after"],
        "explanation": list(rep.explanation), "finding_kinds": list(rep.finding_kinds),
    }


def _ledger_row(table: CasinoStudTable, r: dict, row: LedgerRow, business_date, stakes: int) -> dict:
    return {
        "business_date": business_date, "table_id": table.table_id, "shoe_id": r["shoe_id"],
        "round_id": r["round_id"], "betting_closed_at": r["betting_closed_at"], "currency": table.currency,
        "jackpot_before": row.jackpot_before, "next_pool_before": row.next_pool_before,
        "jackpot_bets": row.jackpot_bets, "stakes": stakes, "to_jackpot": row.to_jackpot,
        "to_next_pool": row.to_next_pool, "to_house": row.to_house, "prizes_from_jackpot": row.prizes_from_jackpot,
        "prizes_from_next_pool": row.prizes_from_next_pool, "prizes_by_house": row.prizes_from_house,
        "jackpot_reset": row.reset,
        "expected_jackpot_after": row.jackpot_after_expected, "recorded_jackpot_after": row.jackpot_after,
        "expected_next_pool_after": row.next_pool_after_expected, "recorded_next_pool_after": row.next_pool_after,
    }
