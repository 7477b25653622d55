"""Baccarat dealing: scores, naturals, the third-card rule, and what a dealt round looks like.

Reads like RULES.md "Baccarat": deal Player, Banker, Player, Banker; a natural (8 or 9 on two
cards) stops the deal; otherwise the Player draws on 0-5 and the Banker follows the table below.
Every draw/stand decision is recorded with the rule that made it, for the incident replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from engine.cards import check_card
from engine.games.baccarat.values import BACCARAT_VALUE, CODE_VALUE

PLAYER, BANKER, TIE = "PLAYER", "BANKER", "TIE"

# Banker's two-card score -> the values of the Player's third card on which the Banker draws.
BANKER_DRAWS_ON: dict[int, frozenset[int]] = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset({0, 1, 2, 3, 4, 5, 6, 7, 9}),
    4: frozenset({2, 3, 4, 5, 6, 7}),
    5: frozenset({4, 5, 6, 7}),
    6: frozenset({6, 7}),
    7: frozenset(),
}


class ShoeExhausted(ValueError):
    """The card sequence ran out in the middle of a round."""


def score(cards: Sequence[str]) -> int:
    """Sum of baccarat values, keeping only the last digit."""
    try:
        return sum(CODE_VALUE[c] for c in cards) % 10  # a dict lookup per card: this runs per hand
    except (KeyError, TypeError):
        for c in cards:
            check_card(c)  # raises CardCodeError naming the bad code
        raise


def _values_text(values: frozenset[int]) -> str:
    """A set of card values as RULES.md writes them: runs of three or more as 'a–b', the rest listed,
    e.g. {0..7, 9} -> '0–7, 9', {0..5, 8, 9} -> '0–5, 8, 9', {6, 7} -> '6, 7'."""
    if not values:
        return "never"
    ordered = sorted(values)
    runs: list[list[int]] = []
    for v in ordered:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    parts: list[str] = []
    for run in runs:
        if len(run) >= 3:
            parts.append(f"{run[0]}–{run[-1]}")
        else:
            parts.extend(map(str, run))
    return ", ".join(parts)


@dataclass(frozen=True)
class Decision:
    """One draw/stand decision and the rule of the document that made it."""

    hand: str  # PLAYER | BANKER
    draws: bool
    rule: str  # a sentence, e.g. "Banker 4, Player's third card 7 -> draws (4 draws on 2–7)"


@cache  # 100 possible inputs, and the rule text is built once for each
def player_decision(player_two: int, banker_two: int) -> Decision:
    if player_two >= 8 or banker_two >= 8:
        who = "Player" if player_two >= 8 else "Banker"
        natural = player_two if player_two >= 8 else banker_two
        return Decision(PLAYER, False, f"{who} natural {natural} -> nobody draws")
    if player_two <= 5:
        return Decision(PLAYER, True, f"Player {player_two} -> draws (Player draws on 0–5)")
    return Decision(PLAYER, False, f"Player {player_two} -> stands (Player stands on 6–7)")


@cache  # 1,100 possible inputs, and the rule text is built once for each
def banker_decision(player_two: int, banker_two: int, player_third: int | None) -> Decision:
    """`player_third` is the baccarat value of the Player's third card, None when Player stood."""
    if player_two >= 8 or banker_two >= 8:
        return Decision(BANKER, False, "natural on the table -> Banker stands")
    if player_third is None:
        if banker_two <= 5:
            return Decision(
                BANKER, True, f"Banker {banker_two}, Player stood -> draws (draws on 0–5)"
            )
        return Decision(
            BANKER, False, f"Banker {banker_two}, Player stood -> stands (stands on 6–7)"
        )
    draws_on = BANKER_DRAWS_ON[banker_two]
    verb = "draws" if player_third in draws_on else "stands"
    if len(draws_on) == 10:
        why = f"{banker_two} draws on any"
    elif not draws_on:
        why = f"{banker_two} stands on any"
    else:
        why = f"{banker_two} draws on {_values_text(draws_on)}"
    return Decision(
        BANKER,
        player_third in draws_on,
        f"Banker {banker_two}, Player's third card {player_third} -> {verb} ({why})",
    )


def third_card_decisions(player_cards: Sequence[str], banker_cards: Sequence[str]) -> tuple[Decision, Decision]:
    """What the rule says each hand must do, given the first two cards of each hand and the Player's
    third card if there is one."""
    p2, b2 = score(player_cards[:2]), score(banker_cards[:2])
    p_dec = player_decision(p2, b2)
    third = BACCARAT_VALUE[player_cards[2][0]] if p_dec.draws and len(player_cards) > 2 else None
    if p_dec.draws and third is None:
        # The Player should have drawn but the record shows no third card: the Banker's duty is
        # then undefined; judge the Banker as if the Player had stood.
        return p_dec, banker_decision(p2, b2, None)
    return p_dec, banker_decision(p2, b2, third)


@dataclass(frozen=True)
class DealtRound:
    """A round as dealt by the rule from a card sequence, with its place in the shoe."""

    player_cards: tuple[str, ...]
    banker_cards: tuple[str, ...]
    decisions: tuple[Decision, ...]
    start: int = 0  # index in the shoe of the round's first card
    round_no: int = 0  # 1-based within the shoe (0 when dealt outside a shoe)

    @property
    def end(self) -> int:
        """Index of the first card after the round."""
        return self.start + len(self.player_cards) + len(self.banker_cards)

    @property
    def dealing_order(self) -> tuple[str, ...]:
        return dealing_order(self.player_cards, self.banker_cards)

    @property
    def player_score(self) -> int:
        return score(self.player_cards)

    @property
    def banker_score(self) -> int:
        return score(self.banker_cards)

    @property
    def outcome(self) -> str:
        return outcome(self.player_score, self.banker_score)


def dealing_order(player_cards: Sequence[str], banker_cards: Sequence[str]) -> tuple[str, ...]:
    """The order in which the cards came out of the shoe: P, B, P, B, then Player's third, Banker's third."""
    order = [player_cards[0], banker_cards[0], player_cards[1], banker_cards[1]]
    order.extend(player_cards[2:3])
    order.extend(banker_cards[2:3])
    return tuple(order)


def outcome(player_score: int, banker_score: int) -> str:
    if player_score > banker_score:
        return PLAYER
    if banker_score > player_score:
        return BANKER
    return TIE


def deal_round(cards: Sequence[str], start: int = 0, round_no: int = 0) -> DealtRound:
    """Deal one round from `cards[start:]` by the third-card rule."""

    def take(i: int) -> str:
        if start + i >= len(cards):
            raise ShoeExhausted(f"the shoe ran out at card {start + i} in the middle of a round")
        card = cards[start + i]
        return card if isinstance(card, str) and card in CODE_VALUE else check_card(card)

    player = [take(0), take(2)]
    banker = [take(1), take(3)]
    p2, b2 = score(player), score(banker)
    p_dec = player_decision(p2, b2)
    used = 4
    third = None
    if p_dec.draws:
        player.append(take(used))
        used += 1
        third = CODE_VALUE[player[2]]
    b_dec = banker_decision(p2, b2, third)
    if b_dec.draws:
        banker.append(take(used))
    return DealtRound(tuple(player), tuple(banker), (p_dec, b_dec), start, round_no)
