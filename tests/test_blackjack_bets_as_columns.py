"""The blackjack audit's column path (the compiled kernels of engine/games/blackjack/kernel.py as audit.py
uses them, and engine.betting's within_limits / are_late) against the scalar rules it is derived from: on random shoes,
rounds and bets, with stakes, times and payments at and around every boundary, audit_shoe gives the same
expected credits, unsettled reasons and findings (in the same order) as with every bet through credit()
and check_bet() (bet_by_bet=True)."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import kernels
from engine.betting import QuarantinedBet, TableFacts, are_late, is_late, stake_limit_breach, within_limits
from engine.cards import new_shoe
from engine.games.blackjack import audit
from engine.games.blackjack.audit import RecordedBet, RecordedRound, ShoeBets, ShoeFacts, audit_shoe
from engine.games.blackjack.play import BoxActions, replay_round
from engine.games.blackjack.rules import load_blackjack_rules
from engine.games.blackjack.strategy import load_basic_strategy

RULES = load_blackjack_rules()
CHART = load_basic_strategy()
TABLE = TableFacts("BJ1", "EUR", 100_000, {"MAIN": (100, 100_000), "PAIR": (100, 50_000),
                                            "INSURANCE": (50, 50_000), "BET_BEHIND": (100, 100_000)})
CLOSED = 1_700_000_000_000_000
STAKES = [1, 99, 100, 101, 250, 333, 1000, 99_999, 100_000, 100_001, 2**40, 2**41 + 7]


def _shoe(seed: int, rounds: int, rules) -> tuple[ShoeFacts, list[RecordedRound]]:
    """A one-deck shoe dealt round by round: random boxes and decision letters, recorded as played (a
    random round cancelled, a random card or letter tampered with so some rounds cannot be settled)."""
    rng = random.Random(seed)
    cards = list(new_shoe(1))
    rng.shuffle(cards)
    position, recorded = rules.burn_cards, []
    for no in range(1, rounds + 1):
        boxes = sorted(rng.sample(range(1, 8), rng.randint(1, 4)))
        letters = ["".join(rng.choice("HSDP") for _ in range(rng.randint(0, 3))) or "S" for _ in boxes]
        play = replay_round(rules, cards[position:], [BoxActions(b, a) for b, a in zip(boxes, letters, strict=True)])
        if not play.complete:
            break
        box_cards = [list(c) for c in play.box_cards]
        if rng.random() < 0.1:
            box_cards[0].append(cards[-1])  # cards the letters do not call for: unsettled
        recorded.append(RecordedRound(f"R{no}", no, "cancelled" if rng.random() < 0.15 else "settled",
                                      CLOSED + no, tuple(play.dealer), tuple(boxes),
                                      tuple(tuple(c) for c in box_cards), tuple(letters), (False,) * len(boxes)))
        position += len(play.dealer) + sum(len(c) for c in play.box_cards)
    return ShoeFacts("S1", 1, tuple(cards), None), recorded


@st.composite
def shoes_and_bets(draw):
    rules = replace(RULES, bet_behind_on_double_or_split=draw(st.sampled_from(["stays", "follows"])),
                    rounding=draw(st.sampled_from(["floor", "half_up", "half_even"])))
    shoe, rounds = _shoe(draw(st.integers(0, 2**32)), draw(st.integers(1, 5)), rules)
    bets = []
    for n in range(draw(st.integers(0, 40)) if rounds else 0):
        k = draw(st.integers(0, len(rounds) - 1))
        stake = draw(st.sampled_from(STAKES) | st.integers(1, 300_000))
        added = draw(st.sampled_from([None, 0, stake, 2 * stake, 3 * stake, stake + 1]))
        paid = draw(st.sampled_from([0, stake, 2 * stake, stake + stake // 2, 2 * stake + 1, 4 * stake])
                    | st.integers(0, 10**6))
        bets.append(RecordedBet(
            f"B{n}", k, draw(st.sampled_from(["A", "B", "C"])),
            draw(st.sampled_from(["MAIN", "BET_BEHIND", "BET_BEHIND", "PAIR", "INSURANCE", "SIDE"])),
            draw(st.sampled_from([None, 0, 8, *rounds[k].boxes, *rounds[k].boxes])), stake, added, paid,
            rounds[k].betting_closed_at + draw(st.sampled_from([-1, 0, 1, -10**6]))))
    return rules, shoe, rounds, bets


# the money words in a currency of 2, 0 and 3 decimals and without one (the column path writes them by a kernel)
CURRENCIES = ["EUR", "JPY", "KWD", ""]


@settings(max_examples=300, deadline=None)
@given(shoes_and_bets(), st.booleans(), st.sampled_from(CURRENCIES))
def test_the_column_path_equals_every_bet_by_the_rules(case, as_columns, currency):
    rules, shoe, rounds, bets = case
    table = replace(TABLE, currency=currency)
    given_bets = ShoeBets.of(bets) if as_columns else bets
    fast = audit_shoe(rules, CHART, table, shoe, rounds, given_bets)
    oracle = audit_shoe(rules, CHART, table, shoe, rounds, bets, bet_by_bet=True)
    assert fast.credits() == oracle.credits()
    assert fast.unsettled == oracle.unsettled
    assert fast.findings == oracle.findings
    assert fast.rounds == oracle.rounds


def test_a_clean_bet_behind_skips_the_checks_a_late_one_is_checked_in_columns(monkeypatch):
    """The oracle is not the path under test: a bet the screen clears is checked by neither path; one placed a
    microsecond after the close is checked in columns (bet_checks), never by credit() (and one placed exactly at
    the close is on time)."""
    shoe, rounds = _shoe(7, 3, RULES)
    k = next(i for i, r in enumerate(rounds) if r.status == "settled" and r.boxes and not r.box_cards[0][2:])
    bet = RecordedBet("B1", k, "Z", "BET_BEHIND", rounds[k].boxes[0], 100, None, 0, CLOSED)
    owed = audit_shoe(RULES, CHART, TABLE, shoe, rounds, [bet], bet_by_bet=True).credits()[0]
    scalar = []
    credit = audit._ShoeAuditor.credit
    monkeypatch.setattr(audit._ShoeAuditor, "credit", lambda self, b, *rest: scalar.append(b.bet_id) or credit(
        self, b, *rest))

    def bet_findings(placed_at):
        given = (RULES, CHART, TABLE, shoe, rounds, [replace(bet, paid=owed, placed_at=placed_at)])
        # (explained=False: the bets checked in columns, their findings not yet among the others)
        return ([f.kind for f in audit_shoe(*given).findings if f.bet_id],
                audit_shoe(*given, explained=False).flagged.bet.tolist())

    closed = rounds[k].betting_closed_at
    assert bet_findings(closed) == ([], []) and scalar == []
    assert bet_findings(closed + 1) == (["LATE_BET"], [0]) and scalar == []


def test_a_bet_with_a_main_bet_in_quarantine_beside_it_goes_to_the_rules(monkeypatch):
    """A flagged bet of a round with a MAIN bet in quarantine (its words name that bet) and one with an amount
    beyond int64's exact products (2**40) go through credit() and check_bet(); one just below, through the
    columns: the same findings as the rules give."""
    shoe, rounds = _shoe(7, 3, RULES)
    k = next(i for i, r in enumerate(rounds) if r.status == "settled" and r.boxes and not r.box_cards[0][2:])
    box = rounds[k].boxes[0]
    scalar = []
    credit = audit._ShoeAuditor.credit
    monkeypatch.setattr(audit._ShoeAuditor, "credit", lambda self, b, *rest: scalar.append(b.bet_id) or credit(
        self, b, *rest))
    held = QuarantinedBet("Q1", k, "Z", "MAIN", box, 100, CLOSED, "a field out of range")
    for stake, quarantined, by_rules in ((100, [held], True), (2**40, [], True), (2**40 - 1, [], False)):
        bets = [RecordedBet("B1", k, "Z", "BET_BEHIND", box, stake, None, 0, CLOSED + 10**9)]
        scalar.clear()
        fast = audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets, quarantined=quarantined)
        assert scalar == (["B1"] if by_rules else [])
        assert len(audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets, quarantined=quarantined,
                              explained=False).flagged) == (0 if by_rules else 1)
        oracle = audit_shoe(RULES, CHART, TABLE, shoe, rounds, bets, quarantined=quarantined, bet_by_bet=True)
        assert fast.findings == oracle.findings and fast.credits() == oracle.credits()
        assert "LATE_BET" in [f.kind for f in fast.findings]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-5, 200_005) | st.sampled_from([99, 100, 101, 99_999, 100_000, 100_001]), min_size=1),
       st.integers(0, 200_000), st.integers(0, 200_000))
def test_within_limits_is_stake_limit_breach_stake_by_stake(stakes, a, b):
    low, high = min(a, b), max(a, b)
    got = within_limits(np.asarray(stakes, np.int64), (low, high))
    assert got.tolist() == [stake_limit_breach(s, (low, high)) is None for s in stakes]
    edges = np.asarray([low - 1, low, high, high + 1], np.int64)
    assert within_limits(edges, (low, high)).tolist() == [False, True, True, False]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 2**62)), min_size=1))
def test_are_late_is_is_late_bet_by_bet(pairs):
    closed = np.asarray([c for _, c in pairs], np.int64)
    placed = closed + np.asarray([d for d, _ in pairs], np.int64)
    assert are_late(placed, closed).tolist() == [is_late(int(p), int(c)) for p, c in zip(placed, closed, strict=True)]


@settings(max_examples=40, deadline=None)
@given(shoes_and_bets(), st.sampled_from(CURRENCIES))
def test_the_findings_writer_as_python_writes_what_it_compiled_writes(case, currency):
    """engine.finding_texts.write_findings (every flagged bet's findings, one kernel) as Python, as the tests' other
    kernels."""
    rules, shoe, rounds, bets = case
    table = replace(TABLE, currency=currency)
    compiled = audit_shoe(rules, CHART, table, shoe, rounds, ShoeBets.of(bets))
    with kernels.as_python():
        as_python = audit_shoe(rules, CHART, table, shoe, rounds, ShoeBets.of(bets))
    assert as_python.findings == compiled.findings
