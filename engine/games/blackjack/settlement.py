"""Blackjack settlement of document 004: what a replayed round owes each bet.

Credit = the stake returned + the win: 0 on a loss, the stake on a push. Amounts are integer minor
units; a bet's win is exact (Fraction) and rounded once, by the ruleset's rounding rule
(engine.money.round_to_unit), so 3:2 on an odd stake of 5 is 7.5, credited 12 under "floor".
A cancelled round refunds every stake, and so does a round the replay could not complete
(RoundPlay.complete is False: RULES.md, a round that cannot be resolved is cancelled and refunded).

The main bet (MAIN) of a box, hand by hand:
  - each split hand carries a stake equal to the original; a double doubles that hand's stake;
  - a bust loses, at once, before the dealer plays (whatever the dealer then draws);
  - a dealer blackjack (upcard and second card make 21) beats every other hand; a player blackjack
    pushes against it. What a doubled or split box loses to it is the ruleset's
    `doubled_or_split_lose_to_dealer_blackjack`: "all" every stake; "original" only the original
    stake (the first hand's), the doubles and split stakes are returned;
  - a blackjack (two-card 21, not after a split) pays blackjack_odds (3:2);
  - otherwise a dealer bust or the higher total wins win_odds (1:1); equal totals push.

Insurance: offered only when the upcard is an ace (also on a player blackjack when
insurance_on_player_blackjack); pays insurance_odds (2:1) iff the dealer has a blackjack. An
insurance bet taken when it was not offered is refunded, as engine.settlement does with a bet type the
ruleset does not offer: the operator should not have accepted it, and the audit flags it separately.

Pair: the box's first two cards (before any split): mixed, coloured or perfect pair at pair_odds.

Bet Behind: another account's stake on a seated box. The ruleset's `bet_behind_on_double_or_split`
says what it does when the box doubles or splits: "follows" settles it as the box (its account adds the
same stakes); "stays" (the default; Evolution-style tables let the bet-behind player choose, and 004 is
silent) settles it with the box's first hand: on a split box it follows the first split hand at its
own stake, on a doubled box it wins, loses or pushes with the doubled hand's result at its own stake.
Against a dealer blackjack it loses its own stake at most, under either reading of the rule above.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from engine.money import round_to_unit

from .hand import pair_kind
from .play import BoxPlay, HandPlay, RoundPlay, hand_is_blackjack
from .rules import BlackjackRules

# A hand's result against the dealer (hand_outcome).
BUST, BLACKJACK, WIN, PUSH, LOSE, LOSE_TO_DEALER_BLACKJACK = (
    "bust", "blackjack", "win", "push", "lose", "lose_to_dealer_blackjack",
)  # fmt: skip


def hand_outcome(rules: BlackjackRules, play: RoundPlay, hand: HandPlay) -> str:
    """The hand's result, in the order of the rule document's settlement."""
    if hand.total.value > 21:
        return BUST
    # (a blackjack is a two-card 21: the hand's total, worked out once by the replay, rules most hands out)
    blackjack = (hand.total.value == 21 and len(hand.cards) == 2
                 and hand_is_blackjack(rules, hand.cards, from_split=hand.from_split))
    if play.dealer_blackjack:
        return PUSH if blackjack else LOSE_TO_DEALER_BLACKJACK
    if blackjack:
        return BLACKJACK
    dealer = play.dealer_total.value
    if dealer > 21 or hand.total.value > dealer:
        return WIN
    return PUSH if hand.total.value == dealer else LOSE


def hand_stake(hand: HandPlay, main_stake: int) -> int:
    """Each hand carries the original stake (a split hand an equal one), doubled if it doubled."""
    return main_stake * 2 if hand.doubled else main_stake


def total_staked(play: RoundPlay, box: int, main_stake: int) -> int:
    """The original stake + every double + every split hand's stake: what MAIN should have recorded."""
    return sum(hand_stake(hand, main_stake) for hand in play.box(box).hands)


@dataclass(frozen=True)
class UnitCredit:
    """What a bet returns per unit staked: `returned` stakes back and a win of `win` x the stake, the win
    rounded once by the ruleset's rule. A box's bets of every stake are owed the same UnitCredit, so an
    audit works it out once a box and scales it by each stake (`of`)."""

    returned: int
    win: Fraction

    def of(self, stake: int, rules: BlackjackRules) -> int:
        return self.returned * stake + round_to_unit(stake * self.win.numerator, self.win.denominator, rules.rounding)


