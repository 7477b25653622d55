"""Replaying one blackjack round of document 004 from the shoe and the recorded decisions.

The deal (no hole card, RULES.md § Blackjack):
  1. one card to each occupied box, left to right (ascending box number);
  2. one card to the dealer: the upcard;
  3. the second card to each box, in the same order;
  4. each box plays in box order; a split box plays its hands in order, each to completion: the first
     split hand gets its second card at once and plays, then the second split hand gets its second
     card and plays;
  5. only then does the dealer take its second card, and draw on by the H17 rule.

A hand takes no more actions once it stands, doubles (one card), busts, reaches 21, is a blackjack,
or is a split ace that got its one card.

Reading the recorded decisions. Each box records one letter per decision, in order: H hit, S stand,
D double, P split. The letters belong to the hand being played; when that hand ends, the next letter
belongs to the box's next hand (after "P", the first split hand's letters, then the second's). A
letter recorded after the box's LAST hand ended is an action after the end ("action after bust"...)
on that last hand; on an earlier hand it cannot be told apart from the next hand's first letter and
is read as such.

Illegal decisions. What was recorded is what the dealer did, so an illegal decision is carried out
wherever it physically can be (a hit after a bust deals a card, a double on three cards deals one
card and doubles the stake, a split of K and T splits) and flagged: its Decision has legal=False and
a reason in plain words. Where it cannot be carried out at all (a split of a hand that is not two
cards, a second double of a doubled hand, an unknown letter) it is flagged and skipped
(carried_out=False). After a flagged action past a hand's end, `ended_by` still says how the hand
first ended; its cards and total include the extra cards.

Unfinished hands. A box whose letters run out while a hand is still live leaves that hand
"unfinished"; it is treated as standing on what it holds (play moves to the next hand, the dealer
plays against it) and listed by `RoundPlay.unfinished_hands`, separately from the decisions, since no
decision was recorded for it.

A shoe that runs out, an entry of `cards` that is not a card code, or a box recorded twice never
raise: the replay stops there and returns the round as far as it got, with complete=False and the
reason. Settlement refunds such a round (RULES.md: a round that cannot be resolved is cancelled).

The dealer when no hand is left live: the dealer always completes its hand unless every box hand is
bust or a blackjack (all settled once the second card shows whether the dealer has a blackjack); then
what the dealer does is the ruleset's `dealer_when_all_settled`: under "draws_by_rule" the dealer
completes its hand by the rule all the same; otherwise ("second_card_only", or "either", which accepts
both and deals the shorter) the dealer takes only the second card (it settles insurance and the
blackjacks) and stops.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from engine.cards import CARD_CODES, rank

from .hand import DealerDraw, Total, card_value, dealer_decision, hand_total, is_blackjack
from .rules import BlackjackRules

HIT, STAND, DOUBLE, SPLIT = "H", "S", "D", "P"
ACTIONS = frozenset((HIT, STAND, DOUBLE, SPLIT))
_CARD_SET = frozenset(CARD_CODES)
# the letters allowed on a live hand, by (double allowed, split allowed): made once, asked at every decision
_ALLOWED = {(double, split): frozenset((HIT, STAND) + (DOUBLE,) * double + (SPLIT,) * split)
            for double in (False, True) for split in (False, True)}
_NOTHING: frozenset[str] = frozenset()

# How a hand ended (HandPlay.ended_by).
ENDED_BY = ("stand", "double", "bust", "21", "blackjack", "split_aces", "unfinished")

_AFTER_END = {
    "stand": "action after stand",
    "double": "action after the double's one card",
    "bust": "action after bust",
    "21": "action after the hand reached 21",
    "blackjack": "action after blackjack",
    "split_aces": "action on a split ace after its one card",
}
_ORDINALS = ("first", "second", "third", "fourth", "fifth")


@dataclass(frozen=True)
class BoxActions:
    """A seated box and its recorded decisions, e.g. "PHSS" (split, the first hand hits then stands,
    the second stands). `auto_played`: the box was played for a disconnected player (basic strategy)."""

    box: int
    actions: str
    auto_played: bool = False


@dataclass(frozen=True)
class HandPlay:
    cards: tuple[str, ...]
    shoe_indexes: tuple[int, ...]  # where each card sits in the round's `cards`
    from_split: bool
    doubled: bool
    ended_by: str  # one of ENDED_BY; a double that busts is "bust", a double to 21 "double"
    total: Total

    @property
    def split_aces(self) -> bool:
        """A hand made by splitting two aces (its first card is the split ace)."""
        return self.from_split and bool(self.cards) and rank(self.cards[0]) == "A"


@dataclass(frozen=True)
class BoxPlay:
    box: int
    actions: str  # as recorded
    auto_played: bool
    first_two: tuple[str, ...]  # the box's first two cards, before any split (the pair side bet's cards)
    hands: tuple[HandPlay, ...]  # in playing order; hands[0] holds the original stake

    @property
    def splits(self) -> int:
        return len(self.hands) - 1


@dataclass(frozen=True)
class Decision:
    """One recorded decision, in the form a basic-strategy check can use: the hand's cards before the
    decision, the dealer's upcard, and what was allowed at that point."""

    box: int
    hand: int  # index into BoxPlay.hands
    cards: tuple[str, ...]  # the hand's cards before the decision
    upcard: str
    action: str  # the recorded letter
    allowed: frozenset[str]  # the legal letters at that point (empty once the hand has ended)
    legal: bool
    reason: str | None  # why it is illegal, in plain words; None when legal
    carried_out: bool  # False when it could not physically be done and was skipped
    from_split: bool
    auto_played: bool

    @property
    def can_double(self) -> bool:
        return DOUBLE in self.allowed

    @property
    def can_split(self) -> bool:
        return SPLIT in self.allowed

    @property
    def total(self) -> Total:
        return hand_total(self.cards)


