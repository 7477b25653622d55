"""The audit of one casino stud table-day: every round's deal from its own deck, the recorded hands and
decisions, every bet, and the jackpot pools carried from round to round (docs/casino-stud.md).

Rounds are given in betting_closed_at order; each carries its own deck (a fresh 52-card deck a round,
its own shoes row). Round by round (settled rounds):
* the deck is 52 distinct cards (SHOE_COMPOSITION, on the round's shoe, round_id null);
* every recorded card is where the deck and the ruleset's deal order put it (CARD_SEQUENCE_MISMATCH,
  one finding naming every misplaced card; not checked where the deck is too short to deal the round:
  SHOE_COMPOSITION says so);
* each box's decision is one letter, C or F (DECISION_MISSING when none, ILLEGAL_DECISION otherwise);
  where it is not, the ANTE bet's recorded call says what the box did (a call recorded: called; none:
  folded), so that one dropped letter is one finding;
* where `box_action_times` and `dealer_revealed_at` are recorded, no box decided after the dealer's four
  cards were revealed (LATE_DECISION, one finding naming every late box; a decision exactly at the reveal
  is on time, engine/decision_times.py);
* every recorded hand rank (`box_hands`, `dealer_hand`) is the engine's rank of the recorded cards
  (HAND_RANK_MISMATCH, one finding naming every box and the dealer where they differ).
Settlement follows the recorded cards (what came out, as every game's audit): the engine ranks them,
decides the dealer's qualification and what every bet is owed. A settled round whose record cannot be
settled (lists without one entry per box, boxes not ascending seats of the table, a box's or the
dealer's cards that are not five distinct cards, decision instants that are not one per letter) leaves its
bets unsettled with the reason (quarantine) and raises nothing else. A cancelled round refunds every stake,
the call too, and moves no pool.

Bets: ANTE (owed ante and call together; ADDED_STAKE_MISMATCH where the recorded call is not
call_multiple x the ante on a call, or not 0 on a fold; BET_ON_EMPTY_BOX, refunded, on a seat that
was not dealt), JACKPOT (JACKPOT_WITHOUT_ANTE, refunded and feeding nothing, without an ANTE on its box;
the prize by engine/games/casino_stud/ledger.py; paid on a hand below the prize table:
JACKPOT_PRIZE_NOT_WON instead of OVERPAID; a percentage prize paid as that percentage of the other pool:
JACKPOT_PRIZE_WRONG_BALANCE instead of UNDERPAID/OVERPAID), any other code BET_TYPE_NOT_OFFERED
(refunded); and for every bet OVERPAID / UNDERPAID, STAKE_BELOW_MIN / STAKE_ABOVE_MAX (engine.betting,
a stake exactly at a limit is within it), LATE_BET (placed strictly after betting closed). Unknown rounds
and duplicate bet ids are the pipeline's (as for every game); a bet whose round_index is not one of
the rounds is left unsettled. Bets put in quarantine as they were read (`quarantined`) are never settled
but still seen: an ANTE in quarantine is an ANTE on its box (the jackpot bet beside it is settled on the
box's hand and its words name that ANTE), and a jackpot bet in quarantine leaves its round's after-balances
unknown (not checked).

The pools: the first round's recorded before-balances open the table-day (chain.py holds it against the previous
table-day's last round, after the groups). A round's recorded before-balances
must be the previous round's recorded after-balances, and its recorded after-balances the engine's
(its recorded before + contributions - prizes): JACKPOT_BALANCE_MISMATCH, one finding per round, and
the chain goes on from the recorded after-balances, so a later, separate drift is found too. A round
with a jackpot bet's payment finding (JACKPOT_PRIZE_NOT_WON, JACKPOT_PRIZE_WRONG_BALANCE, OVERPAID,
UNDERPAID) has its after-balances follow that payment: they are not checked (one fault, one finding).

The compiled kernel (kernel.py, through quiet.py, over the columns dealt.py reads) ranks the day's hands and settles
its bets first; a round it calls quiet is reported from its results (`settle_quiet`), its flagged bets' findings
joined as columns (flagged.py), its own findings and its jackpot bets' payment findings (the deck, the decisions,
the ranks; a prize not won or paid from the other pool) judged as columns and worded once a finding by
round_findings.py, whose functions word them here too; every other round goes through the rules above. A quiet
round with nothing for the rules to say (its balances as expected) is settled from the columns alone (plain.py): no
record of it or of its bets is read (the rounds and the bets may be given as sequences that make records where
asked, with `fetch(rows)` to make many at once), its report is made only where asked (`_Reports`) and its replay
columns come from the kernel's (`columns`). The findings and the ledger are tables (`StudAudit.found`,
`ledger_rows`; `findings` and `ledger` make their objects).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import BET_WORDS, QuarantinedBet, TableFacts, is_late, stake_limit_breach, us_text
from engine.betting_columns import finding_columns
from engine.cards import format_cards
from engine.decision_times import times_problem, timing_line
from engine.findings import Finding, format_money
from engine.kernels import spans

from . import BET_CODES
from .chain import ChainGap, gap_finding
from .dealing import cards_needed, deal, positions
from .dealt import DealtBets, DealtRounds, bet_records, dealt_rounds, records_table
from .explain import explain_round
from .flagged import FlaggedFindings, flagged_findings
from .hands import RANK_NAMES, HandRank, dealer_qualifies, hand_or_none
from .kernel import EMPTY_BOX, NO_ANTE, NOT_OFFERED
from .ledger import JackpotBet, Pools, RoundLedger, settle_round
from .plain import LEDGER_ROWS, POOL_COLUMNS, plain_ledger, plain_rounds, recorded_pools
from .quiet import QuietDay, settle_quiet
from .round_findings import (
    decision_findings,
    deck_finding,
    inferred,
    late_finding,
    not_won,
    paid_from_the_other_pool,
    rank_finding,
    rank_mismatches,
)
from .round_findings import where as round_where
from .rules import CasinoStudRules
from .settlement import ACTIONS, CALL, FOLD, settle_box
from .words import REVEAL, round_explanations

ANTE, JACKPOT = BET_CODES
PAYMENT_KINDS = ("JACKPOT_PRIZE_NOT_WON", "JACKPOT_PRIZE_WRONG_BALANCE", "OVERPAID", "UNDERPAID")


@dataclass(frozen=True)
class RecordedRound:
    round_id: str
    round_no: int
    status: str  # settled | cancelled
    betting_closed_at: int  # microseconds since the epoch, UTC
    shoe_id: str  # the round's deck (one shoes row per round)
    deck: tuple[str | None, ...]  # the 52 cards in the order the shuffler dealt them
    boxes: tuple[int, ...]  # the boxes with an ante, ascending = dealing order
    box_cards: tuple[tuple[str, ...], ...]
    box_actions: tuple[str | None, ...]  # "C" | "F"; "" / None: none recorded
    dealer_cards: tuple[str, ...]  # the open card first
    box_hands: tuple[str | None, ...]  # the operator's rank names
    dealer_hand: str | None
    jackpot_before: int | None
    jackpot_after: int | None
    next_pool_before: int | None
    next_pool_after: int | None
    decks: int | None = 1  # the deck's shoes row: a stud deck is one deck (decks 1) with no cut card
    cut_index: int | None = None
    # when each box decided (per box, an instant per letter of box_actions) and when the dealer's four closed
    # cards were revealed, microseconds since the epoch, UTC; None: not recorded (not judged)
    box_action_times: tuple[tuple[int | None, ...] | None, ...] | None = None
    dealer_revealed_at: int | None = None

    @property
    def pools_before(self) -> Pools | None:
        if self.jackpot_before is None or self.next_pool_before is None:
            return None
        return Pools(self.jackpot_before, self.next_pool_before)

    @property
    def pools_after(self) -> Pools | None:
        if self.jackpot_after is None or self.next_pool_after is None:
            return None
        return Pools(self.jackpot_after, self.next_pool_after)


@dataclass(frozen=True)
class RecordedBet:
    bet_id: str
    round_index: int  # into the table-day's rounds
    account_id: str
    bet_type: str
    seat: int | None  # the box
    stake: int
    added_stake: int | None  # ANTE: the call (2 x ante), 0 / None on a fold
    paid: int  # ANTE: ante and call together; JACKPOT: the prize
    placed_at: int  # microseconds since the epoch, UTC


@dataclass(frozen=True)
class RoundReport:
    """A round as the audit settled it: what the investigator's replay shows."""

    round_index: int
    expected_box_cards: tuple[tuple[str | None, ...], ...] | None  # as the deck and the deal order put them
    expected_dealer_cards: tuple[str | None, ...] | None
    box_ranks: tuple[str | None, ...]  # the engine's rank of each box's recorded cards (None: not a hand)
    dealer_rank: str | None
    dealer_qualifies: bool | None
    pools_before: Pools | None  # expected: the previous round's recorded after (the first round: its own)
    pools_after: Pools | None  # expected: recorded before + contributions - prizes (None: cannot be settled)
    explanation: tuple[str, ...]
    finding_kinds: tuple[str, ...]
    unsettled_reason: str | None  # the round cannot be settled: its bets go to quarantine


