"""Shoe replay (RULES.md "Shoe procedure"): the turned card and the burn, the cut card, mini-baccarat's
one round per shuffle, and properties over random shoes."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import CardCodeError, new_shoe
from engine.games.baccarat.ruleset import ShoeProcedure, load_ruleset
from engine.games.baccarat.shoe import Burn, burn_procedure, is_final_round, replay_shoe
from tests.test_baccarat import VALUE, oracle_deal

EXTRA = ShoeProcedure(
    burn=True, turned_card_counts_as_burned=False, face_card_burns=10, cut_card=True, reshuffle_every_hand=False
)
COUNTED = ShoeProcedure(
    burn=True, turned_card_counts_as_burned=True, face_card_burns=10, cut_card=True, reshuffle_every_hand=False
)
NO_BURN = ShoeProcedure(
    burn=False, turned_card_counts_as_burned=False, face_card_burns=10, cut_card=True, reshuffle_every_hand=False
)

# Rounds of known length, in dealing order (P B P B [P3] [B3]).
R4 = "9S TD TH TC".split()  # Player natural 9: 4 cards
R5 = "4S TD 3H 2C 5D".split()  # Player 7 stands, Banker 2 draws: 5 cards
R6 = "AS JH 3D 2C 5S AH".split()  # document 001's example: both draw, 6 cards

# RULES.md: A burns 1 ... 9 burns 9, T/J/Q/K burn 10. Turned card extra: first round at 1 + N.
BURNS = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10, "J": 10, "Q": 10, "K": 10}


def shoe_with(turned: str, burned: int, rounds: list[list[str]]) -> list[str]:
    return [turned] + ["KH"] * burned + [c for r in rounds for c in r]


@pytest.mark.parametrize("rank", list("A23456789TJQK"))
def test_burn_turned_card_extra(rank):
    n = BURNS[rank]
    cards = shoe_with(rank + "D", n, [R4, R4, R4])
    rep = replay_shoe(cards, EXTRA, cut_index=None)
    assert rep.burn == Burn(rank + "D", n, False)
    assert rep.burn.first_round_start == 1 + n
    assert rep.rounds[0].start == 1 + n
    assert rep.rounds[0].dealing_order == tuple(R4)
    assert len(rep.rounds) == 3 and rep.exhausted and rep.cards_used == len(cards)


@pytest.mark.parametrize("rank", list("A23456789TJQK"))
def test_burn_turned_card_counts_as_burned(rank):
    n = BURNS[rank]
    cards = shoe_with(rank + "C", n - 1, [R5, R4])
    rep = replay_shoe(cards, COUNTED, cut_index=None)
    assert rep.burn.first_round_start == n  # the first round starts at index N
    assert rep.rounds[0].start == n
    assert [r.dealing_order for r in rep.rounds] == [tuple(R5), tuple(R4)]


def test_face_card_burns_is_a_setting():
    proc = ShoeProcedure(True, False, 5, True, False)
    assert burn_procedure(["QS", *R4], proc) == Burn("QS", 5, False)
    assert burn_procedure(["9S", *R4], proc) == Burn("9S", 9, False)


def test_bundled_shoe_procedures():
    for rid in ("baccarat_8d_extended", "baccarat_8d_standard", "baccarat_live_pairs"):
        assert load_ruleset(rid).shoe == EXTRA
    mini = load_ruleset("mini_baccarat_6d").shoe
    assert not mini.burn and not mini.cut_card and mini.reshuffle_every_hand


def test_bad_turned_card():
    with pytest.raises(CardCodeError):
        replay_shoe(["1S", *R4], EXTRA, None)


def test_no_burn_deals_from_the_first_card():
    rep = replay_shoe([*R6, *R4], NO_BURN, None)
    assert rep.burn.turned_card is None and rep.burn.first_round_start == 0
    assert [r.start for r in rep.rounds] == [0, 6]


def test_empty_shoe():
    rep = replay_shoe([], EXTRA, 10)
    assert rep.rounds == () and rep.exhausted


# ---------------------------------------------------------------------------------------------
# Cut card: the round during which card cut_index comes out is the last


def four_card_shoe(rounds=10):
    # AS turned, one card burned: round k (1-based) covers [2 + 4(k-1), 2 + 4k)
    return shoe_with("AS", 1, [R4] * rounds)


@pytest.mark.parametrize(
    ("cut_index", "rounds", "exhausted"),
    [
        (0, 1, False),  # cut card in front of the turned card: the first round is the last
        (2, 1, False),  # first card of round 1
        (5, 1, False),  # last card of round 1
        (6, 2, False),  # round 1 ends exactly at the cut: the next round is the last
        (7, 2, False),
        (9, 2, False),
        (10, 3, False),
        (41, 10, False),  # last card of the last round
        (42, 10, True),  # round 10 ends at the cut; the next (last) round cannot be dealt
        (1000, 10, True),
    ],
)
def test_cut_card_four_card_rounds(cut_index, rounds, exhausted):
    cards = four_card_shoe()
    assert len(cards) == 42
    rep = replay_shoe(cards, EXTRA, cut_index)
    assert len(rep.rounds) == rounds
    assert rep.exhausted is exhausted
    assert [r.round_no for r in rep.rounds] == list(range(1, rounds + 1))
    assert rep.cards_used == 2 + 4 * rounds


def test_cut_card_out_on_a_third_card_completes_that_round():
    # '2S' turned, 2 burned: R6 rounds at [3, 9), [9, 15), [15, 21), [21, 27)
    cards = shoe_with("2S", 2, [R6, R6, R6, R6])
    expect = {3: 1, 8: 1, 9: 2, 12: 2, 13: 2, 14: 2, 15: 3, 20: 3, 21: 4}
    for cut_index, n in expect.items():
        rep = replay_shoe(cards, EXTRA, cut_index)
        assert len(rep.rounds) == n, cut_index
        assert not rep.exhausted
        last = rep.rounds[-1]
        assert last.start <= cut_index < last.end
        assert last.dealing_order == tuple(R6)  # the round is dealt to completion


def test_cut_card_with_mixed_round_lengths():
    # turned 'AS', 1 burned: R5 [2,7), R4 [7,11), R6 [11,17), R5 [17,22), R4 [22,26)
    cards = shoe_with("AS", 1, [R5, R4, R6, R5, R4])
    starts = [2, 7, 11, 17, 22]
    for cut_index in range(0, 26):
        rep = replay_shoe(cards, EXTRA, cut_index)
        # hand-worked: the last round is the one containing cut_index (round 1 if before it)
        want = 1 if cut_index < 2 else sum(1 for s in starts if s <= cut_index)
        assert len(rep.rounds) == want, cut_index
        assert [r.start for r in rep.rounds] == starts[:want]
    rep = replay_shoe(cards, EXTRA, 26)
    assert len(rep.rounds) == 5 and rep.exhausted


def test_is_final_round():
    rep = replay_shoe(four_card_shoe(2), EXTRA, None)
    r1 = rep.rounds[0]  # [2, 6)
    assert not is_final_round(r1, None)
    assert not is_final_round(r1, 6)
    assert is_final_round(r1, 5)
    assert is_final_round(r1, 2)


def test_exhausted_mid_round_keeps_only_complete_rounds():
    cards = shoe_with("AS", 1, [R4, R6]) + R6[:5]  # the third R6 lacks the Banker's third card
    rep = replay_shoe(cards, EXTRA, None)
    assert len(rep.rounds) == 2 and rep.exhausted
    assert rep.cards_used == 2 + 4 + 6


# ---------------------------------------------------------------------------------------------
# Mini-baccarat: one round per fresh shuffle, no burn, no cut card


def test_mini_baccarat_deals_exactly_one_round():
    proc = load_ruleset("mini_baccarat_6d").shoe
    for seed in range(30):
        cards = new_shoe(6)
        random.Random(seed).shuffle(cards)
        for cut in (None, 0, 3, 200):
            rep = replay_shoe(cards, proc, cut)
            assert len(rep.rounds) == 1
            r = rep.rounds[0]
            assert r.start == 0 and r.round_no == 1
            assert rep.burn.turned_card is None
            assert not rep.exhausted
            assert r.dealing_order == tuple(cards[: r.end])
            player, banker = oracle_deal(cards[:6])
            assert (list(r.player_cards), list(r.banker_cards)) == (player, banker)


# ---------------------------------------------------------------------------------------------
# Properties over random shoes


def check_replay(cards, proc, cut_index):
    rep = replay_shoe(cards, proc, cut_index)
    value = VALUE[cards[0][0]] or proc.face_card_burns
    first = (value if proc.turned_card_counts_as_burned else 1 + value) if proc.burn else 0
    assert rep.burn.first_round_start == first
    pos = first
    for k, r in enumerate(rep.rounds, start=1):
        assert r.round_no == k
        assert r.start == pos  # contiguous: every card dealt once, in order
        assert r.dealing_order == tuple(cards[r.start : r.end])
        assert 4 <= r.end - r.start <= 6
        assert 2 <= len(r.player_cards) <= 3 and 2 <= len(r.banker_cards) <= 3
        assert 0 <= r.player_score <= 9 and 0 <= r.banker_score <= 9
        player, banker = oracle_deal(cards[r.start : r.start + 6])
        assert (list(r.player_cards), list(r.banker_cards)) == (player, banker)
        pos = r.end
    assert rep.cards_used == pos
    # cards of the burn and of the rounds are exactly the shoe's first cards_used cards
    dealt = list(cards[:first]) + [c for r in rep.rounds for c in r.dealing_order]
    assert dealt == list(cards[:pos])
    for r in rep.rounds[:-1]:
        assert cut_index is None or r.end <= cut_index  # no round before the last held the cut card
    if rep.exhausted:
        assert cut_index is None or pos <= cut_index
        with pytest.raises(IndexError):
            oracle_deal(cards[pos:])  # the next round could not be completed
    else:
        assert cut_index is not None and rep.rounds
        last = rep.rounds[-1]
        assert last.end > cut_index and (last.start <= cut_index or len(rep.rounds) == 1)
    return rep


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    counted=st.booleans(),
    cut_fraction=st.one_of(st.none(), st.floats(0, 1.05)),
)
def test_replay_of_shuffled_eight_deck_shoes(seed, counted, cut_fraction):
    cards = new_shoe(8)
    random.Random(seed).shuffle(cards)
    proc = COUNTED if counted else EXTRA
    cut = None if cut_fraction is None else int(cut_fraction * len(cards))
    rep = check_replay(cards, proc, cut)
    if cut is not None and cut < len(cards) - 6:
        assert not rep.exhausted


@settings(max_examples=100, deadline=None)
@given(
    decks=st.integers(1, 8),
    seed=st.integers(0, 2**32 - 1),
    proc=st.sampled_from([EXTRA, COUNTED, NO_BURN, ShoeProcedure(True, False, 3, True, False)]),
    data=st.data(),
)
def test_replay_of_random_shoes_and_cuts(decks, seed, proc, data):
    cards = new_shoe(decks)
    random.Random(seed).shuffle(cards)
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(cards) + 10)))
    check_replay(cards, proc, cut)
