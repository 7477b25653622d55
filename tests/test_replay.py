"""`pitboss replay`: one round for an investigator, from the warehouse or straight from the input, for
a normal round, a misdealt round and a cancelled round; unknown rounds give one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest
from typer.testing import CliRunner

from engine.games.baccarat.dealing import dealing_order
from pipelines.audit import run
from pipelines.warehouse import load
from pitboss.cli import app
from pitboss.recorder import GenerateConfig, generate

runner = CliRunner()


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    generate(GenerateConfig(out=tmp / "data", tables=4, rounds_per_table=150, seed=5, fault_rate=0.01, quiet=True))
    record = run(["--input", str(tmp / "data"), "--output", str(tmp / "out")])
    load(str(tmp / "audit.duckdb"), record.__dict__)
    con = duckdb.connect(str(tmp / "audit.duckdb"), read_only=True)
    pick = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    rounds = {
        "normal": pick("SELECT round_id FROM round_replays r WHERE status = 'settled' "
                       "AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.round_id = r.round_id "
                       "                OR (f.shoe_id = r.shoe_id AND f.round_id IS NULL)) "
                       "AND EXISTS (SELECT 1 FROM settlements s WHERE s.round_id = r.round_id) ORDER BY 1 LIMIT 1"),
        "misdealt": pick("SELECT round_id FROM findings WHERE kind = 'THIRD_CARD_RULE' ORDER BY 1 LIMIT 1"),
        "cancelled": pick("SELECT round_id FROM round_replays WHERE status = 'cancelled' ORDER BY 1 LIMIT 1"),
    }
    con.close()
    return tmp, rounds


def replay_json(tmp, round_id, source="warehouse"):
    where = ["--warehouse", str(tmp / "audit.duckdb")] if source == "warehouse" else ["--input", str(tmp / "data")]
    result = runner.invoke(app, ["replay", round_id, *where, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("kind", ["normal", "misdealt", "cancelled"])
def test_warehouse_and_input_tell_the_same_story(audited, kind):
    tmp, rounds = audited
    a, b = replay_json(tmp, rounds[kind]), replay_json(tmp, rounds[kind], "input")
    same = ["round_id", "shoe_position", "rounds_before", "expected_player_cards", "expected_banker_cards",
            "recorded_player_cards", "recorded_banker_cards", "expected_outcome", "recorded_outcome", "decisions"]
    assert {k: a["round"][k] for k in same} == {k: b["round"][k] for k in same}
    key = lambda bet: (bet["bet_id"], bet["stake"], bet["expected"], bet["paid"])  # noqa: E731
    assert sorted(map(key, a["bets"])) == sorted(map(key, b["bets"]))
    assert sorted(f["kind"] for f in a["findings"]) == sorted(f["kind"] for f in b["findings"])


def test_normal_round_cards_come_from_the_shoe_in_dealing_order(audited):
    tmp, rounds = audited
    data = replay_json(tmp, rounds["normal"])
    r = data["round"]
    shoe = duckdb.connect().execute(f"SELECT cards FROM read_parquet('{tmp}/data/shoes/**/*.parquet') "
                                    "WHERE shoe_id = ?", [r["shoe_id"]]).fetchone()[0]
    order = dealing_order(r["recorded_player_cards"], r["recorded_banker_cards"])
    assert tuple(shoe[r["shoe_position"]: r["shoe_position"] + len(order)]) == order
    assert [c["card"] for c in data["sequence"]] == list(order)
    assert data["findings"] == [] and all(b["delta"] == 0 for b in data["bets"])
    assert len(r["decisions"]) == 2 and all("->" in d for d in r["decisions"])


def test_misdealt_round_shows_the_rule_and_the_difference(audited):
    tmp, rounds = audited
    data = replay_json(tmp, rounds["misdealt"])
    r = data["round"]
    assert (r["expected_player_cards"], r["expected_banker_cards"]) != (r["recorded_player_cards"],
                                                                        r["recorded_banker_cards"])
    assert [f["kind"] for f in data["findings"]] == ["THIRD_CARD_RULE"]
    text = runner.invoke(app, ["replay", rounds["misdealt"], "--warehouse", str(tmp / "audit.duckdb")],
                         env={"COLUMNS": "200"})
    assert text.exit_code == 0 and "THIRD_CARD_RULE" in text.output and "draws" in text.output


def test_cancelled_round_refunds_every_bet(audited):
    tmp, rounds = audited
    data = replay_json(tmp, rounds["cancelled"])
    assert data["round"]["status"] == "cancelled"
    assert data["bets"] and all(b["expected"] == b["stake"] for b in data["bets"])


def test_html_is_self_contained_and_escaped(audited, tmp_path):
    tmp, rounds = audited
    out = tmp_path / "round.html"
    result = runner.invoke(app, ["replay", rounds["misdealt"], "--warehouse", str(tmp / "audit.duckdb"),
                                 "--format", "html", "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert rounds["misdealt"] in page and "THIRD_CARD_RULE" in page


@pytest.mark.parametrize("source", ["warehouse", "input"])
def test_unknown_round_is_one_line_and_exit_2(audited, source):
    tmp, _ = audited
    where = ["--warehouse", str(tmp / "audit.duckdb")] if source == "warehouse" else ["--input", str(tmp / "data")]
    result = runner.invoke(app, ["replay", "NO-SUCH-ROUND", *where])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "NO-SUCH-ROUND" in result.output



@pytest.mark.parametrize("source", ["warehouse", "input"])
def test_a_round_id_naming_two_rounds_is_refused_naming_both_shoes(tmp_path, source):
    # round ids are unique by contract; where the second shoe reuses the first one's, showing either round
    # (with the bets of both) would mislead the investigator
    from tests import datasets

    data = datasets.build(shoes=2, bets_per_round=2)
    for r in data["rounds"]:
        r["round_id"] = r["round_id"].split("-", 1)[1]
    for b in data["bets"]:
        b["round_id"] = b["round_id"].split("-", 1)[1]
    folder = datasets.write(data, tmp_path / "in")
    load(str(tmp_path / "w.duckdb"), run(["--input", str(folder), "--output", str(tmp_path / "out")]).__dict__)
    where = ["--warehouse", str(tmp_path / "w.duckdb")] if source == "warehouse" else ["--input", str(folder)]
    result = runner.invoke(app, ["replay", "R01", *where])
    assert result.exit_code == 3
    assert result.output.strip().count("\n") == 0
    assert "R01 names 2 rounds" in result.output and "shoes S0, S1" in result.output

@pytest.mark.parametrize("source", ["warehouse", "input"])
def test_a_fresh_replay_process_never_loads_pandas_and_tells_the_same_story(audited, tmp_path, source):
    """The command as an investigator starts it, in its own process: pyarrow is told there is no pandas
    (to start faster), and the story is the one the in-process command tells."""
    tmp, rounds = audited
    where = ["--warehouse", str(tmp / "audit.duckdb")] if source == "warehouse" else ["--input", str(tmp / "data")]
    args = ["replay", rounds["misdealt"], *where, "--format", "json", "--out", str(tmp_path / "r.json")]
    script = ("import sys\nfrom pitboss.cli import app\n"
              "try:\n    app(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
              "print('pandas' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    assert json.loads((tmp_path / "r.json").read_text()) == replay_json(tmp, rounds["misdealt"], source)


def test_pyarrow_told_there_is_no_pandas_still_converts_to_pandas_when_asked():
    script = ("import sys\nfrom pitboss.commands.replay import pyarrow_without_pandas\n"
              "pyarrow_without_pandas()\nimport pyarrow as pa\n"
              "t = pa.table({'a': [1, 2], 'b': ['x', None]})\nloaded = 'pandas' in sys.modules\n"
              "df = t.to_pandas()\n"
              "print(loaded, list(df['a']), pa.Table.from_pandas(df).to_pylist() == t.to_pylist())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "[1,", "2]", "True"]


# --- blackjack ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def blackjack_audited(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bj_replay")
    generate(GenerateConfig(out=tmp / "data", tables=1, blackjack_tables=1, rounds_per_table=60,
                            bets_per_round=8, seed=4, fault_rate=0.05, quiet=True))
    load(str(tmp / "audit.duckdb"), run(["--input", str(tmp / "data"), "--output", str(tmp / "out")]).__dict__)
    con = duckdb.connect(str(tmp / "audit.duckdb"), read_only=True)
    flagged = con.execute("SELECT round_id, finding_kinds FROM blackjack_round_replays WHERE status = 'settled' "
                          "AND len(finding_kinds) > 0 ORDER BY round_id LIMIT 1").fetchone()
    con.close()
    return tmp, flagged


def test_a_blackjack_round_replays_from_the_warehouse_and_the_input_alike(blackjack_audited):
    tmp, (round_id, kinds) = blackjack_audited
    docs = []
    for source in (["--warehouse", str(tmp / "audit.duckdb")], ["--input", str(tmp / "data")]):
        result = runner.invoke(app, ["replay", round_id, *source, "--format", "json"])
        assert result.exit_code == 0, result.output
        docs.append(json.loads(result.stdout))
    wh, inp = docs
    assert wh["game"] == inp["game"] == "blackjack" and wh["ruleset"] == "blackjack_8d_live"
    for key in ("boxes", "box_actions", "recorded_box_cards", "expected_box_cards", "recorded_dealer_cards",
                "explanation", "finding_kinds"):
        assert wh["round"][key] == inp["round"][key], key
    assert wh["round"]["finding_kinds"] == kinds
    assert {f["kind"] for f in wh["findings"] if f["round_id"] == round_id} >= set(kinds)
    # every recorded card is explained with its place in the shoe, every decision and dealer draw with its rule
    lines = wh["round"]["explanation"]
    dealt = sum(len(c) for c in wh["round"]["recorded_box_cards"]) + len(wh["round"]["recorded_dealer_cards"])
    assert sum(line.startswith("card ") for line in lines) == dealt
    assert sum(line.startswith("dealer ") for line in lines) == len(wh["round"]["recorded_dealer_cards"])
    assert sum(len(a) for a in wh["round"]["box_actions"]) <= sum(" against " in line for line in lines)
    assert [b["bet_id"] for b in wh["bets"]] == [b["bet_id"] for b in inp["bets"]]
    assert all(b["delta"] == b["paid"] - b["expected"] for b in wh["bets"])


def test_a_blackjack_round_in_text_and_html(blackjack_audited):
    tmp, (round_id, _) = blackjack_audited
    text = runner.invoke(app, ["replay", round_id, "--warehouse", str(tmp / "audit.duckdb")])
    assert text.exit_code == 0 and "Boxes and dealer" in text.stdout and "card by card" in text.stdout
    html = runner.invoke(app, ["replay", round_id, "--warehouse", str(tmp / "audit.duckdb"), "--format", "html"])
    assert html.exit_code == 0 and "<h1>Blackjack round" in html.stdout and "http" not in html.stdout
