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
* a round whose record does not tell how many cards it took (cards_not_counted: a box without its cards, a
  box with fewer than two, box cards but no dealer card) leaves the shoe's place unknown after it: one
  SHOE_UNVERIFIABLE_AFTER names it, and the rounds after it are not compared with the shoe's cards (no
  CARD_SEQUENCE_MISMATCH or ROUND_AFTER_CUT, no shoe position); everything else in them is judged, and their
  bets settled, on their recorded cards as always;
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
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from engine.betting import BET_WORDS, QuarantinedBet, TableFacts, is_late, us_bytes, us_text
from engine.cards import CARD_CODES, check_composition, format_cards
from engine.decision_times import late_decisions, late_finding_text, times_problem, timing_line
from engine.findings import UNPLACED_ROUND, Finding, format_money, unverifiable_after
from engine.kernels import ROUNDING_CODES, spans

from . import BET_CODES
from .bet_checks import WORDS, FlaggedBets, bet_findings, side_bet_cap
from .hand import dealer_decision, hand_total, pair_kind
from .kernel import LETTERS, NO_SEAT, PAIR_KINDS, RULE_INTS, play_rounds, settle_bets
from .lines import REVEAL, UNFINISHED, VOCABULARY, VOCABULARY_AT, ShoeLines, write_lines
from .play import ACTIONS, BoxActions, RoundPlay, dealt_positions, hand_is_blackjack, replay_round, waits_for_dealer
from .records import (
    NO_TIME,
    SEATS,
    RecordedBet,
    RecordedRound,
    ShoeBets,
    ShoeFacts,
    ShoeRounds,
    card_codes,
    record_problem,
    rounds_of,
)
from .rules import DEALER_WHEN_ALL_SETTLED, BlackjackRules
from .settlement import (
    bet_behind_unit_credit,
    box_unit_credit,
    insurance_offered,
    settle_bet_behind,
    settle_box,
    settle_insurance,
    settle_pair,
    total_staked,
)
from .strategy import UPCARD_LABELS, BasicStrategyChart, basic_strategy_decision, hand_value

MAIN, PAIR, INSURANCE, BET_BEHIND = BET_CODES
_CODE = {name: code for code, name in enumerate(BET_CODES)}  # (kernel.settle_bets' bet type codes)


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
    rounds: list[RoundReport | None]  # None: a round the kernel replayed (`played` reports it), only unexplained
    # int64 per bet, its credit where `settled` (an adaptor's column with no list between; compared as credits())
    expected: np.ndarray = field(compare=False)
    settled: np.ndarray = field(compare=False)  # bool per bet; False: its round cannot be settled (`unsettled`: why)
    unsettled: list[str | None]
    findings: list[Finding] = field(default_factory=list)
    played: _Played | None = None  # the kernel's replay: reports (reported) and explains (played_lines) the rounds None
    # the bets whose findings bet_checks.bet_findings gives (not among `findings` until audit_shoe adds them), and
    # each of `findings`' bet (-1: the shoe's or a round's finding)
    flagged: FlaggedBets = field(default_factory=lambda: FlaggedBets.joined([]), compare=False)
    on_bet: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), compare=False)

    def credits(self) -> list[int | None]:
        """Each bet's expected credit, None where its round cannot be settled."""
        return [credit if settled else None
                for credit, settled in zip(self.expected.tolist(), self.settled.tolist(), strict=True)]


def dealing_sequence(dealer: Sequence[str], box_cards: Sequence[Sequence[str]]) -> list[str]:
    """The recorded cards of a round in 004's dealing order (no hole card): each box's first card,
    the upcard, each box's second card, each box's further cards box by box, the dealer's others."""
    seq = [cards[0] for cards in box_cards if cards]
    seq += list(dealer[:1])
    seq += [cards[1] for cards in box_cards if len(cards) > 1]
    seq += [c for cards in box_cards for c in cards[2:]]
    return seq + list(dealer[1:])


def _boxes(r: RecordedRound) -> list[BoxActions]:
    """The round's boxes with their recorded decisions, as the replay takes them."""
    return [BoxActions(b, a or "", auto) for b, a, auto in zip(r.boxes, r.box_actions, r.box_auto_played,
                                                                 strict=False)]


def cards_not_counted(r: RecordedRound) -> str | None:
    """Why the record does not tell how many cards the round took from the shoe, or None: it does (each entry of
    its card lists is a card that came out, read or not). A round that records no card at all took none (a round
    cancelled before the deal, as baccarat reads one), unless it was played: boxes and not cancelled."""
    if not r.dealer_cards and not any(r.box_cards):
        return None if r.status == "cancelled" or not r.boxes else "it records boxes but no card"
    if r.round_no < 1:  # (only a round put in quarantine as read: pipelines.games.rows.dealing_place)
        return UNPLACED_ROUND
    if len(r.box_cards) < len(r.boxes):
        return f"box_cards holds {len(r.box_cards)} list(s) for its {len(r.boxes)} boxes"
    short = [k for k, cards in enumerate(r.box_cards) if len(cards) < 2]
    if short:
        k = short[0]
        box = f"box {r.boxes[k]}" if k < len(r.boxes) else f"box_cards entry {k + 1}"
        return f"{box} holds {len(r.box_cards[k])} card(s), not its two first"
    if len(r.box_cards) and not r.dealer_cards:
        return "dealer_cards holds no card"
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


def live_dealer_problem(rules: BlackjackRules, dealer: Sequence[str]) -> _DealerProblem | None:
    """The recorded dealer hand against H17 (or S17) while a hand waits for its total: DEALER_DRAW_RULE, or None
    (also the words of a round the kernel settles)."""
    rule = "H17 draws" if rules.hits_soft_17 else "S17 draws"
    what = _h17_problem(rules, dealer) or (None if len(dealer) >= 2 else "the dealer took no second card")
    return _DealerProblem("DEALER_DRAW_RULE", rule, what) if what else None


def dealer_words(where: str, problem: _DealerProblem, dealer: Sequence[str]) -> tuple[str, str, str]:
    """The dealer's finding's expected, recorded and message (the readable audit's words, also those of a round
    the kernel settles)."""
    return problem.expected, format_cards(dealer), f"{where}: {problem.what}."


def _dealer_rule_problem(rules: BlackjackRules, play: RoundPlay) -> _DealerProblem | None:
    """The recorded dealer hand against H17, judged on its own cards: draw while the rule says draw,
    stop when it says stand. With no hand left live, no bet waits for the dealer's total: the ruleset's
    `dealer_when_all_settled` says which readings are accepted, and a hand that follows none of them is
    DEALER_DRAW_CONVENTION (major), never critical; only a missing second card on which a bet depends is."""
    dealer = play.dealer
    rule = "H17 draws" if rules.hits_soft_17 else "S17 draws"
    live = any(waits_for_dealer(rules, h.cards, from_split=h.from_split) for b in play.boxes for h in b.hands)
    if live:
        return live_dealer_problem(rules, dealer)
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


def _explain(rules: BlackjackRules, play: RoundPlay, position: int | None, chart: BasicStrategyChart,
             shoe_cards: Sequence[str | None]) -> list[str]:
    """`position` None: the round's place in the shoe is not known (its cards named as the round's own)."""
    lines = []
    for d in dealt_positions(play):
        who = "dealer" if d.box is None else f"box {d.box} hand {d.hand + 1}"
        if position is None:
            lines.append(f"card {d.shoe_index + 1} of the round (its place in the shoe is not known): {d.card} "
                         f"to {who}")
            continue
        at = position + d.shoe_index
        lines.append(f"card {at} of the shoe: {shoe_card_text(shoe_cards, at, d.card)} to {who}")
    for d in play.decisions:
        total = hand_total(d.cards)
        what = f"box {d.box} hand {d.hand + 1}: {format_cards(d.cards)} ({'soft' if total.soft else 'hard'} " \
               f"{total.value}) against {d.upcard}: {d.action}"
        verdict = "legal" if d.legal else f"ILLEGAL: {d.reason}"
        if d.legal and d.auto_played:
            verdict += f"; basic strategy: {_chart_action(chart, d)}"
        lines.append(f"{what} ({verdict})")
    for box, hand in play.unfinished_hands:
        lines.append(f"box {box} hand {hand + 1}: {UNFINISHED}")
    for k in range(1, len(play.dealer) + 1):  # the recorded hand, each decision by the rule
        decision = dealer_decision(play.dealer[:k], hits_soft_17=rules.hits_soft_17)
        did = "draws" if k < len(play.dealer) else "stands"
        lines.append(f"dealer {format_cards(play.dealer[:k])}: {did} (rule: {decision.rule})")
    return lines


