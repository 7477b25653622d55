"""Blackjack's explanation lines written by a kernel (engine/games/blackjack/lines.py) against the readable engine's
(audit._explain, decision_times.timing_line: bet_by_bet=True replays every round through them), at the places
where the writer does its own work: card numbers crossing a digit (9 -> 10, 99 -> 100), a split hand numbered 2,
the dealer's rule words on each total, decisions in time with a box or the reveal not recorded. Each round is
checked to be one the kernel replays (plain), so its lines are the writer's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.betting import TableFacts
from engine.games.blackjack import audit
from engine.games.blackjack.audit import RecordedRound, ShoeFacts, ShoeRounds, _Played, audit_shoe, dealing_sequence
from engine.games.blackjack.records import card_codes
from engine.games.blackjack.rules import load_blackjack_rules
from engine.games.blackjack.strategy import load_basic_strategy

RULES = load_blackjack_rules()
CHART = load_basic_strategy()
TABLE = TableFacts("BJ1", "EUR", 100_000, {"MAIN": (100, 100_000)})
CLOSED = 1_700_000_000_000_000


def _lines(boxes: dict[int, tuple[str, str]], dealer: str, *, burn: int = 1, rules=RULES, times=None,
           revealed: int | None = None) -> tuple[str, ...]:
    """The kernel's explanation of one round dealt after `burn` cards, checked equal to the readable engine's."""
    box_cards = tuple(tuple(cards.split()) for cards, _ in boxes.values())
    dealer_cards = tuple(dealer.split())
    rules = replace(rules, burn_cards=burn)
    shoe = ShoeFacts("S1", 8, ("2C",) * burn + tuple(dealing_sequence(dealer_cards, box_cards)), None)
    rounds = [RecordedRound("R1", 1, "settled", CLOSED, dealer_cards, tuple(boxes), box_cards,
                            tuple(letters for _, letters in boxes.values()), (False,) * len(boxes), times, revealed)]
    played = _Played.one(rules, CHART, shoe, ShoeRounds.of(rounds), audit.table_arrays(rules, CHART, TABLE))
    assert played.plain.tolist() == [True]
    fast = audit_shoe(rules, CHART, TABLE, shoe, rounds, [])
    assert fast.rounds == audit_shoe(rules, CHART, TABLE, shoe, rounds, [], bet_by_bet=True).rounds
    return fast.rounds[0].explanation


@pytest.mark.parametrize("burn", [7, 8, 9, 10, 97, 98, 99, 100])
def test_card_numbers_crossing_a_digit(burn):
    lines = _lines({1: ("TH 9D", "S"), 2: ("8C 8D", "S")}, "TS 7C", burn=burn)
    assert lines[0] == f"card {burn} of the shoe: TH to box 1 hand 1"
    assert lines[2] == f"card {burn + 2} of the shoe: TS to dealer"
    assert lines[5] == f"card {burn + 5} of the shoe: 7C to dealer"


def test_a_split_pair_numbers_its_hands():
    # 8s split: hand 1 8C 3D doubled, hand 2 8D TS stood; the dealer 9H 7S draws to 16 then takes TC (bust)
    lines = _lines({3: ("8C 8D 3D 5H TS", "PDS")}, "9H 7S TC")
    assert "card 3 of the shoe: 8D to box 3 hand 2" in lines
    assert "box 3 hand 1: 8C 3D (hard 11) against 9H: D (legal)" in lines
    assert "box 3 hand 2: 8D TS (hard 18) against 9H: S (legal)" in lines
    assert lines[-3:] == ("dealer 9H: draws (rule: hit on 16 or less)",
                          "dealer 9H 7S: draws (rule: hit on 16 or less)",
                          "dealer 9H 7S TC: stands (rule: stand on hard 26)")


@pytest.mark.parametrize("h17,dealer,last", [
    (True, "AS 6D TC", "stand on hard 17"),
    (True, "AS 6D 4H", "stand on soft 21"),
    (False, "AS 6D", "stand on soft 17"),
    (True, "6S AD 3C", "stand on soft 20"),
])
def test_the_dealers_rule_words(h17, dealer, last):
    lines = _lines({1: ("TH 8D", "S")}, dealer, rules=replace(RULES, hits_soft_17=h17))
    assert lines[-1].endswith(f": stands (rule: {last})")


def test_decisions_in_time_with_a_box_or_the_reveal_not_recorded():
    at = CLOSED + 5_000_000
    boxes = {1: ("TH 5D 2C", "HS"), 2: ("9C 9H", "S")}
    lines = _lines(boxes, "TS 8C", times=((at, at + 1_000_001), None), revealed=None)
    assert lines[-1] == ("decisions in time: box 1 H at 2023-11-14T22:13:25.000000Z; box 1 S at "
                         "2023-11-14T22:13:26.000001Z; the dealer's second card dealt not recorded")
    lines = _lines(boxes, "TS 8C", times=(None, None), revealed=at + 3_000_000)
    assert lines[-1] == ("decisions in time: none recorded; the dealer's second card dealt at "
                         "2023-11-14T22:13:28.000000Z")


def _shoe_of(rounds: list[tuple[dict[int, tuple[str, str]], str, tuple | None, int | None]], burn: int
             ) -> tuple[ShoeFacts, list[RecordedRound]]:
    """A shoe holding `burn` cards, then each round's (boxes, dealer, box instants, reveal) cards in dealing order."""
    cards, recorded = ["2C"] * burn, []
    for no, (boxes, dealer, times, revealed) in enumerate(rounds, 1):
        box_cards = tuple(tuple(c.split()) for c, _ in boxes.values())
        cards += dealing_sequence(tuple(dealer.split()), box_cards)
        recorded.append(RecordedRound(f"R{no}", no, "settled", CLOSED, tuple(dealer.split()), tuple(boxes), box_cards,
                                      tuple(letters for _, letters in boxes.values()), (False,) * len(boxes), times,
                                      revealed))
    return ShoeFacts(f"S{burn}", 8, tuple(cards), None), recorded


