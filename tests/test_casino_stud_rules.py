"""The casino stud ruleset (engine/games/casino_stud/rules.py, rulesets/casino_stud_live.toml): the
bundled file says what RULES.md § Casino 5-card stud says, names every silence, and a file that says
something else is refused with its field named."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from engine.games import game, game_names, load_ruleset
from engine.games.casino_stud import BET_CODES, GAME
from engine.games.casino_stud.rules import RULESETS_PACKAGE, load_casino_stud_rules, parse_casino_stud_rules
from engine.ruleset_file import RulesetError

RULES = load_casino_stud_rules("casino_stud_live")
TEXT = (resources.files(RULESETS_PACKAGE) / "casino_stud_live.toml").read_text(encoding="utf-8")


def test_the_bundled_ruleset_is_rules_md():
    r = RULES
    assert (r.id, r.game, r.rounding, r.deal_order, r.burn_cards, r.max_boxes) == (
        "casino_stud_live", "casino_stud", "floor", "box_by_box", 0, 7)
    assert (r.call_multiple, r.qualifier, r.max_call_payout, r.pool_scope) == (2, "AK", None, "table")
    assert r.call_payouts == {"HIGH_CARD": 1, "PAIR": 1, "TWO_PAIR": 2, "THREE_OF_A_KIND": 3, "STRAIGHT": 4,
                              "FLUSH": 5, "FULL_HOUSE": 7, "FOUR_OF_A_KIND": 20, "STRAIGHT_FLUSH": 50,
                              "ROYAL_FLUSH": 100}
    jp = r.jackpot
    assert jp.prizes == {"ROYAL_FLUSH": ("percent", 100), "STRAIGHT_FLUSH": ("percent", 10),
                         "FOUR_OF_A_KIND": ("units", 500), "FULL_HOUSE": ("units", 100), "FLUSH": ("units", 50)}
    assert jp.shares == {"jackpot": 60, "next_pool": 30, "house": 10}
    assert (jp.remainder_to, jp.percentage_prizes_from, jp.fixed_prizes_from, jp.reset, jp.prize_order) == (
        "house", "jackpot", "house", "next_pool", "box")
    assert jp.contributions_before_prizes is False and jp.requires_ante is True
    assert r.call_of(1000) == 2000


def test_every_setting_names_its_document_line_or_silence():
    tables_with_a_comment = ("[call_payouts]", "[jackpot.shares]", "[jackpot.prizes]")  # the comment on the head
    section, settings = "", []
    for line in TEXT.splitlines():
        if line.startswith("["):
            section = line.split()[0]
            if section in tables_with_a_comment:
                assert re.search(r"# (silent|line \d+)", line), line
        elif re.match(r"^[A-Za-z_]+\s*=", line) and section not in tables_with_a_comment:
            settings.append(line)
    settings = [s for s in settings if not s.startswith(("id ", "document ", "title ", "game ", "notes "))]
    assert len(settings) == 15
    for line in settings:
        assert re.search(r"# (silent|line \d+)", line), line
    assert len(RULES.notes) >= 4 and any("silent" in n.lower() for n in RULES.notes)


def test_registered_as_a_game():
    assert "casino_stud" in game_names()
    assert game("casino_stud") is GAME and BET_CODES == ("ANTE", "JACKPOT") == GAME.bet_codes
    assert GAME.ruleset_ids() == ["casino_stud_live"] and GAME.modes == ()
    assert load_ruleset("casino_stud_live") == RULES


def _with(old: str, new: str) -> str:
    assert old in TEXT, old
    return TEXT.replace(old, new, 1)


@pytest.mark.parametrize("old, new, field", [
    ('game = "casino_stud"', 'game = "blackjack"', "game"),
    ("jackpot = 60\n", "jackpot = 61\n", "jackpot.shares"),
    ('FLUSH = "50 units"', 'FLUSH = "50 chips"', "jackpot.prizes.FLUSH"),
    ('STRAIGHT_FLUSH = "10%"', 'STRAIGHT_FLUSH = "110%"', "jackpot.prizes.STRAIGHT_FLUSH"),
    ('ROYAL_FLUSH = "100%"', 'ROYAL_FLUSH = "100%"\nSTRAIGHT = "5 units"', "jackpot.prizes.STRAIGHT"),
    ('remainder_to = "house"', 'remainder_to = "player"', "jackpot.remainder_to"),
    ('qualifier = "AK"', 'qualifier = "AQ"', "play.qualifier"),
    ('max_call_payout = "none"', 'max_call_payout = "lots"', "play.max_call_payout"),
    ('max_call_payout = "none"', "max_call_payout = 0", "play.max_call_payout"),
    ("TWO_PAIR = 2\n", "TWO_PAIR = 0\n", "call_payouts"),
    ("TWO_PAIR = 2\n", "", "call_payouts.TWO_PAIR"),
    ("TWO_PAIR = 2\n", "TWO_PAIRS = 2\n", "call_payouts.TWO_PAIRS"),
    ('deal_order = "box_by_box"', 'deal_order = "dealer_first"', "dealing.deal_order"),
    ("max_boxes = 7", "max_boxes = 10", "dealing"),
    ("call_multiple = 2", "call_multiple = 0", "play.call_multiple"),
    ("requires_ante = true", 'requires_ante = "yes"', "jackpot.requires_ante"),
])  # fmt: skip
def test_a_file_that_says_something_else_is_refused(old, new, field):
    with pytest.raises(RulesetError, match=re.escape(f"field '{field}'")):
        parse_casino_stud_rules(_with(old, new), "x.toml")


def test_a_cap_on_the_call_is_minor_units():
    rules = parse_casino_stud_rules(_with('max_call_payout = "none"', "max_call_payout = 500000"))
    assert rules.max_call_payout == 500_000


def test_an_unknown_ruleset_is_refused():
    with pytest.raises(RulesetError):
        load_casino_stud_rules("casino_stud_nope")
