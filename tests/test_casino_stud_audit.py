"""Hand-worked casino stud table-days through the audit (engine/games/casino_stud/audit.py): every amount
worked from RULES.md § Casino 5-card stud and docs/casino-stud.md, every planted fault found exactly
once (one fault, one finding), the boundaries pinned. Money in EUR cents: ante 10.00 (1000), call 20.00,
jackpot chip 1.00 (100); the pools open at jackpot 5,000.00 and next pool 100.00."""

from __future__ import annotations

import dataclasses

import pytest

from engine.betting import TableFacts
from engine.cards import CARD_CODES
from engine.games.casino_stud.audit import LedgerRow, RecordedBet, RecordedRound, audit_table_rounds
from engine.games.casino_stud.ledger import Pools
from engine.games.casino_stud.rules import load_casino_stud_rules

RULES = load_casino_stud_rules("casino_stud_live")
TABLE = TableFacts("T1", "EUR", 1_000_000, {"ANTE": (500, 50_000), "JACKPOT": (100, 100)})
CLOSE = 1_700_000_000_000_000  # betting closed, microseconds
JP, NP = 500_000, 10_000

# hands
KINGS = ("KS", "KD", "7C", "4H", "2S")  # PAIR
QUEEN_HIGH = ("QH", "JD", "9C", "6S", "3D")  # does not qualify
AK_HIGH = ("AS", "KC", "5H", "4D", "2D")  # qualifies, just
AQ_HIGH = ("AD", "QC", "JH", "9H", "8S")  # the best hand that does not qualify
ROYAL = ("AH", "KH", "QH", "JH", "TH")
STRAIGHT_FLUSH = ("5D", "6D", "7D", "8D", "9D")
CLUB_FLUSH = ("2C", "6C", "8C", "JC", "QC")
NINES = ("9S", "9H", "3H", "4C", "6H")  # PAIR


def deck_for(*hands: tuple[str, ...]) -> tuple[str, ...]:
    """A deck that deals `hands` box by box, the dealer's last: the dealt cards on top, the rest after."""
    dealt = [c for h in hands for c in h]
    assert len(set(dealt)) == len(dealt)
    return tuple(dealt + [c for c in CARD_CODES if c not in dealt])


def stud_round(no: int, boxes: dict[int, tuple[tuple[str, ...], str]], dealer: tuple[str, ...],
               pools: tuple[int, int, int, int], *, status: str = "settled", deck=None, hands=None,
               dealer_hand=None) -> RecordedRound:
    """boxes: box -> (cards, decision); pools: jackpot before/after, next pool before/after."""
    seats = tuple(sorted(boxes))
    cards = tuple(boxes[b][0] for b in seats)
    from engine.games.casino_stud.hands import rank_hand  # the operator's recorded ranks: right unless given

    return RecordedRound(
        f"R{no}", no, status, CLOSE + no * 60_000_000, f"S{no}", deck if deck is not None else deck_for(*cards, dealer),
        seats, cards, tuple(boxes[b][1] for b in seats), dealer,
        tuple(hands) if hands is not None else tuple(rank_hand(c).category for c in cards),
        dealer_hand if dealer_hand is not None else rank_hand(dealer).category, pools[0], pools[1], pools[2],
        pools[3])


def ante(bet_id, round_index, seat, paid, *, call=2000, stake=1000, placed=0, account="A1"):
    return RecordedBet(bet_id, round_index, account, "ANTE", seat, stake, call, paid,
                       CLOSE + (round_index + 1) * 60_000_000 - 1_000_000 + placed)


def jackpot(bet_id, round_index, seat, paid, *, stake=100, placed=0, account="A1", bet_type="JACKPOT"):
    return RecordedBet(bet_id, round_index, account, bet_type, seat, stake, None, paid,
                       CLOSE + (round_index + 1) * 60_000_000 - 1_000_000 + placed)


def audit(rounds, bets, rules=RULES, table=TABLE):
    return audit_table_rounds(rules, table, rounds, bets)


def kinds(result) -> list[tuple[str, str | None, str | None]]:
    return sorted((f.kind, f.round_id, f.bet_id) for f in result.findings)


