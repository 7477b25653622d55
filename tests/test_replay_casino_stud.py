"""`pitboss replay` of a casino stud round (issue 31): the deck's cards per hand, every hand's rank, the
dealer's qualification, every bet with expected and paid, the pools before and after. The figures are the
hand-worked ones of tests/casino_stud_days.py (day one: R2 a royal flush that wins the jackpot, R3 a
recorded jackpot one cent off the ledger's)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from engine.findings import format_money
from pipelines.audit import run
from pipelines.warehouse import load
from pitboss.cli import app
from tests import casino_stud_days as days
from tests.casino_stud_days import AFTER_R1, AFTER_R2, AFTER_R3, RECORDED_AFTER_R3, ROYAL_PRIZE

runner = CliRunner()


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    root = tmp_path_factory.mktemp("stud_replay")
    folder = days.write_input(root / "in", *days.day_one())
    record = run(["--input", str(folder), "--output", str(root / "out")])
    load(str(root / "audit.duckdb"), record.__dict__)
    return root


def _json(root, round_id: str, source: str) -> dict:
    where = ["--warehouse", str(root / "audit.duckdb")] if source == "warehouse" else ["--input", str(root / "in")]
    result = runner.invoke(app, ["replay", round_id, *where, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("round_id", ["R1", "R2", "R3"])
def test_warehouse_and_input_tell_the_same_story(audited, round_id):
    wh, inp = _json(audited, round_id, "warehouse"), _json(audited, round_id, "input")
    assert wh["game"] == inp["game"] == "casino_stud" and wh["ruleset"] == "casino_stud_live"
    for key in ("boxes", "box_actions", "expected_box_cards", "recorded_box_cards", "box_ranks", "dealer_rank",
                "dealer_qualifies", "recorded_jackpot_before", "expected_jackpot_after", "recorded_jackpot_after",
                "expected_next_pool_after", "explanation", "finding_kinds"):
        assert wh["round"][key] == inp["round"][key], key
    assert sorted((b["bet_id"], b["expected"], b["paid"]) for b in wh["bets"]) == \
        sorted((b["bet_id"], b["expected"], b["paid"]) for b in inp["bets"])


def test_the_royal_flush_round_shows_ranks_qualification_prize_and_reset(audited):
    d = _json(audited, "R2", "warehouse")
    r = d["round"]
    assert r["box_ranks"] == ["ROYAL_FLUSH", "FLUSH"] and r["dealer_rank"] == "HIGH_CARD"
    assert r["dealer_qualifies"] is True  # A-K high qualifies
    assert (r["recorded_jackpot_before"], r["recorded_next_pool_before"]) == AFTER_R1
    assert (r["expected_jackpot_after"], r["expected_next_pool_after"]) == AFTER_R2  # the next pool took over
    owed = {b["bet_id"]: b["expected"] for b in d["bets"]}
    assert owed == {"R2-A2": 2000 + 2000 + 200_000, "R2-J2": ROYAL_PRIZE, "R2-A4": 0, "R2-J4": 50 * 100}
    text = runner.invoke(app, ["replay", "R2", "--warehouse", str(audited / "audit.duckdb")]).stdout
    assert "ROYAL_FLUSH" in text and "the dealer qualifies" in text
    for amount in (*AFTER_R1, *AFTER_R2):  # the pools table: before and after, both pools
        assert format_money(amount, "EUR").removesuffix(" EUR") in text


def test_a_drifted_jackpot_is_marked_where_it_differs(audited):
    r = _json(audited, "R3", "input")["round"]
    assert r["expected_jackpot_after"] == AFTER_R3[0] and r["recorded_jackpot_after"] == RECORDED_AFTER_R3[0]
    assert "JACKPOT_BALANCE_MISMATCH" in r["finding_kinds"] or any(
        f["kind"] == "JACKPOT_BALANCE_MISMATCH" for f in _json(audited, "R3", "input")["findings"])
    html = runner.invoke(app, ["replay", "R3", "--input", str(audited / "in"), "--format", "html"]).stdout
    assert "<h1>Casino stud round R3" in html and "http" not in html
    jackpot_row = html.split("<td>jackpot</td>", 1)[1].split("</tr>", 1)[0]
    cells = jackpot_row.split("<td")
    # before (expected, recorded) agree; after (recorded) is the one marked
    assert "bad" not in cells[2] and "bad" in cells[4]
    assert format_money(RECORDED_AFTER_R3[0], "EUR").removesuffix(" EUR") in cells[4]
    # the dealer's pair of eights qualifies; the hands table names both ranks
    assert "qualifies" in html and html.count("PAIR") >= 2