# the findings a round the kernel settles can have (each the readable audit's, in check_round's order)
KERNEL_KINDS = ("DEALER_DRAW_RULE", "DECISION_MISSING", "AUTO_PLAY_DEVIATION")


def round_where(r: RecordedRound, shoe_id: str) -> str:
    """The round in a finding's message: its id, and where it sits in its shoe."""
    return f"Round {r.round_id} (round {r.round_no} of shoe {shoe_id})"


def missing_words(where: str, hands: Sequence[tuple[int, int]]) -> tuple[str, str, str]:
    """DECISION_MISSING's expected, recorded and message: `hands` (box, hand index) were left live with no decision
    (the readable audit's words, also those of a round the kernel settles)."""
    named = ", ".join(f"box {b} hand {h + 1}" for b, h in hands)
    return ("a decision until each hand ends", named,
            f"{where}: no decision recorded for {named} while the hand was live.")


def deviation_words(where: str, deviations: Sequence[tuple[int, str, Sequence[str], str, str]]
                    ) -> tuple[str, str, str]:
    """AUTO_PLAY_DEVIATION's expected, recorded and message: each auto-played decision off the chart as (box, the
    letter taken, the hand's cards, the upcard, the chart's letter) (the readable audit's words, also those of a
    round the kernel settles)."""
    return ("; ".join(f"box {box}: {want}" for box, _, _, _, want in deviations),
            "; ".join(f"box {box}: {took}" for box, took, _, _, _ in deviations),
            f"{where}: auto-played " + "; ".join(
                f"box {box} took {took} on {format_cards(cards)} against {upcard}, basic strategy says {want}"
                for box, took, cards, upcard, want in deviations) + ".")


def _chart_action(chart: BasicStrategyChart, d) -> str:
    return basic_strategy_decision(chart, d.cards, d.upcard, can_double=d.can_double, can_split=d.can_split)


class Owed(NamedTuple):
    """What a bet's box owes it: its credit; for a bet settled as the box (MAIN, a bet behind that follows
    it) the stake its doubles and splits add (else None); for insurance, whether it was offered."""

    credit: int
    added: int | None = None
    offered: bool = True


def _as_box(rules: BlackjackRules, bet: RecordedBet) -> bool:
    """The bet is settled as its box's main position: a MAIN bet, or a bet behind that follows the box."""
    return bet.bet_type == MAIN or (bet.bet_type == BET_BEHIND and rules.bet_behind_on_double_or_split == "follows")


def owed_by_rules(rules: BlackjackRules, bet: RecordedBet, play: RoundPlay) -> Owed:
    """What the bet is owed by the readable settlement (its type one of BET_CODES, its seat a box of the round)."""
    if _as_box(rules, bet):
        return Owed(settle_box(rules, play, bet.seat, bet.stake), total_staked(play, bet.seat, bet.stake) - bet.stake)
    if bet.bet_type == PAIR:
        return Owed(settle_pair(rules, play, bet.seat, bet.stake))
    if bet.bet_type == INSURANCE:
        return Owed(settle_insurance(rules, play, bet.stake, box=bet.seat),
                    offered=insurance_offered(play, rules, bet.seat))
    return Owed(settle_bet_behind(rules, play, bet.seat, bet.stake))


def _rule_ints(rules: BlackjackRules) -> np.ndarray:
    """The ruleset as kernel.play_rounds takes it (RULE_INTS)."""
    facts = {name: getattr(rules, name, None) for name in RULE_INTS}
    facts.update(dealer_when_all_settled=DEALER_WHEN_ALL_SETTLED.index(rules.dealer_when_all_settled),
                 lose_original=rules.doubled_or_split_lose_to_dealer_blackjack == "original",
                 blackjack_num=rules.blackjack_odds.numerator, blackjack_den=rules.blackjack_odds.denominator,
                 win_num=rules.win_odds.numerator, win_den=rules.win_odds.denominator)
    return np.array([int(facts[name]) for name in RULE_INTS], np.int64)


_CARD_TEXTS = np.array(CARD_CODES, object)


def chart_cells(chart: BasicStrategyChart) -> np.ndarray:
    """The chart as kernel.chart_letter reads it: the letter (a code of LETTERS, -1 where the chart gives none) of
    every hand total 0-21, hard then soft, against each upcard label, doubling not allowed then allowed, then of
    every pair that may be split likewise: chart.decision's."""

    def letter(total: int, soft: bool, pair: str | None, upcard: str, double: bool) -> int:
        try:
            return LETTERS.index(chart.decision(total, soft, pair, upcard, can_double=double,
                                                can_split=pair is not None))
        except (KeyError, ValueError):  # (no such cell: the readable rules ask, and say why)
            return -1

    values = {label: 1 if label == "A" else 10 if label == "T" else int(label) for label in UPCARD_LABELS}
    cells = np.array(
        [letter(total, bool(soft), None, up, bool(double))
         for soft in (0, 1) for total in range(22) for up in UPCARD_LABELS for double in (0, 1)]
        + [letter(*hand_value(2 * values[pair], values[pair] == 1), pair, up, bool(double))
           for pair in UPCARD_LABELS for up in UPCARD_LABELS for double in (0, 1)], np.int64)
    return cells


class TableArrays(NamedTuple):
    """A table's ruleset, chart and limits as the kernels take them: made once a table (table_arrays), the same for
    each of its shoes."""

    rules: np.ndarray  # play_rounds' RULE_INTS
    chart: np.ndarray  # chart_cells
    bets: tuple[np.ndarray, ...]  # settle_bets' limits, odds and rule integers (_bet_rules)


def table_arrays(rules: BlackjackRules, chart: BasicStrategyChart, table: TableFacts) -> TableArrays:
    return TableArrays(_rule_ints(rules), chart_cells(chart), _bet_rules(rules, table))


class Dealt(NamedTuple):
    """The shoes the rounds given to play_rounds are dealt from: each round's shoe (0, 1, ...: a shoe's rounds one
    after another) and its shoe's first round, the shoes' cards as codes one shoe after another (shoe s's
    cards[at[s]:at[s + 1]]) and each one's cut index (-1: none)."""

    round_shoe: np.ndarray
    first: np.ndarray
    cards: np.ndarray
    at: np.ndarray
    cut: np.ndarray

    @classmethod
    def one(cls, shoe: ShoeFacts, n_rounds: int) -> Dealt:
        cards = shoe.codes if shoe.codes is not None else np.array(card_codes(shoe.cards), np.int64)
        return cls(np.zeros(n_rounds, np.int64), np.zeros(n_rounds, np.int64), cards,
                   np.array([0, len(cards)], np.int64), np.array([-1 if shoe.cut_index is None else shoe.cut_index]))


def _full_decks(shoe: ShoeFacts) -> bool:
    """The shoe's codes (where read as codes) are `decks` full decks: check_composition(...).ok, without the
    counting of texts."""
    codes = shoe.codes
    return codes is not None and bool((codes >= 0).all()) and bool(
        (np.bincount(codes, minlength=len(CARD_CODES)) == shoe.decks).all())


