"""Regulator views (audits/views) and the warehouse's reference tables, on a small hand-built night
(tests/warehouse_fixtures.py). Every expected figure is computed here in Python from the rows the
fixture built, not with the SQL under test."""

from __future__ import annotations

import json
import math
import re
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import duckdb
import pytest

from engine.findings import SEVERITY
from tests.warehouse_fixtures import DAY1, DAY2, SCRIPT_BET, TABLES, settled_bets, shared_warehouse

ROOT = Path(__file__).resolve().parents[1]
VIEWS_DIR = ROOT / "audits" / "views"
VIEWS = ("discrepancies", "limit_breaches", "dealing_violations", "rtp_by_table_and_bet_type", "daily_summary")


@pytest.fixture(scope="module")
def wh():
    return shared_warehouse()


@pytest.fixture(scope="module")
def con(wh):
    c = duckdb.connect(str(wh.path), read_only=True)
    yield c
    c.close()


def rows(con, sql, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def view_header(text: str) -> tuple[str, list[tuple[str, str]]]:
    """(view name, [(column, doc)]) from a view file's header comment."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        lines.append(line[2:])
    name = lines[0].split(":", 1)[1].strip()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Columns:")
    cols = []
    for line in lines[start + 1:]:
        m = re.match(r"^\s+(\w+)\s{2,}(\S.*)$", line)
        assert m, f"column line not as '--   name  doc': {line!r}"
        cols.append((m.group(1), m.group(2)))
    return name, cols


# --- files and documentation ---------------------------------------------------------------------


def test_view_files_are_numbered_and_one_view_each():
    files = sorted(p.name for p in VIEWS_DIR.glob("*.sql"))
    assert all(re.fullmatch(r"\d\d_[a-z_]+\.sql", f) for f in files), files
    names = [view_header((VIEWS_DIR / f).read_text())[0] for f in files]
    assert sorted(names) == sorted(VIEWS)
    for f, name in zip(files, names, strict=True):
        assert f[3:-4] == name
        text = (VIEWS_DIR / f).read_text()
        assert len(duckdb.connect().extract_statements(text)) == 1
        assert f"CREATE OR REPLACE VIEW {name} AS" in text


def test_every_view_column_is_documented_in_the_header_and_in_docs(con):
    docs = (ROOT / "docs" / "warehouse.md").read_text()
    for path in sorted(VIEWS_DIR.glob("*.sql")):
        name, documented = view_header(path.read_text())
        actual = [r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()]
        assert [c for c, _ in documented] == actual, name
        section = docs.split(f"### {name}\n", 1)[1].split("\n### ", 1)[0]
        for column, _ in documented:
            assert f"| {column} |" in section, (name, column)


def test_docs_cover_every_table_column(con):
    docs = (ROOT / "docs" / "warehouse.md").read_text()
    tables = ("round_replays", "blackjack_round_replays", "settlements", "findings", "quarantine", "audit_runs",
              "theoretical_rtp", "audited_tables")
    for table in tables:
        section = docs.split(f"### {table}\n", 1)[1].split("\n### ", 1)[0]
        for (column,) in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                                     "ORDER BY ordinal_position", [table]).fetchall():
            assert f"| {column} |" in section, (table, column)


# --- the plain duckdb client ---------------------------------------------------------------------

_PLAIN_CLIENT = """
import duckdb, json, sys
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute("SET enable_external_access = false")
out = {}
for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall():
    out[name] = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
print(json.dumps(out))
"""


def test_plain_duckdb_client_opens_read_only_and_queries_every_view(wh, tmp_path):
    # a fresh interpreter with nothing but duckdb imported: no UDF, no project code
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(wh.path, copy)
    before = copy.read_bytes()
    done = subprocess.run([sys.executable, "-I", "-c", _PLAIN_CLIENT, str(copy)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    assert set(counts) == set(VIEWS)
    assert counts["discrepancies"] == 2 and counts["limit_breaches"] == 2 and counts["dealing_violations"] == 1
    assert counts["daily_summary"] == 2
    assert copy.read_bytes() == before


# --- figures -------------------------------------------------------------------------------------


def test_discrepancies_are_the_planted_over_and_underpayments(wh, con):
    expected = {
        (("OVERPAID" if b["paid"] > b["expected"] else "UNDERPAID"), b["business_date"], b["table_id"],
         b["round_id"], b["bet_id"], b["account_id"], b["stake"], b["paid"], b["expected"], b["paid"] - b["expected"],
         b["currency"])
        for b in settled_bets(wh.data) if b["paid"] != b["expected"]
    }
    assert len(expected) == 2
    got = {(r["kind"], r["business_date"], r["table_id"], r["round_id"], r["bet_id"], r["account_id"], r["stake"],
            r["paid"], r["expected"], r["delta"], r["currency"]) for r in rows(con, "SELECT * FROM discrepancies")}
    assert got == expected
    by_kind = {k[0]: k for k in got}
    assert by_kind["OVERPAID"][4] == SCRIPT_BET and by_kind["OVERPAID"][9] == 500
    assert by_kind["UNDERPAID"][9] == -300 and by_kind["UNDERPAID"][10] == "USD"


def test_limit_breaches_join_the_bets_stake(wh, con):
    bets = {b["bet_id"]: b for b in wh.data.bets}
    big, late = wh.data.planted["STAKE_ABOVE_MAX"], wh.data.planted["LATE_BET"]
    got = rows(con, "SELECT * FROM limit_breaches ORDER BY kind")
    assert [(r["kind"], r["bet_id"], r["business_date"]) for r in got] == [
        ("LATE_BET", late["bet_id"], DAY2), ("STAKE_ABOVE_MAX", big["bet_id"], DAY1)]
    for r in got:
        b = bets[r["bet_id"]]
        assert (r["stake"], r["paid"], r["expected"], r["account_id"], r["bet_type"], r["mode"], r["currency"],
                r["round_id"], r["table_id"]) == (b["stake"], b["paid"], b["expected"], b["account_id"],
                                                  b["bet_type"], b["mode"], b["currency"], b["round_id"],
                                                  b["table_id"])
        assert r["severity"] == "major" and r["message"]
    assert got[1]["stake"] == 150_000 and got[1]["rule"] == "at most 1,000.00 EUR"


def test_dealing_violations_show_the_round_beside_its_replay(wh, con):
    planted = wh.data.planted["SCORE_MISMATCH"]
    rnd = next(r for r in wh.data.rounds if r["round_id"] == planted["round_id"])
    got = rows(con, "SELECT * FROM dealing_violations")
    assert len(got) == 1
    v = got[0]
    assert (v["kind"], v["severity"], v["round_id"], v["table_id"], v["business_date"], v["round_no"]) == (
        "SCORE_MISMATCH", "critical", planted["round_id"], rnd["table_id"], DAY1, rnd["round_no"])
    assert v["recorded_player_cards"] == " ".join(rnd["player_cards"]) == v["expected_player_cards"]
    assert v["recorded_banker_cards"] == " ".join(rnd["banker_cards"])
    assert v["recorded_score"] == f"{planted['recorded_score']}-{rnd['banker_score']}"
    assert v["expected_score"] == f"{planted['true_score']}-{rnd['banker_score']}"
    assert v["recorded_outcome"] == v["expected_outcome"] == rnd["outcome"]


def test_rtp_by_table_and_bet_type_by_hand(wh, con):
    from engine.games.baccarat.rtp import ruleset_rtp
    from engine.games.baccarat.ruleset import load_ruleset

    cancelled = {r["round_id"] for r in wh.data.rounds if r["status"] == "cancelled"}
    ruleset_of = {t["table_id"]: t["ruleset"] for t in TABLES}
    results = [r for t in TABLES for r in ruleset_rtp(load_ruleset(t["ruleset"]))]
    theory = {(r.ruleset, r.bet_type, r.mode): r.rtp for r in results}
    # variance of one bet's credit per unit: E[c^2] - E[c]^2 over the outcomes the engine enumerates
    theory_stddev = {(r.ruleset, r.bet_type, r.mode): math.sqrt(sum(o.probability * o.credit**2 for o in r.outcomes)
                                                               - r.rtp**2) for r in results}
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for b in settled_bets(wh.data):
        if b["round_id"] not in cancelled:
            groups[(b["table_id"], b["bet_type"], b["mode"])].append(b)
    got = {(r["table_id"], r["bet_type"], r["mode"]): r for r in rows(con, "SELECT * FROM rtp_by_table_and_bet_type")}
    assert set(got) == set(groups)
    for key, bets in groups.items():
        r = got[key]
        stakes, paid, expected = (sum(b[c] for b in bets) for c in ("stake", "paid", "expected"))
        rtp = theory[(ruleset_of[key[0]], key[1], key[2])]
        assert (r["bets"], r["stakes"], r["paid"], r["expected"], r["paid_minus_expected"]) == (
            len(bets), stakes, paid, expected, paid - expected), key
        assert r["ruleset"] == ruleset_of[key[0]] and r["currency"] == bets[0]["currency"]
        assert r["observed_rtp"] == pytest.approx(paid / stakes, rel=1e-12)
        assert r["expected_rtp"] == pytest.approx(expected / stakes, rel=1e-12)
        assert r["theoretical_rtp"] == pytest.approx(float(rtp), rel=1e-15)
        assert Fraction(r["theoretical_rtp_exact"]) == rtp
        returns = [b["paid"] / b["stake"] for b in bets]
        sd = statistics.stdev(returns) if len(bets) > 1 else None
        assert r["return_stddev"] == (pytest.approx(sd, rel=1e-9, abs=1e-12) if sd is not None else None)
        # bets of one type and mode in one round win or lose together: the round is the unit
        round_stakes: dict[str, int] = defaultdict(int)
        for b in bets:
            round_stakes[b["round_id"]] += b["stake"]
        assert r["rounds"] == len(round_stakes)
        theory_sd = theory_stddev[(ruleset_of[key[0]], key[1], key[2])]
        assert r["theoretical_return_stddev"] == pytest.approx(theory_sd, rel=1e-12)
        half = 1.96 * theory_sd * math.sqrt(sum(w * w for w in round_stakes.values())) / stakes
        assert r["rtp_band_half_width"] == pytest.approx(half, rel=1e-9)
        assert r["band_low"] == pytest.approx(float(rtp) - half, rel=1e-9)
        assert r["band_high"] == pytest.approx(float(rtp) + half, rel=1e-9)
        assert r["within_band"] == (float(rtp) - half <= paid / stakes <= float(rtp) + half)
    # the overpaid bet's group, and only it, is paid above what the rules say
    script = next(b for b in wh.data.bets if b["bet_id"] == SCRIPT_BET)
    off = {k: r["paid_minus_expected"] for k, r in got.items() if r["paid_minus_expected"]}
    underpaid = next(b for b in wh.data.bets if b["bet_id"] == wh.data.planted["UNDERPAID"]["bet_id"])
    assert off == {("T1", script["bet_type"], script["mode"]): 500,
                   ("T2", underpaid["bet_type"], underpaid["mode"]): -300}


def test_daily_summary_by_hand(wh, con):
    data = wh.data
    settled = settled_bets(data)
    severity_of_planted = {"OVERPAID": DAY1, "UNDERPAID": DAY1, "STAKE_ABOVE_MAX": DAY1, "LATE_BET": DAY2,
                           "SCORE_MISMATCH": DAY1, "UNKNOWN_ROUND": DAY1}
    got = {r["business_date"]: r for r in rows(con, "SELECT * FROM daily_summary ORDER BY business_date")}
    assert list(got) == [DAY1, DAY2]
    for day, r in got.items():
        day_rounds = [x for x in data.rounds if x["betting_opened_at"].date() == day]
        day_bets = [b for b in settled if b["business_date"] == day]
        kinds = [k for k, d in severity_of_planted.items() if d == day]
        assert r["tables"] == len({x["table_id"] for x in day_rounds})
        assert r["rounds"] == len(day_rounds)
        assert r["cancelled_rounds"] == sum(x["status"] == "cancelled" for x in day_rounds)
        assert r["bets"] == len(day_bets)
        assert r["accounts"] == len({b["account_id"] for b in day_bets})
        assert r["currencies"] == ",".join(sorted({b["currency"] for b in day_bets}))
        assert r["stakes"] == sum(b["stake"] for b in day_bets)
        assert r["paid"] == sum(b["paid"] for b in day_bets)
        assert r["expected"] == sum(b["expected"] for b in day_bets)
        assert r["paid_minus_expected"] == r["paid"] - r["expected"]
        assert r["overpaid"] == sum(b["paid"] - b["expected"] for b in day_bets if b["paid"] > b["expected"])
        assert r["underpaid"] == sum(b["expected"] - b["paid"] for b in day_bets if b["paid"] < b["expected"])
        assert r["findings"] == len(kinds)
        for sev in ("critical", "major", "minor"):
            assert r[f"findings_{sev}"] == sum(SEVERITY[k] == sev for k in kinds), (day, sev)
        assert r["quarantined_rows"] == (1 if day == DAY1 else 0)
    assert got[DAY1]["tables"] == 2 and got[DAY1]["currencies"] == "EUR,USD" and got[DAY2]["cancelled_rounds"] == 1


# --- reference tables ----------------------------------------------------------------------------


def test_reference_tables(wh, con):
    from engine.games.baccarat.rtp import ruleset_rtp
    from engine.games.baccarat.ruleset import load_ruleset, ruleset_ids

    every = {(r.ruleset, r.bet_type, r.mode): r.rtp for rid in ruleset_ids() for r in ruleset_rtp(load_ruleset(rid))}
    got = rows(con, "SELECT * FROM theoretical_rtp")
    assert len(got) == len(every)
    for r in got:
        exact = every[(r["ruleset"], r["bet_type"], r["mode"])]
        assert Fraction(r["rtp_exact"]) == exact and r["rtp"] == float(exact)
        assert 0 < r["return_stddev"] < 60
    tables = rows(con, "SELECT * FROM audited_tables ORDER BY table_id")
    assert [(t["table_id"], t["game"], t["ruleset"], t["currency"], t["table_max"], t["run_id"]) for t in tables] == [
        (t["table_id"], t["game"], t["ruleset"], t["currency"], t["table_max"], wh.run_id) for t in TABLES]


def test_reloading_replaces_reference_rows(wh, tmp_path):
    """A second load of the same night (a re-run) keeps one row per table and per theoretical RTP."""
    from pipelines.warehouse import load

    copy = tmp_path / "audit.duckdb"
    shutil.copyfile(wh.path, copy)
    manifest = json.loads((wh.path.parent / "out" / "_manifest.json").read_text())
    before = {v: duckdb.connect(str(copy), read_only=True).execute(f"SELECT count(*) FROM {v}").fetchone()[0]
              for v in (*VIEWS, "theoretical_rtp")}
    manifest["run_id"] = "RERUN"
    load(str(copy), manifest)
    c = duckdb.connect(str(copy), read_only=True)
    after = {v: c.execute(f"SELECT count(*) FROM {v}").fetchone()[0] for v in (*VIEWS, "theoretical_rtp")}
    assert after == before
    assert c.execute("SELECT table_id, run_id FROM audited_tables ORDER BY 1").fetchall() == [
        ("T1", "RERUN"), ("T2", "RERUN")]
    assert c.execute("SELECT DISTINCT run_id FROM discrepancies").fetchall() == [("RERUN",)]
    assert c.execute("SELECT superseded_by FROM audit_runs WHERE run_id = ?", [wh.run_id]).fetchone() == ("RERUN",)