class Dealt(NamedTuple):  # (a tuple: the audit's explanation makes one a card of every readable round)
    """Where one card of the round went: `cards[shoe_index]` is dealt to `box`/`hand` (None: the dealer)
    as that hand's `nth` card (0-based)."""

    shoe_index: int
    card: str
    box: int | None
    hand: int | None
    nth: int

    @property
    def who(self) -> str:
        return "dealer" if self.box is None else f"box {self.box} hand {self.hand}"


@dataclass(frozen=True)
class RoundPlay:
    boxes: tuple[BoxPlay, ...]  # ascending box number
    dealer: tuple[str, ...]  # the upcard first
    dealer_shoe_indexes: tuple[int, ...]
    dealer_draws: tuple[DealerDraw, ...]  # each of the dealer's decisions, the second card's first
    decisions: tuple[Decision, ...]  # every recorded decision, in the order played
    cards_used: int  # how many of the round's `cards` were dealt
    complete: bool
    incomplete_reason: str | None = None

    @property
    def upcard(self) -> str | None:
        return self.dealer[0] if self.dealer else None

    @cached_property  # once a round: every bet on the round is settled against it
    def dealer_total(self) -> Total:
        return hand_total(self.dealer)

    @cached_property
    def dealer_blackjack(self) -> bool:
        """The upcard and the second card make 21."""
        return is_blackjack(self.dealer, from_split=False)

    @cached_property  # (the audit compares it with the record and shows it in the replay)
    def box_cards(self) -> tuple[tuple[str, ...], ...]:
        """Each box's cards in the order they were dealt (as the contract records them)."""
        # (dealt_positions' order, read off each box's hands: no Dealt a card, the audit asks every round)
        return tuple(tuple(c for _, c in sorted((i, c) for hand in b.hands
                                                for c, i in zip(hand.cards, hand.shoe_indexes, strict=True)))
                     for b in self.boxes)

    def box(self, number: int) -> BoxPlay:
        for box in self.boxes:
            if box.box == number:
                return box
        raise ValueError(f"box {number} did not play in this round (boxes {[b.box for b in self.boxes]})")

    @property
    def illegal_decisions(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions if not d.legal)

    @property
    def unfinished_hands(self) -> tuple[tuple[int, int], ...]:
        """(box, hand index) of each hand left live when its box's letters ran out."""
        return tuple(
            (box.box, i) for box in self.boxes for i, hand in enumerate(box.hands) if hand.ended_by == "unfinished"
        )


def hand_is_blackjack(rules: BlackjackRules, cards: Sequence[str], *, from_split: bool) -> bool:
    """A two-card 21; on a split hand only for split aces, and only when the ruleset says so."""
    split_aces = from_split and bool(cards) and rank(cards[0]) == "A"
    return is_blackjack(
        cards, from_split=from_split, split_ace_21_is_blackjack=split_aces and rules.split_ace_21_is_blackjack
    )


