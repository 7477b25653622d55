"""Roulette (document 004, single zero): the layout against a brute force written here from the grid's
coordinates, hand-worked spins for every bet code, settlement against a plain enumeration, the audit of
a session at its boundaries, exact RTP against 36/37 and La Partage's 1 - 1/74, and the ruleset file.

Money is in cents of EUR; credit = stake back + win on a win, 0 on a loss.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from importlib import resources
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.betting_columns import UnitColumns
from engine.games import game, load_ruleset
from engine.games.roulette import BET_CODES, GAME
from engine.games.roulette.audit import RecordedBet, RecordedRound, TableFacts, audit_spins
from engine.games.roulette.explain import describe_pocket
from engine.games.roulette.layout import layout
from engine.games.roulette.rtp import roulette_rtp, selection_outcomes
from engine.games.roulette.rules import RULESETS_PACKAGE, load_roulette_rules, parse_roulette_rules
from engine.games.roulette.settlement import spin_verdict, spin_verdicts
from engine.ruleset_file import RulesetError, bundled_ids

RULES = load_roulette_rules()
PARTAGE = replace(RULES, la_partage=True)
LAYOUT = layout(RULES.red)
RED = {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36}  # RULES.md § Roulette
CLOSED = 5_000_000
TABLE = TableFacts("RT1", "EUR", 50_000, {"STRAIGHT": (100, 10_000), "RED": (500, 20_000)})

# --- an independent brute force of the layout -----------------------------------------------------
# The number n (1-36) sits at row (n-1)//3 and column (n-1)%3 of a 12 x 3 grid; a set of numbers is an
# inside bet of the grid when its cells fill a whole rectangle of the given height x width.


def cell(n: int) -> tuple[int, int]:
    return ((n - 1) // 3, (n - 1) % 3)


def fills_rectangle(numbers: tuple[int, ...], height: int, width: int) -> bool:
    rows = {cell(n)[0] for n in numbers}
    cols = {cell(n)[1] for n in numbers}
    return (max(rows) - min(rows) + 1 == height and max(cols) - min(cols) + 1 == width
            and len(numbers) == height * width)


def text(numbers) -> str:
    return "-".join(str(n) for n in sorted(numbers))


def brute_force_inside() -> dict[str, set[str]]:
    shapes = {"STRAIGHT": [(1, 1)], "SPLIT": [(1, 2), (2, 1)], "STREET": [(1, 3)], "CORNER": [(2, 2)]}
    found: dict[str, set[str]] = {code: set() for code in (*shapes, "SIX_LINE")}
    for code, rects in shapes.items():
        size = rects[0][0] * rects[0][1]
        for combo in combinations(range(1, 37), size):
            if any(fills_rectangle(combo, h, w) for h, w in rects):
                found[code].add(text(combo))
    # six lines: two whole rows next to each other
    rows = [{3 * r + 1, 3 * r + 2, 3 * r + 3} for r in range(12)]
    found["SIX_LINE"] = {text(a | b) for a, b in combinations(rows, 2) if abs(min(a) - min(b)) == 3}
    # zero sits beside 1, 2 and 3: straight 0, splits 0-1 0-2 0-3, trios 0-1-2 0-2-3, first four 0-1-2-3
    found["STRAIGHT"].add("0")
    found["SPLIT"] |= {"0-1", "0-2", "0-3"}
    found["STREET"] |= {"0-1-2", "0-2-3"}
    found["CORNER"].add("0-1-2-3")
    return found


BRUTE = brute_force_inside()
OUTSIDE_COVERS = {
    ("DOZEN", "1"): set(range(1, 13)), ("DOZEN", "2"): set(range(13, 25)), ("DOZEN", "3"): set(range(25, 37)),
    ("COLUMN", "1"): set(range(1, 37, 3)), ("COLUMN", "2"): set(range(2, 37, 3)), ("COLUMN", "3"): set(range(3, 37, 3)),
    ("RED", None): RED, ("BLACK", None): set(range(1, 37)) - RED,
    ("ODD", None): set(range(1, 37, 2)), ("EVEN", None): set(range(2, 37, 2)),
    ("LOW", None): set(range(1, 19)), ("HIGH", None): set(range(19, 37)),
}  # fmt: skip
ODDS = {"STRAIGHT": 35, "SPLIT": 17, "STREET": 11, "CORNER": 8, "SIX_LINE": 5, "DOZEN": 2, "COLUMN": 2,
        "RED": 1, "BLACK": 1, "ODD": 1, "EVEN": 1, "LOW": 1, "HIGH": 1}  # fmt: skip


def test_every_inside_selection_is_the_brute_force_of_the_grid():
    for code, legal in BRUTE.items():
        assert set(LAYOUT.selections(code)) == legal, code
    # counts by hand: 57 splits on the grid (12 rows x 2 + 11 x 3) + 3 with zero; 12 rows + 2 trios;
    # 11 x 2 corners + the first four; 11 six lines
    assert [len(BRUTE[c]) for c in ("STRAIGHT", "SPLIT", "STREET", "CORNER", "SIX_LINE")] == [37, 60, 14, 23, 11]


def test_every_outside_selection_covers_what_rules_md_says():
    for (code, selection), covered in OUTSIDE_COVERS.items():
        assert LAYOUT.covers(code, selection) == covered
    assert set(LAYOUT.selections("DOZEN")) == set(LAYOUT.selections("COLUMN")) == {"1", "2", "3"}
    assert LAYOUT.covers("RED", "") == RED  # '' selects nothing, like None


@settings(max_examples=300, deadline=None)
@given(st.sets(st.integers(0, 36), min_size=1, max_size=6))
def test_a_random_set_of_numbers_is_legal_exactly_when_the_brute_force_says(numbers):
    selection = text(numbers)
    for code in BRUTE:
        covered = LAYOUT.covers(code, selection)
        assert (covered is not None) == (selection in BRUTE[code]), (code, selection)
        if covered is not None:
            assert covered == set(numbers)


@pytest.mark.parametrize("selection", ["20-17", "17-20 ", " 17-20", "017-20", "17,20", "17--20", "", None, "37",
                                       "-1", "0-0", "1-2-3-4-5-6-7"])
def test_malformed_selections_are_refused(selection):
    assert LAYOUT.covers("SPLIT", selection) is None
    assert LAYOUT.covers("STRAIGHT", selection) is None


@pytest.mark.parametrize(("code", "selection"), [("DOZEN", "0"), ("DOZEN", "4"), ("COLUMN", None), ("RED", "1"),
                                                 ("LOW", "1-18"), ("SIX_LINE", "34-35-36-1-2-3"),
                                                 ("CORNER", "3-4-6-7"), ("SPLIT", "3-4"), ("STREET", "0-1-3"),
                                                 ("STREET", "2-3-4"), ("SPLIT", "0-4"), ("NOPE", "1")])
def test_near_misses_on_the_layout_are_not_legal(code, selection):
    # 3-4 are consecutive numbers but on different rows at opposite ends: not adjacent on the layout.
    assert LAYOUT.covers(code, selection) is None


# --- settlement: hand-worked spins ----------------------------------------------------------------


def bet(code: str, selection: str | None, stake: int = 1000, paid: int = 0, placed_at: int = CLOSED,
        account: str = "A1", round_index: int = 0, bet_id: str = "B1") -> RecordedBet:
    return RecordedBet(bet_id, round_index, account, code, selection, stake, paid, placed_at)


def spin(pocket, status: str = "settled", round_no: int = 1) -> RecordedRound:
    return RecordedRound(f"R{round_no}", round_no, status, CLOSED, pocket)


def owed(pocket: int, code: str, selection: str | None, stake: int = 1000, rules=RULES) -> int | None:
    return audit_spins(rules, TABLE, "S1", [spin(pocket)], [bet(code, selection, stake)]).expected[0]


@pytest.mark.parametrize(
    ("pocket", "code", "selection", "credit"),
    [
        (17, "STRAIGHT", "17", 36_000),  # 35:1 -> 350.00 + 10.00 back
        (16, "STRAIGHT", "17", 0),
        (0, "STRAIGHT", "0", 36_000),
        (17, "SPLIT", "17-20", 18_000),  # 17:1
        (20, "SPLIT", "17-20", 18_000),
        (0, "SPLIT", "0-1", 18_000),  # a split with zero
        (1, "SPLIT", "0-1", 18_000),
        (2, "SPLIT", "0-1", 0),
        (35, "STREET", "34-35-36", 12_000),  # 11:1
        (0, "STREET", "0-1-2", 12_000),  # the trios
        (2, "STREET", "0-2-3", 12_000),
        (1, "STREET", "0-2-3", 0),
        (21, "CORNER", "17-18-20-21", 9_000),  # 8:1
        (0, "CORNER", "0-1-2-3", 9_000),  # the first four
        (3, "CORNER", "0-1-2-3", 9_000),
        (4, "CORNER", "0-1-2-3", 0),
        (6, "SIX_LINE", "1-2-3-4-5-6", 6_000),  # 5:1
        (7, "SIX_LINE", "1-2-3-4-5-6", 0),
        (0, "SIX_LINE", "1-2-3-4-5-6", 0),
        (12, "DOZEN", "1", 3_000), (13, "DOZEN", "1", 0), (13, "DOZEN", "2", 3_000),  # 2:1, dozen edges
        (36, "DOZEN", "3", 3_000), (24, "DOZEN", "3", 0),
        (34, "COLUMN", "1", 3_000), (36, "COLUMN", "3", 3_000), (12, "COLUMN", "3", 3_000),  # column edges
        (13, "COLUMN", "1", 3_000), (13, "COLUMN", "2", 0),
        (36, "RED", None, 2_000), (35, "BLACK", None, 2_000), (10, "RED", None, 0),  # 10 is black, 19 red
        (19, "RED", "", 2_000), (35, "ODD", None, 2_000), (36, "EVEN", None, 2_000),
        (18, "LOW", None, 2_000), (19, "LOW", None, 0), (19, "HIGH", None, 2_000), (1, "HIGH", None, 0),
    ],
)  # fmt: skip
def test_hand_worked_spins(pocket, code, selection, credit):
    assert owed(pocket, code, selection) == credit


@pytest.mark.parametrize(("code", "selection"), [*((c, None) for c in ("RED", "BLACK", "ODD", "EVEN", "LOW", "HIGH")),
                                                 ("DOZEN", "1"), ("DOZEN", "3"), ("COLUMN", "1"), ("COLUMN", "3")])
def test_zero_loses_every_outside_bet_and_la_partage_returns_half_an_even_chance(code, selection):
    assert owed(0, code, selection) == 0
    even_chance = selection is None
    # La Partage: half of 10.00 back on an even chance; dozens and columns still lose.
    assert owed(0, code, selection, rules=PARTAGE) == (500 if even_chance else 0)


def test_la_partage_rounds_half_an_odd_stake_once_by_the_rulesets_rule():
    # 10.01 EUR on RED, zero: half is 500.5 cents -> floor 500, half_up 501, half_even 500 (500 is even)
    assert owed(0, "RED", None, 1001, PARTAGE) == 500
    assert owed(0, "RED", None, 1001, replace(PARTAGE, rounding="half_up")) == 501
    assert owed(0, "RED", None, 1001, replace(PARTAGE, rounding="half_even")) == 500
    assert owed(0, "RED", None, 1003, replace(PARTAGE, rounding="half_even")) == 502  # 501.5 -> 502
    assert owed(3, "RED", None, 1001, PARTAGE) == 2002  # a win is not halved


def test_la_partage_does_not_touch_an_even_chance_that_wins_or_loses_on_a_number():
    assert owed(5, "BLACK", None, rules=PARTAGE) == 0  # 5 is red
    assert owed(5, "RED", None, rules=PARTAGE) == 2000


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 100_000), st.booleans(), st.sampled_from(["floor", "half_up", "half_even"]))
def test_settlement_agrees_with_a_plain_enumeration_of_the_37_pockets(stake, partage, rounding):
    rules = replace(RULES, la_partage=partage, rounding=rounding)
    every = [(code, s, set(map(int, s.split("-")))) for code, legal in BRUTE.items() for s in sorted(legal)]
    every += [(code, s, covered) for (code, s), covered in OUTSIDE_COVERS.items()]
    rounds = [spin(p, round_no=p + 1) for p in range(37)]
    bets = [bet(code, s, stake, round_index=p) for p in range(37) for code, s, _ in every]
    got = audit_spins(rules, TABLE, "S1", rounds, bets).expected
    want = []
    for p in range(37):
        for code, s, covered in every:
            if p in covered:
                want.append(stake * (ODDS[code] + 1))
            elif p == 0 and partage and s is None:  # the even chances select nothing
                half = Fraction(stake, 2)
                whole = int(half)
                up = {"floor": False, "half_up": half > whole,
                      "half_even": half > whole and whole % 2 == 1}[rounding]
                want.append(whole + up)
            else:
                want.append(0)
    assert got == want


@pytest.mark.parametrize("ruleset_id", bundled_ids(RULESETS_PACKAGE))
def test_a_selections_verdicts_at_once_are_spin_verdict_on_every_pocket(ruleset_id):
    """spin_verdicts (the audit's verdicts, a bet type and selection's pockets at once) against spin_verdict pocket by
    pocket: every legal selection of every code, selections that are not legal, a code not offered, under every
    setting a ruleset has (La Partage, invalid_selection), on every pocket and on a few out of order."""
    bundled = load_roulette_rules(ruleset_id)
    pockets = [*range(37), 0, 17]
    few = [36, 0, 19, 1, 18]
    for partage in (False, True):
        for invalid in ("void", "lose"):
            odds = {code: o for code, o in bundled.odds.items() if code not in ("SPLIT", "RED")}
            for rules in (replace(bundled, la_partage=partage, invalid_selection=invalid),
                          replace(bundled, la_partage=partage, invalid_selection=invalid, odds=odds)):
                for code in [*BET_CODES, "NOT_A_BET"]:
                    for selection in [*layout(rules.red).selections(code), None, "", "1-5", "0-1-2-3-4", "37"]:
                        for on in (pockets, few):
                            assert spin_verdicts(rules, code, selection, on) == UnitColumns.of(
                                [spin_verdict(rules, code, selection, p) for p in on]), (code, selection, on)


# --- the audit of a session -------------------------------------------------------------------------


def audit(rounds, bets, rules=RULES, table=TABLE):
    return audit_spins(rules, table, "S1", rounds, bets)


def kinds(result) -> list[str]:
    return sorted(f.kind for f in result.findings)


def test_a_clean_spin_flags_nothing_and_explains_itself():
    result = audit([spin(17)], [bet("SPLIT", "17-20", paid=18_000), bet("RED", None, 1000, 0, bet_id="B2")])
    assert result.expected == [18_000, 0] and kinds(result) == []
    report = result.rounds[0]
    assert report.description == "17: black, odd, low (1-18), dozen 2 (13-24), column 2"
    assert report.explanation[0] == "pocket 17: black, odd, low (1-18), dozen 2 (13-24), column 2"
    assert "covers 17-20; 17 is covered: won 17:1" in report.explanation[1]
    assert "17 is not covered: lose" in report.explanation[2]
    assert result.findings == [] and report.unsettled_reason is None and report.outcome == 17


def test_zero_is_explained_as_green_and_the_outside_bet_lost_to_it():
    result = audit([spin(0)], [bet("DOZEN", "1", paid=0)])
    assert result.rounds[0].description.startswith("0: green zero")
    assert "0 is not covered: zero loses every outside bet" in result.rounds[0].explanation[1]


@pytest.mark.parametrize("pocket", [36, 0])
def test_the_ends_of_the_wheel_are_valid_pockets(pocket):
    result = audit([spin(pocket)], [bet("STRAIGHT", str(pocket), paid=36_000)])
    assert result.expected == [36_000] and kinds(result) == []


@pytest.mark.parametrize("pocket", [-1, 37, True, "17", 17.0])
def test_a_pocket_outside_0_36_is_invalid_and_its_bets_cannot_be_settled(pocket):
    result = audit([spin(pocket)], [bet("STRAIGHT", "17", paid=36_000, placed_at=CLOSED + 1)])
    assert kinds(result) == ["OUTCOME_INVALID"]  # no bet findings: the bet goes to quarantine
    assert result.expected == [None] and "cannot be settled" in result.unsettled[0]
    assert result.rounds[0].finding_kinds == ("OUTCOME_INVALID",)
    assert result.rounds[0].unsettled_reason == result.unsettled[0]


def test_a_settled_spin_without_a_pocket_is_missing():
    result = audit([spin(None)], [bet("RED", None)])
    assert kinds(result) == ["OUTCOME_MISSING"] and result.expected == [None]
    assert result.findings[0].round_id == "R1" and result.findings[0].bet_id is None
    assert result.findings[0].shoe_id == "S1"  # the session


@pytest.mark.parametrize("pocket", [None, 37, -1, 17])
def test_a_cancelled_spin_refunds_every_bet_whatever_it_recorded(pocket):
    result = audit([spin(pocket, "cancelled")], [bet("STRAIGHT", "17", paid=1000), bet("RED", None, 700, 0,
                                                                                       bet_id="B2")])
    assert result.expected == [1000, 700] and kinds(result) == ["UNDERPAID"]  # B2 was not refunded


def test_a_round_with_an_unknown_status_is_left_unsettled_without_raising():
    result = audit([spin(17, "void")], [bet("STRAIGHT", "17")])
    assert result.expected == [None] and "neither settled nor cancelled" in result.unsettled[0]


def test_a_bet_pointing_at_no_round_is_left_unsettled_without_raising():
    result = audit([spin(17)], [bet("STRAIGHT", "17", round_index=3)])
    assert result.expected == [None] and "not one of the group's 1 rounds" in result.unsettled[0]


@pytest.mark.parametrize(("setting", "credit"), [("void", 1000), ("lose", 0)])
def test_an_invalid_selection_is_flagged_and_owed_per_the_setting(setting, credit):
    result = audit([spin(17)], [bet("SPLIT", "17-19", paid=credit)], rules=replace(RULES, invalid_selection=setting))
    assert kinds(result) == ["SELECTION_INVALID"] and result.expected == [credit]
    assert result.findings[0].recorded == "'17-19'"


def test_an_outside_bet_with_a_selection_is_an_invalid_selection():
    result = audit([spin(3)], [bet("RED", "3", paid=2000)])
    assert kinds(result) == ["OVERPAID", "SELECTION_INVALID"] and result.expected == [1000]


def test_a_code_the_ruleset_does_not_offer_is_refunded_and_flagged():
    no_basket = replace(RULES, odds={k: v for k, v in RULES.odds.items() if k != "SIX_LINE"})
    result = audit([spin(1)], [bet("SIX_LINE", "1-2-3-4-5-6", paid=6000), bet("PLAYER", None, paid=1000,
                                                                              bet_id="B2")], rules=no_basket)
    assert result.expected == [1000, 1000]
    assert kinds(result) == ["BET_TYPE_NOT_OFFERED", "BET_TYPE_NOT_OFFERED", "OVERPAID"]


@pytest.mark.parametrize(("paid", "found"), [(36_000, []), (36_001, ["OVERPAID"]), (35_999, ["UNDERPAID"])])
def test_paid_to_the_minor_unit(paid, found):
    result = audit([spin(17)], [bet("STRAIGHT", "17", paid=paid)])
    assert kinds(result) == found
    if found:
        assert result.findings[0].message.endswith("by 0.01 EUR.")


@pytest.mark.parametrize(("placed_at", "found"), [(CLOSED, []), (CLOSED + 1, ["LATE_BET"]), (CLOSED - 1, [])])
def test_a_bet_exactly_at_betting_close_is_on_time_one_microsecond_after_is_late(placed_at, found):
    assert kinds(audit([spin(17)], [bet("STRAIGHT", "17", paid=36_000, placed_at=placed_at)])) == found


@pytest.mark.parametrize(("stake", "found"), [(100, []), (99, ["STAKE_BELOW_MIN"]), (10_000, []),
                                              (10_001, ["STAKE_ABOVE_MAX"])])
def test_stakes_exactly_at_the_limits_and_one_unit_beyond(stake, found):
    assert kinds(audit([spin(16)], [bet("STRAIGHT", "17", stake=stake)])) == found


def test_a_bet_type_without_limits_is_not_limit_checked():
    assert kinds(audit([spin(16)], [bet("SPLIT", "16-17", stake=1, paid=18)])) == []


@pytest.mark.parametrize(("second", "found"), [(30_000, []), (30_001, ["ROUND_STAKE_ABOVE_TABLE_MAX"])])
def test_an_accounts_total_exactly_at_the_table_maximum_and_one_unit_above(second, found):
    # 200.00 + 300.00 = 500.00 = table max; 300.01 takes the total one cent above it, on that bet only.
    bets = [bet("RED", None, 20_000, placed_at=CLOSED - 10), bet("BLACK", None, second, 0, CLOSED - 5, bet_id="B2")]
    result = audit([spin(0)], bets)
    assert kinds(result) == found
    if found:
        assert result.findings[0].bet_id == "B2" and result.findings[0].recorded == "500.01 EUR"


def test_the_table_maximum_counts_per_account_and_per_round_in_the_order_placed():
    # A1 places B3 first (400.00), then B1 (100.00, total 500.00), then B2 (0.01, total 500.01): only B2
    # crosses. A2's 500.00 and the next round's bets are their own totals.
    bets = [bet("RED", None, 10_000, placed_at=2, bet_id="B1"), bet("RED", None, 1, placed_at=3, bet_id="B2"),
            bet("RED", None, 40_000, placed_at=1, bet_id="B3"), bet("RED", None, 50_000, account="A2", bet_id="B4"),
            bet("RED", None, 50_000, round_index=1, bet_id="B5")]
    no_limits = replace(TABLE, limits={})
    result = audit([spin(3), spin(3, round_no=2)], [replace(b, paid=2 * b.stake) for b in bets], table=no_limits)
    assert [(f.kind, f.bet_id) for f in result.findings] == [("ROUND_STAKE_ABOVE_TABLE_MAX", "B2")]


# --- RTP ---------------------------------------------------------------------------------------------


def test_every_single_zero_bet_returns_36_over_37():
    # Hand: a bet covering k pockets at (36/k - 1):1 returns k/37 * 36/k = 36/37 = 97.2973%.
    rows = roulette_rtp(RULES)
    assert [r.bet_type for r in rows] == list(BET_CODES)
    assert all(r.rtp == Fraction(36, 37) for r in rows)
    assert round(float(rows[0].rtp) * 100, 4) == 97.2973
    assert all(r.game == "roulette" and r.mode == "-" and r.decks == 0 and r.selection is None for r in rows)
    assert all(sum(o.probability for o in r.outcomes) == 1 for r in rows)


def test_every_legal_selection_of_a_code_returns_the_same():
    for code in BET_CODES:
        rtps = {sum(o.probability * o.credit for o in selection_outcomes(PARTAGE, code, s))
                for s in LAYOUT.selections(code)}
        assert len(rtps) == 1, code


def test_la_partage_even_chances_return_1_minus_1_over_74():
    # Hand: 18/37 * 2 + 1/37 * 1/2 = 72/74 + 1/74 = 73/74 = 98.6486%; the other bets stay 36/37.
    rows = {r.bet_type: r.rtp for r in roulette_rtp(PARTAGE)}
    for code in BET_CODES:
        want = Fraction(73, 74) if code in ("RED", "BLACK", "ODD", "EVEN", "LOW", "HIGH") else Fraction(36, 37)
        assert rows[code] == want, code
    assert round(float(rows["RED"]) * 100, 4) == 98.6486


# --- the ruleset file and the registry --------------------------------------------------------------


def test_the_bundled_ruleset_says_what_rules_md_says():
    assert RULES.id == "roulette_single_zero_live" and RULES.document == "004_c40afb2d872578d0.txt"
    assert RULES.red == RED and not RULES.la_partage and RULES.invalid_selection == "void"
    assert RULES.rounding == "floor"
    assert {c: int(o) for c, o in RULES.odds.items()} == ODDS
    assert any("lost" in n for n in RULES.notes)
    assert game("roulette") is GAME and load_ruleset("roulette_single_zero_live") == RULES
    assert GAME.bet_codes == BET_CODES and GAME.audited and GAME.modes == ()


BUNDLED_TEXT = (resources.files("engine.games.roulette.rulesets") / "roulette_single_zero_live.toml").read_text(
    encoding="utf-8")


def test_the_bundled_file_parses_from_text():
    assert parse_roulette_rules(BUNDLED_TEXT, "x.toml") == RULES


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('la_partage = false', 'la_partage = false\nla_partge = true', "la_partge"),
        ('invalid_selection = "void"', 'invalid_selection = "refund"', "invalid_selection"),
        ('rounding = "floor"', 'rounding = "ceil"', "rounding"),
        ('game = "roulette"', 'game = "sic_bo"', "game"),
        ('STRAIGHT = "35:1"', 'STRAIGHT = "35"', "payouts.STRAIGHT"),
        ('HIGH = "1:1"', 'HIGH = "1:1"\nHIGHER = "1:1"', "payouts.HIGHER"),
        ("red = [1, 3,", "red = [37, 3,", "wheel.red"),
        ("red = [1, 3,", "red = [3, 3,", "wheel.red"),
        ("red = [1, 3,", "red = [3,", "wheel.red"),
        ("[wheel]", "[wheel]\nzeros = 2", "wheel.zeros"),
        ('la_partage = false', 'la_partage = "no"', "la_partage"),
    ],
)
def test_a_malformed_ruleset_names_the_file_and_the_field(old, new, field):
    assert old in BUNDLED_TEXT
    with pytest.raises(RulesetError) as e:
        parse_roulette_rules(BUNDLED_TEXT.replace(old, new, 1), "bad.toml")
    assert str(e.value).startswith(f"bad.toml: field '{field}'")


def test_describe_pocket_reads_colours_from_the_ruleset():
    assert describe_pocket(RULES, 36) == "36: red, even, high (19-36), dozen 3 (25-36), column 3"
    assert describe_pocket(RULES, 10) == "10: black, even, low (1-18), dozen 1 (1-12), column 1"
