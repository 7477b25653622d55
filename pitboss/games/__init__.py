"""Each game's pieces of the pages pitboss prints, one module per game named as `tables.game` names it
(`pitboss.games.<game>`): shared commands import a game's module by that name, never by hand.

A game whose round has one outcome (a spin, a roll) provides, for `pitboss replay`: STYLE (CSS of its
picture), layout(env, data) (the HTML picture of the outcome and of what each bet covers) and covers(data, bet)
(the text replay's 'covers' column)."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType


def view(game: str | None) -> ModuleType | None:
    """The game's module, None for a game without one."""
    try:
        return import_module(f"{__name__}.{game}") if game else None
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{game}":
            raise
        return None
