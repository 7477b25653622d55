"""engine.betting's audit of a group of rounds settled on one recorded outcome (audit_group), column by column.

audit_group is the statement of the checks, a bet at a time; audit_group_columns does the same for a group's
bets given as columns (numpy): each distinct (bet type, selection, outcome) gets its verdict from the game's
rule once a ruleset (Verdicts, numbered; a bet type and selection's new outcomes asked at once, the verdicts kept as
columns); the verdicts' payouts as arrays, a compiled kernel
(engine.kernels) settles every bet and applies BetChecks.check's boundaries (the limits, the betting window, the
account's round total, paid against owed) in one pass; the findings of the bets it flags are joined column by
column in Arrow, in engine.betting's words (BET_WORDS; each amount, instant and verdict put in words once), and
the explanation is written by a kernel (engine.betting_lines). Same credits, findings (in the same order),
explanations and reasons (tests/test_betting_columns.py and tests/test_kernels_outcome.py check it against
audit_group).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, fields
from string import Formatter
from threading import Lock

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine import betting_lines, kernels
from engine.betting import (
    BET_WHAT,
    BET_WORDS,
    REFUNDED,
    REFUSED,
    BetChecks,
    GroupAudit,
    OutcomeProblem,
    R,
    RecordedBet,
    RoundFacts,
    RoundReport,
    TableFacts,
    UnitVerdict,
    Wording,
    bet_named,
    unsettled_reason,
    us_texts,
)
from engine.finding_texts import FINDING_COLUMNS, FindingTexts, in_bet_order
from engine.findings import Finding
from engine.kernels import account_round_totals, kernel, settle


@dataclass(frozen=True)
class BetColumns:
    """A group's bets as columns; the strings that repeat (account, bet type, selection) as integer codes
    into their distinct values, `round_index` into the group's rounds (numpy arrays; int64 amounts and
    microseconds, bet ids an Arrow string array)."""

    bet_id: pa.Array
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
        return cls(pa.array([b.bet_id for b in bets], pa.string()), np.array([b.round_index for b in bets], np.int64),
                   account, bet_type, selection, stake, paid, placed_at, accounts, bet_types, selections)


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
class UnitColumns:
    """Unit verdicts as columns, UnitVerdict's parts one entry a verdict: a game that works out a bet type and
    selection's verdicts on many outcomes at once gives them so (OutcomeRule.units), no object a verdict."""

    numerator: list[int]  # of the credit per unit staked
    denominator: list[int]
    why: list[str]
    finding: list[str | None]
    expected: list[str]
    recorded: list[str]

    @classmethod
    def of(cls, units: Sequence[UnitVerdict]) -> UnitColumns:
        return cls([u.payout.credit.numerator for u in units], [u.payout.credit.denominator for u in units],
                   [u.why for u in units], [u.finding for u in units], [u.expected for u in units],
                   [u.recorded for u in units])

    def __len__(self) -> int:
        return len(self.why)


@dataclass(frozen=True)
class OutcomeRule:
    """What a game tells audit_group_columns, of an outcome as recorded (OutcomeJudge's, by outcome)."""

    problem: Callable[[object], OutcomeProblem | None]  # why a settled round's outcome cannot be settled on
    # (bet type, selection, valid outcomes' keys) -> the verdict on each, as columns (one_by_one: a key at a time)
    units: Callable[[str, str | None, Sequence[Hashable]], UnitColumns]
    describe: Callable[[object], str | None]  # the outcome in words, None when it is not valid
    head: Callable[[object], str]  # the explanation's first line (the outcome), before one line per bet
    rounding: str
    key: Callable[[object], Hashable] = lambda outcome: outcome  # a valid outcome as units() takes it


CANCELLED = UnitVerdict(REFUNDED, "round cancelled: refunded")  # every bet of a cancelled round


