"""A sixth game added by touching only its own folder (issue 45): the toy coin (tests/toy_game/: a coin flipped
a round, HEADS or TAILS at 1:1, one ruleset file), registered with one line a layer (tests.toy_game.register:
the engine's PACKAGES, the recorder's RECORDERS, the pipeline's ADAPTORS, its contract columns and its replay
output). Every command below serves it with no shared file edited: generate records it, audit finds exactly
the faults planted on it, rtp prints its bets, schema shows its columns."""

from __future__ import annotations

import json
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
    result = runner.invoke(app, list(args), terminal_width=200)
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