@dataclass(frozen=True)
class LedgerRow:
    """One round with a jackpot bet or a moved balance: the pools as recorded and as the engine has them."""

    round_index: int
    round_id: str
    round_no: int
    status: str
    jackpot_before: int | None  # recorded
    next_pool_before: int | None
    jackpot_bets: int  # settled on a hand (refunded ones feed nothing)
    to_jackpot: int
    to_next_pool: int
    to_house: int
    prizes_from_jackpot: int
    prizes_from_next_pool: int
    prizes_from_house: int
    reset: bool  # the jackpot was won and replaced by the next pool
    jackpot_after_expected: int | None  # None: the round cannot be settled
    next_pool_after_expected: int | None
    jackpot_after: int | None  # recorded
    next_pool_after: int | None


@dataclass
class StudAudit:
    rounds: Sequence[RoundReport]
    owed: pa.Array  # per bet (int64); null: the bet cannot be settled (`unsettled` says why)
    unsettled: list[str | None]
    found: pa.Table  # the findings as FINDING_COLUMNS
    ledger_rows: pa.Table  # the ledger as LEDGER_ROWS
    explanations: pa.Array | None = None  # the reports' explanations as one list<string> column, a row a round
    # the reports' other columns (ENGINE_COLUMNS), a row a round: a plain quiet round's from the kernel's columns
    columns: pa.Table | None = field(default=None, compare=False)

    @property
    def expected(self) -> list[int | None]:
        return self.owed.to_pylist()

    @property
    def findings(self) -> list[Finding]:
        return [Finding(**row) for row in self.found.to_pylist()]

    @property
    def ledger(self) -> list[LedgerRow]:
        return [LedgerRow(**row) for row in self.ledger_rows.to_pylist()]


@dataclass
class _Round:
    """What the audit works out about one round before its bets."""

    problem: str | None = None  # why a settled round cannot be settled
    expected_box_cards: tuple | None = None
    expected_dealer_cards: tuple | None = None
    ranks: tuple[HandRank | None, ...] = ()
    dealer: HandRank | None = None
    qualifies: bool | None = None
    actions: tuple[str | None, ...] = ()  # each box's recorded decision where legal, else None
    kinds: list[str] = field(default_factory=list)
    bet_lines: list[str] = field(default_factory=list)
    ledger: RoundLedger | None = None
    pools_before: Pools | None = None  # expected: the previous round's recorded after
    pools_after: Pools | None = None  # expected: the recorded before + contributions - prizes
    jackpot_bets: int = 0  # settled on a hand
    payment_found: bool = False  # a jackpot bet's payment finding: the after-balances follow it
    # a jackpot bet of the round in quarantine: what it fed or won is unknown, so are the after-balances
    jackpot_quarantined: QuarantinedBet | None = None
    judged_paid: set[int] = field(default_factory=set)  # bets whose paid a jackpot kind already judged


class _Work(dict[int, _Round]):
    """Each round's _Round by its index, made on first use."""

    def __missing__(self, i: int) -> _Round:
        work = self[i] = _Round()
        return work