@dataclass
class ColumnAudit:
    """audit_group_columns' result: per bet, per round, and the findings in audit_group's order."""

    expected: np.ndarray  # per bet, int64; 0 where unsettled
    settled: np.ndarray  # per bet, bool
    unsettled: list[str | None]  # per bet: why it cannot be settled
    findings: pa.Table  # FINDING_COLUMNS: the rounds' findings, then the bets', in audit_group's order
    description: list[str | None]  # per round
    explanation: pa.Array  # every round's lines one after the other: the outcome, then one line per bet (strings)
    explanation_at: np.ndarray  # round i's lines are explanation[explanation_at[i]:explanation_at[i + 1]]
    finding_kinds: list[tuple[str, ...]]  # per round
    unsettled_reason: list[str | None]  # per round

    def group_audit(self, rounds: RoundColumns) -> GroupAudit:
        """As audit_group gives it."""
        at, explanation = self.explanation_at.tolist(), self.explanation.to_pylist()
        reports = [RoundReport(i, rounds.outcome[i], self.description[i], tuple(explanation[at[i]:at[i + 1]]),
                               self.finding_kinds[i], self.unsettled_reason[i]) for i in range(len(rounds))]
        expected = [int(c) if ok else None for c, ok in zip(self.expected.tolist(), self.settled.tolist(), strict=True)]
        return GroupAudit(reports, expected, self.unsettled, [Finding(**f) for f in self.findings.to_pylist()])


class Verdicts:
    """The unit verdicts worked out under one ruleset, each once per (bet type, selection, outcome key) and kept
    across the sessions (and tables) given it, numbered; their parts as columns by number (numpy for the
    kernel, Arrow for the words), so that a session's bets take theirs by index, no Python a distinct verdict
    once it is known. Number 0 is a cancelled round's (every bet refunded)."""

    def __init__(self) -> None:
        self.parts = UnitColumns.of([CANCELLED])  # every verdict's, by number
        self._ids: tuple[dict, dict] = ({}, {_CANCELLED: 0})  # (bet type, selection), outcome key -> its id
        self._number = np.full((0, 0), -1, np.int64)  # by those ids; -1: not worked out yet
        self._columns: dict[str, np.ndarray | pa.Array] = {}
        self._lock = Lock()  # (sessions audited side by side share a ruleset's verdicts)
        # the game's words on each outcome as recorded (_OutcomeWords'), kept across the sessions too
        self.outcome_words: dict[tuple[type, str], tuple[str | None, str, OutcomeProblem | None, Hashable]] = {}

    def numbers(self, units: Callable[[str, str | None, Sequence[Hashable]], UnitColumns], bet_types: Sequence[str],
                selections: Sequence[str | None], outcome_keys: Sequence[Hashable], code: np.ndarray,
                chosen: np.ndarray, outcome: np.ndarray) -> np.ndarray:
        """The number of the verdict on each (bet_types[code], selections[chosen], outcome_keys[outcome - 1]), each
        given once, outcome 0 a cancelled round; units(bet type, selection, outcome keys) says those not known yet, a
        bet type and selection's at once."""
        pairs, pair_of = np.unique(code * len(selections) + chosen, return_inverse=True)
        named = [(bet_types[c], selections[s]) for c, s in zip(*np.divmod(pairs, len(selections)), strict=True)]
        with self._lock:
            p, o = self._ids_of(0, named)[pair_of], self._ids_of(1, [_CANCELLED, *outcome_keys])[outcome]
            number = self._number[p, o]
            new = np.flatnonzero(number < 0)  # (verdicts not known yet: the first sessions')
            if len(new):
                number[new] = 0
                settled = new[outcome[new] > 0]
                settled = settled[np.argsort(pair_of[settled], kind="stable")]  # a pair's together
                number[settled] = np.arange(len(self.parts), len(self.parts) + len(settled))
                # a pair's rows from its first to the next pair's (as lists: np.split's arrays, one a pair, cost a
                # run's first session ~4 us each on its thousand-odd pairs)
                at = [0, *(np.flatnonzero(np.diff(pair_of[settled])) + 1).tolist(), len(settled)]
                keys = [outcome_keys[k - 1] for k in outcome[settled].tolist()]
                pair_codes, pair_chosen = code[settled].tolist(), chosen[settled].tolist()
                for start, end in zip(at[:-1], at[1:], strict=True) if len(settled) else ():
                    self._add(units(bet_types[pair_codes[start]], selections[pair_chosen[start]], keys[start:end]))
                self._number[p[new], o[new]] = number[new]
            return number

    def _add(self, units: UnitColumns) -> None:
        for name in _PARTS:
            getattr(self.parts, name).extend(getattr(units, name))

    def _ids_of(self, axis: int, values: Sequence) -> np.ndarray:
        ids = self._ids[axis]
        at = np.array([ids.setdefault(v, len(ids)) for v in values], np.int64)
        if len(ids) > self._number.shape[axis]:  # room for the new ids, doubling
            grow = [(0, 0)] * 2
            grow[axis] = (0, 2 * len(ids) - self._number.shape[axis])
            self._number = np.pad(self._number, grow, constant_values=-1)
        return at

    def column(self, name: str) -> np.ndarray | pa.Array:
        """One part of every verdict, by number: numerator, denominator (of the credit per unit staked),
        refused (it raises a finding of its own), why, finding, expected, recorded."""
        with self._lock:
            have = self._columns.get(name)
            done = 0 if have is None else len(have)
            if done < len(self.parts):
                if name == "refused":
                    new = np.array([f is not None for f in self.parts.finding[done:]], bool)
                elif name in _WORDS:
                    new = pa.array(getattr(self.parts, name)[done:], pa.string())
                else:
                    new = np.array(getattr(self.parts, name)[done:], np.int64)
                self._columns[name] = new if have is None else (
                    pa.concat_arrays([have, new]) if name in _WORDS else np.concatenate([have, new]))
            return self._columns[name]


