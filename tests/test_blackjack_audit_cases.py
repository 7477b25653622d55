"""The blackjack shoe audit on hand-built one-deck shoes: every expected value worked out by hand.

Dealing order (004, no hole card): the burn card, box 1's first card, the upcard, box 1's second card,
then box 1's further cards, then the dealer's further cards."""

from __future__ import annotations

from engine.cards import CARD_CODES
from engine.games.blackjack.audit import RecordedBet, RecordedRound, ShoeFacts, TableFacts, audit_shoe
from engine.games.blackjack.rules import load_blackjack_rules
from engine.games.blackjack.strategy import load_basic_strategy

RULES = load_blackjack_rules()
CHART = load_basic_strategy()
TABLE = TableFacts("T1", "EUR", 500_000, {"MAIN": (100, 100_000)})
CLOSED = 1_000_000


def shoe(*first: str) -> ShoeFacts:
    """One full deck: `first` in that order, then the other 52 - len(first) cards."""
    rest = [c for c in CARD_CODES if c not in first]
    return ShoeFacts("S1", 1, (*first, *rest), None)


def round_(dealer: tuple[str, ...], box: tuple[str, ...], actions: str, status: str = "settled") -> RecordedRound:
    return RecordedRound("R1", 1, status, CLOSED, dealer, (1,), (box,), (actions,), (False,))


def main(stake: int = 1000, paid: int = 0, placed: int = CLOSED, bet_type: str = "MAIN") -> RecordedBet:
    return RecordedBet("B1", 0, "A1", bet_type, 1, stake, 0, paid, placed)


def kinds(result) -> list[str]:
    return sorted(f.kind for f in result.findings)


def test_a_clean_round_settles_and_flags_nothing():
    # burn 2C; box TS, up 6H, box 9D: 19 stands. Dealer 6H TH = 16 draws 8C: 24, bust. Box wins 1:1.
    s = shoe("2C", "TS", "6H", "9D", "TH", "8C")
    result = audit_shoe(RULES, CHART, TABLE, s, [round_(("6H", "TH", "8C"), ("TS", "9D"), "S")], [main(paid=2000)])
    assert result.credits() == [2000] and kinds(result) == []
    assert result.rounds[0].shoe_position == 1  # after the one burned card


def test_the_dealer_standing_on_16_is_flagged_and_paid_as_recorded():
    # As above, but the dealer stops at 6H TH = 16 (H17: must draw). Box 19 beats 16: paid as recorded, 2000.
    s = shoe("2C", "TS", "6H", "9D", "TH", "8C")
    result = audit_shoe(RULES, CHART, TABLE, s, [round_(("6H", "TH"), ("TS", "9D"), "S")], [main(paid=2000)])
    assert kinds(result) == ["DEALER_DRAW_RULE"] and result.credits() == [2000]


def test_the_dealer_standing_on_hard_17_is_not_flagged():
    # burn 2C; box TS, up 7H, box 9D (19) stands; dealer 7H TH = hard 17 stands. 19 beats 17: 2000.
    s = shoe("2C", "TS", "7H", "9D", "TH")
    result = audit_shoe(RULES, CHART, TABLE, s, [round_(("7H", "TH"), ("TS", "9D"), "S")], [main(paid=2000)])
    assert kinds(result) == [] and result.credits() == [2000]


def test_the_dealer_standing_on_soft_17_is_flagged():
    # burn 2C; box TS, up AH, box 9D (19) stands; dealer AH 6C = soft 17 must hit (H17). As recorded 19 > 17.
    s = shoe("2C", "TS", "AH", "9D", "6C")
    result = audit_shoe(RULES, CHART, TABLE, s, [round_(("AH", "6C"), ("TS", "9D"), "S")], [main(paid=2000)])
    assert kinds(result) == ["DEALER_DRAW_RULE"]


def test_a_bet_exactly_when_betting_closes_is_not_late_one_microsecond_later_is():
    s = shoe("2C", "TS", "6H", "9D", "TH", "8C")
    rounds = [round_(("6H", "TH", "8C"), ("TS", "9D"), "S")]
    assert kinds(audit_shoe(RULES, CHART, TABLE, s, rounds, [main(paid=2000, placed=CLOSED)])) == []
    assert kinds(audit_shoe(RULES, CHART, TABLE, s, rounds, [main(paid=2000, placed=CLOSED + 1)])) == ["LATE_BET"]


def test_stakes_exactly_at_the_limits_pass_one_unit_beyond_is_flagged():
    s = shoe("2C", "TS", "6H", "9D", "TH", "8C")
    rounds = [round_(("6H", "TH", "8C"), ("TS", "9D"), "S")]
    for stake, want in ((100, []), (99, ["STAKE_BELOW_MIN"]), (100_000, []), (100_001, ["STAKE_ABOVE_MAX"])):
        assert kinds(audit_shoe(RULES, CHART, TABLE, s, rounds, [main(stake, paid=2 * stake)])) == want, stake


def test_a_bet_of_another_game_is_refunded_and_flagged():
    s = shoe("2C", "TS", "6H", "9D", "TH", "8C")
    rounds = [round_(("6H", "TH", "8C"), ("TS", "9D"), "S")]
    bets = [main(paid=2000), RecordedBet("B2", 0, "A1", "TIE", 1, 500, None, 500, CLOSED)]
    result = audit_shoe(RULES, CHART, TABLE, s, rounds, bets)
    assert result.credits() == [2000, 500] and kinds(result) == ["BET_TYPE_NOT_OFFERED"]


def test_a_cancelled_round_refunds_and_judges_no_decision():
    # the box "doubles" on three cards, but the round was cancelled: refund, no finding
    s = shoe("2C", "TS", "6H", "2D", "3C", "4S", "TH", "8C")
    result = audit_shoe(RULES, CHART, TABLE, s, [round_(("6H", "TH", "8C"), ("TS", "2D", "3C", "4S"), "HD",
                                                       status="cancelled")], [main(paid=1000)])
    assert result.credits() == [1000] and kinds(result) == []


def test_cards_that_disagree_with_the_decisions_cannot_be_settled():
    # the box is recorded with three cards but only "S": the record cannot be replayed; the bet is unsettled
    s = shoe("2C", "TS", "6H", "2D", "3C", "TH", "8C")
    result = audit_shoe(RULES, CHART, TABLE, s, [round_(("6H", "TH", "8C"), ("TS", "2D", "3C"), "S")],
                        [main(paid=2000)])
    assert result.credits() == [None] and "cannot be settled" in result.unsettled[0]
