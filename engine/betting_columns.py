"""engine.betting's audit of a group of rounds settled on one recorded outcome (audit_group), column by column.

audit_group is the statement of the checks, a bet at a time; audit_group_columns does the same for a group's
bets given as columns (numpy): what a bet is owed is worked out by the game's scalar rule once per distinct
(bet type, selection, outcome) and gathered to every bet; the limits, the betting window, the account's round
total and paid against owed are comparisons over the columns with BetChecks.check's boundaries; only the bets
that raise a finding are put in words, through BetChecks as audit_group does. Same credits, findings (in the
same order), explanations and reasons (tests/test_betting_columns.py checks it against audit_group).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from engine.betting import (
    REFUNDED,
    BetChecks,
    GroupAudit,
    OutcomeProblem,
    Payout,
    R,
    RecordedBet,
    RoundFacts,
    RoundReport,
    TableFacts,
    UnitVerdict,
    credit_of,
    unsettled_reason,
)
from engine.findings import Finding


@dataclass(frozen=True)
class BetColumns:
    """A group's bets as columns; the strings that repeat (account, bet type, selection) as integer codes
    into their distinct values, `round_index` into the group's rounds (numpy arrays; int64 amounts and
    microseconds)."""

    bet_id: Sequence[str]
    round_index: np.ndarray
    account: np.ndarray  # codes into `accounts`
    bet_type: np.ndarray  # codes into `bet_types`
    selection: np.ndarray  # codes into `selections` (None and '' are distinct values, as recorded)
    stake: np.ndarray
    paid: np.ndarray
    placed_at: np.ndarray
    accounts: Sequence[str]
    bet_types: Sequence[str]
    selections: Sequence[str | None]

    def __len__(self) -> int:
        return len(self.bet_id)

    @classmethod
    def of(cls, bets: Sequence[RecordedBet]) -> BetColumns:
        def coded(values: list) -> tuple[np.ndarray, list]:
            distinct: dict = {}
            codes = np.array([distinct.setdefault(v, len(distinct)) for v in values], np.int64)
            return codes, list(distinct)

        account, accounts = coded([b.account_id for b in bets])
        bet_type, bet_types = coded([b.bet_type for b in bets])
        selection, selections = coded([b.selection for b in bets])
        stake, paid, placed_at = (np.array([getattr(b, c) for b in bets], np.int64)
                                  for c in ("stake", "paid", "placed_at"))
        return cls([b.bet_id for b in bets], np.array([b.round_index for b in bets], np.int64), account, bet_type,
                   selection, stake, paid, placed_at, accounts, bet_types, selections)

    def recorded(self, i: int) -> RecordedBet:
        """Bet i as a RecordedBet (for the few that raise a finding)."""
        return RecordedBet(self.bet_id[i], int(self.round_index[i]), self.accounts[self.account[i]],
                           self.bet_types[self.bet_type[i]], self.selections[self.selection[i]], int(self.stake[i]),
                           int(self.paid[i]), int(self.placed_at[i]))


@dataclass(frozen=True)
class RoundColumns:
    """A group's rounds as columns: RoundFacts and the outcome as recorded."""

    round_id: Sequence[str]
    round_no: Sequence[int]
    status: Sequence[str]
    betting_closed_at: np.ndarray  # int64 microseconds
    outcome: Sequence[object]

    def __len__(self) -> int:
        return len(self.round_id)

    @classmethod
    def of(cls, rounds: Sequence[R], outcome: Callable[[R], object]) -> RoundColumns:
        return cls([r.round_id for r in rounds], [r.round_no for r in rounds], [r.status for r in rounds],
                   np.array([r.betting_closed_at for r in rounds], np.int64), [outcome(r) for r in rounds])


