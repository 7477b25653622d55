"""Arrow <-> the blackjack engine: one table's shoes, rounds and bets into engine.games.blackjack.audit,
its results back as output tables. No Beam here (tested without a pipeline).

Blackjack rounds are few and rich (every box, every decision), so the engine takes Python objects: a
round's lists are converted once per round, not once per bet. The bets, many a round, go in as columns
(engine ShoeBets): no Python object a bet.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from engine.games.blackjack.audit import (
    RecordedRound,
    RoundReport,
    ShoeBets,
    ShoeFacts,
    audit_shoe,
)
from engine.games.blackjack.rules import BlackjackRules, load_blackjack_rules
from engine.games.blackjack.strategy import BasicStrategyChart, load_basic_strategy
from pipelines.games.rows import (
    BET_COLUMNS,
    NO_BETS,
    GameTable,
    Gathered,
    bets_by_shoe,
    box_instants,
    gc_paused,
    instants,
    micros,
    plain_bets,
    positions,
    python_columns,
    rounds_by_shoe,
    table_facts,
)
from pipelines.neighbours import quarantined_bets
from schemas.outputs import BLACKJACK_ROUND_REPLAYS

OUT_REPLAYS = "blackjack_round_replays"


@dataclass(frozen=True)
class BlackjackTable(GameTable):
    game = "blackjack"
    rules: BlackjackRules
    chart: BasicStrategyChart


@cache
def _chart(name: str) -> BasicStrategyChart:
    return load_basic_strategy(name)


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> BlackjackTable:
    rules = load_blackjack_rules(row["ruleset"])
    return BlackjackTable(table_facts(row, limits), rules, _chart(rules.basic_strategy))


@gc_paused
def audit_tables(table: BlackjackTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None) -> dict[str, pa.Table]:
    """Audit the shoes of one blackjack table: {blackjack_round_replays, settlements, findings, quarantine}.
    Every round's shoe is among `shoes`, every bet's round among `rounds` (matched by `_shoe_id` too
    where the bets carry it); `neighbours`: the quarantined bets on these rounds (pipelines/neighbours.py).
    (`compact` is the baccarat adaptor's; these tables are plain already.)"""
    shoe_rows = shoes.select(["shoe_id", "decks", "cards", "cut_index", "opened_at"]).to_pylist()
    round_rows = rounds.select(["round_id", "shoe_id", "round_no", "status", "betting_opened_at", "betting_closed_at",
                                "dealer_cards", "boxes", "box_cards", "box_actions", "box_auto_played"]).to_pylist()
    plain = plain_bets(bets, [*BET_COLUMNS, "added_stake"])
    bet = {c: np.asarray(values, object) for c, values in python_columns(plain, _ENGINE_BET_COLUMNS).items()}
    placed, closed = np.asarray(micros(plain["placed_at"]), object), micros(rounds["betting_closed_at"])
    times, revealed = box_instants(rounds, "box_action_times"), instants(rounds, "dealer_revealed_at")
    by_shoe, bets_of_shoe = rounds_by_shoe(round_rows), bets_by_shoe(rounds, plain["round_id"], plain["_shoe_id"])
    gathered = Gathered(rounds)
    for shoe in shoe_rows:
        order = by_shoe.get(shoe["shoe_id"], [])
        position = positions(order, round_rows)
        recorded = [_recorded_round(round_rows[i], closed[i], times[i], revealed[i]) for i in order]
        mine = bets_of_shoe.get(shoe["shoe_id"], NO_BETS)
        engine_bets = _shoe_bets(bet, mine, position, placed)
        facts = ShoeFacts(shoe["shoe_id"], shoe["decks"], tuple(shoe["cards"] or ()), shoe["cut_index"])
        result = audit_shoe(table.rules, table.chart, table.facts, facts, recorded, engine_bets,
                            quarantined=quarantined_bets(neighbours, position, shoe["shoe_id"]))
        at_round = [_AtRound(k) for k in range(len(order))]
        gathered.shoe(shoe, order, round_rows, mine, [at_round[k] for k in engine_bets.round_index], result,
                      lambda r, rep, d, shoe_id=shoe["shoe_id"]: _replay_row(table, shoe_id, r, rep, d))
    return gathered.tables(table.table_id, OUT_REPLAYS, BLACKJACK_ROUND_REPLAYS, plain, bets)


def _recorded_round(r: dict, closed_us: int | None, times: list | None, revealed_us: int | None
                    ) -> RecordedRound:
    return RecordedRound(
        r["round_id"], r["round_no"], r["status"], closed_us or 0, tuple(r["dealer_cards"] or ()),
        tuple(r["boxes"] or ()), tuple(tuple(c or ()) for c in r["box_cards"] or ()),
        tuple(a or "" for a in r["box_actions"] or ()),
        # box_auto_played is optional: not recorded means no box was auto-played
        tuple(bool(a) for a in r["box_auto_played"]) if r["box_auto_played"] is not None
        else (False,) * len(r["boxes"] or ()),
        times, revealed_us)


# the bet columns the engine reads (placed_at as integer microseconds, apart)
_ENGINE_BET_COLUMNS = ["bet_id", "round_id", "account_id", "bet_type", "seat", "stake", "added_stake", "paid"]


class _AtRound(NamedTuple):
    """A bet's round as Gathered.shoe reads it (round_index), without the bet."""

    round_index: int


def _shoe_bets(bet: dict[str, np.ndarray], mine: np.ndarray, position: dict[str, int], placed_us: np.ndarray
               ) -> ShoeBets:
    """The engine's bets `mine` (indexes into the `bet` columns) as columns, each on its round's index in the
    shoe (numpy object arrays: each value the Python value it was read as)."""
    return ShoeBets(bet["bet_id"][mine], [position[r] for r in bet["round_id"][mine].tolist()],
                    bet["account_id"][mine], bet["bet_type"][mine], bet["seat"][mine], bet["stake"][mine],
                    bet["added_stake"][mine], bet["paid"][mine], placed_us[mine])


def _replay_row(table: BlackjackTable, shoe_id: str, r: dict, rep: RoundReport, day) -> dict:
    return {
        "business_date": day, "table_id": table.table_id, "shoe_id": shoe_id, "round_id": r["round_id"],
        "round_no": r["round_no"], "status": r["status"], "shoe_position": rep.shoe_position,
        "rounds_before": rep.rounds_before, "boxes": r["boxes"], "box_actions": r["box_actions"],
        "expected_box_cards": rep.expected_box_cards, "recorded_box_cards": r["box_cards"],
        "expected_dealer_cards": rep.expected_dealer_cards, "recorded_dealer_cards": r["dealer_cards"],
        "recorded_dealer_total": rep.dealer_total, "cut_card_round": rep.cut_card_round,
        "after_cut": rep.after_cut, "explanation": list(rep.explanation), "finding_kinds": list(rep.finding_kinds),
    }
