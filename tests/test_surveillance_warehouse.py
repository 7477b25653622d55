"""Surveillance in the warehouse (pipelines/warehouse.py load_surveillance, audits/views/7x_*.sql, the saved
queries) and on the command line (`pitboss surveil`, `pitboss audit --surveil`), on a small recorded
night with fake detectors that emit rows under every view's detector names."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from datetime import date
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import engine.surveillance.registry as registry
from engine.surveillance.detector import Detector, TableData
from engine.surveillance.tests import SurveillanceTest
from pipelines.audit import read_manifest
from pipelines.audit import run as audit
from pipelines.surveillance import MANIFEST
from pipelines.surveillance import run as surveil
from pipelines.warehouse import load, load_surveillance
from pitboss.cli import app
from pitboss.recorder import GenerateConfig, generate
from schemas.outputs import DOCS, SURVEILLANCE_OUTPUTS, SURVEILLANCE_TESTS

ROOT = Path(__file__).resolve().parents[1]
VIEWS = {  # view -> the detector names it shows
    "advantage_play": {"advantage_play"},
    "opposite_betting": {"opposite_betting", "shared_rounds"},
    "shoe_integrity": {"shoe_repeat", "weak_shuffle", "weak_shuffle_pair", "card_positions"},
    "wheel_bias": {"wheel_bias", "wheel_sector"},
    "dice_bias": {"dice_bias", "dice_pairs", "dice_triples"},
    "dealer_anomalies": {"dealer_findings", "dealer_account", "dealer_result", "dealer_signature"},
}
D1, D2 = "2026-11-28", "2026-11-29"

# --- fake detectors: one per family, rows under the real detectors' names ------------------------


def ids_features(table: TableData) -> pa.Table:
    """A table's ids: its game, first shoe and first accounts."""
    shoes = sorted(table.shoes["shoe_id"].to_pylist())
    accounts = sorted({a for a in table.bets["account_id"].to_pylist() if a})
    return pa.table({"table_id": [table.table["table_id"]], "game": [table.table["game"]],
                     "shoes": [shoes[:2]], "accounts": [accounts[:3]]})


def by_game(features: pa.Table) -> dict[str, dict]:
    return {r["game"]: r for r in sorted(features.to_pylist(), key=lambda r: r["table_id"])}


def t(detector: str, subject: str, p: float | None, period: str = D1, **kw) -> SurveillanceTest:
    return SurveillanceTest(detector, subject, period, f"x = {p}", p, p, "fake", 1000 if p is not None else 1, 100,
                            detail=f"{detector} {subject}", **kw)


def scale(settings: dict, p: float) -> float:
    return min(1.0, p * settings.get("scale", 1.0))


def advantage_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    a, b, c = by_game(features)["baccarat"]["accounts"]
    return [t("advantage_play", a, scale(settings, 1e-6), money=5000, effect=0.04, currency="EUR"),
            t("advantage_play", b, 0.3, period=f"{D1}..{D2}", currency="EUR"),
            t("advantage_play", c, None, currency="EUR")]


def collusion_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    a, b, c = by_game(features)["roulette"]["accounts"]
    return [t("opposite_betting", f"{a}|{b}", scale(settings, 1e-7), money=12000, currency="EUR"),
            t("opposite_betting", f"{a}|{c}", 0.02, currency="EUR"), t("shared_rounds", f"{b}|{c}", 0.5, period=D2)]


def shoe_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    bac = by_game(features)["baccarat"]
    s1, s2 = bac["shoes"]
    return [t("shoe_repeat", s2, scale(settings, 1e-9)), t("weak_shuffle_pair", f"{s1}>{s2}", 0.4),
            t("weak_shuffle", bac["table_id"], 0.6), t("card_positions", "baccarat_8d_extended/8 decks", 0.7,
                                                         period=f"{D1}..{D2}")]


