"""The sic bo ruleset file (sic_bo_live.toml) parsed into a frozen dataclass.

A paytable maps each offered bet code to its odds by pay key: "" for a code with one price, the total
('4'..'17') for TOTAL, how many dice show the number ('1'..'3') for SINGLE. The file carries every
paytable it knows; the setting `paytable` says which one the table pays.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from engine.betting import read_invalid_selection
from engine.ruleset_file import FieldReader, load_bundled, parse_odds, read_notes, read_rounding, read_toml

from .layout import BET_CODES, DICE, TOTALS

EVEN_MONEY = ("SMALL", "BIG", "ODD", "EVEN")  # the bets a triple can be made to lose
# codes priced by a key rather than once: the keys every paytable must price
KEYED: dict[str, tuple[str, ...]] = {
    "TOTAL": tuple(str(t) for t in TOTALS),
    "SINGLE": tuple(str(n) for n in range(1, DICE + 1)),
}

Paytable = dict[str, dict[str, Fraction]]  # bet code -> pay key -> net win per unit staked


@dataclass(frozen=True)
class SicBoRules:
    id: str
    title: str
    document: str
    rounding: str
    paytable: str  # the name of the paytable the table pays
    paytables: dict[str, Paytable]
    triple_loses: frozenset[str]  # even-money bets that lose on any triple
    invalid_selection: str  # "void" (refunded) | "lose"
    notes: tuple[str, ...] = ()
    decks: int = 0  # no cards: kept because `pitboss rtp` prints every ruleset's decks

    @property
    def pays(self) -> Paytable:
        return self.paytables[self.paytable]

    def offers(self, bet_type: str) -> bool:
        return bet_type in self.pays


_TOP_KEYS = ("id", "document", "title", "game", "rounding", "paytable", "triple_loses", "invalid_selection",
             "notes", "paytables")


def _paytable(r: FieldReader, table: dict, name: str) -> Paytable:
    field = f"paytables.{name}"
    r.known_keys(table, field, BET_CODES)
    if not table:
        raise r.fail(field, "offers no bet")
    parsed: Paytable = {}
    for code in table:
        where = f"{field}.{code}"
        if code not in KEYED:
            parsed[code] = {"": parse_odds(r.get(table, code, where, str), f"{r.source}: field '{where}'")}
            continue
        prices = r.get(table, code, where, dict)
        r.known_keys(prices, where, KEYED[code])
        missing = [k for k in KEYED[code] if k not in prices]
        if missing:
            raise r.fail(where, f"no price for {', '.join(missing)}")
        parsed[code] = {k: parse_odds(r.get(prices, k, f"{where}.{k}", str), f"{r.source}: field '{where}.{k}'")
                        for k in KEYED[code]}
    return parsed


def parse_sic_bo_rules(text: str, source: str = "<ruleset>") -> SicBoRules:
    r, data = read_toml(text, source, _TOP_KEYS)
    if r.get(data, "game", "game", str) != "sic_bo":
        raise r.fail("game", 'a sic bo ruleset must say game = "sic_bo"')
    tables = r.get(data, "paytables", "paytables", dict)
    paytables = {name: _paytable(r, r.get(tables, name, f"paytables.{name}", dict), name) for name in tables}
    chosen = r.get(data, "paytable", "paytable", str)
    if chosen not in paytables:
        raise r.fail("paytable", f"{chosen!r} is not one of the file's paytables ({', '.join(paytables)})")
    triple_loses = r.get(data, "triple_loses", "triple_loses", list)
    if not all(code in EVEN_MONEY for code in triple_loses):
        raise r.fail("triple_loses", f"{triple_loses!r}: may list only {', '.join(EVEN_MONEY)}")
    return SicBoRules(
        id=r.get(data, "id", "id", str),
        title=r.get(data, "title", "title", str),
        document=r.get(data, "document", "document", str),
        rounding=read_rounding(r, data),
        paytable=chosen,
        paytables=paytables,
        triple_loses=frozenset(triple_loses),
        invalid_selection=read_invalid_selection(r, data),
        notes=tuple(read_notes(r, data)),
    )


RULESETS_PACKAGE = "engine.games.sic_bo.rulesets"


def load_sic_bo_rules(ruleset_id: str = "sic_bo_live") -> SicBoRules:
    return load_bundled(RULESETS_PACKAGE, ruleset_id, parse_sic_bo_rules)
