"""The checks every game makes of a bet, whatever the bet covers: its stake against the limits of its
type, the betting window, an account's total on a round against the table maximum, and what it was
paid against what it is owed; and the settlement of a group of rounds whose outcome is one recorded
fact, where the game says what a bet is owed and these checks only compare.

Findings name the table and the group of rounds the audit was given (a shoe, a session) as `shoe_id`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Generic, TypeVar

import numpy as np

from engine.findings import Finding, format_money
from engine.games.interface import BetOutcome
from engine.kernels import kernel, writer
from engine.money import round_to_unit
from engine.ruleset_file import FieldReader

INVALID_SELECTION = ("void", "lose")  # what a bet whose selection is not a legal bet of its type is owed


@dataclass(frozen=True)
class TableFacts:
    table_id: str
    currency: str
    table_max: int  # an account's total stake on one round, at most
    limits: Mapping[str, tuple[int, int]]  # bet type -> (min_stake, max_stake)


@dataclass(frozen=True)
class RecordedBet:
    """A bet that names its type and what it covers (no seat, no box)."""

    bet_id: str
    round_index: int  # into the group's rounds
    account_id: str
    bet_type: str
    selection: str | None  # as recorded; None or '' for a bet that selects nothing
    stake: int
    paid: int  # credited: stake + win, 0 on a loss
    placed_at: int  # microseconds since the epoch, UTC


@dataclass(frozen=True)
class QuarantinedBet:
    """A bet of a round whose row went to quarantine as it was read (it broke the contract's row rules):
    never settled, but its neighbours' rules still see it. What it names (its round, account, type and
    seat) stands as recorded; its stake only where it is an amount the audit can count (None: unknown).
    A rule that needs a neighbour counts it as there and names it in its finding; one that needs the
    neighbour's stake and finds it unknown does not judge (docs/findings.md, "Quarantined neighbours")."""

    bet_id: str | None
    round_index: int  # into the group's rounds
    account_id: str | None
    bet_type: str | None
    seat: int | None
    stake: int | None
    placed_at: int | None  # microseconds since the epoch, UTC
    reason: str

    def named(self) -> str:
        """The bet in a finding's words: its id, type and why it is in quarantine."""
        return f"bet {self.bet_id} ({self.bet_type}), in quarantine: {self.reason}"


def stake_limit_breach(stake: int, limits: tuple[int, int]) -> str | None:
    """STAKE_BELOW_MIN / STAKE_ABOVE_MAX, or None: a stake exactly at a limit is within it."""
    low, high = limits
    if stake < low:
        return "STAKE_BELOW_MIN"
    if stake > high:
        return "STAKE_ABOVE_MAX"
    return None


def is_late(placed_at: int, betting_closed_at: int) -> bool:
    """A bet placed exactly at the close of betting is on time ("No more bets" ends the window)."""
    return placed_at > betting_closed_at


def over_table_max(bets: Sequence[RecordedBet], table_max: int) -> dict[int, int]:
    """The bets the table should have refused -> the account's total on the round with each: an
    account's bets on one round taken in the order they were placed (ties in record order), from the
    one that takes its total above table_max on (a total exactly at table_max is within it)."""
    order = sorted(range(len(bets)), key=lambda i: (bets[i].round_index, bets[i].placed_at, i))
    totals: dict[tuple[int, str], int] = {}
    over = {}
    for i in order:
        key = (bets[i].round_index, bets[i].account_id)
        totals[key] = totals.get(key, 0) + bets[i].stake
        if totals[key] > table_max:
            over[i] = totals[key]
    return over


def us_text(us: int) -> str:
    at = datetime.fromtimestamp(us / 1_000_000, UTC)
    if at.year < 1000:  # (strftime's %Y does not pad a year below 1000 to four digits; isoformat does)
        return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return at.isoformat(timespec="microseconds")[:-6] + "Z"  # (strftime's text, a third of its time)


# us_text's float seconds name the exact microsecond from 1970 until 2**32 s (2106): numpy's text is the same there
_EXACT_US = (0, 2**32 * 1_000_000)