def waits_for_dealer(rules: BlackjackRules, cards: Sequence[str], *, from_split: bool) -> bool:
    """A hand still waiting for the dealer's total: not bust and not a blackjack, judged on the cards it
    holds (a hand that stood and then took an illegal hit to 24 is bust)."""
    return hand_total(cards).value <= 21 and not hand_is_blackjack(rules, cards, from_split=from_split)


def replay_round(rules: BlackjackRules, cards: Sequence[str], boxes: Sequence[BoxActions], *,
                 dealer_as_recorded: bool = False) -> RoundPlay:
    """Deal `cards` (the shoe from this round's first card on, burn already skipped) to `boxes` in the
    order of 004, carry out each box's recorded decisions and play the dealer by the H17 rule.

    `dealer_as_recorded`: `cards` are the round's recorded cards in dealing order; after the boxes have
    played, the dealer takes every card left, whatever the rule says (the audit judges the dealer's
    draws separately, so a dealer who stood too early or drew too often still leaves a settleable round).
    """
    replay = _Replay(rules, cards, boxes, dealer_as_recorded=dealer_as_recorded)
    try:
        replay.run()
    except _Incomplete as stop:
        return replay.result(str(stop))
    return replay.result(None)


def dealt_positions(play: RoundPlay) -> list[Dealt]:
    """Every dealt card with the hand it went to, in shoe order, so that a caller can check each
    recorded card against where the shoe and the dealing order put it."""
    dealt = [
        Dealt(index, card, box.box, i, nth)
        for box in play.boxes
        for i, hand in enumerate(box.hands)
        for nth, (card, index) in enumerate(zip(hand.cards, hand.shoe_indexes, strict=True))
    ]
    dealt += [
        Dealt(index, card, None, None, nth)
        for nth, (card, index) in enumerate(zip(play.dealer, play.dealer_shoe_indexes, strict=True))
    ]
    return sorted(dealt, key=lambda d: d.shoe_index)


# The replay itself: mutable while the round is dealt, frozen into a RoundPlay at the end.


class _Incomplete(Exception):
    """The round cannot be dealt any further (the message says why)."""


@dataclass
class _Hand:
    cards: list[str] = field(default_factory=list)
    shoe_indexes: list[int] = field(default_factory=list)
    from_split: bool = False
    doubled: bool = False
    ended_by: str | None = None  # None while the hand is live

    @property
    def total(self) -> Total:
        return hand_total(self.cards)

    @property
    def split_aces(self) -> bool:
        return self.from_split and rank(self.cards[0]) == "A"

    def frozen(self) -> HandPlay:
        return HandPlay(
            tuple(self.cards),
            tuple(self.shoe_indexes),
            self.from_split,
            self.doubled,
            self.ended_by or "unfinished",
            self.total,
        )


@dataclass
class _Box:
    recorded: BoxActions
    hands: list[_Hand] = field(default_factory=lambda: [_Hand()])
    first_two: list[str] = field(default_factory=list)
    splits: int = 0

    @property
    def number(self) -> int:
        return self.recorded.box


