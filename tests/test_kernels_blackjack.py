"""Blackjack's compiled kernels (engine/games/blackjack/kernel.py, issue 42) against the readable engine they
implement. The property test audits random shoes under random rulesets (every switch of the ruleset file),
with auto-played boxes that follow the chart or not, tampered cards, letters and dealer hands, a cut card, and
bets of every type at the limits, on time or not, paid right or not: the audit with the kernels (plain rounds
from play_rounds, bets priced and screened by settle_bets) gives the same reports, explanations, findings and
credits as with every round through play.replay_round and every bet through credit() and check_bet()
(bet_by_bet=True). Hand-worked rounds pin the boundaries (blackjack against a three-card 21, 21 against 22, a
split pair of aces, a double, the dealer's blackjack against insurance, every row of the pair paytable), each
checked to be one the kernel settles itself."""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import kernels
from engine.betting import TableFacts
from engine.cards import CARD_CODES, new_shoe
from engine.games.blackjack.audit import (
    KERNEL_KINDS,
    Dealt,
    RecordedBet,
    RecordedRound,
    ShoeFacts,
    ShoeRounds,
    _Played,
    audit_plain_shoes,
    audit_shoe,
    chart_cells,
    dealing_sequence,
    played_lines,
    table_arrays,
)
from engine.games.blackjack.bet_checks import FlaggedBets
from engine.games.blackjack.hand import hand_total
from engine.games.blackjack.kernel import LETTERS, chart_letter
from engine.games.blackjack.play import BoxActions, replay_round
from engine.games.blackjack.records import ShoeBets, card_codes
from engine.games.blackjack.rules import load_blackjack_rules
from engine.games.blackjack.strategy import basic_strategy_decision, load_basic_strategy

RULES = load_blackjack_rules()
CHART = load_basic_strategy()
TABLE = TableFacts("BJ1", "EUR", 100_000, {"MAIN": (100, 100_000), "PAIR": (100, 10_000),
                                            "INSURANCE": (50, 50_000), "BET_BEHIND": (100, 100_000)})
CLOSED = 1_700_000_000_000_000


def _chart_letters(rules, cards: list[str], boxes: list[int], letters: list[str], j: int) -> str:
    """Box j's letters as basic strategy plays it (the earlier boxes' letters given): a probe "S" shows
    the hand the next letter is for and what is allowed there."""
    text = ""
    for _ in range(12):
        probe = [BoxActions(b, a) for b, a in zip(boxes, [*letters[:j], text + "S", *[""] * (len(boxes) - j - 1)],
                                                  strict=True)]
        play = replay_round(rules, cards, probe)
        mine = [d for d in play.decisions if d.box == boxes[j]]
        if not play.complete or not mine or not mine[-1].legal:
            return text
        d = mine[-1]
        text += basic_strategy_decision(CHART, d.cards, d.upcard, can_double=d.can_double, can_split=d.can_split)
    return text


def _played(rules, shoe: ShoeFacts, rounds: list[RecordedRound]) -> _Played:
    """The kernel's replay of the shoe's rounds."""
    return _Played.one(rules, CHART, shoe, ShoeRounds.of(rounds), table_arrays(rules, CHART, TABLE))


def _shoe(seed: int, rounds: int, rules, decks: int) -> tuple[ShoeFacts, list[RecordedRound]]:
    """A shoe dealt round by round: random boxes, letters random or by the chart (auto-played mostly), recorded as
    played, then a few tampered with (a box's extra card, a card swapped for another, a dealer card too many
    or too few, a letter that is not one, a box's last stands not recorded: its hands left live), a random
    round cancelled, the cut card somewhere."""
    rng = random.Random(seed)
    cards = list(new_shoe(decks))
    rng.shuffle(cards)
    position, recorded = rules.burn_cards, []
    for no in range(1, rounds + 1):
        boxes = sorted(rng.sample(range(1, 8), rng.randint(1, 5)))
        auto = [rng.random() < 0.4 for _ in boxes]
        letters = ["".join(rng.choice("HSDP") for _ in range(rng.randint(0, 3))) or "S" for _ in boxes]
        for j in range(len(boxes)):
            # (an auto-played box mostly by the chart, a player who plays the chart too)
            if rng.random() < (0.85 if auto[j] else 0.7):
                letters[j] = _chart_letters(rules, cards[position:], boxes, letters, j)
        play = replay_round(rules, cards[position:], [BoxActions(b, a, x) for b, a, x in
                                                      zip(boxes, letters, auto, strict=True)])
        if not play.complete:
            break
        box_cards = [list(c) for c in play.box_cards]
        dealer = list(play.dealer)
        tamper = rng.random()
        if tamper < 0.05:
            box_cards[0].append(cards[-1])
        elif tamper < 0.1:
            box_cards[-1][1] = cards[-2]
        elif tamper < 0.15:
            dealer.append(cards[-3])
        elif tamper < 0.2 and len(dealer) > 2:
            dealer.pop()
        elif tamper < 0.25:
            letters[0] += "X"
        elif tamper < 0.4:
            letters[-1] = letters[-1].rstrip("S")
        recorded.append(RecordedRound(f"R{no}", no, "cancelled" if rng.random() < 0.1 else "settled",
                                      CLOSED + no, tuple(dealer), tuple(boxes), tuple(tuple(c) for c in box_cards),
                                      tuple(letters), tuple(auto)))
        position += len(play.dealer) + sum(len(c) for c in play.box_cards)
    cut = rng.choice([None, rng.randint(0, max(position, 1))])
    return ShoeFacts("S1", decks, tuple(cards), cut), recorded


