"""The audit of one group of roulette rounds (a session of one table): every spin's pocket and every
bet on it.

Round by round: a settled round must record a pocket 0-36 (OUTCOME_MISSING when none is recorded,
OUTCOME_INVALID for anything else); its bets then cannot be settled and go to quarantine with the
reason. A cancelled round refunds every bet, whatever it recorded. Bet by bet (engine.betting):
BET_TYPE_NOT_OFFERED (refunded), SELECTION_INVALID (owed per the ruleset's `invalid_selection`),
OVERPAID / UNDERPAID to the minor unit, STAKE_BELOW_MIN / STAKE_ABOVE_MAX, LATE_BET, and
ROUND_STAKE_ABOVE_TABLE_MAX on every bet of an account, in the order placed, from the one that takes
its total on the round above the table maximum. Never raises on bad data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.betting import GroupAudit, OutcomeProblem, RecordedBet, RoundFacts, RoundReport, TableFacts
from engine.betting_columns import BetColumns, ColumnAudit, OutcomeRule, RoundColumns, Verdicts, audit_group_columns

from .explain import describe_pocket, explain_spin
from .layout import POCKETS
from .rules import RouletteRules
from .settlement import spin_verdicts

__all__ = ["RecordedBet", "RecordedRound", "RoundReport", "SpinAudit", "TableFacts", "audit_spin_columns",
           "audit_spins", "valid_pocket"]

SpinAudit = GroupAudit  # rounds (RoundReport, outcome = the pocket), expected, unsettled, findings


@dataclass(frozen=True)
class RecordedRound(RoundFacts):  # round_id, round_no, status, betting_closed_at, then:
    pocket: int | None


def valid_pocket(pocket: object) -> bool:
    return isinstance(pocket, int) and not isinstance(pocket, bool) and pocket in POCKETS


def pocket_problem(r: RecordedRound) -> OutcomeProblem | None:
    return recorded_pocket_problem(r.pocket)


def recorded_pocket_problem(pocket: object) -> OutcomeProblem | None:
    if pocket is None:
        return OutcomeProblem("OUTCOME_MISSING", "a pocket 0-36", "no pocket recorded")
    if not valid_pocket(pocket):
        return OutcomeProblem("OUTCOME_INVALID", "a pocket 0-36", f"pocket {pocket!r}")
    return None


def spin_rule(rules: RouletteRules) -> OutcomeRule:
    """What a session's audit needs of the wheel, by pocket as recorded: spin_verdict once per bet type,
    selection and pocket, worked out a bet type and selection's pockets at once (spin_verdicts)."""
    return OutcomeRule(
        problem=recorded_pocket_problem,
        units=lambda code, selection, pockets: spin_verdicts(rules, code, selection, pockets),
        describe=lambda pocket: describe_pocket(rules, pocket) if valid_pocket(pocket) else None,
        head=lambda pocket: explain_spin(rules, pocket, [])[0],
        rounding=rules.rounding,
    )


def audit_spin_columns(rules: RouletteRules, table: TableFacts, session_id: str, rounds: RoundColumns,
                       bets: BetColumns, known: Verdicts | None = None) -> ColumnAudit:
    """The audit of one session given as columns (rounds' outcome: the pocket as recorded); `known`: the
    verdicts of earlier sessions under the same rules."""
    return audit_group_columns(table, session_id, rounds, bets, spin_rule(rules), known)


def audit_spins(rules: RouletteRules, table: TableFacts, session_id: str, rounds: Sequence[RecordedRound],
                bets: Sequence[RecordedBet]) -> SpinAudit:
    """The audit of one session; `bets[i].round_index` points into `rounds`."""
    columns = RoundColumns.of(rounds, lambda r: r.pocket)
    return audit_spin_columns(rules, table, session_id, columns, BetColumns.of(bets)).group_audit(columns)
