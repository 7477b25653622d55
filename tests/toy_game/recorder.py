"""The coin's recorder (the layer pitboss/recorder/<game>.py holds for a real game): what the shared outcome
recorder needs of the game; `RECORDER` is its registry entry (its `generate` option: --coin-tables)."""

from __future__ import annotations

import random

import pyarrow as pa

from pitboss.recorder.outcomes import OutcomeGame
from tests.toy_game.engine import BET_CODES, FACES, NAME, judge_flip_bet, load_coin_rules

LIMITS = {code: (100, 50_000) for code in BET_CODES}
FOREIGN = ("RED", "BLACK", "SMALL", "BIG")  # codes of other games, without a selection (BET_TYPE_NOT_OFFERED)


def _foreign_bet(rnd: random.Random) -> tuple[str, None]:
    return rnd.choice(FOREIGN), None


GAME = OutcomeGame(
    name=NAME, ruleset="coin_flip_live", suffix="CN", title="Coin", operator="Toy Live", equipment="COIN",
    outcome_column="coin_face", outcome_type=pa.string(), table_max=100_000, limits=LIMITS,
    weights={"HEADS": 1, "TAILS": 1}, load_rules=load_coin_rules, selections=lambda rules, code: (None,),
    draw=lambda rnd: rnd.choice(FACES), judge=judge_flip_bet, describe=lambda face: f"face {face}",
    invalid_outcome=lambda rnd: ("EDGE", "EDGE (the coin on its edge)"), missing_outcome=lambda rnd: None,
    invalid_selection=lambda rnd, code: None, foreign_bet=_foreign_bet, trap=lambda rules, code, face: None,
    even_money=BET_CODES,
)
RECORDER = GAME.recorder(field="coin_tables", help="Coin tables (coin_flip_live), after every other game's.")