RULESETS = st.fixed_dictionaries({
    "hits_soft_17": st.booleans(), "double_after_split": st.booleans(), "double_on_split_aces": st.booleans(),
    "max_splits": st.integers(0, 3), "split_same_rank_only": st.booleans(), "split_aces_one_card": st.booleans(),
    "split_ace_21_is_blackjack": st.booleans(), "double_on_first_two_cards": st.booleans(),
    "doubled_or_split_lose_to_dealer_blackjack": st.sampled_from(["all", "original"]),
    "dealer_when_all_settled": st.sampled_from(["draws_by_rule", "second_card_only", "either"]),
    "bet_behind_on_double_or_split": st.sampled_from(["stays", "follows"]),
    "rounding": st.sampled_from(["floor", "half_up", "half_even"]),
    "blackjack_odds": st.sampled_from([Fraction(3, 2), Fraction(6, 5), Fraction(1)]),
    "win_odds": st.sampled_from([Fraction(1), Fraction(9, 10)]),
    "insurance_on_player_blackjack": st.booleans(), "pair_requires_main_bet": st.booleans(),
    "pair_odds": st.sampled_from([RULES.pair_odds, {"mixed": Fraction(5), "coloured": Fraction(10),
                                                    "perfect": Fraction(61, 2)}]),
    "burn_cards": st.integers(0, 2),
})


@st.composite
def audited_shoes(draw):
    rules = replace(RULES, **draw(RULESETS))
    shoe, rounds = _shoe(draw(st.integers(0, 2**32)), draw(st.integers(1, 6)), rules, draw(st.sampled_from([1, 2])))
    return rules, shoe, rounds, _bets(draw, rounds)


