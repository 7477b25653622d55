"""Each game's recorder, registered by `tables.game`: what `pitboss generate`, the run and its configuration ask
of a game (its table-count option, default, fault kinds and the recorder of its tables). Names no game: a game's
recorder module exposes `RECORDER = GameRecorder(...)` and is listed here by module path, imported on first use.

Adding a game: its module (pitboss/recorder/<game>.py) and one line in RECORDERS. The order of RECORDERS is the
order a run lays out its tables (table ids and indexes: T01.., account and dealer ids), so a new game goes last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

# tables.game -> the module of its recorder, in the order a run lays out its tables.
RECORDERS: dict[str, str] = {
    "baccarat": "pitboss.recorder.baccarat",
    "blackjack": "pitboss.recorder.blackjack",
    "roulette": "pitboss.recorder.roulette",
    "sic_bo": "pitboss.recorder.sic_bo",
    "casino_stud": "pitboss.recorder.casino_stud",
}


@dataclass(frozen=True)
class GameRecorder:
    """What a game gives the run: `record(config, out, n_tables, first_index)` makes the recorder of its tables
    in a run (writers.RecorderHooks with `tables`, `stats` and `record_day`); its first table's index is
    `first_index` (the tables of the games before it)."""

    game: str  # tables.game
    field: str  # GenerateConfig's keyword for its table count; generate's option is the same with dashes
    help: str  # of that option
    fault_kinds: tuple[str, ...]  # every kind it plants, in planting order
    record: Callable[[Any, Path, int, int], Any]
    default_tables: int = 0
    # its part files are the dataset's unnamed ones (part-NNNNN.parquet), written for every business date even
    # with no table of it (a date's folders then hold one empty file with the shared columns)
    base_files: bool = False

    @property
    def option(self) -> str:
        return "--" + self.field.replace("_", "-")


def recorder(game: str) -> GameRecorder:
    if game not in RECORDERS:
        raise KeyError(f"no recorder for game {game!r}; known: {', '.join(RECORDERS)}")
    return import_module(RECORDERS[game]).RECORDER


def recorders() -> list[GameRecorder]:
    """Every game's recorder, in table order."""
    return [recorder(game) for game in RECORDERS]


def fault_kinds() -> tuple[str, ...]:
    """Every kind some game plants, each once, in table order then planting order."""
    return tuple(dict.fromkeys(kind for rec in recorders() for kind in rec.fault_kinds))
