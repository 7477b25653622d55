"""Sic bo (document 004, the common live table; Macau the alternative): the table's selections,
hand-worked rolls for every bet code, settlement against a plain enumeration of the 216 rolls written
here, the audit of a session at its boundaries, exact RTP against hand-computed house edges, and the
ruleset file.

Money is in cents of EUR; credit = stake back + win on a win, 0 on a loss.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from importlib import resources
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.betting_columns import UnitColumns
from engine.games import game, load_ruleset
from engine.games.sic_bo import BET_CODES, GAME
from engine.games.sic_bo.audit import RecordedBet, RecordedRound, TableFacts, audit_rolls
from engine.games.sic_bo.layout import SELECTIONS, is_legal
from engine.games.sic_bo.rtp import selection_outcomes, sic_bo_rtp
from engine.games.sic_bo.rules import RULESETS_PACKAGE, load_sic_bo_rules, parse_sic_bo_rules
from engine.games.sic_bo.settlement import roll_verdict, roll_verdicts
from engine.ruleset_file import RulesetError, bundled_ids

RULES = load_sic_bo_rules()
MACAU = replace(RULES, paytable="macau")
CLOSED = 7_000_000
TABLE = TableFacts("SB1", "EUR", 100_000, {"SMALL": (100, 50_000), "TRIPLE": (100, 5_000)})
ALL_ROLLS = list(product(range(1, 7), repeat=3))

# --- the plain paytables and rules, written out from RULES.md § Sic Bo -----------------------------
COMMON = {"SMALL": 1, "BIG": 1, "ODD": 1, "EVEN": 1, "DOUBLE": 10, "TRIPLE": 180, "ANY_TRIPLE": 30, "COMBO": 5,
          "TOTAL": {4: 60, 5: 30, 6: 17, 7: 12, 8: 8, 9: 6, 10: 6, 11: 6, 12: 6, 13: 8, 14: 12, 15: 17, 16: 30,
                    17: 60},
          "SINGLE": {1: 1, 2: 2, 3: 3}}  # fmt: skip
MACAU_TABLE = {**COMMON, "DOUBLE": 8, "TRIPLE": 150, "ANY_TRIPLE": 24,
               "TOTAL": {**COMMON["TOTAL"], 4: 50, 17: 50, 5: 18, 16: 18, 6: 14, 15: 14}}  # fmt: skip


def plain_credit(table: dict, code: str, selection: str | None, dice: tuple[int, int, int], stake: int) -> int:
    a, b, c = dice
    total, triple = a + b + c, a == b == c
    if code in ("SMALL", "BIG", "ODD", "EVEN"):
        wins = not triple and {"SMALL": 4 <= total <= 10, "BIG": 11 <= total <= 17,
                               "ODD": total % 2 == 1, "EVEN": total % 2 == 0}[code]
        return stake * (1 + table[code]) if wins else 0
    if code == "ANY_TRIPLE":
        return stake * (1 + table[code]) if triple else 0
    if code == "TOTAL":
        return stake * (1 + table["TOTAL"][total]) if str(total) == selection else 0
    if code == "COMBO":
        x, y = (int(f) for f in selection.split("-"))
        return stake * (1 + table[code]) if x in dice and y in dice else 0
    face = int(selection)
    shows = [a, b, c].count(face)
    if code == "SINGLE":
        return stake * (1 + table["SINGLE"][shows]) if shows else 0
    if code == "DOUBLE":
        return stake * (1 + table[code]) if shows >= 2 else 0
    return stake * (1 + table[code]) if shows == 3 else 0  # TRIPLE


EVERY_BET = ([(c, None) for c in ("SMALL", "BIG", "ODD", "EVEN", "ANY_TRIPLE")]
             + [("TOTAL", str(t)) for t in range(4, 18)]
             + [(c, str(f)) for c in ("DOUBLE", "TRIPLE", "SINGLE") for f in range(1, 7)]
             + [("COMBO", f"{x}-{y}") for x in range(1, 7) for y in range(x + 1, 7)])  # fmt: skip


# --- selections ---------------------------------------------------------------------------------------


def test_the_legal_selections_are_rules_mds():
    assert {(c, s) for c, sels in SELECTIONS.items() for s in sels} == set(EVERY_BET)
    assert len(SELECTIONS["COMBO"]) == 15 and len(SELECTIONS["TOTAL"]) == 14
    assert is_legal("SMALL", "") and is_legal("SMALL", None)


@pytest.mark.parametrize(("code", "selection"), [("TOTAL", "3"), ("TOTAL", "18"), ("TOTAL", None), ("DOUBLE", "0"),
                                                 ("DOUBLE", "7"), ("TRIPLE", "1-1"), ("COMBO", "2-1"),
                                                 ("COMBO", "3-3"), ("COMBO", "1-7"), ("COMBO", "1-2-3"),
                                                 ("SINGLE", None), ("SMALL", "1"), ("ANY_TRIPLE", "6"),
                                                 ("SINGLE", " 1"), ("TOTAL", "04"), ("HOUSE", None)])
def test_illegal_selections_are_refused(code, selection):
    assert not is_legal(code, selection)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(BET_CODES), st.one_of(st.none(), st.text(alphabet="0123456789-", max_size=5)))
def test_a_random_selection_is_legal_exactly_when_rules_md_lists_it(code, selection):
    assert is_legal(code, selection) == ((code, selection or None) in set(EVERY_BET))


# --- settlement: hand-worked rolls --------------------------------------------------------------------


def bet(code: str, selection: str | None, stake: int = 1000, paid: int = 0, placed_at: int = CLOSED,
        account: str = "A1", round_index: int = 0, bet_id: str = "B1") -> RecordedBet:
    return RecordedBet(bet_id, round_index, account, code, selection, stake, paid, placed_at)


def roll(dice, status: str = "settled", round_no: int = 1) -> RecordedRound:
    return RecordedRound(f"R{round_no}", round_no, status, CLOSED, dice)


def owed(dice, code: str, selection: str | None, stake: int = 1000, rules=RULES) -> int | None:
    return audit_rolls(rules, TABLE, "S1", [roll(dice)], [bet(code, selection, stake)]).expected[0]


@pytest.mark.parametrize(
    ("dice", "code", "selection", "credit"),
    [
        ((3, 1, 2), "SINGLE", "3", 2_000), ((3, 3, 1), "SINGLE", "3", 3_000),  # 1:1, 2:1, 3:1 by count
        ((3, 3, 3), "SINGLE", "3", 4_000), ((1, 2, 4), "SINGLE", "3", 0),
        ((1, 1, 2), "TOTAL", "4", 61_000), ((6, 5, 6), "TOTAL", "17", 61_000),  # 60:1 both ends
        ((1, 1, 2), "TOTAL", "5", 0), ((2, 2, 1), "TOTAL", "5", 31_000), ((3, 3, 4), "TOTAL", "10", 7_000),
        ((1, 1, 2), "COMBO", "1-2", 6_000), ((2, 1, 2), "COMBO", "1-2", 6_000),  # paid once on a double
        ((1, 3, 3), "COMBO", "1-2", 0), ((1, 1, 1), "COMBO", "1-2", 0),
        ((4, 1, 4), "DOUBLE", "4", 11_000), ((4, 4, 4), "DOUBLE", "4", 11_000), ((4, 1, 2), "DOUBLE", "4", 0),
        ((6, 6, 6), "TRIPLE", "6", 181_000), ((6, 6, 5), "TRIPLE", "6", 0),
        ((3, 3, 3), "ANY_TRIPLE", None, 31_000), ((3, 3, 4), "ANY_TRIPLE", "", 0),
        ((4, 4, 2), "SMALL", None, 2_000), ((5, 4, 2), "SMALL", None, 0),  # 10 small, 11 big
        ((5, 4, 2), "BIG", None, 2_000), ((4, 4, 2), "BIG", None, 0), ((1, 1, 2), "SMALL", None, 2_000),
        ((6, 6, 5), "BIG", None, 2_000), ((1, 2, 4), "ODD", None, 2_000), ((1, 2, 3), "EVEN", None, 2_000),
        ((1, 2, 3), "ODD", None, 0), ((1, 2, 4), "EVEN", None, 0),
    ],
)  # fmt: skip
def test_hand_worked_rolls(dice, code, selection, credit):
    assert owed(dice, code, selection) == credit


@pytest.mark.parametrize("dice", [(2, 2, 2), (5, 5, 5), (1, 1, 1), (6, 6, 6)])
def test_a_triple_loses_small_big_odd_and_even(dice):
    # 2-2-2 is 6 (small, even), 5-5-5 is 15 (big, odd): without the triple rule two of the four would win.
    assert [owed(dice, code, None) for code in ("SMALL", "BIG", "ODD", "EVEN")] == [0, 0, 0, 0]


def test_without_the_triple_rule_a_triple_pays_by_its_total():
    rules = replace(RULES, triple_loses=frozenset())
    assert [owed((2, 2, 2), code, None, rules=rules) for code in ("SMALL", "BIG", "ODD", "EVEN")] == [2000, 0, 0, 2000]


def test_the_macau_paytable():
    assert owed((1, 1, 2), "TOTAL", "4", rules=MACAU) == 51_000
    assert owed((2, 2, 1), "TOTAL", "5", rules=MACAU) == 19_000
    assert owed((6, 6, 3), "TOTAL", "15", rules=MACAU) == 15_000
    assert owed((4, 4, 1), "DOUBLE", "4", rules=MACAU) == 9_000
    assert owed((6, 6, 6), "TRIPLE", "6", rules=MACAU) == 151_000
    assert owed((6, 6, 6), "ANY_TRIPLE", None, rules=MACAU) == 25_000
    assert owed((3, 3, 4), "TOTAL", "10", rules=MACAU) == 7_000  # as the common table


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 100_000), st.booleans())
def test_settlement_agrees_with_a_plain_enumeration_of_the_216_rolls(stake, macau):
    rules, table = (MACAU, MACAU_TABLE) if macau else (RULES, COMMON)
    rounds = [roll(d, round_no=i + 1) for i, d in enumerate(ALL_ROLLS)]
    bets = [bet(c, s, stake, round_index=i) for i in range(len(ALL_ROLLS)) for c, s in EVERY_BET]
    got = audit_rolls(rules, TABLE, "S1", rounds, bets).expected
    assert got == [plain_credit(table, c, s, d, stake) for d in ALL_ROLLS for c, s in EVERY_BET]


@pytest.mark.parametrize("ruleset_id", bundled_ids(RULESETS_PACKAGE))
def test_a_selections_verdicts_at_once_are_roll_verdict_on_every_roll(ruleset_id):
    """roll_verdicts (the audit's verdicts, a bet type and selection's rolls at once) against roll_verdict roll by
    roll: every legal selection of every code, selections that are not legal, a code not offered, under every
    setting a ruleset has (triple_loses, invalid_selection), on every roll and on a few out of order."""
    bundled = load_sic_bo_rules(ruleset_id)
    few = [(6, 6, 6), (1, 2, 3), (2, 2, 5), (1, 2, 3)]
    for triple_loses in (frozenset(), bundled.triple_loses):
        for invalid in ("void", "lose"):
            pays = {code: p for code, p in bundled.pays.items() if code not in ("TOTAL", "BIG")}
            for rules in (replace(bundled, triple_loses=triple_loses, invalid_selection=invalid),
                          replace(bundled, triple_loses=triple_loses, invalid_selection=invalid,
                                  paytables={bundled.paytable: pays})):
                for code in [*BET_CODES, "NOT_A_BET"]:
                    for selection in [*SELECTIONS.get(code, ()), None, "", "7", "1-1", "19"]:
                        for on in (ALL_ROLLS, few):
                            assert roll_verdicts(rules, code, selection, on) == UnitColumns.of(
                                [roll_verdict(rules, code, selection, dice) for dice in on]), (code, selection, on)


# --- the audit of a session -------------------------------------------------------------------------


def audit(rounds, bets, rules=RULES, table=TABLE):
    return audit_rolls(rules, table, "S1", rounds, bets)


def kinds(result) -> list[str]:
    return sorted(f.kind for f in result.findings)


def test_a_clean_roll_flags_nothing_and_explains_itself():
    result = audit([roll((2, 5, 2))], [bet("SINGLE", "2", paid=3000), bet("SMALL", None, paid=2000, bet_id="B2")])
    assert result.expected == [3000, 2000] and kinds(result) == []
    report = result.rounds[0]
    assert report.outcome == (2, 5, 2) and report.unsettled_reason is None
    assert report.description == "2-5-2: total 9, small, odd, a double of 2"
    assert report.explanation[0] == "dice 2-5-2: total 9, small, odd, a double of 2"
    assert "needs 2 on one, two or three dice (paid by how many); won 2:1 (2 dice show it)" in report.explanation[1]


def test_a_triple_is_explained_and_the_even_money_bet_lost_to_it():
    result = audit([roll((4, 4, 4))], [bet("BIG", None)])
    assert result.rounds[0].description == "4-4-4: total 12, a triple of 4"
    assert "any triple loses it" in result.rounds[0].explanation[1]


@pytest.mark.parametrize("dice", [(0, 1, 2), (1, 7, 2), (1, 2), (1, 2, 3, 4), (1, 2, True), (1, 2, "3"), (1, 2, 3.0)])
def test_an_invalid_roll_is_flagged_and_its_bets_cannot_be_settled(dice):
    result = audit([roll(dice)], [bet("SMALL", None, paid=2000, placed_at=CLOSED + 1)])
    assert kinds(result) == ["OUTCOME_INVALID"] and result.expected == [None]
    assert "cannot be settled" in result.unsettled[0] and result.rounds[0].description is None


@pytest.mark.parametrize("dice", [(1, 1, 1), (6, 6, 6), [1, 2, 3]])
def test_the_edges_of_a_die_are_valid(dice):
    result = audit([roll(dice)], [bet("ANY_TRIPLE", None, paid=0)])
    assert result.unsettled == [None] and "OUTCOME_INVALID" not in kinds(result)


@pytest.mark.parametrize("dice", [None, ()])
def test_a_settled_roll_without_dice_is_missing(dice):
    result = audit([roll(dice)], [bet("SMALL", None)])
    assert kinds(result) == ["OUTCOME_MISSING"] and result.expected == [None]


@pytest.mark.parametrize("dice", [(0, 7), None, (1, 2, 3)])
def test_a_cancelled_roll_refunds_every_bet_whatever_it_recorded(dice):
    result = audit([roll(dice, "cancelled")], [bet("TRIPLE", "6", paid=1000), bet("SMALL", None, 500, 0,
                                                                                  bet_id="B2")])
    assert result.expected == [1000, 500] and kinds(result) == ["UNDERPAID"]


@pytest.mark.parametrize(("setting", "credit"), [("void", 1000), ("lose", 0)])
def test_an_invalid_selection_is_flagged_and_owed_per_the_setting(setting, credit):
    result = audit([roll((1, 1, 1))], [bet("TOTAL", "3", paid=credit)], rules=replace(RULES, invalid_selection=setting))
    assert kinds(result) == ["SELECTION_INVALID"] and result.expected == [credit]


def test_a_code_the_paytable_does_not_price_is_refunded():
    no_combo = replace(RULES, paytables={"common": {k: v for k, v in RULES.pays.items() if k != "COMBO"}})
    result = audit([roll((1, 2, 3))], [bet("COMBO", "1-2", paid=6000), bet("STRAIGHT", "1", paid=1000, bet_id="B2")],
                   rules=no_combo)
    assert result.expected == [1000, 1000]
    assert kinds(result) == ["BET_TYPE_NOT_OFFERED", "BET_TYPE_NOT_OFFERED", "OVERPAID"]


@pytest.mark.parametrize(("placed_at", "stake", "found"), [
    (CLOSED, 5_000, []), (CLOSED + 1, 5_000, ["LATE_BET"]),
    (CLOSED, 100, []), (CLOSED, 99, ["STAKE_BELOW_MIN"]), (CLOSED, 5_001, ["STAKE_ABOVE_MAX"]),
])  # fmt: skip
def test_the_window_and_the_limits_at_their_edges(placed_at, stake, found):
    assert kinds(audit([roll((1, 2, 3))], [bet("TRIPLE", "1", stake, placed_at=placed_at)])) == found


@pytest.mark.parametrize(("last", "found"), [(50_000, []), (50_001, ["ROUND_STAKE_ABOVE_TABLE_MAX"])])
def test_an_accounts_total_at_the_table_maximum_and_one_unit_above(last, found):
    bets = [bet("SMALL", None, 50_000, paid=0, placed_at=1), bet("BIG", None, last, paid=2 * last, placed_at=2,
                                                                 bet_id="B2")]
    result = audit([roll((6, 5, 4))], bets)
    assert kinds(result) == found


# --- RTP -----------------------------------------------------------------------------------------------


def edge_percent(rows, code: str, selection: str | None = None) -> float:
    row = next(r for r in rows if r.bet_type == code and r.selection == selection)
    return round(float(row.house_edge) * 100, 2)


def test_rtp_of_every_common_bet_by_hand():
    rows = sic_bo_rtp(RULES)
    by = {(r.bet_type, r.selection): r.rtp for r in rows}
    # SMALL: totals 4-10 without triples: 108 - 3 triples (1-1-1, 2-2-2, 3-3-3) = 105 of 216 -> 210/216.
    assert by[("SMALL", None)] == by[("BIG", None)] == Fraction(210, 216)
    assert by[("ODD", None)] == by[("EVEN", None)] == Fraction(210, 216)
    # SINGLE: 75 rolls with it once (3 x 5 x 5) x2, 15 twice (3 x 5) x3, 1 thrice x4: (150 + 45 + 4)/216 = 1 - 17/216.
    assert by[("SINGLE", None)] == 1 - Fraction(17, 216)
    # ANY_TRIPLE: 6 rolls x 31 = 186/216; TRIPLE: 1 roll x 181 = 181/216.
    assert by[("ANY_TRIPLE", None)] == Fraction(186, 216) and by[("TRIPLE", None)] == Fraction(181, 216)
    # DOUBLE: 15 rolls show it exactly twice + 1 triple = 16, x 11 = 176/216 (edge 18.52%).
    assert by[("DOUBLE", None)] == Fraction(176, 216)
    # COMBO a-b: a, b and one of 4 other faces in any order 4 x 6 = 24, a-a-b 3, a-b-b 3 = 30 rolls x 6 = 180/216.
    assert by[("COMBO", None)] == Fraction(180, 216)
    assert [edge_percent(rows, c) for c in ("SMALL", "SINGLE", "ANY_TRIPLE", "TRIPLE", "DOUBLE", "COMBO")] == [
        2.78, 7.87, 13.89, 16.20, 18.52, 16.67]


# ways to roll each total (a hand count: 4 = 1-1-2 in 3 orders, ...), and Wizard of Odds' common-table edges
WAYS = {4: 3, 5: 6, 6: 10, 7: 15, 8: 21, 9: 25, 10: 27}
WIZARD_EDGE = {4: 15.28, 5: 13.89, 6: 16.67, 7: 9.72, 8: 12.50, 9: 18.98, 10: 12.50}


@pytest.mark.parametrize("total", range(4, 11))
def test_rtp_of_each_total_by_hand_and_published(total):
    rows = sic_bo_rtp(RULES)
    pays = COMMON["TOTAL"][total]
    for t in (total, 21 - total):  # a total and its mirror 21 - t are rolled as many ways
        row = next(r for r in rows if r.bet_type == "TOTAL" and r.selection == str(t))
        assert row.rtp == Fraction(WAYS[total] * (pays + 1), 216)
        assert edge_percent(rows, "TOTAL", str(t)) == WIZARD_EDGE[total]


def test_rows_are_exact_distributions_named_by_game():
    rows = sic_bo_rtp(RULES)
    assert len(rows) == len(BET_CODES) - 1 + 14  # TOTAL one row per total
    assert all(r.game == "sic_bo" and r.mode == "-" and r.decks == 0 for r in rows)
    assert all(sum(o.probability for o in r.outcomes) == 1 for r in rows)
    assert all(r.rtp == sum(o.probability * o.credit for o in r.outcomes) for r in rows)


@pytest.mark.parametrize("code", ["DOUBLE", "TRIPLE", "COMBO", "SINGLE"])
def test_every_selection_of_a_face_bet_returns_the_same(code):
    rtps = {sum(o.probability * o.credit for o in selection_outcomes(RULES, code, s)) for s in SELECTIONS[code]}
    assert len(rtps) == 1


def test_macau_rtp_by_hand():
    by = {(r.bet_type, r.selection): r.rtp for r in sic_bo_rtp(MACAU)}
    assert by[("TOTAL", "4")] == Fraction(3 * 51, 216)  # 70.83%
    assert by[("TOTAL", "5")] == Fraction(6 * 19, 216)
    assert by[("DOUBLE", None)] == Fraction(16 * 9, 216)
    assert by[("ANY_TRIPLE", None)] == Fraction(6 * 25, 216)


# --- the ruleset file and the registry --------------------------------------------------------------


def test_the_bundled_ruleset_says_what_rules_md_says():
    assert RULES.id == "sic_bo_live" and RULES.paytable == "common" and RULES.invalid_selection == "void"
    assert RULES.triple_loses == {"SMALL", "BIG", "ODD", "EVEN"} and RULES.rounding == "floor"
    for name, table in (("common", COMMON), ("macau", MACAU_TABLE)):
        parsed = RULES.paytables[name]
        assert {c: int(p[""]) for c, p in parsed.items() if c not in ("TOTAL", "SINGLE")} == {
            c: o for c, o in table.items() if c not in ("TOTAL", "SINGLE")}
        assert {int(k): int(v) for k, v in parsed["TOTAL"].items()} == table["TOTAL"]
        assert {int(k): int(v) for k, v in parsed["SINGLE"].items()} == table["SINGLE"]
    assert game("sic_bo") is GAME and load_ruleset("sic_bo_live") == RULES and GAME.audited


BUNDLED_TEXT = (resources.files("engine.games.sic_bo.rulesets") / "sic_bo_live.toml").read_text(encoding="utf-8")


def test_the_bundled_file_parses_from_text():
    assert parse_sic_bo_rules(BUNDLED_TEXT, "x.toml") == RULES


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('paytable = "common"', 'paytable = "vegas"', "paytable"),
        ('triple_loses = ["SMALL",', 'triple_loses = ["TOTAL",', "triple_loses"),
        ('invalid_selection = "void"', 'invalid_selection = "x"', "invalid_selection"),
        ('ODD = "1:1"', 'ODD = "1:1"\nHOUSE = "1:1"', "paytables.common.HOUSE"),
        ('TOTAL = { 4 = "60:1", ', 'TOTAL = { ', "paytables.common.TOTAL"),
        ('TOTAL = { 4 = "60:1", ', 'TOTAL = { 3 = "180:1", 4 = "60:1", ', "paytables.common.TOTAL.3"),
        ('SINGLE = { 1 = "1:1",', 'SINGLE = { 1 = "one",', "paytables.common.SINGLE.1"),
        ('DOUBLE = "10:1"', 'DOUBLE = 10', "paytables.common.DOUBLE"),
        ('rounding = "floor"', 'rounding = "up"', "rounding"),
        ('game = "sic_bo"', 'game = "roulette"', "game"),
        ('paytable = "common"', 'paytable = "common"\npaytabel = "macau"', "paytabel"),
    ],
)
def test_a_malformed_ruleset_names_the_file_and_the_field(old, new, field):
    assert old in BUNDLED_TEXT
    with pytest.raises(RulesetError) as e:
        parse_sic_bo_rules(BUNDLED_TEXT.replace(old, new, 1), "bad.toml")
    assert str(e.value).startswith(f"bad.toml: field '{field}'")