class _Played:
    """Shoes' rounds replayed as recorded by the kernel (kernel.play_rounds; a shoe's, or a table's shoes' one
    after another): which are plain (nothing in them for the readable audit to flag but KERNEL_KINDS, whose words
    are its own: kinds()), their reports and explanations, and their bets priced and screened
    (kernel.settle_bets)."""

    def __init__(self, rules: BlackjackRules, chart: BasicStrategyChart, rounds: ShoeRounds, dealt: Dealt,
                 arrays: TableArrays):
        self.rules, self.chart, self.rounds, self.arrays, self.first = rules, chart, rounds, arrays, dealt.first
        self.dealer, self.dealer_at, self.box_no, self.box_at = rounds.dealer, rounds.dealer_at, rounds.box_no, \
            rounds.box_at
        self.card_at, self.readable, self.used = rounds.card_at, rounds.readable, rounds.used
        (rounds_out, self.boxes, self.cards, self.decisions, self.dealer_prefix, self.unfinished,
         (self.redrawn, self.x_at, self.x_cards)) = play_rounds(
            *rounds.play_columns, dealt.round_shoe, dealt.cards, dealt.at, rules.burn_cards, dealt.cut, arrays.rules,
            arrays.chart)
        self.plain, self.position, _, self.cut_round, self.dealer_bj, self.upcard_ace = rounds_out
        # decisions in time are not the kernel's: a round with a late decision or instants that are not one per
        # letter goes to the readable audit (LATE_DECISION, or unsettled with the reason)
        self.plain &= rounds.timed
        self.check_chart()
        self.known = self.plain.copy()  # the rounds whose boxes' columns hold their settlement
        self.found = np.zeros((len(self.plain), len(KERNEL_KINDS)), np.bool_)  # kinds(), once a round is audited

    @classmethod
    def one(cls, rules: BlackjackRules, chart: BasicStrategyChart, shoe: ShoeFacts, rounds: ShoeRounds,
            arrays: TableArrays) -> _Played:
        """One shoe's rounds replayed."""
        return cls(rules, chart, rounds, Dealt.one(shoe, len(rounds)), arrays)

    def check_chart(self) -> None:
        """The chart's letter at each auto-played decision of a plain round (`chart_says`, a code of LETTERS; the
        recorded one at every other decision): one that differs is its round's AUTO_PLAY_DEVIATION. The kernel
        found it in the chart's cells (kernel.chart_letter); a cell the chart holds no letter for is asked here."""
        d_round, d_action, d_double, d_split, d_auto, d_cards_at, d_cards, d_chart = (
            self.decisions[k] for k in (0, 5, 6, 7, 8, 9, 10, 11))
        auto = d_auto & self.plain[d_round]
        self.chart_says = np.where(auto, d_chart, d_action)
        for d in np.flatnonzero(auto & (d_chart < 0)).tolist():
            cards = [CARD_CODES[c] for c in d_cards[d_cards_at[d]:d_cards_at[d + 1]].tolist()]
            want = basic_strategy_decision(self.chart, cards, CARD_CODES[self.dealer[self.dealer_at[d_round[d]]]],
                                           can_double=bool(d_double[d]), can_split=bool(d_split[d]))
            self.chart_says[d] = LETTERS.index(want)
        # the rounds of the decisions off the chart
        self.deviated = d_round[auto & (self.chart_says != d_action)]

    def kinds(self, rounds: slice = slice(None)) -> np.ndarray:
        """Each of `rounds`' findings (a row a round, a column a kind of KERNEL_KINDS): of a plain round that was
        settled (a cancelled round's play is explained, not judged): a dealer who drew against the rule while a hand
        waited (DEALER_DRAW_RULE), hands played as a stand when their letters ran out (DECISION_MISSING), auto-played
        decisions off the chart (AUTO_PLAY_DEVIATION). (`rounds`: a shoe's, not the table's replay each shoe.)"""
        start, stop, _ = rounds.indices(len(self.plain))
        found = np.zeros((max(stop - start, 0), len(KERNEL_KINDS)), np.bool_)
        if len(self.unfinished[0]) or len(self.deviated) or len(self.x_cards):  # (most shoes have none)
            found[:, 0] = self.redrawn[start:stop]
            for kind, at in ((1, self.unfinished[0]), (2, self.deviated)):  # (rounds ascending: the slice's found)
                found[at[np.searchsorted(at, start):np.searchsorted(at, stop)] - start, kind] = True
            found &= (self.plain[start:stop] & ~self.rounds.cancelled[start:stop])[:, None]
        return found

    def audited(self, rounds: slice, plain: np.ndarray) -> None:
        """A shoe's audit of `rounds` (audit_shoe): which of them the kernel's replay reports and explains (`plain`:
        nothing for the readable audit in them), and their findings (kinds()). The one place a shoe's audit writes
        which rounds are plain into a replay it may share with its table's other shoes (audit_plain_shoes)."""
        self.plain[rounds] = plain
        self.found[rounds] = self.kinds(rounds)

    def deviations(self, i: int) -> list[tuple[int, str, list[str], str, str]]:
        """Round i's auto-played decisions off the chart, as deviation_words takes them."""
        d_round, d_box, d_action, d_cards_at, d_cards = (self.decisions[k] for k in (0, 1, 5, 9, 10))
        a, b = np.searchsorted(d_round, [i, i + 1]).tolist()
        upcard = CARD_CODES[self.dealer[self.dealer_at[i]]]
        return [(int(d_box[d]), LETTERS[d_action[d]], [CARD_CODES[c] for c in d_cards[d_cards_at[d]:d_cards_at[d + 1]]],
                 upcard, LETTERS[self.chart_says[d]]) for d in range(a, b) if self.chart_says[d] != d_action[d]]

    def findings(self, table_id: str, shoe_id: str, r: RecordedRound, i: int) -> list[Finding]:
        """Round i's findings (kinds()' row; `r` its record), a round the kernel settled."""
        where, kinds = round_where(r, shoe_id), self.found[i]
        said = []
        if kinds[0]:
            problem = live_dealer_problem(self.rules, r.dealer_cards)
            said.append((problem.kind, *dealer_words(where, problem, r.dealer_cards)))
        if kinds[1]:
            said.append(("DECISION_MISSING", *missing_words(where, self.unfinished_hands(i))))
        if kinds[2]:
            said.append(("AUTO_PLAY_DEVIATION", *deviation_words(where, self.deviations(i))))
        return [Finding(kind, table_id, shoe_id, r.round_id, None, expected, recorded, message)
                for kind, expected, recorded, message in said]

    def unfinished_hands(self, i: int) -> list[tuple[int, int]]:
        """Round i's hands left live: (box, hand index), as RoundPlay.unfinished_hands."""
        u_round, u_box, u_hand = self.unfinished
        a, b = np.searchsorted(u_round, [i, i + 1]).tolist()
        return list(zip(u_box[a:b].tolist(), u_hand[a:b].tolist(), strict=True))

    def report(self, i: int, explanation: tuple[str, ...]) -> RoundReport:
        """Round i's report (a plain round: nothing found but KERNEL_KINDS, every card as recorded and as the shoe
        deals it, the dealer's hand where it drew against the rule as the shoe deals it by the rule)."""
        card, card_at = self.rounds.card, self.card_at  # (a plain round's cards are all card codes)
        box_cards = tuple(tuple(_CARD_TEXTS[card[card_at[b]:card_at[b + 1]]])
                          for b in range(self.box_at[i], self.box_at[i + 1]))
        dealer = tuple(_CARD_TEXTS[self.dealer[self.dealer_at[i]:self.dealer_at[i + 1]]])
        expected = tuple(_CARD_TEXTS[self.x_cards[self.x_at[i]:self.x_at[i + 1]]]) if self.redrawn[i] else dealer
        kinds = tuple(kind for kind, on in zip(KERNEL_KINDS, self.found[i].tolist(), strict=True) if on)
        return RoundReport(i, int(self.position[i]), i, box_cards, expected,
                           int(self.dealer_prefix[0][self.dealer_at[i + 1] - 1]), bool(self.cut_round[i]), False,
                           explanation, kinds, None)

    def reported(self) -> tuple[np.ndarray, ...]:
        """What report() says of each plain round, as columns (its expected cards are its recorded ones, but the
        dealer's where it drew against the rule): the rounds (their index), how many rounds of their shoe came
        before each, their shoe position, the recorded dealer total, whether the cut card came out in it, its finding
        kinds (kinds()), whether its dealer drew against the rule and, for those rounds, how many cards and which
        (codes) the shoe deals the dealer by the rule."""
        plain = np.flatnonzero(self.plain)
        redrawn = self.redrawn[plain]
        if len(self.x_cards):  # (a shoe whose dealer drew against the rule: a rare one)
            at = self.x_at[plain[redrawn]]
            n = self.x_at[plain[redrawn] + 1] - at
            by_rule = self.x_cards[spans(at, n)]
        else:
            n = by_rule = self.x_cards
        return (plain, plain - self.first[plain], self.position[plain],
                self.dealer_prefix[0][self.dealer_at[plain + 1] - 1],
                self.cut_round[plain], self.found[plain], redrawn, n, by_rule)

    def learn(self, i: int, r: RecordedRound, play: RoundPlay | None, report: RoundReport) -> None:
        """Round i, not plain, as the readable audit replayed it: a cancelled round (every bet refunded) or a
        round it can settle has its boxes' settlement put in the box columns, so that its bets are priced and
        screened with the others."""
        if not self.readable[i] or (r.status != "cancelled" and (play is None or report.unsettled_reason)):
            return
        if r.status != "cancelled":
            returned, win, staked, behind_returned, behind_win, pair, first_two_bj = self.boxes
            unit_win = self.rules.blackjack_odds.denominator * self.rules.win_odds.denominator
            follows = self.rules.bet_behind_on_double_or_split == "follows"
            for b in range(self.box_at[i], self.box_at[i + 1]):
                box = int(self.box_no[b])
                unit = box_unit_credit(self.rules, play, box)  # (a bet behind that follows the box: the box's)
                behind = unit if follows else bet_behind_unit_credit(self.rules, play, box)
                returned[b], win[b], staked[b] = unit.returned, unit.win * unit_win, total_staked(play, box, 1)
                behind_returned[b], behind_win[b] = behind.returned, behind.win * unit_win
                first_two = play.box(box).first_two
                kind = pair_kind(*first_two)
                pair[b] = PAIR_KINDS.index(kind) + 1 if kind else 0
                first_two_bj[b] = hand_is_blackjack(self.rules, first_two, from_split=False)
            self.dealer_bj[i], self.upcard_ace[i] = play.dealer_blackjack, play.upcard[0] == "A"
        self.known[i] = True

    def settle(self, bets: ShoeBets, held: np.ndarray):
        """(credit, priced, quiet, own, main_stake) of each bet (kernel.settle_bets) on the known rounds' boxes;
        `held`: the rounds with a MAIN bet in quarantine."""
        k, seat = bets.round_index, bets.seat
        on = (seat >= SEATS[0]) & (seat <= SEATS[-1])
        self.row = np.where(on, self.box_row[k, np.where(on, seat, 0)], -1)
        return settle_bets(k, self.row, bets.bet_type, seat, bets.account, bets.stake, bets.added_stake, bets.paid,
                           bets.placed_at, self.known, self.rounds.cancelled, self.rounds.closed, held,
                           *self.boxes, self.dealer_bj, self.upcard_ace, *self.arrays.bets)

    @cached_property  # (once a replay: a table's is asked again by each shoe audited alone)
    def box_row(self) -> np.ndarray:
        """Round, box number -> its row in the box columns (-1: not a box of the round)."""
        n_rounds = len(self.rounds)
        box_row = np.full((n_rounds, len(SEATS) + 1), -1, np.int64)
        box_row[self.box_round, self.box_no] = np.arange(len(self.box_no))
        return box_row

    @cached_property
    def box_round(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.rounds)), np.diff(self.box_at))

    @cached_property
    def box_bits(self) -> np.ndarray:
        """Each round's boxes as bits (1 << box number)."""
        bits = np.zeros(len(self.rounds), np.int64)
        np.bitwise_or.at(bits, self.box_round, 1 << self.box_no)
        return bits

    def flagged(self, rows: np.ndarray, bets: ShoeBets, settled: tuple[np.ndarray, ...]) -> FlaggedBets:
        """The bets `rows` (of known rounds) as bet_checks reads them; `settled`: settle_bets' results."""
        k, t, stake, added = (c[rows] for c in (bets.round_index, bets.bet_type, bets.stake, bets.added_stake))
        credit, priced, _, own, main_stake = (c[rows] for c in settled)
        cancelled, b = self.rounds.cancelled[k], self.row[rows]
        on_box = b >= 0
        b = np.where(on_box, b, 0)

        def of_box(column: np.ndarray) -> np.ndarray:  # (none where the bet is on no box)
            return np.where(on_box, column[b] if len(column) else 0, 0).astype(column.dtype)

        dealt = self.dealer_at[k + 1] > self.dealer_at[k]
        as_box = on_box & ~cancelled & ((t == _CODE[MAIN]) | ((t == _CODE[BET_BEHIND])
                                                             & (self.rules.bet_behind_on_double_or_split == "follows")))
        return FlaggedBets(
            rows, t, bets.seat[rows], stake, added, bets.paid[rows], bets.placed_at[rows],
            # (a bet the kernel does not price here, of another type or on no box, is refunded)
            np.where(priced, credit, stake + np.where(cancelled, added, 0)), cancelled, self.rounds.closed[k],
            np.where(dealt, self.dealer[np.where(dealt, self.dealer_at[k], 0)] if len(self.dealer) else -1, -1),
            self.box_bits[k], on_box, as_box, stake * (of_box(self.boxes[2]) - 1),
            self.upcard_ace[k] & (self.rules.insurance_on_player_blackjack | ~of_box(self.boxes[6]).astype(bool)),
            own, main_stake)