def equipment_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    g = by_game(features)
    return [t("wheel_bias", g["roulette"]["table_id"], scale(settings, 1e-8)), t("wheel_sector", "WHEEL-7", 0.2),
            t("dice_bias", g["sic_bo"]["table_id"], 0.5), t("dice_triples", "SHAKER-2", scale(settings, 2e-6)),
            t("dice_pairs", "SHAKER-2", None)]


def dealer_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    account = by_game(features)["roulette"]["accounts"][0]
    return [t("dealer_findings", "D1", 0.9), t("dealer_account", f"D1|{account}", scale(settings, 1e-10), money=-800),
            t("dealer_result", "D3", 0.04, currency="EUR"), t("dealer_result", "D3", 0.04, currency="USD"),
            t("dealer_signature", "D2|WHEEL-7", 0.3, period=D2)]


FAKES = (
    Detector("fake_advantage", "ADVANTAGE_PLAY", (), ids_features, advantage_tests),
    Detector("fake_collusion", "OPPOSITE_BETTING", (), ids_features, collusion_tests),
    Detector("fake_shoes", "SHOE_REPEATED", (), ids_features, shoe_tests),
    Detector("fake_equipment", "WHEEL_BIAS", (), ids_features, equipment_tests),
    Detector("fake_dealers", "DEALER_ANOMALY", (), ids_features, dealer_tests),
)
FLAGGED = 6  # the tests with a tiny p-value above: each alone or beside larger ones in its detector name
# the same detectors, every tiny p-value 10^7 times larger: a second run where fewer are flagged
WEAKER = tuple(Detector(d.name, d.finding_kind, d.games, d.features, d.tests, {"scale": 1e7}) for d in FAKES)


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("surveil-wh")
    generate(GenerateConfig(out=tmp / "data", tables=1, blackjack_tables=0, roulette_tables=1, sic_bo_tables=1,
                            days=2, rounds_per_table=30, bets_per_round=6, seed=9, fault_rate=0, quiet=True))
    record = audit(["--input", str(tmp / "data"), "--output", str(tmp / "out")])
    warehouse = tmp / "audit.duckdb"
    load(str(warehouse), record.__dict__)
    surveyed = surveil(["--input", str(tmp / "data"), "--output", str(tmp / "out")], detectors=FAKES)
    load_surveillance(str(warehouse), surveyed.__dict__)
    return tmp, warehouse, record, surveyed


def connect(path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(path), read_only=True)


def rows(con, sql, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def header_columns(text: str) -> list[str]:
    lines = [line[2:] for line in text.splitlines() if line.startswith("--")]
    start = next(i for i, line in enumerate(lines) if line.strip() == "Columns:")
    return [re.match(r"^\s+(\w+)\s{2,}\S", line).group(1) for line in lines[start + 1:]]


def test_tables_and_views_are_documented_column_by_column(night):
    _, warehouse, *_ = night
    docs = (ROOT / "docs" / "warehouse.md").read_text()
    con = connect(warehouse)
    for table in (*SURVEILLANCE_OUTPUTS, "surveillance_runs"):
        section = docs.split(f"### {table}\n", 1)[1].split("\n### ", 1)[0]
        columns = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                                             "ORDER BY ordinal_position", [table]).fetchall()]
        assert columns and all(f"| {c} |" in section for c in columns), table
        if table in SURVEILLANCE_OUTPUTS:
            assert columns == ["run_id", *DOCS[table]]
    for path in sorted((ROOT / "audits" / "views").glob("7?_*.sql")):
        name = path.stem[3:]
        documented = header_columns(path.read_text())
        assert documented == [r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()], name
        section = docs.split(f"### {name}\n", 1)[1].split("\n### ", 1)[0]
        assert all(f"| {c} |" in section for c in documented), name
    assert sorted(p.stem[3:] for p in (ROOT / "audits" / "views").glob("7?_*.sql")) == sorted(VIEWS)


