"""Arrow <-> the blackjack engine: one table's shoes, rounds and bets into engine.games.blackjack.audit,
its results back as output tables. No Beam here (tested without a pipeline).

Blackjack rounds are few and rich (every box, every decision), so the engine takes Python objects: a
round's lists are converted once per round, not once per bet.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pyarrow as pa

from engine.games.blackjack.audit import (
    RecordedBet,
    RecordedRound,
    RoundReport,
    ShoeFacts,
    TableFacts,
    audit_shoe,
)
from engine.games.blackjack.rules import BlackjackRules, load_blackjack_rules
from engine.games.blackjack.strategy import BasicStrategyChart, load_basic_strategy
from pipelines.games.rows import (
    BET_COLUMNS,
    bets_by_shoe,
    day,
    findings_of,
    micros,
    plain_bets,
    quarantine_of,
    rounds_by_shoe,
    settlements_table,
)
from schemas.outputs import BLACKJACK_ROUND_REPLAYS, FINDINGS

OUT_REPLAYS = "blackjack_round_replays"


@dataclass(frozen=True)
class BlackjackTable:
    game = "blackjack"
    facts: TableFacts
    rules: BlackjackRules
    chart: BasicStrategyChart

    @property
    def table_id(self) -> str:
        return self.facts.table_id

    @property
    def ruleset_id(self) -> str:
        return self.rules.id

    @property
    def currency(self) -> str:
        return self.facts.currency


@cache
def _chart(name: str) -> BasicStrategyChart:
    return load_basic_strategy(name)


def table_info(row: dict, limits: dict[str, tuple[int, int]]) -> BlackjackTable:
    rules = load_blackjack_rules(row["ruleset"])
    return BlackjackTable(TableFacts(row["table_id"], row["currency"], row["table_max"], limits), rules,
                          _chart(rules.basic_strategy))


def audit_tables(table: BlackjackTable, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False) -> dict[str, pa.Table]:
    """Audit the shoes of one blackjack table: {blackjack_round_replays, settlements, findings, quarantine}.
    Every round's shoe is among `shoes`, every bet's round among `rounds` (matched by `_shoe_id` too
    where the bets carry it). (`compact` is the baccarat adaptor's; these tables are plain already.)"""
    shoe_rows = shoes.select(["shoe_id", "decks", "cards", "cut_index", "opened_at"]).to_pylist()
    round_rows = rounds.select(["round_id", "shoe_id", "round_no", "status", "betting_opened_at", "betting_closed_at",
                                "dealer_cards", "boxes", "box_cards", "box_actions", "box_auto_played"]).to_pylist()
    bet_cols = [*BET_COLUMNS, "added_stake"]
    plain = plain_bets(bets, bet_cols)
    bet_rows = plain.select([*bet_cols, "_shoe_id"]).to_pylist()
    placed, closed = micros(plain["placed_at"]), micros(rounds["betting_closed_at"])
    by_shoe, bets_of_shoe = rounds_by_shoe(round_rows), bets_by_shoe(round_rows, bet_rows)
    replays, settled, findings, unsettled = [], [], [], []
    for shoe in shoe_rows:
        order = by_shoe.get(shoe["shoe_id"], [])
        position = {round_rows[i]["round_id"]: k for k, i in enumerate(order)}
        recorded = [_recorded_round(round_rows[i], closed[i]) for i in order]
        mine = bets_of_shoe.get(shoe["shoe_id"], [])
        engine_bets = [_recorded_bet(bet_rows[b], position[bet_rows[b]["round_id"]], placed[b]) for b in mine]
        facts = ShoeFacts(shoe["shoe_id"], shoe["decks"], tuple(shoe["cards"] or ()), shoe["cut_index"])
        result = audit_shoe(table.rules, table.chart, table.facts, facts, recorded, engine_bets)
        dates = [day(round_rows[i]["betting_opened_at"]) for i in order]
        replays += [_replay_row(table, shoe["shoe_id"], round_rows[order[rep.round_index]], rep,
                                dates[rep.round_index]) for rep in result.rounds]
        for b, bet, credit, why in zip(mine, engine_bets, result.expected, result.unsettled, strict=True):
            if credit is None:
                unsettled.append((b, why, dates[bet.round_index]))
            else:
                r = round_rows[order[bet.round_index]]
                settled.append((b, credit, r, shoe["shoe_id"], dates[bet.round_index]))
        findings.append(findings_of(result.findings, {r.round_id: d for r, d in zip(recorded, dates, strict=True)},
                                    day(shoe["opened_at"])))
    return {
        OUT_REPLAYS: pa.Table.from_pylist(replays, BLACKJACK_ROUND_REPLAYS),
        "settlements": settlements_table(table.table_id, plain, settled),
        "findings": pa.concat_tables(findings) if findings else FINDINGS.empty_table(),
        "quarantine": quarantine_of(bets, unsettled),
    }


def _recorded_round(r: dict, closed_us: int | None) -> RecordedRound:
    return RecordedRound(
        r["round_id"], r["round_no"], r["status"], closed_us or 0, tuple(r["dealer_cards"] or ()),
        tuple(r["boxes"] or ()), tuple(tuple(c or ()) for c in r["box_cards"] or ()),
        tuple(a or "" for a in r["box_actions"] or ()),
        # box_auto_played is optional: not recorded means no box was auto-played
        tuple(bool(a) for a in r["box_auto_played"]) if r["box_auto_played"] is not None
        else (False,) * len(r["boxes"] or ()))


def _recorded_bet(b: dict, round_index: int, placed_us: int) -> RecordedBet:
    return RecordedBet(b["bet_id"], round_index, b["account_id"], b["bet_type"], b["seat"], b["stake"],
                       b["added_stake"], b["paid"], placed_us)


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
