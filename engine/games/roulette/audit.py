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

from .explain import describe_pocket, explain_spin
from .layout import POCKETS
from .rules import RouletteRules
from .settlement import spin_verdict

__all__ = ["RecordedBet", "RecordedRound", "RoundReport", "SpinAudit", "TableFacts", "audit_spins", "valid_pocket"]

SpinAudit = GroupAudit  # rounds (RoundReport, outcome = the pocket), expected, unsettled, findings


@dataclass(frozen=True)
class RecordedRound(RoundFacts):  # round_id, round_no, status, betting_closed_at, then:
    pocket: int | None


def valid_pocket(pocket: object) -> bool:
    return isinstance(pocket, int) and not isinstance(pocket, bool) and pocket in POCKETS


def pocket_problem(r: RecordedRound) -> OutcomeProblem | None:
    if r.pocket is None:
        return OutcomeProblem("OUTCOME_MISSING", "a pocket 0-36", "no pocket recorded")
    if not valid_pocket(r.pocket):
        return OutcomeProblem("OUTCOME_INVALID", "a pocket 0-36", f"pocket {r.pocket!r}")
    return None


def audit_spins(rules: RouletteRules, table: TableFacts, session_id: str, rounds: Sequence[RecordedRound],
                bets: Sequence[RecordedBet]) -> SpinAudit:
    """The audit of one session; `bets[i].round_index` points into `rounds`."""
    verdicts = VerdictMemo(lambda code, selection, pocket: spin_verdict(rules, code, selection, pocket), rules.rounding)
    return audit_group(table, session_id, rounds, bets, OutcomeJudge(
        outcome=lambda r: r.pocket,
        problem=pocket_problem,
        judge=lambda r, bet: verdicts(bet, r.pocket),  # judge_spin_bet, once per bet type, selection and pocket
        describe=lambda r: describe_pocket(rules, r.pocket) if valid_pocket(r.pocket) else None,
        explain=lambda r, bet_lines: explain_spin(rules, r.pocket, bet_lines),
    ))