def test_each_view_holds_its_detectors_tests_flagged_first_then_by_evidence(night):
    _, warehouse, record, surveyed = night
    con = connect(warehouse)
    total = con.execute("SELECT count(*) FROM surveillance_tests").fetchone()[0]
    shown = 0
    for view, detectors in VIEWS.items():
        got = rows(con, f"SELECT * FROM {view}")
        assert {r["detector"] for r in got} == detectors, view
        shown += len(got)
        keys = [(not r["flagged"], r["q_value"] is None, r["q_value"] or 0, r["p_value"] is None, r["p_value"] or 0)
                for r in got]
        assert keys == sorted(keys), view
        assert all(r["run_id"] == surveyed.run_id and r["audit_run_id"] == record.run_id for r in got)
        assert all(r["tested"] == (r["p_value"] is not None) for r in got)
    assert shown == total  # every test is in exactly one view
    assert con.execute("SELECT count(*) FROM surveillance_tests WHERE flagged").fetchone()[0] == FLAGGED


def test_composite_subjects_are_split_into_columns(night):
    tmp, warehouse, *_ = night
    con = connect(warehouse)
    pair = rows(con, "SELECT * FROM opposite_betting WHERE flagged")[0]
    assert pair["subject"] == f"{pair['account_a']}|{pair['account_b']}"
    shoes = {r["detector"]: r for r in rows(con, "SELECT * FROM shoe_integrity")}
    first, second = shoes["weak_shuffle_pair"]["subject"].split(">")
    assert (shoes["weak_shuffle_pair"]["previous_shoe_id"], shoes["weak_shuffle_pair"]["shoe_id"]) == (first, second)
    assert shoes["shoe_repeat"]["shoe_id"] == second and shoes["shoe_repeat"]["flagged"]
    table = shoes["weak_shuffle"]["subject"]
    assert shoes["shoe_repeat"]["table_id"] == table == shoes["weak_shuffle"]["table_id"]  # the shoe's table
    assert shoes["card_positions"]["table_id"] is None and shoes["card_positions"]["shoe_id"] is None
    wheels = {r["detector"]: r for r in rows(con, "SELECT * FROM wheel_bias")}
    assert wheels["wheel_bias"]["table_id"] == wheels["wheel_bias"]["wheel"]  # the table stands for its wheel
    assert wheels["wheel_sector"]["wheel"] == "WHEEL-7" and wheels["wheel_sector"]["table_id"] is None
    dice = {r["detector"]: r for r in rows(con, "SELECT * FROM dice_bias")}
    assert dice["dice_triples"]["shaker"] == "SHAKER-2" and dice["dice_bias"]["table_id"] is not None
    assert dice["dice_pairs"]["q_value"] is None and not dice["dice_pairs"]["tested"]
    dealers = {r["detector"]: r for r in rows(con, "SELECT * FROM dealer_anomalies")}
    assert dealers["dealer_account"]["dealer_id"] == "D1" and dealers["dealer_account"]["account_id"]
    assert (dealers["dealer_signature"]["dealer_id"], dealers["dealer_signature"]["wheel"]) == ("D2", "WHEEL-7")
    assert dealers["dealer_result"]["account_id"] is None and dealers["dealer_result"]["wheel"] is None
    advantage = rows(con, "SELECT * FROM advantage_play")
    assert [r["account_id"] for r in advantage] == [r["subject"] for r in advantage]
    run_level = next(r for r in advantage if ".." in r["period"])
    assert (run_level["period_start"], run_level["business_date"]) == (date(2026, 11, 28), date(2026, 11, 29))


