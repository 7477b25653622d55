"""Rulesets as data: the four bundled rulesets say what their documents say, and a malformed ruleset
fails with one clear error naming the file and the field."""

from __future__ import annotations

from fractions import Fraction
from importlib import resources

import pytest

from engine.games.baccarat.ruleset import (
    BET_CODES,
    PayRule,
    load_ruleset,
    parse_ruleset,
    ruleset_ids,
)
from engine.games.baccarat.settlement import settle
from engine.ruleset_file import RulesetError, parse_odds

BUNDLED = ("baccarat_8d_extended", "baccarat_8d_standard", "baccarat_live_pairs", "mini_baccarat_6d")


# ---------------------------------------------------------------------------------------------
# The bundled rulesets


def test_all_four_load():
    assert set(BUNDLED) <= set(ruleset_ids())
    for rid in BUNDLED:
        rs = load_ruleset(rid)
        assert rs.id == rid
        assert rs.game == "baccarat"
        assert load_ruleset(rid) is rs  # cached


def test_bundled_files_parse_from_text():
    for rid in BUNDLED:
        text = (resources.files("engine.games.baccarat.rulesets") / f"{rid}.toml").read_text(encoding="utf-8")
        assert parse_ruleset(text, f"{rid}.toml") == load_ruleset(rid)


def test_unknown_ruleset_names_the_known_ids():
    with pytest.raises(RulesetError) as e:
        load_ruleset("nope")
    assert "'nope'" in str(e.value)
    for rid in BUNDLED:
        assert rid in str(e.value)


@pytest.mark.parametrize(
    ("rid", "document", "decks"),
    [
        ("baccarat_8d_extended", "000_f2ea7e6c8a99f16d.txt", 8),
        ("baccarat_8d_standard", "001_6c1c75bd6ff30181.txt", 8),
        ("mini_baccarat_6d", "002_1316e93076f509fb.txt", 6),
        ("baccarat_live_pairs", "004_c40afb2d872578d0.txt", 8),
    ],
)
def test_documents_and_decks(rid, document, decks):
    rs = load_ruleset(rid)
    assert rs.document == document
    assert rs.decks == decks
    assert all(isinstance(n, str) and n for n in rs.notes)


