"""Rulesets as data: one TOML file per operator document, parsed into frozen dataclasses.

A malformed file fails loudly with the file and the field named (RulesetError). The paytable of
each bet is a list of rules, first match wins, no match loses:
    [[bets.BANKER.pays]]
    mode = "commission"              # optional: the rule applies in this betting mode only
    when = { outcome = "BANKER" }    # every named fact of the round must match (see features.py)
    odds = "0.95:1"                  # net win per unit staked; `push = true` returns the stake
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from engine.games.baccarat.features import FEATURE_VALUES, FEATURES, valid_feature_value
from engine.ruleset_file import (
    bundled_ids,
    load_bundled,
    parse_odds,
    read_notes,
    read_rounding,
    read_toml,
)

# Every bet code of RULES.md; a ruleset may offer any subset.
BET_CODES: tuple[str, ...] = (
    "PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "BANKER_PAIR", "ANY_PAIR", "PERFECT_PAIR",
    "PLAYER_NATURAL", "BANKER_NATURAL", "PLAYER_BONUS", "BANKER_BONUS", "LUCKY_SIX",
    "LUCKY_SIX_2CARD", "LUCKY_SIX_3CARD", "LUCKY_SEVEN", "LUCKY_SEVEN_2CARD", "LUCKY_SEVEN_3CARD",
    "SUPER_LUCKY_SEVEN",
)  # fmt: skip
MAIN_BETS = frozenset({"PLAYER", "BANKER", "TIE"})
MODES = ("commission", "no_commission")


@dataclass(frozen=True)
class PayRule:
    when: tuple[tuple[str, tuple[Any, ...]], ...]  # (feature, allowed values), all must hold
    odds: Fraction | None  # net win per unit; None = push (stake returned)
    mode: str | None = None  # None = every mode

    def matches(self, features: dict[str, object]) -> bool:
        return all(features[name] in allowed for name, allowed in self.when)


@dataclass(frozen=True)
class BetType:
    code: str
    kind: str  # "main" | "side"
    cutoff: int | None  # not offered once this many rounds of the shoe have been dealt
    pays: tuple[PayRule, ...]

    def paytable(self, mode: str) -> tuple[PayRule, ...]:
        return tuple(r for r in self.pays if r.mode in (None, mode))


@dataclass(frozen=True)
class ShoeProcedure:
    burn: bool  # turn the first card and burn by its value
    turned_card_counts_as_burned: bool  # RULES.md: not stated; default: turned card is extra
    face_card_burns: int  # T/J/Q/K (value 0) burn this many
    cut_card: bool  # the round in which the cut card comes out is the last of the shoe
    reshuffle_every_hand: bool  # mini-baccarat: a fresh shuffle per round


@dataclass(frozen=True)
class LimitRules:
    player_banker_difference: bool  # PLAYER/BANKER max applies to |P - B| of an account in a round
    side_bets_require_main_bet: bool  # 004: pair bet only with a main bet of the same account
    side_bet_max_share_of_table_max: Fraction | None  # 004: at most 10% of the table maximum
    one_position_per_round: bool  # 002: one of PLAYER/BANKER/TIE per account per round


@dataclass(frozen=True)
class Ruleset:
    id: str
    document: str
    title: str
    game: str
    decks: int
    rounding: str
    max_rtp_stated: Fraction | None
    shoe: ShoeProcedure
    limits: LimitRules
    modes: dict[str, tuple[str, ...]]  # mode -> bet codes offered in it
    bets: dict[str, BetType]
    notes: tuple[str, ...] = ()

    def offered(self, code: str, mode: str) -> bool:
        return code in self.modes.get(mode, ())

    def paytable(self, code: str, mode: str) -> tuple[PayRule, ...]:
        return self.bets[code].paytable(mode)


_TOP_KEYS = ("id", "document", "title", "game", "decks", "rounding", "max_rtp_stated", "notes", "shoe", "limits",
             "modes", "bets")  # fmt: skip
_SHOE_KEYS = ("burn", "turned_card_counts_as_burned", "face_card_burns", "cut_card", "reshuffle_every_hand")
_LIMIT_KEYS = ("player_banker_difference", "side_bets_require_main_bet", "side_bet_max_share_of_table_max",
               "one_position_per_round")  # fmt: skip
_BET_KEYS = ("cutoff", "pays")
_RULE_KEYS = ("mode", "when", "odds", "push")


def parse_ruleset(text: str, source: str = "<ruleset>") -> Ruleset:
    r, data = read_toml(text, source, _TOP_KEYS)
    rounding = read_rounding(r, data)
    decks = r.get(data, "decks", "decks", int)
    if not 1 <= decks <= 16:
        raise r.fail("decks", f"{decks} is not a number of decks between 1 and 16")
    stated = r.get(data, "max_rtp_stated", "max_rtp_stated", str, None)

    shoe_t = r.get(data, "shoe", "shoe", dict)
    r.known_keys(shoe_t, "shoe", _SHOE_KEYS)
    shoe = ShoeProcedure(
        burn=r.get(shoe_t, "burn", "shoe.burn", bool),
        turned_card_counts_as_burned=r.get(
            shoe_t, "turned_card_counts_as_burned", "shoe.turned_card_counts_as_burned", bool
        ),
        face_card_burns=r.get(shoe_t, "face_card_burns", "shoe.face_card_burns", int),
        cut_card=r.get(shoe_t, "cut_card", "shoe.cut_card", bool),
        reshuffle_every_hand=r.get(shoe_t, "reshuffle_every_hand", "shoe.reshuffle_every_hand", bool),
    )
    if not 1 <= shoe.face_card_burns <= 52:
        raise r.fail("shoe.face_card_burns", f"{shoe.face_card_burns} is not a number of cards between 1 and 52")
    lim_t = r.get(data, "limits", "limits", dict)
    r.known_keys(lim_t, "limits", _LIMIT_KEYS)
    share = r.get(lim_t, "side_bet_max_share_of_table_max", "limits.side_bet_max_share_of_table_max", str, None)
    try:
        share_f = Fraction(share) if share is not None else None
    except (ValueError, ZeroDivisionError):
        raise r.fail("limits.side_bet_max_share_of_table_max", f"{share!r} is not a fraction like '1/10'") from None
    if share_f is not None and not 0 < share_f <= 1:
        raise r.fail("limits.side_bet_max_share_of_table_max", f"{share!r} is not a share between 0 and 1")
    limits = LimitRules(
        player_banker_difference=r.get(lim_t, "player_banker_difference", "limits.player_banker_difference", bool),
        side_bets_require_main_bet=r.get(
            lim_t, "side_bets_require_main_bet", "limits.side_bets_require_main_bet", bool
        ),
        side_bet_max_share_of_table_max=share_f,
        one_position_per_round=r.get(lim_t, "one_position_per_round", "limits.one_position_per_round", bool),
    )

    bets_t = r.get(data, "bets", "bets", dict)
    bets: dict[str, BetType] = {}
    for code, bet_t in bets_t.items():
        field = f"bets.{code}"
        if code not in BET_CODES:
            raise r.fail(field, f"unknown bet code {code!r}; known codes: {', '.join(BET_CODES)}")
        if not isinstance(bet_t, dict):
            raise r.fail(field, f"must be a table with 'pays' (and optionally 'cutoff'), got {bet_t!r}")
        r.known_keys(bet_t, field, _BET_KEYS)
        cutoff = r.get(bet_t, "cutoff", f"{field}.cutoff", int, None)
        if cutoff is not None and cutoff < 1:
            raise r.fail(f"{field}.cutoff", f"{cutoff} is not a number of rounds (1 or more)")
        pays = []
        for i, rule_t in enumerate(r.get(bet_t, "pays", f"{field}.pays", list)):
            rf = f"{field}.pays[{i}]"
            if not isinstance(rule_t, dict):
                raise r.fail(rf, "must be a table")
            r.known_keys(rule_t, rf, _RULE_KEYS)
            when_t = r.get(rule_t, "when", f"{rf}.when", dict)
            when = []
            for name, allowed in when_t.items():
                if name not in FEATURES:
                    raise r.fail(f"{rf}.when.{name}", f"unknown round fact; known: {', '.join(FEATURES)}")
                values = tuple(allowed) if isinstance(allowed, list) else (allowed,)
                if not values:
                    raise r.fail(f"{rf}.when.{name}", "is an empty list: the rule could never match")
                for value in values:
                    if not valid_feature_value(name, value):
                        raise r.fail(
                            f"{rf}.when.{name}",
                            f"{value!r} is not a value of this round fact; it takes "
                            + ", ".join(repr(v) for v in FEATURE_VALUES[name]),
                        )
                when.append((name, values))
            mode = r.get(rule_t, "mode", f"{rf}.mode", str, None)
            if mode is not None and mode not in MODES:
                raise r.fail(f"{rf}.mode", f"{mode!r} is not one of {', '.join(MODES)}")
            push = r.get(rule_t, "push", f"{rf}.push", bool, False)
            odds_text = r.get(rule_t, "odds", f"{rf}.odds", str, None)
            if push == (odds_text is not None):
                raise r.fail(rf, "needs exactly one of 'odds' or 'push = true'")
            odds = None if push else parse_odds(odds_text, f"{source}: field '{rf}.odds'")
            pays.append(PayRule(tuple(when), odds, mode))
        if not pays:
            raise r.fail(f"{field}.pays", "is empty: a bet must say when it pays")
        kind = "main" if code in MAIN_BETS else "side"
        bets[code] = BetType(code, kind, cutoff, tuple(pays))

    modes_t = r.get(data, "modes", "modes", dict)
    modes: dict[str, tuple[str, ...]] = {}
    for mode, codes in modes_t.items():
        if mode not in MODES:
            raise r.fail(f"modes.{mode}", f"unknown betting mode; known: {', '.join(MODES)}")
        if not isinstance(codes, list):
            raise r.fail(f"modes.{mode}", "must be a list of bet codes")
        for code in codes:
            if code not in bets:
                raise r.fail(f"modes.{mode}", f"offers {code!r}, which has no [bets.{code}] paytable")
            if not bets[code].paytable(mode):
                raise r.fail(
                    f"modes.{mode}", f"offers {code!r}, but every rule of [bets.{code}] is for another mode"
                )
        if len(set(codes)) != len(codes):
            raise r.fail(f"modes.{mode}", "names a bet code twice")
        modes[mode] = tuple(codes)
    if not modes:
        raise r.fail("modes", "offers no betting mode")

    try:
        stated_f = Fraction(stated) if stated is not None else None
    except (ValueError, ZeroDivisionError):
        raise r.fail("max_rtp_stated", f"{stated!r} is not a number") from None
    return Ruleset(
        id=r.get(data, "id", "id", str),
        document=r.get(data, "document", "document", str),
        title=r.get(data, "title", "title", str),
        game=r.get(data, "game", "game", str),
        decks=decks,
        rounding=rounding,
        max_rtp_stated=stated_f,
        shoe=shoe,
        limits=limits,
        modes=modes,
        bets=bets,
        notes=tuple(read_notes(r, data)),
    )


RULESETS_PACKAGE = "engine.games.baccarat.rulesets"


def ruleset_ids() -> list[str]:
    return bundled_ids(RULESETS_PACKAGE)


def load_ruleset(ruleset_id: str) -> Ruleset:
    """A ruleset by its RULES.md id (package data or a text given to the run, parsed once per process)."""
    return load_bundled(RULESETS_PACKAGE, ruleset_id, parse_ruleset)
