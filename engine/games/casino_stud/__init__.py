"""Casino five-card stud of document 004 with its progressive jackpot: rules as data, hand ranking,
the deal from each round's fresh deck, settlement of the ante and call, the jackpot pools' ledger, the
audit of a table-day and the explanation of a round (docs/casino-stud.md is the design).
"""

from __future__ import annotations

from fractions import Fraction

from engine.games.interface import BetRtp, Game
from engine.ruleset_file import bundled_ids

from .rules import RULESETS_PACKAGE, CasinoStudRules, load_casino_stud_rules

__all__ = ["BET_CODES", "GAME"]

BET_CODES: tuple[str, ...] = ("ANTE", "JACKPOT")


def _rtp(rules: CasinoStudRules, jackpot: Fraction | int | None = None) -> list[BetRtp]:
    """Every bet's RTP; the JACKPOT bet's at a jackpot balance of `jackpot` stakes (None: 0)."""
    from .rtp import casino_stud_rtp

    return casino_stud_rtp(rules, jackpot)


GAME = Game(
    name="casino_stud",
    title="Casino five-card stud",
    bet_codes=BET_CODES,
    modes=(),
    ruleset_ids=lambda: bundled_ids(RULESETS_PACKAGE),
    load_ruleset=load_casino_stud_rules,
    rtp=_rtp,
    audited=True,
)
