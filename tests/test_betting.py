"""engine/betting.py: the checks every game makes of a bet, at their boundaries, and the settlement of a
group of rounds whose outcome is one recorded fact (exercised here with a made-up coin game, so no
game's rules are needed). Money in cents of EUR."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.betting import (
    BetChecks,
    BetVerdict,
    OutcomeJudge,
    OutcomeProblem,
    Payout,
    RecordedBet,
    TableFacts,
    audit_group,
    credit_of,
    is_late,
    over_table_max,
    refusal,
    stake_limit_breach,
)
from engine.findings import KINDS, SEVERITY

TABLE = TableFacts("T1", "EUR", 10_000, {"HEADS": (100, 5_000)})


def bet(stake: int = 1000, paid: int = 0, placed_at: int = 10, account: str = "A1", round_index: int = 0,
        bet_id: str = "B1", bet_type: str = "HEADS", selection: str | None = None) -> RecordedBet:
    return RecordedBet(bet_id, round_index, account, bet_type, selection, stake, paid, placed_at)


def test_stake_limits_are_inclusive():
    assert stake_limit_breach(100, (100, 5000)) is None
    assert stake_limit_breach(5000, (100, 5000)) is None
    assert stake_limit_breach(99, (100, 5000)) == "STAKE_BELOW_MIN"
    assert stake_limit_breach(5001, (100, 5000)) == "STAKE_ABOVE_MAX"


def test_a_bet_at_the_close_of_betting_is_on_time_one_microsecond_later_is_late():
    assert not is_late(1_000_000, 1_000_000)
    assert is_late(1_000_001, 1_000_000)
    assert not is_late(999_999, 1_000_000)


def test_the_table_maximum_is_inclusive_and_flags_from_the_crossing_bet_on():
    # A1: 60.00 at t=1, 40.00 at t=2 (total 100.00 = max, fine), 0.01 at t=3 (100.01), 5.00 at t=4 (105.01)
    bets = [bet(1, placed_at=3, bet_id="c"), bet(6000, placed_at=1), bet(4000, placed_at=2), bet(500, placed_at=4)]
    assert over_table_max(bets, 10_000) == {0: 10_001, 3: 10_501}
    assert over_table_max(bets[1:3], 10_000) == {}


def test_the_table_maximum_is_per_account_and_round_and_ties_go_in_record_order():
    bets = [bet(6000), bet(6000, account="A2"), bet(6000, round_index=1), bet(4000), bet(1)]
    assert over_table_max(bets, 10_000) == {4: 10_001}


@given(st.lists(st.tuples(st.integers(1, 5000), st.integers(0, 5), st.sampled_from("AB")), max_size=12),
       st.integers(1, 20_000))
def test_every_flagged_bet_is_one_the_running_total_puts_above_the_maximum(rows, table_max):
    bets = [bet(stake, placed_at=t, account=a, bet_id=str(i)) for i, (stake, t, a) in enumerate(rows)]
    flagged = over_table_max(bets, table_max)
    for i, b in enumerate(bets):
        before = sum(o.stake for j, o in enumerate(bets)
                     if o.account_id == b.account_id and (o.placed_at, j) <= (b.placed_at, i))
        assert (i in flagged) == (before > table_max)
        assert flagged.get(i, before) == before


def test_credit_is_exact_and_rounded_once():
    half = Payout(Fraction(1, 2), "half back")
    assert credit_of(1001, half, "floor") == 500
    assert credit_of(1001, half, "half_up") == 501
    assert credit_of(1000, Payout(Fraction(36), "won 35:1"), "floor") == 36_000


def test_refusal_refunds_a_code_not_offered_before_looking_at_the_selection():
    verdict = refusal("rs", bet(bet_type="TAILS"), offered=False, legal=False, invalid_selection="lose")
    assert verdict == BetVerdict(1000, "rs does not offer TAILS: refunded", "BET_TYPE_NOT_OFFERED",
                                 "a bet type of rs", "TAILS")
    lost = refusal("rs", bet(selection="x"), offered=True, legal=False, invalid_selection="lose")
    assert lost.credit == 0 and lost.finding == "SELECTION_INVALID" and lost.recorded == "'x'"
    assert refusal("rs", bet(selection="x"), True, False, "void").credit == 1000
    assert refusal("rs", bet(), True, True, "void") is None


def test_findings_name_table_group_round_bet_and_account_with_money_in_the_tables_currency():
    checks = BetChecks(TABLE, "S9")
    checks.check(bet(stake=50, paid=2001, placed_at=11), "R1", 4, 10, 2000, 10_050)
    by_kind = {f.kind: f for f in checks.findings}
    assert sorted(by_kind) == ["LATE_BET", "OVERPAID", "ROUND_STAKE_ABOVE_TABLE_MAX", "STAKE_BELOW_MIN"]
    assert all((f.table_id, f.shoe_id, f.round_id, f.bet_id, f.account_id) == ("T1", "S9", "R1", "B1", "A1")
               for f in checks.findings)
    assert by_kind["OVERPAID"].message == ("Bet B1 (HEADS, stake 0.50 EUR) in round 4 was paid 20.01 EUR, "
                                           "expected 20.00 EUR: overpaid by 0.01 EUR.")
    assert by_kind["STAKE_BELOW_MIN"].expected == ">= 1.00 EUR"
    assert by_kind["LATE_BET"].recorded == "placed at 1970-01-01T00:00:00.000011Z"
    assert by_kind["ROUND_STAKE_ABOVE_TABLE_MAX"].recorded == "100.50 EUR"


def test_every_bet_finding_in_words_written_out_by_hand():
    # engine.betting's templates (BET_WORDS) are the words of the column path and of blackjack, stud and
    # baccarat too: each text pinned here once
    checks = BetChecks(TABLE, "S9")
    checks.check(bet(stake=5001, paid=999, placed_at=1_000_001, selection="odd"), "R1", 7, 1_000_000, 1000, 10_001)
    said = {f.kind: (f.expected, f.recorded, f.message) for f in checks.findings}
    what = "Bet B1 (HEADS 'odd', stake 50.01 EUR)"
    assert said == {
        "UNDERPAID": ("10.00 EUR", "9.99 EUR",
                      f"{what} in round 7 was paid 9.99 EUR, expected 10.00 EUR: underpaid by 0.01 EUR."),
        "STAKE_ABOVE_MAX": ("<= 50.00 EUR", "50.01 EUR", f"{what} is above the HEADS maximum 50.00 EUR."),
        "LATE_BET": ("placed by 1970-01-01T00:00:01.000000Z", "placed at 1970-01-01T00:00:01.000001Z",
                     f"{what} was placed at 1970-01-01T00:00:01.000001Z, after betting closed at "
                     "1970-01-01T00:00:01.000000Z for round 7."),
        "ROUND_STAKE_ABOVE_TABLE_MAX": ("account total <= 100.00 EUR", "100.01 EUR",
                                        f"{what} brings A1's total stake on round 7 to 100.01 EUR, above the table "
                                        "maximum 100.00 EUR."),
    }
    assert list(said) == ["UNDERPAID", "STAKE_ABOVE_MAX", "LATE_BET", "ROUND_STAKE_ABOVE_TABLE_MAX"]
    below = BetChecks(TABLE, "S9")
    below.check(bet(stake=99, paid=0, selection=""), "R1", 7, 10, 0, None)
    assert [(f.expected, f.recorded, f.message) for f in below.findings] == [
        (">= 1.00 EUR", "0.99 EUR", "Bet B1 (HEADS, stake 0.99 EUR) is below the HEADS minimum 1.00 EUR.")]


def test_a_refused_bet_and_its_line_in_words_written_out_by_hand():
    refused = bet(bet_type="EDGE", selection="x", paid=1000)
    result = audit_group(TABLE, "S1", [Toss("R1", 1, "settled", 10, "H")], [refused], OutcomeJudge(
        outcome=COIN.outcome, problem=COIN.problem, describe=COIN.describe, explain=COIN.explain,
        judge=lambda r, b: refusal("coin_live", b, False, False, "void")))
    assert [(f.kind, f.expected, f.recorded, f.message) for f in result.findings] == [
        ("BET_TYPE_NOT_OFFERED", "a bet type of coin_live", "EDGE",
         "Bet B1 (EDGE 'x', stake 10.00 EUR): coin_live does not offer EDGE: refunded.")]
    assert result.rounds[0].explanation[1] == ("Bet B1 (EDGE 'x', stake 10.00 EUR): coin_live does not offer EDGE: "
                                               "refunded; owed 10.00 EUR, paid 10.00 EUR")


def test_a_clean_bet_raises_nothing():
    checks = BetChecks(TABLE, "S9")
    checks.check(bet(stake=5000, paid=0, placed_at=10), "R1", 1, 10, 0, None)
    assert checks.findings == []


# --- audit_group with a made-up coin game -------------------------------------------------------------


@dataclass(frozen=True)
class Toss:
    round_id: str
    round_no: int
    status: str
    betting_closed_at: int
    side: str | None


def coin_problem(r: Toss) -> OutcomeProblem | None:
    if r.side is None:
        return OutcomeProblem("OUTCOME_MISSING", "heads or tails", "no side recorded")
    if r.side not in ("H", "T"):
        return OutcomeProblem("OUTCOME_INVALID", "heads or tails", f"side {r.side!r}")
    return None


def coin_judge(r: Toss, b: RecordedBet) -> BetVerdict:
    return BetVerdict(2 * b.stake if r.side == "H" else 0, "heads" if r.side == "H" else "tails")


COIN = OutcomeJudge(
    outcome=lambda r: r.side,
    problem=coin_problem,
    judge=coin_judge,
    describe=lambda r: {"H": "heads", "T": "tails"}.get(r.side),
    explain=lambda r, lines: [f"side {r.side}", *lines],
)


def settle(rounds, bets):
    return audit_group(TABLE, "S1", rounds, bets, COIN)


def test_audit_group_owes_refunds_and_leaves_unsettled_what_it_must():
    rounds = [Toss("R1", 1, "settled", 10, "H"), Toss("R2", 2, "settled", 10, "X"), Toss("R3", 3, "cancelled", 10, "X"),
              Toss("R4", 4, "settled", 10, None), Toss("R5", 5, "lost", 10, "H")]
    bets = [bet(paid=2000), bet(round_index=1, placed_at=99), bet(round_index=2, paid=1000), bet(round_index=3),
            bet(round_index=4), bet(round_index=5)]
    result = settle(rounds, bets)
    assert result.expected == [2000, None, 1000, None, None, None]
    assert [u is None for u in result.unsettled] == [True, False, True, False, False, False]
    assert [f.kind for f in result.findings] == ["OUTCOME_INVALID", "OUTCOME_MISSING"]  # nothing on unsettled bets
    assert [r.finding_kinds for r in result.rounds] == [(), ("OUTCOME_INVALID",), (), ("OUTCOME_MISSING",), ()]
    assert result.rounds[2].explanation == ("side X", "Bet B1 (HEADS, stake 10.00 EUR): round cancelled: refunded; "
                                            "owed 10.00 EUR, paid 10.00 EUR")
    assert [r.description for r in result.rounds] == ["heads", None, None, None, "heads"]
    assert [r.outcome for r in result.rounds] == ["H", "X", "X", None, "H"]
    assert result.rounds[1].unsettled_reason == result.unsettled[1]
    assert "neither settled nor cancelled" in result.rounds[4].unsettled_reason


def test_new_finding_kinds_are_appended_after_blackjacks_with_their_severities():
    # the catalogue is append-only: the outcome games' kinds follow blackjack's last, in the order they landed
    outcome_kinds = ("OUTCOME_INVALID", "OUTCOME_MISSING", "SELECTION_INVALID", "ROUND_STAKE_ABOVE_TABLE_MAX")
    at = KINDS.index("BET_ON_EMPTY_BOX") + 1
    assert KINDS[at:at + 4] == outcome_kinds
    assert [SEVERITY[k] for k in outcome_kinds] == ["critical", "critical", "major", "major"]
    assert KINDS[:3] == ("SHOE_COMPOSITION", "BURN_MISMATCH", "CARD_SEQUENCE_MISMATCH")


@pytest.mark.parametrize("currency", ["JPY", "EUR"])
def test_money_follows_the_currencys_minor_unit(currency):
    checks = BetChecks(TableFacts("T", currency, 1, {}), "S")
    assert checks.money(12345) == ("12,345 JPY" if currency == "JPY" else "123.45 EUR")