def test_flags_are_review_findings_and_the_run_is_recorded(night):
    _, warehouse, record, surveyed = night
    con = connect(warehouse)
    found = rows(con, "SELECT * FROM surveillance_findings")
    assert len(found) == FLAGGED and {r["severity"] for r in found} == {"review"}
    assert con.execute("SELECT count(*) FROM findings WHERE severity = 'review'").fetchone()[0] == 0
    (run,) = rows(con, "SELECT * FROM surveillance_runs")
    assert (run["run_id"], run["audit_run_id"], run["alpha"]) == (surveyed.run_id, record.run_id, 0.01)
    assert run["business_dates"] == [date(2026, 11, 28), date(2026, 11, 29)] and run["superseded_by"] is None
    assert [d["name"] for d in json.loads(run["detectors"])] == [d.name for d in FAKES]
    assert json.loads(run["counts"])["surveillance_findings"] == FLAGGED


def test_a_later_run_replaces_the_dates_it_covers(night, tmp_path):
    tmp, warehouse, record, first = night
    copy = tmp_path / "audit.duckdb"
    shutil.copyfile(warehouse, copy)
    out = tmp_path / "out"
    shutil.copytree(tmp / "out", out)
    # the audit's manifest names its files where they were: the copy's surveillance reads those, and writes here
    second = surveil(["--input", str(tmp / "data"), "--output", str(out)], detectors=WEAKER)
    load_surveillance(str(copy), second.__dict__)
    con = connect(copy)
    assert {r[0] for r in con.execute("SELECT DISTINCT run_id FROM surveillance_tests").fetchall()} == {second.run_id}
    assert con.execute("SELECT count(*) FROM surveillance_tests WHERE flagged").fetchone()[0] < FLAGGED
    assert con.execute("SELECT count(*) FROM surveillance_findings WHERE run_id = ?", [first.run_id]).fetchone()[0] == 0
    assert rows(con, "SELECT run_id, superseded_by FROM surveillance_runs ORDER BY loaded_at") == [
        {"run_id": first.run_id, "superseded_by": second.run_id}, {"run_id": second.run_id, "superseded_by": None}]
    con.close()
    # a run of the second date only: the first date's rows of the run before stay
    tests = pq.read_table(out / "surveillance_tests")
    day2 = tmp_path / "day2" / "surveillance_tests" / "part.parquet"
    day2.parent.mkdir(parents=True)
    pq.write_table(tests.filter(pc.equal(tests["business_date"], pa.scalar(date(2026, 11, 29)))), day2)
    third = {**second.__dict__, "run_id": "third", "business_dates": [D2],
             "outputs": {"surveillance_tests": [{"path": str(day2)}], "surveillance_findings": []}}
    load_surveillance(str(copy), third)
    con = connect(copy)
    by_run = dict(con.execute("SELECT run_id, list(DISTINCT business_date ORDER BY business_date) FROM "
                              "surveillance_tests GROUP BY run_id").fetchall())
    assert by_run == {second.run_id: [date(2026, 11, 28)], "third": [date(2026, 11, 29)]}
    assert con.execute("SELECT superseded_by FROM surveillance_runs WHERE run_id = ?",
                       [second.run_id]).fetchone()[0] == "third"


def test_an_audit_reload_leaves_the_surveillance_alone(night, tmp_path):
    tmp, warehouse, record, surveyed = night
    copy = tmp_path / "audit.duckdb"
    shutil.copyfile(warehouse, copy)
    before = connect(copy).execute("SELECT count(*) FROM surveillance_tests").fetchone()[0]
    again = {**read_manifest(str(tmp / "out")), "run_id": "audit-again"}
    load(str(copy), again)
    con = connect(copy)
    assert con.execute("SELECT count(*) FROM surveillance_tests").fetchone()[0] == before > 0
    assert con.execute("SELECT count(*) FROM advantage_play").fetchone()[0] > 0


def saved(warehouse, view: str, day: str) -> list[dict]:
    """The rows of the saved query surveillance_VIEW for a business date, as `pitboss query` gives them in JSON."""
    result = CliRunner().invoke(app, ["query", "--saved", f"surveillance_{view}", "--param", f"date={day}",
                                      "--warehouse", str(warehouse), "--format", "json"])
    assert result.exit_code == 0, (view, result.output)
    return json.loads(result.stdout)


