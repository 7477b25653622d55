"""The audit of one shoe: its dealing and every bet on its rounds, in one call.

This is the unit of work the pipeline distributes: a shoe with its rounds and their bets as
columns. Pure: everything it needs comes in as arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.betting_audit import BetColumns, RoundFacts, audit_bets
from engine.dealing_audit import RecordedRound, RoundReplay, audit_dealing
from engine.features import round_features
from engine.findings import Finding
from engine.ruleset import Ruleset


@dataclass(frozen=True)
class TableInfo:
    table_id: str
    ruleset: Ruleset
    currency: str
    table_max: int
    limits: Mapping[str, tuple[int, int]]  # bet_type -> (min_stake, max_stake)


@dataclass(frozen=True)
class ShoeRecord:
    shoe_id: str
    cards: tuple[str, ...]
    decks: int
    cut_index: int | None


@dataclass
class ShoeAudit:
    round_replays: list[RoundReplay]
    expected: np.ndarray  # expected credit per bet (int64), meaningful where `settleable`
    settleable: np.ndarray  # False: the bet's round has no complete hands to settle from
    findings: list[Finding]


def audit_shoe(
    table: TableInfo,
    shoe: ShoeRecord,
    rounds: Sequence[RecordedRound],
    betting_closed_at: Sequence[int],
    bets: BetColumns,
) -> ShoeAudit:
    """`betting_closed_at[i]` belongs to `rounds[i]`; `bets.round_index` points into `rounds`."""
    rs = table.ruleset
    replays, findings = audit_dealing(
        table.table_id, shoe.shoe_id, shoe.cards, shoe.decks, shoe.cut_index, rs.shoe, rounds
    )
    facts = []
    round_ok = np.ones(len(rounds), dtype=bool)
    for i, (r, closed) in enumerate(zip(rounds, betting_closed_at, strict=True)):
        cancelled = r.status == "cancelled"
        features = round_features(r.player_cards, r.banker_cards) if not cancelled and r.complete else None
        round_ok[i] = cancelled or features is not None
        facts.append(RoundFacts(r.round_id, r.round_no, cancelled, int(closed), features))
    settleable = round_ok[bets.round_index] if len(bets) else np.zeros(0, dtype=bool)
    if settleable.all():
        expected, bet_findings = audit_bets(
            rs, table.table_id, shoe.shoe_id, table.currency, table.table_max, table.limits, facts, bets
        )
    else:
        keep = np.flatnonzero(settleable)
        sub = BetColumns(*(getattr(bets, f)[keep] for f in BetColumns.__dataclass_fields__))
        expected = np.zeros(len(bets), dtype=np.int64)
        sub_expected, bet_findings = audit_bets(
            rs, table.table_id, shoe.shoe_id, table.currency, table.table_max, table.limits, facts, sub
        )
        expected[keep] = sub_expected
    return ShoeAudit(replays, expected, settleable, findings + bet_findings)