class _Replay:
    def __init__(self, rules: BlackjackRules, cards: Sequence[str], boxes: Sequence[BoxActions], *,
                 dealer_as_recorded: bool = False) -> None:
        self.rules = rules
        self.dealer_as_recorded = dealer_as_recorded
        self.cards = cards
        self.boxes = [_Box(b) for b in sorted(boxes, key=lambda b: b.box)]
        self.dealer = _Hand()
        self.dealer_draws: list[DealerDraw] = []
        self.decisions: list[Decision] = []
        self.used = 0

    def run(self) -> None:
        numbers = [box.number for box in self.boxes]
        twice = sorted({n for n in numbers if numbers.count(n) > 1})
        if twice:
            raise _Incomplete(f"box {twice[0]} is recorded twice")
        for box in self.boxes:
            self.deal_first(box, "first")
        self.deal(self.dealer, "the dealer's upcard")
        for box in self.boxes:
            self.deal_first(box, "second")
        for box in self.boxes:
            self.play_box(box)
        self.play_dealer()

    def result(self, incomplete_reason: str | None) -> RoundPlay:
        boxes = tuple(
            BoxPlay(
                box.number,
                box.recorded.actions,
                box.recorded.auto_played,
                tuple(box.first_two),
                tuple(hand.frozen() for hand in box.hands),
            )
            for box in self.boxes
        )
        return RoundPlay(
            boxes,
            tuple(self.dealer.cards),
            tuple(self.dealer.shoe_indexes),
            tuple(self.dealer_draws),
            tuple(self.decisions),
            self.used,
            incomplete_reason is None,
            incomplete_reason,
        )

    # Dealing

    def deal(self, hand: _Hand, where: str, *parts: object) -> None:
        """The next card to `hand`; `where` (a format string of `parts`: written only when the round stops there)
        names it."""
        if self.used >= len(self.cards):
            ran_out = "the recorded cards ran out" if self.dealer_as_recorded else "the shoe ran out"
            raise _Incomplete(f"{ran_out}: no card {self.used + 1} of the round for {where.format(*parts)}")
        card = self.cards[self.used]
        if not isinstance(card, str) or card not in _CARD_SET:  # (check_card's test)
            raise _Incomplete(f"card {self.used + 1} of the round, {where.format(*parts)}, {card!r}, is not a card "
                              "code")
        hand.cards.append(card)
        hand.shoe_indexes.append(self.used)
        self.used += 1

    def deal_first(self, box: _Box, nth: str) -> None:
        self.deal(box.hands[0], "box {}'s {} card", box.number, nth)
        box.first_two.append(box.hands[0].cards[-1])

    # The boxes

    def play_box(self, box: _Box) -> None:
        letters = deque(box.recorded.actions)
        i = 0
        while i < len(box.hands):  # a split inserts the second split hand after the one being played
            self.play_hand(box, i, letters)
            i += 1

    def play_hand(self, box: _Box, i: int, letters: deque[str]) -> None:
        hand = box.hands[i]
        while True:  # once per split of this hand: it starts again as the first split hand
            if len(hand.cards) < 2:
                self.deal(hand, "box {} hand {}'s second card", box.number, i + 1)
            self.end_on_two_cards(hand)
            split = False
            # Letters past the end of the box's last hand are actions after the end (see module doc).
            while letters and not split and (hand.ended_by is None or i == len(box.hands) - 1):
                split = self.act(box, i, letters.popleft())
            if not split:
                break
        if hand.ended_by is None:
            hand.ended_by = "unfinished"

    def end_on_two_cards(self, hand: _Hand) -> None:
        """A blackjack, a split ace with its one card, or 21 on two cards takes no action."""
        value = hand.total.value  # (a blackjack is a 21: its test only then)
        if value == 21 and hand_is_blackjack(self.rules, hand.cards, from_split=hand.from_split):
            hand.ended_by = "blackjack"
        elif hand.split_aces and self.rules.split_aces_one_card:
            hand.ended_by = "split_aces"
        elif value == 21:
            hand.ended_by = "21"

    def act(self, box: _Box, i: int, letter: str) -> bool:
        """Record one decision and carry it out where possible; True when it split the hand."""
        hand = box.hands[i]
        allowed = self.allowed(hand, box.splits)
        legal = letter in allowed
        reasons = [] if legal else self.problems(hand, letter, box.splits)
        carried_out = letter in (HIT, STAND) or (letter == DOUBLE and not hand.doubled)
        carried_out |= letter == SPLIT and len(hand.cards) == 2
        self.decisions.append(
            Decision(
                box=box.number,
                hand=i,
                cards=tuple(hand.cards),
                upcard=self.dealer.cards[0],
                action=letter,
                allowed=allowed,
                legal=legal,
                reason="; ".join(reasons) if reasons else None,
                carried_out=carried_out,
                from_split=hand.from_split,
                auto_played=box.recorded.auto_played,
            )
        )
        if not carried_out:
            return False
        if letter == HIT:
            self.deal(hand, "box {} hand {}'s hit", box.number, i + 1)
            self.end_after_card(hand, None)
        elif letter == STAND:
            hand.ended_by = hand.ended_by or "stand"
        elif letter == DOUBLE:
            hand.doubled = True
            self.deal(hand, "box {} hand {}'s double", box.number, i + 1)
            self.end_after_card(hand, "double")
        else:
            self.split(box, i)
            return True
        return False

    @staticmethod
    def end_after_card(hand: _Hand, otherwise: str | None) -> None:
        """After a hit or a double: a bust or 21 ends the hand, and a double ends it anyway. A hand
        that had already ended keeps its first ending."""
        if hand.ended_by is not None:
            return
        value = hand.total.value
        hand.ended_by = "bust" if value > 21 else otherwise if otherwise else "21" if value == 21 else None

    @staticmethod
    def split(box: _Box, i: int) -> None:
        """Two hands of one card each with an equal stake; each gets its second card when it is played."""
        hand = box.hands[i]
        second = _Hand([hand.cards[1]], [hand.shoe_indexes[1]], from_split=True)
        hand.cards, hand.shoe_indexes = hand.cards[:1], hand.shoe_indexes[:1]
        hand.from_split, hand.doubled, hand.ended_by = True, False, None
        box.hands.insert(i + 1, second)
        box.splits += 1

    # What is allowed, and why not

    def allowed(self, hand: _Hand, splits: int) -> frozenset[str]:
        """The letters allowed on the hand: H and S on a live hand, D where double_problems finds none, P where
        split_problems finds none (both asked here as one test: the hand's cards are card codes, dealt)."""
        if hand.ended_by is not None:
            return _NOTHING
        rules, cards = self.rules, hand.cards
        split_aces = hand.split_aces
        double = (rules.double_on_first_two_cards and not hand.doubled and len(cards) == 2
                  and not (split_aces and not rules.double_on_split_aces)
                  and not (hand.from_split and not rules.double_after_split))
        split = len(cards) == 2 and splits < rules.max_splits and (
            cards[0][0] == cards[1][0] if rules.split_same_rank_only else card_value(cards[0]) == card_value(cards[1]))
        return _ALLOWED[bool(double), split]

    def problems(self, hand: _Hand, letter: str, splits: int) -> list[str]:
        reasons = [_AFTER_END[hand.ended_by]] if hand.ended_by is not None else []
        if letter == DOUBLE:
            reasons += self.double_problems(hand)
        elif letter == SPLIT:
            reasons += self.split_problems(hand, splits)
        elif letter not in ACTIONS:
            reasons.append(f"unknown action {letter!r}")
        return reasons

    def double_problems(self, hand: _Hand) -> list[str]:
        """Double on the first two cards, also after a split, except on split aces."""
        reasons = []
        if not self.rules.double_on_first_two_cards:
            reasons.append("double (the ruleset does not offer it)")
        if hand.doubled:
            reasons.append("second double of the same hand")
        elif len(hand.cards) != 2:
            reasons.append(f"double on {len(hand.cards)} cards")
        if hand.split_aces and not self.rules.double_on_split_aces:
            reasons.append("double on split aces")
        elif hand.from_split and not self.rules.double_after_split:
            reasons.append("double after split (the ruleset does not allow it)")
        return reasons

    def split_problems(self, hand: _Hand, splits: int) -> list[str]:
        """Split two cards of the same rank (K and T do not split), at most max_splits times a box."""
        reasons = []
        if len(hand.cards) != 2:
            reasons.append(f"split of {len(hand.cards)} cards")
        else:
            first, second = rank(hand.cards[0]), rank(hand.cards[1])
            if self.rules.split_same_rank_only and first != second:
                reasons.append(f"split of {first} and {second} (same rank only)")
            elif card_value(hand.cards[0]) != card_value(hand.cards[1]):
                reasons.append(f"split of {first} and {second} (same value only)")
        if splits >= self.rules.max_splits:
            nth = _ORDINALS[splits] if splits < len(_ORDINALS) else f"{splits + 1}th"
            reasons.append(f"{nth} split (the ruleset allows {self.rules.max_splits})")
        return reasons

    # The dealer

    def play_dealer(self) -> None:
        upcard_total = self.dealer.total
        self.dealer_draws.append(DealerDraw(upcard_total, True, "the second card, once every box has played"))
        if self.dealer_as_recorded:  # every card left is the dealer's; the audit judges them by the rule
            while self.used < len(self.cards):
                self.deal(self.dealer, "the dealer's card {}", len(self.dealer.cards) + 1)
            self.dealer_draws += [dealer_decision(self.dealer.cards[:k], hits_soft_17=self.rules.hits_soft_17)
                                  for k in range(2, len(self.dealer.cards) + 1)]
            return
        self.deal(self.dealer, "the dealer's second card")
        if self.rules.dealer_when_all_settled != "draws_by_rule" and not any(
                waits_for_dealer(self.rules, hand.cards, from_split=hand.from_split)
                for box in self.boxes for hand in box.hands):
            self.dealer_draws.append(
                DealerDraw(self.dealer.total, False, "every hand is bust or a blackjack: only the second card")
            )
            return
        while True:
            decision = dealer_decision(self.dealer.cards, hits_soft_17=self.rules.hits_soft_17)
            self.dealer_draws.append(decision)
            if not decision.draws:
                return
            self.deal(self.dealer, "the dealer's card {}", len(self.dealer.cards) + 1)