def box_unit_credit(rules: BlackjackRules, play: RoundPlay, box: int, *, cancelled: bool = False) -> UnitCredit:
    """settle_box per unit of the main stake: every hand's stake is the main stake or twice it, so what
    the box returns and wins is that many main stakes."""
    if cancelled or not play.complete:
        return UnitCredit(total_staked(play, box, 1), _NOTHING)
    returned, win = 0, _NOTHING
    for i, hand in enumerate(play.box(box).hands):
        stake = hand_stake(hand, 1)
        outcome = hand_outcome(rules, play, hand)
        if outcome == LOSE_TO_DEALER_BLACKJACK and rules.doubled_or_split_lose_to_dealer_blackjack == "original":
            # Only the original stake, carried by the first hand, is lost; doubles and split stakes return.
            returned += stake - (1 if i == 0 else 0)
            continue
        hand_returned, odds = _paid(rules, outcome)
        returned += hand_returned * stake
        if odds:
            win += stake * odds
    return UnitCredit(returned, win)


def settle_box(rules: BlackjackRules, play: RoundPlay, box: int, main_stake: int, *, cancelled: bool = False) -> int:
    """Credit of the box's main position: every hand of it, doubles and splits included."""
    return box_unit_credit(rules, play, box, cancelled=cancelled).of(main_stake, rules)


def bet_behind_unit_credit(rules: BlackjackRules, play: RoundPlay, box: int, *, cancelled: bool = False
                           ) -> UnitCredit:
    """settle_bet_behind per unit staked."""
    if rules.bet_behind_on_double_or_split == "follows":
        return box_unit_credit(rules, play, box, cancelled=cancelled)
    first_hand = _first_hand(play.box(box))
    if cancelled or not play.complete or first_hand is None:
        return UnitCredit(1, _NOTHING)
    return UnitCredit(*_paid(rules, hand_outcome(rules, play, first_hand)))


def settle_bet_behind(rules: BlackjackRules, play: RoundPlay, box: int, stake: int, *, cancelled: bool = False) -> int:
    """Credit of a bet behind on `box`: its own stake on the box's first hand (no double, no split), or,
    when the ruleset's bet behind follows the box, what the box's main position pays on that stake."""
    return bet_behind_unit_credit(rules, play, box, cancelled=cancelled).of(stake, rules)


def settle_pair(rules: BlackjackRules, play: RoundPlay, box: int, stake: int, *, cancelled: bool = False) -> int:
    """Credit of the pair side bet on the box's first two cards."""
    first_two = play.box(box).first_two
    if cancelled or not play.complete or len(first_two) != 2:
        return stake
    kind = pair_kind(*first_two)
    if kind is None:
        return 0
    return stake + _rounded(stake * rules.pair_odds[kind], rules)


def insurance_offered(play: RoundPlay, rules: BlackjackRules | None = None, box: int | None = None) -> bool:
    """Insurance is offered only when the dealer's upcard is an ace. Given the rules and a box, a box
    holding a blackjack is offered it only when insurance_on_player_blackjack (004: it is)."""
    if play.upcard is None or play.upcard[0] != "A":
        return False
    if rules is None or box is None or rules.insurance_on_player_blackjack:
        return True
    first_two = play.box(box).first_two
    return not hand_is_blackjack(rules, first_two, from_split=False)


def settle_insurance(
    rules: BlackjackRules, play: RoundPlay, stake: int, *, box: int | None = None, cancelled: bool = False
) -> int:
    """Credit of an insurance bet: wins insurance_odds iff the dealer has a blackjack; refunded when it
    was not offered (see the module doc)."""
    if cancelled or not play.complete or not insurance_offered(play, rules, box):
        return stake
    if not play.dealer_blackjack:
        return 0
    return stake + _rounded(stake * rules.insurance_odds, rules)


_NOTHING = Fraction(0)


def _paid(rules: BlackjackRules, outcome: str) -> tuple[int, Fraction]:
    """(stakes returned, net odds of the win) per unit staked with this outcome; every loss returns nothing."""
    if outcome == BLACKJACK:
        return 1, rules.blackjack_odds
    if outcome == WIN:
        return 1, rules.win_odds
    if outcome == PUSH:
        return 1, _NOTHING
    return 0, _NOTHING


def _rounded(win: Fraction, rules: BlackjackRules) -> int:
    win = Fraction(win)
    return round_to_unit(win.numerator, win.denominator, rules.rounding)


def _first_hand(box: BoxPlay) -> HandPlay | None:
    return box.hands[0] if box.hands and box.hands[0].cards else None