def _record_problem(rules: CasinoStudRules, r: RecordedRound, ranks: Sequence[HandRank | None],
                    dealer: HandRank | None) -> str | None:
    """Why a settled round's record cannot be settled, or None; `ranks` and `dealer` are the engine's ranks
    of the recorded box and dealer cards (None: not five distinct cards)."""
    n = len(r.boxes)
    if not (len(r.box_cards) == len(r.box_actions) == n):
        return (f"boxes ({n}), box_cards ({len(r.box_cards)}) and box_actions ({len(r.box_actions)}) do not have "
                "one entry per box")
    if not all(isinstance(b, int) and 1 <= b <= rules.max_boxes for b in r.boxes) or list(r.boxes) != sorted(
            set(r.boxes)):
        return f"boxes {list(r.boxes)} are not distinct ascending seats 1-{rules.max_boxes} (the dealing order)"
    for box, cards, rank in zip(r.boxes, r.box_cards, ranks, strict=True):
        if rank is None:
            return f"box {box}'s cards {format_cards(cards)} are not five distinct cards"
    if n and dealer is None:
        return f"the dealer's cards {format_cards(r.dealer_cards)} are not five distinct cards"
    return times_problem(r.boxes, r.box_actions, r.box_action_times)


class _Auditor:
    def __init__(self, rules: CasinoStudRules, table: TableFacts, rounds: Sequence[RecordedRound],
                 bets: Sequence[RecordedBet], quarantined: Sequence[QuarantinedBet] = (),
                 gaps: Sequence[ChainGap] = (), round_by_round: bool = False,
                 dealt: tuple[DealtRounds, DealtBets] | None = None):
        self.rules, self.table, self.rounds, self.bets = rules, table, rounds, bets
        self.dealt = dealt
        self.round_by_round = round_by_round  # every round through the readable rules: the kernel's oracle
        self.gaps = sorted(gaps, key=lambda g: (g.at, g.shoe_id))
        self.findings: list[Finding] = []  # the readable rules' (a quiet round's flagged bets': `flagged`)
        self.finding_round: list[int] = []  # each one's round
        self.flagged: FlaggedFindings | None = None
        self.work = _Work()  # (a round's made where read: a plain round's never is, unless its report is asked)
        # the bets of each round put in quarantine as they were read: their neighbours' rules still see them
        self.quarantined: dict[int, list[QuarantinedBet]] = {}
        for q in quarantined:
            self.quarantined.setdefault(q.round_index, []).append(q)
        self.beside: dict[RecordedBet, QuarantinedBet] = {}  # a jackpot bet -> the quarantined ANTE of its box

    def money(self, amount: int | None) -> str:
        return "none" if amount is None else format_money(amount, self.table.currency)

    def round_finding(self, kind: str, i: int, expected: str, recorded: str, message: str,
                      round_level: bool = True) -> None:
        r = self.rounds[i]
        self.work[i].kinds.append(kind)
        self.findings.append(Finding(kind, self.table.table_id, r.shoe_id, r.round_id if round_level else None, None,
                                     expected, recorded, message))
        self.finding_round.append(i)

    def round_finding_of(self, i: int, finding: Finding) -> None:
        self.work[i].kinds.append(finding.kind)
        self.findings.append(finding)
        self.finding_round.append(i)

    def gaps_before(self, i: int) -> list[ChainGap]:
        """The gaps between round i - 1 and round i: after the one's betting closed, not after the other's."""
        if not self.gaps:
            return []
        after, upto = self.rounds[i - 1].betting_closed_at, self.rounds[i].betting_closed_at
        return [g for g in self.gaps if after < g.at <= upto]

    def bet_finding(self, kind: str, bet: RecordedBet, expected: str, recorded: str, message: str) -> None:
        r = self.rounds[bet.round_index]
        self.work[bet.round_index].kinds.append(kind)
        self.findings.append(Finding(kind, self.table.table_id, r.shoe_id, r.round_id, bet.bet_id, expected,
                                     recorded, message, bet.account_id))
        self.finding_round.append(bet.round_index)

    def what(self, bet: RecordedBet) -> str:
        ante = self.beside.get(bet) if self.beside else None  # (a bet hashed only on a day that has any)
        beside = f"; its box's ANTE is {ante.named()}" if ante is not None else ""
        return f"Bet {bet.bet_id} ({bet.bet_type}, stake {self.money(bet.stake)}, box {bet.seat}{beside})"

    # -- the table-day ----------------------------------------------------------------------------

    def run(self) -> StudAudit:
        n = len(self.rounds)
        quiet, plain = None, np.zeros(n, np.bool_)
        self.plain = plain
        if self.round_by_round:
            round_index = np.array([bet.round_index for bet in self.bets], np.int64)
        else:
            dealt, dealt_bets = self.dealt or (dealt_rounds(self.rules, records_table(self.rounds)),
                                               bet_records(self.bets))
            self.dealt_read, round_index = dealt.read, dealt_bets.round_index
            quiet = self.quiet_day = settle_quiet(self.rules, self.table, dealt, dealt_bets, set(self.quarantined))
            self.flagged = flagged_findings(self.rules, self.table, dealt.read, dealt_bets, quiet)
            plain = self.plain = plain_rounds(quiet, dealt.read)
            self.recorded = recorded_pools(dealt.read)
        by_round, unsettled = _by_round(round_index, ~plain)
        if quiet is not None and hasattr(self.rounds, "fetch"):  # (records made a batch at a time: those read)
            self.rounds.fetch(np.flatnonzero(~plain).tolist())
            self.bets.fetch([b for i in np.flatnonzero(~quiet.quiet).tolist() for b in by_round.get(i, ())])
        expected: list[int | None] = [None] * len(self.bets)
        ledger: list[LedgerRow] = []
        previous_after: Pools | None = None  # the chain: the previous round's recorded after-balances
        for i in np.flatnonzero(~plain).tolist():  # (a plain round: settled from the columns, `plain_pools`)
            if i > 0 and plain[i - 1]:  # (its recorded after-balances are the expected ones)
                previous_after = Pools(*self.recorded[2:, i - 1].tolist())
            r = self.rounds[i]
            w = self.work[i]
            w.pools_before = r.pools_before if i == 0 else previous_after
            base = r.pools_before or w.pools_before
            if quiet is not None and quiet.quiet[i]:
                self.settle_quiet(i, r, by_round.get(i, []), base, quiet, expected)
            else:
                self.round(i, r)
                self.settle_bets(i, r, by_round.get(i, []), base or Pools(0, 0), expected, unsettled)
            if self.unsettled_reason(i) is not None or base is None:
                w.pools_after, w.ledger = None, None
            elif r.status == "cancelled" or w.ledger is None:
                w.pools_after, w.ledger = base, None
            else:
                w.pools_after = w.ledger.after
            self.check_balances(i, r)
            if w.jackpot_bets or r.pools_before != r.pools_after or "JACKPOT_BALANCE_MISMATCH" in w.kinds:
                ledger.append(self.ledger_row(i, r))
            previous_after = r.pools_after or w.pools_after or base
        calm = np.flatnonzero(quiet.quiet).tolist() if quiet is not None else []
        owed = pa.array(expected, pa.int64())
        if plain.any():  # (the others' bets: settled in the loop)
            settled = np.append(plain, False)[np.where((round_index >= 0) & (round_index < n), round_index, n)]
            owed = pc.if_else(settled, pa.array(quiet.credit, pa.int64()), owed)
        pools = self.expected_pools(plain)
        reports: list[RoundReport | None] = [None] * n
        told = np.ones(n, np.bool_)  # (the readable rules' rounds: their lines as their reports tell them)
        told[calm] = False
        for i in np.flatnonzero(told).tolist():
            reports[i] = self.report(i, self.rounds[i])
        if calm:  # (every round's lines by words.py's kernel, round by round: the list column from its offsets)
            n_lines, lines = round_explanations(self.rules, self.table.currency, dealt.read, dealt_bets, calm, quiet,
                                                *pools, [() if r is None else r.explanation for r in reports])
            self.said = _Said(np.concatenate([[0], np.cumsum(n_lines)]).astype(np.int32), lines)
            explanations = pa.ListArray.from_arrays(pa.array(self.said.at), lines)
            for i in np.flatnonzero(quiet.quiet & ~plain).tolist():
                reports[i] = self.report(i, self.rounds[i], self.said.of(i))
        else:
            explanations = pa.array([r.explanation for r in reports], _TEXTS)
        return StudAudit(_Reports(reports, self.plain_report), owed, unsettled, self.found(),
                         self.ledger_table(ledger, quiet), explanations,
                         self.columns(reports, quiet, dealt.read if quiet is not None else None, *pools))

    def expected_pools(self, plain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The expected pools of every round ((4, n): jackpot and next pool before, then after) and where known
        ((2, n): before, after): a plain round's its recorded ones (the chain and the kernel agree with them, plain.py),
        any other's as the loop worked them out."""
        n = len(plain)
        values, known = np.zeros((4, n), np.int64), np.zeros((2, n), np.bool_)
        if plain.any():
            values[:, plain], known[:, plain] = self.recorded[:, plain], True
        for i in np.flatnonzero(~plain).tolist():
            w = self.work[i]
            for end, pools in enumerate((w.pools_before, w.pools_after)):
                if pools is not None:
                    values[2 * end:2 * end + 2, i], known[end, i] = (pools.jackpot, pools.next_pool), True
        return values, known

    def ledger_table(self, rows: list[LedgerRow], quiet: QuietDay | None) -> pa.Table:
        """The ledger rows (LEDGER_ROWS) in round order: the readable rules' `rows`, and a row for each plain round
        with jackpot bets (plain.py)."""
        made = pa.Table.from_pylist([vars(row) for row in rows], LEDGER_ROWS)
        if quiet is None or not self.plain.any():
            return made
        both = pa.concat_tables([made, plain_ledger(quiet, self.dealt_read, self.recorded, self.plain)])
        return both.take(pa.array(np.argsort(both["round_index"].to_numpy(), kind="stable")))

    def found(self) -> pa.Table:
        """Every finding as FINDING_COLUMNS, round by round: in a quiet round its flagged bets' (`flagged`) before
        the readable rules' (its balances')."""
        said = finding_columns(self.findings)
        if self.flagged is None or not self.flagged.table.num_rows:
            return said
        key = np.concatenate([2 * np.asarray(self.finding_round, np.int64) + 1, 2 * self.flagged.round_index])
        return pa.concat_tables([said, self.flagged.table]).take(pa.array(np.argsort(key, kind="stable")))

    def plain_report(self, i: int) -> RoundReport:
        """The report of a plain quiet round (made only where asked: the replay table takes its columns)."""
        quiet, w = self.quiet_day, self.work[i]
        self.quiet_facts(i, self.rounds[i], quiet)
        w.kinds = self.flagged.kinds[i].as_py()
        jackpot, next_pool, jackpot_after, next_pool_after = self.recorded[:, i].tolist()
        w.pools_before, w.pools_after = Pools(jackpot, next_pool), Pools(jackpot_after, next_pool_after)
        w.jackpot_bets = int(quiet.jackpot_bets[i])
        if w.jackpot_bets:
            *moved, reset = quiet.ledger[i].tolist()
            w.ledger = RoundLedger(w.pools_before, (), w.pools_after, *moved, bool(reset))
        return self.report(i, self.rounds[i], self.said.of(i))

    def unsettled_reason(self, i: int) -> str | None:
        r, w = self.rounds[i], self.work[i]
        if r.status not in ("settled", "cancelled"):
            return f"round {r.round_id}: status {r.status!r} is neither settled nor cancelled"
        if r.status == "settled" and w.problem is not None:
            return f"round {r.round_id}: the record cannot be settled ({w.problem})"
        return None

    def settle_quiet(self, i: int, r: RecordedRound, mine: list[int], base: Pools, quiet: QuietDay,
                     expected: list) -> None:
        """A round the kernel settled (quiet.py): its ranks, bets and pools as the kernel has them; its bets'
        findings are flagged.py's (as columns), its explanation words.py's."""
        w = self.work[i]
        self.quiet_facts(i, r, quiet)
        w.kinds.extend(self.flagged.kinds[i].as_py())
        for b in mine:
            expected[b] = int(quiet.credit[b])
        w.jackpot_bets = int(quiet.jackpot_bets[i])
        w.payment_found = bool(quiet.payment[i])
        if w.jackpot_bets:
            to_jp, to_np, to_house, from_jp, from_np, from_house, reset = quiet.ledger[i].tolist()
            # (the bets' prizes are in their lines; the ledger row and the words read only the sums)
            w.ledger = RoundLedger(base, (), Pools(*quiet.after[i].tolist()), to_jp, to_np, to_house, from_jp, from_np,
                                   from_house, bool(reset))

    def quiet_facts(self, i: int, r: RecordedRound, quiet: QuietDay) -> None:
        """What a quiet round's report shows of its deal: as dealt, ranked by the kernel."""
        w, k0 = self.work[i], int(quiet.box_at[i])
        w.expected_box_cards, w.expected_dealer_cards = r.box_cards, r.dealer_cards  # (as dealt: dealt.py)
        w.ranks = tuple(quiet.hand(k) for k in range(k0, k0 + len(r.boxes)))
        w.dealer, w.qualifies, w.actions = quiet.dealer(i), bool(quiet.qualifies[i]), r.box_actions

    def columns(self, reports: list[RoundReport | None], quiet: QuietDay | None, read: pa.RecordBatch | None,
                pools: np.ndarray, known: np.ndarray) -> pa.Table:
        """ENGINE_COLUMNS of every round: a report's from it, a plain quiet round's (no report) from its recorded
        cards (as dealt) and the kernel's ranks; the expected pools from `pools` and `known` (expected_pools)."""
        loud = [i for i, rep in enumerate(reports) if rep is not None]
        plain = np.array([i for i, rep in enumerate(reports) if rep is None], np.int64)
        made = [reports[i] for i in loud]
        parts = {
            "expected_box_cards": pa.array([[list(c) for c in rep.expected_box_cards]
                                            if rep.expected_box_cards is not None else None for rep in made],
                                           ENGINE_COLUMNS.field("expected_box_cards").type),
            "expected_dealer_cards": pa.array([list(rep.expected_dealer_cards) if rep.expected_dealer_cards
                                               is not None else None for rep in made], _TEXTS),
            "box_ranks": pa.array([list(rep.box_ranks) for rep in made], _TEXTS),
            "dealer_rank": pa.array([rep.dealer_rank for rep in made], pa.string()),
            "dealer_qualifies": pa.array([rep.dealer_qualifies for rep in made], pa.bool_()),
            "finding_kinds": pa.array([list(rep.finding_kinds) for rep in made], _TEXTS)}
        if len(plain):
            box_at = quiet.box_at
            boxes = np.diff(box_at)[plain]
            rows = spans(box_at[plain], boxes)
            ranks = _CATEGORY_NAMES.take(pa.array(quiet.category[rows]))
            taken = read.select(["box_cards", "dealer_cards"]).take(pa.array(plain))
            more = {
                "expected_box_cards": taken["box_cards"], "expected_dealer_cards": taken["dealer_cards"],
                "box_ranks": pa.ListArray.from_arrays(pa.array(np.concatenate([[0], np.cumsum(boxes)]), pa.int32()),
                                                      ranks),
                "dealer_rank": _CATEGORY_NAMES.take(pa.array(quiet.dealer_category[plain])),
                "dealer_qualifies": pa.array(quiet.qualifies[plain]),
                "finding_kinds": self.flagged.kinds.take(pa.array(plain))}
            into = np.empty(len(reports), np.int64)
            into[np.concatenate([np.asarray(loud, np.int64), plain])] = np.arange(len(reports))
            parts = {name: pa.concat_arrays([part, more[name]]).take(pa.array(into)) for name, part in parts.items()}
        expected = {f"expected_{name}": pa.array(pools[k], pa.int64(), mask=~known[k // 2])
                    for k, name in enumerate(POOL_COLUMNS)}
        return pa.table({**parts, **expected}).select(ENGINE_COLUMNS.names)

    # -- a round's deal, decisions and ranks ------------------------------------------------------

    def round(self, i: int, r: RecordedRound) -> None:
        rules, w = self.rules, self.work[i]
        n = len(r.boxes)
        w.expected_box_cards, w.expected_dealer_cards = deal(rules, r.deck, n)
        w.ranks = tuple(hand_or_none(c) for c in r.box_cards)
        w.dealer = hand_or_none(r.dealer_cards)
        w.qualifies = dealer_qualifies(w.dealer, rules.qualifier) if w.dealer is not None else None
        if r.status != "settled":
            return
        where = round_where(r.round_id, r.shoe_id)
        self.check_deck(i, r)
        w.problem = _record_problem(rules, r, w.ranks, w.dealer)
        if w.problem is not None:
            return
        w.actions = tuple(a if a in ACTIONS else None for a in r.box_actions)
        self.check_deal(i, r, where)
        self.check_decisions(i, r, where)
        self.check_ranks(i, r, where)

    def check_deck(self, i: int, r: RecordedRound) -> None:
        found = deck_finding(r.round_id, r.shoe_id, r.deck, r.decks, r.cut_index)
        if found is not None:
            self.round_finding("SHOE_COMPOSITION", i, *found, round_level=False)

    def check_deal(self, i: int, r: RecordedRound, where: str) -> None:
        n = len(r.boxes)
        if len(r.deck) < cards_needed(self.rules, n):
            return  # SHOE_COMPOSITION says the deck is short
        box_pos, dealer_pos = positions(self.rules, n)
        wrong = []
        for box, pos, cards in zip(r.boxes, box_pos, r.box_cards, strict=True):
            wrong += [(f"box {box}", p, r.deck[p], c) for p, c in zip(pos, cards, strict=True) if r.deck[p] != c]
        # with no box the dealer may have been dealt nothing: compare what was recorded
        wrong += [("dealer", p, r.deck[p], c) for p, c in zip(dealer_pos, r.dealer_cards, strict=False)
                  if r.deck[p] != c]
        if wrong:
            self.round_finding(
                "CARD_SEQUENCE_MISMATCH", i, "; ".join(f"{who} deck[{p}] {want}" for who, p, want, _ in wrong),
                "; ".join(f"{who} {got}" for who, _, _, got in wrong),
                f"{where}: " + "; ".join(f"{who} recorded {got} where the deck deals {want} (card {p})"
                                         for who, p, want, got in wrong) + ".")

    def check_decisions(self, i: int, r: RecordedRound, where: str) -> None:
        for kind, *words in decision_findings(where, r.boxes, r.box_actions):
            self.round_finding(kind, i, *words)
        late = late_finding(where, r.boxes, r.box_actions, r.box_action_times, r.dealer_revealed_at)
        if late is not None:
            self.round_finding("LATE_DECISION", i, *late)

    def check_ranks(self, i: int, r: RecordedRound, where: str) -> None:
        w = self.work[i]
        wrong = rank_mismatches(r.boxes, [k.category if k is not None else None for k in w.ranks], r.box_hands,
                                w.dealer.category if w.dealer is not None else None, r.dealer_hand)
        if wrong:
            self.round_finding("HAND_RANK_MISMATCH", i, *rank_finding(where, wrong))

    # -- the bets ---------------------------------------------------------------------------------

    def settle_bets(self, i: int, r: RecordedRound, mine: list[int], base: Pools, expected: list,
                    unsettled: list) -> None:
        w, bets = self.work[i], self.bets
        reason = self.unsettled_reason(i)
        if reason is not None:
            for b in mine:
                unsettled[b] = reason
            return
        records = [bets[b] for b in mine]
        antes = {bet.seat for bet in records if bet.bet_type == ANTE}
        # An ANTE in quarantine was placed all the same (its row names its box): a jackpot bet beside it is
        # not without an ante, and is settled on its box's hand, which does not depend on the ANTE's money.
        quarantined = self.quarantined.get(i, [])
        held_antes: dict[int | None, QuarantinedBet] = {}
        for q in quarantined:
            if q.bet_type == ANTE and q.seat is not None:
                held_antes.setdefault(q.seat, q)
        w.jackpot_quarantined = next((q for q in quarantined if q.bet_type == JACKPOT), None)
        credits: dict[int, tuple[int, str]] = {}  # bet -> (credit, why)
        jackpot_bets: list[int] = []
        for b, bet in zip(mine, records, strict=True):
            if bet.bet_type == JACKPOT and bet.seat not in antes and bet.seat in held_antes:
                self.beside[bet] = held_antes[bet.seat]
            if (bet.bet_type == JACKPOT and self.rules.jackpot.requires_ante and bet.seat not in antes
                    and bet.seat not in held_antes):
                credits[b] = self.refund(r, bet, NO_ANTE)
            elif r.status == "cancelled":
                credits[b] = (bet.stake + (bet.added_stake or 0), "round cancelled: refunded")
            elif bet.bet_type not in BET_CODES:
                credits[b] = self.refund(r, bet, NOT_OFFERED)
            elif bet.seat not in r.boxes:
                credits[b] = self.refund(r, bet, EMPTY_BOX)
            elif bet.bet_type == ANTE:
                credits[b] = self.ante(i, r, bet)
            else:
                jackpot_bets.append(b)
        if r.status == "settled":
            self.jackpots(i, r, jackpot_bets, base, credits)
        for b, bet in zip(mine, records, strict=True):
            credit, why = credits[b]
            if self.beside and bet in self.beside:
                why += f" (its box's ANTE is {self.beside[bet].named()})"
            self.check_bet(i, r, b, bet, credit)
            expected[b] = credit
            w.bet_lines.append(self.bet_line(bet, credit, why))

    def refund(self, r: RecordedRound, bet: RecordedBet, reason: int) -> tuple[int, str]:
        """A bet of a settled round refunded (kernel.NO_ANTE, NOT_OFFERED, EMPTY_BOX): its finding; its credit and
        why (words.py says the why of the kernel's)."""
        what, seat = self.what(bet), bet.seat
        if reason == NO_ANTE:
            self.bet_finding("JACKPOT_WITHOUT_ANTE", bet, f"an ANTE on box {seat}", "none",
                             f"{what}: no ANTE bet on box {seat} in round {r.round_id}; the jackpot bet is placed "
                             "after the ante (refunded).")
            return bet.stake, "no ante on its box: refunded, feeds no pool"
        if reason == NOT_OFFERED:
            self.bet_finding("BET_TYPE_NOT_OFFERED", bet, f"a bet type of {self.rules.id}", bet.bet_type,
                             f"{what}: {self.rules.id} does not offer {bet.bet_type} (refunded).")
            return bet.stake, f"{self.rules.id} does not offer {bet.bet_type}: refunded"
        self.bet_finding("BET_ON_EMPTY_BOX", bet, f"one of the dealt boxes {list(r.boxes)}", f"box {seat}",
                         f"{what} is on box {seat}, which was not dealt in round {r.round_id}: refunded.")
        return (bet.stake + (bet.added_stake or 0) if bet.bet_type == ANTE else bet.stake,
                f"box {seat} was not dealt: refunded")

    def bet_line(self, bet: RecordedBet, credit: int, why: str) -> str:
        call = f", call {self.money(bet.added_stake)}" if bet.bet_type == ANTE and bet.added_stake else ""
        return (f"Bet {bet.bet_id} ({bet.bet_type}, stake {self.money(bet.stake)}{call}) on box {bet.seat}: {why}; "
                f"owed {self.money(credit)}, paid {self.money(bet.paid)}")

    def ante(self, i: int, r: RecordedRound, bet: RecordedBet) -> tuple[int, str]:
        w, rules = self.work[i], self.rules
        k = r.boxes.index(bet.seat)
        recorded_call = bet.added_stake or 0
        action = w.actions[k]
        said = ""
        if action is None:  # no legal decision recorded: the money says what the box did
            action = CALL if recorded_call > 0 else FOLD
            said = inferred(action == CALL)
        box_rank, dealer = w.ranks[k], w.dealer
        assert box_rank is not None and dealer is not None  # _record_problem saw to it
        result = settle_box(rules, box_rank, dealer, action, bet.stake)
        self.check_call(bet, action)
        return result.credit, result.why + said

    def check_call(self, bet: RecordedBet, action: str) -> None:
        """ADDED_STAKE_MISMATCH: an ANTE's recorded call against its box's decision."""
        rules, recorded_call = self.rules, bet.added_stake or 0
        want_call = rules.call_of(bet.stake) if action == CALL else 0
        if recorded_call != want_call:
            self.bet_finding("ADDED_STAKE_MISMATCH", bet, self.money(want_call), self.money(recorded_call),
                             f"{self.what(bet)}: box {bet.seat} {'called' if action == CALL else 'folded'}, so the "
                             f"call is {self.money(want_call)} ({rules.call_multiple} x the ante on a call, nothing "
                             f"on a fold); recorded {self.money(recorded_call)}.")

    def jackpots(self, i: int, r: RecordedRound, mine: list[int], base: Pools,
                 credits: dict[int, tuple[int, str]]) -> None:
        """The round's jackpot bets settled on their boxes' hands in box order (then record order), from
        the pools as they stood when betting closed. Their expected prizes follow any percentage prize
        paid otherwise (ledger.settle_round's `paid`); the round's expected balances do not."""
        w, bets = self.work[i], self.bets
        if not mine:
            return
        order = sorted(mine, key=lambda b: (r.boxes.index(bets[b].seat), b))
        categories = [w.ranks[r.boxes.index(bets[b].seat)].category for b in order]
        to_settle = [JackpotBet(bets[b].stake, c) for b, c in zip(order, categories, strict=True)]
        w.ledger = settle_round(self.rules, base, to_settle)
        w.jackpot_bets = len(order)
        followed = settle_round(self.rules, base, to_settle, [bets[b].paid for b in order])
        for b, category, prize in zip(order, categories, followed.bets, strict=True):
            bet = bets[b]
            credits[b] = (prize.prize, self.jackpot_why(category, prize.rule, prize.source, prize.base,
                                                        prize.contribution))
            if prize.rule is None and bet.paid > 0:
                w.judged_paid.add(b)
                self.bet_finding("JACKPOT_PRIZE_NOT_WON", bet, *not_won(self.what(bet), r.round_id, category,
                                                                        self.money(bet.paid)))
            elif prize.wrong_balance:
                w.judged_paid.add(b)
                self.bet_finding("JACKPOT_PRIZE_WRONG_BALANCE", bet, *paid_from_the_other_pool(
                    self.what(bet), r.round_id, prize.rule[1], prize.source,
                    "next_pool" if prize.source == "jackpot" else "jackpot", self.money(bet.paid),
                    self.money(prize.prize)))

    def jackpot_why(self, category: str, rule: tuple[str, int] | None, source: str | None, base: int | None,
                    to: tuple[int, int, int]) -> str:
        """A jackpot bet's prize in words (ledger.BetPrize's rule, source, base and contribution)."""
        if rule is None:
            return (f"{category}: no prize; feeds the jackpot {self.money(to[0])}, the next pool "
                    f"{self.money(to[1])}, the house {self.money(to[2])}")
        if rule[0] == "percent":
            return f"{category} wins {rule[1]}% of the {_pool(source)} {self.money(base)}"
        return f"{category} wins {rule[1]} units, paid by the {_pool(source)}"

    def check_bet(self, i: int, r: RecordedRound, b: int, bet: RecordedBet, credit: int) -> None:
        """Paid against owed, the limits of its type, the window (engine.betting's boundaries)."""
        w, money = self.work[i], self.money
        delta = bet.paid - credit
        if delta and b not in w.judged_paid:
            kind = "OVERPAID" if delta > 0 else "UNDERPAID"
            self.bet_finding(kind, bet, *BET_WORDS[kind].fill(what=self.what(bet), round=r.round_id, owed=money(credit),
                                                              paid=money(bet.paid), delta=money(abs(delta))))
        if bet.bet_type == JACKPOT and (delta or b in w.judged_paid):
            w.payment_found = True
        if bet.bet_type in self.table.limits:
            low, high = self.table.limits[bet.bet_type]
            breach = stake_limit_breach(bet.stake, (low, high))
            if breach is not None:
                self.bet_finding(breach, bet, *BET_WORDS[breach].fill(
                    what=self.what(bet), bet_type=bet.bet_type, stake=money(bet.stake),
                    limit=money(low if breach == "STAKE_BELOW_MIN" else high)))
        if is_late(bet.placed_at, r.betting_closed_at):
            self.bet_finding("LATE_BET", bet, *BET_WORDS["LATE_BET"].fill(
                what=self.what(bet), round=r.round_id, closed=us_text(r.betting_closed_at),
                placed=us_text(bet.placed_at)))

    # -- the pools --------------------------------------------------------------------------------

    def check_balances(self, i: int, r: RecordedRound) -> None:
        """Before: the previous round's recorded after (from the second round of the day on); after: the
        engine's, unless a jackpot payment finding of the round already explains it."""
        w, money = self.work[i], self.money
        diffs: list[tuple[str, int | None, int | None]] = []
        if i > 0 and w.pools_before is not None:
            diffs += [(f"{name} before", want, got) for name, want, got in (
                ("jackpot", w.pools_before.jackpot, r.jackpot_before),
                ("next pool", w.pools_before.next_pool, r.next_pool_before)) if want != got]
            gaps = self.gaps_before(i)
            if gaps and diffs:  # the pools may have moved in a round not audited: one gap, not a mismatch
                self.round_finding_of(i, gap_finding(self.table.table_id, r.shoe_id, r.round_id,
                                                  self.rounds[i - 1].round_id, [g.named for g in gaps],
                                                  [d for d in diffs if d[1] is not None and d[2] is not None], money))
                diffs = [d for d in diffs if d[1] is None or d[2] is None]  # (a missing before stays a mismatch)
        elif r.pools_before is None:
            diffs.append(("balances before", None, None))
        if w.pools_after is not None and not w.payment_found and w.jackpot_quarantined is None:
            diffs += [(f"{name} after", want, got) for name, want, got in (
                ("jackpot", w.pools_after.jackpot, r.jackpot_after),
                ("next pool", w.pools_after.next_pool, r.next_pool_after)) if want != got]
        if not diffs:
            return
        self.round_finding(
            "JACKPOT_BALANCE_MISMATCH", i, "; ".join(f"{what} {money(want)}" for what, want, _ in diffs),
            "; ".join(f"{what} {money(got)}" for what, _, got in diffs),
            f"Round {r.round_id}: " + "; ".join(
                f"the {what} was recorded as {money(got)}, expected {money(want)}" + (
                    " (the previous round's recorded after)" if what.endswith("before") and i > 0 else
                    " (the recorded before + contributions - prizes)" if what.endswith("after") else "")
                for what, want, got in diffs) + ".")

    def ledger_row(self, i: int, r: RecordedRound) -> LedgerRow:
        w = self.work[i]
        led = w.ledger
        after = w.pools_after
        return LedgerRow(
            i, r.round_id, r.round_no, r.status, r.jackpot_before, r.next_pool_before, w.jackpot_bets,
            led.to_jackpot if led else 0, led.to_next_pool if led else 0, led.to_house if led else 0,
            led.from_jackpot if led else 0, led.from_next_pool if led else 0, led.from_house if led else 0,
            led.reset if led else False, after.jackpot if after else None, after.next_pool if after else None,
            r.jackpot_after, r.next_pool_after)

    # -- the report -------------------------------------------------------------------------------

    def report(self, i: int, r: RecordedRound, said: tuple[str, ...] | None = None) -> RoundReport:
        """The round's report; `said`: its explanation where words.py joined it (a quiet round)."""
        w = self.work[i]
        reason = self.unsettled_reason(i)
        lines = said
        if lines is None:
            lines = explain_round(self.rules, self.table.currency, r, w.expected_box_cards, w.expected_dealer_cards,
                                  w.ranks, w.dealer, w.qualifies, w.bet_lines, w.pools_before, w.ledger, w.pools_after,
                                  reason)
            timing = timing_line(r.boxes, r.box_actions, r.box_action_times, r.dealer_revealed_at, REVEAL)
            if timing is not None:
                lines.append(timing)
        return RoundReport(
            i, w.expected_box_cards, w.expected_dealer_cards, tuple(k.category if k else None for k in w.ranks),
            w.dealer.category if w.dealer else None, w.qualifies, w.pools_before, w.pools_after, tuple(lines),
            tuple(dict.fromkeys(w.kinds)), reason)


_TEXTS = pa.list_(pa.string())
_CATEGORY_NAMES = pa.array(RANK_NAMES, pa.string())
# what the audit says of each round besides its explanation, a column each (StudAudit.columns)
ENGINE_COLUMNS = pa.schema([
    ("expected_box_cards", pa.list_(_TEXTS)), ("expected_dealer_cards", _TEXTS), ("box_ranks", _TEXTS),
    ("dealer_rank", pa.string()), ("dealer_qualifies", pa.bool_()), ("expected_jackpot_before", pa.int64()),
    ("expected_jackpot_after", pa.int64()), ("expected_next_pool_before", pa.int64()),
    ("expected_next_pool_after", pa.int64()), ("finding_kinds", _TEXTS)])


def _by_round(round_index: np.ndarray, read: np.ndarray) -> tuple[dict[int, list[int]], list[str | None]]:
    """(each `read` round's bets in record order, each bet's reason it cannot be settled: its round_index not one
    of the rounds)."""
    n = len(read)
    known = (round_index >= 0) & (round_index < n)
    unsettled: list[str | None] = [None] * len(round_index)
    for b in np.flatnonzero(~known).tolist():
        unsettled[b] = f"round_index {int(round_index[b])} is not one of the table-day's {n} rounds"
    bets = np.flatnonzero(known & np.append(read, False)[np.where(known, round_index, n)])
    if not len(bets):
        return {}, unsettled
    order = bets[np.argsort(round_index[bets], kind="stable")]
    rounds, starts = np.unique(round_index[order], return_index=True)
    return dict(zip(rounds.tolist(), (part.tolist() for part in np.split(order, starts[1:])), strict=True)), unsettled


class _Said:
    """Every round's explanation as words.py wrote them (`lines`, round i's from at[i] to at[i + 1]), a round's taken
    out where asked."""

    def __init__(self, at: np.ndarray, lines: pa.Array):
        self.at, self.lines = at, lines

    def of(self, i: int) -> tuple[str, ...]:
        return tuple(self.lines.slice(self.at[i], self.at[i + 1] - self.at[i]).to_pylist())


class _Reports(Sequence[RoundReport]):
    """The rounds' reports: those the audit made, a plain quiet round's made where asked (`make(i)`)."""

    def __init__(self, made: list[RoundReport | None], make: Callable[[int], RoundReport]):
        self.made, self.make = made, make

    def __len__(self) -> int:
        return len(self.made)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        report = self.made[i]
        if report is None:
            report = self.made[i] = self.make(i % len(self))
        return report

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def _pool(name: str | None) -> str:
    return (name or "").replace("_", " ")


def audit_table_rounds(rules: CasinoStudRules, table: TableFacts, rounds: Sequence[RecordedRound],
                       bets: Sequence[RecordedBet], quarantined: Sequence[QuarantinedBet] = (),
                       gaps: Sequence[ChainGap] = (), round_by_round: bool = False,
                       dealt: tuple[DealtRounds, DealtBets] | None = None) -> StudAudit:
    """The audit of one table-day; `rounds` in betting_closed_at order, `bets[i].round_index` points into
    them; `quarantined`: the bets of these rounds put in quarantine as they were read (their round_index
    likewise), seen by their neighbours' rules and never settled; `gaps`: the table-day's decks with no round
    here (the pool chain's gaps, chain.py). Never raises on bad data. The rounds the compiled kernel calls quiet
    are settled by it (quiet.py); `round_by_round`: every round through the readable rules instead (the oracle
    the kernel is tested against); `dealt`: the rounds and bets as the kernel reads them, where the caller read them
    from their columns (dealt.dealt_rounds, dealt.bet_columns; else read from `rounds` and `bets`)."""
    return _Auditor(rules, table, rounds, bets, quarantined, gaps, round_by_round, dealt).run()