def view_columns(view: str) -> list[str]:
    """The columns a surveillance view's header documents."""
    (path,) = (ROOT / "audits" / "views").glob(f"7?_{view}.sql")
    return header_columns(path.read_text())


def test_saved_queries_show_a_dates_flags_first(night):
    _, warehouse, *_ = night
    for view in VIEWS:
        got = saved(warehouse, view, D1)
        assert got and {r["detector"] for r in got} <= VIEWS[view]
        assert [not r["flagged"] for r in got] == sorted(not r["flagged"] for r in got)
        assert all(r["p_value"] is not None for r in got)  # tested ones only
    # its period is the second date
    assert [r["detector"] for r in saved(warehouse, "opposite_betting", D2)] == ["shared_rounds"]


def test_saved_queries_select_the_currency_where_their_view_has_it(night):
    """Every column a surveillance saved query returns is one its view documents, and the views that show a
    per-currency test's currency (advantage_play, opposite_betting, dealer_anomalies) pass it on."""
    _, warehouse, *_ = night
    for view in VIEWS:
        columns = list(saved(warehouse, view, D1)[0])
        documented = view_columns(view)
        assert set(columns) <= set(documented), view
        assert ("currency" in columns) == ("currency" in documented), view
    assert {v for v in VIEWS if "currency" in view_columns(v)} == {"advantage_play", "opposite_betting",
                                                                    "dealer_anomalies"}


def test_saved_queries_tell_a_subjects_currencies_apart(night):
    """A dealer tested in EUR and in USD gives two rows told apart by currency alone (the fakes' D3: the same p, 0.04,
    and statistic in each), EUR first (the sort's last key); a test not per currency shows none."""
    _, warehouse, *_ = night
    dealers = saved(warehouse, "dealer_anomalies", D1)
    assert [(r["dealer_id"], r["currency"], r["p_value"]) for r in dealers if r["detector"] == "dealer_result"] == [
        ("D3", "EUR", 0.04), ("D3", "USD", 0.04)]
    assert {r["currency"] for r in dealers if r["detector"] != "dealer_result"} == {None}
    assert {r["currency"] for r in saved(warehouse, "advantage_play", D1)} == {"EUR"}
    assert {r["currency"] for r in saved(warehouse, "opposite_betting", D1)} == {"EUR"}
    assert [(r["detector"], r["currency"]) for r in saved(warehouse, "opposite_betting", D2)] == [
        ("shared_rounds", None)]


# --- the command line -------------------------------------------------------------------------------


@pytest.fixture
def fakes(monkeypatch):
    monkeypatch.setattr(registry, "DETECTORS", FAKES)


def test_pitboss_surveil_writes_loads_and_summarises(night, tmp_path, fakes):
    tmp, warehouse, *_ = night
    copy = tmp_path / "audit.duckdb"
    shutil.copyfile(warehouse, copy)
    out = tmp_path / "out"
    shutil.copytree(tmp / "out", out)
    result = CliRunner().invoke(app, ["surveil", "--input", str(tmp / "data"), "--output", str(out),
                                      "--warehouse", str(copy), "--alpha", "0.001"])
    assert result.exit_code == 0, result.output
    assert "Flagged for review" in result.output and "advantage_play" in result.output
    assert (out / MANIFEST).exists() and json.loads((out / MANIFEST).read_text())["alpha"] == 0.001
    con = connect(copy)
    assert con.execute("SELECT DISTINCT alpha FROM surveillance_tests").fetchall() == [(0.001,)]
    assert con.execute("SELECT count(*) FROM surveillance_runs").fetchone()[0] == 2


