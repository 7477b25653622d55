"""The audit of one group of sic bo rounds (a session of one table): every roll and every bet on it.

Round by round: a settled round must record three dice, each 1-6 (OUTCOME_MISSING when no dice are
recorded, None or an empty list; OUTCOME_INVALID for a die outside 1-6, a missing or an extra die);
its bets then cannot be settled and go to quarantine with the reason. A cancelled round refunds every
bet, whatever it recorded. Bet by bet (engine.betting): BET_TYPE_NOT_OFFERED (refunded),
SELECTION_INVALID (owed per the ruleset's `invalid_selection`), OVERPAID / UNDERPAID to the minor unit,
STAKE_BELOW_MIN / STAKE_ABOVE_MAX, LATE_BET, and ROUND_STAKE_ABOVE_TABLE_MAX on every bet of an account,
in the order placed, from the one that takes its total on the round above the table maximum. Never
raises on bad data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.betting import GroupAudit, OutcomeProblem, RecordedBet, RoundFacts, RoundReport, TableFacts
from engine.betting_columns import (
    BetColumns,
    ColumnAudit,
    OutcomeRule,
    RoundColumns,
    Verdicts,
    audit_group_columns,
)

from .explain import explain_roll
from .layout import DICE, FACES, describe_roll
from .rules import SicBoRules
from .settlement import roll_verdicts

__all__ = ["RecordedBet", "RecordedRound", "RollAudit", "RoundReport", "TableFacts", "audit_roll_columns",
           "audit_rolls", "valid_roll"]

RollAudit = GroupAudit  # rounds (RoundReport, outcome = the dice), expected, unsettled, findings


@dataclass(frozen=True)
class RecordedRound(RoundFacts):  # round_id, round_no, status, betting_closed_at, then:
    dice: tuple[int, ...] | None  # in the order recorded


def valid_roll(dice: object) -> bool:
    return (isinstance(dice, tuple | list) and len(dice) == DICE
            and all(isinstance(d, int) and not isinstance(d, bool) and d in FACES for d in dice))


def roll_problem(r: RecordedRound) -> OutcomeProblem | None:
    return recorded_roll_problem(r.dice)


def recorded_roll_problem(dice: object) -> OutcomeProblem | None:
    if dice is None or (isinstance(dice, tuple | list) and not dice):
        return OutcomeProblem("OUTCOME_MISSING", f"{DICE} dice 1-6", "no dice recorded")
    if not valid_roll(dice):
        return OutcomeProblem("OUTCOME_INVALID", f"{DICE} dice 1-6", f"dice {dice!r}")
    return None


def roll_rule(rules: SicBoRules) -> OutcomeRule:
    """What a session's audit needs of the dice, by roll as recorded (a tuple, in the order thrown):
    roll_verdict once per bet type, selection and roll, the roll's dice in ascending order (what a bet is
    owed depends on which faces show, not on the order they were thrown in: 56 rolls, not 216), a bet type and
    selection's rolls at once (roll_verdicts)."""
    return OutcomeRule(
        problem=recorded_roll_problem,
        units=lambda code, selection, rolls: roll_verdicts(rules, code, selection, rolls),
        describe=lambda dice: describe_roll(tuple(dice)) if valid_roll(dice) else None,
        head=lambda dice: explain_roll(dice, valid_roll(dice), [])[0],
        rounding=rules.rounding,
        key=lambda dice: tuple(sorted(dice)),
    )


def audit_roll_columns(rules: SicBoRules, table: TableFacts, session_id: str, rounds: RoundColumns,
                       bets: BetColumns, known: Verdicts | None = None) -> ColumnAudit:
    """The audit of one session given as columns (rounds' outcome: the dice as recorded, a tuple or None);
    `known`: the verdicts of earlier sessions under the same rules."""
    return audit_group_columns(table, session_id, rounds, bets, roll_rule(rules), known)


def audit_rolls(rules: SicBoRules, table: TableFacts, session_id: str, rounds: Sequence[RecordedRound],
                bets: Sequence[RecordedBet]) -> RollAudit:
    """The audit of one session; `bets[i].round_index` points into `rounds`."""
    columns = RoundColumns.of(rounds, lambda r: r.dice)
    return audit_roll_columns(rules, table, session_id, columns, BetColumns.of(bets)).group_audit(columns)