@dataclass(frozen=True)
class OutcomeRule:
    """What a game tells audit_group_columns, of an outcome as recorded (OutcomeJudge's, by outcome)."""

    problem: Callable[[object], OutcomeProblem | None]  # why a settled round's outcome cannot be settled on
    unit: Callable[[str, str | None, object], UnitVerdict]  # (bet type, selection, a valid outcome's key)
    describe: Callable[[object], str | None]  # the outcome in words, None when it is not valid
    head: Callable[[object], str]  # the explanation's first line (the outcome), before one line per bet
    rounding: str
    key: Callable[[object], Hashable] = lambda outcome: outcome  # a valid outcome as unit() takes it


CANCELLED = UnitVerdict(REFUNDED, "round cancelled: refunded")  # every bet of a cancelled round


@dataclass
class ColumnAudit:
    """audit_group_columns' result: per bet, per round, and the findings in audit_group's order."""

    expected: np.ndarray  # per bet, int64; 0 where unsettled
    settled: np.ndarray  # per bet, bool
    unsettled: list[str | None]  # per bet: why it cannot be settled
    findings: list[Finding]
    description: list[str | None]  # per round
    explanation: list[str]  # every round's lines one after the other: the outcome, then one line per bet
    explanation_at: np.ndarray  # round i's lines are explanation[explanation_at[i]:explanation_at[i + 1]]
    finding_kinds: list[tuple[str, ...]]  # per round
    unsettled_reason: list[str | None]  # per round

    def group_audit(self, rounds: RoundColumns) -> GroupAudit:
        """As audit_group gives it."""
        at = self.explanation_at.tolist()
        reports = [RoundReport(i, rounds.outcome[i], self.description[i], tuple(self.explanation[at[i]:at[i + 1]]),
                               self.finding_kinds[i], self.unsettled_reason[i]) for i in range(len(rounds))]
        expected = [int(c) if ok else None for c, ok in zip(self.expected.tolist(), self.settled.tolist(), strict=True)]
        return GroupAudit(reports, expected, self.unsettled, self.findings)


def over_table_max_columns(round_index: np.ndarray, account: np.ndarray, placed_at: np.ndarray, stake: np.ndarray,
                           table_max: int) -> np.ndarray:
    """over_table_max over columns: each bet's account total on its round with it, in the order placed (ties in
    record order), where that total is above table_max; 0 elsewhere."""
    n = len(stake)
    over = np.zeros(n, np.int64)
    if not n:
        return over
    order = np.lexsort((np.arange(n), placed_at, account, round_index))  # the last key sorts first
    ri, acc, staked = round_index[order], account[order], stake[order]
    running = np.cumsum(staked)
    first = np.concatenate([[True], (ri[1:] != ri[:-1]) | (acc[1:] != acc[:-1])])  # of an account's bets on a round
    start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    totals = running - running[start] + staked[start]
    over[order] = np.where(totals > table_max, totals, 0)
    return over


