"""`pitboss query`: read-only SQL and saved queries on the warehouse of tests/warehouse_fixtures.py."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from pitboss.commands import query as query_cmd
from tests.warehouse_fixtures import (
    BLACKJACK_TABLE,
    DAY1,
    DAY2,
    QUOTED_ACCOUNT,
    SCRIPT_BET,
    mixed_warehouse,
    settled_bets,
    shared_warehouse,
)

ROOT = Path(__file__).resolve().parents[1]
INJECTION = "x' OR '1'='1"
REQUIRED_SAVED = {
    "overpaid_accounts": ("date",),
    "underpaid_accounts": ("date",),
    "findings_by_kind": ("date",),
    "round_history": ("round_id",),
    "rounds": ("date", "table_id"),
    "account_activity": ("account_id", "date"),
}

_app = typer.Typer()
_app.command()(query_cmd.query)
runner = CliRunner()


@pytest.fixture(scope="module")
def wh():
    return shared_warehouse()


@pytest.fixture(scope="module")
def path(wh, tmp_path_factory) -> str:
    """A private copy of the warehouse (tests here must leave it byte-identical)."""
    copy = tmp_path_factory.mktemp("query") / "audit.duckdb"
    shutil.copyfile(wh.path, copy)
    return str(copy)


def pitboss_query(*args: str):
    return runner.invoke(_app, list(args))


def as_json(result) -> list[dict]:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_refused(result, *needles: str) -> str:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pitboss: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def sha256(p: str) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def contents(p: str) -> dict[str, str]:
    """A digest of every table's rows and of the catalog (views included)."""
    con = duckdb.connect(p, read_only=True)
    try:
        out = {"catalog": repr(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                                           "ORDER BY ALL").fetchall())}
        for (name,) in con.execute("SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
                                   ).fetchall():
            out[name] = repr(con.execute(f'SELECT * FROM "{name}" ORDER BY ALL').fetchall())
        return out
    finally:
        con.close()


# --- saved queries -------------------------------------------------------------------------------


def test_list_shows_saved_queries_with_description_and_parameters():
    listed = {q["name"]: q for q in as_json(pitboss_query("--list", "--format", "json"))}
    for name, params in REQUIRED_SAVED.items():
        assert tuple(sorted(p["name"] for p in listed[name]["parameters"])) == tuple(sorted(params)), name
        assert listed[name]["description"]
    for q in listed.values():  # every parameter is documented in the file's header
        assert all(p["doc"] for p in q["parameters"]), q["name"]
        first = (ROOT / "audits" / "queries" / f"{q['name']}.sql").read_text().splitlines()[0]
        assert first == f"-- {q['description']}"
    shown = pitboss_query("--list")
    assert shown.exit_code == 0
    for name in REQUIRED_SAVED:
        assert name in shown.stdout
    assert "business date, YYYY-MM-DD" in shown.stdout


def test_docs_list_every_saved_query():
    docs = (ROOT / "docs" / "warehouse.md").read_text().split("## Saved queries", 1)[1]
    for name in query_cmd.saved_queries():
        assert f"| {name} |" in docs, name


def test_every_saved_query_runs(path):
    values = {"date": DAY1.isoformat(), "round_id": "S1-R2", "account_id": "A1", "table_id": "T1"}
    for name, q in query_cmd.saved_queries().items():
        args = [f"{p}={values[p]}" for p in q.parameters]
        result = pitboss_query("--saved", name, "-w", path, "-f", "json", *sum((["--param", a] for a in args), []))
        assert result.exit_code == 0, (name, result.output)
        json.loads(result.stdout)


def test_overpaid_and_underpaid_accounts(wh, path):
    bets = {b["bet_id"]: b for b in wh.data.bets}
    over = bets[SCRIPT_BET]
    under = bets[wh.data.planted["UNDERPAID"]["bet_id"]]
    got = as_json(pitboss_query("--saved", "overpaid_accounts", "--param", f"date={DAY1}", "-w", path, "-f", "json"))
    assert [(r["account_id"], r["currency"], r["overpaid_bets"], r["overpaid"], r["largest"]) for r in got] == [
        (over["account_id"], "EUR", 1, 500, 500)]
    got = as_json(pitboss_query("--saved", "underpaid_accounts", "-p", f"date={DAY1}", "-w", path, "-f", "json"))
    assert [(r["account_id"], r["currency"], r["underpaid_bets"], r["underpaid"]) for r in got] == [
        (under["account_id"], "USD", 1, 300)]
    assert as_json(pitboss_query("--saved", "overpaid_accounts", "-p", f"date={DAY2}", "-w", path, "-f", "json")) == []


