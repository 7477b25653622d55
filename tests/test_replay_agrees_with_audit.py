"""`pitboss replay --input` agrees with the audit (issue 41): the round is audited as the audit does it, at its
shoe's table after the cross-row checks (a round at another table than its shoe's is shown quarantined with
the audit's reason, pipelines/cross_row.py), its quarantined bets seen by their neighbours' rules (a casino
stud JACKPOT whose ANTE was quarantined is not "without ante", pipelines/neighbours.py). Each case replayed
from the input and from the warehouse the audit loaded: the same verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pitboss.cli import app
from pitboss.recorder import GenerateConfig, generate
from tests.datasets import with_every_column
from tests.test_replay_truth import _edit, _rows  # (the recorded files' rows of one game, and an edit of them)
from tests.warehouse_fixtures import audit_and_load

runner = CliRunner()


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """A night of baccarat, blackjack and casino stud: a blackjack round recorded at the stud table (its shoe is
    the blackjack table's), and a stud box whose ANTE has stake 0 (quarantined) beside its JACKPOT."""
    root = tmp_path_factory.mktemp("replay_agrees")
    data = root / "data"
    generate(GenerateConfig(out=data, tables=1, blackjack_tables=1, stud_tables=1, rounds_per_table=12,
                            bets_per_round=6, seed=9, fault_rate=0, quiet=True))
    hands = _rows(data, "rounds", "blackjack")
    moved = hands[2]["round_id"]
    stud_table = _rows(data, "rounds", "casino_stud")[0]["table_id"]

    def elsewhere(rows):
        for r in rows:
            if r["round_id"] == moved:
                r["table_id"] = stud_table
    _edit(data, "rounds", "blackjack", elsewhere)
    _with_every_column(data, "rounds", "blackjack")  # (a stud table's row needs stud's columns in its file)

    bets = _rows(data, "bets", "casino_stud")
    jackpot = next(b for b in bets if b["bet_type"] == "JACKPOT" and any(
        a["bet_type"] == "ANTE" and (a["round_id"], a["seat"]) == (b["round_id"], b["seat"]) for a in bets))
    ante = next(a for a in bets if a["bet_type"] == "ANTE" and (a["round_id"], a["seat"]) == (jackpot["round_id"],
                                                                                              jackpot["seat"]))

    def no_stake(rows):
        for b in rows:
            if b["bet_id"] == ante["bet_id"]:
                b["stake"] = 0
    _edit(data, "bets", "casino_stud", no_stake)
    audit_and_load(data, root / "out", root / "audit.duckdb")
    return root, {"moved": moved, "stud_table": stud_table, "jackpot": jackpot, "ante": ante}


def _with_every_column(folder: Path, name: str, game: str) -> None:
    """The game's file of input table `name` with every column of the contract (datasets.with_every_column):
    the moved round is written as an exporter of all games writes it."""
    (path,) = sorted((folder / name).rglob(f"part-{game}-*.parquet"))
    pq.write_table(with_every_column(pq.read_table(path), name), path)


def _json(root: Path, round_id: str, source: str) -> dict:
    where = ["--warehouse", str(root / "audit.duckdb")] if source == "warehouse" else ["--input", str(root / "data")]
    result = runner.invoke(app, ["replay", round_id, *where, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_round_at_another_table_than_its_shoes_is_quarantined_with_the_audits_reason(night):
    root, case = night
    d, audited = _json(root, case["moved"], "input"), _json(root, case["moved"], "warehouse")
    assert d["quarantined"] == audited["quarantined"]
    assert f"table_id '{case['stud_table']}' (a casino_stud table) is not the table of its shoe" in d["quarantined"]
    assert d["game"] == "blackjack" and d["round"]["table_id"] == case["stud_table"]
    assert d["bets"] and {b["bet_id"]: b["quarantine_reason"] for b in d["bets"]} == {
        b["bet_id"]: b["quarantine_reason"] for b in audited["bets"]}
    assert all(b["quarantine_reason"].startswith("the bet's round is in quarantine: ") for b in d["bets"])
    assert [f["kind"] for f in d["findings"] if f["round_id"] == case["moved"]] == ["TABLE_MISMATCH"]


def test_a_stud_jackpot_beside_a_quarantined_ante_is_not_without_ante(night):
    root, case = night
    round_id, jackpot_id = case["jackpot"]["round_id"], case["jackpot"]["bet_id"]
    d, audited = _json(root, round_id, "input"), _json(root, round_id, "warehouse")

    def jackpot(data):
        return next(b for b in data["bets"] if b["bet_id"] == jackpot_id)
    assert "JACKPOT_WITHOUT_ANTE" not in jackpot(d)["findings"]
    assert (jackpot(d)["expected"], jackpot(d)["findings"]) == (jackpot(audited)["expected"],
                                                                jackpot(audited)["findings"])
    assert sorted((f["kind"], f["bet_id"]) for f in d["findings"]) == sorted(
        (f["kind"], f["bet_id"]) for f in audited["findings"])
    (ante,) = [b for b in d["bets"] if b["bet_id"] == case["ante"]["bet_id"]]
    assert "stake" in ante["quarantine_reason"]
