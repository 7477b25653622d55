"""Blackjack hand facts of document 004, hand-worked, and the ruleset file's settings."""

import re
from fractions import Fraction
from importlib import resources

import pytest

from engine.games.blackjack.hand import dealer_decision, hand_total, is_blackjack, pair_kind, play_dealer
from engine.games.blackjack.rules import load_blackjack_rules, parse_blackjack_rules
from engine.ruleset_file import RulesetError


@pytest.mark.parametrize(
    ("cards", "value", "soft"),
    [
        (["AS", "6H"], 17, True),
        (["AS", "6H", "TD"], 17, False),
        (["AS", "AH"], 12, True),
        (["AS", "AH", "9C"], 21, True),
        (["AS", "TH"], 21, True),
        (["KS", "QH", "2C"], 22, False),
        (["TS", "AH", "AC"], 12, False),
        (["5S", "5H", "AC"], 21, True),
    ],
)
def test_hand_totals(cards, value, soft):
    total = hand_total(cards)
    assert (total.value, total.soft) == (value, soft)


def test_blackjack_is_two_card_21_not_after_split():
    assert is_blackjack(["AS", "KH"], from_split=False)
    assert not is_blackjack(["AS", "KH"], from_split=True)  # 004 line 50
    assert is_blackjack(["AS", "KH"], from_split=True, split_ace_21_is_blackjack=True)
    assert not is_blackjack(["7S", "7H", "7C"], from_split=False)


def test_pair_kinds():
    assert pair_kind("8S", "8S") == "perfect"
    assert pair_kind("8S", "8C") == "coloured"
    assert pair_kind("8H", "8D") == "coloured"
    assert pair_kind("8S", "8H") == "mixed"
    assert pair_kind("KS", "TS") is None  # same value, not a pair


@pytest.mark.parametrize(
    ("cards", "h17", "draws"),
    [
        (["TS", "6H"], True, True),  # 16: hit
        (["TS", "7H"], True, False),  # hard 17: stand
        (["AS", "6H"], True, True),  # soft 17: hit (004 line 60)
        (["AS", "6H"], False, False),
        (["AS", "7H"], True, False),  # soft 18: stand
        (["AS", "5H", "TC"], True, True),  # hard 16
    ],
)
def test_dealer_decisions(cards, h17, draws):
    assert dealer_decision(cards, hits_soft_17=h17).draws is draws


def test_dealer_draws_soft_17_then_stands():
    cards, decisions = play_dealer("AS", ["6H", "4C", "9D"], hits_soft_17=True)
    assert cards == ["AS", "6H", "4C"]  # soft 17 hit, then 21 stands
    assert [d.draws for d in decisions] == [True, True, False]
    assert decisions[1].rule == "hit on soft 17"


def test_bundled_ruleset_settings():
    rules = load_blackjack_rules()
    assert rules.decks == 8 and rules.hits_soft_17 and not rules.dealer_hole_card
    assert rules.blackjack_odds == Fraction(3, 2) and rules.insurance_odds == 2
    assert rules.pair_odds == {"mixed": 6, "coloured": 12, "perfect": 25}
    assert rules.pair_max_share_of_table_max == Fraction(1, 10)
    assert rules.max_splits == 1 and not rules.double_on_split_aces


def test_ruleset_errors_name_the_field():
    without_player = re.sub(r"\[player\][^\[]*", "", _bundled_text())
    with pytest.raises(RulesetError, match="field 'player'"):
        parse_blackjack_rules(without_player, "x.toml")


def _bundled_text() -> str:
    return (resources.files("engine.games.blackjack.rulesets") / "blackjack_8d_live.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize(("decks", "ok"), [(0, False), (1, True), (16, True), (17, False)])
def test_decks_boundaries(decks, ok):
    text = re.sub(r"(?m)^decks = 8", f"decks = {decks}", _bundled_text())
    if ok:
        assert parse_blackjack_rules(text).decks == decks
    else:
        with pytest.raises(RulesetError, match="field 'decks'"):
            parse_blackjack_rules(text)


@pytest.mark.parametrize(("share", "ok"), [("0", False), ("1", True), ("11/10", False)])
def test_pair_share_boundaries(share, ok):
    text = _bundled_text().replace('max_share_of_table_max = "1/10"', f'max_share_of_table_max = "{share}"')
    if ok:
        assert parse_blackjack_rules(text).pair_max_share_of_table_max == Fraction(share)
    else:
        with pytest.raises(RulesetError, match="field 'pair.max_share_of_table_max'"):
            parse_blackjack_rules(text)


def test_a_mistyped_setting_is_refused():
    text = _bundled_text().replace("hits_soft_17 = true", "hits_soft17 = true\nhits_soft_17 = true")
    with pytest.raises(RulesetError, match="field 'dealer.hits_soft17': unknown key"):
        parse_blackjack_rules(text)


def test_an_unknown_loss_reading_is_refused():
    text = _bundled_text().replace('lose_to_dealer_blackjack = "all"', 'lose_to_dealer_blackjack = "half"')
    with pytest.raises(RulesetError, match="doubled_or_split_lose_to_dealer_blackjack"):
        parse_blackjack_rules(text)


def test_the_bet_behind_reading_is_read_and_an_unknown_one_refused():
    assert load_blackjack_rules().bet_behind_on_double_or_split == "stays"
    follows = _bundled_text().replace('on_double_or_split = "stays"', 'on_double_or_split = "follows"')
    assert parse_blackjack_rules(follows).bet_behind_on_double_or_split == "follows"
    with pytest.raises(RulesetError, match="bet_behind.on_double_or_split"):
        parse_blackjack_rules(_bundled_text().replace('on_double_or_split = "stays"', 'on_double_or_split = "half"'))


def test_pair_bet_house_edge_matches_published_8_decks():
    from engine.games.blackjack.rtp import insurance_rtp, pair_bet_rtp

    rules = load_blackjack_rules()
    assert round(float(1 - pair_bet_rtp(rules)) * 100, 4) == 4.0964  # published for 25/12/6, 8 decks
    assert insurance_rtp(rules) == Fraction(128, 415) * 3
    assert round(float(1 - insurance_rtp(rules)) * 100, 2) == 7.47  # published insurance edge, 8 decks