def _bets(draw, rounds: list[RecordedRound]) -> list[RecordedBet]:
    """Bets on the rounds: amounts at and beyond the limits, paid right or not, on a box or not, late or not."""
    bets = []
    for n in range(draw(st.integers(0, 40)) if rounds else 0):
        k = draw(st.integers(0, len(rounds) - 1))
        stake = draw(st.sampled_from([1, 99, 100, 101, 5_000, 10_000, 10_001, 100_000, 100_001, 2**40 + 1])
                     | st.integers(1, 300_000))
        paid = draw(st.sampled_from([0, stake, 2 * stake, stake + stake // 2, 3 * stake, 13 * stake, 26 * stake])
                    | st.integers(0, 10**7))
        bets.append(RecordedBet(
            f"B{n}", k, draw(st.sampled_from(["A", "B", "C"])),
            draw(st.sampled_from(["MAIN", "MAIN", "BET_BEHIND", "PAIR", "INSURANCE", "SIDE"])),
            draw(st.sampled_from([None, 0, 8, *rounds[k].boxes, *rounds[k].boxes])), stake,
            draw(st.sampled_from([None, 0, stake, 2 * stake, 3 * stake])), paid,
            rounds[k].betting_closed_at + draw(st.sampled_from([-1, 0, 1]))))
    return bets


@settings(max_examples=250, deadline=None)
@given(audited_shoes())
def test_the_kernels_audit_a_shoe_as_the_readable_engine(case):
    rules, shoe, rounds, bets = case
    fast = audit_shoe(rules, CHART, TABLE, shoe, rounds, bets)
    oracle = audit_shoe(rules, CHART, TABLE, shoe, rounds, bets, bet_by_bet=True)
    assert fast.rounds == oracle.rounds  # reports: positions, expected cards, explanations, finding kinds
    assert fast.findings == oracle.findings
    assert fast.credits() == oracle.credits()
    assert fast.unsettled == oracle.unsettled


def test_the_generator_reaches_plain_and_other_rounds():
    """The property test exercises both paths: rounds the kernel settles and rounds it leaves to the readable
    engine (auto-played ones among the plain)."""
    plain = other = auto = 0
    for seed in range(40):
        shoe, rounds = _shoe(seed, 5, RULES, 1)
        played = _played(RULES, shoe, rounds)
        plain += int(played.plain.sum())
        other += int((~played.plain).sum())
        auto += sum(any(r.box_auto_played) for r, p in zip(rounds, played.plain, strict=True) if p)
    assert plain > 40 and other > 20 and auto > 10


def test_the_generator_reaches_rounds_the_kernel_settles_with_hands_left_live():
    """The property test exercises the findings of a round the kernel settles on both paths (KERNEL_KINDS:
    DEALER_DRAW_RULE, DECISION_MISSING, AUTO_PLAY_DEVIATION) in rounds the kernel settles, and in rounds it leaves
    to the readable engine for another finding (a split hand left live: the hand-worked round below)."""
    kernel, readable = np.zeros(len(KERNEL_KINDS), int), np.zeros(len(KERNEL_KINDS), int)
    for seed in range(60):
        shoe, rounds = _shoe(seed, 5, RULES, 1)
        played = _played(RULES, shoe, rounds)
        kinds = played.kinds()
        kernel += kinds.sum(axis=0)
        audited = audit_shoe(RULES, CHART, TABLE, shoe, rounds, [])
        readable += [sum(rep is not None and kind in rep.finding_kinds and not kinds[i].any()
                         for i, rep in enumerate(audited.rounds)) for kind in KERNEL_KINDS]
    assert (kernel > 3).all() and (readable > 3).all()


# -- hand-worked rounds ------------------------------------------------------------------------------------


def _round(boxes: dict[int, tuple[str, str]], dealer: str, *, status: str = "settled", auto: bool = False
           ) -> tuple[ShoeFacts, list[RecordedRound]]:
    """One round: each box's cards and letters ("KH AS", "S"), the dealer's cards; the shoe holds the burn card
    then exactly the round's cards in dealing order."""
    box_cards = tuple(tuple(cards.split()) for cards, _ in boxes.values())
    dealer_cards = tuple(dealer.split())
    shoe = ("2C", *dealing_sequence(dealer_cards, box_cards))
    r = RecordedRound("R1", 1, status, CLOSED, dealer_cards, tuple(boxes), box_cards,
                      tuple(letters for _, letters in boxes.values()), (auto,) * len(boxes))
    return ShoeFacts("S1", 8, shoe, None), [r]


def _owed(boxes, dealer, bets: list[tuple[str, int, int]], rules=RULES, **kw) -> list[int | None]:
    """The credit of each (bet type, box, stake), paid nothing; the round must be one the kernel settles and
    agree with the readable engine."""
    shoe, rounds = _round(boxes, dealer, **kw)
    recorded = [RecordedBet(f"B{n}", 0, "A" if t in ("MAIN", "PAIR", "INSURANCE") else "Z", t, box, stake, None, 0,
                            CLOSED) for n, (t, box, stake) in enumerate(bets)]
    assert _played(rules, shoe, rounds).plain.tolist() == [True]
    fast = audit_shoe(rules, CHART, TABLE, shoe, rounds, recorded)
    oracle = audit_shoe(rules, CHART, TABLE, shoe, rounds, recorded, bet_by_bet=True)
    assert fast == oracle and fast.credits() == oracle.credits()
    return fast.credits()


def test_blackjack_pays_3_to_2_a_three_card_21_even_money():
    # box 1 AS KH (blackjack), box 2 7C 7D 7H (21 after a hit), dealer TS 9C (19)
    assert _owed({1: ("AS KH", ""), 2: ("7C 7D 7H", "H")}, "TS 9C", [("MAIN", 1, 1_000), ("MAIN", 2, 1_000),
                                                                   ("MAIN", 1, 101)]) == [2_500, 2_000, 252]


def test_21_stands_and_22_busts():
    # box 1: 9C 2D TH = 21 (ends the hand), box 2: 9D 3C TC = 22 (bust, loses even if the dealer busts)
    assert _owed({1: ("9C 2D TH", "H"), 2: ("9D 3C TC", "H")}, "6S TD 8C",
                 [("MAIN", 1, 1_000), ("MAIN", 2, 1_000), ("BET_BEHIND", 2, 500)]) == [2_000, 0, 0]


def test_a_double_stakes_twice_and_adds_the_stake():
    # box 1 doubles 5C 6D + TH = 21 against dealer 20: wins 2 x 1,000
    shoe, rounds = _round({1: ("5C 6D TH", "D")}, "KS QC")
    bet = RecordedBet("B1", 0, "A", "MAIN", 1, 1_000, 1_000, 4_000, CLOSED)
    result = audit_shoe(RULES, CHART, TABLE, shoe, rounds, [bet])
    assert result.credits() == [4_000] and [f.kind for f in result.findings if f.bet_id] == []
    short = audit_shoe(RULES, CHART, TABLE, shoe, rounds, [replace(bet, added_stake=0)])
    assert [f.kind for f in short.findings if f.bet_id] == ["ADDED_STAKE_MISMATCH"]


def test_split_aces_take_one_card_and_21_is_not_blackjack():
    # AS AH split: AS + KD = 21 (pays 1:1), AH + 5C = 16; dealer 9C 8D = 17
    boxes = {3: ("AS AH KD 5C", "P")}
    assert _owed(boxes, "9C 8D", [("MAIN", 3, 1_000)]) == [2_000 + 0]
    assert _owed(boxes, "9C 8D", [("MAIN", 3, 1_000)],
                 rules=replace(RULES, split_ace_21_is_blackjack=True)) == [2_500 + 0]


def test_the_dealer_blackjack_wins_insurance_and_beats_all_but_a_blackjack():
    # dealer AS KC: insurance pays 2:1, a 20 loses, a player blackjack pushes
    boxes = {1: ("TH QD", "S"), 2: ("AD JC", "")}
    assert _owed(boxes, "AS KC", [("INSURANCE", 1, 500), ("MAIN", 1, 1_000), ("MAIN", 2, 1_000),
                                  ("INSURANCE", 2, 500)]) == [1_500, 0, 1_000, 1_500]
    # no dealer blackjack: insurance lost, the box's 20 beats 19
    assert _owed(boxes, "AS 8C", [("INSURANCE", 1, 500), ("MAIN", 1, 1_000)]) == [0, 2_000]


@pytest.mark.parametrize(("first_two", "odds"), [("7H 7H", 25), ("7H 7D", 12), ("7S 7C", 12), ("7H 7C", 6),
                                                 ("7H 8H", 0), ("KH TH", 0)])
def test_every_row_of_the_pair_paytable(first_two, odds):
    owed = _owed({1: (first_two, "S")}, "TS 7C", [("MAIN", 1, 1_000), ("PAIR", 1, 100)])
    assert owed[1] == (100 + odds * 100 if odds else 0)


def test_a_dealer_stand_on_soft_17_is_a_finding_in_h17_only():
    """The dealer stopping on AS 6C (soft 17): by the rule under S17; under H17 DEALER_DRAW_RULE, which the kernel
    settles on the recorded hand with the shoe's cards by the rule as the expected hand, as the readable engine does,
    where the shoe holds them (else the round is the readable engine's)."""
    shoe, rounds = _round({1: ("TH 9D", "S")}, "AS 6C")
    assert _played(replace(RULES, hits_soft_17=False), shoe, rounds).plain.tolist() == [True]
    assert _played(RULES, shoe, rounds).plain.tolist() == [False]  # (no card left to draw)
    kinds = [f.kind for f in audit_shoe(RULES, CHART, TABLE, shoe, rounds, []).findings]
    assert "DEALER_DRAW_RULE" in kinds
    for more, expected in ((("2D", "9C"), ("AS", "6C", "2D")), (("5D", "3H", "9C"), ("AS", "6C", "5D", "3H", "9C")),
                           (("XX",), None)):
        longer = replace(shoe, cards=(*shoe.cards, *more))
        played = _played(RULES, longer, rounds)
        assert played.plain.tolist() == [expected is not None] and played.redrawn.tolist() == [expected is not None]
        bets = [RecordedBet("m1", 0, "A", "MAIN", 1, 100, None, 200 + k, CLOSED + k) for k in (-1, 0, 1)]
        fast = audit_shoe(RULES, CHART, TABLE, longer, rounds, bets)
        slow = audit_shoe(RULES, CHART, TABLE, longer, rounds, bets, bet_by_bet=True)
        assert fast == slow and fast.credits() == slow.credits() == [200] * 3  # (19 against the recorded 17)
        assert expected is None or fast.rounds[0].expected_dealer_cards == expected
        [finding] = [f for f in fast.findings if f.round_id and not f.bet_id]
        assert (finding.kind, finding.expected, finding.recorded, finding.message) == (
            "DEALER_DRAW_RULE", "H17 draws", "AS 6C",
            "Round R1 (round 1 of shoe S1): dealer stood on AS 6C (hit on soft 17: must draw).")


def test_a_hand_left_live_is_settled_by_the_kernel_as_a_stand_and_named_as_the_readable_engine_names_it():
    """A box whose letters run out while a hand is live (a split pair's second hand, a box with no letter): the
    kernel settles the round, its DECISION_MISSING and explanation are the readable engine's; bets on it at each
    boundary (a stake at a limit and one beyond, placed at the close and a microsecond after, paid as owed and a
    minor unit off either way) are judged as bet by bet."""
    # box 1 splits 8H 8D: its first hand stands on 8H 3C, the second (8D TS) has no letter; box 2 TH 6D no letter;
    # the dealer 9S 8C stands on 17
    shoe, rounds = _round({1: ("8H 8D 3C TS", "PS"), 2: ("TH 6D", "")}, "9S 8C")
    played = _played(RULES, shoe, rounds)
    assert played.plain.tolist() == [True] and played.unfinished_hands(0) == [(1, 1), (2, 0)]
    bets = [RecordedBet("m1", 0, "A", "MAIN", 1, 100, 100, 0, CLOSED),
            RecordedBet("m2", 0, "B", "MAIN", 2, 100_000, None, 0, CLOSED),
            RecordedBet("p1", 0, "A", "PAIR", 1, 10_000, None, 0, CLOSED),
            RecordedBet("b1", 0, "Z", "BET_BEHIND", 1, 100, None, 0, CLOSED)]
    oracle = audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets, bet_by_bet=True).credits()
    # box 1's hand 1 (11) loses to 17, its hand 2 (18, played as a stand) wins: 100 back + 100; box 2 (16) loses
    assert oracle[:2] == [200, 0]
    paid = [replace(b, paid=c) for b, c in zip(bets, oracle, strict=True)]
    for moved in ([], [("m2", dict(stake=100_001))], [("m1", dict(stake=99))], [("b1", dict(placed_at=CLOSED + 1))],
                  [("m1", dict(paid=oracle[0] + 1))], [("m1", dict(paid=oracle[0] - 1))],
                  [("p1", dict(paid=1))], [("m1", dict(added_stake=99))]):
        changes = dict(moved)
        case = [replace(b, **changes.get(b.bet_id, {})) for b in paid]
        fast = audit_shoe(RULES, CHART, TABLE, shoe, rounds, case)
        slow = audit_shoe(RULES, CHART, TABLE, shoe, rounds, case, bet_by_bet=True)
        assert fast == slow and fast.credits() == slow.credits()
        assert [f.kind for f in fast.findings if f.round_id and not f.bet_id] == ["DECISION_MISSING"]
        assert bool([f for f in fast.findings if f.bet_id]) == bool(moved)  # (each move crosses a boundary)
    report = audit_shoe(RULES, CHART, TABLE, shoe, rounds, []).rounds[0]
    assert report.finding_kinds == ("DECISION_MISSING",)
    assert "box 1 hand 2: no decision recorded while the hand was live (played as a stand)" in report.explanation
    [finding] = [f for f in audit_shoe(RULES, CHART, TABLE, shoe, rounds, []).findings if f.round_id]
    assert (finding.recorded, finding.message) == (
        "box 1 hand 2, box 2 hand 1",
        "Round R1 (round 1 of shoe S1): no decision recorded for box 1 hand 2, box 2 hand 1 while the hand was live.")


def test_an_auto_played_box_off_the_chart_is_settled_by_the_kernel_and_named_as_the_readable_engine_names_it():
    # hard 16 against a ten: the chart hits, box 1 stood; hard 17: the chart stands, box 2 stood; the dealer 18
    shoe, rounds = _round({1: ("TH 6D", "S"), 2: ("TC 7D", "S")}, "TS 8C", auto=True)
    assert _played(RULES, shoe, rounds).plain.tolist() == [True]
    bets = [RecordedBet("m1", 0, "A", "MAIN", 1, 100, None, 0, CLOSED),
            RecordedBet("m2", 0, "B", "MAIN", 2, 100_000, None, 1, CLOSED + 1)]
    fast = audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets)
    slow = audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets, bet_by_bet=True)
    assert fast == slow and fast.credits() == slow.credits() == [0, 0]
    [finding] = [f for f in fast.findings if f.round_id and not f.bet_id]
    assert (finding.kind, finding.expected, finding.recorded, finding.message) == (
        "AUTO_PLAY_DEVIATION", "box 1: H", "box 1: S",
        "Round R1 (round 1 of shoe S1): auto-played box 1 took S on TH 6D against TS, basic strategy says H.")
    assert "box 1 hand 1: TH 6D (hard 16) against TS: S (legal; basic strategy: H)" in fast.rounds[0].explanation
    assert fast.rounds[0].finding_kinds == ("AUTO_PLAY_DEVIATION",)
    shoe, rounds = _round({1: ("TH 6D 2C", "HS")}, "TS 8C", auto=True)
    played = _played(RULES, shoe, rounds)
    assert played.plain.tolist() == [True]
    assert "box 1 hand 1: TH 6D (hard 16) against TS: H (legal; basic strategy: H)" in audit_shoe(
        RULES, CHART, TABLE, shoe, rounds, []).rounds[0].explanation