# -- hand-worked rounds -------------------------------------------------------------------------------


def test_dealer_not_qualifying_with_a_called_box():
    # kings called against a queen-high dealer: ante 1:1, call returned: 10 + 10 + 20 = 40.00;
    # the jackpot chip loses: 0.60 to the jackpot, 0.30 to the next pool, 0.10 to the house
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP + 60, NP, NP + 30))
    result = audit([r], [ante("B1", 0, 1, 4000), jackpot("B2", 0, 1, 0)])
    assert result.expected == [4000, 0] and result.unsettled == [None, None]
    assert result.findings == []
    rep = result.rounds[0]
    assert rep.box_ranks == ("PAIR",) and rep.dealer_rank == "HIGH_CARD" and rep.dealer_qualifies is False
    assert rep.pools_before == Pools(JP, NP) and rep.pools_after == Pools(JP + 60, NP + 30)
    assert rep.expected_box_cards == (KINGS,) and rep.expected_dealer_cards == QUEEN_HIGH
    assert result.ledger == [LedgerRow(0, "R1", 1, "settled", JP, NP, 1, 60, 30, 10, 0, 0, 0, False, JP + 60, NP + 30,
                                       JP + 60, NP + 30)]


def test_equal_hands_push():
    box = ("AC", "KC", "QD", "JS", "9H")
    dealer = ("AD", "KH", "QC", "JD", "9S")  # the same ranks: a qualified dealer, a tie
    r = stud_round(1, {3: (box, "C")}, dealer, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 3, 3000)])
    assert result.expected == [3000] and result.findings == []
    assert result.rounds[0].dealer_qualifies is True
    assert result.ledger == []  # no jackpot bet, no balance moved


def test_a_royal_flush_wins_the_jackpot_and_resets_it_to_the_next_pool():
    # box 2: royal flush called against an ace-king dealer: 10 + 10 + 20 + 20 x 100 = 2,040.00; its jackpot
    # chip wins 100% of the jackpot, 5,000.00; the jackpot becomes the next pool's 100.00, the next pool 0;
    # box 4's losing chip then adds 0.60 and 0.30
    r = stud_round(1, {2: (ROYAL, "C"), 4: (NINES, "F")}, AK_HIGH, (JP, NP + 60, NP, 30))
    bets = [ante("B1", 0, 2, 204_000), jackpot("B2", 0, 2, 500_000), ante("B3", 0, 4, 0, call=0),
            jackpot("B4", 0, 4, 0, account="A2")]
    result = audit([r], bets)
    assert result.expected == [204_000, 500_000, 0, 0] and result.findings == []
    (row,) = result.ledger
    assert (row.prizes_from_jackpot, row.reset, row.to_jackpot, row.to_next_pool, row.to_house) == (
        500_000, True, 60, 30, 10)
    assert (row.jackpot_after_expected, row.next_pool_after_expected) == (NP + 60, 30)


def test_a_fold_still_wins_a_jackpot_prize():
    # a flush folded: the ante is lost, the jackpot chip wins 50 units (50.00) paid by the house; the
    # pools do not move (a winning chip feeds nothing)
    r = stud_round(1, {1: (CLUB_FLUSH, "F")}, AK_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 0, call=0), jackpot("B2", 0, 1, 5_000)])
    assert result.expected == [0, 5_000] and result.findings == []
    (row,) = result.ledger
    assert (row.prizes_from_house, row.to_jackpot, row.jackpot_after_expected) == (5_000, 0, JP)


def test_a_straight_flush_takes_ten_per_cent_of_the_jackpot():
    # 10% of 5,000.01 is 500.001: floored to 500.00
    r = stud_round(1, {1: (STRAIGHT_FLUSH, "C")}, QUEEN_HIGH, (JP + 1, JP + 1 - 50_000, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000), jackpot("B2", 0, 1, 50_000)])
    assert result.expected == [4000, 50_000] and result.findings == []


