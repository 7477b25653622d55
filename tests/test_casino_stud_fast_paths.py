"""The stud audit's fast paths against the scalar rules they stand for: the hand ranking cached by shape
(ranks and one suit or not) against a fresh, uncached ranking of the same cards."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import CARD_CODES
from engine.games.casino_stud.hands import _rank_shape, rank_hand


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CARD_CODES), min_size=5, max_size=5, unique=True))
def test_the_cached_rank_is_the_uncached_rank(cards):
    values = tuple(sorted(("23456789TJQKA".index(c[0]) + 2 for c in cards), reverse=True))
    flush = len({c[1] for c in cards}) == 1
    assert rank_hand(cards) == _rank_shape.__wrapped__(values, flush)