def test_findings_by_kind_as_csv(path):
    result = pitboss_query("--saved", "findings_by_kind", "--param", f"date={DAY1}", "-w", path, "--format", "csv")
    assert result.exit_code == 0, result.output
    got = {r["kind"]: (r["severity"], int(r["findings"])) for r in csv.DictReader(io.StringIO(result.stdout))}
    assert got == {"OVERPAID": ("critical", 1), "UNDERPAID": ("critical", 1), "SCORE_MISMATCH": ("critical", 1),
                   "UNKNOWN_ROUND": ("critical", 1), "STAKE_ABOVE_MAX": ("major", 1)}


def test_round_history(wh, path):
    got = as_json(pitboss_query("--saved", "round_history", "--param", "round_id=S1-R2", "-w", path, "-f", "json"))
    on_round = [b for b in wh.data.bets if b["round_id"] == "S1-R2"]
    assert [r["item"] for r in got] == ["round"] + ["bet"] * len(on_round) + ["finding"]
    assert {r["bet_id"] for r in got if r["item"] == "bet"} == {b["bet_id"] for b in on_round}
    assert got[-1]["detail"].startswith("OVERPAID: ") and got[-1]["bet_id"] == SCRIPT_BET


def test_rounds_lists_the_round_ids_of_a_table_day(wh, path):
    """`pitboss query --saved rounds` is how a newcomer finds the ids `pitboss replay` takes: every round of
    the table on the date, in dealing order, with its bets and findings (from the dataset, not the warehouse)."""
    # the planted faults (tests/warehouse_fixtures.py): OVERPAID S1-R2, STAKE_ABOVE_MAX S1-R4, UNDERPAID S2-R3,
    # SCORE_MISMATCH S2-R5, LATE_BET S3-R2; S3-R4 cancelled (refunded: no finding)
    flagged = {("T1", DAY1): {"S1-R2", "S1-R4"}, ("T2", DAY1): {"S2-R3", "S2-R5"}, ("T1", DAY2): {"S3-R2"}}
    cancelled = {("T1", DAY1): set(), ("T2", DAY1): set(), ("T1", DAY2): {"S3-R4"}}
    for table_id, day in flagged:
        got = saved("rounds", path, table_id=table_id, date=day.isoformat())
        mine = sorted((r for r in wh.data.rounds if r["table_id"] == table_id
                       and r["betting_opened_at"].date() == day), key=lambda r: r["betting_opened_at"])
        assert [r["round_id"] for r in got] == [r["round_id"] for r in mine] and len(mine) > 3
        assert {r["game"] for r in got} == {"baccarat"}
        assert [r["shoe_id"] for r in got] == [r["shoe_id"] for r in mine]
        for row in got:
            assert row["bets"] == sum(b["round_id"] == row["round_id"] for b in wh.data.bets), row
        assert {r["round_id"] for r in got if r["findings"]} == flagged[table_id, day], (table_id, day)
        assert {r["round_id"] for r in got if r["status"] == "cancelled"} == cancelled[table_id, day]
    kinds = {r["round_id"]: r["finding_kinds"] for r in saved("rounds", path, table_id="T2", date=DAY1.isoformat())}
    assert "SCORE_MISMATCH" in kinds["S2-R5"]
    # another table or date: no rows, not an error
    assert saved("rounds", path, table_id="T9", date=DAY1.isoformat()) == []