def test_two_prizes_in_one_round_in_box_order():
    # box 1's straight flush takes 10% of 5,000.00 = 500.00; box 5's royal then takes the 4,500.00 left,
    # and the next pool's 100.00 becomes the jackpot
    dealer = ("2H", "3C", "7S", "JS", "QS")
    r = stud_round(1, {1: (STRAIGHT_FLUSH, "F"), 5: (ROYAL, "F")}, dealer, (JP, NP, NP, 0))
    bets = [jackpot("B5", 0, 5, 450_000, account="A5"), ante("A5a", 0, 5, 0, call=0, account="A5"),
            ante("A1a", 0, 1, 0, call=0), jackpot("B1", 0, 1, 50_000)]
    result = audit([r], bets)
    assert result.expected == [450_000, 0, 0, 50_000] and result.findings == []
    (row,) = result.ledger
    assert row.prizes_from_jackpot == 500_000 and row.reset


def test_a_day_carries_the_pools_from_round_to_round():
    r1 = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP + 60, NP, NP + 30))
    r2 = stud_round(2, {1: (NINES, "F")}, AK_HIGH, (JP + 60, JP + 120, NP + 30, NP + 60))
    r3 = stud_round(3, {1: (KINGS, "C")}, AK_HIGH, (JP + 120, JP + 120, NP + 60, NP + 60))  # no jackpot bet
    bets = [ante("a1", 0, 1, 4000), jackpot("j1", 0, 1, 0), ante("a2", 1, 1, 0, call=0), jackpot("j2", 1, 1, 0),
            ante("a3", 2, 1, 6000)]
    result = audit([r1, r2, r3], bets)
    assert result.findings == [] and result.expected == [4000, 0, 0, 0, 6000]
    assert [row.round_id for row in result.ledger] == ["R1", "R2"]
    assert result.rounds[2].pools_before == Pools(JP + 120, NP + 60)


# -- one fault, one finding ---------------------------------------------------------------------------


def test_an_overpaid_ante():
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 6000)])  # paid the call 1:1 against a dealer who did not qualify
    assert kinds(result) == [("OVERPAID", "R1", "B1")]
    assert result.findings[0].expected == "40.00 EUR" and result.findings[0].recorded == "60.00 EUR"


def test_a_prize_on_a_hand_that_wins_none_is_prize_not_won_only():
    # a pair paid the flush prize; the operator did not feed the pools with it either: still one finding
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000), jackpot("B2", 0, 1, 5_000)])
    assert kinds(result) == [("JACKPOT_PRIZE_NOT_WON", "R1", "B2")]
    assert result.expected == [4000, 0]


def test_a_straight_flush_paid_from_the_next_pool_is_wrong_balance_only():
    # paid 10% of the next pool (10.00), which the operator then reduced: one finding, no balance one
    r = stud_round(1, {1: (STRAIGHT_FLUSH, "C")}, QUEEN_HIGH, (JP, JP, NP, NP - 1_000))
    result = audit([r], [ante("B1", 0, 1, 4000), jackpot("B2", 0, 1, 1_000)])
    assert kinds(result) == [("JACKPOT_PRIZE_WRONG_BALANCE", "R1", "B2")]
    assert result.expected == [4000, 50_000]


def test_a_prize_underpaid_from_the_right_balance_is_underpaid_only():
    r = stud_round(1, {1: (STRAIGHT_FLUSH, "C")}, QUEEN_HIGH, (JP, JP - 40_000, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000), jackpot("B2", 0, 1, 40_000)])
    assert kinds(result) == [("UNDERPAID", "R1", "B2")]


