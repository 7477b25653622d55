"""Card codes and shoe composition (RULES.md "Cards").

Expected values are written out by hand from the document, never computed with engine.cards.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from engine.cards import (
    CARD_CODES,
    CardCodeError,
    check_card,
    check_composition,
    format_cards,
    new_shoe,
    rank,
)
from engine.games.baccarat.values import baccarat_value

# RULES.md: ranks A 2 3 4 5 6 7 8 9 T J Q K, suits S H D C; A=1, 2-9 face value, T/J/Q/K = 0.
HAND_VALUES = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 0, "J": 0, "Q": 0, "K": 0}
ALL_CODES = [r + s for r in "A23456789TJQK" for s in "SHDC"]


def test_there_are_exactly_the_52_codes_of_the_document():
    assert len(ALL_CODES) == 52
    assert len(CARD_CODES) == 52
    assert len(set(CARD_CODES)) == 52
    assert set(CARD_CODES) == set(ALL_CODES)


@pytest.mark.parametrize("code", ALL_CODES)
def test_every_code_is_valid_with_its_value_and_rank(code):
    assert check_card(code) == code
    assert rank(code) == code[0]
    assert baccarat_value(code) == HAND_VALUES[code[0]]


@pytest.mark.parametrize(
    "bad", ["1S", "TX", "", "td", "10H", "AS ", " AS", "ASH", "A", "S", "XX", "0C", "as", "Ts", "tS", "JK"]
)
def test_bad_codes_raise_naming_the_code(bad):
    for fn in (check_card, rank, baccarat_value):
        with pytest.raises(CardCodeError) as e:
            fn(bad)
        assert repr(bad) in str(e.value)


@pytest.mark.parametrize("bad", [None, 10, ("A", "S"), b"AS"])
def test_non_strings_raise_card_code_error(bad):
    with pytest.raises(CardCodeError):
        check_card(bad)


def test_card_code_error_is_a_value_error():
    assert issubclass(CardCodeError, ValueError)


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_new_shoe_holds_each_code_decks_times(decks):
    shoe = new_shoe(decks)
    assert len(shoe) == 52 * decks
    counts = Counter(shoe)
    assert set(counts) == set(ALL_CODES)
    assert all(n == decks for n in counts.values())
    assert check_composition(shoe, decks).ok


def test_full_shoes_in_any_order_are_ok():
    shoe = list(ALL_CODES) * 8
    random.Random(7).shuffle(shoe)
    comp = check_composition(shoe, 8)
    assert comp.ok
    assert (comp.missing, comp.extra, comp.unknown) == ({}, {}, ())
    assert comp.describe() == "8 full decks"


def test_one_card_replaced_by_a_copy_of_another():
    shoe = list(ALL_CODES) * 2
    shoe[shoe.index("AS")] = "KD"  # one AS gone, a third KD
    comp = check_composition(shoe, 2)
    assert not comp.ok
    assert comp.missing == {"AS": 1}
    assert comp.extra == {"KD": 1}
    assert comp.unknown == ()
    text = comp.describe()
    assert "missing AS" in text and "extra KD" in text and "2 full decks" in text


def test_unknown_codes_are_reported_and_not_counted_as_cards():
    shoe = list(ALL_CODES)
    shoe.remove("TD")
    shoe.remove("7C")
    shoe += ["td", "1S", "1S", ""]
    comp = check_composition(shoe, 1)
    assert comp.missing == {"TD": 1, "7C": 1}
    assert comp.extra == {}
    assert sorted(comp.unknown) == ["", "1S", "td"]
    text = comp.describe()
    for shown in ("'td'", "'1S'", "''", "TDx1", "7Cx1"):
        assert shown in text


def test_short_and_long_shoes():
    assert check_composition([], 1).missing == {c: 1 for c in ALL_CODES}
    three = list(ALL_CODES) * 3
    comp = check_composition(three, 2)
    assert comp.extra == {c: 1 for c in ALL_CODES} and comp.missing == {}
    comp = check_composition(list(ALL_CODES) * 8 + ["QH", "QH"], 8)
    assert comp.extra == {"QH": 2} and comp.missing == {}
    seven = list(ALL_CODES) * 7 + [c for c in ALL_CODES if c != "9S"]
    comp = check_composition(seven, 8)
    assert comp.missing == {"9S": 1} and comp.extra == {}


def test_non_string_items_are_unknown_and_describable():
    comp = check_composition([*ALL_CODES, None, 5], 1)
    assert set(comp.unknown) == {None, 5}
    assert "None" in comp.describe() and "5" in comp.describe()


def test_suit_matters_for_composition():
    # every rank complete but one suit swapped: AH twice, AS never
    shoe = ["AH" if c == "AS" else c for c in ALL_CODES]
    comp = check_composition(shoe, 1)
    assert comp.missing == {"AS": 1} and comp.extra == {"AH": 1}


def test_format_cards():
    assert format_cards(["AS", "TD"]) == "AS TD"
    assert format_cards([]) == "-"


def test_codes_are_two_characters_rank_then_suit():
    for r, s in itertools.product("A23456789TJQK", "SHDC"):
        assert r + s in CARD_CODES
        assert s + r not in CARD_CODES


def test_format_cards_shows_what_is_not_text_as_its_repr():
    assert format_cards(["AS", None, 7, ""]) == "AS None 7 "
    assert format_cards(("KD",)) == "KD"