def test_account_activity_binds_a_quote_as_data(wh, path):
    mine = [b for b in settled_bets(wh.data) if b["account_id"] == QUOTED_ACCOUNT and b["business_date"] == DAY1]
    got = as_json(pitboss_query("--saved", "account_activity", "--param", f"account_id={QUOTED_ACCOUNT}",
                                "--param", f"date={DAY1}", "-w", path, "-f", "json"))
    assert sorted(r["bet_id"] for r in got) == sorted(b["bet_id"] for b in mine) and len(mine) > 5
    got = pitboss_query("--saved", "account_activity", "--param", f"account_id={INJECTION}", "--param",
                        f"date={DAY1}", "-w", path, "-f", "json")
    assert as_json(got) == []
    # the same in ad-hoc SQL
    got = as_json(pitboss_query("SELECT count(*) AS n FROM settlements WHERE account_id = $a", "--param",
                                f"a={INJECTION}", "-w", path, "-f", "json"))
    assert got == [{"n": 0}]
    got = as_json(pitboss_query("SELECT count(*) AS n FROM settlements WHERE account_id = $a", "--param",
                                f"a={QUOTED_ACCOUNT}", "-w", path, "-f", "json"))
    assert got == [{"n": sum(b["account_id"] == QUOTED_ACCOUNT for b in settled_bets(wh.data))}]


# --- read-only guarantee -------------------------------------------------------------------------

WRITES = [
    "INSERT INTO findings SELECT * FROM findings",
    "UPDATE settlements SET paid = 0",
    "DELETE FROM quarantine",
    "CREATE TABLE x AS SELECT 1 AS a",
    "CREATE TEMP TABLE x AS SELECT 1 AS a",
    "CREATE OR REPLACE VIEW daily_summary AS SELECT 1 AS a",
    "DROP VIEW discrepancies",
    "ALTER TABLE findings ADD COLUMN x INTEGER",
    "COPY settlements TO '{tmp}/stolen.csv'",
    "COPY (SELECT * FROM settlements) TO '{tmp}/stolen.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{tmp}/export'",
    "ATTACH '{tmp}/other.duckdb' AS other",
    "DETACH audit",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "RESET lock_configuration",
    "PRAGMA enable_profiling",
    "CHECKPOINT",
    "VACUUM",
    "BEGIN TRANSACTION",
    "USE memory",
    "SELECT 1; DROP TABLE findings",
    "CALL pragma_version()",
    "EXPLAIN ANALYZE INSERT INTO findings SELECT * FROM findings",
    "EXPLAIN ANALYZE CREATE TEMP TABLE x AS SELECT 1 AS a",
]


def test_write_attempts_fail_and_change_nothing(path, tmp_path):
    digest, before = sha256(path), contents(path)
    for sql in WRITES:
        line = assert_refused(pitboss_query(sql.format(tmp=tmp_path), "-w", path))
        assert "refused" in line or "one statement" in line, (sql, line)
    assert sha256(path) == digest
    assert contents(path) == before
    assert list(tmp_path.iterdir()) == []


def test_external_access_is_off_even_inside_a_select(path, wh, tmp_path):
    settlements = str(wh.path.parent / "out" / "settlements" / "*.parquet")
    for sql in ("SELECT * FROM read_csv('/etc/passwd')", f"SELECT count(*) FROM read_parquet('{settlements}')",
                f"SELECT * FROM '{settlements}'", "SELECT * FROM read_text('/etc/hostname')"):
        assert_refused(pitboss_query(sql, "-w", path), "disabled by configuration")
    con = query_cmd.connect_read_only(path)
    try:
        assert con.execute("SELECT current_setting('enable_external_access')").fetchone() == (False,)
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("SET threads = 1")
        with pytest.raises(duckdb.Error):
            con.execute("CREATE TABLE y (a INTEGER)")
    finally:
        con.close()


def test_explain_of_a_select_is_allowed(path):
    got = as_json(pitboss_query("EXPLAIN SELECT count(*) FROM findings", "-w", path, "-f", "json"))
    assert got and "explain_value" in got[0]


def test_out_never_overwrites_the_warehouse(path):
    digest = sha256(path)
    assert_refused(pitboss_query("SELECT 1", "-w", path, "-f", "csv", "--out", path), "overwrite the warehouse")
    assert_refused(pitboss_query("SELECT 1", "-w", path, "-f", "parquet", "--out", path), "overwrite the warehouse")
    assert sha256(path) == digest


# --- errors: one line, exit 2 --------------------------------------------------------------------