def _bet_rules(rules: BlackjackRules, table: TableFacts) -> tuple[np.ndarray, ...]:
    """The table's limits and rules as kernel.settle_bets takes them: each bet type's low and high limit and whether
    it has one, the odds (blackjack over win, each pair kind's, insurance's) and the rule integers."""
    limits = [table.limits.get(name) for name in BET_CODES]
    low, high = (np.array([lim[end] if lim else 0 for lim in limits], np.int64) for end in (0, 1))
    bj, win = rules.blackjack_odds, rules.win_odds
    odds = np.array([(0, bj.denominator * win.denominator),
                     *((o.numerator, o.denominator) for o in (rules.pair_odds[kind] for kind in PAIR_KINDS)),
                     (rules.insurance_odds.numerator, rules.insurance_odds.denominator)], np.int64)
    pair_share, insurance_share = rules.pair_max_share_of_table_max, rules.insurance_stake_share
    rule = np.array([rules.bet_behind_on_double_or_split == "follows", ROUNDING_CODES[rules.rounding],
                     rules.pair_requires_main_bet, pair_share.numerator, pair_share.denominator, table.table_max,
                     insurance_share.numerator, insurance_share.denominator, rules.insurance_on_player_blackjack],
                    np.int64)
    return low, high, np.array([lim is not None for lim in limits]), odds, rule