@pytest.mark.parametrize("seed", [3, 11])
def test_the_kernels_as_python_are_the_compiled_kernels(seed):
    """The kernels' source run as Python (what numba compiles, and what `pitboss replay` runs) gives what the
    compiled kernels give, the shoe's whole audit too."""
    shoe, rounds = _shoe(seed, 6, RULES, 2)
    bets = [RecordedBet(f"B{n}", n % len(rounds), "A", t, rounds[n % len(rounds)].boxes[0], 1_000, None, 2_000,
                        CLOSED) for n, t in enumerate(["MAIN", "PAIR", "INSURANCE", "BET_BEHIND"] * 3)]
    played = _played(RULES, shoe, rounds)
    with kernels.as_python():
        as_python = _played(RULES, shoe, rounds)
        audited = audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets)
        as_python_lines = played_lines(as_python)
    assert as_python.plain.tolist() == played.plain.tolist()
    assert as_python_lines.explanations() == played_lines(played).explanations()
    for mine, theirs in zip(as_python.boxes, played.boxes, strict=True):
        assert np.array_equal(mine, theirs)
    compiled = audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets)
    assert audited == compiled and audited.credits() == compiled.credits()


def test_a_bet_at_each_boundary_is_cleared_by_the_kernel_one_beyond_is_flagged():
    """settle_bets' screen: a bet at a limit (a stake at the minimum or maximum, a pair at its share of the
    table maximum, an insurance at its share of the box's main stake, a bet placed at the close) paid as owed
    is cleared (no finding, not among the flagged bets); the same bet one unit (or microsecond) beyond is
    flagged, and only it, with the finding of the limit it crosses."""
    # box 1 TH 9D (19), box 2 7H 7D (14); the dealer AS 6C draws on soft 17 to 19: no dealer blackjack
    shoe, rounds = _round({1: ("TH 9D", "S"), 2: ("7H 7D", "S")}, "AS 6C 2D")
    at_limits = [RecordedBet("low", 0, "A", "MAIN", 1, 100, None, 0, CLOSED),
                 RecordedBet("high", 0, "B", "MAIN", 2, 100_000, None, 0, CLOSED),
                 RecordedBet("pair", 0, "B", "PAIR", 2, 10_000, None, 0, CLOSED),
                 RecordedBet("insurance", 0, "B", "INSURANCE", 2, 50_000, None, 0, CLOSED + 10),
                 RecordedBet("behind", 0, "Z", "BET_BEHIND", 1, 100, None, 0, CLOSED)]
    beyond = {"low": dict(stake=99), "high": dict(stake=100_001), "pair": dict(stake=10_001),
              "insurance": dict(stake=50_001), "behind": dict(placed_at=CLOSED + 1)}
    crossed = {"low": ["STAKE_BELOW_MIN"], "high": ["STAKE_ABOVE_MAX"],
               "pair": ["STAKE_ABOVE_MAX", "SIDE_BET_ABOVE_SHARE"],  # (the maxima are the shares too)
               "insurance": ["STAKE_ABOVE_MAX", "INSURANCE_ABOVE_SHARE"], "behind": ["LATE_BET"]}

    def paid_as_owed(bets):
        owed = audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets, bet_by_bet=True).credits()
        return [replace(b, paid=c) for b, c in zip(bets, owed, strict=True)]

    def flagged(bets):  # (explained=False: the bets checked in columns, their findings not yet among the others)
        return audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets, explained=False).flagged.bet.tolist()

    cleared = paid_as_owed(at_limits)
    assert [f for f in audit_shoe(RULES, CHART, TABLE, shoe, rounds, cleared).findings if f.bet_id] == []
    assert flagged(cleared) == []
    for k, bet in enumerate(at_limits):
        moved = paid_as_owed([*at_limits[:k], replace(bet, **beyond[bet.bet_id]), *at_limits[k + 1:]])
        audited = audit_shoe(RULES, CHART, TABLE, shoe, rounds, moved)
        assert flagged(moved) == [k]
        assert [(f.bet_id, f.kind) for f in audited.findings if f.bet_id] == [(bet.bet_id, kind)
                                                                             for kind in crossed[bet.bet_id]]


