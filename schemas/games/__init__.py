"""Each game's part of the data contract and of the audit's outputs, one module per game, registered by
`tables.game` (as engine/games PACKAGES and pipelines/games ADAPTORS): schemas.contract's CONTRACT and
schemas.outputs' OUTPUTS, SORT_KEYS and DOCS gather them when read and name no game. A game's module has

    COLUMNS     {input table: (Column, ...)}: its own columns (schemas.contract.column), each naming the shared
                column of its table it follows (`after`)
    FAMILIES    the families of columns it shares with other games (schemas/games/families.py: the box games',
                the outcome games'), () when none
    OUTPUTS     (schemas.outputs.Output, ...): its outputs, its round replays first (pipelines/games/<game>.py
                OUT_REPLAYS), each with its fields, their docs and its sort key

Adding a game: its module here and one line in SCHEMAS. Columns and outputs come in registry order.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from types import ModuleType
from typing import TypeVar

T = TypeVar("T")

# tables.game -> the module of its columns and outputs
SCHEMAS: dict[str, str] = {
    "baccarat": "schemas.games.baccarat",
    "blackjack": "schemas.games.blackjack",
    "roulette": "schemas.games.roulette",
    "sic_bo": "schemas.games.sic_bo",
    "casino_stud": "schemas.games.casino_stud",
}


def modules() -> list[tuple[str, ModuleType]]:
    """(game, its module) of every registered game, in registry order."""
    return [(game, import_module(path)) for game, path in SCHEMAS.items()]


_memo: dict[tuple[Callable, tuple], object] = {}


def per_registry(build: Callable[[], T]) -> T:
    """`build()` (a value gathered from the registry) worked out once per content of SCHEMAS: a game registered
    later (a test's) is seen, the registered games' value is not recomputed."""
    key = (build, tuple(SCHEMAS.items()))
    if key not in _memo:
        _memo[key] = build()
    return _memo[key]  # type: ignore[return-value]