def played_lines(p: _Played) -> ShoeLines:
    """The explanations of the plain rounds of the replay (lines.write_lines, once for its shoes)."""
    r, d, u = p.rounds, p.decisions, p.unfinished
    # each instant's text: the index of its text (-1: not recorded; an instant's text made for each time it is
    # said, by us_bytes' kernel: no sort of them to make each distinct one's once)
    instants = np.concatenate([r.revealed, r.act_time])
    recorded = instants != NO_TIME
    text = np.where(recorded, np.cumsum(recorded) - 1, -1)
    return ShoeLines(*write_lines(
        p.plain, p.position, p.used, p.dealer_at[:-1] + p.card_at[p.box_at[:-1]], *p.cards, p.dealer, p.dealer_at,
        *(d[k] for k in (0, 1, 2, 3, 4, 5, 8)), p.chart_says, d[9], d[10][:d[9][-1]], *u, *p.dealer_prefix,
        int(p.rules.hits_soft_17), p.plain & (r.times_recorded | (r.revealed != NO_TIME)), text[:len(r.revealed)],
        p.box_at, p.box_no, r.box_timed, r.act, r.act_at, text[len(r.revealed):], *us_bytes(instants[recorded]),
        VOCABULARY, VOCABULARY_AT))


class _Mains(NamedTuple):
    """What a bet's round's MAIN bets (those on a box) say of it: a MAIN bet of its account on its box, the
    stakes of the MAIN bets on its box, a MAIN bet of its account on any box (the account is seated)."""

    own_main: bool
    box_stake: int
    seated: bool


def _mains(bets: ShoeBets, i: int) -> _Mains:
    """What bet i's round's MAIN bets on a box say of it."""
    mains = (bets.round_index == bets.round_index[i]) & (bets.bet_type == _CODE[MAIN]) & (bets.seat != NO_SEAT)
    mine, on_box = mains & (bets.account == bets.account[i]), mains & (bets.seat == bets.seat[i])
    return _Mains(bool((mine & on_box).any()), int(sum(bets.stake[on_box].tolist())), bool(mine.any()))