def _chart_letter_of(cards: list[str], upcard: str, can_double: bool, can_split: bool) -> int:
    """kernel.chart_letter of a hand, its total worked out by the readable hand.hand_total."""
    total = hand_total(cards)
    codes = [CARD_CODES.index(c) for c in cards]
    return int(chart_letter(chart_cells(CHART), codes[0], codes[1], len(codes), total.value, total.soft,
                            CARD_CODES.index(upcard), can_double, can_split))


def _readable_letter(cards: list[str], upcard: str, can_double: bool, can_split: bool) -> int:
    """basic_strategy_decision's letter as a code of LETTERS, -1 where it has none (a bust hand: it raises)."""
    try:
        return LETTERS.index(basic_strategy_decision(CHART, cards, upcard, can_double=can_double,
                                                     can_split=can_split))
    except ValueError:
        return -1


@pytest.mark.parametrize("allowed", [(False, False), (True, False), (False, True), (True, True)])
def test_the_kernels_chart_letter_is_basic_strategy_for_every_two_card_hand_and_upcard(allowed):
    """Every two-card hand by rank (a pair of each rank, a ten beside a face card that is no pair, soft hands)
    against every upcard, doubling and splitting allowed or not: the kernel's cell is the chart's decision."""
    suits = ("S", "H")  # (two suits: a pair of one rank in two suits, as it is dealt)
    for first in "A23456789TJQK":
        for second in "A23456789TJQK":
            for up in "A23456789TJQK":
                hand, upcard = [first + suits[0], second + suits[1]], up + "D"
                assert _chart_letter_of(hand, upcard, *allowed) == _readable_letter(hand, upcard, *allowed), \
                    (hand, upcard, allowed)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(CARD_CODES), min_size=2, max_size=7), st.sampled_from(CARD_CODES), st.booleans(),
       st.booleans())
