"""The roulette tables of the recorder (document 004, ruleset roulette_single_zero_live): what the shared
outcome recorder (pitboss/recorder/outcomes.py) needs of the game. Selections come from the engine's
layout (engine.games.roulette.layout), every credit from its settlement (engine.games.roulette.settlement).
"""

from __future__ import annotations

import random
from functools import lru_cache

import pyarrow as pa

from engine.games.roulette.layout import EVEN_CHANCES, POCKETS, Layout, layout
from engine.games.roulette.rules import RouletteRules, load_roulette_rules
from engine.games.roulette.settlement import judge_spin_bet
from engine.games.sic_bo.layout import SELECTIONS as SIC_BO_SELECTIONS
from pitboss.recorder.outcomes import OutcomeGame

RULESET = "roulette_single_zero_live"
TABLE_MAX = 500_000  # 5,000.00 EUR: an account's total on a spin
LIMITS: dict[str, tuple[int, int]] = {
    "STRAIGHT": (100, 10_000),
    "SPLIT": (100, 20_000),
    "STREET": (100, 30_000),
    "CORNER": (100, 40_000),
    "SIX_LINE": (100, 60_000),
    "DOZEN": (100, 100_000),
    "COLUMN": (100, 100_000),
    **{code: (100, 200_000) for code in EVEN_CHANCES},
}
WEIGHTS: dict[str, float] = {"STRAIGHT": 30, "SPLIT": 12, "STREET": 6, "CORNER": 9, "SIX_LINE": 4, "DOZEN": 8,
                             "COLUMN": 6, "RED": 8, "BLACK": 8, "ODD": 3, "EVEN": 3, "LOW": 2, "HIGH": 2}
INVALID_POCKETS = (37, 38, -1, 99)
# inside bets a selection of the right size can be illegal for: how many numbers each covers
INSIDE_SIZES = {"SPLIT": 2, "STREET": 3, "CORNER": 4, "SIX_LINE": 6}
# sic bo codes roulette does not have (ODD and EVEN are both games'), for BET_TYPE_NOT_OFFERED
FOREIGN = tuple(code for code in SIC_BO_SELECTIONS if code not in LIMITS)


@lru_cache(maxsize=1)
def _layout() -> Layout:
    return layout(load_roulette_rules(RULESET).red)


def _selections(rules: RouletteRules, code: str) -> tuple[str | None, ...]:
    return layout(rules.red).selections(code)


def _invalid_outcome(rnd: random.Random) -> tuple[int, str]:
    pocket = rnd.choice(INVALID_POCKETS)
    assert pocket not in POCKETS
    return pocket, f"{pocket} (no such pocket)"


def _invalid_selection(rnd: random.Random, code: str) -> tuple[str, str] | None:
    """Numbers of the right count that are not a legal bet of `code` (a split of two numbers that do not
    touch, a corner that is not a corner, a street that is not a row, two rows that do not touch)."""
    size = INSIDE_SIZES.get(code)
    if size is None:
        return None
    legal = set(_layout().selections(code))
    while True:
        if rnd.random() < 0.5:  # near a legal one: one number moved
            numbers = [int(x) for x in rnd.choice(sorted(legal)).split("-")]
            numbers[rnd.randrange(size)] = rnd.choice([n for n in POCKETS if n not in numbers])
        else:
            numbers = rnd.sample(POCKETS, size)
        text = "-".join(str(n) for n in sorted(numbers))
        if text not in legal:
            return text, f"not a {code.lower().replace('_', ' ')} on the layout"


def _foreign_bet(rnd: random.Random) -> tuple[str, str | None]:
    code = rnd.choice(FOREIGN)
    return code, rnd.choice(SIC_BO_SELECTIONS[code])


def _trap(rules: RouletteRules, code: str, pocket: int) -> str | None:
    return "zero loses every even chance" if pocket == 0 and code in EVEN_CHANCES else None


GAME = OutcomeGame(
    name="roulette", ruleset=RULESET, suffix="RL", title="Roulette", operator="Live Dealer F", equipment="WHEEL",
    outcome_column="pocket", outcome_type=pa.int8(), table_max=TABLE_MAX, limits=LIMITS, weights=WEIGHTS,
    load_rules=load_roulette_rules, selections=_selections, draw=lambda rnd: rnd.randrange(len(POCKETS)),
    judge=judge_spin_bet, describe=lambda pocket: f"pocket {pocket}", invalid_outcome=_invalid_outcome,
    missing_outcome=lambda rnd: None, invalid_selection=_invalid_selection, foreign_bet=_foreign_bet, trap=_trap,
    even_money=EVEN_CHANCES,
)
RECORDER = GAME.recorder(field="roulette_tables",
                         help="Roulette tables (roulette_single_zero_live), after the blackjack ones.")