def audit_group_columns(table: TableFacts, group_id: str, rounds: RoundColumns, bets: BetColumns, game: OutcomeRule,
                        known: dict | None = None) -> ColumnAudit:
    """audit_group over columns: the same credits, findings (in the same order), explanations and reasons.
    `known`: the game's unit verdicts by (bet type, selection, outcome key), kept across calls with the same
    rules (None: this call's own)."""
    checks = BetChecks(table, group_id)
    m, n = len(rounds), len(bets)
    kinds: dict[int, list[str]] = {}
    reasons: list[str | None] = []
    descriptions: list[str | None] = []
    heads: list[str] = []
    outcome_of = np.full(m, -1, np.int64)  # the round's distinct outcome; -1: cancelled (or not settled)
    outcomes: dict[Hashable, int] = {}
    for i, (status, outcome) in enumerate(zip(rounds.status, rounds.outcome, strict=True)):
        problem = game.problem(outcome) if status == "settled" else None
        if problem is None and status in ("settled", "cancelled"):
            reasons.append(None)
            if status == "settled":
                outcome_of[i] = outcomes.setdefault(game.key(outcome), len(outcomes))
        else:
            facts = RoundFacts(rounds.round_id[i], rounds.round_no[i], status, int(rounds.betting_closed_at[i]))
            reasons.append(unsettled_reason(facts, problem))
        if problem is not None:
            kinds[i] = [problem.kind]
            checks.round_finding(problem.kind, rounds.round_id[i], problem.expected, problem.recorded,
                                 f"Round {rounds.round_no[i]} of {group_id}: {problem.recorded}, expected "
                                 f"{problem.expected}.")
        descriptions.append(game.describe(outcome))
        heads.append(game.head(outcome))

    ri = np.asarray(bets.round_index, np.int64)
    on_a_round = (ri >= 0) & (ri < m)
    at = np.where(on_a_round, ri, 0)
    round_settles = np.array([r is None for r in reasons], bool)
    settled = on_a_round & round_settles[at] if m else np.zeros(n, bool)
    unsettled: list[str | None] = [None] * n
    for i in np.flatnonzero(~settled).tolist():
        unsettled[i] = reasons[ri[i]] if on_a_round[i] else \
            f"round_index {ri[i]} is not one of the group's {m} rounds"

    # what each settled bet is owed: its verdict once per distinct (bet type, selection, outcome)
    rows = np.flatnonzero(settled)
    stake, paid = bets.stake[rows], bets.paid[rows]
    bet_type, selection = bets.bet_type[rows], bets.selection[rows]
    width = len(bets.selections)
    pair = bet_type * width + selection
    keys, verdict_of = distinct(pair * (len(outcomes) + 1) + outcome_of[at[rows]] + 1)
    outcome_keys = list(outcomes)
    known = {} if known is None else known
    units: list[UnitVerdict] = []
    for key in keys.tolist():
        pair_key, outcome = divmod(key, len(outcomes) + 1)
        if outcome == 0:
            units.append(CANCELLED)
            continue
        code, chosen = divmod(pair_key, width)
        memo = (bets.bet_types[code], bets.selections[chosen], outcome_keys[outcome - 1])
        unit = known.get(memo)
        if unit is None:
            unit = known[memo] = game.unit(*memo)
        units.append(unit)
    credit = _credits(stake, verdict_of, [u.payout for u in units], game.rounding)
    expected = np.zeros(n, np.int64)
    expected[rows] = credit

    # the checks, over the columns (BetChecks.check's boundaries: limits inclusive, a bet at the close on time)
    limits = [table.limits.get(t) for t in bets.bet_types]  # by bet type code; None: no limits
    limited = np.array([lim is not None for lim in limits], bool)
    low, high = (np.array([lim[end] if lim else 0 for lim in limits], np.int64) for end in (0, 1))
    flagged = (np.array([u.finding is not None for u in units], bool)[verdict_of] if len(units) else
               np.zeros(0, bool))
    flagged |= paid != credit
    if len(limits):
        flagged |= limited[bet_type] & ((stake < low[bet_type]) | (stake > high[bet_type]))
    flagged |= bets.placed_at[rows] > rounds.betting_closed_at[at[rows]]
    over = over_table_max_columns(ri, bets.account, bets.placed_at, bets.stake, table.table_max)
    flagged |= over[rows] > 0
    for k in np.flatnonzero(flagged).tolist():  # in the order of the bets, as audit_group
        i, verdict = int(rows[k]), units[verdict_of[k]]
        bet, r = bets.recorded(i), int(at[i])
        before, what = len(checks.findings), checks.what(bet)
        if verdict.finding:
            checks.bet_finding(verdict.finding, bet, rounds.round_id[r], verdict.expected, verdict.recorded,
                               f"{what}: {verdict.why}.")
        checks.check(bet, rounds.round_id[r], rounds.round_no[r], int(rounds.betting_closed_at[r]), int(credit[k]),
                     int(over[i]) or None, what)
        kinds.setdefault(r, []).extend(f.kind for f in checks.findings[before:])

    lines = _bet_lines(checks, bets, rows, stake, paid, credit, bet_type, selection, verdict_of, units)
    explanation, explanation_at = _explanations(heads, lines, at[rows], m)
    finding_kinds = [()] * m
    for r, found in kinds.items():
        finding_kinds[r] = tuple(dict.fromkeys(found))
    return ColumnAudit(expected, settled, unsettled, checks.findings, descriptions, explanation, explanation_at,
                       finding_kinds, reasons)


