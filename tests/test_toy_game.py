"""A sixth game added by touching only its own folder (issue 45): the toy coin (tests/toy_game/: a coin flipped
a round, HEADS or TAILS at 1:1, one ruleset file), registered with one line a layer (tests.toy_game.register:
the engine's PACKAGES, the recorder's RECORDERS, the pipeline's ADAPTORS, the schemas' SCHEMAS: its contract
columns and its replay output). Every command below serves it with no shared file edited: generate records it,
audit finds exactly the faults planted on it, rtp prints its bets, schema shows its columns, replay replays its
rounds (text, JSON, HTML; from the warehouse and the input), the warehouse's all_rounds holds them and report
gives it a section (the shared default view: the coin has none of its own)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pitboss.cli import app
from pitboss.faultcheck import compare
from tests.toy_game import register

runner = CliRunner()


def coin_rows(folder: Path) -> list[dict]:
    """The coin's rows of an input table (its own part files: the folder's first file is the base one)."""
    parts = sorted(folder.glob("date=*/part-coin-*.parquet"))
    return [row for part in parts for row in pq.read_table(part).to_pylist()]


def run(*args: str, stderr: list[str] | None = None) -> str:
    """The command's stdout (its stderr appended to `stderr`); it must succeed."""
    # rich wraps help at COLUMNS (it ignores click's terminal_width): wide enough for an option's whole line
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    if stderr is not None:
        stderr.append(result.stderr)
    return result.stdout


def generate(out: Path, *more: str) -> None:
    run("generate", "-q", "-o", str(out), "--rounds-per-table", "60", "--bets-per-round", "8", "--seed", "3", *more)


@pytest.fixture
def coin(monkeypatch):
    register(monkeypatch)


def test_generate_offers_the_coin_tables_option(coin):
    help_text = run("generate", "-h")
    assert "--coin-tables" in help_text and "Coin tables (coin_flip_live)" in help_text


def test_generate_records_coin_tables_and_pays_each_bet_by_the_face(coin, tmp_path):
    generate(tmp_path / "d", "--tables", "0", "--coin-tables", "2", "--fault-rate", "0")
    tables = pq.read_table(tmp_path / "d" / "tables.parquet").to_pylist()
    assert [(t["table_id"], t["game"], t["ruleset"]) for t in tables] == [
        ("T01-CN", "coin", "coin_flip_live"), ("T02-CN", "coin", "coin_flip_live")]
    day = tmp_path / "d" / "rounds" / "date=2026-11-28"  # the coin's part file beside the (empty) base one
    assert {p.name for p in day.iterdir()} == {"part-00000.parquet", "part-coin-00000.parquet"}
    assert pq.read_metadata(day / "part-00000.parquet").num_rows == 0
    rounds = coin_rows(tmp_path / "d" / "rounds")
    assert len(rounds) == 120 and {r["coin_face"] for r in rounds if r["status"] == "settled"} == {"HEADS", "TAILS"}
    face = {r["round_id"]: (r["coin_face"], r["status"]) for r in rounds}
    bets = coin_rows(tmp_path / "d" / "bets")
    assert bets and {b["bet_type"] for b in bets} == {"HEADS", "TAILS"}
    for b in bets:  # by hand: a fair coin at even money, a cancelled round refunded
        up, status = face[b["round_id"]]
        owed = b["stake"] if status == "cancelled" else 2 * b["stake"] if b["bet_type"] == up else 0
        assert b["paid"] == owed, b


def test_a_run_without_coin_tables_is_byte_identical_with_the_coin_registered(monkeypatch, tmp_path):
    generate(tmp_path / "without", "--tables", "1", "--roulette-tables", "1")
    register(monkeypatch)
    generate(tmp_path / "with", "--tables", "1", "--roulette-tables", "1")
    files = sorted(p.relative_to(tmp_path / "without") for p in (tmp_path / "without").rglob("*.parquet"))
    assert files == sorted(p.relative_to(tmp_path / "with") for p in (tmp_path / "with").rglob("*.parquet"))
    for f in files:
        assert (tmp_path / "without" / f).read_bytes() == (tmp_path / "with" / f).read_bytes(), f


def test_audit_finds_exactly_the_faults_planted_on_coin_tables(coin, tmp_path):
    generate(tmp_path / "d", "--tables", "1", "--coin-tables", "2", "--fault-rate", "0.02")
    run("audit", "-i", str(tmp_path / "d"), "-o", str(tmp_path / "out"), "--no-validate", "--no-progress")
    faults = pq.read_table(tmp_path / "d" / "faults.parquet")
    coin_kinds = {f["kind"] for f in faults.to_pylist() if f["table_id"].endswith("-CN")}
    assert {"OUTCOME_INVALID", "OUTCOME_MISSING", "OVERPAID", "LATE_BET", "BET_TYPE_NOT_OFFERED"} <= coin_kinds
    findings = pq.read_table(tmp_path / "out" / "findings")
    _, missed, unexplained = compare(faults, findings)
    assert missed == [] and unexplained == []
    replays = pq.read_table(tmp_path / "out" / "coin_round_replays")
    assert replays.num_rows == 120 and set(replays["table_id"].to_pylist()) == {"T02-CN", "T03-CN"}


def test_rtp_prints_each_coin_bet_at_exactly_100_percent_and_flags_it(coin):
    stderr: list[str] = []
    rows = json.loads(run("rtp", "--ruleset", "coin_flip_live", "--json", stderr=stderr))
    # a fair coin at even money gives the player no edge to the house: rtp's check flags it as it would a real game
    assert "ruleset coin_flip_live, bet HEADS, mode -: RTP 100.0000% is at least 100%" in stderr[0]
    assert [(r["game"], r["bet_type"], r["rtp_exact"]) for r in rows] == [("coin", "HEADS", "1/1"),
                                                                          ("coin", "TAILS", "1/1")]
    assert [o["credit"] for o in rows[0]["outcomes"]] == [2.0, 0.0]
    assert "coin_flip_live" in run("rtp")  # and among every ruleset


