"""The sic bo tables of the recorder (document 004, ruleset sic_bo_live): what the shared outcome recorder
(pitboss/recorder/outcomes.py) needs of the game. Selections come from the engine's table
(engine.games.sic_bo.layout), every credit from its settlement (engine.games.sic_bo.settlement).
"""

from __future__ import annotations

import random

import pyarrow as pa

from engine.games.roulette.layout import BET_CODES as ROULETTE_CODES
from engine.games.roulette.layout import layout
from engine.games.roulette.rules import load_roulette_rules
from engine.games.sic_bo.layout import BIG_TOTALS, DICE, FACES, SELECTIONS, SMALL_TOTALS
from engine.games.sic_bo.rules import EVEN_MONEY, SicBoRules, load_sic_bo_rules
from engine.games.sic_bo.settlement import judge_roll_bet
from pitboss.recorder.outcomes import OutcomeGame

RULESET = "sic_bo_live"
TABLE_MAX = 500_000  # 5,000.00 EUR: an account's total on a roll
LIMITS: dict[str, tuple[int, int]] = {
    **{code: (100, 200_000) for code in EVEN_MONEY},
    "TOTAL": (100, 20_000),
    "DOUBLE": (100, 20_000),
    "TRIPLE": (100, 5_000),
    "ANY_TRIPLE": (100, 20_000),
    "COMBO": (100, 30_000),
    "SINGLE": (100, 100_000),
}
WEIGHTS: dict[str, float] = {"SMALL": 15, "BIG": 15, "ODD": 5, "EVEN": 5, "TOTAL": 15, "DOUBLE": 6, "TRIPLE": 4,
                             "ANY_TRIPLE": 6, "COMBO": 10, "SINGLE": 15}
# roulette codes sic bo does not have (ODD and EVEN are both games'), for BET_TYPE_NOT_OFFERED
FOREIGN = tuple(code for code in ROULETTE_CODES if code not in LIMITS)


def _draw(rnd: random.Random) -> list[int]:
    return [rnd.randint(min(FACES), max(FACES)) for _ in range(DICE)]


def _judge(rules: SicBoRules, bet, dice: list[int]):
    return judge_roll_bet(rules, bet, tuple(dice))


def _describe(dice: list[int]) -> str:
    return "dice " + "-".join(str(d) for d in dice)


def _invalid_outcome(rnd: random.Random) -> tuple[list[int], str]:
    dice = _draw(rnd)
    what = rnd.choice(("seven", "zero", "two", "four"))
    if what in ("seven", "zero"):
        dice[rnd.randrange(DICE)] = 7 if what == "seven" else 0
        return dice, f"{dice} (a die shows {7 if what == 'seven' else 0})"
    dice = dice[:2] if what == "two" else [*dice, rnd.randint(1, 6)]
    return dice, f"{dice} ({len(dice)} dice)"


def _invalid_selection(rnd: random.Random, code: str) -> tuple[str, str] | None:
    if code == "COMBO":
        face = rnd.choice(FACES)
        return f"{face}-{face}", "a combination of two equal dice"
    if code == "TOTAL":
        total = rnd.choice((3, 18))
        return str(total), f"total {total} is a triple, not a total bet (4-17)"
    return None


def _foreign_bet(rnd: random.Random) -> tuple[str, str | None]:
    code = rnd.choice(FOREIGN)
    return code, rnd.choice(layout(load_roulette_rules().red).selections(code))


def _trap(rules: SicBoRules, code: str, dice: list[int]) -> str | None:
    """An even-money bet the total wins were it not a triple."""
    if len(set(dice)) != 1 or code not in rules.triple_loses:
        return None
    total = sum(dice)
    wins = {"SMALL": total in SMALL_TOTALS, "BIG": total in BIG_TOTALS, "ODD": total % 2 == 1, "EVEN": total % 2 == 0}
    return "any triple loses it" if wins[code] else None


GAME = OutcomeGame(
    name="sic_bo", ruleset=RULESET, suffix="SB", title="Sic Bo", operator="Live Dealer G", equipment="SHAKER",
    outcome_column="dice", outcome_type=pa.list_(pa.int8()), table_max=TABLE_MAX, limits=LIMITS, weights=WEIGHTS,
    load_rules=load_sic_bo_rules, selections=lambda rules, code: SELECTIONS[code], draw=_draw, judge=_judge,
    describe=_describe, invalid_outcome=_invalid_outcome, missing_outcome=lambda rnd: rnd.choice((None, [])),
    invalid_selection=_invalid_selection, foreign_bet=_foreign_bet, trap=_trap, even_money=EVEN_MONEY,
)
RECORDER = GAME.recorder(field="sic_bo_tables", help="Sic bo tables (sic_bo_live), after the roulette ones.")
