"""Blackjack of document 004: rules as data, hand totals, the dealer's H17 draws, the round replayed
from the shoe with every decision's legality, settlement, basic strategy and exact RTP.
"""

from __future__ import annotations

from engine.games.interface import BetRtp, Game
from engine.ruleset_file import bundled_ids

from .rules import RULESETS_PACKAGE, BlackjackRules, load_blackjack_rules

BET_CODES: tuple[str, ...] = ("MAIN", "PAIR", "INSURANCE", "BET_BEHIND")


def _rtp(rules: BlackjackRules) -> list[BetRtp]:
    from .rtp import blackjack_rtp

    return blackjack_rtp(rules)


GAME = Game(
    name="blackjack",
    title="Blackjack",
    bet_codes=BET_CODES,
    modes=(),
    ruleset_ids=lambda: bundled_ids(RULESETS_PACKAGE),
    load_ruleset=load_blackjack_rules,
    rtp=_rtp,
    audited=True,
)