class _ShoeAuditor:
    def __init__(self, rules: BlackjackRules, chart: BasicStrategyChart, table: TableFacts, shoe: ShoeFacts,
                 rounds: ShoeRounds, bets: ShoeBets, arrays: TableArrays, bet_by_bet: bool = False,
                 quarantined: Sequence[QuarantinedBet] = (), replayed: tuple[_Played, int] | None = None):
        self.rules, self.chart, self.table, self.shoe, self.rounds, self.bets = rules, chart, table, shoe, rounds, bets
        self.arrays, self.replayed = arrays, replayed
        # every card of the shoe is a card's text (its codes say so): its rest dealt as it is, no None to pass over
        self.all_cards = shoe.codes is not None and bool((shoe.codes >= 0).all())
        self.bet_by_bet = bet_by_bet
        self.recorded: dict[int, RecordedRound] = {}  # the rounds read as RecordedRounds, by index
        self.findings: list[Finding] = []
        self.found_in: list[int] = []  # the round of each finding read_rounds makes (audit_plain_shoes reads it)
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
        r = self.recorded[bet.round_index]
        self.findings.append(Finding(kind, self.table.table_id, self.shoe.shoe_id, r.round_id, bet.bet_id,
                                     expected, recorded, message, bet.account_id))

    def fetch(self, indexes: np.ndarray) -> None:
        """The rounds `indexes` read as RecordedRounds (once each)."""
        new = sorted({i for i in np.asarray(indexes).tolist() if i not in self.recorded})  # (a few: no np.unique)
        if new:  # (an adaptor reads them from its files: not for none)
            self.recorded.update(zip(new, self.rounds.recorded(new), strict=True))

    def worded(self, kind: str, bet: RecordedBet, **parts: object) -> None:
        """The finding `kind` of bet_checks.WORDS on the bet, its words filled with `parts`."""
        self.bet_finding(kind, bet, *WORDS[kind].fill(what=self.what(bet), **parts))

    def money(self, amount: int) -> str:
        return format_money(int(amount), self.table.currency)

    def what(self, bet: RecordedBet) -> str:
        """The bet in words, as its findings name it."""
        return f"Bet {bet.bet_id} ({bet.bet_type}, stake {self.money(bet.stake)})"

    # -- the shoe and its rounds ------------------------------------------------------------------

    def run(self) -> ShoeAudit:
        shoe = self.shoe
        composition = None if _full_decks(shoe) else check_composition(shoe.cards, shoe.decks)
        if composition is not None and not composition.ok:
            self.findings.append(Finding("SHOE_COMPOSITION", self.table.table_id, shoe.shoe_id, None, None,
                                         f"{shoe.decks} full decks", composition.describe(),
                                         f"Shoe {shoe.shoe_id} is {composition.describe()}."))
        # the kernel's replay of the shoe's rounds: the table's (rounds o..o+n-1 of it, their plain as replayed:
        # known, nothing learnt yet) or its own
        played, o = self.replayed or (_Played.one(self.rules, self.chart, shoe, self.rounds, self.arrays), 0)
        reports, plays = self.read_rounds(played, o)
        expected, settled, unsettled, flagged, on_bet = self.settle(reports, plays, played, o)
        return ShoeAudit(reports, expected, settled, unsettled, self.findings, played, flagged,
                         np.array(on_bet, np.int64))

    def read_rounds(self, played: _Played, o: int) -> tuple[list[RoundReport | None], list[RoundPlay | None]]:
        """The shoe's rounds (o..o+n-1 of `played`): each the kernel's replay cannot clear read and replayed by the
        readable rules (its report and play; learnt into the replay), the findings of every round in round order
        (`found_in`: each one's round)."""
        shoe, n = self.shoe, len(self.rounds)
        mine = slice(o, o + n)
        if self.bet_by_bet:  # (every round and bet through the readable rules: the oracle of the kernels)
            played.known[mine] = False
        plain = played.known[mine].copy()  # (known: the replay's plain rounds, nothing learnt yet)
        lost = self.lost(plain)
        if lost is not None:  # (the kernel replayed the rounds after it at a place that is not known)
            plain[lost[0] + 1:] = False
        played.audited(mine, plain)
        found = played.found[mine].any(axis=1)  # (rounds the kernel settles with a finding: named from their records)
        named = ~played.plain[mine] | found
        self.fetch(np.flatnonzero(named))
        position: int | None = self.rules.burn_cards  # None: after a round whose cards cannot be counted
        cut_seen, reports, plays = False, [None] * n, [None] * n
        # the rounds read one by one: those named and the first whose cards cannot be counted; the plain rounds
        # between them counted at once (each takes the cards it records, `before`; the cut card seen by the last)
        before = np.concatenate([[0], np.cumsum(played.used[mine])]).tolist()
        if lost is not None:
            named[lost[0]] = True
        counted = 0  # the first round not yet counted in `position`
        for i in [*np.flatnonzero(named).tolist(), n]:
            if position is not None and i > counted:
                position += before[i] - before[counted]
                cut_seen = cut_seen or (shoe.cut_index is not None and position > shoe.cut_index)
            if i == n:
                break
            counted, said = i + 1, len(self.findings)
            if played.plain[o + i]:  # the kernel's replay found the round as recorded, nothing to flag but KERNEL_KINDS
                used = before[i + 1] - before[i]
                if found[i]:
                    self.findings += played.findings(self.table.table_id, shoe.shoe_id, self.recorded[i], o + i)
            else:
                r = self.recorded[i]
                reports[i], plays[i], used = self.round(i, r, position, cut_seen)
                if not self.bet_by_bet:
                    played.learn(o + i, r, plays[i], reports[i])
            self.found_in += [i] * (len(self.findings) - said)
            if lost is not None and i >= lost[0]:  # (its place in the shoe, and every later round's, not known)
                position = None
                continue
            if shoe.cut_index is not None and position + used > shoe.cut_index:
                cut_seen = True
            position += used
        if lost is not None and lost[0] + 1 < len(self.rounds):
            after = [self.recorded[i].round_id for i in range(lost[0] + 1, len(self.rounds))]
            self.findings.append(unverifiable_after(self.table.table_id, shoe.shoe_id,
                                                    self.recorded[lost[0]].round_id, lost[1], after))
        return reports, plays

    def lost(self, plain: np.ndarray) -> tuple[int, str] | None:
        """The first round whose cards cannot be counted (cards_not_counted) and why, or None. A round the kernel
        calls plain has a readable record (boxes, two cards a box, a dealer card), so only a round numbered
        below 1 (put in quarantine with no place) can be one among them: the others are read as records."""
        maybe = np.flatnonzero(~plain | ~self.rounds.numbered)
        self.fetch(maybe)
        for i in maybe.tolist():
            if (why := cards_not_counted(self.recorded[i])) is not None:
                return i, why
        return None

    def round(self, i: int, r: RecordedRound, position: int | None, cut_seen: bool):
        """(report, the round as recorded replayed, how many cards it took); `position` None: its place in the
        shoe is not known (after a round whose cards cannot be counted), nothing compared with the shoe."""
        problem = record_problem(r)
        timing = times_problem(r.boxes, r.box_actions, r.box_action_times) if problem is None else None
        boxes = _boxes(r)
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
        if position is None:  # no shoe to deal it from: nothing expected
            expected_play = None
        elif play.complete and dealer_problem is None and self.shoe_deals(seq, position):
            # The recorded cards are the shoe's next cards and the dealer drew by the rule: what the shoe and
            # the decisions deal is the recorded round itself (the same cards to the same hands, the dealer
            # stopping where the rule stops), so it is not replayed a second time.
            expected_play = play
        else:
            shoe_rest = self.shoe.cards[position:] if self.all_cards else [
                c for c in self.shoe.cards[position:] if isinstance(c, str)]
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
        timing = timing_line(r.boxes, r.box_actions, r.box_action_times, r.dealer_revealed_at, REVEAL)
        return self.report(i, r, position, cut_seen, expected_play, play, kinds, lines + ([timing] if timing else []),
                           None), play, len(seq)

    def shoe_deals(self, seq: list[str], position: int) -> bool:
        """The recorded cards in dealing order are the next cards of the shoe."""
        return tuple(self.shoe.cards[position:position + len(seq)]) == tuple(seq)

    def where(self, r: RecordedRound) -> str:
        return round_where(r, self.shoe.shoe_id)

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
        if position is not None and not self.shoe_deals(seq, position):
            shoe_cards = self.shoe.cards[position:position + len(seq)]
            flag("CARD_SEQUENCE_MISMATCH", format_cards(shoe_cards), format_cards(seq),
                 f"{where}: the recorded cards in dealing order are not the next cards of the shoe "
                 f"(from card {position}).")
        if cut_seen and position is not None:
            flag("ROUND_AFTER_CUT", "no round after the cut-card round", f"round {r.round_no}",
                 f"{where} was dealt after the round in which the cut card came out.")
        if dealer_problem:
            flag(dealer_problem.kind, *dealer_words(where, dealer_problem, play.dealer))
        self.flag_illegal(r, play.decisions, kinds)
        late = late_decisions(r.boxes, r.box_actions, r.box_action_times, r.dealer_revealed_at)
        if late:
            expected, recorded, words = late_finding_text(late, r.dealer_revealed_at,
                                                          "the dealer's second card was dealt")
            flag("LATE_DECISION", expected, recorded, f"{where}: {words}")
        if play.unfinished_hands:
            flag("DECISION_MISSING", *missing_words(where, play.unfinished_hands))
        chart_says = [(d, _chart_action(self.chart, d)) for d in play.decisions
                      if d.auto_played and d.legal and d.carried_out]
        deviations = [(d.box, d.action, d.cards, d.upcard, want) for d, want in chart_says if d.action != want]
        if deviations:
            flag("AUTO_PLAY_DEVIATION", *deviation_words(where, deviations))

    def report(self, i, r, position, cut_seen, expected_play, play, kinds, explanation, unsettled) -> RoundReport:
        cut_seen = cut_seen and position is not None
        cut = (position is not None and self.shoe.cut_index is not None and not cut_seen
               and position + len(r.dealer_cards) + sum(len(c) for c in r.box_cards) > self.shoe.cut_index)
        return RoundReport(
            i, position, i,
            expected_play.box_cards if expected_play is not None else None,
            tuple(expected_play.dealer) if expected_play is not None else None,
            _dealer_total(r.dealer_cards),
            cut, cut_seen, tuple(explanation), tuple(dict.fromkeys(kinds)), unsettled)

    # -- the bets ---------------------------------------------------------------------------------

    def settle(self, reports: list[RoundReport], plays: list[RoundPlay | None], played: _Played, o: int):
        """Each bet's expected credit (int64) and whether it is settled (not: its round cannot be, `unsettled` says
        why), and the bets whose
        checks are columns. The bets of the rounds the kernel replayed are priced and screened for every check of
        credit() and check_bet() at once (settle_bets); a bet the screen cannot clear on such a round is checked
        with the others of its table in columns (FlaggedBets, bet_checks.bet_findings), unless a MAIN bet of its
        round is in quarantine or an amount is beyond int64's exact reach; that bet, and every bet of another
        round, goes through credit() and check_bet() one by one, in bet order. (`o`: the shoe's first round in
        `played`.)"""
        bets, rounds = self.bets, self.rounds
        n = len(bets)
        unsettled: list[str | None] = [None] * n
        if not n:
            return np.zeros(0, np.int64), np.zeros(0, bool), unsettled, FlaggedBets.joined([]), \
                [-1] * len(self.findings)
        k, cancelled = bets.round_index, rounds.cancelled
        reasons = [None if cancelled[i] or rep is None else rep.unsettled_reason for i, rep in enumerate(reports)]
        settled = np.array([reason is None for reason in reasons], bool)[k]
        held = np.zeros(len(played.plain), np.bool_)
        held[[o + i for i in self.held_mains]] = True
        replayed = replace(bets, round_index=k + o) if o else bets  # (its rounds among the replay's)
        screened = played.settle(replayed, held)
        credit, quiet, main_stake = screened[0], screened[2], screened[4]
        flagged = settled & ~quiet
        as_columns = flagged & played.known[o + k] & ~held[o + k] & _checked_exactly(bets, main_stake)
        checked = played.flagged(np.flatnonzero(as_columns), replayed, screened)
        credit[as_columns] = checked.credit
        expected = credit
        by_rules = np.flatnonzero(flagged & ~as_columns)
        self.fetch(k[by_rules])
        on_bet = [-1] * len(self.findings)  # each finding's bet (-1: the shoe's or a round's)
        for i, bet in zip(by_rules.tolist(), bets.recorded(by_rules.tolist()) if len(by_rules) else [], strict=True):
            r = self.recorded[bet.round_index]
            owed = None
            if r.status != "cancelled" and bet.bet_type in BET_CODES and bet.seat in r.boxes:
                # (a round the kernel replayed: the readable replay as recorded, for this bet the kernel does not price)
                owed = owed_by_rules(self.rules, bet, plays[bet.round_index] or replay_round(
                    self.rules, dealing_sequence(r.dealer_cards, r.box_cards), _boxes(r), dealer_as_recorded=True))
            expected[i] = owes = self.credit(bet, r, owed, r.status == "cancelled")
            self.check_bet(bet, r, owes, _mains(bets, i))
            on_bet += [i] * (len(self.findings) - len(on_bet))
        expected[~settled] = 0
        for i in np.flatnonzero(~settled).tolist():
            unsettled[i] = reasons[k[i]]
        return expected, settled, unsettled, checked, on_bet

    def held_seat_of(self, round_index: int, account_id: str) -> QuarantinedBet | None:
        """A MAIN bet of `account_id` in quarantine on the round (on any box), or None."""
        for held in self.held_mains.get(round_index, {}).values():
            for q in held:
                if q.account_id == account_id:
                    return q
        return None

    def credit(self, bet: RecordedBet, r: RecordedRound, owed: Owed | None, cancelled: bool) -> int:
        """The bet's credit, and the findings settling it makes; `owed`: what its box owes it (None where its
        seat is none of the round's boxes)."""
        rules = self.rules
        if cancelled:  # everything staked comes back, what a double or split added too
            return bet.stake + (bet.added_stake or 0)
        if bet.bet_type not in BET_CODES:
            self.worded("BET_TYPE_NOT_OFFERED", bet, ruleset=rules.id, bet_type=bet.bet_type)
            return bet.stake
        if owed is None:
            self.worded("BET_ON_EMPTY_BOX", bet, boxes=list(r.boxes), seat=bet.seat, round=r.round_id)
            return bet.stake
        if owed.added is not None and (bet.added_stake or 0) != owed.added:
            self.worded("ADDED_STAKE_MISMATCH", bet, owed=self.money(owed.added),
                        added=self.money(bet.added_stake or 0))
        if bet.bet_type == INSURANCE and not owed.offered:
            self.worded("INSURANCE_NOT_OFFERED", bet, upcard=r.dealer_cards[0], round=r.round_id)
        return owed.credit

    def check_bet(self, bet: RecordedBet, r: RecordedRound, credit: int, mains: _Mains) -> None:
        """`mains`: what the round's MAIN bets say of the bet's account and box."""
        rules, table = self.rules, self.table
        delta = bet.paid - credit
        if delta:
            kind = "OVERPAID" if delta > 0 else "UNDERPAID"
            self.bet_finding(kind, bet, *BET_WORDS[kind].fill(
                what=self.what(bet), round=r.round_id, owed=self.money(credit), paid=self.money(bet.paid),
                delta=self.money(abs(delta))))
        if bet.bet_type in table.limits:
            low, high = table.limits[bet.bet_type]
            for kind, limit, beyond in (("STAKE_BELOW_MIN", low, bet.stake < low),
                                        ("STAKE_ABOVE_MAX", high, bet.stake > high)):
                if beyond:
                    self.bet_finding(kind, bet, *BET_WORDS[kind].fill(
                        what=self.what(bet), bet_type=bet.bet_type, stake=self.money(bet.stake),
                        limit=self.money(limit)))
        # Insurance is offered after the deal, so it is placed after betting closed.
        if bet.bet_type != INSURANCE and is_late(bet.placed_at, r.betting_closed_at):
            self.bet_finding("LATE_BET", bet, *BET_WORDS["LATE_BET"].fill(
                what=self.what(bet), round=r.round_id, closed=us_text(r.betting_closed_at),
                placed=us_text(bet.placed_at)))
        if bet.bet_type not in BET_CODES or bet.seat not in r.boxes:
            return
        held = self.held_mains.get(bet.round_index, {}).get(bet.seat, [])
        if bet.bet_type == PAIR:
            # (a MAIN bet in quarantine was placed all the same)
            own_main = mains.own_main or any(q.account_id == bet.account_id for q in held)
            if rules.pair_requires_main_bet and not own_main:
                self.worded("PAIR_WITHOUT_MAIN", bet, account=bet.account_id, seat=bet.seat)
            share = rules.pair_max_share_of_table_max
            if bet.stake * share.denominator > table.table_max * share.numerator:
                self.worded("SIDE_BET_ABOVE_SHARE", bet, cap=self.money(side_bet_cap(rules, table)),
                            stake=self.money(bet.stake), share=share, table_max=self.money(table.table_max))
        # (the box's main stake is not known where a MAIN bet on it is in quarantine with no stake: not judged)
        if bet.bet_type == INSURANCE and all(q.stake is not None for q in held):
            main = mains.box_stake + sum(q.stake for q in held)
            share = rules.insurance_stake_share
            with_held = "".join(f" (with {q.named()})" for q in held)
            if bet.stake * share.denominator > main * share.numerator:
                self.worded("INSURANCE_ABOVE_SHARE", bet, share=share, main=self.money(main),
                            stake=self.money(bet.stake), with_held=with_held)
        if bet.bet_type == BET_BEHIND:
            held_seat = self.held_seat_of(bet.round_index, bet.account_id)
            if not mains.seated and held_seat is not None:
                self.bet_finding("BET_BEHIND_BY_SEATED", bet, "an account not seated in the round",
                                 f"{bet.account_id} seated", f"{self.what(bet)}: {bet.account_id} plays box "
                                 f"{held_seat.seat} in round {r.round_no} ({held_seat.named()}); bet behind is for "
                                 "accounts that are not seated.")
            if mains.seated:
                self.worded("BET_BEHIND_BY_SEATED", bet, account=bet.account_id, round=r.round_id)