def one_by_one(unit: Callable[[str, str | None, Hashable], UnitVerdict]
               ) -> Callable[[str, str | None, Sequence[Hashable]], UnitColumns]:
    """OutcomeRule.units of a game whose rule gives a verdict an outcome at a time: unit() on each outcome key."""
    return lambda bet_type, selection, keys: UnitColumns.of([unit(bet_type, selection, k) for k in keys])


_CANCELLED = object()  # the outcome key of a cancelled round
_PARTS = [f.name for f in fields(UnitColumns)]
_WORDS = ("why", "finding", "expected", "recorded")


@kernel
def settle_bets(order, round_of, account, accounts, stake, table_max, rows, paid, placed_at, closed_at, verdict_of,
                numerator, denominator, refused, bet_type, limited, low, high, rounding):
    """over_table_max over columns (account_round_totals: every bet's account total on its round above the table
    maximum, 0 elsewhere; `order`: its order), then settle() of the settled bets `rows` (`paid` ... `bet_type`:
    theirs): (over, their credits, whether each raises a finding). One kernel, so that a process loads one
    compiled module for the pass rather than two (~4 ms each)."""
    over = account_round_totals(order, round_of, account, stake, table_max, accounts)
    credit, flagged = settle(stake[rows], paid, placed_at, closed_at, verdict_of, numerator, denominator, refused,
                             bet_type, limited, low, high, over[rows], rounding)
    return over, credit, flagged


