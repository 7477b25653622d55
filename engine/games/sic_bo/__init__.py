"""Sic bo of document 004: three dice, the table's selections, rules and both industry paytables as
data, settlement of a roll, exact RTP by enumeration of the 216 rolls, the audit of a session and its
explanation.
"""

from __future__ import annotations

from engine.games.interface import BetRtp, Game
from engine.ruleset_file import bundled_ids

from .layout import BET_CODES
from .rules import RULESETS_PACKAGE, SicBoRules, load_sic_bo_rules

__all__ = ["BET_CODES", "GAME"]


def _rtp(rules: SicBoRules) -> list[BetRtp]:
    from .rtp import sic_bo_rtp

    return sic_bo_rtp(rules)


GAME = Game(
    name="sic_bo",
    title="Sic Bo",
    bet_codes=BET_CODES,
    modes=(),
    ruleset_ids=lambda: bundled_ids(RULESETS_PACKAGE),
    load_ruleset=load_sic_bo_rules,
    rtp=_rtp,
    audited=True,
    opposite_bets=(("SMALL", "BIG"), ("ODD", "EVEN")),
)