def test_schema_shows_the_coin_columns(coin):
    markdown = run("schema", "rounds", "-f", "markdown")
    assert "| `coin_face` | `string` | required (coin tables) | yes | coin |" in markdown
    assert "| `equipment_id` |" not in markdown  # (a shoes column)
    shoes = run("schema", "shoes", "-f", "markdown")
    assert next(line for line in shoes.splitlines() if "`equipment_id`" in line).split(" | ")[4].endswith("coin")


# --- replay, report and the warehouse's views (pitboss.games' shared defaults: the coin has no view) ----------


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """A night of one baccarat table and two coin tables, audited into a warehouse; the coin registered for the
    module's tests (after the byte-identical test above, which needs it unregistered)."""
    with pytest.MonkeyPatch.context() as mp:
        register(mp)
        base = tmp_path_factory.mktemp("coin_night")
        generate(base / "d", "--tables", "1", "--coin-tables", "2", "--fault-rate", "0")
        run("audit", "-i", str(base / "d"), "-o", str(base / "out"), "-w", str(base / "w.duckdb"), "--no-validate",
            "--no-progress")
        yield base


def recorded_round(night: Path, round_no: int = 7) -> tuple[dict, list[dict]]:
    """A settled coin round of T02-CN and its bets, as recorded in the input (the oracle of the replays)."""
    rounds = [r for r in coin_rows(night / "d" / "rounds") if r["table_id"] == "T02-CN" and r["status"] == "settled"]
    r = sorted(rounds, key=lambda r: r["round_no"])[round_no]
    return r, [b for b in coin_rows(night / "d" / "bets") if b["round_id"] == r["round_id"]]


def owed_by_hand(r: dict, bets: list[dict]) -> dict[str, int]:
    """bet_id -> what a fair coin at even money owes: twice the stake on the face that came up, else nothing."""
    return {b["bet_id"]: 2 * b["stake"] if b["bet_type"] == r["coin_face"] else 0 for b in bets}


@pytest.mark.parametrize("source", ["warehouse", "input"])
def test_replay_json_of_a_coin_round_settles_each_bet_by_the_face(night, source):
    r, bets = recorded_round(night)
    assert bets and {b["bet_type"] for b in bets} <= {"HEADS", "TAILS"}
    where = ["-w", str(night / "w.duckdb")] if source == "warehouse" else ["-i", str(night / "d")]
    data = json.loads(run("replay", r["round_id"], *where, "-f", "json"))
    assert data["game"] == "coin" and data["round"]["coin_face"] == r["coin_face"]
    assert data["round"]["explanation"][0] == f"the coin came up {r['coin_face']}"
    assert {b["bet_id"]: b["expected"] for b in data["bets"]} == owed_by_hand(r, bets)
    assert {b["bet_id"]: b["paid"] for b in data["bets"]} == {b["bet_id"]: b["paid"] for b in bets}
    assert data["findings"] == []  # a night recorded without faults


def test_replay_text_and_html_of_a_coin_round_come_from_the_shared_default_view(night):
    r, bets = recorded_round(night, 3)
    text = run("replay", r["round_id"], "-w", str(night / "w.duckdb"))
    assert f"the coin came up {r['coin_face']}" in text and r["shoe_id"] in text
    assert all(b["bet_id"] in text for b in bets)
    page = run("replay", r["round_id"], "-w", str(night / "w.duckdb"), "-f", "html")
    assert f"Round {r['round_id']}" in page and f"the coin came up {r['coin_face']}" in page
    assert all(b["bet_id"] in page for b in bets)


def test_all_rounds_holds_every_coin_round_as_recorded(night):
    out = run("query", "-w", str(night / "w.duckdb"), "-f", "json",
              "SELECT round_id, recorded_round, expected_round, status FROM all_rounds WHERE game = 'coin'")
    got = {row["round_id"]: row for row in json.loads(out)}
    rounds = coin_rows(night / "d" / "rounds")
    assert len(got) == len(rounds) == 120
    for r in rounds:
        assert got[r["round_id"]]["recorded_round"] == f"face {r['coin_face'] or '-'}", r
        assert got[r["round_id"]]["status"] == r["status"]
    games = json.loads(run("query", "-w", str(night / "w.duckdb"), "-f", "json",
                           "SELECT game, count(*) AS n FROM all_rounds GROUP BY game ORDER BY game"))
    baccarat = sum(pq.read_metadata(p).num_rows for p in (night / "d" / "rounds").glob("date=*/part-0*.parquet"))
    assert games == [{"game": "baccarat", "n": baccarat}, {"game": "coin", "n": 120}]  # nothing lost, nothing twice


def test_report_has_a_coin_section_with_its_tables_rounds_and_bets(night):
    page = night / "report.html"
    run("report", "-w", str(night / "w.duckdb"), "-o", str(page))
    html = page.read_text()
    bets = coin_rows(night / "d" / "bets")
    row = re.search(r'<tr><td>Coin flip \(a toy\)</td><td class="num">(\d+)</td>\s*<td class="num">([\d,]+)</td>'
                    r'<td class="num">([\d,]+)</td>', html)
    assert row, "no coin row in the report's games table"
    assert [int(n.replace(",", "")) for n in row.groups()] == [2, 120, len(bets)]
    assert re.search(r"<h2[^>]*>Coin flip \(a toy\)</h2>", html)
