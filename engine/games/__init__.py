"""Every game pitboss knows, one package each behind `engine.games.interface.Game`, by `tables.game`.

Shared code (pipeline, readers, warehouse, CLI) asks this registry; only a game's own package names
its concepts. Adding a game: its package with `GAME`, its ruleset files, and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from importlib import import_module
from typing import Any, TypeVar

from engine.games.interface import BetRtp, Game
from engine.ruleset_file import RulesetError, reading_text, ruleset_text, sha256_text

# tables.game -> the package that implements it (imported on first use).
PACKAGES: dict[str, str] = {
    "baccarat": "engine.games.baccarat",
    "blackjack": "engine.games.blackjack",
    "casino_stud": "engine.games.casino_stud",
    "roulette": "engine.games.roulette",
    "sic_bo": "engine.games.sic_bo",
}


T = TypeVar("T")


def per_registry(fn: Callable[[], T]) -> Callable[[], T]:
    """`fn()` (a value read from the registry: every game's codes, ruleset ids) worked out once per content of
    PACKAGES: a game registered later (a test's) is seen, the registered games' value is not recomputed."""
    memo: dict[tuple, T] = {}

    @wraps(fn)
    def cached() -> T:
        key = tuple(PACKAGES.items())
        if key not in memo:
            memo[key] = fn()
        return memo[key]

    return cached


def game_names() -> tuple[str, ...]:
    return tuple(PACKAGES)


def game(name: str) -> Game:
    if name not in PACKAGES:
        raise KeyError(f"unknown game {name!r}; known: {', '.join(PACKAGES)}")
    return import_module(PACKAGES[name]).GAME


def ruleset_ids(games: tuple[str, ...] | None = None) -> list[str]:
    """Every bundled ruleset id of the given games (all games when None), in name order."""
    return sorted(rid for name in games or game_names() for rid in game(name).ruleset_ids())


def game_of_ruleset(ruleset_id: str) -> str:
    for name in game_names():
        if ruleset_id in game(name).ruleset_ids():
            return name
    raise RulesetError(f"unknown ruleset {ruleset_id!r}; known: {', '.join(ruleset_ids())}")


def load_ruleset(ruleset_id: str) -> Any:
    """A bundled ruleset of any game, parsed by its game's package."""
    return game(game_of_ruleset(ruleset_id)).load_ruleset(ruleset_id)


def rulesets_package(name: str) -> str:
    """The package of a game's ruleset files (its Game's, else `engine/games/<game>/rulesets/`)."""
    return game(name).rulesets_package or f"{PACKAGES[name]}.rulesets"


def ruleset_source(ruleset_id: str) -> tuple[str, str]:
    """(text, sha256 of the text) of a ruleset of any game as it is in force now: its bundled file, or the
    text given to the run in its place (engine.ruleset_file.use_texts)."""
    text, _ = ruleset_text(rulesets_package(game_of_ruleset(ruleset_id)), ruleset_id)
    return text, sha256_text(text)


def rtp_of_text(name: str, ruleset_id: str, text: str, source: str) -> list[BetRtp]:
    """Every bet's RTP of a ruleset text of game `name` (a text the warehouse kept): parsed by the game's reader
    as strictly as a bundled file (its `id` field must say `ruleset_id`), in this thread alone, whatever text
    the process settles `ruleset_id` with. Raises RulesetError naming `source`."""
    g = game(name)
    with reading_text(rulesets_package(name), ruleset_id, text, source):
        return g.rtp(g.load_ruleset(ruleset_id))
