"""The one small interface every game implements, and the RTP row every game's `rtp` returns.

A game is a package of `engine/games/` (rules, dealing or outcome replay, settlement, RTP, the
explanation of a round) that exposes one `GAME = Game(...)`; `engine.games` registers it under the
name recorded in `tables.game`. Shared code asks the registry, never a game's module by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any


@dataclass(frozen=True)
class BetOutcome:
    description: str  # the paytable rule that matched first, or "lose"
    probability: Fraction
    credit: Fraction  # returned per unit staked (stake + win; 1 on a push; 0 on a loss)


EXACT = "exact enumeration"


@dataclass(frozen=True)
class BetRtp:
    """Expected credit per unit staked of one bet of one ruleset (stake included; wins not rounded)."""

    ruleset: str
    bet_type: str
    mode: str  # the betting mode where the game has modes (baccarat), else "-"
    decks: int
    rtp: Fraction
    outcomes: tuple[BetOutcome, ...]
    game: str = "baccarat"
    method: str = EXACT  # how `rtp` was obtained; anything but EXACT states its error
    selection: str | None = None  # where the RTP depends on what the bet covers (sic bo totals)

    @property
    def house_edge(self) -> Fraction:
        return 1 - self.rtp


@dataclass(frozen=True)
class Game:
    name: str  # the value of tables.game
    title: str
    bet_codes: tuple[str, ...]  # every bet code of RULES.md for this game
    modes: tuple[str, ...]  # betting modes a bet records (baccarat's commission modes); () = no mode
    ruleset_ids: Callable[[], list[str]]
    load_ruleset: Callable[[str], Any]
    rtp: Callable[[Any], list[BetRtp]]  # every bet of a ruleset
    audited: bool  # the pipeline audits this game's tables (a game can land engine-first)
    # Pairs of bet codes that win on complementary outcomes of a round (one wins where the other
    # loses, both may lose to the house: a zero, a triple), the hedge a colluding pair takes;
    # () where players do not bet against each other (engine/surveillance/collusion.py reads it).
    opposite_bets: tuple[tuple[str, str], ...] = ()
    # The package of its ruleset files (engine.ruleset_file; given texts are keyed by it); "": the game's
    # package's `rulesets` (engine/games/<game>/rulesets/).
    rulesets_package: str = ""
