"""The audit of one blackjack shoe: its dealing, every recorded decision and every bet on its rounds.

What is judged, round by round (rounds in round_no order, dealt one after another from the shoe):
* the shoe: `decks` full decks (SHOE_COMPOSITION); the first `burn_cards` cards burned, so the first
  round's first card is cards[burn_cards];
* each round's recorded cards, put in 004's dealing order (first card of every box, the upcard, the
  second card of every box, each box's further cards box by box, the dealer's further cards), are the
  next cards of the shoe (CARD_SEQUENCE_MISMATCH); the next round starts after the cards this round
  recorded, so one misdeal is reported once;
* the recorded cards agree with the recorded decisions: each box holds the cards its letters call
  for (else the round cannot be settled: its bets go to quarantine with the reason);
* every decision legal at its point (ILLEGAL_DECISION), no hand left without one (DECISION_MISSING),
  an auto-played box follows the basic-strategy chart (AUTO_PLAY_DEVIATION);
* a letter that is not H, S, D or P is ILLEGAL_DECISION on its box, naming the recorded text, also when
  the round cannot be settled (its cards are then not what the readable letters call for);
* the dealer's recorded draws follow the H17 rule, judged on the recorded cards (DEALER_DRAW_RULE,
  critical: bets wait for the dealer's total); with every box hand bust or a blackjack before the
  dealer's turn, the ruleset's `dealer_when_all_settled` reading (DEALER_DRAW_CONVENTION, major: no bet
  depends on those cards, only on the second card, which both readings require);
* no round after the cut-card round (ROUND_AFTER_CUT);
* where `box_action_times` and `dealer_revealed_at` are recorded, no decision taken after the dealer's
  second card was dealt (LATE_DECISION, one finding naming every late decision; one exactly at that instant
  is on time, engine/decision_times.py); instants that are not one per decision letter: the round cannot be
  settled (its bets go to quarantine with the reason).
One finding of a kind per round, naming every box it concerns. A round's record that cannot be read (a
box that is not a seat 1-7, a card that is not a card code, lists without one entry per box) is never
an exception: its bets go to quarantine with a reason naming the round id. Paid amounts follow the
recorded cards (what came out), as for baccarat: each bet's expected credit is the engine's settlement
of the round as it was recorded. Cancelled rounds refund every bet; their cards count as having come out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction

import numpy as np

from engine.betting import QuarantinedBet, TableFacts, are_late, is_late, us_text, within_limits
from engine.cards import CARD_CODES, check_composition, format_cards
from engine.decision_times import late_decisions, late_finding_text, times_problem, timing_line
from engine.findings import Finding, format_money

from . import BET_CODES
from .hand import dealer_decision, hand_total
from .play import ACTIONS, BoxActions, RoundPlay, dealt_tuples, replay_round, waits_for_dealer
from .rules import BlackjackRules
from .settlement import (
    UnitCredit,
    bet_behind_unit_credit,
    box_unit_credit,
    insurance_offered,
    settle_bet_behind,
    settle_box,
    settle_insurance,
    settle_pair,
    total_staked,
)
from .strategy import BasicStrategyChart, basic_strategy_decision

MAIN, PAIR, INSURANCE, BET_BEHIND = BET_CODES


@dataclass(frozen=True)
class ShoeFacts:
    shoe_id: str
    decks: int
    cards: tuple[str | None, ...]
    cut_index: int | None


@dataclass(frozen=True)
class RecordedRound:
    round_id: str
    round_no: int
    status: str  # settled | cancelled
    betting_closed_at: int  # microseconds since the epoch, UTC
    dealer_cards: tuple[str, ...]
    boxes: tuple[int, ...]
    box_cards: tuple[tuple[str, ...], ...]
    box_actions: tuple[str, ...]
    box_auto_played: tuple[bool, ...]
    # when each decision was taken (per box, an instant per letter of box_actions) and when the dealer's second
    # card was dealt, microseconds since the epoch, UTC; None: not recorded (not judged)
    box_action_times: tuple[tuple[int | None, ...] | None, ...] | None = None
    dealer_revealed_at: int | None = None


@dataclass(frozen=True)
class RecordedBet:
    bet_id: str
    round_index: int  # into the shoe's rounds
    account_id: str
    bet_type: str
    seat: int | None
    stake: int
    added_stake: int | None
    paid: int
    placed_at: int  # microseconds since the epoch, UTC


@dataclass(frozen=True)
class ShoeBets:
    """A shoe's bets as columns, RecordedBet's fields one entry a bet (lists or numpy arrays): what an
    adaptor hands over without an object a bet. added_stake: None or 0 where nothing was added."""

    bet_id: Sequence[str]
    round_index: Sequence[int]
    account_id: Sequence[str]
    bet_type: Sequence[str]
    seat: Sequence[int | None]
    stake: Sequence[int]
    added_stake: Sequence[int | None]
    paid: Sequence[int]
    placed_at: Sequence[int]

    @classmethod
    def of(cls, bets: Sequence[RecordedBet]) -> ShoeBets:
        return cls(*([getattr(bet, f.name) for bet in bets] for f in fields(RecordedBet)))

    def __len__(self) -> int:
        return len(self.bet_id)

    def bet(self, i: int) -> RecordedBet:
        return RecordedBet(_plain(self.bet_id[i]), _plain(self.round_index[i]), _plain(self.account_id[i]),
                           _plain(self.bet_type[i]), _plain(self.seat[i]), _plain(self.stake[i]),
                           _plain(self.added_stake[i]), _plain(self.paid[i]), _plain(self.placed_at[i]))


class _MainsByRound:
    """The MAIN bets of each round by box and the accounts seated in it (those with a MAIN bet), as
    check_bet reads them, made only for the rounds that ask."""

    def __init__(self, bets: ShoeBets, k: np.ndarray):
        self.bets, self.made = bets, {}
        self.index: dict[int, list[int]] = {}
        seats = bets.seat
        for i in np.flatnonzero(np.asarray(bets.bet_type, object) == MAIN).tolist():
            if seats[i] is not None:
                self.index.setdefault(int(k[i]), []).append(i)

    def of(self, round_index: int) -> dict[int, list[RecordedBet]]:
        boxes = self.made.get(round_index)
        if boxes is None:
            boxes = self.made[round_index] = {}
            for i in self.index.get(round_index, ()):
                bet = self.bets.bet(i)
                boxes.setdefault(bet.seat, []).append(bet)
        return boxes

    def seated(self, round_index: int) -> set[str]:
        return {_plain(self.bets.account_id[i]) for i in self.index.get(round_index, ())}


_HUGE = 2**40  # a stake or added stake this large (10 billion EUR in cents) goes bet by bet


def _scaled(units: list[UnitCredit], unit_of: np.ndarray, stakes: np.ndarray, rules: BlackjackRules) -> np.ndarray:
    """units[unit_of[i]].of(stakes[i]) for every i (`units` distinct): a unit whose win is a whole number of
    stakes needs no rounding (returned + win stakes), another is worked out once per distinct stake."""
    credits = np.zeros(len(stakes), np.int64)
    for code, unit in enumerate(units):
        at = unit_of == code
        if unit.win.denominator == 1:
            credits[at] = stakes[at] * (unit.returned + unit.win.numerator)
        else:
            distinct, back = np.unique(stakes[at], return_inverse=True)
            credits[at] = np.asarray([unit.of(s, rules) for s in distinct.tolist()], np.int64)[back.reshape(-1)]
    return credits


def _ints(values: Sequence[int | None]) -> np.ndarray:
    """`values` as int64, None as 0."""
    values = np.asarray(values, object)
    return np.where(values == None, 0, values).astype(np.int64)  # noqa: E711 (element by element)


def _plain(value):
    """A numpy scalar as the Python value it holds (a finding's words must not depend on the container)."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class RoundReport:
    """A round as the audit replayed it: what the investigator's replay shows."""

    round_index: int
    shoe_position: int | None  # index in the shoe of the round's first card
    rounds_before: int
    expected_box_cards: tuple[tuple[str, ...], ...] | None  # as the shoe and the decisions deal them
    expected_dealer_cards: tuple[str, ...] | None
    dealer_total: int | None  # of the recorded dealer cards
    cut_card_round: bool
    after_cut: bool
    explanation: tuple[str, ...]
    finding_kinds: tuple[str, ...]
    unsettled_reason: str | None  # the round cannot be settled: its bets go to quarantine


@dataclass
class ShoeAudit:
    rounds: list[RoundReport]
    expected: list[int | None]  # per bet; None: the bet's round cannot be settled (`unsettled` says why)
    unsettled: list[str | None]
    findings: list[Finding] = field(default_factory=list)


def dealing_sequence(dealer: Sequence[str], box_cards: Sequence[Sequence[str]]) -> list[str]:
    """The recorded cards of a round in 004's dealing order (no hole card): each box's first card,
    the upcard, each box's second card, each box's further cards box by box, the dealer's others."""
    seq = [cards[0] for cards in box_cards if cards]
    seq += list(dealer[:1])
    seq += [cards[1] for cards in box_cards if len(cards) > 1]
    seq += [c for cards in box_cards for c in cards[2:]]
    return seq + list(dealer[1:])


SEATS = range(1, 8)  # the boxes a blackjack table has (docs/data-contract.md: seats 1-7)


def _record_problem(r: RecordedRound) -> str | None:
    if not all(isinstance(b, int | np.integer) and b in SEATS for b in r.boxes):
        return f"boxes {list(r.boxes)} hold an entry that is not a box number {SEATS[0]}-{SEATS[-1]}"
    n = len(r.boxes)
    if not (len(r.box_cards) == len(r.box_actions) == len(r.box_auto_played) == n):
        return (f"boxes ({n}), box_cards ({len(r.box_cards)}), box_actions ({len(r.box_actions)}) and "
                f"box_auto_played ({len(r.box_auto_played)}) do not have one entry per box")
    if list(r.boxes) != sorted(set(r.boxes)):
        return f"boxes {list(r.boxes)} are not distinct and ascending (the dealing order)"
    if n and len(r.dealer_cards) < 1:
        return "no dealer card recorded"
    if any(len(cards) < 2 for cards in r.box_cards):
        return "a box has fewer than its two first cards"
    return None


_CARDS = frozenset(CARD_CODES)


def _dealer_total(cards: Sequence[str]) -> int | None:
    """The recorded dealer hand's total; None when it holds no card or an entry that is not a card code."""
    return hand_total(cards).value if cards and all(c in _CARDS for c in cards) else None


@dataclass(frozen=True)
class _DealerProblem:
    kind: str  # DEALER_DRAW_RULE (a bet waits for the dealer's total) or DEALER_DRAW_CONVENTION (none does)
    expected: str
    what: str


def _h17_problem(rules: BlackjackRules, dealer: Sequence[str]) -> str | None:
    """The recorded dealer hand from its second card on against the H17 (or S17) rule."""
    for k in range(2, len(dealer) + 1):
        decision = dealer_decision(dealer[:k], hits_soft_17=rules.hits_soft_17)
        last = k == len(dealer)
        if last and decision.draws:
            return f"dealer stood on {format_cards(dealer)} ({decision.rule}: must draw)"
        if not last and not decision.draws:
            return f"dealer drew {dealer[k]} on {format_cards(dealer[:k])} ({decision.rule})"
    return None


def _second_card_decides(play: RoundPlay) -> bool:
    """With every box hand settled: a bet still depends on the dealer's second card (whether the dealer
    has a blackjack), i.e. insurance can stand (an ace up) or a box blackjack meets a ten-valued upcard."""
    up = play.dealer[0]
    return up[0] == "A" or (up[0] in "TJQK" and any(
        hand.ended_by == "blackjack" for b in play.boxes for hand in b.hands))


def _dealer_rule_problem(rules: BlackjackRules, play: RoundPlay) -> _DealerProblem | None:
    """The recorded dealer hand against H17, judged on its own cards: draw while the rule says draw,
    stop when it says stand. With no hand left live, no bet waits for the dealer's total: the ruleset's
    `dealer_when_all_settled` says which readings are accepted, and a hand that follows none of them is
    DEALER_DRAW_CONVENTION (major), never critical; only a missing second card on which a bet depends is."""
    dealer = play.dealer
    rule = "H17 draws" if rules.hits_soft_17 else "S17 draws"
    live = any(waits_for_dealer(rules, h.cards, from_split=h.from_split) for b in play.boxes for h in b.hands)
    if live:
        what = _h17_problem(rules, dealer) or (None if len(dealer) >= 2 else "the dealer took no second card")
        return _DealerProblem("DEALER_DRAW_RULE", rule, what) if what else None
    settled = "every box hand was settled before the dealer's turn"
    if len(dealer) < 2:
        kind = "DEALER_DRAW_RULE" if _second_card_decides(play) else "DEALER_DRAW_CONVENTION"
        return _DealerProblem(kind, "the second card", f"{settled}: the dealer took no second card")
    reading = rules.dealer_when_all_settled
    if len(dealer) == 2:  # stopped after the second card
        if reading != "draws_by_rule" or not dealer_decision(dealer, hits_soft_17=rules.hits_soft_17).draws:
            return None
        return _DealerProblem("DEALER_DRAW_CONVENTION", f"{rule} (the ruleset's draws_by_rule)",
                              f"{settled}: the dealer stopped on {format_cards(dealer)}, the ruleset's reading "
                              f"draws_by_rule draws on by the rule")
    if reading == "second_card_only":
        return _DealerProblem("DEALER_DRAW_CONVENTION", "the second card only (the ruleset's second_card_only)",
                              f"{settled}: the dealer drew on to {format_cards(dealer)}, the ruleset's reading "
                              f"second_card_only takes only the second card")
    what = _h17_problem(rules, dealer)
    return _DealerProblem("DEALER_DRAW_CONVENTION", f"{rule} (the ruleset's {reading})",
                          f"{settled}: {what}") if what else None


def _unreadable_decisions(r: RecordedRound) -> list[tuple[int, str]]:
    """(box, its recorded text) of each box whose decisions hold a letter that is not H, S, D or P."""
    return [(b, text) for b, text in zip(r.boxes, r.box_actions, strict=False)
            if any(letter not in ACTIONS for letter in text or "")]


def _not_letters(text: str) -> str:
    bad = list(dict.fromkeys(letter for letter in text if letter not in ACTIONS))
    verb = "is" if len(bad) == 1 else "are"
    return f"{', '.join(map(repr, bad))} {verb} not a decision (H hit, S stand, D double, P split)"


def _unreadable_words(box: int, text: str) -> str:
    return f"box {box} recorded {text!r}: {_not_letters(text)}"


def _cards_against_decisions(r: RecordedRound, play: RoundPlay) -> str:
    """Why a complete replay's boxes do not hold the recorded cards: the first box that differs."""
    for b, recorded, dealt, text in zip(r.boxes, r.box_cards, play.box_cards, r.box_actions, strict=False):
        text = text or ""  # (null: no decision recorded)
        if tuple(recorded) != dealt:
            letters = f"its decisions {text!r} call for" if text else "no decision is recorded: that calls for"
            why = f"box {b} holds {format_cards(recorded)}, {letters} {format_cards(dealt)}"
            return why + (f"; {_not_letters(text)}" if any(letter not in ACTIONS for letter in text) else "")
    return "the recorded cards of a box are not the cards its decisions call for"


def shoe_card_text(shoe_cards: Sequence[str | None], at: int, recorded: str) -> str:
    """The shoe's own card at index `at`, and where the recorded card is another, both, marked MISMATCH
    (the narrative names what the shoe holds, never the recorded card as if it were the shoe's)."""
    if at < len(shoe_cards) and shoe_cards[at] == recorded:
        return recorded
    own = shoe_cards[at] if at < len(shoe_cards) else f"none (the shoe has {len(shoe_cards)} cards)"
    return f"{own} (MISMATCH: {recorded} recorded)"


def _explain(rules: BlackjackRules, play: RoundPlay, position: int, chart: BasicStrategyChart,
             shoe_cards: Sequence[str | None]) -> list[str]:
    lines = []
    for shoe_index, card, box, hand, _ in dealt_tuples(play):  # (dealt_positions, without a Dealt a card)
        who = "dealer" if box is None else f"box {box} hand {hand + 1}"
        at = position + shoe_index
        lines.append(f"card {at} of the shoe: {shoe_card_text(shoe_cards, at, card)} to {who}")
    for d in play.decisions:
        total = hand_total(d.cards)
        what = f"box {d.box} hand {d.hand + 1}: {format_cards(d.cards)} ({'soft' if total.soft else 'hard'} " \
               f"{total.value}) against {d.upcard}: {d.action}"
        verdict = "legal" if d.legal else f"ILLEGAL: {d.reason}"
        if d.legal and d.auto_played:
            verdict += f"; basic strategy: {_chart_action(chart, d)}"
        lines.append(f"{what} ({verdict})")
    for box, hand in play.unfinished_hands:
        lines.append(f"box {box} hand {hand + 1}: no decision recorded while the hand was live (played as a stand)")
    for k in range(1, len(play.dealer) + 1):  # the recorded hand, each decision by the rule
        decision = dealer_decision(play.dealer[:k], hits_soft_17=rules.hits_soft_17)
        did = "draws" if k < len(play.dealer) else "stands"
        lines.append(f"dealer {format_cards(play.dealer[:k])}: {did} (rule: {decision.rule})")
    return lines


def _chart_action(chart: BasicStrategyChart, d) -> str:
    return basic_strategy_decision(chart, d.cards, d.upcard, can_double=d.can_double, can_split=d.can_split)


class _ShoeAuditor:
    def __init__(self, rules: BlackjackRules, chart: BasicStrategyChart, table: TableFacts, shoe: ShoeFacts,
                 rounds: Sequence[RecordedRound], bets: ShoeBets, bet_by_bet: bool = False,
                 quarantined: Sequence[QuarantinedBet] = ()):
        self.rules, self.chart, self.table, self.shoe, self.rounds, self.bets = rules, chart, table, shoe, rounds, bets
        self.bet_by_bet = bet_by_bet
        self.findings: list[Finding] = []
        # the MAIN bets put in quarantine as they were read, by round and box: never settled, but a box they
        # name is played by their account (the rules of the round's other bets still see them)
        self.held_mains: dict[int, dict[int, list[QuarantinedBet]]] = {}
        for q in quarantined:
            if q.bet_type == MAIN and q.seat is not None:
                self.held_mains.setdefault(q.round_index, {}).setdefault(q.seat, []).append(q)

    def round_finding(self, kind: str, r: RecordedRound, expected: str, recorded: str, message: str) -> None:
        self.findings.append(Finding(kind, self.table.table_id, self.shoe.shoe_id, r.round_id, None, expected,
                                     recorded, message))

    def bet_finding(self, kind: str, bet: RecordedBet, expected: str, recorded: str, message: str) -> None:
        r = self.rounds[bet.round_index]
        self.findings.append(Finding(kind, self.table.table_id, self.shoe.shoe_id, r.round_id, bet.bet_id,
                                     expected, recorded, message, bet.account_id))

    def money(self, amount: int) -> str:
        return format_money(int(amount), self.table.currency)

    def what(self, bet: RecordedBet) -> str:
        """The bet in words, as its findings name it."""
        return f"Bet {bet.bet_id} ({bet.bet_type}, stake {self.money(bet.stake)})"

    # -- the shoe and its rounds ------------------------------------------------------------------

    def run(self) -> ShoeAudit:
        shoe = self.shoe
        composition = check_composition(shoe.cards, shoe.decks)
        if not composition.ok:
            self.findings.append(Finding("SHOE_COMPOSITION", self.table.table_id, shoe.shoe_id, None, None,
                                         f"{shoe.decks} full decks", composition.describe(),
                                         f"Shoe {shoe.shoe_id} is {composition.describe()}."))
        position, cut_seen, reports, plays = self.rules.burn_cards, False, [], []
        for i, r in enumerate(self.rounds):
            report, play, used = self.round(i, r, position, cut_seen)
            reports.append(report)
            plays.append(play)
            if shoe.cut_index is not None and position + used > shoe.cut_index:
                cut_seen = True
            position += used
        expected, unsettled = self.settle(reports, plays)
        return ShoeAudit(reports, expected, unsettled, self.findings)

    def round(self, i: int, r: RecordedRound, position: int, cut_seen: bool):
        """(report, the round as recorded replayed, how many cards it took)."""
        problem = _record_problem(r)
        timing = times_problem(r.boxes, r.box_actions, r.box_action_times) if problem is None else None
        boxes = [BoxActions(b, a or "", auto) for b, a, auto in zip(r.boxes, r.box_actions, r.box_auto_played,
                                                                     strict=False)]
        if problem is not None:
            return self.report(i, r, position, cut_seen, None, None, [], [], f"round {r.round_id}: {problem}"), \
                None, len(r.dealer_cards) + sum(len(c) for c in r.box_cards)
        seq = dealing_sequence(r.dealer_cards, r.box_cards)
        if timing is not None:  # the cards still came out of the shoe; an unreadable letter is still a finding
            found: list[str] = []
            if r.status == "settled":
                self.flag_illegal(r, (), found)
            return self.report(i, r, position, cut_seen, None, None, found, [], f"round {r.round_id}: {timing}"), \
                None, len(seq)
        # The boxes are played on the recorded cards and the dealer's hand is what came out: the record
        # decides what is paid, the dealer's draws are judged against the rule separately.
        play = replay_round(self.rules, seq, boxes, dealer_as_recorded=True)
        dealer_problem = _dealer_rule_problem(self.rules, play) if play.complete else None
        if play.complete and dealer_problem is None and self.shoe_deals(seq, position):
            # The recorded cards are the shoe's next cards and the dealer drew by the rule: what the shoe and
            # the decisions deal is the recorded round itself (the same cards to the same hands, the dealer
            # stopping where the rule stops), so it is not replayed a second time.
            expected_play = play
        else:
            shoe_rest = [c for c in self.shoe.cards[position:] if isinstance(c, str)]
            expected_play = replay_round(self.rules, shoe_rest, boxes)  # what the shoe and the decisions deal
        kinds: list[str] = []
        if play.box_cards != tuple(tuple(c) for c in r.box_cards) or not play.complete:
            why = play.incomplete_reason or _cards_against_decisions(r, play)
            reason = f"round {r.round_id}: the recorded cards and decisions cannot be settled ({why})"
            if r.status == "settled":  # an unreadable letter is a finding whatever the cards say
                self.flag_illegal(r, (), kinds)
            return self.report(i, r, position, cut_seen, expected_play, None, kinds, [], reason), None, len(seq)
        if r.status == "settled":
            self.check_round(r, position, seq, play, cut_seen, dealer_problem, kinds)
        lines = _explain(self.rules, play, position, self.chart, self.shoe.cards)
        timing = timing_line(r.boxes, r.box_actions, r.box_action_times, r.dealer_revealed_at,
                             "the dealer's second card dealt")
        return self.report(i, r, position, cut_seen, expected_play, play, kinds, lines + ([timing] if timing else []),
                           None), play, len(seq)

    def shoe_deals(self, seq: list[str], position: int) -> bool:
        """The recorded cards in dealing order are the next cards of the shoe."""
        return tuple(self.shoe.cards[position:position + len(seq)]) == tuple(seq)

    def where(self, r: RecordedRound) -> str:
        """The round in a finding's message: its id, and where it sits in its shoe."""
        return f"Round {r.round_id} (round {r.round_no} of shoe {self.shoe.shoe_id})"

    def flag_illegal(self, r: RecordedRound, decisions: Sequence, kinds: list[str]) -> None:
        """ILLEGAL_DECISION: the illegal `decisions` of the replay with a known letter, and every box whose
        recorded text holds a letter that is not one (named as recorded), in box order."""
        said = [(d.box, f"box {d.box}: {d.action}", f"box {d.box} hand {d.hand + 1} {d.action} on "
                 f"{format_cards(d.cards)}: {d.reason}") for d in decisions if not d.legal and d.action in ACTIONS]
        said += [(b, f"box {b}: {text!r}", _unreadable_words(b, text)) for b, text in _unreadable_decisions(r)]
        if said:
            said.sort(key=lambda x: x[0])  # (stable: the replay's order within a box)
            kinds.append("ILLEGAL_DECISION")
            self.round_finding("ILLEGAL_DECISION", r, "legal decisions", "; ".join(x[1] for x in said),
                               f"{self.where(r)}: " + "; ".join(x[2] for x in said) + ".")

    def check_round(self, r: RecordedRound, position: int, seq: list[str], play: RoundPlay, cut_seen: bool,
                    dealer_problem: _DealerProblem | None, kinds: list[str]) -> None:
        def flag(kind: str, expected: str, recorded: str, message: str) -> None:
            kinds.append(kind)
            self.round_finding(kind, r, expected, recorded, message)

        where = self.where(r)
        if not self.shoe_deals(seq, position):
            shoe_cards = self.shoe.cards[position:position + len(seq)]
            flag("CARD_SEQUENCE_MISMATCH", format_cards(shoe_cards), format_cards(seq),
                 f"{where}: the recorded cards in dealing order are not the next cards of the shoe "
                 f"(from card {position}).")
        if cut_seen:
            flag("ROUND_AFTER_CUT", "no round after the cut-card round", f"round {r.round_no}",
                 f"{where} was dealt after the round in which the cut card came out.")
        if dealer_problem:
            flag(dealer_problem.kind, dealer_problem.expected, format_cards(play.dealer),
                 f"{where}: {dealer_problem.what}.")
        self.flag_illegal(r, play.decisions, kinds)
        late = late_decisions(r.boxes, r.box_actions, r.box_action_times, r.dealer_revealed_at)
        if late:
            expected, recorded, words = late_finding_text(late, r.dealer_revealed_at,
                                                          "the dealer's second card was dealt")
            flag("LATE_DECISION", expected, recorded, f"{where}: {words}")
        if play.unfinished_hands:
            flag("DECISION_MISSING", "a decision until each hand ends",
                 ", ".join(f"box {b} hand {h + 1}" for b, h in play.unfinished_hands),
                 f"{where}: no decision recorded for " + ", ".join(f"box {b} hand {h + 1}"
                                                                  for b, h in play.unfinished_hands)
                 + " while the hand was live.")
        chart_says = [(d, _chart_action(self.chart, d)) for d in play.decisions
                      if d.auto_played and d.legal and d.carried_out]
        deviations = [(d, want) for d, want in chart_says if d.action != want]
        if deviations:
            flag("AUTO_PLAY_DEVIATION", "; ".join(f"box {d.box}: {want}" for d, want in deviations),
                 "; ".join(f"box {d.box}: {d.action}" for d, _ in deviations),
                 f"{where}: auto-played " + "; ".join(
                     f"box {d.box} took {d.action} on {format_cards(d.cards)} against {d.upcard}, basic strategy "
                     f"says {want}" for d, want in deviations) + ".")

    def report(self, i, r, position, cut_seen, expected_play, play, kinds, explanation, unsettled) -> RoundReport:
        cut = (self.shoe.cut_index is not None and not cut_seen
               and position + len(r.dealer_cards) + sum(len(c) for c in r.box_cards) > self.shoe.cut_index)
        return RoundReport(
            i, position, i,
            expected_play.box_cards if expected_play is not None else None,
            tuple(expected_play.dealer) if expected_play is not None else None,
            _dealer_total(r.dealer_cards),
            cut, cut_seen, tuple(explanation), tuple(dict.fromkeys(kinds)), unsettled)

    # -- the bets ---------------------------------------------------------------------------------

    def settle(self, reports: list[RoundReport], plays: list[RoundPlay | None]):
        """Each bet's expected credit (None: its round cannot be settled, `unsettled` says why). The MAIN
        bets and bets behind are settled as columns: a box's UnitCredit once, scaled by each distinct stake,
        and screened for every check of credit() and check_bet() at once (quiet(): the same boundaries);
        only a bet the screen cannot clear, and every PAIR, INSURANCE or unknown bet, goes through credit()
        and check_bet() one by one, in bet order, so the findings come in the order those make them."""
        bets, rounds = self.bets, self.rounds
        n = len(bets)
        expected: list[int | None] = [None] * n
        unsettled: list[str | None] = [None] * n
        if not n:
            return expected, unsettled
        k = np.asarray(bets.round_index, np.int64)
        cancelled = np.array([r.status == "cancelled" for r in rounds], bool)[k]
        reasons = [rep.unsettled_reason if r.status != "cancelled" else None for r, rep in zip(rounds, reports,
                                                                                           strict=True)]
        settled = np.array([reason is None for reason in reasons], bool)[k]
        owed, quiet = self.quiet(plays, k, cancelled, settled)
        if self.bet_by_bet:
            quiet[:] = False
        expected = owed.tolist()
        mains = _MainsByRound(bets, k)
        for i in np.flatnonzero(settled & ~quiet).tolist():
            bet = bets.bet(i)
            r = rounds[bet.round_index]
            # (only a PAIR or INSURANCE bet reads the round's MAIN bets, only a bet behind who is seated)
            round_mains = mains.of(bet.round_index) if bet.bet_type in (PAIR, INSURANCE) else {}
            seated = mains.seated(bet.round_index) if bet.bet_type == BET_BEHIND else set()
            credit = self.credit(bet, r, plays[bet.round_index], round_mains, r.status == "cancelled")
            expected[i] = credit
            self.check_bet(bet, r, credit, round_mains, seated)
        for i in np.flatnonzero(~settled).tolist():
            expected[i], unsettled[i] = None, reasons[bets.round_index[i]]
        return expected, unsettled

    def quiet(self, plays: list[RoundPlay | None], k: np.ndarray, cancelled: np.ndarray, settled: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """(what each MAIN bet and bet behind is owed, the bets no check of credit() and check_bet() can
        flag): on a played box (or a cancelled round's), the added stake the box's doubles and splits
        call for, paid what is owed, within its type's limits, on time, a bet behind by an account not
        seated in the round. Other bets, and those of a round that cannot be settled: not quiet."""
        bets, rules, rounds = self.bets, self.rules, self.rounds
        types = np.asarray(bets.bet_type, object)
        stake, paid = np.asarray(bets.stake, np.int64), np.asarray(bets.paid, np.int64)
        main, behind = types == MAIN, types == BET_BEHIND
        as_box = main | (behind & (rules.bet_behind_on_double_or_split == "follows"))
        added = _ints(bets.added_stake)
        owed = np.where(cancelled, stake + added, 0)  # a cancelled round refunds everything staked
        row = self.box_rows(k, list(bets.seat))
        on_box = row >= 0
        quiet = settled & (main | behind) & (on_box | cancelled)
        quiet &= (np.abs(stake) < _HUGE) & (np.abs(added) < _HUGE)  # (no int64 product can overflow)
        # each box's UnitCredit once, then each unit scaled by its bets' stakes
        played = quiet & on_box & ~cancelled
        for family, unit_credit in ((as_box, box_unit_credit), (~as_box, bet_behind_unit_credit)):
            wanted = played & family
            rows, back = np.unique(row[wanted], return_inverse=True)
            code_of: dict[UnitCredit, int] = {}
            codes = [code_of.setdefault(unit_credit(rules, plays[self.box_of[j][0]], self.box_of[j][1]),
                                        len(code_of)) for j in rows.tolist()]
            owed[wanted] = _scaled(list(code_of), np.asarray(codes, np.int64)[back.reshape(-1)], stake[wanted], rules)
        boxed = played & as_box
        if boxed.any():  # the added stake: what the box's doubles and splits add to each stake
            rows, back = np.unique(row[boxed], return_inverse=True)
            per_unit = [total_staked(plays[self.box_of[j][0]], self.box_of[j][1], 1) for j in rows.tolist()]
            staked = np.asarray(per_unit, np.int64)[back.reshape(-1)]
            quiet[boxed] &= added[boxed] == stake[boxed] * (staked - 1)
        quiet &= paid == owed
        for bet_type in (MAIN, BET_BEHIND):
            if bet_type in self.table.limits:
                quiet &= (types != bet_type) | within_limits(stake, self.table.limits[bet_type])
        closed = np.array([r.betting_closed_at for r in rounds], np.int64)[k]
        quiet &= ~are_late(np.asarray(bets.placed_at, np.int64), closed)
        # a bet behind by an account with a MAIN bet on the round (on any recorded seat), in quarantine or not
        accounts = np.asarray(bets.account_id, object)
        for i in np.flatnonzero(quiet & behind & on_box).tolist() if self.held_mains else ():
            if self.held_seat_of(int(k[i]), _plain(accounts[i])) is not None:
                quiet[i] = False
        seated = main & (np.asarray(bets.seat, object) != None)  # noqa: E711 (element by element)
        ask = quiet & behind & on_box
        if seated.any() and ask.any():
            code_of: dict[str, int] = {}
            code = np.fromiter((code_of.setdefault(a, len(code_of)) for a in accounts[seated | ask].tolist()),
                               np.int64)
            keys = k[seated | ask] * len(code_of) + code
            by_seated = np.isin(keys[ask[seated | ask]], keys[seated[seated | ask]])
            quiet[np.flatnonzero(ask)[by_seated]] = False
        return owed, quiet

    def held_seat_of(self, round_index: int, account_id: str) -> QuarantinedBet | None:
        """A MAIN bet of `account_id` in quarantine on the round (on any box), or None."""
        for held in self.held_mains.get(round_index, {}).values():
            for q in held:
                if q.account_id == account_id:
                    return q
        return None

    def box_rows(self, k: np.ndarray, seats: Sequence[int | None]) -> np.ndarray:
        """Each bet's box as its row in self.box_of (every recorded box of every round), -1 where its seat is
        none of its round's boxes."""
        self.box_of = [(i, box) for i, r in enumerate(self.rounds) for box in r.boxes]
        row_of = {box: j for j, box in enumerate(self.box_of)}
        return np.fromiter((row_of.get(key, -1) for key in zip(k.tolist(), seats, strict=True)), np.int64, len(k))

    def credit(self, bet: RecordedBet, r: RecordedRound, play: RoundPlay | None,
               mains: dict[int, list[RecordedBet]], cancelled: bool) -> int:
        rules = self.rules
        if cancelled:  # everything staked comes back, what a double or split added too
            return bet.stake + (bet.added_stake or 0)
        if bet.bet_type not in BET_CODES:
            self.bet_finding("BET_TYPE_NOT_OFFERED", bet, f"a bet type of {rules.id}", bet.bet_type,
                             f"{self.what(bet)}: {rules.id} does not offer {bet.bet_type}.")
            return bet.stake
        if play is None or bet.seat not in r.boxes:
            self.bet_finding("BET_ON_EMPTY_BOX", bet, f"one of the occupied boxes {list(r.boxes)}",
                             f"box {bet.seat}", f"{self.what(bet)} is on box {bet.seat}, which nobody played in round "
                             f"{r.round_id}: refunded.")
            return bet.stake
        follows = bet.bet_type == BET_BEHIND and rules.bet_behind_on_double_or_split == "follows"
        if bet.bet_type == MAIN or follows:
            credit = settle_box(rules, play, bet.seat, bet.stake)
            added = total_staked(play, bet.seat, bet.stake) - bet.stake
            if (bet.added_stake or 0) != added:
                self.bet_finding("ADDED_STAKE_MISMATCH", bet, self.money(added), self.money(bet.added_stake or 0),
                                 f"{self.what(bet)}: the box's doubles and splits add {self.money(added)}, recorded "
                                 f"{self.money(bet.added_stake or 0)}.")
            return credit
        if bet.bet_type == PAIR:
            return settle_pair(rules, play, bet.seat, bet.stake)
        if bet.bet_type == INSURANCE:
            if not insurance_offered(play, rules, bet.seat):
                self.bet_finding("INSURANCE_NOT_OFFERED", bet, "insurance only against a dealer ace",
                                 f"upcard {play.upcard}", f"{self.what(bet)}: insurance taken against {play.upcard} "
                                 f"in round {r.round_id}: refunded.")
                return bet.stake
            return settle_insurance(rules, play, bet.stake, box=bet.seat)
        return settle_bet_behind(rules, play, bet.seat, bet.stake)

    def check_bet(self, bet: RecordedBet, r: RecordedRound, credit: int, mains: dict[int, list[RecordedBet]],
                  seated: set[str]) -> None:
        """`mains`: the round's MAIN bets by box; `seated`: the accounts playing a box in the round."""
        rules, table = self.rules, self.table
        delta = bet.paid - credit
        if delta:
            kind = "OVERPAID" if delta > 0 else "UNDERPAID"
            self.bet_finding(kind, bet, self.money(credit), self.money(bet.paid),
                             f"{self.what(bet)} in round {r.round_id} was paid {self.money(bet.paid)}, expected "
                             f"{self.money(credit)}: {kind.lower()} by {self.money(abs(delta))}.")
        if bet.bet_type in table.limits:
            low, high = table.limits[bet.bet_type]
            if bet.stake < low:
                self.bet_finding("STAKE_BELOW_MIN", bet, f">= {self.money(low)}", self.money(bet.stake),
                                 f"{self.what(bet)} is below the {bet.bet_type} minimum {self.money(low)}.")
            if bet.stake > high:
                self.bet_finding("STAKE_ABOVE_MAX", bet, f"<= {self.money(high)}", self.money(bet.stake),
                                 f"{self.what(bet)} is above the {bet.bet_type} maximum {self.money(high)}.")
        # Insurance is offered after the deal, so it is placed after betting closed.
        if bet.bet_type != INSURANCE and is_late(bet.placed_at, r.betting_closed_at):
            closed, placed = us_text(r.betting_closed_at), us_text(bet.placed_at)
            self.bet_finding("LATE_BET", bet, f"placed by {closed}", f"placed at {placed}",
                             f"{self.what(bet)} was placed at {placed}, after betting closed at {closed} for round "
                             f"{r.round_id}.")
        if bet.bet_type not in BET_CODES or bet.seat not in r.boxes:
            return
        held = self.held_mains.get(bet.round_index, {}).get(bet.seat, [])
        if bet.bet_type == PAIR:
            own_mains = [m for m in mains.get(bet.seat, []) if m.account_id == bet.account_id]
            own_mains += [q for q in held if q.account_id == bet.account_id]  # in quarantine, but placed
            if rules.pair_requires_main_bet and not own_mains:
                self.bet_finding("PAIR_WITHOUT_MAIN", bet, f"a MAIN bet of {bet.account_id} on box {bet.seat}",
                                 "none", f"{self.what(bet)}: no main bet of the same account on box {bet.seat}.")
            share = rules.pair_max_share_of_table_max
            if bet.stake * share.denominator > table.table_max * share.numerator:
                cap = Fraction(table.table_max) * share
                self.bet_finding("SIDE_BET_ABOVE_SHARE", bet, f"<= {self.money(int(cap))}", self.money(bet.stake),
                                 f"{self.what(bet)} is above {share} of the table maximum "
                                 f"{self.money(table.table_max)}.")
        # (the box's main stake is not known where a MAIN bet on it is in quarantine with no stake: not judged)
        if bet.bet_type == INSURANCE and all(q.stake is not None for q in held):
            main = sum(m.stake for m in mains.get(bet.seat, [])) + sum(q.stake for q in held)
            share = rules.insurance_stake_share
            with_held = "".join(f" (with {q.named()})" for q in held)
            if bet.stake * share.denominator > main * share.numerator:
                self.bet_finding("INSURANCE_ABOVE_SHARE", bet, f"<= {share} of {self.money(main)}",
                                 self.money(bet.stake), f"{self.what(bet)} is above {share} of the box's main stake "
                                 f"{self.money(main)}{with_held}.")
        if bet.bet_type == BET_BEHIND:
            held_seat = self.held_seat_of(bet.round_index, bet.account_id)
            if bet.account_id not in seated and held_seat is not None:
                self.bet_finding("BET_BEHIND_BY_SEATED", bet, "an account not seated in the round",
                                 f"{bet.account_id} seated", f"{self.what(bet)}: {bet.account_id} plays box "
                                 f"{held_seat.seat} in round {r.round_no} ({held_seat.named()}); bet behind is for "
                                 "accounts that are not seated.")
            if bet.account_id in seated:
                self.bet_finding("BET_BEHIND_BY_SEATED", bet, "an account not seated in the round",
                                 f"{bet.account_id} seated", f"{self.what(bet)}: {bet.account_id} plays a box in round "
                                 f"{r.round_id}; bet behind is for accounts that are not seated.")


def audit_shoe(rules: BlackjackRules, chart: BasicStrategyChart, table: TableFacts, shoe: ShoeFacts,
               rounds: Sequence[RecordedRound], bets: Sequence[RecordedBet] | ShoeBets, *,
               bet_by_bet: bool = False, quarantined: Sequence[QuarantinedBet] = ()) -> ShoeAudit:
    """The audit of one shoe; `rounds` in round order, each bet's round_index points into them.
    `bet_by_bet`: every bet through the scalar rules (credit, check_bet), not only those the column
    screen cannot clear: the same result, slower (the tests' oracle of the screen). `quarantined`: the bets
    of these rounds put in quarantine as they were read (round_index likewise): never settled, but a MAIN
    bet among them plays its box for its account (a PAIR beside it is not without a main bet, a bet behind
    by its account is by a seated account, an insurance's share counts its stake where it is known)."""
    columns = bets if isinstance(bets, ShoeBets) else ShoeBets.of(bets)
    return _ShoeAuditor(rules, chart, table, shoe, rounds, columns, bet_by_bet, quarantined).run()