def test_a_pool_off_by_one_minor_unit_is_found_once_where_it_starts():
    # round 2's jackpot after should be 5,001.20: recorded 5,001.21, and the day goes on from there
    r1 = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP + 60, NP, NP + 30))
    r2 = stud_round(2, {1: (KINGS, "C")}, QUEEN_HIGH, (JP + 60, JP + 121, NP + 30, NP + 60))
    r3 = stud_round(3, {1: (KINGS, "C")}, QUEEN_HIGH, (JP + 121, JP + 181, NP + 60, NP + 90))
    bets = [b for i in range(3) for b in (ante(f"a{i}", i, 1, 4000), jackpot(f"j{i}", i, 1, 0))]
    result = audit([r1, r2, r3], bets)
    assert kinds(result) == [("JACKPOT_BALANCE_MISMATCH", "R2", None)]
    f = result.findings[0]
    assert f.expected == "jackpot after 5,001.20 EUR" and f.recorded == "jackpot after 5,001.21 EUR"
    assert [(row.jackpot_after_expected, row.jackpot_after) for row in result.ledger] == [
        (JP + 60, JP + 60), (JP + 120, JP + 121), (JP + 181, JP + 181)]


def test_a_balance_changed_between_rounds_is_found_on_the_later_round():
    r1 = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP + 60, NP, NP + 30))
    r2 = stud_round(2, {1: (KINGS, "C")}, QUEEN_HIGH, (JP + 59, JP + 119, NP + 30, NP + 60))
    bets = [b for i in range(2) for b in (ante(f"a{i}", i, 1, 4000), jackpot(f"j{i}", i, 1, 0))]
    result = audit([r1, r2], bets)
    assert kinds(result) == [("JACKPOT_BALANCE_MISMATCH", "R2", None)]
    assert result.findings[0].expected == "jackpot before 5,000.60 EUR"
    assert result.rounds[1].pools_before == Pools(JP + 60, NP + 30)


def test_a_recorded_rank_that_is_not_the_cards():
    r = stud_round(1, {1: (KINGS, "C"), 2: (NINES, "F")}, QUEEN_HIGH, (JP, JP, NP, NP),
                   hands=("TWO_PAIR", "PAIR"), dealer_hand="PAIR")
    result = audit([r], [ante("B1", 0, 1, 4000), ante("B2", 0, 2, 0, call=0)])
    assert kinds(result) == [("HAND_RANK_MISMATCH", "R1", None)]
    assert result.findings[0].expected == "box 1 PAIR; dealer HIGH_CARD"
    assert result.expected == [4000, 0]  # settled on the cards, not on the recorded names


def test_a_card_recorded_where_the_deck_has_another():
    deck = deck_for(KINGS, QUEEN_HIGH)
    seen = ("KS", "KD", "7C", "4H", "2D")  # the reader saw 2D where the deck deals 2S
    r = stud_round(1, {1: (seen, "C")}, QUEEN_HIGH, (JP, JP, NP, NP), deck=deck)
    result = audit([r], [ante("B1", 0, 1, 4000)])
    assert kinds(result) == [("CARD_SEQUENCE_MISMATCH", "R1", None)]
    assert result.findings[0].expected == "box 1 deck[4] 2S"


def test_a_deck_that_is_not_52_distinct_cards():
    deck = deck_for(KINGS, QUEEN_HIGH)
    deck = deck[:51] + (deck[50],)  # the last card (never dealt) a copy of another
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP), deck=deck)
    result = audit([r], [ante("B1", 0, 1, 4000)])
    assert kinds(result) == [("SHOE_COMPOSITION", None, None)]
    assert result.findings[0].shoe_id == "S1" and result.rounds[0].finding_kinds == ("SHOE_COMPOSITION",)


def test_a_missing_decision_is_settled_as_the_recorded_call_says():
    r = stud_round(1, {1: (KINGS, "")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000)])  # the call is recorded on the bet: it called
    assert kinds(result) == [("DECISION_MISSING", "R1", None)] and result.expected == [4000]
    r = stud_round(1, {1: (KINGS, None)}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 0, call=None)])  # no call recorded: folded
    assert kinds(result) == [("DECISION_MISSING", "R1", None)] and result.expected == [0]


@pytest.mark.parametrize("letters", ["CF", "X", "c"])
def test_an_illegal_decision(letters):
    r = stud_round(1, {1: (KINGS, letters)}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000)])
    assert kinds(result) == [("ILLEGAL_DECISION", "R1", None)] and result.expected == [4000]


@pytest.mark.parametrize("call, found", [(2000, []), (1999, ["ADDED_STAKE_MISMATCH"]),
                                         (2001, ["ADDED_STAKE_MISMATCH"])])
