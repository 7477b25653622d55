"""Arrow <-> the blackjack engine: one table's shoes, rounds and bets into engine.games.blackjack.audit,
its results back as output tables. No Beam here (tested without a pipeline).

Blackjack rounds are few and rich (every box, every decision): a round goes in as a RecordedRound, which the
engine turns into the columns of its compiled kernels. The bets, many a round, go in as numpy columns
(engine ShoeBets); the results come back as columns (rows.Gathered).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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
    InShoe,
    bets_by_shoe,
    box_instants,
    instants,
    micros,
    plain_bets,
    quarantined_of_shoe,
    rounds_by_shoe,
    table_facts,
)
from pipelines.neighbours import quarantined_bets
from schemas.games.blackjack import REPLAYS

OUT_REPLAYS = "blackjack_round_replays"
QUARANTINED_ROUNDS = True  # dealt from a shoe in round order (pipelines.games.audit_group)


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


def audit_tables(table: BlackjackTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None,
                 quarantined_rounds: pa.Table | None = None) -> dict[str, pa.Table]:
    """Audit the shoes of one blackjack table: {blackjack_round_replays, settlements, findings, quarantine}.
    Every round's shoe is among `shoes`, every bet's round among `rounds` (matched by `_shoe_id` too
    where the bets carry it); `neighbours`: the quarantined bets on these rounds (pipelines/neighbours.py);
    `quarantined_rounds`: the round rows of these shoes put in quarantine as read (pipelines.games.rows.InShoe:
    their recorded cards are dealt past, nothing in them is checked).
    (`compact` is the baccarat adaptor's; these tables are plain already.)"""
    shoe_rows = shoes.select(["shoe_id", "decks", "cards", "cut_index", "opened_at"]).to_pylist()
    round_rows = rounds.select(_ROUND_COLUMNS).to_pylist()
    plain = plain_bets(bets, [*BET_COLUMNS, "added_stake"])
    bet = _bet_columns(plain)
    closed = micros(rounds["betting_closed_at"])
    times, revealed = box_instants(rounds, "box_action_times"), instants(rounds, "dealer_revealed_at")
    by_shoe, bets_of_shoe = rounds_by_shoe(round_rows), bets_by_shoe(rounds, plain["round_id"], plain["_shoe_id"])
    gathered = Gathered(rounds)
    held_of_shoe = quarantined_of_shoe(quarantined_rounds, _ROUND_COLUMNS)
    for shoe in shoe_rows:
        order = by_shoe.get(shoe["shoe_id"], [])
        dealt = InShoe.of(order, round_rows, held_of_shoe.get(shoe["shoe_id"], []))
        position = dealt.positions()
        # a quarantined round goes to the engine as a cancelled one: its cards dealt past, nothing in it checked
        recorded = [_recorded_round(r, closed[order[a]], times[order[a]], revealed[order[a]]) if a >= 0
                    else _recorded_round({**r, "status": "cancelled"}, 0, None, None)
                    for r, a in zip(dealt.rows, dealt.audited, strict=True)]
        mine = bets_of_shoe.get(shoe["shoe_id"], NO_BETS)
        round_index = _round_index(position, bet["round_id"], mine)
        engine_bets = ShoeBets(round_index=round_index, **{c: bet[c][mine] for c in _ENGINE_BET_COLUMNS})
        facts = ShoeFacts(shoe["shoe_id"], shoe["decks"], tuple(shoe["cards"] or ()), shoe["cut_index"])
        result = audit_shoe(table.rules, table.chart, table.facts, facts, recorded, engine_bets,
                            quarantined=quarantined_bets(neighbours, position, shoe["shoe_id"]))
        result = replace(result, rounds=dealt.reports(result.rounds))
        gathered.shoe(shoe, order, round_rows, mine, dealt.audited[round_index], result)
    return gathered.tables(table.table_id, OUT_REPLAYS, REPLAYS.schema, plain, bets, _replay_columns)


_ROUND_COLUMNS = ["round_id", "shoe_id", "round_no", "betting_opened_at", "status", "dealer_cards", "boxes",
                  "box_cards", "box_actions", "box_auto_played"]


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


# the bet columns the engine reads (ShoeBets' fields but the round index)
_ENGINE_BET_COLUMNS = ("bet_id", "account_id", "bet_type", "seat", "stake", "added_stake", "paid", "placed_at")


def _bet_columns(plain: pa.Table) -> dict[str, np.ndarray]:
    """The bet columns the engine reads as numpy: amounts and placed_at (integer microseconds) int64, added_stake
    0 where none; the texts, the round id and the seat (null: None) as Python values."""
    def ints(column: str) -> np.ndarray:
        return pc.fill_null(plain[column], 0).to_numpy().astype(np.int64)

    placed = pc.cast(pc.cast(plain["placed_at"], pa.timestamp("us", tz="UTC")), pa.int64())
    return {"stake": ints("stake"), "paid": ints("paid"), "added_stake": ints("added_stake"),
            "placed_at": pc.fill_null(placed, 0).to_numpy().astype(np.int64),
            "seat": np.asarray(plain["seat"].to_pylist(), object),
            **{c: plain[c].to_numpy(zero_copy_only=False) for c in ("bet_id", "round_id", "account_id", "bet_type")}}


def _round_index(position: dict[str, int], round_ids: np.ndarray, mine: np.ndarray) -> np.ndarray:
    """Each of the bets `mine` on its round's index in the shoe (`position`: round_id -> index)."""
    return np.fromiter((position[r] for r in round_ids[mine].tolist()), np.int64, len(mine))


def _replay_columns(table_id: str, rounds: pa.Table, rows: np.ndarray, shoe_ids: list[str],
                    reports: list[RoundReport]) -> dict[str, pa.Array]:
    """The blackjack_round_replays columns of the replayed rounds (`rows` of `rounds`, each's shoe and report)."""
    at = pa.array(rows, pa.int64())
    schema = REPLAYS.schema

    def recorded(column: str, name: str) -> pa.Array:
        return rounds[column].take(at).combine_chunks().cast(schema.field(name).type)

    def reported(name: str, values: list) -> pa.Array:
        return pa.array(values, schema.field(name).type)

    return {
        "table_id": pa.array([table_id] * len(rows), pa.string()), "shoe_id": pa.array(shoe_ids, pa.string()),
        "round_id": recorded("round_id", "round_id"), "round_no": recorded("round_no", "round_no"),
        "status": recorded("status", "status"),
        "shoe_position": reported("shoe_position", [rep.shoe_position for rep in reports]),
        "rounds_before": reported("rounds_before", [rep.rounds_before for rep in reports]),
        "boxes": recorded("boxes", "boxes"), "box_actions": recorded("box_actions", "box_actions"),
        "expected_box_cards": reported("expected_box_cards", [rep.expected_box_cards for rep in reports]),
        "recorded_box_cards": recorded("box_cards", "recorded_box_cards"),
        "expected_dealer_cards": reported("expected_dealer_cards", [rep.expected_dealer_cards for rep in reports]),
        "recorded_dealer_cards": recorded("dealer_cards", "recorded_dealer_cards"),
        "recorded_dealer_total": reported("recorded_dealer_total", [rep.dealer_total for rep in reports]),
        "cut_card_round": reported("cut_card_round", [rep.cut_card_round for rep in reports]),
        "after_cut": reported("after_cut", [rep.after_cut for rep in reports]),
        "explanation": reported("explanation", [list(rep.explanation) for rep in reports]),
        "finding_kinds": reported("finding_kinds", [list(rep.finding_kinds) for rep in reports]),
    }


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
