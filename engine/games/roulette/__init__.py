"""Roulette of document 004, single zero: the layout generated from its grid, rules as data, settlement
of a spin, exact RTP by enumeration of the 37 pockets, the audit of a session and its explanation.
"""

from __future__ import annotations

from engine.games.interface import BetRtp, Game
from engine.ruleset_file import bundled_ids

from .layout import BET_CODES
from .rules import RULESETS_PACKAGE, RouletteRules, load_roulette_rules

__all__ = ["BET_CODES", "GAME"]


def _rtp(rules: RouletteRules) -> list[BetRtp]:
    from .rtp import roulette_rtp

    return roulette_rtp(rules)


GAME = Game(
    name="roulette",
    title="Roulette (single zero)",
    bet_codes=BET_CODES,
    modes=(),
    ruleset_ids=lambda: bundled_ids(RULESETS_PACKAGE),
    load_ruleset=load_roulette_rules,
    rtp=_rtp,
    audited=True,
    opposite_bets=(("RED", "BLACK"), ("ODD", "EVEN"), ("LOW", "HIGH")),
)
