"""Blackjack rounds of document 004 replayed from the shoe and settled, worked by hand.

Each shoe is written in dealing order: box cards (ascending box), the dealer's upcard, the second card
of each box, then each box's draws in box order, then the dealer's second card and draws. Stakes are
minor units; credit = stake returned + win. The bundled ruleset: H17, no hole card, one split, split
aces one card each, double after split except on split aces, blackjack 3:2, rounding floor, a doubled
or split box loses "all" to a dealer blackjack.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.cards import CARD_CODES
from engine.games.blackjack.hand import Total, hand_total
from engine.games.blackjack.play import (
    ENDED_BY,
    BoxActions,
    RoundPlay,
    dealt_positions,
    replay_round,
)
from engine.games.blackjack.rules import load_blackjack_rules
from engine.games.blackjack.settlement import (
    BLACKJACK,
    BUST,
    LOSE_TO_DEALER_BLACKJACK,
    PUSH,
    WIN,
    hand_outcome,
    insurance_offered,
    settle_bet_behind,
    settle_box,
    settle_insurance,
    settle_pair,
    total_staked,
)

RULES = load_blackjack_rules()
ORIGINAL = replace(RULES, doubled_or_split_lose_to_dealer_blackjack="original")


def deal(shoe: str, *boxes: tuple[int, str], rules=RULES) -> RoundPlay:
    return replay_round(rules, shoe.split(), [BoxActions(box, actions) for box, actions in boxes])


def only_decision(play: RoundPlay, action: str):
    (decision,) = [d for d in play.decisions if d.action == action]
    return decision


# Naturals and the 3:2 payment


def test_naturals_both_sides_push_and_insurance_pays():
    # AS to box 1, AH up, KD to box 1 (blackjack), TC dealer's second card: dealer blackjack.
    play = deal("AS AH KD TC", (1, ""))
    assert play.complete and play.cards_used == 4
    assert play.dealer_blackjack and play.box(1).hands[0].ended_by == "blackjack"
    assert play.decisions == ()
    # No hand left live: the dealer takes only the second card.
    assert play.dealer == ("AH", "TC") and play.dealer_draws[-1].draws is False
    assert hand_outcome(RULES, play, play.box(1).hands[0]) == PUSH
    assert settle_box(RULES, play, 1, 10) == 10  # blackjack pushes against a dealer blackjack
    assert settle_bet_behind(RULES, play, 1, 10) == 10
    assert insurance_offered(play)  # ace up, also on a player blackjack (004 line 56)
    assert settle_insurance(RULES, play, 5) == 15  # 5 + 2:1


def test_blackjack_against_a_ten_up_without_dealer_blackjack_pays_3_to_2_floor():
    # AS box, TD up, KH box: blackjack. The dealer's second card 6C makes 16, not a blackjack; no hand
    # is live, so the dealer stops there. 3:2 of 5 = 7.5, floor 7: credit 12. Of 10: 15, credit 25.
    play = deal("AS TD KH 6C", (1, ""))
    assert play.dealer == ("TD", "6C") and play.cards_used == 4
    assert hand_outcome(RULES, play, play.box(1).hands[0]) == BLACKJACK
    assert settle_box(RULES, play, 1, 5) == 12
    assert settle_box(RULES, play, 1, 10) == 25
    assert not insurance_offered(play)  # a ten up: no insurance
    assert settle_insurance(RULES, play, 5) == 5  # not offered: refunded, flagged elsewhere


@pytest.mark.parametrize(
    ("rounding", "stake", "credit"),
    [
        ("floor", 5, 12),  # 7.5 -> 7
        ("half_up", 5, 13),  # 7.5 -> 8
        ("half_even", 5, 13),  # 7.5 -> 8 (7 is odd)
        ("floor", 7, 17),  # 10.5 -> 10
        ("half_up", 7, 18),  # 10.5 -> 11
        ("half_even", 7, 17),  # 10.5 -> 10 (10 is even)
        ("floor", 4, 10),  # 6 exactly, under every rule
        ("half_up", 4, 10),
        ("half_even", 4, 10),
    ],
)
def test_3_to_2_at_an_odd_stake_is_rounded_once_by_the_ruleset(rounding, stake, credit):
    play = deal("AS 9D KH 8C", (1, ""))  # blackjack; the dealer 9D 8C = 17, no blackjack
    assert settle_box(replace(RULES, rounding=rounding), play, 1, stake) == credit
    assert settle_bet_behind(replace(RULES, rounding=rounding), play, 1, stake) == credit


# Soft hands, pushes, busts, the 21/22 boundary


def test_soft_17_hits_to_hard_15_then_20_wins():
    # AS box, 9C up, 6H box: soft 17. Hit 8D: 1+6+8 = hard 15. Hit 5C: hard 20. Stand.
    # Dealer: 9C + 7S = 16, hit KD = 26, bust. 20 wins 1:1.
    play = deal("AS 9C 6H 8D 5C 7S KD", (1, "HHS"))
    hand = play.box(1).hands[0]
    assert hand.cards == ("AS", "6H", "8D", "5C") and hand.ended_by == "stand"
    assert (hand.total.value, hand.total.soft) == (20, False)
    assert [(d.total.value, d.total.soft) for d in play.decisions] == [(17, True), (15, False), (20, False)]
    assert play.dealer == ("9C", "7S", "KD") and play.cards_used == 7
    assert settle_box(RULES, play, 1, 10) == 20


def test_soft_hand_hits_to_soft_18_and_pushes_equal_totals():
    # AS box, TD up, 2H box: soft 13. Hit 4D: soft 17. Hit AC: soft 18. Stand.
    # Dealer TD + 8S = 18, stands. 18 against 18: push, the stake back.
    play = deal("AS TD 2H 4D AC 8S", (1, "HHS"))
    hand = play.box(1).hands[0]
    assert (hand.total.value, hand.total.soft) == (18, True)
    assert all(d.legal for d in play.decisions)
    assert hand_outcome(RULES, play, hand) == PUSH
    assert settle_box(RULES, play, 1, 10) == 10


def test_21_on_three_cards_is_not_a_bust_and_keeps_the_dealer_drawing():
    # 9S box, 8C up, 2H box (11). Hit TD: 21, the hand ends by itself ("21", no stand recorded).
    # The hand is live, so the dealer completes: 8C + 5D = 13, hit 8H = 21. 21 against 21: push.
    play = deal("9S 8C 2H TD 5D 8H", (1, "H"))
    hand = play.box(1).hands[0]
    assert hand.ended_by == "21" and hand.total.value == 21
    assert play.dealer == ("8C", "5D", "8H") and play.cards_used == 6
    assert settle_box(RULES, play, 1, 10) == 10


def test_21_beats_a_dealer_20_and_22_busts():
    # 21: 9S 7C 2H + TD; dealer 7C + KD = 17 stands. 21 > 17 wins.
    won = deal("9S 7C 2H TD KD", (1, "H"))
    assert settle_box(RULES, won, 1, 10) == 20
    # 22: 9S 7C 3H + KS = 22 bust; the dealer takes only its second card.
    bust = deal("9S 7C 3H KS KD", (1, "H"))
    assert bust.box(1).hands[0].ended_by == "bust" and bust.dealer == ("7C", "KD")
    assert hand_outcome(RULES, bust, bust.box(1).hands[0]) == BUST
    assert settle_box(RULES, bust, 1, 10) == 0


def test_dealer_21_beats_20_and_dealer_22_loses_to_it():
    # Box TS 9C TH = 20 stands; dealer 9C + 2D = 11, hit KS = 21. 20 loses.
    assert settle_box(RULES, deal("TS 9C TH 2D KS", (1, "S")), 1, 10) == 0
    # Dealer 9C + 3D = 12, hits KS = 22 bust. 20 wins.
    assert settle_box(RULES, deal("TS 9C TH 3D KS", (1, "S")), 1, 10) == 20


def test_bust_loses_even_when_the_dealer_busts_boxes_in_dealing_order():
    # Boxes 1, 3, 5 (recorded out of order). Deal: TS b1, 9D b3, AS b5, 6C up, 5H b1, 3D b3, KH b5.
    # Box 1 (15) hits 7D: 22 bust. Box 3 (12) stands. Box 5 holds a blackjack.
    # Dealer 6C + TC = 16, hits 6H = 22 bust. Box 1: 0 (its bust came first), box 3: 20, box 5: 25.
    play = deal("TS 9D AS 6C 5H 3D KH 7D TC 6H", (5, ""), (1, "H"), (3, "S"))
    assert [b.box for b in play.boxes] == [1, 3, 5]
    assert [settle_box(RULES, play, b, 10) for b in (1, 3, 5)] == [0, 20, 25]
    assert play.cards_used == 10
    who = [d.who for d in dealt_positions(play)]
    assert who == [
        "box 1 hand 0", "box 3 hand 0", "box 5 hand 0", "dealer",
        "box 1 hand 0", "box 3 hand 0", "box 5 hand 0",
        "box 1 hand 0", "dealer", "dealer",
    ]  # fmt: skip
    assert [d.card for d in dealt_positions(play)] == "TS 9D AS 6C 5H 3D KH 7D TC 6H".split()


# The dealer: H17


def test_dealer_hits_soft_17_under_h17_and_stands_on_it_otherwise():
    # Box TS 6D 9H = 19 stands. Dealer 6D + AH = soft 17.
    # H17: hit 2C = soft 19, stands. 19 against 19: push.
    h17 = deal("TS 6D 9H AH 2C", (1, "S"))
    assert h17.dealer == ("6D", "AH", "2C") and h17.cards_used == 5
    assert [d.rule for d in h17.dealer_draws][1:] == ["hit on soft 17", "stand on soft 19"]
    assert settle_box(RULES, h17, 1, 10) == 10
    # S17: stands on soft 17. 19 wins.
    s17 = deal("TS 6D 9H AH 2C", (1, "S"), rules=replace(RULES, hits_soft_17=False))
    assert s17.dealer == ("6D", "AH") and s17.cards_used == 4
    assert settle_box(RULES, s17, 1, 10) == 20


def test_dealer_stands_on_hard_17_and_hits_16():
    # Dealer 7D + KH = hard 17: stands; box 19 wins.
    hard_17 = deal("TS 7D 9H KH 5S", (1, "S"))
    assert hard_17.dealer == ("7D", "KH") and hard_17.cards_used == 4
    assert settle_box(RULES, hard_17, 1, 10) == 20
    # Dealer 7D + 9C = 16: hits 5S = 21; box 19 loses.
    sixteen = deal("TS 7D 9H 9C 5S", (1, "S"))
    assert sixteen.dealer == ("7D", "9C", "5S") and sixteen.cards_used == 5
    assert settle_box(RULES, sixteen, 1, 10) == 0


# Splits and doubles


def test_split_aces_get_one_card_each_and_21_on_them_is_not_blackjack():
    # AS box, 9D up, AH box. Split: the first ace gets KC (21, not a blackjack), the second 5D (soft 16).
    # Dealer 9D + TS = 19. First hand 21 wins 1:1 (not 3:2): 20; second loses. Stake 10 each.
    play = deal("AS 9D AH KC 5D TS", (1, "P"))
    first, second = play.box(1).hands
    assert first.cards == ("AS", "KC") and second.cards == ("AH", "5D")
    assert first.ended_by == second.ended_by == "split_aces"
    assert hand_outcome(RULES, play, first) == WIN
    assert settle_box(RULES, play, 1, 10) == 20
    assert total_staked(play, 1, 10) == 20
    assert play.box(1).first_two == ("AS", "AH")
    (split,) = play.decisions
    assert split.legal and split.can_split and split.can_double and split.cards == ("AS", "AH")


def test_double_after_split_and_the_decision_points():
    # 8S box, 6C up, 8H box. Split. First hand gets 3D (11), doubles: TC = 21. Second gets 2S (10),
    # doubles: 9H = 19. Dealer 6C + TD = 16, hits 7S = 23 bust. Both doubled hands win: 2 x (20 + 20).
    play = deal("8S 6C 8H 3D TC 2S 9H TD 7S", (1, "PDD"))
    first, second = play.box(1).hands
    assert (first.cards, first.doubled, first.ended_by) == (("8S", "3D", "TC"), True, "double")
    assert (second.cards, second.doubled, second.ended_by) == (("8H", "2S", "9H"), True, "double")
    assert all(d.legal for d in play.decisions)
    split, double_1, double_2 = play.decisions
    assert (split.cards, split.upcard, split.can_split, split.can_double) == (("8S", "8H"), "6C", True, True)
    assert (double_1.hand, double_1.cards, double_1.from_split) == (0, ("8S", "3D"), True)
    assert double_1.can_double and not double_1.can_split  # one split only
    assert (double_2.hand, double_2.cards) == (1, ("8H", "2S"))
    assert total_staked(play, 1, 10) == 40
    assert settle_box(RULES, play, 1, 10) == 80
    assert settle_bet_behind(RULES, play, 1, 10) == 20  # the first hand's win at its own stake
    assert play.cards_used == 9


def test_double_on_split_aces_is_flagged_and_carried_out():
    # AS box, 7C up, AD box. Split: the first ace gets 8H (soft 19), the second 9S (soft 20); both end.
    # The recorded D comes after the box's last hand ended: flagged, and carried out (5C dealt, doubled):
    # AD 9S 5C = hard 15. Dealer 7C + TD = 17 stands. First hand 19 wins (20); doubled 15 loses.
    play = deal("AS 7C AD 8H 9S 5C TD", (1, "PD"))
    double = only_decision(play, "D")
    assert not double.legal and double.carried_out and "double on split aces" in double.reason
    first, second = play.box(1).hands
    assert second.cards == ("AD", "9S", "5C") and second.doubled and second.ended_by == "split_aces"
    assert total_staked(play, 1, 10) == 30
    assert settle_box(RULES, play, 1, 10) == 20


def test_double_on_split_aces_when_split_aces_may_draw():
    rules = replace(RULES, split_aces_one_card=False)
    # AS 7C AD; split; the first ace gets 8H (soft 19) and may act: D is flagged, carried out (TD: 19 hard).
    # The second ace gets 9S (soft 20), stands. Dealer 7C + KD = 17.
    play = deal("AS 7C AD 8H TD 9S KD", (1, "PDS"), rules=rules)
    double = only_decision(play, "D")
    assert not double.legal and double.reason == "double on split aces" and double.allowed == {"H", "S"}
    assert play.box(1).hands[0].cards == ("AS", "8H", "TD") and play.box(1).hands[0].doubled
    assert settle_box(rules, play, 1, 10) == 40 + 20  # 19 doubled wins, 20 wins


def test_resplit_is_flagged_and_carried_out():
    # 8S box, 5C up, 8H box. Split; the first hand gets 8D (8 8 again) and splits again: the second
    # split, flagged, carried out: three hands [8S], [8D], [8H]. They get 2C (10), 3H (11), KS (18) and
    # stand. Dealer 5C + TD = 15, hits 6S = 21: all three lose.
    play = deal("8S 5C 8H 8D 2C 3H KS TD 6S", (1, "PPSSS"))
    first_split, resplit = play.decisions[:2]
    assert first_split.legal
    assert not resplit.legal and resplit.carried_out
    assert resplit.reason == "second split (the ruleset allows 1)"
    assert resplit.allowed == {"H", "S", "D"}
    assert [h.cards for h in play.box(1).hands] == [("8S", "2C"), ("8D", "3H"), ("8H", "KS")]
    assert total_staked(play, 1, 10) == 30 and settle_box(RULES, play, 1, 10) == 0
    assert play.cards_used == 9


def test_king_and_ten_do_not_split_but_the_split_is_carried_out():
    # KS box, 9C up, TD box: 20. P flagged, carried out: KS + 7H = 17 stands, TD + 4C = 14 stands.
    # Dealer 9C + 8D = 17. 17 pushes (10), 14 loses.
    play = deal("KS 9C TD 7H 4C 8D", (1, "PSS"))
    split = only_decision(play, "P")
    assert not split.legal and split.carried_out and split.reason == "split of K and T (same rank only)"
    assert split.allowed == {"H", "S", "D"}
    assert settle_box(RULES, play, 1, 10) == 10


def test_double_on_three_cards_is_flagged_and_carried_out():
    # 2S box, 7C up, 3H box (5). Hit 4D (9). D on three cards: flagged, 9S dealt, stake doubled: 18.
    # Dealer 7C + KH = 17 stands. 18 wins on the doubled stake: 40.
    play = deal("2S 7C 3H 4D 9S KH", (1, "HD"))
    double = only_decision(play, "D")
    assert not double.legal and double.carried_out and double.reason == "double on 3 cards"
    assert double.allowed == {"H", "S"}
    hand = play.box(1).hands[0]
    assert hand.doubled and hand.ended_by == "double" and hand.total.value == 18
    assert total_staked(play, 1, 10) == 20 and settle_box(RULES, play, 1, 10) == 40


def test_hit_after_bust_deals_a_card_and_the_dealer_takes_only_its_second():
    # TS box, 6C up, 5H box (15). Hit 9D: 24 bust. The second H is flagged and deals 2C (26).
    # Every hand is bust: the dealer takes QH (16) and stops.
    play = deal("TS 6C 5H 9D 2C QH", (1, "HH"))
    late = play.decisions[1]
    assert not late.legal and late.carried_out and late.reason == "action after bust" and late.allowed == set()
    hand = play.box(1).hands[0]
    assert hand.cards == ("TS", "5H", "9D", "2C") and hand.ended_by == "bust"
    assert play.dealer == ("6C", "QH") and not play.dealer_draws[-1].draws
    assert play.cards_used == 6 and settle_box(RULES, play, 1, 10) == 0


def test_hit_after_21_and_stand_after_blackjack_are_flagged():
    # 9S 8C 2H, hit TD: 21. The next H is flagged and deals 3C: 24, a bust that loses.
    play = deal("9S 8C 2H TD 3C 5D", (1, "HH"))
    assert play.decisions[1].reason == "action after the hand reached 21"
    assert play.box(1).hands[0].ended_by == "21" and settle_box(RULES, play, 1, 10) == 0
    # AS 5C KD: blackjack; a recorded S is flagged (nothing to carry out), the blackjack is paid.
    bj = deal("AS 5C KD 9H", (1, "S"))
    assert bj.decisions[0].reason == "action after blackjack" and bj.decisions[0].carried_out
    assert settle_box(RULES, bj, 1, 10) == 25


def test_impossible_and_unknown_actions_are_flagged_and_skipped():
    # TS 6C 5H, hit 2D (17), P on three cards cannot be done; X is no action; S stands.
    play = deal("TS 6C 5H 2D TD 9S", (1, "HPXS"))
    split, unknown = play.decisions[1:3]
    assert (split.legal, split.carried_out, split.reason) == (False, False, "split of 3 cards")
    assert (unknown.legal, unknown.carried_out, unknown.reason) == (False, False, "unknown action 'X'")
    assert play.box(1).hands[0].cards == ("TS", "5H", "2D")
    # Dealer 6C + TD = 16, hits 9S = 25: 17 wins.
    assert settle_box(RULES, play, 1, 10) == 20


def test_an_unfinished_hand_stands_on_what_it_holds():
    # TS 6C 5H, hit 2D (17); the letters run out. The hand is listed as unfinished and the dealer
    # plays: 6C + TD = 16, hits 9S = 25. 17 wins.
    play = deal("TS 6C 5H 2D TD 9S", (1, "H"))
    assert play.box(1).hands[0].ended_by == "unfinished" and play.unfinished_hands == ((1, 0),)
    assert play.complete and settle_box(RULES, play, 1, 10) == 20


# Insurance


def test_insurance_with_and_without_a_dealer_blackjack():
    # TS box, AC up, 9H box: 19 stands. Dealer's second card KD: blackjack. Insurance 5 wins 2:1: 15.
    # The main bet loses to the dealer blackjack.
    with_bj = deal("TS AC 9H KD", (1, "S"))
    assert with_bj.dealer_blackjack and insurance_offered(with_bj)
    assert settle_insurance(RULES, with_bj, 5) == 15 and settle_box(RULES, with_bj, 1, 10) == 0
    # Second card 6D: soft 17, hit (H17) 5C: hard 12, hit 8S: 20. Insurance loses; 19 loses to 20.
    without = deal("TS AC 9H 6D 5C 8S", (1, "S"))
    assert not without.dealer_blackjack and without.dealer == ("AC", "6D", "5C", "8S")
    assert settle_insurance(RULES, without, 5) == 0 and settle_box(RULES, without, 1, 10) == 0


def test_insurance_is_offered_only_against_an_ace_and_on_a_blackjack_per_the_ruleset():
    assert not insurance_offered(deal("TS KC 9H AD", (1, "S")))  # king up, even with a dealer 21
    assert settle_insurance(RULES, deal("TS KC 9H AD", (1, "S")), 5) == 5  # refunded
    blackjack = deal("AS AC KD 9H", (1, ""))  # player blackjack against an ace
    assert insurance_offered(blackjack, RULES, 1)
    no_bj_insurance = replace(RULES, insurance_on_player_blackjack=False)
    assert not insurance_offered(blackjack, no_bj_insurance, 1)
    assert settle_insurance(no_bj_insurance, blackjack, 5, box=1) == 5


# Bet behind, and what a doubled or split box loses to a dealer blackjack


def test_bet_behind_follows_the_first_split_hand_at_its_own_stake():
    # 8S box, TC up, 8H box. Split: 8S + 9D = 17 stands; 8H + 3C = 11, hits TH = 21.
    # Dealer TC + 8C = 18. First hand loses, second wins: main 20 of 20 staked; bet behind 0.
    play = deal("8S TC 8H 9D 3C TH 8C", (1, "PSH"))
    assert settle_box(RULES, play, 1, 10) == 20
    assert settle_bet_behind(RULES, play, 1, 10) == 0


def test_bet_behind_on_a_doubled_box_keeps_its_own_stake():
    # 6S box, 5C up, 5H box: 11, doubles: 9D = 20. Dealer 5C + TC = 15, hits 7S = 22 bust.
    play = deal("6S 5C 5H 9D TC 7S", (1, "D"))
    assert settle_box(RULES, play, 1, 10) == 40  # 20 staked, 1:1
    assert settle_bet_behind(RULES, play, 1, 10) == 20  # its own 10, 1:1


def test_bet_behind_that_follows_doubles_and_splits_with_the_box():
    follows = replace(RULES, bet_behind_on_double_or_split="follows")
    # the doubled box of the test above: 6S 5H doubles to 20, dealer busts: 10 staked + 10 added, 1:1
    assert settle_bet_behind(follows, deal("6S 5C 5H 9D TC 7S", (1, "D")), 1, 10) == 40
    # the split box above: hand 1 loses, hand 2 wins: 20 of 20 staked
    assert settle_bet_behind(follows, deal("8S TC 8H 9D 3C TH 8C", (1, "PSH")), 1, 10) == 20


def test_doubled_box_against_a_dealer_blackjack_all_or_original():
    # 5S box, AD up, 6H box: 11, doubles: 9C = 20. Dealer's second card KS: blackjack.
    play = deal("5S AD 6H 9C KS", (1, "D"))
    assert hand_outcome(RULES, play, play.box(1).hands[0]) == LOSE_TO_DEALER_BLACKJACK
    assert settle_box(RULES, play, 1, 10) == 0  # "all": both stakes lost
    assert settle_box(ORIGINAL, play, 1, 10) == 10  # "original": the double returned
    assert settle_bet_behind(RULES, play, 1, 10) == settle_bet_behind(ORIGINAL, play, 1, 10) == 0


def test_split_box_against_a_dealer_blackjack_all_or_original():
    # 8S box, AD up, 8H box. Split: 8S + 3D = 11, doubles: TC = 21; 8H + 9C = 17 stands. KS: blackjack.
    # Staked 20 + 10 = 30. "all": 0. "original": only the first 10 lost: 10 (double) + 10 (split) back.
    play = deal("8S AD 8H 3D TC 9C KS", (1, "PDS"))
    assert total_staked(play, 1, 10) == 30
    assert settle_box(RULES, play, 1, 10) == 0
    assert settle_box(ORIGINAL, play, 1, 10) == 20
    assert settle_bet_behind(ORIGINAL, play, 1, 10) == 0


def test_a_bust_is_lost_before_the_dealer_blackjack_under_original():
    # 5S AD 7H: 12, doubles: TC = 22 bust. Dealer KS: blackjack. The bust lost at once: 0 either way.
    play = deal("5S AD 7H TC KS", (1, "D"))
    assert settle_box(ORIGINAL, play, 1, 10) == 0
    # And a blackjack pushes a dealer blackjack under either reading.
    bj = deal("AS AD KH KS", (1, ""))
    assert settle_box(RULES, bj, 1, 10) == settle_box(ORIGINAL, bj, 1, 10) == 10


# The pair side bet


@pytest.mark.parametrize(
    ("first", "second", "credit"),
    [("8S", "8S", 2 + 50), ("8S", "8C", 2 + 24), ("8H", "8S", 2 + 12), ("8S", "9S", 0)],
)
def test_pair_on_the_first_two_cards(first, second, credit):
    play = deal(f"{first} TD {second} 7C", (1, "S"))  # perfect 25:1, coloured 12:1, mixed 6:1, none
    assert settle_pair(RULES, play, 1, 2) == credit


def test_pair_of_a_split_box_is_its_first_two_cards():
    play = deal("8S TC 8H 9D 3C TH 8C", (1, "PSH"))
    assert settle_pair(RULES, play, 1, 2) == 14  # 8S 8H mixed, 6:1


# Bad data never crashes


def test_an_exhausted_shoe_returns_the_round_so_far_and_refunds():
    play = deal("TS 6C 5H", (1, "H"))  # the hit has no card
    assert not play.complete and "ran out" in play.incomplete_reason
    assert play.cards_used == 3 and play.box(1).hands[0].ended_by == "unfinished"
    assert settle_box(RULES, play, 1, 10) == 10
    assert settle_bet_behind(RULES, play, 1, 10) == 10 and settle_pair(RULES, play, 1, 2) == 2
    short = deal("TS", (1, ""), (2, ""))  # out during the first round of cards
    assert not short.complete and short.cards_used == 1 and short.box(2).hands[0].cards == ()
    assert settle_box(RULES, short, 2, 10) == 10 and settle_insurance(RULES, short, 5) == 5


def test_a_bad_card_code_or_a_box_recorded_twice_makes_the_round_incomplete():
    bad = deal("TS 6C ZZ 9D", (1, "S"))
    assert not bad.complete and "'ZZ', is not a card code" in bad.incomplete_reason and bad.cards_used == 2
    twice = deal("TS 6C 5H 9D", (1, "S"), (1, "H"))
    assert not twice.complete and twice.incomplete_reason == "box 1 is recorded twice"


def test_a_cancelled_round_refunds_every_bet():
    play = deal("5S AD 6H 9C KS", (1, "D"))
    assert settle_box(RULES, play, 1, 10, cancelled=True) == 20  # the stake incl. the double
    assert settle_insurance(RULES, play, 5, cancelled=True) == 5
    assert settle_pair(RULES, play, 1, 2, cancelled=True) == 2
    assert settle_bet_behind(RULES, play, 1, 10, cancelled=True) == 10


# Properties: an independent evaluator on small random shoes, and invariants on any data.


def _value(cards: list[str]) -> tuple[int, bool]:
    """Written apart from engine.games.blackjack.hand: every ace 11, then 1 while the hand is over 21."""
    total = sum(11 if c[0] == "A" else 10 if c[0] in "TJQK" else int(c[0]) for c in cards)
    elevens = sum(c[0] == "A" for c in cards)
    while total > 21 and elevens:
        total, elevens = total - 10, elevens - 1
    return total, elevens > 0


def _round_half(amount: Fraction, rounding: str) -> int:
    """A 3:2 win on an integer stake is a whole number or a half."""
    whole = amount.numerator // amount.denominator
    if amount == whole or rounding == "floor":
        return whole
    return whole + 1 if rounding == "half_up" else whole + whole % 2


def _simulate(shoe, numbers, choose, stake, rounding, loss):
    """The round by the rule document, in the simplest code: (actions by box, main credit by box,
    first-hand credit at `stake` by box, dealer cards, cards used, insurance credit at `stake`)."""
    it = iter(shoe)
    first = {n: [next(it)] for n in numbers}
    up = next(it)
    for n in numbers:
        first[n].append(next(it))
    hands, actions = {}, {}
    for n in numbers:
        box = [{"cards": first[n], "split": False, "doubled": False}]
        letters, i = "", 0
        while i < len(box):
            hand = box[i]
            cards = hand["cards"]
            if len(cards) == 1:
                cards.append(next(it))
            aces = hand["split"] and cards[0][0] == "A"
            natural = not hand["split"] and _value(cards)[0] == 21
            while not aces and not natural and _value(cards)[0] < 21:
                options = "HS"
                if len(cards) == 2:
                    options += "D"
                    if cards[0][0] == cards[1][0] and len(box) == 1:
                        options += "P"
                letter = choose(options)
                letters += letter
                if letter == "S":
                    break
                if letter == "P":
                    box.insert(i + 1, {"cards": [cards.pop()], "split": True, "doubled": False})
                    hand["split"] = True
                    cards.append(next(it))
                    aces = cards[0][0] == "A"
                    continue
                cards.append(next(it))
                if letter == "D":
                    hand["doubled"] = True
                    break
            i += 1
        hands[n], actions[n] = box, letters

    dealer = [up, next(it)]
    dealer_bj = _value(dealer)[0] == 21

    def is_bj(hand):
        return not hand["split"] and len(hand["cards"]) == 2 and _value(hand["cards"])[0] == 21

    live = [h for n in numbers for h in hands[n] if _value(h["cards"])[0] <= 21 and not is_bj(h)]
    while live and (_value(dealer)[0] < 17 or _value(dealer) == (17, True)):
        dealer.append(next(it))
    d = _value(dealer)[0]

    def credit(hand, own, index, follow_loss):
        v = _value(hand["cards"])[0]
        if v > 21:
            return 0
        if dealer_bj:
            if is_bj(hand):
                return own
            return own - (stake if index == 0 else 0) if follow_loss == "original" else 0
        if is_bj(hand):
            return own + _round_half(Fraction(3 * own, 2), rounding)
        if d > 21 or v > d:
            return 2 * own
        return own if v == d else 0

    main = {
        n: sum(credit(h, stake * (2 if h["doubled"] else 1), i, loss) for i, h in enumerate(hands[n])) for n in numbers
    }
    behind = {n: credit(hands[n][0], stake, 1, "all") for n in numbers}
    insurance = (3 * stake if dealer_bj else 0) if up[0] == "A" else stake
    used = len(shoe) - len(list(it))
    return actions, main, behind, dealer, used, insurance


@settings(max_examples=300, deadline=None)
@given(
    shoe=st.lists(st.sampled_from(CARD_CODES), min_size=60, max_size=60),
    numbers=st.lists(st.integers(1, 7), min_size=1, max_size=3, unique=True).map(sorted),
    stake=st.integers(1, 25),
    rounding=st.sampled_from(["floor", "half_up", "half_even"]),
    loss=st.sampled_from(["all", "original"]),
    data=st.data(),
)
def test_replay_and_settlement_agree_with_a_simple_evaluator(shoe, numbers, stake, rounding, loss, data):
    rules = replace(RULES, rounding=rounding, doubled_or_split_lose_to_dealer_blackjack=loss)

    def choose(options: str) -> str:
        return data.draw(st.sampled_from(options))

    try:
        actions, main, behind, dealer, used, insurance = _simulate(shoe, numbers, choose, stake, rounding, loss)
    except StopIteration:
        assume(False)
    play = replay_round(rules, shoe, [BoxActions(n, actions[n]) for n in numbers])
    assert play.complete and play.unfinished_hands == ()
    assert all(d.legal and d.carried_out for d in play.decisions)
    assert list(play.dealer) == dealer and play.cards_used == used
    for n in numbers:
        assert settle_box(rules, play, n, stake) == main[n]
        assert settle_bet_behind(rules, play, n, stake) == behind[n]
    assert settle_insurance(rules, play, stake) == insurance


# Cards with many pairs, aces and tens, so that splits, blackjacks and busts come often; ZZ is not a card.
_FEW_CARDS = ("AS", "AH", "8S", "8H", "8D", "TS", "KH", "KS", "5C", "6D", "2H", "9C", "4S", "7D", "ZZ")


@settings(max_examples=400, deadline=None)
@given(
    shoe=st.lists(st.sampled_from(_FEW_CARDS), max_size=16),
    boxes=st.lists(st.tuples(st.integers(1, 7), st.text(alphabet="HSDPX", max_size=6)), min_size=1, max_size=3),
    stake=st.integers(1, 25),
)
def test_any_recorded_data_replays_without_crashing_and_keeps_the_invariants(shoe, boxes, stake):
    play = replay_round(RULES, shoe, [BoxActions(n, a) for n, a in boxes])
    dealt = dealt_positions(play)
    assert [d.shoe_index for d in dealt] == list(range(play.cards_used))
    assert all(d.card == shoe[d.shoe_index] for d in dealt)
    assert play.cards_used == sum(len(h.cards) for b in play.boxes for h in b.hands) + len(play.dealer)
    assert play.cards_used <= len(shoe)
    max_odds = max(RULES.blackjack_odds, RULES.win_odds)
    for box in play.boxes:
        staked = total_staked(play, box.box, stake)
        credit = settle_box(RULES, play, box.box, stake)
        assert 0 <= credit <= staked * (1 + max_odds)
        assert all(h.ended_by in ENDED_BY for h in box.hands)
        if not play.complete:
            assert credit == staked
            continue
        if len(box.hands) == 1:
            hand = box.hands[0]
            own = stake * (2 if hand.doubled else 1)
            assert credit in {0, own, 2 * own, stake + (3 * stake) // 2}
        assert settle_bet_behind(RULES, play, box.box, stake) in {0, stake, 2 * stake, stake + (3 * stake) // 2}
    if play.complete:
        assert len(play.decisions) == sum(len(actions) for _, actions in boxes)  # every recorded letter is one decision
        assert all(d.reason is None if d.legal else d.reason for d in play.decisions)


@given(
    shoe=st.lists(st.sampled_from(_FEW_CARDS), max_size=16),
    boxes=st.lists(st.tuples(st.integers(1, 7), st.text(alphabet="HSDPX", max_size=6)), min_size=1, max_size=3),
)
def test_box_cards_and_totals_are_what_the_dealt_cards_say(shoe, boxes):
    # RoundPlay.box_cards reads each box's hands directly; the oracle: dealt_positions, box by box in shoe order.
    play = replay_round(RULES, shoe, [BoxActions(n, a) for n, a in boxes])
    dealt = dealt_positions(play)
    assert play.box_cards == tuple(tuple(d.card for d in dealt if d.box == box.box) for box in play.boxes)
    # hand_total hands out one shared Total per (value, soft): the same as one worked out afresh
    for hand in [h for box in play.boxes for h in box.hands] + [None]:
        cards = hand.cards if hand is not None else play.dealer
        value, soft = _value(list(cards))
        assert hand_total(cards) == Total(value, soft)


def test_double_not_offered_when_the_ruleset_says_so():
    # 5S box, 7C up, 6H box (11). D with doubling off: flagged, still carried out (9S, 20, stake doubled).
    no_double = replace(RULES, double_on_first_two_cards=False)
    play = deal("5S 7C 6H 9S KH", (1, "D"), rules=no_double)
    double = only_decision(play, "D")
    assert not double.legal and double.carried_out and double.reason == "double (the ruleset does not offer it)"
    assert double.allowed == {"H", "S"}
    # The same round under the bundled rules: legal.
    assert only_decision(deal("5S 7C 6H 9S KH", (1, "D")), "D").legal