def test_a_call_is_exactly_twice_the_ante(call, found):
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000, call=call)])
    assert [k for k, _, _ in kinds(result)] == found
    assert result.expected == [4000]  # paid on the right call


def test_a_call_recorded_on_a_fold():
    r = stud_round(1, {1: (KINGS, "F")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 0, call=2000)])
    assert kinds(result) == [("ADDED_STAKE_MISMATCH", "R1", "B1")] and result.expected == [0]


def test_a_jackpot_bet_without_an_ante_is_refunded_and_feeds_nothing():
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000), jackpot("B2", 0, 6, 100, account="A6")])
    assert kinds(result) == [("JACKPOT_WITHOUT_ANTE", "R1", "B2")] and result.expected == [4000, 100]
    assert result.ledger == [] and result.rounds[0].pools_after == Pools(JP, NP)  # nothing settled on a hand


def test_a_bet_type_the_table_does_not_offer_is_refunded():
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000), jackpot("B2", 0, 1, 500, bet_type="BONUS", stake=500)])
    assert kinds(result) == [("BET_TYPE_NOT_OFFERED", "R1", "B2")] and result.expected == [4000, 500]


def test_an_ante_on_a_box_that_was_not_dealt_is_refunded():
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000), ante("B2", 0, 3, 3000, account="A3")])
    assert kinds(result) == [("BET_ON_EMPTY_BOX", "R1", "B2")] and result.expected == [4000, 3000]


# -- boundaries ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("stake, found", [(500, []), (50_000, []), (499, ["STAKE_BELOW_MIN"]),
                                          (50_001, ["STAKE_ABOVE_MAX"])])
def test_an_ante_exactly_at_a_limit_is_within_it(stake, found):
    r = stud_round(1, {1: (NINES, "F")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 0, stake=stake, call=0)])
    assert [k for k, _, _ in kinds(result)] == found


@pytest.mark.parametrize("stake, found", [(100, []), (99, ["STAKE_BELOW_MIN"]), (101, ["STAKE_ABOVE_MAX"])])
def test_the_jackpot_chip_is_exactly_one_unit(stake, found):
    # a stake of 101: still a losing bet, its shares 0.60 / 0.30 / 0.11 (the remainder to the house)
    r = stud_round(1, {1: (NINES, "F")}, QUEEN_HIGH, (JP, JP + stake * 60 // 100, NP, NP + stake * 30 // 100))
    result = audit([r], [ante("B1", 0, 1, 0, call=0), jackpot("B2", 0, 1, 0, stake=stake)])
    assert [k for k, _, _ in kinds(result)] == found
    assert result.ledger[0].to_house == stake - stake * 60 // 100 - stake * 30 // 100


def test_a_bet_at_the_close_of_betting_is_on_time_one_microsecond_later_is_late():
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP))
    at_close = dataclasses.replace(ante("B1", 0, 1, 4000), placed_at=r.betting_closed_at)
    late = dataclasses.replace(ante("B2", 0, 1, 4000, account="A2"), placed_at=r.betting_closed_at + 1)
    result = audit([r], [at_close, late])
    assert kinds(result) == [("LATE_BET", "R1", "B2")]


def test_ace_king_qualifies_ace_queen_does_not():
    box = ("KD", "KH", "9D", "8D", "7S")  # kings, called
    qualified = stud_round(1, {1: (box, "C")}, AK_HIGH, (JP, JP, NP, NP))
    not_qualified = stud_round(2, {1: (box, "C")}, AQ_HIGH, (JP, JP, NP, NP))
    result = audit([qualified, not_qualified], [ante("B1", 0, 1, 6000), ante("B2", 1, 1, 4000)])
    assert result.findings == [] and result.expected == [6000, 4000]
    assert [rep.dealer_qualifies for rep in result.rounds] == [True, False]


# -- cancelled and unsettled rounds -------------------------------------------------------------------


