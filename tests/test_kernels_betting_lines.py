"""The outcome games' explanation written by a kernel as bytes (engine.betting_lines) against the readable words:
format_money for each amount (random int64 amounts and the boundaries of its commas, decimals and sign, by
hand), the lines of hand-worked rounds (the order, a head with no bet, multi-byte UTF-8 texts, a selection of ''
and None) both compiled and as Python, and whole sessions with amounts that need commas against the readable
engine (engine.betting.audit_group a bet at a time), compiled and within `kernels.as_python()` (the replay's
path). tests/test_betting_columns.py draws the sessions of every other boundary through the same path."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import betting, betting_lines, kernels
from engine.betting import RecordedBet, TableFacts
from engine.findings import format_money, money_exponent
from engine.games.roulette.audit import RecordedRound as Spin
from engine.games.roulette.audit import audit_spins
from engine.games.roulette.layout import BET_CODES as ROULETTE_CODES
from engine.games.roulette.layout import layout
from engine.games.sic_bo.audit import RecordedRound as Roll
from engine.games.sic_bo.audit import audit_rolls
from engine.games.sic_bo.layout import BET_CODES as SIC_BO_CODES
from engine.games.sic_bo.layout import SELECTIONS
from tests.test_betting_columns import DICE, POCKETS, ROULETTE, SIC_BO, rolls_bet_by_bet, spins_bet_by_bet

# a kernel both ways
MODES = {"python": lambda kernel: kernel.py_func, "compiled": lambda kernel: kernel.compile()}
CURRENCIES = ("EUR", "JPY", "BHD", None)  # 2, 0 and 3 decimals, and no currency named


def _money(mode: str, amount: int, currency: str | None) -> str:
    put_money = MODES[mode](betting_lines.put_money)
    exp = money_exponent(currency)
    width = put_money(np.zeros(0, np.uint8), 0, True, np.int64(amount), exp)
    buf = np.zeros(width, np.uint8)
    assert put_money(buf, 0, False, np.int64(amount), exp) == width
    return buf.tobytes().decode() + (f" {currency}" if currency else "")


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(MODES)), st.one_of(st.integers(-2**63, 2**63 - 1), st.integers(-10**7, 10**7)),
       st.sampled_from(CURRENCIES))
def test_an_amount_is_written_as_format_money(mode, amount, currency):
    assert _money(mode, amount, currency) == format_money(amount, currency)


def _instant(mode: str, us: int) -> str:
    put_instant = MODES[mode](betting.put_instant)
    buf = np.zeros(put_instant(np.zeros(0, np.uint8), 0, True, np.int64(us)), np.uint8)
    assert put_instant(buf, 0, False, np.int64(us)) == len(buf)
    return buf.tobytes().decode()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(MODES)), st.one_of(st.integers(0, 2**32 * 1_000_000 - 1),
                                               st.integers(1_577_836_800_000_000, 1_893_456_000_000_000)))
def test_an_instant_is_written_as_us_text(mode, us):
    assert betting.exact(np.array([us]))[0]
    assert _instant(mode, us) == betting.us_text(us)


@pytest.mark.parametrize("mode", MODES)
def test_instants_by_hand(mode):
    assert _instant(mode, 0) == "1970-01-01T00:00:00.000000Z"
    assert _instant(mode, 951_782_400_123_456) == "2000-02-29T00:00:00.123456Z"  # (a leap day of a 400th year)
    assert _instant(mode, 2**32 * 1_000_000 - 1) == "2106-02-07T06:28:15.999999Z"
    assert not betting.exact(np.array([-1, 2**32 * 1_000_000])).any()


@pytest.mark.parametrize("mode", MODES)
def test_the_commas_decimals_and_sign_of_an_amount_by_hand(mode):
    cases = {("EUR", 0): "0.00 EUR", ("EUR", 5): "0.05 EUR", ("EUR", 99): "0.99 EUR", ("EUR", 100): "1.00 EUR",
             ("EUR", 99_999): "999.99 EUR", ("EUR", 100_000): "1,000.00 EUR", ("EUR", -100_000): "-1,000.00 EUR",
             ("EUR", -5): "-0.05 EUR", ("EUR", 123_456_789): "1,234,567.89 EUR", ("JPY", 999): "999 JPY",
             ("JPY", 1_000): "1,000 JPY", ("JPY", -1_000_000): "-1,000,000 JPY", ("BHD", 1): "0.001 BHD",
             ("BHD", 1_000_000): "1,000.000 BHD", (None, 12_345): "123.45",
             ("JPY", -2**63): "-9,223,372,036,854,775,808 JPY", ("JPY", 2**63 - 1): "9,223,372,036,854,775,807 JPY"}
    assert {case: _money(mode, amount, currency) for case in cases for currency, amount in [case]} == cases


def _amount_texts(mode: str, amounts: list[int], currency: str | None) -> list[str]:
    """betting_lines.amount_texts: its kernel compiled, its kernel's source run as Python, or as `pitboss replay`
    runs it (within kernels.as_python(): format_money's own)."""
    values = np.array(amounts, np.int64)
    if mode == "replay":
        with kernels.as_python():
            return betting_lines.amount_texts(values, currency).to_pylist()
    kernel, betting_lines.write_amounts = betting_lines.write_amounts, MODES[mode](betting_lines.write_amounts)
    try:
        return betting_lines.amount_texts(values, currency).to_pylist()
    finally:
        betting_lines.write_amounts = kernel


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([*MODES, "replay"]),
       st.lists(st.one_of(st.integers(-2**63, 2**63 - 1), st.integers(-10**7, 10**7)), max_size=20),
       st.sampled_from(CURRENCIES))
