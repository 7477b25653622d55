"""Casino stud in the warehouse: two nights of a hand-built stud table (tests/casino_stud_days.py) audited and
loaded one after the other. The jackpot ledger table keeps both days; jackpot_days gives each day's opening,
contributions, prizes and closing, and whether the day opened on the previous day's close (re-running day 2
with a different opening replaces it and says it did not); all_rounds, dealing_violations and limit_breaches
carry the stud rounds and kinds. Expected figures are the hand-worked ones of casino_stud_days."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from pipelines.audit import run
from pipelines.warehouse import load
from tests import casino_stud_days as days
from tests.casino_stud_days import (
    AFTER_R1,
    JACKPOT0,
    NEXT0,
    RECORDED_AFTER_R3,
    ROYAL_PRIZE,
    TABLE,
)

D1, D2 = dt.date(2026, 11, 28), dt.date(2026, 11, 29)


def _night(root, name: str, rounds, bets, warehouse) -> None:
    folder = days.write_input(root / name / "in", rounds, bets)
    record = run(["--input", str(folder), "--output", str(root / name / "out")])
    load(str(warehouse), record.__dict__)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    root = tmp_path_factory.mktemp("stud_wh")
    path = root / "audit.duckdb"
    _night(root, "night1", *days.day_one(), path)
    _night(root, "night2", *days.day_two(), path)
    return root, path


def rows(path, sql: str, params=None) -> list[dict]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        cur = con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    finally:
        con.close()


def test_the_ledger_keeps_both_days(warehouse):
    _, path = warehouse
    got = rows(path, "SELECT business_date, round_id FROM casino_stud_jackpot_ledger ORDER BY betting_closed_at")
    assert [(r["business_date"], r["round_id"]) for r in got] == [(D1, "R1"), (D1, "R2"), (D1, "R3"), (D2, "R5")]


def test_jackpot_days_open_contribute_pay_and_close(warehouse):
    _, path = warehouse
    d1, d2 = rows(path, "SELECT * FROM jackpot_days ORDER BY business_date")
    assert (d1["business_date"], d1["table_id"], d1["currency"], d1["game"]) == (D1, TABLE, "EUR", "casino_stud")
    assert (d1["rounds"], d1["jackpot_bets"], d1["stakes"]) == (3, 5, 500)
    assert (d1["opening_jackpot"], d1["opening_next_pool"]) == (JACKPOT0, NEXT0)
    assert (d1["to_jackpot"], d1["to_next_pool"], d1["to_house"]) == (180, 90, 30)  # R1's two bets and R3's
    assert (d1["prizes_from_jackpot"], d1["prizes_from_next_pool"], d1["prizes_by_house"]) == (ROYAL_PRIZE, 0, 5000)
    assert d1["jackpots_won"] == 1
    assert (d1["closing_jackpot"], d1["closing_next_pool"]) == RECORDED_AFTER_R3  # as recorded, drift and all
    assert (d1["expected_closing_jackpot"], d1["expected_closing_next_pool"]) == (RECORDED_AFTER_R3[0] - 1,
                                                                                  RECORDED_AFTER_R3[1])
    assert d1["previous_business_date"] is None and d1["opened_on_previous_close"] is None
    assert d1["pool_findings"] == 1  # R3's drift
    # day 1 in one identity: opening + contributions - prizes from the pools = the ledger's closing
    assert (d1["opening_jackpot"] + d1["opening_next_pool"] + d1["to_jackpot"] + d1["to_next_pool"]
            - d1["prizes_from_jackpot"] - d1["prizes_from_next_pool"]) == (d1["expected_closing_jackpot"]
                                                                          + d1["expected_closing_next_pool"])
    assert AFTER_R1[0] == ROYAL_PRIZE
    assert (d2["rounds"], d2["jackpot_bets"], d2["stakes"], d2["to_jackpot"]) == (1, 1, 100, 60)
    assert (d2["opening_jackpot"], d2["opening_next_pool"]) == RECORDED_AFTER_R3
    assert (d2["previous_business_date"], d2["previous_closing_jackpot"], d2["previous_closing_next_pool"]) == (
        D1, *RECORDED_AFTER_R3)
    assert d2["opened_on_previous_close"] is True and d2["pool_findings"] == 0


def test_a_day_that_opens_off_the_previous_close_is_flagged_and_rerunning_it_replaces_it(warehouse, tmp_path):
    import shutil

    root, path = warehouse
    copy = tmp_path / "audit.duckdb"
    shutil.copyfile(path, copy)
    off = (RECORDED_AFTER_R3[0] + 500, RECORDED_AFTER_R3[1])  # 5.00 more in the jackpot overnight
    _night(tmp_path, "rerun", *days.day_two(opening=off), copy)
    got = rows(copy, "SELECT business_date, opening_jackpot, opened_on_previous_close FROM jackpot_days "
                     "ORDER BY business_date")
    assert got == [{"business_date": D1, "opening_jackpot": JACKPOT0, "opened_on_previous_close": None},
                   {"business_date": D2, "opening_jackpot": off[0], "opened_on_previous_close": False}]
    assert rows(copy, "SELECT count(*) AS n FROM casino_stud_jackpot_ledger WHERE business_date = ?", [D2]) == [
        {"n": 1}]


def test_all_rounds_has_the_stud_rounds(warehouse):
    _, path = warehouse
    got = {r["round_id"]: r for r in rows(path, "SELECT * FROM all_rounds WHERE game = 'casino_stud'")}
    assert sorted(got) == ["R1", "R2", "R3", "R4", "R5"]
    r1 = got["R1"]
    assert r1["recorded_round"] == (
        "box 1: KS KH 7D 4C 2S PAIR C; box 3: 9C 8D 6H 4S 3C HIGH_CARD F; dealer: QH JD 9S 5C 2D HIGH_CARD; "
        f"jackpot {JACKPOT0} -> {AFTER_R1[0]}; next pool {NEXT0} -> {AFTER_R1[1]}")
    assert r1["expected_round"] == (
        "box 1: KS KH 7D 4C 2S PAIR; box 3: 9C 8D 6H 4S 3C HIGH_CARD; dealer: QH JD 9S 5C 2D HIGH_CARD "
        f"(does not qualify); jackpot {JACKPOT0} -> {AFTER_R1[0]}; next pool {NEXT0} -> {AFTER_R1[1]}")
    assert (r1["shoe_id"], r1["shoe_position"], r1["rounds_before"]) == ("D-R1", 0, 0)
    assert got["R3"]["finding_kinds"] == "JACKPOT_BALANCE_MISMATCH" and got["R1"]["finding_kinds"] == ""
    assert "(qualifies)" in got["R2"]["expected_round"] and r1["decisions"]


def test_the_stud_kinds_in_the_regulator_views(warehouse):
    _, path = warehouse
    dealing = rows(path, "SELECT * FROM dealing_violations WHERE game = 'casino_stud'")
    assert [(r["kind"], r["round_id"], r["severity"]) for r in dealing] == [("HAND_RANK_MISMATCH", "R4", "critical")]
    assert dealing[0]["recorded_round"].startswith("box 1: AS QD 9H 6C 3D PAIR C")
    breaches = rows(path, "SELECT * FROM limit_breaches WHERE game = 'casino_stud'")
    assert [(r["kind"], r["bet_id"], r["stake"], r["paid"], r["expected"]) for r in breaches] == [
        ("JACKPOT_WITHOUT_ANTE", "R5-J2", 100, 100, 100)]
    # every view is readable on this stud-only warehouse
    con = duckdb.connect(str(path), read_only=True)
    for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall():
        con.execute(f"SELECT * FROM {name}").fetchall()
    con.close()