def us_texts(us: np.ndarray) -> list[str]:
    """us_text of each instant (int64 microseconds), formatted at once where numpy's ISO text is the same."""
    us = np.asarray(us, np.int64)
    texts = np.char.add(np.datetime_as_string(us.astype("datetime64[us]"), unit="us"), "Z").tolist()
    for i in np.flatnonzero((us < _EXACT_US[0]) | (us >= _EXACT_US[1])).tolist():
        texts[i] = us_text(int(us[i]))
    return texts


_US_DAY = 86_400_000_000


def exact(us: np.ndarray) -> np.ndarray:
    """Where an instant's us_text is 27 bytes written by arithmetic (1970 to 2106: _EXACT_US; put_instant)."""
    return (us >= _EXACT_US[0]) & (us < _EXACT_US[1])


def us_bytes(us: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """us_texts' texts as a text kernel takes them (engine.kernels.utf8_texts): their UTF-8 bytes, and text i's
    offsets (i and i + 1) into them. Within _EXACT_US (1970 to 2106) each text is _US_WIDTH bytes, its digits written
    by a kernel (no Python string an instant); outside it, us_texts' own."""
    us = np.asarray(us, np.int64)
    if not exact(us).all():
        encoded = [text.encode() for text in us_texts(us)]
        return (np.frombuffer(b"".join(encoded), np.uint8).copy(),
                np.concatenate([[0], np.cumsum([len(e) for e in encoded])]).astype(np.int64))
    return _us_digits(us), np.arange(len(us) + 1, dtype=np.int64) * _US_WIDTH


_US_WIDTH = 27  # len("1970-01-01T00:00:00.000000Z")


@kernel
def _us_digits(us: np.ndarray) -> np.ndarray:
    """The texts of instants within _EXACT_US, _US_WIDTH bytes each, one after another (put_instant's). (A kernel:
    numpy's column a digit took ~30 passes over the instants.)"""
    text = np.empty(len(us) * _US_WIDTH, np.uint8)
    last = -1  # (the day of the instant before: its date's bytes copied, the instants being mostly of one day)
    for i in range(len(us)):
        at, days = i * _US_WIDTH, us[i] // _US_DAY
        if days == last:
            for k in range(11):
                text[at + k] = text[at - _US_WIDTH + k]
        else:
            _put_date(text, at, days)
            last = days
        _put_time(text, at + 11, us[i] % _US_DAY)
    return text


@writer
def put_instant(buf, at, dry, us):
    """us_text(us) at buf[at:] (dry: only counted) for an instant `exact` calls exact (_US_WIDTH bytes,
    "1970-01-01T00:00:00.000000Z"); where the next byte goes."""
    if not dry:
        _put_time(buf, _put_date(buf, at, us // _US_DAY), us % _US_DAY)
    return at + _US_WIDTH


@writer
def _put_date(buf, at, days):
    """The date `days` after 1970-01-01 and a 'T' (11 bytes): the proleptic Gregorian date by H. Hinnant's
    civil_from_days (eras of 400 years from 0000-03-01)."""
    z = days + 719_468  # (1970 on: one era of 400 years or the next)
    era = z // 146_097
    day_of_era = z - era * 146_097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    from_march = (5 * day_of_year + 2) // 153
    month = from_march + 3 if from_march < 10 else from_march - 9
    p = _digits(buf, at, year_of_era + era * 400 + (month <= 2), 4, 45)  # '-'
    return _digits(buf, _digits(buf, p, month, 2, 45), day_of_year - (153 * from_march + 2) // 5 + 1, 2, 84)  # 'T'


@writer
def _put_time(buf, at, of_day):
    """The time `of_day` microseconds after midnight and a 'Z' (16 bytes, "00:00:00.000000Z")."""
    seconds = of_day // 1_000_000
    p = _digits(buf, _digits(buf, at, seconds // 3600, 2, 58), seconds // 60 % 60, 2, 58)  # ':'
    return _digits(buf, _digits(buf, p, seconds % 60, 2, 46), of_day % 1_000_000, 6, 90)  # '.', 'Z'


@writer
def _digits(buf, at, n, width, after):
    """n's last `width` decimal digits (0-padded), then the byte `after`; where the next byte goes."""
    for i in range(width):
        buf[at + width - 1 - i] = 48 + n % 10
        n //= 10
    buf[at + width] = after
    return at + width + 1


@dataclass(frozen=True)
class Wording:
    """A finding's words, each with {placeholders}: what it expected, what was recorded, its message."""

    expected: str
    recorded: str
    message: str

    def fill(self, **parts: object) -> tuple[str, str, str]:
        return self.expected.format(**parts), self.recorded.format(**parts), self.message.format(**parts)

    def fill_rows(self, **columns: Sequence[object]) -> tuple[list[str], list[str], list[str]]:
        """fill row by row, each part a column (all of one length): the expected texts, recorded, messages."""
        rows = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
        expected, recorded, message = ([template.format(**row) for row in rows]
                                       for template in (self.expected, self.recorded, self.message))
        return expected, recorded, message


# The words of a bet's findings and of its explanation line, written once: BetChecks and audit_group fill
# them a bet at a time, engine.betting_columns column by column, the blackjack and casino stud audits with
# their own `what` ({round} is the round's number in its group here, its round id there).
BET_WHAT = "Bet {bet_id} ({named}, stake {stake})"  # a bet in its findings' words; `named`: bet_named's
BET_LINE = "{what}: {why}; owed {owed}, paid {paid}"  # its line in its round's explanation
REFUSED = "{what}: {why}."  # the message of its verdict's own finding (BET_TYPE_NOT_OFFERED, SELECTION_INVALID)
BET_WORDS = {
    **{kind: Wording("{owed}", "{paid}", "{what} in round {round} was paid {paid}, expected {owed}: "
                     f"{kind.lower()} by {{delta}}.") for kind in ("OVERPAID", "UNDERPAID")},
    "STAKE_BELOW_MIN": Wording(">= {limit}", "{stake}", "{what} is below the {bet_type} minimum {limit}."),
    "STAKE_ABOVE_MAX": Wording("<= {limit}", "{stake}", "{what} is above the {bet_type} maximum {limit}."),
    "LATE_BET": Wording("placed by {closed}", "placed at {placed}",
                        "{what} was placed at {placed}, after betting closed at {closed} for round {round}."),
    "ROUND_STAKE_ABOVE_TABLE_MAX": Wording(
        "account total <= {cap}", "{total}",
        "{what} brings {account}'s total stake on round {round} to {total}, above the table maximum {cap}."),
}


def bet_named(bet_type: str, selection: str | None) -> str:
    """A bet's type and what it selects, as BET_WHAT names them (a selection of None or '' is not named)."""
    return f"{bet_type} {selection!r}" if selection else bet_type


@dataclass
class BetChecks:
    """Collects the findings of one group of rounds of one table."""

    table: TableFacts
    group_id: str
    findings: list[Finding] = field(default_factory=list)
    # amount -> its text: a group writes the same stakes and credits thousands of times
    _money_text: dict[int, str] = field(default_factory=dict, repr=False, compare=False)

    def money(self, amount: int) -> str:
        text = self._money_text.get(amount)
        if text is None:
            text = self._money_text[amount] = format_money(int(amount), self.table.currency)
        return text

    def what(self, bet: RecordedBet) -> str:
        return BET_WHAT.format(bet_id=bet.bet_id, named=bet_named(bet.bet_type, bet.selection),
                               stake=self.money(bet.stake))

    def round_finding(self, kind: str, round_id: str, expected: str, recorded: str, message: str) -> None:
        self.findings.append(Finding(kind, self.table.table_id, self.group_id, round_id, None, expected, recorded,
                                     message))

    def outcome_finding(self, problem: OutcomeProblem, round_id: str, round_no: int) -> None:
        """The finding of a settled round whose outcome cannot be settled on."""
        self.round_finding(problem.kind, round_id, problem.expected, problem.recorded,
                           f"Round {round_no} of {self.group_id}: {problem.recorded}, expected {problem.expected}.")

    def bet_finding(self, kind: str, bet: RecordedBet, round_id: str, expected: str, recorded: str,
                    message: str) -> None:
        self.findings.append(Finding(kind, self.table.table_id, self.group_id, round_id, bet.bet_id, expected,
                                     recorded, message, bet.account_id))

    def said(self, kind: str, bet: RecordedBet, round_id: str, **parts: object) -> None:
        """The finding `kind` of BET_WORDS on the bet, its words filled with `parts`."""
        self.bet_finding(kind, bet, round_id, *BET_WORDS[kind].fill(**parts))

    def check(self, bet: RecordedBet, round_id: str, round_no: int, betting_closed_at: int, credit: int,
              round_total_over_max: int | None, what: str | None = None) -> None:
        """Paid against owed, the limits of its type, the window, the account's round total (`what`: the
        bet in words, what(bet), where the caller has it)."""
        what, money = what or self.what(bet), self.money
        delta = bet.paid - credit
        if delta:
            self.said("OVERPAID" if delta > 0 else "UNDERPAID", bet, round_id, what=what, round=round_no,
                      owed=money(credit), paid=money(bet.paid), delta=money(abs(delta)))
        if bet.bet_type in self.table.limits:
            low, high = self.table.limits[bet.bet_type]
            breach = stake_limit_breach(bet.stake, (low, high))
            if breach is not None:
                self.said(breach, bet, round_id, what=what, bet_type=bet.bet_type, stake=money(bet.stake),
                          limit=money(low if breach == "STAKE_BELOW_MIN" else high))
        if is_late(bet.placed_at, betting_closed_at):
            self.said("LATE_BET", bet, round_id, what=what, round=round_no, closed=us_text(betting_closed_at),
                      placed=us_text(bet.placed_at))
        if round_total_over_max is not None:
            self.said("ROUND_STAKE_ABOVE_TABLE_MAX", bet, round_id, what=what, account=bet.account_id,
                      round=round_no, total=money(round_total_over_max), cap=money(self.table.table_max))


# -- a group of rounds, each settled on one recorded outcome ------------------------------------------


@dataclass(frozen=True)
class RoundFacts:
    """What every recorded round says besides its outcome (each game's RecordedRound adds that)."""

    round_id: str
    round_no: int
    status: str  # settled | cancelled
    betting_closed_at: int  # microseconds since the epoch, UTC


R = TypeVar("R", bound=RoundFacts)


@dataclass(frozen=True)
class BetVerdict:
    """What a bet is owed on its round, and why in words (the explanation line, the finding)."""

    credit: int
    why: str
    finding: str | None = None  # a kind the bet itself raises: BET_TYPE_NOT_OFFERED, SELECTION_INVALID
    expected: str = ""  # what that finding expected and what was recorded
    recorded: str = ""


@dataclass(frozen=True)
class Payout:
    """What a legal, offered bet returns per unit staked on one outcome, and the rule that decided it."""

    credit: Fraction  # stake + win per unit staked; 0 on a loss
    rule: str  # e.g. "won 17:1", "lose"


def credit_of(stake: int, payout: Payout, rounding: str) -> int:
    """The credit in minor units: exact, rounded once by the ruleset's rule."""
    return round_to_unit(stake * payout.credit.numerator, payout.credit.denominator, rounding)


def read_invalid_selection(r: FieldReader, data: dict) -> str:
    """The ruleset setting `invalid_selection`, one of INVALID_SELECTION."""
    setting = r.get(data, "invalid_selection", "invalid_selection", str)
    if setting not in INVALID_SELECTION:
        raise r.fail("invalid_selection", f"{setting!r} is not one of {', '.join(INVALID_SELECTION)}")
    return setting


def equally_likely(payouts: Sequence[Payout]) -> tuple[BetOutcome, ...]:
    """A bet's payouts over equally likely outcomes grouped by rule and credit: the exact distribution
    an RTP row carries (wins not rounded)."""
    chances: dict[tuple[str, Fraction], Fraction] = {}
    for payout in payouts:
        key = (payout.rule, payout.credit)
        chances[key] = chances.get(key, Fraction(0)) + Fraction(1, len(payouts))
    return tuple(BetOutcome(rule, p, credit) for (rule, credit), p in chances.items())


@dataclass(frozen=True)
class UnitVerdict:
    """What a bet of one type and selection is owed on one outcome per unit staked, and why: the same
    whatever the stake (`owed` scales it), so a group works it out once per type, selection and outcome."""

    payout: Payout
    why: str
    finding: str | None = None  # as BetVerdict's
    expected: str = ""
    recorded: str = ""

    def owed(self, stake: int, rounding: str) -> BetVerdict:
        return BetVerdict(credit_of(stake, self.payout, rounding), self.why, self.finding, self.expected,
                          self.recorded)


REFUNDED, LOST = Payout(Fraction(1), "refunded"), Payout(Fraction(0), "lost")


def unit_refusal(ruleset_id: str, bet_type: str, selection: str | None, offered: bool, legal: bool,
                 invalid_selection: str) -> UnitVerdict | None:
    """The verdict on a bet the table should not have taken, or None for a bet to settle.
    A bet type the ruleset does not offer is refunded (as baccarat and blackjack do); a selection
    that is not a legal bet of its type is owed what the ruleset's `invalid_selection` says."""
    if not offered:
        return UnitVerdict(REFUNDED, f"{ruleset_id} does not offer {bet_type}: refunded", "BET_TYPE_NOT_OFFERED",
                           f"a bet type of {ruleset_id}", bet_type)
    if not legal:
        void = invalid_selection == "void"
        return UnitVerdict(REFUNDED if void else LOST,
                           f"{selection!r} is not a legal {bet_type}: {'void, refunded' if void else 'lost'}",
                           "SELECTION_INVALID", f"a legal {bet_type} selection", repr(selection))
    return None


def refusal(ruleset_id: str, bet: RecordedBet, offered: bool, legal: bool, invalid_selection: str) -> BetVerdict | None:
    """unit_refusal of a recorded bet: its stake back (refunded) or nothing (lost)."""
    unit = unit_refusal(ruleset_id, bet.bet_type, bet.selection, offered, legal, invalid_selection)
    return None if unit is None else unit.owed(bet.stake, "floor")  # a whole stake or nothing: no rounding


class VerdictMemo:
    """A group's verdicts, each worked out once per bet type, selection and outcome (a session repeats
    them thousands of times); a bet's verdict is then its stake's share, rounded by `rounding`.
    `unit(bet_type, selection, outcome)` must depend on nothing else."""

    def __init__(self, unit: Callable[[str, str | None, object], UnitVerdict], rounding: str):
        self.unit, self.rounding = unit, rounding
        self.known: dict[tuple, UnitVerdict] = {}

    def __call__(self, bet: RecordedBet, outcome: object) -> BetVerdict:
        key = (bet.bet_type, bet.selection, outcome)
        unit = self.known.get(key)
        if unit is None:
            unit = self.known[key] = self.unit(*key)
        return unit.owed(bet.stake, self.rounding)


@dataclass(frozen=True)
class OutcomeProblem:
    """A settled round whose outcome cannot be settled on: its bets go to quarantine with the reason."""

    kind: str  # OUTCOME_MISSING | OUTCOME_INVALID
    expected: str
    recorded: str


@dataclass(frozen=True)
class RoundReport:
    """A round as the audit settled it: what the investigator's replay shows."""

    round_index: int
    outcome: object  # as the round recorded it
    description: str | None  # the outcome in words; None when no valid outcome was recorded
    explanation: tuple[str, ...]  # the outcome, then one line per bet: what it covers, won or lost and why
    finding_kinds: tuple[str, ...]  # found on the round or its bets
    unsettled_reason: str | None  # the round cannot be settled: its bets go to quarantine


@dataclass
class GroupAudit:
    rounds: list[RoundReport]
    expected: list[int | None]  # per bet; None: its round cannot be settled (`unsettled` says why)
    unsettled: list[str | None]
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class OutcomeJudge(Generic[R]):
    """What a game tells audit_group about its rounds."""

    outcome: Callable[[R], object]  # the recorded outcome of a round
    problem: Callable[[R], OutcomeProblem | None]  # why a settled round's outcome cannot be settled on
    judge: Callable[[R, RecordedBet], BetVerdict]  # what a bet is owed on a round with a valid outcome
    describe: Callable[[R], str | None]  # the outcome in words, None when it is not valid
    explain: Callable[[R, list[str]], list[str]]  # the round's explanation around its bets' lines


def unsettled_reason(r: RoundFacts, problem: OutcomeProblem | None) -> str | None:
    """Why a round's bets cannot be settled (None: they can); the bet-at-a-time
    audit here and the column path (engine/betting_columns.py) both ask it."""
    if r.status not in ("settled", "cancelled"):
        return f"round {r.round_no}: status {r.status!r} is neither settled nor cancelled"
    if problem is None:
        return None
    return f"round {r.round_no}: {problem.recorded}, not {problem.expected}: cannot be settled"


def audit_group(table: TableFacts, group_id: str, rounds: Sequence[R], bets: Sequence[RecordedBet],
                game: OutcomeJudge[R]) -> GroupAudit:
    """Every bet of the group owed and checked. A cancelled round refunds every bet whatever its
    outcome; a settled round with no usable outcome leaves its bets unsettled (no bet findings: they
    go to quarantine, as blackjack's); otherwise the game's `judge` says what each bet is owed."""
    checks = BetChecks(table, group_id)
    kinds: list[list[str]] = [[] for _ in rounds]
    lines: list[list[str]] = [[] for _ in rounds]
    reasons: list[str | None] = []
    for r, found in zip(rounds, kinds, strict=True):
        problem = game.problem(r) if r.status == "settled" else None
        reasons.append(unsettled_reason(r, problem))
        if problem is not None:
            found.append(problem.kind)
            checks.outcome_finding(problem, r.round_id, r.round_no)
    over = over_table_max(bets, table.table_max)
    expected: list[int | None] = []
    unsettled: list[str | None] = []
    for i, bet in enumerate(bets):
        if not 0 <= bet.round_index < len(rounds):
            expected.append(None)
            unsettled.append(f"round_index {bet.round_index} is not one of the group's {len(rounds)} rounds")
            continue
        r = rounds[bet.round_index]
        if reasons[bet.round_index] is not None:
            expected.append(None)
            unsettled.append(reasons[bet.round_index])
            continue
        verdict = BetVerdict(bet.stake, "round cancelled: refunded") if r.status == "cancelled" else game.judge(r, bet)
        before, what = len(checks.findings), checks.what(bet)
        if verdict.finding:
            checks.bet_finding(verdict.finding, bet, r.round_id, verdict.expected, verdict.recorded,
                               REFUSED.format(what=what, why=verdict.why))
        checks.check(bet, r.round_id, r.round_no, r.betting_closed_at, verdict.credit, over.get(i), what)
        kinds[bet.round_index] += [f.kind for f in checks.findings[before:]]
        lines[bet.round_index].append(BET_LINE.format(what=what, why=verdict.why, owed=checks.money(verdict.credit),
                                                      paid=checks.money(bet.paid)))
        expected.append(verdict.credit)
        unsettled.append(None)
    reports = [RoundReport(i, game.outcome(r), game.describe(r), tuple(game.explain(r, lines[i])),
                           tuple(dict.fromkeys(kinds[i])), reasons[i]) for i, r in enumerate(rounds)]
    return GroupAudit(reports, expected, unsettled, checks.findings)


# -- the same boundaries over columns (a fast path: every element as the scalar rule above says) --------


def within_limits(stakes: np.ndarray, limits: tuple[int, int]) -> np.ndarray:
    """stake_limit_breach(stake, limits) is None, stake by stake."""
    low, high = limits
    return (stakes >= low) & (stakes <= high)


def are_late(placed_at: np.ndarray, betting_closed_at: np.ndarray) -> np.ndarray:
    """is_late(placed, closed), bet by bet."""
    return placed_at > betting_closed_at

