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
* the dealer's recorded draws follow the H17 rule, judged on the recorded cards (DEALER_DRAW_RULE);
* no round after the cut-card round (ROUND_AFTER_CUT).
One finding of a kind per round, naming every box it concerns. Paid amounts follow the recorded cards
(what came out), as for baccarat: each bet's expected credit is the engine's settlement of the round
as it was recorded. Cancelled rounds refund every bet; their cards count as having come out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from engine.betting import TableFacts, is_late, us_text
from engine.cards import check_composition, format_cards
from engine.findings import Finding, format_money

from . import BET_CODES
from .hand import dealer_decision, hand_total
from .play import BoxActions, RoundPlay, dealt_positions, replay_round, waits_for_dealer
from .rules import BlackjackRules
from .settlement import (
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


def _record_problem(r: RecordedRound) -> str | None:
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


def _dealer_rule_problem(rules: BlackjackRules, play: RoundPlay) -> str | None:
    """The recorded dealer hand against H17, judged on its own cards: draw while the rule says draw,
    stop when it says stand; with no hand left live, only the second card."""
    dealer = play.dealer
    live = any(waits_for_dealer(rules, h.cards, from_split=h.from_split) for b in play.boxes for h in b.hands)
    if not live:
        return None if len(dealer) == 2 else (
            f"every box hand was settled before the dealer's turn: the dealer takes only the second card, "
            f"recorded {format_cards(dealer)}")
    for k in range(2, len(dealer) + 1):
        decision = dealer_decision(dealer[:k], hits_soft_17=rules.hits_soft_17)
        last = k == len(dealer)
        if last and decision.draws:
            return f"dealer stood on {format_cards(dealer)} ({decision.rule}: must draw)"
        if not last and not decision.draws:
            return f"dealer drew {dealer[k]} on {format_cards(dealer[:k])} ({decision.rule})"
    return None if len(dealer) >= 2 else "the dealer took no second card"


def _explain(rules: BlackjackRules, play: RoundPlay, position: int, chart: BasicStrategyChart) -> list[str]:
    lines = []
    for d in dealt_positions(play):
        who = "dealer" if d.box is None else f"box {d.box} hand {d.hand + 1}"
        lines.append(f"card {position + d.shoe_index} of the shoe: {d.card} to {who}")
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
                 rounds: Sequence[RecordedRound], bets: Sequence[RecordedBet]):
        self.rules, self.chart, self.table, self.shoe, self.rounds, self.bets = rules, chart, table, shoe, rounds, bets
        self.findings: list[Finding] = []

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
        boxes = [BoxActions(b, a, auto) for b, a, auto in zip(r.boxes, r.box_actions, r.box_auto_played,
                                                               strict=False)]
        if problem is not None:
            return self.report(i, r, position, cut_seen, None, None, [], [], problem), None, \
                len(r.dealer_cards) + sum(len(c) for c in r.box_cards)
        seq = dealing_sequence(r.dealer_cards, r.box_cards)
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
            why = play.incomplete_reason or "the recorded cards of a box are not the cards its decisions call for"
            reason = f"round {r.round_no}: the recorded cards and decisions cannot be settled ({why})"
            return self.report(i, r, position, cut_seen, expected_play, None, kinds, [], reason), None, len(seq)
        if r.status == "settled":
            self.check_round(r, position, seq, play, cut_seen, dealer_problem, kinds)
        return self.report(i, r, position, cut_seen, expected_play, play, kinds,
                           _explain(self.rules, play, position, self.chart), None), play, len(seq)

    def shoe_deals(self, seq: list[str], position: int) -> bool:
        """The recorded cards in dealing order are the next cards of the shoe."""
        return tuple(self.shoe.cards[position:position + len(seq)]) == tuple(seq)

    def check_round(self, r: RecordedRound, position: int, seq: list[str], play: RoundPlay, cut_seen: bool,
                    dealer_problem: str | None, kinds: list[str]) -> None:
        def flag(kind: str, expected: str, recorded: str, message: str) -> None:
            kinds.append(kind)
            self.round_finding(kind, r, expected, recorded, message)

        where = f"Round {r.round_no} of shoe {self.shoe.shoe_id}"
        if not self.shoe_deals(seq, position):
            shoe_cards = self.shoe.cards[position:position + len(seq)]
            flag("CARD_SEQUENCE_MISMATCH", format_cards(shoe_cards), format_cards(seq),
                 f"{where}: the recorded cards in dealing order are not the next cards of the shoe "
                 f"(from card {position}).")
        if cut_seen:
            flag("ROUND_AFTER_CUT", "no round after the cut-card round", f"round {r.round_no}",
                 f"{where} was dealt after the round in which the cut card came out.")
        if dealer_problem:
            flag("DEALER_DRAW_RULE", "H17 draws" if self.rules.hits_soft_17 else "S17 draws",
                 format_cards(play.dealer), f"{where}: {dealer_problem}.")
        illegal = [d for d in play.decisions if not d.legal]
        if illegal:
            flag("ILLEGAL_DECISION", "legal decisions", "; ".join(f"box {d.box}: {d.action}" for d in illegal),
                 f"{where}: " + "; ".join(f"box {d.box} hand {d.hand + 1} {d.action} on {format_cards(d.cards)}: "
                                          f"{d.reason}" for d in illegal) + ".")
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
            hand_total(r.dealer_cards).value if r.dealer_cards else None,
            cut, cut_seen, tuple(explanation), tuple(dict.fromkeys(kinds)), unsettled)

    # -- the bets ---------------------------------------------------------------------------------

    def settle(self, reports: list[RoundReport], plays: list[RoundPlay | None]):
        expected: list[int | None] = []
        unsettled: list[str | None] = []
        mains: dict[int, dict[int, list[RecordedBet]]] = {}  # round -> box -> its MAIN bets
        for bet in self.bets:
            if bet.bet_type == MAIN and bet.seat is not None:
                mains.setdefault(bet.round_index, {}).setdefault(bet.seat, []).append(bet)
        seated = {i: {m.account_id for box in boxes.values() for m in box} for i, boxes in mains.items()}
        for bet in self.bets:
            r, report, play = self.rounds[bet.round_index], reports[bet.round_index], plays[bet.round_index]
            cancelled = r.status == "cancelled"
            if report.unsettled_reason is not None and not cancelled:
                expected.append(None)
                unsettled.append(report.unsettled_reason)
                continue
            credit = self.credit(bet, r, play, mains.get(bet.round_index, {}), cancelled)
            expected.append(credit)
            unsettled.append(None)
            self.check_bet(bet, r, credit, mains.get(bet.round_index, {}), seated.get(bet.round_index, set()))
        return expected, unsettled

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
                             f"{r.round_no}: refunded.")
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
                                 f"in round {r.round_no}: refunded.")
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
                             f"{self.what(bet)} in round {r.round_no} was paid {self.money(bet.paid)}, expected "
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
                             f"{r.round_no}.")
        if bet.bet_type not in BET_CODES or bet.seat not in r.boxes:
            return
        if bet.bet_type == PAIR:
            own_mains = [m for m in mains.get(bet.seat, []) if m.account_id == bet.account_id]
            if rules.pair_requires_main_bet and not own_mains:
                self.bet_finding("PAIR_WITHOUT_MAIN", bet, f"a MAIN bet of {bet.account_id} on box {bet.seat}",
                                 "none", f"{self.what(bet)}: no main bet of the same account on box {bet.seat}.")
            share = rules.pair_max_share_of_table_max
            if bet.stake * share.denominator > table.table_max * share.numerator:
                cap = Fraction(table.table_max) * share
                self.bet_finding("SIDE_BET_ABOVE_SHARE", bet, f"<= {self.money(int(cap))}", self.money(bet.stake),
                                 f"{self.what(bet)} is above {share} of the table maximum "
                                 f"{self.money(table.table_max)}.")
        if bet.bet_type == INSURANCE:
            main = sum(m.stake for m in mains.get(bet.seat, []))
            share = rules.insurance_stake_share
            if bet.stake * share.denominator > main * share.numerator:
                self.bet_finding("INSURANCE_ABOVE_SHARE", bet, f"<= {share} of {self.money(main)}",
                                 self.money(bet.stake), f"{self.what(bet)} is above {share} of the box's main stake "
                                 f"{self.money(main)}.")
        if bet.bet_type == BET_BEHIND:
            if bet.account_id in seated:
                self.bet_finding("BET_BEHIND_BY_SEATED", bet, "an account not seated in the round",
                                 f"{bet.account_id} seated", f"{self.what(bet)}: {bet.account_id} plays a box in round "
                                 f"{r.round_no}; bet behind is for accounts that are not seated.")


def audit_shoe(rules: BlackjackRules, chart: BasicStrategyChart, table: TableFacts, shoe: ShoeFacts,
               rounds: Sequence[RecordedRound], bets: Sequence[RecordedBet]) -> ShoeAudit:
    """The audit of one shoe; `rounds` in round order, `bets[i].round_index` points into them."""
    return _ShoeAuditor(rules, chart, table, shoe, rounds, bets).run()
