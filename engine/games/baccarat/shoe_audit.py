"""The audit of one shoe: its dealing and every bet on its rounds, in one call.

This is the unit of work the pipeline distributes: a shoe with its rounds and their bets as
columns. Pure: everything it needs comes in as arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from engine.betting import QuarantinedBet
from engine.findings import Finding
from engine.games.baccarat.betting_audit import (
    BetColumns,
    BetFindings,
    RoundFactColumns,
    RoundFacts,
    audit_bets,
    audit_bets_columns,
    placeholder_features,
)
from engine.games.baccarat.dealing_audit import (
    DealingColumns,
    RecordedRound,
    RoundColumns,
    RoundReplay,
    ShoeColumns,
    audit_dealing,
    audit_dealing_batch,
    recorded_hands,
)
from engine.games.baccarat.features import hand_feature_columns, round_features
from engine.games.baccarat.ruleset import Ruleset


@dataclass(frozen=True)
class TableInfo:
    table_id: str
    ruleset: Ruleset
    currency: str
    table_max: int
    limits: Mapping[str, tuple[int, int]]  # bet_type -> (min_stake, max_stake)
    game: ClassVar[str] = "baccarat"

    @property
    def ruleset_id(self) -> str:
        return self.ruleset.id


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
        sub = bets.take(keep)
        expected = np.zeros(len(bets), dtype=np.int64)
        sub_expected, bet_findings = audit_bets(
            rs, table.table_id, shoe.shoe_id, table.currency, table.table_max, table.limits, facts, sub
        )
        expected[keep] = sub_expected
    return ShoeAudit(replays, expected, settleable, findings + bet_findings)


@dataclass
class ShoesAudit:
    """`audit_shoe` of many shoes of one table, as columns (see audit_shoes)."""

    dealing: DealingColumns  # one row per round
    rounds: RoundFactColumns  # what the betting audit saw of each round (round_id, shoe_id, features...)
    expected: np.ndarray  # expected credit per bet (int64), meaningful where `settleable`
    settleable: np.ndarray  # False: the bet's round has no complete hands to settle from
    bet_findings: BetFindings  # rows index the bets given to audit_shoes

    def findings(self, table_id: str, bets: BetColumns) -> list[Finding]:
        """Every finding as a Finding: the dealing ones, then the ones on bets."""
        return self.dealing.findings + self.bet_findings.findings(table_id, self.rounds, bets)


def audit_shoes(
    table: TableInfo,
    shoes: ShoeColumns,
    rounds: RoundColumns,
    betting_closed_at: np.ndarray,
    bets: BetColumns,
    quarantined: Sequence[QuarantinedBet] = (),
) -> ShoesAudit:
    """`audit_shoe` for every shoe of `shoes` (all of `table`) at once: the dealing replay of every
    shoe (engine.games.baccarat.dealing_audit.audit_dealing_batch) and the betting audit of every bet, with the same
    results. `rounds` are sorted by shoe, round_no, round_id; `betting_closed_at[i]` belongs to round i;
    `bets.round_index` points into `rounds`; `quarantined`: the bets of these rounds put in quarantine as
    they were read, seen by the rules on an account's other bets (betting_audit.audit_bets_columns)."""
    rs = table.ruleset
    dealing = audit_dealing_batch(table.table_id, shoes, rounds, rs.shoe)
    player, banker, complete = recorded_hands(rounds)
    with_features = complete & ~rounds.cancelled
    features = placeholder_features(len(rounds))
    for name, column in hand_feature_columns(player[with_features], banker[with_features]).items():
        features[name][with_features] = column
    facts = RoundFactColumns(rounds.round_id, np.asarray(rounds.round_no, dtype=np.int64),
                             np.asarray(shoes.shoe_id, dtype=object)[rounds.shoe], rounds.cancelled,
                             np.asarray(betting_closed_at, dtype=np.int64), features)
    round_ok = rounds.cancelled | with_features
    settleable = round_ok[bets.round_index] if len(bets) else np.zeros(0, dtype=bool)
    args = (rs, table.table_id, table.currency, table.table_max, table.limits, facts)
    if settleable.all():
        expected, found = audit_bets_columns(*args, bets, quarantined)
    else:
        keep = np.flatnonzero(settleable)
        expected = np.zeros(len(bets), dtype=np.int64)
        expected[keep], found = audit_bets_columns(*args, bets.take(keep), quarantined)
        found.row = keep[np.asarray(found.row, dtype=np.int64)].tolist()
    return ShoesAudit(dealing, facts, expected, settleable, found)