def test_a_column_of_amounts_is_written_as_format_money(mode, amounts, currency):
    assert _amount_texts(mode, amounts, currency) == [format_money(a, currency) for a in amounts]


@pytest.mark.parametrize("mode", [*MODES, "replay"])
def test_a_column_of_amounts_by_hand(mode):
    # each text's own end (no byte of its neighbour), a repeated amount, the sign and commas, no currency named
    assert _amount_texts(mode, [0, 100_000, -5, 100_000, 2**63 - 1], "EUR") == [
        "0.00 EUR", "1,000.00 EUR", "-0.05 EUR", "1,000.00 EUR", "92,233,720,368,547,758.07 EUR"]
    assert _amount_texts(mode, [1_000, -1], None) == ["10.00", "-0.01"]
    assert _amount_texts(mode, [], "JPY") == []


def _write_lines(mode: str, *args):
    """betting_lines.explanation, its kernel compiled or run as Python."""
    if mode == "compiled":
        return betting_lines.explanation(*args)
    kernel, betting_lines.write_lines = betting_lines.write_lines, betting_lines.write_lines.py_func
    try:
        return betting_lines.explanation(*args)
    finally:
        betting_lines.write_lines = kernel


@pytest.mark.parametrize("mode", [*MODES, "replay"])
def test_each_round_s_head_then_its_bets_lines_in_the_order_given(mode):
    # three rounds, the second with no bet; the bets of rows 0, 2 and 3 (row 1 unsettled) given out of round
    # order; multi-byte texts in a head, a bet id and a why (offsets are bytes, not characters)
    ids = pa.array(["B1", "B2-é", "B3", "B4"], pa.string())
    args = (["pocket 17: black", "no pocket recorded", "dés 1 2 3"], ids, np.array([0, 2, 3]), np.array([2, 0, 2]),
            ["RED", "STRAIGHT '17'", "SINGLE ''"], np.array([0, 1, 0]), np.array([1_000, 250, 100_000]),
            np.array([2_000, 8_750, 0]), np.array([2_000, 8_750, 5]),
            pa.array(["refunded", "RED wins 1:1 ½", "STRAIGHT 17 wins 35:1"], pa.string()), np.array([1, 2, 0]),
            "EUR")
    if mode == "replay":
        with kernels.as_python():
            lines, at = betting_lines.explanation(*args)
    else:
        lines, at = _write_lines(mode, *args)
    assert lines.to_pylist() == [
        "pocket 17: black",
        "Bet B3 (STRAIGHT '17', stake 2.50 EUR): STRAIGHT 17 wins 35:1; owed 87.50 EUR, paid 87.50 EUR",
        "no pocket recorded",
        "dés 1 2 3",
        "Bet B1 (RED, stake 10.00 EUR): RED wins 1:1 ½; owed 20.00 EUR, paid 20.00 EUR",
        "Bet B4 (RED, stake 1,000.00 EUR): refunded; owed 0.00 EUR, paid 0.05 EUR",
    ]
    assert at.tolist() == [0, 2, 3, 6]


