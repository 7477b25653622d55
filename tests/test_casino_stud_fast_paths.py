"""The stud audit's fast paths against the scalar rules they stand for: the one-full-deck test that spares
most decks engine.cards.check_composition, and the hand ranking cached by shape (ranks and one suit or not)
against a fresh, uncached ranking of the same cards."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import CARD_CODES, check_composition
from engine.games.casino_stud.hands import _rank_shape, rank_hand
from engine.games.casino_stud.round_findings import one_full_deck as _one_full_deck

_ODD = st.sampled_from([*CARD_CODES, None, "", "1S", "AX", "as"])


@st.composite
def decks(draw):
    """A shuffled full deck, then a few edits: a card replaced, dropped, repeated, or a stray code added."""
    deck: list = list(draw(st.permutations(CARD_CODES)))
    for _ in range(draw(st.integers(0, 3))):
        edit = draw(st.sampled_from(["replace", "drop", "repeat", "add"]))
        at = draw(st.integers(0, max(len(deck) - 1, 0)))
        if edit == "replace" and deck:
            deck[at] = draw(_ODD)
        elif edit == "drop" and deck:
            del deck[at]
        elif edit == "repeat" and deck:
            deck.insert(at, deck[draw(st.integers(0, len(deck) - 1))])
        elif edit == "add":
            deck.insert(at, draw(_ODD))
    return tuple(deck)


@settings(max_examples=400, deadline=None)
@given(decks())
def test_one_full_deck_is_check_composition_ok(deck):
    assert _one_full_deck(deck) == check_composition(deck, 1).ok


def test_one_full_deck_boundaries():
    full = tuple(CARD_CODES)
    assert _one_full_deck(full)
    assert not _one_full_deck(full[:-1])  # 51 cards
    assert not _one_full_deck((*full, full[0]))  # 53 cards, one twice
    assert not _one_full_deck((*full[:-1], full[0]))  # 52 cards, one twice, one missing
    assert not _one_full_deck((*full[:-1], None))
    assert not _one_full_deck(())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CARD_CODES), min_size=5, max_size=5, unique=True))
def test_the_cached_rank_is_the_uncached_rank(cards):
    values = tuple(sorted(("23456789TJQKA".index(c[0]) + 2 for c in cards), reverse=True))
    flush = len({c[1] for c in cards}) == 1
    assert rank_hand(cards) == _rank_shape.__wrapped__(values, flush)