def test_usage_errors(path, tmp_path):
    assert_refused(pitboss_query("--saved", "overpaid_accounts", "-w", path), "missing parameter", "--param date=")
    assert_refused(pitboss_query("--saved", "account_activity", "-p", "date=2026-11-28", "-w", path),
                   "--param account_id=")
    assert_refused(pitboss_query("--saved", "no_such_query", "-w", path), "unknown saved query 'no_such_query'")
    assert_refused(pitboss_query("--saved", "../views/10_discrepancies", "-w", path), "unknown saved query")
    assert_refused(pitboss_query("SELECT 1", "-w", str(tmp_path / "missing.duckdb")), "warehouse not found")
    assert_refused(pitboss_query("--saved", "findings_by_kind", "-p", "date=2026-11-28", "-p", "x=1", "-w", path),
                   "no parameter x")
    assert_refused(pitboss_query("--saved", "findings_by_kind", "-p", "date", "-w", path), "NAME=VALUE")
    assert_refused(pitboss_query("--saved", "findings_by_kind", "-p", "date=yesterday", "-w", path),
                   "Conversion Error")
    assert_refused(pitboss_query("SELECT * FROM no_such_table", "-w", path), "no_such_table")
    assert_refused(pitboss_query("SELEC 1", "-w", path), "syntax error")
    assert_refused(pitboss_query("SELECT 1", "-w", path, "-f", "parquet"), "needs --out")
    assert_refused(pitboss_query("-w", path), "either SQL or --saved")
    assert_refused(pitboss_query("SELECT 1", "--saved", "findings_by_kind", "-w", path), "either SQL or --saved")
    not_duckdb = tmp_path / "notes.duckdb"
    not_duckdb.write_text("hello")
    assert_refused(pitboss_query("SELECT 1", "-w", str(not_duckdb)), "cannot open warehouse")
    assert not_duckdb.read_text() == "hello"


# --- formats -------------------------------------------------------------------------------------


def test_formats_agree(path, tmp_path):
    sql = "SELECT * FROM discrepancies ORDER BY bet_id"
    records = as_json(pitboss_query(sql, "-w", path, "-f", "json"))
    assert len(records) == 2 and SCRIPT_BET in {r["bet_id"] for r in records}
    text = pitboss_query(sql, "-w", path, "-f", "csv")
    assert text.exit_code == 0
    from_csv = list(csv.DictReader(io.StringIO(text.stdout)))
    assert [r["bet_id"] for r in from_csv] == [r["bet_id"] for r in records]
    assert [int(r["delta"]) for r in from_csv] == [r["delta"] for r in records]
    assert pitboss_query(sql, "-w", path, "-f", "csv", "--out", str(tmp_path / "d.csv")).exit_code == 0
    assert (tmp_path / "d.csv").read_text() == text.stdout
    assert pitboss_query(sql, "-w", path, "-f", "json", "-o", str(tmp_path / "d.json")).exit_code == 0
    assert json.loads((tmp_path / "d.json").read_text()) == records
    assert pitboss_query(sql, "-w", path, "-f", "parquet", "--out", str(tmp_path / "d.parquet")).exit_code == 0
    table = pq.read_table(tmp_path / "d.parquet")
    assert table.column("bet_id").to_pylist() == [r["bet_id"] for r in records]
    assert table.column("delta").to_pylist() == [r["delta"] for r in records]
    shown = pitboss_query(sql, "-w", path)  # the default: a rich table, data shown literally
    assert shown.exit_code == 0
    assert SCRIPT_BET in shown.stdout and "2 rows" in shown.stdout