def audit_shoe(rules: BlackjackRules, chart: BasicStrategyChart, table: TableFacts, shoe: ShoeFacts,
               rounds: Sequence[RecordedRound] | ShoeRounds, bets: Sequence[RecordedBet] | ShoeBets, *,
               bet_by_bet: bool = False, quarantined: Sequence[QuarantinedBet] = (), explained: bool = True,
               arrays: TableArrays | None = None, replayed: tuple[_Played, int] | None = None) -> ShoeAudit:
    """The audit of one shoe; `rounds` in round order (records or columns), each bet's round_index points into
    them. `bet_by_bet`: every round and bet through the readable rules, not only those the kernels cannot clear:
    the same result, slower (the tests' oracle of the kernels). `quarantined`: the bets of these rounds put in
    quarantine as they were read (round_index likewise): never settled, but a MAIN bet among them plays its box
    for its account (a PAIR beside it is not without a main bet, a bet behind by its account is by a seated
    account, an insurance's share counts its stake where it is known). `explained` False: the rounds the kernel
    replayed have no report (None): the audit keeps the kernel's replay (`played`: which rounds are plain), whose
    rounds an adaptor reports (_Played.reported) and explains (played_lines) with its table's (audit_plain_shoes).
    `arrays`: the table's (table_arrays), made here where not given. `replayed` (with `explained` False): the
    table's replay (audit_plain_shoes') and the shoe's first round in it: the shoe's rounds are its rounds from
    there (they are replayed the same in a table's replay as alone), not replayed again; the audit writes into it
    which of them are plain and what its readable rounds settle (_Played.learn)."""
    rounds = rounds if isinstance(rounds, ShoeRounds) else ShoeRounds.of(rounds)
    bets = bets if isinstance(bets, ShoeBets) else ShoeBets.of(bets)
    arrays = arrays if arrays is not None else table_arrays(rules, chart, table)
    audit = _ShoeAuditor(rules, chart, table, shoe, rounds, bets, arrays, bet_by_bet, quarantined, replayed).run()
    if not explained:
        return audit
    said = played_lines(audit.played).explanations()
    findings, on_bet = _with_bet_findings(rules, table, shoe, rounds, bets, audit)
    return replace(audit, rounds=[rep if rep is not None else audit.played.report(i, said[i])
                                  for i, rep in enumerate(audit.rounds)], played=None,
                   findings=findings, on_bet=on_bet, flagged=FlaggedBets.joined([]))


class PlainShoes(NamedTuple):
    """A table's shoes audited at once (audit_plain_shoes)."""

    shoes: np.ndarray  # bool per shoe: audited here (the others: audit_shoe, shoe by shoe)
    # the kernel's replay of every shoe's rounds, `plain` only in these shoes (an adaptor adds those the shoes audited
    # alone leave plain): it reports and explains them
    played: _Played
    findings: list[Finding]  # their rounds' (KERNEL_KINDS), in round order
    found_in: np.ndarray  # each finding's round
    named: np.ndarray  # bool per round: the rounds audit_shoe of another shoe reads as records (not plain, a finding)
    bets: np.ndarray  # their bets (indexes among the bets given), all settled
    expected: np.ndarray  # each one's credit
    flagged: FlaggedBets  # those the screen cannot clear (`bet`: its index among the bets given)
    reports: dict[int, RoundReport]  # the reports of these shoes' rounds the readable rules replayed, by round


