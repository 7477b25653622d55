"""Return to player of the blackjack main bet (MAIN) when the box plays a basic strategy chart.

`main_bet_rtp(rules, chart=None)` enumerates every first deal from the full `rules.decks` shoe (the
dealer's upcard and the box's two cards, each combination with its exact probability) and, for each,
the expected result of playing `chart` (by default the ruleset's own `derive_basic_strategy`) from
there on, with strategy.Position: exact dealer draws from the shoe less those three cards, the
dealer's second card after the players (no hole card); the box's further cards drawn from that same
shoe without further depletion. Paid as engine.games.blackjack.settlement pays: blackjack at
blackjack_odds, pushed by a dealer blackjack; a bust loses at once; a dealer blackjack beats every
other hand, taking every stake ("all") or, under "original", the original stake (the busts having
already lost theirs); 21 after a split is not a blackjack unless the ruleset says so; split aces one
card; double after split as the ruleset says; at most one split.

The figure is per unit of the initial stake, stake returned included (doubles and split stakes are
extra money at risk, not part of the unit), and is for the first round of a freshly shuffled shoe
(continuous shuffling); a cut card adds a little to the house edge (about 0.015% on 8 decks) that this
does not model. See ERROR_BOUND for what the approximation costs.
"""

from __future__ import annotations

from dataclasses import dataclass

from .rules import BlackjackRules
from .strategy import (
    EXTRA,
    FIRST,
    VALUES,
    BasicStrategyChart,
    Position,
    check_supported,
    derive_basic_strategy,
    full_shoe,
    hand_value,
    same_rank_share,
    two_card_hands,
    upcard_label,
    without,
)

# What the approximation costs (the box's own hits, doubles and split cards do not leave the shoe, and
# the dealer's probabilities ignore them). Measured once, offline, against the same chart played with
# exact depletion (every card the box draws leaves the shoe; the dealer draws from what is left) for
# every hand but splits: this method's house edge is lower by 0.0029% (8 decks, H17), 0.0035% (8
# decks, S17), 0.013% (2 decks), 0.027% to 0.030% (1 deck): about 0.025%/decks, the player's side.
# Split hands (about 2.5% of deals) were not re-played exactly. Bound: 0.01% of the stake on 8 decks,
# three times what was measured, scaled by 8/decks.
ERROR_BOUND_8_DECKS = 0.0001


@dataclass(frozen=True)
class MainBetRtp:
    ruleset: str
    rtp: float  # expected credit per unit of initial stake (stake included)
    house_edge: float  # 1 - rtp
    method: str
    error_bound: float  # |error| of rtp from the approximation in `method` (ERROR_BOUND_8_DECKS)


def method_text(rules: BlackjackRules) -> str:
    return (
        f"exact enumeration of the first deal (upcard and two cards) from the full {rules.decks}-deck shoe; per "
        "deal, exact dealer draws from the shoe less those cards (second card after the players), the box "
        "playing the basic strategy chart with its further cards drawn from that shoe without depletion "
        f"(approximation: error within {error_bound(rules):.3%} of the stake, the RTP slightly high); first "
        "round after a shuffle (no cut-card effect); floats"
    )


def error_bound(rules: BlackjackRules) -> float:
    return ERROR_BOUND_8_DECKS * 8 / rules.decks