def test_the_pitboss_cli_has_the_command(path):
    sql = "SELECT business_date, currency, bets FROM daily_summary ORDER BY 1, 2"
    done = subprocess.run([sys.executable, "-m", "pitboss.cli", "query", sql, "--warehouse", path, "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [(r["business_date"], r["currency"]) for r in json.loads(done.stdout)] == [
        (DAY1.isoformat(), "EUR"), (DAY1.isoformat(), "USD"), (DAY2.isoformat(), "EUR")]
    done = subprocess.run([sys.executable, "-m", "pitboss.cli", "query", "DROP TABLE findings", "--warehouse", path],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("pitboss: error: refused") and done.stdout == ""


# --- across games ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_path(tmp_path_factory) -> str:
    copy = tmp_path_factory.mktemp("query-mixed") / "audit.duckdb"
    shutil.copyfile(mixed_warehouse().path, copy)
    return str(copy)


def saved(name: str, path: str, **params: str) -> list[dict]:
    return as_json(pitboss_query("--saved", name, "-w", path, "-f", "json",
                                 *sum((["--param", f"{k}={v}"] for k, v in params.items()), [])))


def _without_game(got: list[dict], key: str = "game") -> list[dict]:
    return [{k: v for k, v in r.items() if k != key} for r in got]


def test_saved_queries_keep_baccarat_rows_and_add_blackjack_ones(path, mixed_path):
    """Each saved query gives the baccarat rows of the mixed run as the baccarat-only run does (but for the
    new game column), and blackjack rows with game 'blackjack'."""
    for name, params, key in (("findings_by_kind", {"date": DAY1}, "game"),
                              ("overpaid_accounts", {"date": DAY1}, "games"),
                              ("underpaid_accounts", {"date": DAY1}, "games"),
                              ("account_activity", {"account_id": "A1", "date": DAY1}, "game"),
                              ("round_history", {"round_id": "S1-R2"}, "game")):
        alone, beside = saved(name, path, **params), saved(name, mixed_path, **params)
        assert alone and {r[key] for r in alone} == {"baccarat"}, name
        assert _without_game(alone, key) == _without_game([r for r in beside if r[key] == "baccarat"], key), name
        assert list(alone[0])[-1] == key  # the new column comes last
    kinds = saved("findings_by_kind", mixed_path, date=DAY1)
    blackjack = {r["kind"]: r for r in kinds if r["game"] == "blackjack"}
    assert {"OVERPAID", "UNDERPAID", "DEALER_DRAW_RULE", "ILLEGAL_DECISION", "BET_BEHIND_BY_SEATED"} <= set(blackjack)
    assert {r["tables"] for r in blackjack.values()} == {1}
    # a kind found at both games' tables gives a row for each
    assert {r["game"] for r in kinds if r["kind"] == "OVERPAID"} == {"baccarat", "blackjack"}
    over = saved("overpaid_accounts", mixed_path, date=DAY1)
    assert {r["games"] for r in over} == {"baccarat", "blackjack"}
    assert all(r["tables"] == BLACKJACK_TABLE for r in over if r["games"] == "blackjack")


def test_round_history_of_a_blackjack_round(mixed_path):
    con = duckdb.connect(mixed_path, read_only=True)
    try:
        round_id, boxes, dealer = con.execute(
            "SELECT round_id, boxes, recorded_dealer_cards FROM blackjack_round_replays "
            "WHERE list_contains(finding_kinds, 'DEALER_DRAW_RULE') ORDER BY round_id LIMIT 1").fetchone()
        bets = {r[0] for r in con.execute("SELECT bet_id FROM settlements WHERE round_id = ?", [round_id]).fetchall()}
        findings = con.execute("SELECT count(*) FROM findings WHERE round_id = ?", [round_id]).fetchone()[0]
    finally:
        con.close()
    got = saved("round_history", mixed_path, round_id=round_id)
    assert [r["item"] for r in got] == ["round"] + ["bet"] * len(bets) + ["finding"] * findings
    assert {r["bet_id"] for r in got if r["item"] == "bet"} == bets
    assert {r["game"] for r in got} == {"blackjack"} and {r["table_id"] for r in got} == {BLACKJACK_TABLE}
    head = got[0]["detail"]
    assert head.startswith(f"recorded box {boxes[0]}: ") and f"dealer: {' '.join(dealer)} (" in head
    assert "; expected box " in head
    assert any(r["detail"].startswith("DEALER_DRAW_RULE: ") for r in got if r["item"] == "finding")
    assert all(r["mode"] is None for r in got if r["item"] == "bet")


def test_account_activity_of_a_blackjack_account(mixed_path):
    con = duckdb.connect(mixed_path, read_only=True)
    try:
        account, n = con.execute("SELECT account_id, count(*) FROM settlements WHERE table_id = ? GROUP BY ALL "
                                 "ORDER BY 2 DESC, 1 LIMIT 1", [BLACKJACK_TABLE]).fetchone()
    finally:
        con.close()
    got = saved("account_activity", mixed_path, account_id=account, date=DAY1)
    assert len(got) == n and {r["game"] for r in got} == {"blackjack"}
    assert {r["bet_type"] for r in got} <= {"MAIN", "PAIR", "INSURANCE", "BET_BEHIND"}

