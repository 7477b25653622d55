"""The column path of the outcome games' audit (engine.betting_columns, which audit_spins and audit_rolls now
run) against its statement a bet at a time (engine.betting.audit_group with the scalar rule, spin_verdict and
roll_verdict once per bet type, selection and outcome, as the games audited before): for random sessions,
bets and outcomes, boundaries included (a stake at a limit and one unit beyond, a bet placed at the close and
one microsecond after, an account's total at the table maximum and one unit above, rounds cancelled, with no
usable outcome or of an unknown status, bets pointing at no round, selections '' and None, bet types not
offered, La Partage's half stake rounded by each rule), every credit, finding (in order), explanation line
and reason is the same."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from itertools import product

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import kernels
from engine.betting import (
    OutcomeJudge,
    Payout,
    RecordedBet,
    TableFacts,
    UnitVerdict,
    VerdictMemo,
    audit_group,
    over_table_max,
)
from engine.betting_columns import BetColumns, RoundColumns, UnitColumns, Verdicts, distinct
from engine.games.roulette.audit import RecordedRound as Spin
from engine.games.roulette.audit import audit_spin_columns, audit_spins, pocket_problem, valid_pocket
from engine.games.roulette.explain import describe_pocket, explain_spin
from engine.games.roulette.layout import BET_CODES as ROULETTE_CODES
from engine.games.roulette.layout import layout
from engine.games.roulette.rules import load_roulette_rules
from engine.games.roulette.settlement import spin_verdict
from engine.games.sic_bo.audit import RecordedRound as Roll
from engine.games.sic_bo.audit import audit_roll_columns, audit_rolls, roll_problem, valid_roll
from engine.games.sic_bo.explain import explain_roll
from engine.games.sic_bo.layout import BET_CODES as SIC_BO_CODES
from engine.games.sic_bo.layout import SELECTIONS, describe_roll
from engine.games.sic_bo.rules import load_sic_bo_rules
from engine.games.sic_bo.settlement import roll_verdict

CLOSE = 1_000  # every round's betting closes here: bets are placed at 999, 1000 (on time) or 1001 (late)
LOW, HIGH = 100, 1_000
STAKES = (1, LOW - 1, LOW, LOW + 1, 333, HIGH - 1, HIGH, HIGH + 1, 2_001)  # odd ones leave La Partage a half
ACCOUNTS = ("A1", "A2", "A3")


def spins_bet_by_bet(rules, table, session_id, rounds, bets):
    """audit_spins as it was written before the column path: audit_group and spin_verdict, a bet at a time."""
    verdicts = VerdictMemo(lambda code, selection, pocket: spin_verdict(rules, code, selection, pocket), rules.rounding)
    return audit_group(table, session_id, rounds, bets, OutcomeJudge(
        outcome=lambda r: r.pocket, problem=pocket_problem, judge=lambda r, bet: verdicts(bet, r.pocket),
        describe=lambda r: describe_pocket(rules, r.pocket) if valid_pocket(r.pocket) else None,
        explain=lambda r, lines: explain_spin(rules, r.pocket, lines)))


def rolls_bet_by_bet(rules, table, session_id, rounds, bets):
    """audit_rolls as it was written before the column path."""
    verdicts = VerdictMemo(lambda code, selection, dice: roll_verdict(rules, code, selection, dice), rules.rounding)
    return audit_group(table, session_id, rounds, bets, OutcomeJudge(
        outcome=lambda r: r.dice, problem=roll_problem, judge=lambda r, bet: verdicts(bet, tuple(r.dice)),
        describe=lambda r: describe_roll(tuple(r.dice)) if valid_roll(r.dice) else None,
        explain=lambda r, lines: explain_roll(r.dice, valid_roll(r.dice), lines)))


@st.composite
def tables(draw, codes):
    limited = draw(st.sets(st.sampled_from(codes)))
    return TableFacts("T1", draw(st.sampled_from(["EUR", "JPY", "KWD", ""])),
                      draw(st.sampled_from([HIGH, 2 * HIGH, 2 * HIGH + 1, 10**6])),
                      {code: (LOW, HIGH) for code in limited})


@st.composite
def sessions(draw, outcomes, round_of, codes, selections_of):
    rounds = [round_of(f"R{i}", draw(st.integers(1, 3)), draw(st.sampled_from(["settled"] * 4 + ["cancelled", "void"])),
                       CLOSE, draw(outcomes)) for i in range(draw(st.integers(0, 4)))]
    bets = []
    for i in range(draw(st.integers(0, 25))):
        code = draw(st.sampled_from([*codes, "NOT_A_BET"]))
        selection = draw(st.one_of(st.sampled_from(selections_of(code) or [None]),
                                   st.sampled_from([None, "", "0-37", "7"])))
        stake = draw(st.sampled_from(STAKES))
        paid = draw(st.one_of(st.sampled_from([0, stake, 2 * stake, stake // 2, stake // 2 + 1, 36 * stake]),
                              st.integers(0, 50_000)))
        bets.append(RecordedBet(f"B{i}", draw(st.integers(-1, len(rounds))), draw(st.sampled_from(ACCOUNTS)), code,
                                selection, stake, paid, CLOSE + draw(st.sampled_from([-1, 0, 0, 1]))))
    return rounds, bets, draw(st.lists(st.booleans(), min_size=len(bets), max_size=len(bets)))


def paid_as_owed(bets, honest, owed):
    """The bets, those drawn honest paid what the bet-by-bet audit owes them (a bet paid right raises only the
    findings of its stake, time and account total: each boundary on its own)."""
    return [replace(b, paid=credit) if fair and credit is not None else b
            for b, fair, credit in zip(bets, honest, owed, strict=True)]


ROULETTE = load_roulette_rules()
POCKETS = st.one_of(st.integers(0, 36), st.sampled_from([None, -1, 37, True, "17", 3.0]))


@st.composite
def roulette_rules(draw):
    offered = {code: odds for code, odds in ROULETTE.odds.items() if draw(st.booleans()) or code in ("RED", "STRAIGHT")}
    return replace(ROULETTE, la_partage=draw(st.booleans()), rounding=draw(st.sampled_from(["floor", "half_up",
                                                                                             "half_even"])),
                   invalid_selection=draw(st.sampled_from(["void", "lose"])), odds=offered)


@settings(max_examples=200, deadline=None)
@given(roulette_rules(), tables(ROULETTE_CODES),
       sessions(POCKETS, Spin, ROULETTE_CODES, lambda code: list(layout(ROULETTE.red).selections(code))))
def test_roulette_columns_are_the_scalar_rule_bet_by_bet(rules, table, session):
    rounds, bets, honest = session
    bets = paid_as_owed(bets, honest, spins_bet_by_bet(rules, table, "S1", rounds, bets).expected)
    assert audit_spins(rules, table, "S1", rounds, bets) == spins_bet_by_bet(rules, table, "S1", rounds, bets)


SIC_BO = load_sic_bo_rules()
DICE = st.one_of(st.tuples(*[st.integers(1, 6)] * 3), st.lists(st.integers(1, 6), min_size=3, max_size=3),
                 st.sampled_from([None, (), [], (1, 2), (0, 1, 2), (1, 2, 3, 4), (7, 1, 1)]))


@st.composite
def sic_bo_rules(draw):
    paytable = draw(st.sampled_from(sorted(SIC_BO.paytables)))
    priced = {code: pays for code, pays in SIC_BO.paytables[paytable].items() if draw(st.booleans()) or code == "BIG"}
    return replace(SIC_BO, paytable=paytable, paytables={**SIC_BO.paytables, paytable: priced},
                   triple_loses=frozenset(draw(st.sets(st.sampled_from(["SMALL", "BIG", "ODD", "EVEN"])))),
                   invalid_selection=draw(st.sampled_from(["void", "lose"])))


@settings(max_examples=200, deadline=None)
@given(sic_bo_rules(), tables(SIC_BO_CODES),
       sessions(DICE, Roll, SIC_BO_CODES, lambda code: list(SELECTIONS.get(code, ()))))
def test_sic_bo_columns_are_the_scalar_rule_bet_by_bet(rules, table, session):
    rounds, bets, honest = session
    bets = paid_as_owed(bets, honest, rolls_bet_by_bet(rules, table, "S1", rounds, bets).expected)
    assert audit_rolls(rules, table, "S1", rounds, bets) == rolls_bet_by_bet(rules, table, "S1", rounds, bets)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.integers(-1, 3), st.just(2**40)), st.sampled_from(ACCOUNTS),
                          st.sampled_from([9, 10, 11]), st.sampled_from(STAKES)), max_size=30),
       st.sampled_from([HIGH, HIGH + 1, 2 * HIGH]))
def test_the_round_totals_over_columns_are_over_table_max(rows, table_max):
    # (any round indexes: 0-3, -1, one far beyond)
    bets = [RecordedBet(f"B{i}", r, a, "RED", None, s, 0, t) for i, (r, a, t, s) in enumerate(rows)]
    codes = np.array([ACCOUNTS.index(a) for _, a, _, _ in rows], np.int64)
    round_of, placed_at = (np.array([row[k] for row in rows], np.int64) for k in (0, 2))
    over = kernels.account_round_totals(np.lexsort((placed_at, round_of)), round_of, codes,
                                        np.array([s for *_, s in rows], np.int64), table_max, len(ACCOUNTS))
    assert {i: int(total) for i, total in enumerate(over) if total} == over_table_max(bets, table_max)


def test_la_partage_halves_an_odd_stake_by_the_rounding_rule_over_columns():
    # the one credit that is not a whole multiple of the stake: 1/2 of 333 is 166.5
    bets = [RecordedBet("B1", 0, "A1", "RED", None, 333, 0, 0)]
    for rounding, credit in (("floor", 166), ("half_up", 167), ("half_even", 166)):
        rules = replace(ROULETTE, la_partage=True, rounding=rounding)
        assert audit_spins(rules, TableFacts("T1", "EUR", 10**9, {}), "S1", [Spin("R1", 1, "settled", 0, 0)],
                           bets).expected == [credit]


def test_a_sic_bo_verdict_does_not_depend_on_the_order_the_dice_were_thrown_in():
    # the column path asks roll_verdict once per roll with its dice sorted: every ordered roll of every legal
    # bet (and a few that are not) under both paytables gets the same verdict as its sorted dice
    for paytable in sorted(SIC_BO.paytables):
        rules = replace(SIC_BO, paytable=paytable)
        for code in [*SIC_BO_CODES, "NOT_A_BET"]:
            for selection in [*SELECTIONS.get(code, ()), "", "9"]:
                for dice in product(range(1, 7), repeat=3):
                    assert roll_verdict(rules, code, selection, dice) == \
                        roll_verdict(rules, code, selection, tuple(sorted(dice))), (code, selection, dice)


@settings(max_examples=100, deadline=None)
@given(roulette_rules(), tables(ROULETTE_CODES), tables(ROULETTE_CODES),
       st.lists(sessions(POCKETS, Spin, ROULETTE_CODES, lambda code: list(layout(ROULETTE.red).selections(code))),
                min_size=2, max_size=3))
def test_verdicts_kept_across_sessions_are_the_verdicts_of_each_session_alone(rules, table, other, drawn):
    """The store of a ruleset's verdicts the adaptor keeps across a run's sessions and tables (Verdicts: the
    bet types, selections and pockets of each session met in their own order, some known, some new) gives
    every session the audit it has alone, the readable rule bet by bet."""
    known = Verdicts()
    for k, (rounds, bets, _) in enumerate(drawn):
        facts = (table, other)[k % 2]
        columns = RoundColumns.of(rounds, lambda r: r.pocket)
        kept = audit_spin_columns(rules, facts, "S1", columns, BetColumns.of(bets), known).group_audit(columns)
        assert kept == spins_bet_by_bet(rules, facts, "S1", rounds, bets)


@settings(max_examples=100, deadline=None)
@given(sic_bo_rules(), tables(SIC_BO_CODES),
       st.lists(sessions(DICE, Roll, SIC_BO_CODES, lambda code: list(SELECTIONS.get(code, ()))), min_size=2,
                max_size=3))
def test_sic_bo_verdicts_and_words_kept_across_sessions_are_each_session_s_alone(rules, table, drawn):
    """The store kept across a run's sessions also keeps the words on each roll as recorded (its description,
    explanation head, problem and sorted key: Verdicts.outcome_words): a later session meeting the same dice, or
    the same faces as a list rather than a tuple, or in another order, still gets the audit it has alone."""
    known = Verdicts()
    for rounds, bets, _ in drawn:
        columns = RoundColumns.of(rounds, lambda r: r.dice)
        kept = audit_roll_columns(rules, table, "S1", columns, BetColumns.of(bets), known).group_audit(columns)
        assert kept == rolls_bet_by_bet(rules, table, "S1", rounds, bets)


def test_verdicts_ask_a_bet_type_and_selection_its_new_outcomes_at_once():
    """Verdicts.numbers asks the game's rule once per bet type and selection for the outcomes it has not met with
    it (in the order met), numbers each verdict once, never asks for a cancelled round's, and asks nothing again."""
    asked = []

    def units(bet_type, selection, keys):
        asked.append((bet_type, selection, list(keys)))
        return UnitColumns.of([UnitVerdict(Payout(Fraction(len(k), 2), "rule"), f"{bet_type} {selection} {k}")
                               for k in keys])

    known = Verdicts()
    asks = (["A", "B"], ["x", "y"], ["o1", "o22"], np.array([0, 1, 0, 0, 1]), np.array([0, 0, 0, 1, 0]),
            np.array([1, 2, 2, 1, 0]))  # (outcome 0: a cancelled round)
    numbers = known.numbers(units, *asks)
    assert sorted(asked) == [("A", "x", ["o1", "o22"]), ("A", "y", ["o1"]), ("B", "x", ["o22"])]
    assert numbers[4] == 0 and len(set(numbers[:4].tolist())) == 4
    why = known.column("why").take(numbers).to_pylist()
    assert why == ["A x o1", "B x o22", "A x o22", "A y o1", "round cancelled: refunded"]
    assert known.column("numerator")[numbers].tolist() == [1, 3, 3, 1, 1]
    assert known.column("denominator")[numbers].tolist() == [1, 2, 2, 1, 1]
    asked.clear()
    assert (known.numbers(units, *asks) == numbers).all() and asked == []
    only_cancelled = known.numbers(units, ["C"], ["z"], ["o3"], np.array([0]), np.array([0]), np.array([0]))
    assert only_cancelled.tolist() == [0] and asked == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 300), st.integers(-2**63, 2**63 - 1)), max_size=60))
def test_distinct_values_and_each_one_s_index_are_np_unique_s_up_to_their_order(values):
    # (small codes by a table with a slot a value, any other integers by hashing)
    uniques, index = distinct(np.array(values, np.int64))
    assert sorted(uniques.tolist()) == np.unique(np.array(values, np.int64)).tolist()
    assert uniques[index].tolist() == values and index.dtype == np.intp
