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

from engine.betting import (
    GroupAudit,
    OutcomeJudge,
    OutcomeProblem,
    RecordedBet,
    RoundFacts,
    RoundReport,
    TableFacts,
    VerdictMemo,
    audit_group,
)

from .explain import explain_roll
from .layout import DICE, FACES, describe_roll
from .rules import SicBoRules
from .settlement import roll_verdict

__all__ = ["RecordedBet", "RecordedRound", "RollAudit", "RoundReport", "TableFacts", "audit_rolls", "valid_roll"]

RollAudit = GroupAudit  # rounds (RoundReport, outcome = the dice), expected, unsettled, findings


@dataclass(frozen=True)
class RecordedRound(RoundFacts):  # round_id, round_no, status, betting_closed_at, then:
    dice: tuple[int, ...] | None  # in the order recorded


def valid_roll(dice: object) -> bool:
    return (isinstance(dice, tuple | list) and len(dice) == DICE
            and all(isinstance(d, int) and not isinstance(d, bool) and d in FACES for d in dice))


def roll_problem(r: RecordedRound) -> OutcomeProblem | None:
    if r.dice is None or (isinstance(r.dice, tuple | list) and not r.dice):
        return OutcomeProblem("OUTCOME_MISSING", f"{DICE} dice 1-6", "no dice recorded")
    if not valid_roll(r.dice):
        return OutcomeProblem("OUTCOME_INVALID", f"{DICE} dice 1-6", f"dice {r.dice!r}")
    return None


def audit_rolls(rules: SicBoRules, table: TableFacts, session_id: str, rounds: Sequence[RecordedRound],
                bets: Sequence[RecordedBet]) -> RollAudit:
    """The audit of one session; `bets[i].round_index` points into `rounds`."""
    verdicts = VerdictMemo(lambda code, selection, dice: roll_verdict(rules, code, selection, dice), rules.rounding)
    return audit_group(table, session_id, rounds, bets, OutcomeJudge(
        outcome=lambda r: r.dice,
        problem=roll_problem,
        judge=lambda r, bet: verdicts(bet, tuple(r.dice)),  # judge_roll_bet, once per bet type, selection and roll
        describe=lambda r: describe_roll(tuple(r.dice)) if valid_roll(r.dice) else None,
        explain=lambda r, bet_lines: explain_roll(r.dice, valid_roll(r.dice), bet_lines),
    ))