def audit_group_columns(table: TableFacts, group_id: str, rounds: RoundColumns, bets: BetColumns, game: OutcomeRule,
                        known: Verdicts | None = None) -> ColumnAudit:
    """audit_group over columns: the same credits, findings (in the same order), explanations and reasons.
    `known`: the game's unit verdicts, kept across calls with the same rules (None: this call's own)."""
    checks = BetChecks(table, group_id)
    m, n = len(rounds), len(bets)
    kinds: dict[int, list[str]] = {}
    reasons: list[str | None] = []
    descriptions: list[str | None] = []
    heads: list[str] = []
    outcome_of = np.full(m, -1, np.int64)  # the round's distinct outcome; -1: cancelled (or not settled)
    outcomes: dict[Hashable, int] = {}
    known = Verdicts() if known is None else known
    words = _OutcomeWords(game, known.outcome_words)
    for i, (status, outcome) in enumerate(zip(rounds.status, rounds.outcome, strict=True)):
        description, head, problem, key = words(outcome)
        problem = problem if status == "settled" else None
        if problem is None and status in ("settled", "cancelled"):
            reasons.append(None)
            if status == "settled":
                outcome_of[i] = outcomes.setdefault(key, len(outcomes))
        else:
            facts = RoundFacts(rounds.round_id[i], rounds.round_no[i], status, int(rounds.betting_closed_at[i]))
            reasons.append(unsettled_reason(facts, problem))
        if problem is not None:
            kinds[i] = [problem.kind]
            checks.outcome_finding(problem, rounds.round_id[i], rounds.round_no[i])
        descriptions.append(description)
        heads.append(head)

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
    keys, key_of = distinct(pair * (len(outcomes) + 1) + outcome_of[at[rows]] + 1)
    pair_key, outcome = np.divmod(keys, len(outcomes) + 1)
    verdict_of = known.numbers(game.units, bets.bet_types, bets.selections, list(outcomes),
                               *np.divmod(pair_key, width), outcome)[key_of]
    pairs, pair_of_key = distinct(pair_key)  # (the bets' distinct pairs)

    # the credits and the checks in one pass (BetChecks.check's boundaries: limits inclusive, a bet at the
    # close on time); only the bets it flags are put in words
    limits = _limit_columns(table, bets.bet_types)
    over, credit, flagged = settle_bets(
        np.lexsort((bets.placed_at, ri)), ri, bets.account, int(bets.account.max()) + 1 if n else 0, bets.stake,
        table.table_max, rows, paid, bets.placed_at[rows], rounds.betting_closed_at[at[rows]], verdict_of,
        *(known.column(part) for part in ("numerator", "denominator", "refused")), bet_type, *limits,
        kernels.ROUNDING_CODES[game.rounding])
    expected = np.zeros(n, np.int64)
    expected[rows] = credit
    raised = np.flatnonzero(flagged)
    found = _bet_findings(checks, rounds, bets, rows[raised], at[rows[raised]], credit[raised], over[rows[raised]],
                          verdict_of[raised], known, limits)
    for r, kind in zip(at[rows[raised]][found.bets].tolist(), found.table["kind"].to_pylist(), strict=True):
        kinds.setdefault(r, []).append(kind)

    explanation, explanation_at = betting_lines.explanation(
        heads, bets.bet_id, rows, at[rows], _named(bets, pairs), pair_of_key[key_of], stake, credit, paid,
        known.column("why"), verdict_of, table.currency)
    finding_kinds = [()] * m
    for r, said in kinds.items():
        finding_kinds[r] = tuple(dict.fromkeys(said))
    findings = pa.concat_tables([finding_columns(checks.findings), found.table])
    return ColumnAudit(expected, settled, unsettled, findings, descriptions, explanation, explanation_at,
                       finding_kinds, reasons)


class _OutcomeWords:
    """The game's description, explanation head, problem (were its round settled) and key (a valid outcome's, as
    units() takes it; None for another) of an outcome, worked out once per distinct outcome as recorded, told apart
    by type and repr (1 and True, (1, 2, 3) and [1, 2, 3] are different records); `said`: those of the earlier
    sessions under the same rules (Verdicts.outcome_words: a day's sessions repeat the same few hundred)."""

    def __init__(self, game: OutcomeRule, said: dict) -> None:
        self.game = game
        self.said: dict[tuple[type, str], tuple[str | None, str, OutcomeProblem | None, Hashable]] = said

    def __call__(self, outcome: object) -> tuple[str | None, str, OutcomeProblem | None, Hashable]:
        key = (type(outcome), repr(outcome))
        said = self.said.get(key)
        if said is None:
            game = self.game
            problem = game.problem(outcome)
            said = self.said[key] = (game.describe(outcome), game.head(outcome), problem,
                                     game.key(outcome) if problem is None else None)
        return said


def distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values, each value's index among them): np.unique's return_inverse without its sort. Codes
    (small integers, at least 0) by a table with a slot a value, the distinct values ascending (a few passes of
    numpy: hashing a table's ~60,000 bets costs several times more); other values by hashing (Arrow's
    dictionary encoding), in the order they first appear."""
    values = np.asarray(values, np.int64)
    if len(values) and values.min() >= 0 and values.max() < 8 * len(values) + 1024:
        present = np.zeros(values.max() + 1, bool)
        present[values] = True
        uniques = np.flatnonzero(present)
        slot = np.empty(len(present), np.intp)
        slot[uniques] = np.arange(len(uniques))
        return uniques.astype(np.int64), slot[values]
    encoded = pa.array(values, pa.int64()).dictionary_encode()
    return (encoded.dictionary.to_numpy(zero_copy_only=False),
            encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp))


def value_texts(values: np.ndarray, text: Callable[[int], str]) -> pa.Array:
    """text(value) of each value, worked out once per distinct value."""
    values_of, value_of = distinct(values)
    return pa.array([text(v) for v in values_of.tolist()], pa.string()).take(value_of)


def _named(bets: BetColumns, pairs: np.ndarray) -> list[str]:
    """bet_named of each (type, selection) pair, bet_type code * len(selections) + selection code (as BET_WHAT
    names them)."""
    width = len(bets.selections)
    return [bet_named(bets.bet_types[code], bets.selections[chosen])
            for code, chosen in (divmod(pair, width) for pair in pairs.tolist())]


def _names(bets: BetColumns, bet_type: np.ndarray, selection: np.ndarray) -> pa.Array:
    """bet_named of each bet: its type and selection, as BET_WHAT names them."""
    pairs, pair_of = distinct(bet_type * len(bets.selections) + selection)
    return pa.array(_named(bets, pairs), pa.string()).take(pa.array(pair_of))


def filled(template: str, parts: Mapping[str, pa.Array | str]) -> pa.Array | str:
    """The template (engine.betting's words) filled row by row, each placeholder a column of `parts` (or one
    text for every row): joined column by column in Arrow; a text where no part is a column."""
    pieces: list[pa.Array | str] = []
    for literal, name, _, _ in Formatter().parse(template):
        pieces += [literal] if literal else []
        pieces += [parts[name]] if name is not None else []
    if not any(isinstance(piece, pa.Array) for piece in pieces):
        return "".join(pieces)
    return pc.binary_join_element_wise(*pieces, "")


def filled_wording(wording: Wording, **parts: pa.Array | str) -> list[pa.Array | str]:
    """A finding's expected, recorded and message, filled."""
    return [filled(template, parts) for template in (wording.expected, wording.recorded, wording.message)]


def paid_findings(paid: np.ndarray, credit: np.ndarray, what: pa.Array, round_text: pa.Array,
                  amounts: Callable[[np.ndarray], pa.Array]) -> list[tuple[np.ndarray, list[pa.Array | str]]]:
    """The OVERPAID and UNDERPAID findings of bets paid other than their credit, in BET_WORDS' words: (which bets,
    kind expected recorded message). `what`, `round_text`: each bet's words for itself and its round; `amounts`:
    money as text in the table's currency."""
    delta = paid - credit
    found = []
    for kind, w in (("OVERPAID", np.flatnonzero(delta > 0)), ("UNDERPAID", np.flatnonzero(delta < 0))):
        if len(w):
            at = pa.array(w, pa.int64())
            found.append((w, [kind, *filled_wording(
                BET_WORDS[kind], what=what.take(at), round=round_text.take(at), owed=amounts(credit[w]),
                paid=amounts(paid[w]), delta=amounts(np.abs(delta[w])))]))
    return found


