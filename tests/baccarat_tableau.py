"""An oracle for the tests, independent of engine/games/baccarat: the chance that the Banker wins with a 6, on two
cards and on three, in a round dealt from a full shoe, enumerated card by card by the tableau of RULES.md (the
Player draws on 0-5; a stood Player leaves the Banker to draw on 0-5; after the Player's third card the Banker
draws on 0-2, on 3 unless it was an 8, on 4 if it was 2-7, on 5 if 4-7, on 6 if 6-7, never on 7; a natural 8 or 9
on either side ends the round)."""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from math import perm


def _banker_draws(banker: int, third: int) -> bool:
    """The Banker's draw after the Player's third card (its value `third`)."""
    return banker <= 2 or (banker == 3 and third != 8) or (banker == 4 and 2 <= third <= 7) \
        or (banker == 5 and 4 <= third <= 7) or (banker == 6 and third in (6, 7))


@cache
def banker_six_chances(decks: int = 8) -> tuple[Fraction, Fraction]:
    """(P(the Banker wins with a 6 on two cards), P(the Banker wins with a 6 on three cards))."""
    counts = [16 * decks] + [4 * decks] * 9  # card values 0 (ten and faces: 4 ranks x 4 suits) to 9
    total = 52 * decks
    ways = {2: [0, 0, 0, 0], 3: [0, 0, 0, 0]}  # banker's cards -> ways by how many cards were dealt (4, 5, 6)

    def take(value: int) -> int:
        n = counts[value]
        counts[value] -= 1
        return n

    for p1 in range(10):
        w1 = take(p1)
        for b1 in range(10):
            w2 = w1 * take(b1)
            for p2 in range(10):
                w3 = w2 * take(p2)
                for b2 in range(10):
                    w4 = w3 * take(b2)
                    player, banker = (p1 + p2) % 10, (b1 + b2) % 10
                    if w4 and player < 8 and banker < 8:
                        if player <= 5:  # the Player draws
                            for p3 in range(10):
                                w5 = w4 * take(p3)
                                final = (player + p3) % 10
                                if not _banker_draws(banker, p3):
                                    if banker == 6 and final < 6:
                                        ways[2][1] += w5
                                else:
                                    for b3 in range(10):
                                        if (banker + b3) % 10 == 6 and final < 6:
                                            ways[3][2] += w5 * counts[b3]
                                counts[p3] += 1
                        elif banker <= 5:  # the Player stands on 6 or 7; the Banker draws
                            for b3 in range(10):
                                if (banker + b3) % 10 == 6 and player < 6:
                                    ways[3][1] += w4 * counts[b3]
                    counts[b2] += 1
                counts[p2] += 1
            counts[b1] += 1
        counts[p1] += 1

    def chance(by_dealt: list[int]) -> Fraction:
        return sum((Fraction(n, perm(total, 4 + extra)) for extra, n in enumerate(by_dealt)), Fraction(0))

    return chance(ways[2]), chance(ways[3])
