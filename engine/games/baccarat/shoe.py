"""Shoe replay: burn, deal rounds by the rule until the cut-card round, as RULES.md "Shoe procedure".

At the start of a shoe the dealer turns the first card; its baccarat value says how many cards are
burned (T/J/Q/K burn `face_card_burns`). The cut card sits in front of `cards[cut_index]`: the
round during which it comes out (the first round that needs card `cut_index` or later) is the last.
Mini-baccarat deals one round from a fresh shuffle, with no burn and no cut card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.cards import check_card
from engine.games.baccarat.dealing import DealtRound, ShoeExhausted, deal_round
from engine.games.baccarat.ruleset import ShoeProcedure
from engine.games.baccarat.values import BACCARAT_VALUE


@dataclass(frozen=True)
class Burn:
    turned_card: str | None
    burned: int  # cards burned by the turned card's value
    turned_card_counts_as_burned: bool = False

    @property
    def first_round_start(self) -> int:
        """Index in the shoe of the first dealt card."""
        if self.turned_card is None:
            return 0
        return self.burned if self.turned_card_counts_as_burned else 1 + self.burned


def burn_procedure(cards: Sequence[str], shoe: ShoeProcedure) -> Burn:
    if not shoe.burn:
        return Burn(None, 0)
    if not cards:
        raise ShoeExhausted("the shoe is empty: no card to turn for the burn")
    turned = check_card(cards[0])
    value = BACCARAT_VALUE[turned[0]] or shoe.face_card_burns
    return Burn(turned, value, shoe.turned_card_counts_as_burned)


@dataclass(frozen=True)
class ShoeReplay:
    burn: Burn
    rounds: tuple[DealtRound, ...]
    cut_index: int | None
    exhausted: bool  # the cards ran out before a cut-card round was complete (or no cut card)

    @property
    def cards_used(self) -> int:
        return self.rounds[-1].end if self.rounds else self.burn.first_round_start


def replay_shoe(cards: Sequence[str], shoe: ShoeProcedure, cut_index: int | None) -> ShoeReplay:
    """Deal every round of the shoe by the rule, from the turned card to the cut-card round."""
    try:
        burn = burn_procedure(cards, shoe)
    except ShoeExhausted:
        return ShoeReplay(Burn(None, 0), (), cut_index, True)
    position = burn.first_round_start
    rounds: list[DealtRound] = []
    exhausted = False
    while True:
        try:
            dealt = deal_round(cards, position, round_no=len(rounds) + 1)
        except ShoeExhausted:
            exhausted = True
            break
        rounds.append(dealt)
        position = dealt.end
        if shoe.reshuffle_every_hand or is_final_round(dealt, cut_index):
            break
    return ShoeReplay(burn, tuple(rounds), cut_index, exhausted)


def is_final_round(dealt: DealtRound, cut_index: int | None) -> bool:
    return cut_index is not None and dealt.end > cut_index