class _ChartPlay:
    """EVs of a box playing `chart` from one Position (memoised per hand state). `behind`: the EV of a
    bet behind the box instead, its own unit on the box's first hand (a double adds nothing to it, a
    split's second hand is not its own: settlement.settle_bet_behind)."""

    def __init__(self, pos: Position, chart: BasicStrategyChart, *, behind: bool = False) -> None:
        self.pos = pos
        self.chart = chart
        self.doubled_stake = 1 if behind else 2
        self.split_roles = (FIRST,) if behind else (FIRST, EXTRA)
        self.up = upcard_label(pos.upcard)
        self._memo: dict[tuple[int, bool, str], float] = {}

    def after_hit(self, hard: int, ace: bool, role: str) -> float:
        """A hand of three cards or more: the chart's hit or stand (no double, no split)."""
        key = (hard, ace, role)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        total, soft = hand_value(hard, ace)
        if total > 21:
            ev = self.pos.bust_value(1, role)
        elif total == 21:  # a hand that reaches 21 takes no more cards (play.py)
            ev = self.pos.stand_value(21, 1, role)
        elif self.chart.decision(total, soft, None, self.up, can_double=False, can_split=False) == "S":
            ev = self.pos.stand_value(total, 1, role)
        else:
            ev = self.hit(hard, ace, role)
        self._memo[key] = ev
        return ev

    def hit(self, hard: int, ace: bool, role: str) -> float:
        draws = zip(VALUES, self.pos.draw, strict=True)
        return sum(p * self.after_hit(hard + v, ace or v == 1, role) for v, p in draws if p)

    def double(self, hard: int, ace: bool, role: str) -> float:
        pos, draws = self.pos, zip(VALUES, self.pos.draw, strict=True)
        stake = self.doubled_stake
        return sum(p * pos.stand_value(hand_value(hard + v, ace or v == 1)[0], stake, role) for v, p in draws if p)

    def two_cards(self, hard: int, ace: bool, pair: int | None, role: str, *, can_double: bool) -> float:
        """A two-card hand that is not a blackjack; `pair` the value of a splittable pair."""
        total, soft = hand_value(hard, ace)
        if total == 21:
            return self.pos.stand_value(21, 1, role)
        label = upcard_label(pair) if pair is not None else None
        action = self.chart.decision(total, soft, label, self.up, can_double=can_double, can_split=pair is not None)
        if action == "S":
            return self.pos.stand_value(total, 1, role)
        if action == "H":
            return self.hit(hard, ace, role)
        if action == "D":
            return self.double(hard, ace, role)
        return self.split(pair)  # "P": only the box's own hand can split (no resplit)

    def split(self, value: int) -> float:
        pos = self.pos
        can_double = pos.can_double_split(value)
        ev = 0.0
        for second, p in zip(VALUES, pos.draw, strict=True):
            if not p:
                continue
            for role in self.split_roles:
                hard, ace, blackjack, over = pos.split_hand_start(value, second, role)
                if blackjack:
                    ev += p * pos.blackjack_value()
                elif over:
                    ev += p * pos.stand_value(hand_value(hard, ace)[0], 1, role)
                else:
                    ev += p * self.two_cards(hard, ace, None, role, can_double=can_double)
        return ev


def _deal_ev(pos: Position, chart: BasicStrategyChart, a: int, b: int, rules: BlackjackRules, *,
             behind: bool = False) -> float:
    """EV of the box's first two cards `a` <= `b` against the Position's upcard (of a bet behind it when
    `behind`)."""
    hard, ace = a + b, a == 1
    if hand_value(hard, ace)[0] == 21:
        return pos.blackjack_value()
    play = _ChartPlay(pos, chart, behind=behind)
    if a != b or rules.max_splits < 1:
        return play.two_cards(hard, ace, None, FIRST, can_double=True)
    splittable = play.two_cards(hard, ace, a, FIRST, can_double=True)
    if a != 10 or not rules.split_same_rank_only:
        return splittable
    share = same_rank_share(rules.decks, pos.upcard)  # K+T is no pair: played as hard 20
    return share * splittable + (1 - share) * play.two_cards(hard, ace, None, FIRST, can_double=True)


def main_bet_rtp(rules: BlackjackRules, chart: BasicStrategyChart | None = None) -> MainBetRtp:
    """RTP of the main bet under `rules` played by `chart` (default: the ruleset's derived chart)."""
    return _chart_rtp(rules, chart, behind=False)


def bet_behind_rtp(rules: BlackjackRules, chart: BasicStrategyChart | None = None) -> MainBetRtp:
    """RTP of a bet behind a box that plays `chart`: its own stake on the box's first hand, never
    doubled or split (the reading settlement.settle_bet_behind pays)."""
    return _chart_rtp(rules, chart, behind=True)


def _chart_rtp(rules: BlackjackRules, chart: BasicStrategyChart | None, *, behind: bool) -> MainBetRtp:
    check_supported(rules)
    if chart is None:
        chart = derive_basic_strategy(rules)
    shoe = full_shoe(rules.decks)
    n = sum(shoe)
    ev = 0.0
    for up in VALUES:
        p_up = shoe[up - 1] / n
        after_up = without(shoe, up)
        for a, b, p_hand in two_card_hands(after_up):
            pos = Position(without(after_up, a, b), up, rules)
            ev += p_up * p_hand * _deal_ev(pos, chart, a, b, rules, behind=behind)
    method = method_text(rules)
    if behind:
        method = "the bet behind's own stake on the box's first hand (no double, no split), the box playing " \
                 "the chart; " + method
    return MainBetRtp(rules.id, 1 + ev, -ev, method, error_bound(rules))