def test_the_kernels_chart_letter_is_basic_strategy_for_any_hand(cards, upcard, can_double, can_split):
    """Hands of two to seven cards, 21 and bust among them (none: the readable rule raises, the kernel's cell is
    -1): the kernel's letter is basic_strategy_decision's."""
    assert _chart_letter_of(cards, upcard, can_double, can_split) == _readable_letter(cards, upcard, can_double,
                                                                                      can_split)


def test_every_cell_of_the_chart_is_a_letter_the_chart_gives_or_none():
    """chart_cells: a letter for each hard total 4-21 and soft total 12-21 against each upcard, and for each pair,
    none (-1) for a total no hand of two cards or more has (0-3 hard, 0-11 soft)."""
    cells = chart_cells(CHART).reshape(-1)
    totals = cells[:2 * 22 * 10 * 2].reshape(2, 22, 10, 2)
    assert (totals[0, 4:] >= 0).all() and (totals[1, 12:] >= 0).all()
    assert (totals[0, :4] == -1).all() and (totals[1, :12] == -1).all()
    assert (cells[2 * 22 * 10 * 2:] >= 0).all()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**32), st.integers(0, 5), st.sampled_from([1, 2])), min_size=1, max_size=4),
       st.integers(0, 2))
def test_a_tables_shoes_replayed_at_once_are_each_shoe_replayed_alone(shoes, burn):
    """play_rounds over many shoes (a table's, one shoe's rounds after another's, audit_plain_shoes) gives each
    shoe's columns as a call for that shoe alone: its place in its own shoe, its own cut card, its own cards; the
    lines of its plain rounds too."""
    rules = replace(RULES, burn_cards=burn)
    dealt = [_shoe(seed, n, rules, decks) for seed, n, decks in shoes]
    dealt = [(shoe, rounds) for shoe, rounds in dealt if rounds]
    if not dealt:
        return
    alone = [_played(rules, shoe, rounds) for shoe, rounds in dealt]
    every = [r for _, rounds in dealt for r in rounds]
    n = np.array([len(rounds) for _, rounds in dealt])
    first = np.repeat(np.concatenate([[0], np.cumsum(n)[:-1]]), n)
    cards = [np.array(card_codes(shoe.cards), np.int64) for shoe, _ in dealt]
    at_once = _Played(rules, CHART, ShoeRounds.of(every), Dealt(
        np.repeat(np.arange(len(dealt)), n), first, np.concatenate(cards),
        np.concatenate([[0], np.cumsum([len(c) for c in cards])]),
        np.array([-1 if shoe.cut_index is None else shoe.cut_index for shoe, _ in dealt])),
        table_arrays(rules, CHART, TABLE))
    for name in ("plain", "position", "cut_round", "dealer_bj", "upcard_ace", "redrawn", "chart_says"):
        each = np.concatenate([getattr(p, name) for p in alone])
        assert getattr(at_once, name).tolist() == each.tolist(), name
    for mine, theirs in zip(at_once.boxes, zip(*(p.boxes for p in alone), strict=True), strict=True):
        assert mine.tolist() == np.concatenate(theirs).tolist()
    assert at_once.x_cards.tolist() == np.concatenate([p.x_cards for p in alone]).tolist()
    for p in (at_once, *alone):
        p.found = p.kinds()
    assert at_once.reported()[1].tolist() == np.concatenate([p.reported()[1] for p in alone]).tolist()  # (before)
    assert played_lines(at_once).explanations() == [lines for p in alone for lines in played_lines(p).explanations()]