def test_pitboss_surveil_refuses_what_it_cannot_surveil(night, tmp_path, fakes):
    tmp, *_ = night
    runner = CliRunner()
    result = runner.invoke(app, ["surveil", "--input", str(tmp / "data"), "--output", str(tmp_path)])
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.startswith("pitboss: error: ") and "no _manifest.json" in result.stderr
    result = runner.invoke(app, ["surveil", "--input", str(tmp / "data"), "--output", str(tmp / "out"),
                                 "--alpha", "0"])
    assert result.exit_code == 2 and "--alpha must be between 0 and 1" in result.stderr


def test_pitboss_audit_surveil_runs_both(night, tmp_path, fakes):
    tmp, *_ = night
    warehouse = tmp_path / "night.duckdb"
    result = CliRunner().invoke(app, ["audit", "--input", str(tmp / "data"), "--output", str(tmp_path / "out"),
                                      "--warehouse", str(warehouse), "--no-validate", "--surveil"])
    assert result.exit_code == 0, result.output
    assert "Audit run" in result.output and "Surveillance run" in result.output
    con = connect(warehouse)
    audit_run = con.execute("SELECT run_id FROM audit_runs").fetchone()[0]
    assert con.execute("SELECT DISTINCT audit_run_id FROM surveillance_tests").fetchall() == [(audit_run,)]
    assert con.execute("SELECT count(*) FROM surveillance_findings").fetchone()[0] == FLAGGED


# --- the advantage detector's features published as advantage_moments, replayed -----------------------


def _published_advantage():
    """The registry's advantage detector publishing its features (Detector.publish_as), with a small reference
    (the moments do not depend on it; its tests are only faster)."""
    from dataclasses import replace

    from engine.surveillance.advantage import ADVANTAGE_PLAY

    return replace(ADVANTAGE_PLAY, publish_as="advantage_moments",
                   settings={**ADVANTAGE_PLAY.settings, "reference_shoes": 20, "stage_draws": 19, "tail_draws": 99})


