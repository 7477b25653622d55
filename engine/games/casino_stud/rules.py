"""The casino stud ruleset file (casino_stud_live.toml) parsed into frozen dataclasses.

Every choice document 004 does not make is a named setting (docs/casino-stud.md § Rules); the file
says, setting by setting, the document line it comes from or "silent".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.ruleset_file import FieldReader, load_bundled, read_notes, read_rounding, read_toml

from .hands import FLUSH, QUALIFIERS, RANK_NAMES, category_at_least

DEAL_ORDERS = ("box_by_box", "round_robin")
POOL_SCOPES = ("table",)
POOLS = ("jackpot", "next_pool", "house")  # where a share of a losing jackpot bet goes
REMAINDER_TO = POOLS
PERCENTAGE_PRIZES_FROM = ("jackpot",)
FIXED_PRIZES_FROM = ("house", "jackpot")
RESETS = ("next_pool",)
PRIZE_ORDERS = ("box",)

_PRIZE = re.compile(r"\s*([0-9]+)\s*(%|units?)\s*")


@dataclass(frozen=True)
class JackpotRules:
    # rank name -> ("percent", p): p% of the balance of `percentage_prizes_from` (floored), or
    # ("units", n): n x the jackpot bet's stake, paid from `fixed_prizes_from`
    prizes: dict[str, tuple[str, int]]
    shares: dict[str, int]  # per cent of a losing jackpot stake: {"jackpot": 60, "next_pool": 30, "house": 10}
    remainder_to: str  # where the minor units the floored shares leave go: jackpot | next_pool | house
    percentage_prizes_from: str  # "jackpot"
    fixed_prizes_from: str  # "house" (the pools untouched) | "jackpot" (at most its balance)
    reset: str  # a prize of 100% empties the jackpot: "next_pool" becomes the jackpot, the next pool 0
    prize_order: str  # "box": a round's prizes taken one after another in box order
    contributions_before_prizes: bool  # this round's losing bets feed the pools before its prizes are taken
    requires_ante: bool  # a jackpot bet needs an ANTE on its box (JACKPOT_WITHOUT_ANTE)

    def prize_of(self, category: str) -> tuple[str, int] | None:
        return self.prizes.get(category)


@dataclass(frozen=True)
class CasinoStudRules:
    id: str
    title: str
    document: str
    notes: tuple[str, ...]
    game: str
    rounding: str  # how a fraction of a minor unit (a percentage prize) is rounded
    deal_order: str  # "box_by_box": each box's five in box order, the dealer's open card, its four
    burn_cards: int  # cards burned from the top of each round's deck before the deal
    max_boxes: int  # boxes are numbered 1..max_boxes
    call_multiple: int  # the call is call_multiple x the ante
    qualifier: str  # "AK": the dealer plays with ace-king or better
    call_payouts: dict[str, int]  # rank name -> the call's net odds x:1 when the box beats a qualified dealer
    max_call_payout: int | None  # the most a call wins, in minor units (None: no cap)
    jackpot: JackpotRules
    pool_scope: str  # "table": each table keeps its own pools
    decks: int = 1  # one fresh deck a round (`pitboss rtp` prints every ruleset's decks)

    def call_of(self, ante: int) -> int:
        return self.call_multiple * ante


_TOP_KEYS = ("id", "document", "title", "game", "rounding", "pool_scope", "notes", "dealing", "play",
             "call_payouts", "jackpot")
_DEALING = ("deal_order", "burn_cards", "max_boxes")
_PLAY = ("call_multiple", "qualifier", "max_call_payout")
_JACKPOT = ("requires_ante", "percentage_prizes_from", "fixed_prizes_from", "remainder_to", "reset", "prize_order",
            "contributions_before_prizes", "shares", "prizes")


def _choice(r: FieldReader, table: dict, key: str, field: str, allowed: tuple[str, ...]) -> str:
    value = r.get(table, key, field, str)
    if value not in allowed:
        raise r.fail(field, f"{value!r} is not one of {', '.join(allowed)}")
    return value


def _prize(r: FieldReader, field: str, text: str) -> tuple[str, int]:
    match = _PRIZE.fullmatch(text)
    if match is None:
        raise r.fail(field, f"{text!r} is not a prize like '10%' or '500 units'")
    amount = int(match[1])
    if match[2] == "%":
        if not 0 < amount <= 100:
            raise r.fail(field, f"{text!r}: a percentage prize is between 1% and 100%")
        return ("percent", amount)
    if amount <= 0:
        raise r.fail(field, f"{text!r}: a fixed prize is at least one unit")
    return ("units", amount)


def _jackpot(r: FieldReader, data: dict) -> JackpotRules:
    jp = r.get(data, "jackpot", "jackpot", dict)
    r.known_keys(jp, "jackpot", _JACKPOT)
    shares_t = r.get(jp, "shares", "jackpot.shares", dict)
    r.known_keys(shares_t, "jackpot.shares", POOLS)
    shares = {pool: r.get(shares_t, pool, f"jackpot.shares.{pool}", int) for pool in POOLS}
    if any(v < 0 for v in shares.values()) or sum(shares.values()) != 100:
        raise r.fail("jackpot.shares", f"{shares} are not per cents (0-100) adding up to 100")
    prizes_t = r.get(jp, "prizes", "jackpot.prizes", dict)
    r.known_keys(prizes_t, "jackpot.prizes", RANK_NAMES)
    prizes = {name: _prize(r, f"jackpot.prizes.{name}", r.get(prizes_t, name, f"jackpot.prizes.{name}", str))
              for name in RANK_NAMES if name in prizes_t}
    if not prizes:
        raise r.fail("jackpot.prizes", "names no prize")
    for name in prizes:
        if not category_at_least(name, FLUSH):
            raise r.fail(f"jackpot.prizes.{name}", "the document pays flush or better only (line 27)")
    return JackpotRules(
        prizes=prizes,
        shares=shares,
        remainder_to=_choice(r, jp, "remainder_to", "jackpot.remainder_to", REMAINDER_TO),
        percentage_prizes_from=_choice(r, jp, "percentage_prizes_from", "jackpot.percentage_prizes_from",
                                       PERCENTAGE_PRIZES_FROM),
        fixed_prizes_from=_choice(r, jp, "fixed_prizes_from", "jackpot.fixed_prizes_from", FIXED_PRIZES_FROM),
        reset=_choice(r, jp, "reset", "jackpot.reset", RESETS),
        prize_order=_choice(r, jp, "prize_order", "jackpot.prize_order", PRIZE_ORDERS),
        contributions_before_prizes=r.get(jp, "contributions_before_prizes", "jackpot.contributions_before_prizes",
                                          bool),
        requires_ante=r.get(jp, "requires_ante", "jackpot.requires_ante", bool),
    )


def parse_casino_stud_rules(text: str, source: str = "<ruleset>") -> CasinoStudRules:
    r, data = read_toml(text, source, _TOP_KEYS)
    if r.get(data, "game", "game", str) != "casino_stud":
        raise r.fail("game", 'a casino stud ruleset must say game = "casino_stud"')
    dealing = r.get(data, "dealing", "dealing", dict)
    r.known_keys(dealing, "dealing", _DEALING)
    play = r.get(data, "play", "play", dict)
    r.known_keys(play, "play", _PLAY)
    payouts = r.get(data, "call_payouts", "call_payouts", dict)
    r.known_keys(payouts, "call_payouts", RANK_NAMES)
    call_payouts = {name: r.get(payouts, name, f"call_payouts.{name}", int) for name in RANK_NAMES}
    if any(v <= 0 for v in call_payouts.values()):
        raise r.fail("call_payouts", "every net odds must be a positive whole number (x:1)")
    burn = r.get(dealing, "burn_cards", "dealing.burn_cards", int)
    max_boxes = r.get(dealing, "max_boxes", "dealing.max_boxes", int)
    if burn < 0 or not 1 <= max_boxes or burn + 5 * max_boxes + 5 > 52:
        raise r.fail("dealing", f"burn_cards {burn} and max_boxes {max_boxes} do not fit one 52-card deck")
    multiple = r.get(play, "call_multiple", "play.call_multiple", int)
    if multiple <= 0:
        raise r.fail("play.call_multiple", f"{multiple} is not a positive multiple of the ante")
    cap = r.get(play, "max_call_payout", "play.max_call_payout", (int, str))
    if isinstance(cap, str) and cap != "none":
        raise r.fail("play.max_call_payout", f'{cap!r}: "none" or a positive number of minor units')
    if isinstance(cap, int) and (isinstance(cap, bool) or cap <= 0):
        raise r.fail("play.max_call_payout", f'{cap!r}: "none" or a positive number of minor units')
    return CasinoStudRules(
        id=r.get(data, "id", "id", str),
        title=r.get(data, "title", "title", str),
        document=r.get(data, "document", "document", str),
        notes=tuple(read_notes(r, data)),
        game="casino_stud",
        rounding=read_rounding(r, data),
        deal_order=_choice(r, dealing, "deal_order", "dealing.deal_order", DEAL_ORDERS),
        burn_cards=burn,
        max_boxes=max_boxes,
        call_multiple=multiple,
        qualifier=_choice(r, play, "qualifier", "play.qualifier", QUALIFIERS),
        call_payouts=call_payouts,
        max_call_payout=None if cap == "none" else cap,
        jackpot=_jackpot(r, data),
        pool_scope=_choice(r, data, "pool_scope", "pool_scope", POOL_SCOPES),
    )


RULESETS_PACKAGE = "engine.games.casino_stud.rulesets"


def load_casino_stud_rules(ruleset_id: str = "casino_stud_live") -> CasinoStudRules:
    return load_bundled(RULESETS_PACKAGE, ruleset_id, parse_casino_stud_rules)