@st.composite
def tables_of_shoes(draw):
    """A table's shoes (a ruleset, each shoe's rounds and bets), dealt as _shoe deals them: some plain."""
    rules = replace(RULES, **draw(RULESETS))
    shoes = []
    for s in range(draw(st.integers(1, 4))):
        shoe, rounds = _shoe(draw(st.integers(0, 2**32)), draw(st.integers(1, 4)), rules, 1)
        shoes.append((replace(shoe, shoe_id=f"S{s}"), rounds, _bets(draw, rounds)))
    return rules, shoes


@settings(max_examples=150, deadline=None)
@given(tables_of_shoes())
def test_the_plain_shoes_of_a_table_audited_at_once_are_each_shoes_audit(case):
    """audit_plain_shoes (one kernel call a table) takes a shoe only where audit_shoe of it alone settles every bet
    and reports only the rounds the kernel cannot clear (those read and replayed by the readable rules at once, with
    the same reports; every other round the kernel's, explained by the lines of the replay): then the credits, the
    rounds' findings, the flagged bets' columns, the reports' columns and the lines are audit_shoe's."""
    rules, shoes = case
    shoes = [(shoe, rounds, bets) for shoe, rounds, bets in shoes if rounds]
    if not shoes:
        return
    n = np.array([len(rounds) for _, rounds, _ in shoes])
    first = np.concatenate([[0], np.cumsum(n)])
    cards = [np.array(card_codes(shoe.cards), np.int64) for shoe, _, _ in shoes]
    every_bet = [replace(b, round_index=b.round_index + int(first[s])) for s, (_, _, bets) in enumerate(shoes)
                 for b in bets]
    bet_shoe = np.array([s for s, (_, _, bets) in enumerate(shoes) for _ in bets], np.int64)
    round_shoe = np.repeat(np.arange(len(shoes)), n)
    arrays = table_arrays(rules, CHART, TABLE)
    at_once = audit_plain_shoes(
        rules, CHART, TABLE, arrays, ShoeRounds.of([r for _, rounds, _ in shoes for r in rounds]),
        Dealt(round_shoe, first[round_shoe], np.concatenate(cards), np.cumsum([0, *(len(c) for c in cards)]),
              np.array([-1 if shoe.cut_index is None else shoe.cut_index for shoe, _, _ in shoes])),
        [shoe.shoe_id for shoe, _, _ in shoes], np.array([shoe.decks for shoe, _, _ in shoes]),
        ShoeBets.of(every_bet), bet_shoe, np.zeros(len(shoes), bool))
    taken_bets = bet_shoe[at_once.bets]
    said = played_lines(at_once.played).explanations()
    reported = at_once.played.reported()
    for s in np.flatnonzero(at_once.shoes).tolist():
        shoe, rounds, bets = shoes[s]
        alone = audit_shoe(rules, CHART, TABLE, shoe, rounds, bets, explained=False, arrays=arrays)
        # (a round the kernel cannot clear read and replayed by the readable rules at once, its report audit_shoe's)
        assert alone.rounds == [at_once.reports.get(int(first[s]) + i) for i in range(len(rounds))]
        assert alone.settled.all()
        assert alone.expected.tolist() == at_once.expected[taken_bets == s].tolist()
        assert alone.findings == [f for f, i in zip(at_once.findings, at_once.found_in, strict=True)
                                  if round_shoe[i] == s]
        mine = bet_shoe[at_once.flagged.bet] == s
        for name in FlaggedBets.__dataclass_fields__:
            theirs = getattr(at_once.flagged, name)[mine]
            assert (getattr(alone.flagged, name) + (np.flatnonzero(bet_shoe == s)[0] if name == "bet" and
                                                    len(alone.flagged) else 0)).tolist() == theirs.tolist(), name
        assert played_lines(alone.played).explanations() == said[first[s]:first[s + 1]]
        in_shoe = round_shoe[reported[0]] == s
        alone_reported = alone.played.reported()
        for mine_column, column in zip(alone_reported[1:7], reported[1:7], strict=True):
            assert mine_column.tolist() == column[in_shoe].tolist()
        # (the dealer's hand by the rule: how many cards and which, for each redrawn round)
        redrawn_in_shoe, n_by_rule, by_rule = in_shoe[reported[6]], reported[7], reported[8]
        assert alone_reported[7].tolist() == n_by_rule[redrawn_in_shoe].tolist()
        assert alone_reported[8].tolist() == by_rule[np.repeat(redrawn_in_shoe, n_by_rule)].tolist()
    # a shoe not taken is audited alone on the table's replay (its rounds read from it, not replayed again): as on
    # its own replay, and the rounds it leaves plain are those the table's replay then reports and explains
    for s in np.flatnonzero(~at_once.shoes).tolist():
        shoe, rounds, bets = shoes[s]
        own = audit_shoe(rules, CHART, TABLE, shoe, rounds, bets, explained=False, arrays=arrays)
        on_table = audit_shoe(rules, CHART, TABLE, shoe, rounds, bets, explained=False, arrays=arrays,
                              replayed=(at_once.played, int(first[s])))
        assert (on_table.rounds, on_table.unsettled, on_table.findings) == (own.rounds, own.unsettled, own.findings)
        for name in ("expected", "settled", "on_bet"):
            assert getattr(on_table, name).tolist() == getattr(own, name).tolist(), name
        for name in FlaggedBets.__dataclass_fields__:
            assert getattr(on_table.flagged, name).tolist() == getattr(own.flagged, name).tolist(), name
        assert at_once.played.plain[first[s]:first[s + 1]].tolist() == own.played.plain.tolist()