def test_advantage_moments_are_published_loaded_and_replayed(tmp_path, monkeypatch):
    """pitboss audit, then pitboss surveil (the advantage detector publishing its features), both into one
    warehouse: advantage_moments holds the features with run_id, sorted; a re-run replaces them by date;
    pitboss replay ROUND --warehouse shows a baccarat round's remaining-shoe RTPs, PLAYER_PAIR's equal to the
    closed form over the cards still in the shoe: 12 x sum n_r (n_r - 1) / (N (N - 1))."""
    from engine.cards import RANKS
    from engine.surveillance.advantage import FEATURES_SCHEMA
    from schemas.outputs import ADVANTAGE_MOMENTS, SORT_KEYS

    data, out, warehouse = tmp_path / "data", tmp_path / "out", tmp_path / "audit.duckdb"
    generate(GenerateConfig(out=data, tables=4, days=2, rounds_per_table=30, bets_per_round=4, seed=3,
                            fault_rate=0, quiet=True))
    runner = CliRunner()
    result = runner.invoke(app, ["audit", "--input", str(data), "--output", str(out), "--warehouse", str(warehouse)])
    assert result.exit_code == 0, result.output
    monkeypatch.setattr(registry, "DETECTORS", (_published_advantage(),))
    result = runner.invoke(app, ["surveil", "--input", str(data), "--output", str(out), "--warehouse", str(warehouse)])
    assert result.exit_code == 0, result.output
    assert "advantage_moments" in result.output

    assert ADVANTAGE_MOMENTS.names == FEATURES_SCHEMA.names and ADVANTAGE_MOMENTS.types == FEATURES_SCHEMA.types
    files = sorted((out / "advantage_moments").glob("*.parquet"))
    published = pq.read_table(files)
    assert published.schema.remove_metadata() == ADVANTAGE_MOMENTS and published.num_rows > 0
    keys = [(k, "ascending") for k in SORT_KEYS["advantage_moments"]]
    assert pc.sort_indices(published, keys).to_pylist() == list(range(published.num_rows))
    manifest = json.loads((out / MANIFEST).read_text())
    assert [d["publish_as"] for d in manifest["detectors"]] == ["advantage_moments"]
    con = connect(warehouse)
    (loaded,) = con.execute("SELECT count(*) FROM advantage_moments WHERE run_id = ?", [manifest["run_id"]]).fetchone()
    assert loaded == published.num_rows
    assert con.execute("SELECT count(DISTINCT run_id) FROM advantage_moments").fetchone() == (1,)
    con.close()

    # a baccarat round with PLAYER_PAIR moments: its remaining shoe by hand
    pair = published.filter(pc.and_(pc.equal(published["bet_type"], "PLAYER_PAIR"),
                                    pc.is_null(published["account_id"]))).to_pylist()
    row = pair[len(pair) // 2]
    shoes = pq.read_table(data / "shoes").to_pylist()
    (cards,) = [s["cards"] for s in shoes if s["shoe_id"] == row["shoe_id"]]
    left = cards[row["shoe_position"]:]
    n = Counter(c[0] for c in left)
    assert set(n) <= set(RANKS)
    big_n = len(left)
    by_hand = 12 * sum(k * (k - 1) for k in n.values()) / (big_n * (big_n - 1))
    assert row["moment"] == pytest.approx(by_hand, rel=1e-12)

    result = runner.invoke(app, ["replay", row["round_id"], "--warehouse", str(warehouse), "--format", "json"])
    assert result.exit_code == 0, result.output
    shown = {m["bet_type"]: m["rtp"] for m in json.loads(result.output)["moments"]["rows"]}
    assert shown["PLAYER_PAIR"] == pytest.approx(by_hand, rel=1e-12)
    text = runner.invoke(app, ["replay", row["round_id"], "--warehouse", str(warehouse)]).output
    assert "PLAYER_PAIR" in text and f"{by_hand:.4%}" in text

    # a second surveillance of the same dates replaces the first's moments
    result = runner.invoke(app, ["surveil", "--input", str(data), "--output", str(out), "--warehouse", str(warehouse)])
    assert result.exit_code == 0, result.output
    again = json.loads((out / MANIFEST).read_text())["run_id"]
    con = connect(warehouse)
    assert con.execute("SELECT DISTINCT run_id FROM advantage_moments").fetchall() == [(again,)]
    assert con.execute("SELECT count(*) FROM advantage_moments").fetchone() == (published.num_rows,)


def test_surveil_summary_prints_rows_loaded_as_a_table(tmp_path, monkeypatch):
    """`pitboss surveil`'s summary: the rows loaded as the audit's table (pitboss.commands.audit.loaded_table),
    not a Python dict; a warehouse name with brackets printed as it is."""
    import io

    from rich.console import Console

    import pitboss.commands.surveil as surveil_command

    tests = tmp_path / "tests.parquet"
    pq.write_table(SURVEILLANCE_TESTS.empty_table(), tests)
    manifest = {"outputs": {"surveillance_tests": [{"path": str(tests)}]}, "business_dates": [D1], "run_id": "S1",
                "audit_run_id": "A1", "alpha": 0.01, "period": "day", "output_dir": str(tmp_path)}
    loaded = {"surveillance_tests": 1_234_567, "surveillance_findings": 3, "advantage_moments": 0}

    def summary(loaded, warehouse) -> str:
        out = io.StringIO()
        monkeypatch.setattr(surveil_command, "console", Console(file=out, width=120, color_system=None))
        surveil_command.print_summary(manifest, loaded, warehouse)
        return out.getvalue()

    text = summary(loaded, "night[1].duckdb")
    assert "{" not in text.split("outputs:")[-1].split("\n", 1)[1] and "'surveillance_tests'" not in text
    assert "Rows loaded into night[1].duckdb" in text
    for name, n in loaded.items():
        assert re.search(rf"│ {name} +│ +{n:,} │", text), name
    assert "Rows loaded" not in summary(None, None)  # no warehouse, no table