def test_modes_and_offered_codes():
    ext = load_ruleset("baccarat_8d_extended")
    assert set(ext.modes) == {"commission", "no_commission"}
    assert len(BET_CODES) == 18
    for mode in ext.modes:
        assert set(ext.modes[mode]) == set(BET_CODES)
    std = load_ruleset("baccarat_8d_standard")
    eight = {"PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "BANKER_PAIR", "LUCKY_SIX", "PLAYER_NATURAL", "BANKER_NATURAL"}
    assert {m: set(c) for m, c in std.modes.items()} == {"commission": eight, "no_commission": eight}
    mini = load_ruleset("mini_baccarat_6d")
    assert {m: set(c) for m, c in mini.modes.items()} == {"commission": {"PLAYER", "BANKER", "TIE"}}
    pairs = load_ruleset("baccarat_live_pairs")
    assert {m: set(c) for m, c in pairs.modes.items()} == {
        "commission": {"PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "BANKER_PAIR"}
    }
    assert std.offered("PLAYER", "no_commission") and not std.offered("ANY_PAIR", "commission")
    assert not mini.offered("PLAYER", "no_commission")


def test_cutoffs_from_the_documents():
    ext = load_ruleset("baccarat_8d_extended")
    want_ext = {
        "PLAYER": None, "BANKER": None, "TIE": None,
        "PLAYER_PAIR": 60, "BANKER_PAIR": 60, "ANY_PAIR": 50, "PERFECT_PAIR": 50,
        "PLAYER_NATURAL": 50, "BANKER_NATURAL": 50, "PLAYER_BONUS": 40, "BANKER_BONUS": 40,
        "LUCKY_SIX": 50, "LUCKY_SIX_2CARD": 50, "LUCKY_SIX_3CARD": 50,
        "LUCKY_SEVEN": 50, "LUCKY_SEVEN_2CARD": 50, "LUCKY_SEVEN_3CARD": 50, "SUPER_LUCKY_SEVEN": 50,
    }  # fmt: skip
    assert {c: b.cutoff for c, b in ext.bets.items()} == want_ext
    std = load_ruleset("baccarat_8d_standard")
    want_std = {"PLAYER": None, "BANKER": None, "TIE": None, "PLAYER_PAIR": 60, "BANKER_PAIR": 60, "LUCKY_SIX": 50,
                "PLAYER_NATURAL": 50, "BANKER_NATURAL": 50}  # fmt: skip
    assert {c: b.cutoff for c, b in std.bets.items()} == want_std
    for rid in ("baccarat_live_pairs", "mini_baccarat_6d"):
        assert all(b.cutoff is None for b in load_ruleset(rid).bets.values())


def test_kinds_rtp_and_limits():
    for rid in BUNDLED:
        for code, bet in load_ruleset(rid).bets.items():
            assert bet.kind == ("main" if code in ("PLAYER", "BANKER", "TIE") else "side")
    assert load_ruleset("baccarat_8d_extended").max_rtp_stated == Fraction("0.9894")
    assert load_ruleset("baccarat_8d_standard").max_rtp_stated == Fraction("0.9894")
    assert load_ruleset("mini_baccarat_6d").max_rtp_stated is None
    for rid in ("baccarat_8d_extended", "baccarat_8d_standard"):
        lim = load_ruleset(rid).limits
        assert lim.player_banker_difference and not lim.side_bets_require_main_bet
        assert not lim.one_position_per_round and lim.side_bet_max_share_of_table_max is None
    lim = load_ruleset("baccarat_live_pairs").limits
    assert lim.side_bets_require_main_bet and lim.side_bet_max_share_of_table_max == Fraction(1, 10)
    assert load_ruleset("mini_baccarat_6d").limits.one_position_per_round


def test_paytables_filter_by_mode():
    ext = load_ruleset("baccarat_8d_extended")
    com = ext.paytable("BANKER", "commission")
    nocom = ext.paytable("BANKER", "no_commission")
    assert [r.odds for r in com] == [Fraction(19, 20), None]
    assert [r.odds for r in nocom] == [Fraction(1, 2), Fraction(1), None]
    assert ext.paytable("TIE", "commission") == ext.paytable("TIE", "no_commission")


def test_pay_rule_matches_every_condition():
    rule = PayRule((("outcome", ("BANKER",)), ("banker_score", (6,)), ("banker_card_count", (2, 3))), Fraction(12))
    assert rule.matches({"outcome": "BANKER", "banker_score": 6, "banker_card_count": 3})
    assert not rule.matches({"outcome": "BANKER", "banker_score": 7, "banker_card_count": 3})
    assert not rule.matches({"outcome": "TIE", "banker_score": 6, "banker_card_count": 2})
    assert PayRule((), None).matches({})


# ---------------------------------------------------------------------------------------------
# Odds text


@pytest.mark.parametrize(
    ("text", "value"),
    [("0.95:1", Fraction(19, 20)), ("1:2", Fraction(1, 2)), ("7:2", Fraction(7, 2)), ("8:1", Fraction(8)),
     ("100:1", Fraction(100)), ("11:1", Fraction(11)), (" 25 : 1 ", Fraction(25))],
)  # fmt: skip
def test_parse_odds(text, value):
    assert parse_odds(text, "here") == value


@pytest.mark.parametrize("text", ["8", "eight:1", "8:0", "-8:1", "0:1", "8 to 1", "", ":", "8:1:1", "1e1:1", "8/1:1"])
def test_parse_odds_rejects(text):
    with pytest.raises(RulesetError) as e:
        parse_odds(text, "somewhere")
    assert str(e.value).startswith("somewhere: ") and repr(text) in str(e.value)


# ---------------------------------------------------------------------------------------------
# Malformed rulesets

GOOD = """
id = "x"
document = "x.txt"
title = "X"
game = "baccarat"
decks = 8
rounding = "floor"

[shoe]
burn = true
turned_card_counts_as_burned = false
face_card_burns = 10
cut_card = true
reshuffle_every_hand = false

[limits]
player_banker_difference = true
side_bets_require_main_bet = false
one_position_per_round = false

[modes]
commission = ["PLAYER", "BANKER", "TIE"]

[bets.PLAYER]
pays = [
  { when = { outcome = "PLAYER" }, odds = "1:1" },
  { when = { outcome = "TIE" }, push = true },
]

[bets.BANKER]
pays = [
  { when = { outcome = "BANKER" }, odds = "0.95:1" },
  { when = { outcome = "TIE" }, push = true },
]

[bets.TIE]
cutoff = 60
pays = [{ when = { outcome = "TIE" }, odds = "8:1" }]
"""


def replaced(old: str, new: str) -> str:
    assert GOOD.count(old) == 1, old
    return GOOD.replace(old, new)


def test_the_good_template_parses_and_settles():
    rs = parse_ruleset(GOOD, "x.toml")
    assert rs.id == "x" and rs.decks == 8 and rs.bets["TIE"].cutoff == 60
    assert settle(rs, "BANKER", "commission", 100, {"outcome": "BANKER"}) == 195
    assert settle(rs, "PLAYER", "commission", 100, {"outcome": "TIE"}) == 100


BAD = [
    # (what, TOML text, field named, words of the problem)
    ("unknown bet code", GOOD + '\n[bets.BANKER_SIX]\npays = [{ when = { outcome = "BANKER" }, odds = "1:1" }]\n',
     "bets.BANKER_SIX", "unknown bet code"),
    ("unknown round fact", replaced('{ when = { outcome = "PLAYER" }, odds = "1:1" }',
                                    '{ when = { outcom = "PLAYER" }, odds = "1:1" }'),
     "bets.PLAYER.pays[0].when.outcom", "unknown round fact"),
    ("bad odds text", replaced('odds = "8:1"', 'odds = "8"'), "bets.TIE.pays[0].odds", "'8'"),
    ("odds with a zero stake", replaced('odds = "8:1"', 'odds = "8:0"'), "bets.TIE.pays[0].odds", "'8:0'"),
    ("odds in words", replaced('odds = "8:1"', 'odds = "8 to 1"'), "bets.TIE.pays[0].odds", "'8 to 1'"),
    ("negative odds", replaced('odds = "8:1"', 'odds = "-8:1"'), "bets.TIE.pays[0].odds", "'-8:1'"),
    ("odds as a number", replaced('odds = "8:1"', "odds = 8"), "bets.TIE.pays[0].odds", "must be str"),
    ("missing decks", replaced("decks = 8\n", ""), "decks", "is missing"),
    ("decks zero", replaced("decks = 8\n", "decks = 0\n"), "decks", "0"),
    ("decks as text", replaced("decks = 8\n", 'decks = "8"\n'), "decks", "must be int"),
    ("decks as bool", replaced("decks = 8\n", "decks = true\n"), "decks", "must be int"),
    ("mode offers a code without paytable",
     replaced('commission = ["PLAYER", "BANKER", "TIE"]', 'commission = ["PLAYER", "BANKER", "TIE", "PLAYER_PAIR"]'),
     "modes.commission", "PLAYER_PAIR"),
    ("mode offers a code whose rules are for another mode",
     replaced('{ when = { outcome = "BANKER" }, odds = "0.95:1" },\n  { when = { outcome = "TIE" }, push = true },',
              '{ mode = "no_commission", when = { outcome = "BANKER" }, odds = "0.95:1" },\n'
              '  { mode = "no_commission", when = { outcome = "TIE" }, push = true },'),
     "modes.commission", "BANKER"),
    ("mode offers a code twice", replaced('commission = ["PLAYER", "BANKER", "TIE"]',
                                          'commission = ["PLAYER", "BANKER", "TIE", "TIE"]'),
     "modes.commission", "twice"),
    ("unknown mode", replaced("[modes]\n", '[modes]\nhigh_roller = ["PLAYER"]\n'), "modes.high_roller", "mode"),
    ("no mode", replaced('commission = ["PLAYER", "BANKER", "TIE"]\n', ""), "modes", "no betting mode"),
    ("unknown rule mode", replaced('{ when = { outcome = "BANKER" }, odds = "0.95:1" }',
                                   '{ mode = "nocomm", when = { outcome = "BANKER" }, odds = "0.95:1" }'),
     "bets.BANKER.pays[0].mode", "'nocomm'"),
    ("invalid TOML", replaced("decks = 8\n", "decks = \n"), None, "not valid TOML"),
    ("invalid TOML table", GOOD + "\n[bets.TIE\n", None, "not valid TOML"),
    ("when value not an outcome", replaced('{ when = { outcome = "PLAYER" }, odds = "1:1" }',
                                           '{ when = { outcome = "PLAYR" }, odds = "1:1" }'),
     "bets.PLAYER.pays[0].when.outcome", "'PLAYR'"),
    ("score out of range", replaced('{ when = { outcome = "TIE" }, odds = "8:1" }',
                                    '{ when = { outcome = "TIE", banker_score = 10 }, odds = "8:1" }'),
     "bets.TIE.pays[0].when.banker_score", "10"),
    ("number for a yes/no fact", replaced('{ when = { outcome = "TIE" }, odds = "8:1" }',
                                          '{ when = { natural = 1 }, odds = "8:1" }'),
     "bets.TIE.pays[0].when.natural", "1"),
    ("yes/no for a count", replaced('{ when = { outcome = "TIE" }, odds = "8:1" }',
                                    '{ when = { banker_card_count = true }, odds = "8:1" }'),
     "bets.TIE.pays[0].when.banker_card_count", "True"),
    ("empty list of values", replaced('{ when = { outcome = "TIE" }, odds = "8:1" }',
                                      '{ when = { margin = [] }, odds = "8:1" }'),
     "bets.TIE.pays[0].when.margin", "empty"),
    ("misspelt key in a bet", replaced("cutoff = 60", "cuttoff = 60"), "bets.TIE.cuttoff", "unknown key"),
    ("misspelt key in a rule", replaced('{ when = { outcome = "TIE" }, odds = "8:1" }',
                                        '{ when = { outcome = "TIE" }, odd = "8:1" }'),
     "bets.TIE.pays[0].odd", "unknown key"),
    ("misspelt top-level key", replaced('rounding = "floor"', 'rounding = "floor"\ndeck = 6'), "deck", "unknown key"),
    ("misspelt shoe key", replaced("cut_card = true", "cut_card = true\ncutcard = false"), "shoe.cutcard",
     "unknown key"),
    ("missing shoe field", replaced("cut_card = true\n", ""), "shoe.cut_card", "is missing"),
    ("cutoff zero", replaced("cutoff = 60", "cutoff = 0"), "bets.TIE.cutoff", "0"),
    ("cutoff as text", replaced("cutoff = 60", 'cutoff = "60"'), "bets.TIE.cutoff", "must be int"),
    ("bet not a table", replaced("[bets.TIE]\ncutoff = 60\npays = [{ when = { outcome = \"TIE\" }, odds = \"8:1\" }]",
                                 "[bets]\nTIE = 5"), "bets.TIE", "must be a table"),
    ("rule with odds and push", replaced('{ when = { outcome = "TIE" }, odds = "8:1" }',
                                         '{ when = { outcome = "TIE" }, odds = "8:1", push = true }'),
     "bets.TIE.pays[0]", "exactly one"),
    ("rule with neither", replaced('{ when = { outcome = "TIE" }, odds = "8:1" }', '{ when = { outcome = "TIE" } }'),
     "bets.TIE.pays[0]", "exactly one"),
    ("rule without when", replaced('{ when = { outcome = "TIE" }, odds = "8:1" }', '{ odds = "8:1" }'),
     "bets.TIE.pays[0].when", "is missing"),
    ("empty paytable", replaced('pays = [{ when = { outcome = "TIE" }, odds = "8:1" }]', "pays = []"),
     "bets.TIE.pays", "empty"),
    ("unknown rounding", replaced('rounding = "floor"', 'rounding = "bankers"'), "rounding", "'bankers'"),
    ("bad share", replaced("one_position_per_round = false", 'one_position_per_round = false\n'
                                                             'side_bet_max_share_of_table_max = "ten percent"'),
     "limits.side_bet_max_share_of_table_max", "'ten percent'"),
    ("share over one", replaced("one_position_per_round = false", 'one_position_per_round = false\n'
                                                                  'side_bet_max_share_of_table_max = "10"'),
     "limits.side_bet_max_share_of_table_max", "'10'"),
    ("bad stated rtp", replaced('rounding = "floor"', 'rounding = "floor"\nmax_rtp_stated = "98,94%"'),
     "max_rtp_stated", "'98,94%'"),
    ("notes not text", replaced('rounding = "floor"', 'rounding = "floor"\nnotes = [1, 2]'), "notes", "strings"),
    ("missing id", replaced('id = "x"\n', ""), "id", "is missing"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "field", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_malformed_ruleset_fails_naming_file_and_field(text, field, words):
    with pytest.raises(RulesetError) as e:
        parse_ruleset(text, "x.toml")
    msg = str(e.value)
    assert msg.startswith("x.toml: ")
    if field is not None:
        assert f"field '{field}'" in msg
    assert words in msg
    assert "\n" not in msg  # one clear line


def test_ruleset_error_is_a_value_error():
    assert issubclass(RulesetError, ValueError)