def test_a_cancelled_round_refunds_every_stake_and_moves_no_pool():
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP), status="cancelled")
    result = audit([r], [ante("B1", 0, 1, 3000), jackpot("B2", 0, 1, 100)])
    assert result.expected == [3000, 100] and result.findings == []
    assert result.rounds[0].pools_after == Pools(JP, NP)
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP), status="cancelled")
    result = audit([r], [ante("B1", 0, 1, 1000)])  # the call not refunded
    assert kinds(result) == [("UNDERPAID", "R1", "B1")]


def test_a_cancelled_round_that_fed_the_pools_is_a_balance_mismatch():
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP + 60, NP, NP + 30), status="cancelled")
    result = audit([r], [ante("B1", 0, 1, 3000), jackpot("B2", 0, 1, 100)])
    assert kinds(result) == [("JACKPOT_BALANCE_MISMATCH", "R1", None)]


def test_a_round_whose_cards_are_not_hands_cannot_be_settled_and_the_day_goes_on():
    bad = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP + 60, NP, NP + 30))
    bad = dataclasses.replace(bad, box_cards=(KINGS[:4],))
    good = stud_round(2, {1: (KINGS, "C")}, QUEEN_HIGH, (JP + 60, JP + 120, NP + 30, NP + 60))
    bets = [ante("a1", 0, 1, 4000), jackpot("j1", 0, 1, 0), ante("a2", 1, 1, 4000), jackpot("j2", 1, 1, 0)]
    result = audit([bad, good], bets)
    assert result.findings == []
    assert result.expected == [None, None, 4000, 0]
    assert result.unsettled[0] == result.unsettled[1] and "are not five distinct cards" in result.unsettled[0]
    assert result.rounds[0].unsettled_reason == result.unsettled[0] and result.rounds[0].pools_after is None
    assert result.ledger[0].jackpot_after_expected is None


def test_a_bet_on_a_round_the_day_does_not_have_is_left_unsettled():
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP))
    result = audit([r], [ante("B1", 0, 1, 4000), dataclasses.replace(ante("B2", 0, 1, 4000), round_index=3)])
    assert result.expected == [4000, None] and "round_index 3" in result.unsettled[1]


def test_status_neither_settled_nor_cancelled_leaves_the_bets_unsettled():
    r = stud_round(1, {1: (KINGS, "C")}, QUEEN_HIGH, (JP, JP, NP, NP), status="open")
    result = audit([r], [ante("B1", 0, 1, 4000)])
    assert result.expected == [None] and "neither settled nor cancelled" in result.unsettled[0]


# -- the explanation ----------------------------------------------------------------------------------


def test_the_explanation_reads_the_round():
    r = stud_round(1, {2: (ROYAL, "C"), 4: (NINES, "F")}, AK_HIGH, (JP, NP + 60, NP, 30))
    bets = [ante("B1", 0, 2, 204_000), jackpot("B2", 0, 2, 500_000), ante("B3", 0, 4, 0, call=0),
            jackpot("B4", 0, 4, 0, account="A2")]
    lines = audit([r], bets).rounds[0].explanation
    text = "\n".join(lines)
    assert "box 2 (deck cards 0-4): AH KH QH JH TH: royal flush (ROYAL_FLUSH); calls" in lines
    assert "box 4 (deck cards 5-9): 9S 9H 3H 4C 6H: pair of nines, six, four, three kickers (PAIR); folds" in lines
    assert "dealer (deck card 10 open, 11-14 after the decisions): AS KC 5H 4D 2D: high card, ace, king, five, " \
           "four, two (HIGH_CARD)" in lines
    assert "the dealer qualifies (ace-king or better)" in lines
    assert "owed 2,040.00 EUR, paid 2,040.00 EUR" in text
    assert "ROYAL_FLUSH wins 100% of the jackpot 5,000.00 EUR; owed 5,000.00 EUR" in text
    assert "pools before: jackpot 5,000.00 EUR, next pool 100.00 EUR" in text
    assert "the jackpot was won: the next pool became the jackpot" in text
    assert lines[-1] == ("pools after: jackpot 100.60 EUR, next pool 0.30 EUR (expected); recorded jackpot "
                         "100.60 EUR, next pool 0.30 EUR")
