"""Baccarat of documents 000-004: the shoe's burn and cut card, the third-card rule, paytables matched
on named round facts, settlement, exact RTP by enumeration, and the dealing and betting audits."""

from __future__ import annotations

from engine.games.baccarat.ruleset import BET_CODES, MODES, load_ruleset, ruleset_ids
from engine.games.interface import BetRtp, Game


def _rtp(ruleset) -> list[BetRtp]:
    from engine.games.baccarat.rtp import ruleset_rtp  # the enumeration tables load on first use

    return ruleset_rtp(ruleset)


GAME = Game(
    name="baccarat",
    title="Baccarat",
    bet_codes=BET_CODES,
    modes=MODES,
    ruleset_ids=ruleset_ids,
    load_ruleset=load_ruleset,
    rtp=_rtp,
    audited=True,
    opposite_bets=(("PLAYER", "BANKER"),),
)