def test_no_bets_and_no_rounds():
    lines, at = betting_lines.explanation([], pa.array([], pa.string()), *[np.zeros(0, np.int64)] * 2, [],
                                          *[np.zeros(0, np.int64)] * 4, pa.array([], pa.string()),
                                          np.zeros(0, np.int64), "EUR")
    assert lines.to_pylist() == [] and at.tolist() == [0]
    lines, at = betting_lines.explanation(["a", ""], pa.array([], pa.string()), *[np.zeros(0, np.int64)] * 2, [],
                                          *[np.zeros(0, np.int64)] * 4, pa.array([], pa.string()),
                                          np.zeros(0, np.int64), None)
    assert lines.to_pylist() == ["a", ""] and at.tolist() == [0, 1, 2]


LARGE = (1, 99, 100, 999, 1_000, 99_999, 100_000, 123_456_789)  # amounts on each side of a comma and a decimal


@st.composite
def large_sessions(draw, outcomes, round_of, codes, selections_of):
    """Sessions with stakes and payments that need commas (the readable engine's words are format_money's)."""
    rounds = [round_of(f"R{i}", i + 1, draw(st.sampled_from(["settled"] * 3 + ["cancelled"])), 5_000, draw(outcomes))
              for i in range(draw(st.integers(0, 4)))]
    bets = [RecordedBet(f"B{i}-é", draw(st.integers(-1, len(rounds))), draw(st.sampled_from(["A1", "A2"])),
                        code := draw(st.sampled_from([*codes, "NOT_A_BET"])),
                        draw(st.one_of(st.sampled_from(selections_of(code) or [None]), st.sampled_from([None, ""]))),
                        draw(st.sampled_from(LARGE)), draw(st.one_of(st.sampled_from(LARGE), st.integers(0, 10**12))),
                        draw(st.sampled_from([4_999, 5_000, 5_001])))
            for i in range(draw(st.integers(0, 20)))]
    return rounds, bets


def _tables(codes):
    return st.builds(lambda currency, limited: TableFacts("T1", currency, 10**9, {c: (100, 10**8) for c in limited}),
                     st.sampled_from(CURRENCIES), st.sets(st.sampled_from(codes)))


def _explained(replay: bool, audit, rules, table: TableFacts, rounds, bets) -> list[tuple[str, ...]]:
    """Each round's explanation by `audit`, its kernels compiled or as `pitboss replay` runs them (as Python)."""
    with kernels.as_python() if replay else nullcontext():
        return [r.explanation for r in audit(rules, table, "S1", rounds, bets).rounds]


@settings(max_examples=150, deadline=None)
@given(st.booleans(), _tables(ROULETTE_CODES), st.sampled_from(["floor", "half_even"]),
       large_sessions(POCKETS, Spin, ROULETTE_CODES, lambda code: list(layout(ROULETTE.red).selections(code))))
def test_a_roulette_session_s_lines_are_the_readable_engine_s(replay, table, rounding, session):
    rules, (rounds, bets) = replace(ROULETTE, rounding=rounding, la_partage=True), session
    assert _explained(replay, audit_spins, rules, table, rounds, bets) == \
        _explained(False, spins_bet_by_bet, rules, table, rounds, bets)


@settings(max_examples=150, deadline=None)
@given(st.booleans(), _tables(SIC_BO_CODES),
       large_sessions(DICE, Roll, SIC_BO_CODES, lambda code: list(SELECTIONS.get(code, ()))))
def test_a_sic_bo_session_s_lines_are_the_readable_engine_s(replay, table, session):
    rounds, bets = session
    assert _explained(replay, audit_rolls, SIC_BO, table, rounds, bets) == \
        _explained(False, rolls_bet_by_bet, SIC_BO, table, rounds, bets)