def _credits(stake: np.ndarray, verdict_of: np.ndarray, payouts: list[Payout], rounding: str) -> np.ndarray:
    """credit_of(stake, payout, rounding) of each bet (`verdict_of` into `payouts`): a whole multiple of the
    stake is exact (nothing to round); a fraction (La Partage's half) is worked out by credit_of once per
    distinct payout and stake."""
    credit = np.zeros(len(stake), np.int64)
    whole = np.array([p.credit.denominator == 1 for p in payouts], bool)
    multiple = np.array([p.credit.numerator if p.credit.denominator == 1 else 0 for p in payouts], np.int64)
    if len(payouts):
        credit[:] = stake * multiple[verdict_of]
    for k in np.flatnonzero(~whole[verdict_of]).tolist() if len(payouts) else []:
        credit[k] = credit_of(int(stake[k]), payouts[verdict_of[k]], rounding)
    return credit


def distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values, each value's index among them), in the order they first appear: np.unique's
    return_inverse by hashing (Arrow's dictionary encoding) rather than sorting."""
    encoded = pa.array(values, pa.int64()).dictionary_encode()
    return (encoded.dictionary.to_numpy(zero_copy_only=False),
            encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp))


def _texts(values: np.ndarray, text: Callable[[int], str]) -> list[str]:
    """text(value) of each value, worked out once per distinct value."""
    values_of, value_of = distinct(values)
    return np.array([text(v) for v in values_of.tolist()] or [""], object)[value_of].tolist()


def _bet_lines(checks: BetChecks, bets: BetColumns, rows: np.ndarray, stake: np.ndarray, paid: np.ndarray,
               credit: np.ndarray, bet_type: np.ndarray, selection: np.ndarray, verdict_of: np.ndarray,
               units: list[UnitVerdict]) -> list[str]:
    """Each settled bet's explanation line, as audit_group writes it (what(bet), its verdict, owed and paid)."""
    if not len(rows):
        return []
    width = len(bets.selections)
    pairs, pair_of = distinct(bet_type * width + selection)
    named = []  # what(bet) between its id and its stake: the bet type and the selection
    for pair in pairs.tolist():
        code, chosen = divmod(pair, width)
        s = bets.selections[chosen]
        named.append(f"{bets.bet_types[code]}{f' {s!r}' if s else ''}")
    names = np.array(named, object)[pair_of].tolist()
    whys = np.array([u.why for u in units], object)[verdict_of].tolist()
    ids = np.asarray(bets.bet_id, object)[rows].tolist()
    money = checks.money
    return [f"Bet {b} ({t}, stake {s}): {w}; owed {c}, paid {p}" for b, t, s, w, c, p in zip(
        ids, names, _texts(stake, money), whys, _texts(credit, money), _texts(paid, money), strict=True)]


def _explanations(heads: list[str], lines: list[str], round_of: np.ndarray, rounds: int
                  ) -> tuple[list[str], np.ndarray]:
    """Every round's explanation one after the other: its head, then its bets' lines in the order given."""
    at = np.concatenate([[0], np.cumsum(np.bincount(round_of, minlength=rounds) + 1)]).astype(np.int64)
    flat = np.empty(int(at[-1]), object)
    flat[at[:-1]] = heads
    order = np.argsort(round_of, kind="stable")
    # the k-th line in round order sits after the heads of its round and of every round before it
    flat[np.arange(len(order)) + round_of[order] + 1] = np.array(lines, object)[order] if len(order) else []
    return flat.tolist(), at