def _limit_columns(table: TableFacts, bet_types: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """By bet type code: whether the table limits its stakes, and the lowest and highest stake it takes."""
    limits = [table.limits.get(t) for t in bet_types]
    return (np.array([lim is not None for lim in limits], bool),
            *(np.array([lim[end] if lim else 0 for lim in limits], np.int64) for end in (0, 1)))


def finding_columns(found: Sequence[Finding]) -> pa.Table:
    """Finding objects as FINDING_COLUMNS (pipelines.convert dates them as the findings output)."""
    return pa.table([pa.array([getattr(f, name) for f in found], pa.string()) for name in FINDING_COLUMNS.names],
                    schema=FINDING_COLUMNS)


@dataclass(frozen=True)
class _BetFindings:
    table: pa.Table  # FINDING_COLUMNS, in audit_group's order
    bets: np.ndarray  # each finding's bet: its index among the flagged bets


# each bet's findings in the order BetChecks.check raises them, after its verdict's own
_VERDICT, _PAID, _LIMIT, _LATE, _TOTAL = range(_SLOTS := 5)
_REFUSALS = ("BET_TYPE_NOT_OFFERED", "SELECTION_INVALID")  # a refused bet's own (engine.betting.REFUSED)
# their words (a refused bet's: its verdict's expected, recorded and why): the table's texts, a finding's (the
# vocabulary's) and its amounts, written by engine.finding_texts' kernel
_WRITER = FindingTexts(
    {**{kind: Wording("{expected}", "{recorded}", REFUSED) for kind in _REFUSALS},
     **{kind: BET_WORDS[kind] for kind in ("OVERPAID", "UNDERPAID", "STAKE_BELOW_MIN", "STAKE_ABOVE_MAX", "LATE_BET",
                                           "ROUND_STAKE_ABOVE_TABLE_MAX")}}, BET_WHAT, ("table_id", "shoe_id", "cap"),
    ("round_id", "bet_id", "account_id", "named", "bet_type", "round", "closed", "placed", "expected", "recorded",
     "why"), ("stake", "owed", "paid", "delta", "limit", "total"), {"account": "account_id"})


def _bet_findings(checks: BetChecks, rounds: RoundColumns, bets: BetColumns, i: np.ndarray, r: np.ndarray,
                  credit: np.ndarray, over: np.ndarray, verdict_of: np.ndarray, known: Verdicts,
                  limits: tuple[np.ndarray, np.ndarray, np.ndarray]) -> _BetFindings:
    """The findings audit_group raises on the flagged bets `i` (rows of `bets`, ascending; `r` their rounds,
    `credit` what each is owed, `over` its account's round total above the table maximum or 0, `verdict_of`
    its verdict's number in `known`, `limits` _limit_columns'): a refused bet's own (BET_TYPE_NOT_OFFERED,
    SELECTION_INVALID), then BetChecks.check's (paid against owed, the limits of its type, the window, the
    account's round total), bet by bet, in engine.betting's words (BET_WORDS): which bets raise which kind found
    column by column, then every finding's columns written by one kernel (engine.finding_texts)."""
    bet_type, stake, paid, placed = bets.bet_type[i], bets.stake[i], bets.paid[i], bets.placed_at[i]
    closed = rounds.betting_closed_at[r]
    found: list[tuple[int, np.ndarray, np.ndarray]] = []  # (slot, which bets, their findings' kinds)

    def add(slot: int, kind: str, mask: np.ndarray) -> None:
        w = np.flatnonzero(mask)
        if len(w):
            found.append((slot, w, np.full(len(w), _WRITER.kind(kind))))

    w = np.flatnonzero(known.column("refused")[verdict_of])
    if len(w):
        refusals = known.column("finding").take(pa.array(verdict_of[w], pa.int64())).dictionary_encode()
        found.append((_VERDICT, w, np.array([_WRITER.kind(kind) for kind in refusals.dictionary.to_pylist()],
                                            np.int64)[refusals.indices.to_numpy(zero_copy_only=False)]))
    delta = paid - credit
    add(_PAID, "OVERPAID", delta > 0)
    add(_PAID, "UNDERPAID", delta < 0)
    limited, low, high = (column[bet_type] for column in limits)
    below = limited & (stake < low)
    add(_LIMIT, "STAKE_BELOW_MIN", below)
    add(_LIMIT, "STAKE_ABOVE_MAX", limited & ~below & (stake > high))
    add(_LATE, "LATE_BET", placed > closed)
    add(_TOTAL, "ROUND_STAKE_ABOVE_TABLE_MAX", over > 0)
    if not found:
        return _BetFindings(FINDING_COLUMNS.empty_table(), np.zeros(0, np.intp))
    on, kind_of = in_bet_order(found, _SLOTS)
    table = checks.table
    words = _WRITER.vocabulary([table.table_id, checks.group_id, checks.money(table.table_max)], table.currency)
    pairs, pair_of = distinct(bet_type[on] * len(bets.selections) + bets.selection[i][on])
    said = [words.block(pa.array(rounds.round_id, pa.string())) + r[on],
            words.block(bets.bet_id.take(pa.array(i[on], pa.int64()))) + np.arange(len(on)),
            words.block(pa.array(bets.accounts, pa.string())) + bets.account[i][on],
            words.block(pa.array(_named(bets, pairs), pa.string())) + pair_of,
            words.block(pa.array(bets.bet_types, pa.string())) + bet_type[on],
            words.block(pc.cast(pa.array(rounds.round_no, pa.int64()), pa.string())) + r[on],
            *(_WRITER.of_kinds(("LATE_BET",), kind_of, on, lambda b, us=us: words.block(pa.array(
                us_texts(us[b]), pa.string())) + np.arange(len(b))) for us in (closed, placed)),
            *(_WRITER.of_kinds(_REFUSALS, kind_of, on, lambda b, name=name: words.block(known.column(name).take(
                pa.array(verdict_of[b], pa.int64()))) + np.arange(len(b))) for name in ("expected", "recorded",
                                                                                        "why"))]
    amounts = [column[on] for column in (stake, credit, paid, np.abs(delta), np.where(below, low, high), over)]
    return _BetFindings(_WRITER.written(kind_of, words, said, amounts), on)