def _checked_exactly(bets: ShoeBets, main_stake: np.ndarray) -> np.ndarray:
    """The bets whose amounts bet_checks' columns check exactly (stakes, added stakes and main stakes under 2**40,
    the paid amount under 2**62, as kernel.settle_bets prices them); any other flagged bet goes to the readable
    rules."""
    exact = np.ones(len(bets.stake), bool)
    for amounts, bound in ((bets.stake, 2**40), (bets.added_stake, 2**40), (main_stake, 2**40), (bets.paid, 2**62)):
        exact &= np.abs(amounts) < bound
    return exact


def audit_plain_shoes(rules: BlackjackRules, chart: BasicStrategyChart, table: TableFacts, arrays: TableArrays,
                      rounds: ShoeRounds, dealt: Dealt, shoe_ids: Sequence[str], decks: np.ndarray, bets: ShoeBets,
                      bet_shoe: np.ndarray, others: np.ndarray) -> PlainShoes:
    """The shoes of a table whose bets need none of the readable rules audited at once: every shoe's rounds
    (`rounds`, one shoe's after another, `dealt` from their shoes, each of `decks` decks) replayed in one kernel call,
    every bet (`bets`, its round_index among `rounds`, `bet_shoe` its shoe) priced and screened in one. A shoe is
    audited here where it has rounds, its cards are full decks, each bet the screen cannot clear is checked as
    columns (bet_checks.bet_findings) and it is not among `others` (the adaptor's own: rounds or bets of it put in
    quarantine); the rounds of it the kernel cannot clear (not plain, not numbered) are read and replayed by the
    readable rules here, as audit_shoe reads them (_ShoeAuditor.read_rounds: their reports, learnt into the
    replay), where each one's cards can be counted, it is settled and the shoe has a cut card. Its audit_shoe
    (`explained` False) then has those reports only, every bet settled, and no finding but its rounds' (read from
    their records) and its flagged bets', so it is given as columns."""
    n_shoes, shoe = len(dealt.at) - 1, dealt.round_shoe
    bounds = np.searchsorted(shoe, np.arange(n_shoes + 1))  # each shoe's rounds: bounds[s]..bounds[s + 1] - 1
    played = _Played(rules, chart, rounds, dealt, arrays)
    special = ~played.plain | ~rounds.numbered
    card_shoe = np.repeat(np.arange(n_shoes), np.diff(dealt.at))
    counts = np.bincount(card_shoe * len(CARD_CODES) + np.maximum(dealt.cards, 0), minlength=n_shoes * len(CARD_CODES))
    whole = ((np.diff(bounds) > 0) & (np.bincount(card_shoe[dealt.cards < 0], minlength=n_shoes) == 0)  # (_full_decks)
             & (counts.reshape(n_shoes, len(CARD_CODES)) == decks[:, None]).all(axis=1) & ~others)
    named = special | played.kinds().any(axis=1)
    # the shoes with rounds for the readable rules: those rounds (and the kernel's with a finding) read at once
    specials = np.bincount(shoe[special], minlength=n_shoes)  # each shoe's
    read = whole & (specials > 0) & (dealt.cut >= 0)
    whole &= read | (specials == 0)
    to_read = np.flatnonzero(named & read[shoe])
    records = dict(zip(to_read.tolist(), rounds.recorded(to_read.tolist()) if len(to_read) else [], strict=True))
    lost = [shoe[i] for i in np.flatnonzero(special & read[shoe]).tolist() if cards_not_counted(records[i])]
    whole[lost] = read[lost] = False
    known, reports, said = played.known.copy(), {}, []
    for s in np.flatnonzero(read).tolist():
        a, b = int(bounds[s]), int(bounds[s + 1])
        codes = dealt.cards[dealt.at[s]:dealt.at[s + 1]]
        auditor = _ShoeAuditor(rules, chart, table, ShoeFacts(shoe_ids[s], int(decks[s]), tuple(_CARD_TEXTS[codes]),
                                                              int(dealt.cut[s]), codes),
                               rounds_of(rounds, a, b, lambda at, a=a: rounds.recorded([a + i for i in at])),
                               bets, arrays, replayed=(played, a))
        auditor.recorded = {i - a: records[i] for i in to_read[(to_read >= a) & (to_read < b)].tolist()}
        shoe_reports, _ = auditor.read_rounds(played, a)
        if any(rep is not None and rep.unsettled_reason is not None and not rounds.cancelled[a + i]
               for i, rep in enumerate(shoe_reports)):
            whole[s] = False  # (a round its bets cannot be settled on: audited alone)
            continue
        reports.update((a + i, rep) for i, rep in enumerate(shoe_reports) if rep is not None)
        said += [(a + i, f) for i, f in zip(auditor.found_in, auditor.findings, strict=True)]
    screened = played.settle(bets, np.zeros(len(rounds), np.bool_))
    credit, quiet = screened[0], screened[2]
    # (a bet for the readable rules: an amount beyond the columns' exact reach, or a round not settled by the kernel)
    whole &= np.bincount(bet_shoe[~quiet & ~(_checked_exactly(bets, screened[4]) & played.known[bets.round_index])],
                         minlength=n_shoes) == 0
    for s in np.flatnonzero(read & ~whole).tolist():  # (audited alone: as from the replay, nothing learnt)
        played.known[bounds[s]:bounds[s + 1]] = known[bounds[s]:bounds[s + 1]]
    mine = np.flatnonzero(whole[bet_shoe])
    flagged = mine[~quiet[mine]]
    checked = played.flagged(flagged, bets, screened)
    credit[flagged] = checked.credit
    played.plain &= whole[shoe]
    played.found = played.kinds()
    found = np.flatnonzero(played.found.any(axis=1) & ~read[shoe]).tolist()
    records.update(zip(found, rounds.recorded(found), strict=True))
    said += [(i, f) for i in found for f in played.findings(table.table_id, shoe_ids[shoe[i]], records[i], i)]
    said = [(i, f) for i, f in sorted(said, key=lambda x: x[0]) if whole[shoe[i]]]  # (stable: a round's in order)
    return PlainShoes(whole, played, [f for _, f in said], np.array([i for i, _ in said], np.int64),
                      named & ~whole[shoe], mine, credit[mine], checked,
                      {i: rep for i, rep in reports.items() if whole[shoe[i]]})


def _with_bet_findings(rules: BlackjackRules, table: TableFacts, shoe: ShoeFacts, rounds: ShoeRounds, bets: ShoeBets,
                       audit: ShoeAudit) -> tuple[list[Finding], np.ndarray]:
    """The audit's findings with those of its flagged bets (bet_checks.bet_findings) among them, in bet order, and
    each one's bet (-1: none)."""
    flagged = audit.flagged
    if not len(flagged):
        return audit.findings, audit.on_bet
    recorded = bets.recorded(flagged.bet.tolist())
    indexes = sorted({b.round_index for b in recorded})
    round_of = dict(zip(indexes, (r.round_id for r in rounds.recorded(indexes)), strict=True))
    found, on = bet_findings(rules, table, flagged, pa.table({
        "shoe_id": [shoe.shoe_id] * len(recorded), "round_id": [round_of[b.round_index] for b in recorded],
        **{name: [getattr(b, name) for b in recorded] for name in ("bet_id", "bet_type", "account_id")}}))
    columns = [Finding(**row) for row in found.to_pylist()]
    # (each bet's findings all come one way: the shoe's and rounds' first, then bet by bet)
    on_bet = np.concatenate([audit.on_bet, flagged.bet[on]])
    order = np.argsort(on_bet, kind="stable")
    every = [*audit.findings, *columns]
    return [every[i] for i in order.tolist()], on_bet[order]
