"""The roulette ruleset file (roulette_single_zero_live.toml) parsed into a frozen dataclass."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from engine.betting import read_invalid_selection
from engine.ruleset_file import FieldReader, load_bundled, parse_odds, read_notes, read_rounding, read_toml

from .layout import BET_CODES, NUMBERS


@dataclass(frozen=True)
class RouletteRules:
    id: str
    title: str
    document: str
    rounding: str  # how a credit that is not a whole minor unit (La Partage on an odd stake) is rounded
    la_partage: bool  # half the stake of an even-chance bet back on zero
    invalid_selection: str  # "void" (refunded) | "lose"
    red: frozenset[int]
    odds: dict[str, Fraction]  # every bet code the table offers -> net win per unit staked
    notes: tuple[str, ...] = ()
    decks: int = 0  # no cards: kept because `pitboss rtp` prints every ruleset's decks

    def offers(self, bet_type: str) -> bool:
        return bet_type in self.odds


_TOP_KEYS = ("id", "document", "title", "game", "rounding", "la_partage", "invalid_selection", "notes", "wheel",
             "payouts")


def _red_numbers(r: FieldReader, wheel: dict) -> frozenset[int]:
    red = r.get(wheel, "red", "wheel.red", list)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n in NUMBERS for n in red):
        raise r.fail("wheel.red", "must list numbers 1-36")
    if len(set(red)) != len(red):
        raise r.fail("wheel.red", "lists a number twice")
    if len(red) != 18:
        raise r.fail("wheel.red", f"must list the 18 red numbers, got {len(red)}")
    return frozenset(red)


def parse_roulette_rules(text: str, source: str = "<ruleset>") -> RouletteRules:
    r, data = read_toml(text, source, _TOP_KEYS)
    if r.get(data, "game", "game", str) != "roulette":
        raise r.fail("game", 'a roulette ruleset must say game = "roulette"')
    wheel = r.get(data, "wheel", "wheel", dict)
    r.known_keys(wheel, "wheel", ("red",))
    payouts = r.get(data, "payouts", "payouts", dict)
    r.known_keys(payouts, "payouts", BET_CODES)
    if not payouts:
        raise r.fail("payouts", "offers no bet")
    return RouletteRules(
        id=r.get(data, "id", "id", str),
        title=r.get(data, "title", "title", str),
        document=r.get(data, "document", "document", str),
        rounding=read_rounding(r, data),
        la_partage=r.get(data, "la_partage", "la_partage", bool),
        invalid_selection=read_invalid_selection(r, data),
        red=_red_numbers(r, wheel),
        odds={code: parse_odds(r.get(payouts, code, f"payouts.{code}", str), f"{source}: field 'payouts.{code}'")
              for code in payouts},
        notes=tuple(read_notes(r, data)),
    )


RULESETS_PACKAGE = "engine.games.roulette.rulesets"


def load_roulette_rules(ruleset_id: str = "roulette_single_zero_live") -> RouletteRules:
    return load_bundled(RULESETS_PACKAGE, ruleset_id, parse_roulette_rules)