def test_the_lines_of_a_tables_shoes_written_at_once_are_each_shoes_own():
    """played_lines of a table's shoes replayed at once (as audit_plain_shoes replays them: their columns end to
    end, the instants' texts shared) gives each shoe's rounds the readable engine's lines, in order: offsets past a
    shoe with no decision, a split's cards, an instant recorded in one shoe and not the next, a round that is not
    plain (a letter that is no decision)."""
    at = CLOSED + 5_000_000
    shoes = [
        _shoe_of([({3: ("8C 8D 3D 5H TS", "PDS")}, "9H 7S TC", ((at, at + 1, at + 2),), at + 3),
                  ({1: ("TH 9D", "S"), 2: ("AS KD", "")}, "TS 7C", None, None)], burn=2),
        _shoe_of([({1: ("TH JD", "S")}, "AS 6D TC", None, None)], burn=2),
        _shoe_of([({2: ("TH 5D 2C", "HS"), 5: ("9C 9H", "X")}, "TS 6C", None, None),  # (no decision: not plain)
                  ({4: ("5H 6H 5D", "HS")}, "7D 8D 4S", ((at + 9, at + 10),), at + 11)], burn=2),
    ]
    rules = replace(RULES, burn_cards=2)
    audits = [audit_shoe(rules, CHART, TABLE, shoe, rounds, [], explained=False) for shoe, rounds in shoes]
    assert [[rep is None for rep in a.rounds] for a in audits] == [[True, True], [True], [False, True]]
    readable = [rep.explanation for shoe, rounds in shoes
                for rep in audit_shoe(rules, CHART, TABLE, shoe, rounds, [], bet_by_bet=True).rounds]
    cards = [np.array(card_codes(shoe.cards), np.int64) for shoe, _ in shoes]
    table = _Played(rules, CHART, ShoeRounds.of([r for _, rounds in shoes for r in rounds]), audit.Dealt(
        np.array([0, 0, 1, 2, 2]), np.array([0, 0, 2, 3, 3]), np.concatenate(cards),
        np.cumsum([0, *(len(c) for c in cards)]), np.full(3, -1)), audit.table_arrays(rules, CHART, TABLE))
    assert table.plain.tolist() == np.concatenate([a.played.plain for a in audits]).tolist()
    written = audit.played_lines(table).explanations()
    assert written[:3] + written[4:] == readable[:3] + readable[4:]
    assert written[3] == ()  # (not plain: its report explains it)
    assert written[-1][-1] == ("decisions in time: box 4 H at 2023-11-14T22:13:25.000009Z; box 4 S at "
                               "2023-11-14T22:13:25.000010Z; the dealer's second card dealt at "
                               "2023-11-14T22:13:25.000011Z")
