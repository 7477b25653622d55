"""Regulator views (audits/views) and the warehouse's reference tables, on a small hand-built night
(tests/warehouse_fixtures.py). Every expected figure is computed here in Python from the rows the
fixture built, not with the SQL under test. Across games: the same night with a recorded blackjack
table beside it, and that table alone; blackjack rows are checked against the warehouse's own tables
and the recorder's planted faults, baccarat rows against the baccarat-only warehouse."""

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
from pipelines.warehouse import expand_games
from tests.outcome_warehouse import (
    ROULETTE_COVERS,
    ROULETTE_TABLE,
    SIC_BO_ROLLS,
    SIC_BO_TABLE,
    SIC_BO_TOTAL_PAYS,
    outcome_warehouse,
    settled_input_bets,
    total_credit,
    total_rtp,
    total_stddev,
)
from tests.warehouse_fixtures import (
    BLACKJACK_TABLE,
    DAY1,
    DAY2,
    SCRIPT_BET,
    TABLES,
    blackjack_warehouse,
    mixed_warehouse,
    settled_bets,
    shared_warehouse,
)

ROOT = Path(__file__).resolve().parents[1]
VIEWS_DIR = ROOT / "audits" / "views"
VIEWS = ("all_rounds", "discrepancies", "limit_breaches", "dealing_violations", "rtp_by_table_and_bet_type",
         "daily_summary")
# the settlements, a view over the tables that store each fact once (issue 33: tests/test_warehouse_layout.py)
TABLE_VIEWS = ("settlements",)
# views of one game's own tables (casino stud's pools: tests/test_casino_stud_warehouse.py)
GAME_VIEWS = ("jackpot_days", "jackpot_chain_breaks")
# views of the surveillance tables (tests/test_surveillance_warehouse.py)
SURVEILLANCE_VIEWS = ("advantage_play", "opposite_betting", "shoe_integrity", "wheel_bias", "dice_bias",
                      "dealer_anomalies")
# each table's ruleset versions (issue 44: tests/test_ruleset_versions.py)
RULESET_VIEWS = ("ruleset_history",)
BLACKJACK_DEALING = ("SHOE_COMPOSITION", "CARD_SEQUENCE_MISMATCH", "ROUND_AFTER_CUT", "DEALER_DRAW_RULE",
                     "ILLEGAL_DECISION", "DECISION_MISSING", "AUTO_PLAY_DEVIATION")
BLACKJACK_BETTING = ("STAKE_BELOW_MIN", "STAKE_ABOVE_MAX", "PAIR_WITHOUT_MAIN", "SIDE_BET_ABOVE_SHARE", "LATE_BET",
                     "BET_TYPE_NOT_OFFERED", "INSURANCE_NOT_OFFERED", "INSURANCE_ABOVE_SHARE", "BET_BEHIND_BY_SEATED",
                     "BET_ON_EMPTY_BOX")


@pytest.fixture(scope="module")
def wh():
    return shared_warehouse()


def _read_only(warehouse):
    c = duckdb.connect(str(warehouse.path), read_only=True)
    yield c
    c.close()


@pytest.fixture(scope="module")
def con(wh):
    yield from _read_only(wh)


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
    assert sorted(names) == sorted((*TABLE_VIEWS, *VIEWS, *GAME_VIEWS, *SURVEILLANCE_VIEWS, *RULESET_VIEWS))
    for f, name in zip(files, names, strict=True):
        assert f[3:-4] == name
        text = (VIEWS_DIR / f).read_text()
        assert len(duckdb.connect().extract_statements(expand_games(text))) == 1  # every game's part in
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
    tables = ("round_replays", "blackjack_round_replays", "roulette_round_replays", "sic_bo_round_replays",
              "casino_stud_round_replays", "casino_stud_jackpot_ledger", "settlements", "findings", "quarantine",
              "audit_runs", "theoretical_rtp", "audited_tables", "settlement_rounds", "rulesets", "round_rulesets")
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
    assert set(counts) == {*TABLE_VIEWS, *VIEWS, *GAME_VIEWS, *SURVEILLANCE_VIEWS, *RULESET_VIEWS}
    assert counts["discrepancies"] == 2 and counts["limit_breaches"] == 2 and counts["dealing_violations"] == 1
    assert counts["daily_summary"] == 3 and counts["all_rounds"] == len(wh.data.rounds)
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
    # a row per business date and currency (T1 plays EUR, T2 USD): amounts of two currencies never added
    data = wh.data
    settled = settled_bets(data)
    currency = {t["table_id"]: t["currency"] for t in data.tables}
    planted = {"OVERPAID": (DAY1, "EUR"), "UNDERPAID": (DAY1, "USD"), "STAKE_ABOVE_MAX": (DAY1, "EUR"),
               "LATE_BET": (DAY2, "EUR"), "SCORE_MISMATCH": (DAY1, "USD"), "UNKNOWN_ROUND": (DAY1, "EUR")}
    got = {(r["business_date"], r["currency"]): r
           for r in rows(con, "SELECT * FROM daily_summary ORDER BY business_date, currency")}
    assert list(got) == [(DAY1, "EUR"), (DAY1, "USD"), (DAY2, "EUR")]
    for (day, cur), r in got.items():
        day_rounds = [x for x in data.rounds if x["betting_opened_at"].date() == day and currency[x["table_id"]] == cur]
        day_bets = [b for b in settled if b["business_date"] == day and currency[b["table_id"]] == cur]
        assert {b["currency"] for b in day_bets} == {cur}
        kinds = [k for k, key in planted.items() if key == (day, cur)]
        assert r["game"] == "baccarat"
        assert r["tables"] == len({x["table_id"] for x in day_rounds}) == 1
        assert r["rounds"] == len(day_rounds)
        assert r["cancelled_rounds"] == sum(x["status"] == "cancelled" for x in day_rounds)
        assert r["bets"] == len(day_bets)
        assert r["accounts"] == len({b["account_id"] for b in day_bets})
        assert r["stakes"] == sum(b["stake"] for b in day_bets)
        assert r["paid"] == sum(b["paid"] for b in day_bets)
        assert r["expected"] == sum(b["expected"] for b in day_bets)
        assert r["paid_minus_expected"] == r["paid"] - r["expected"]
        assert r["overpaid"] == sum(b["paid"] - b["expected"] for b in day_bets if b["paid"] > b["expected"])
        assert r["underpaid"] == sum(b["expected"] - b["paid"] for b in day_bets if b["paid"] < b["expected"])
        assert r["findings"] == len(kinds)
        for sev in ("critical", "major", "minor"):
            assert r[f"findings_{sev}"] == sum(SEVERITY[k] == sev for k in kinds), (day, cur, sev)
        assert r["quarantined_rows"] == (1 if (day, cur) == (DAY1, "EUR") else 0)
    assert got[(DAY1, "USD")]["underpaid"] == 300 and got[(DAY2, "EUR")]["cancelled_rounds"] == 1


def test_daily_summary_never_adds_two_currencies(tmp_path):
    # every view's amounts are keyed by currency: here two bets in one table-day, one EUR and one USD
    # (a warehouse loaded before bets in another currency than their table's were quarantined), are two rows
    c = duckdb.connect()
    c.execute("CREATE TABLE audited_tables AS SELECT 'T1' AS table_id, 'baccarat' AS game, 'EUR' AS currency")
    c.execute("CREATE TABLE all_rounds AS SELECT DATE '2026-11-28' AS business_date, 'baccarat' AS game, "
              "'T1' AS table_id, 'settled' AS status")
    c.execute("CREATE TABLE settlements AS SELECT * FROM (VALUES (DATE '2026-11-28', 'T1', 'A1', 'EUR', 1000, 2000, "
              "2000, 0), (DATE '2026-11-28', 'T1', 'A1', 'USD', 500, 0, 0, 0)) AS v(business_date, table_id, "
              "account_id, currency, stake, paid, expected, delta)")
    c.execute("CREATE TABLE findings AS SELECT DATE '2026-11-28' AS business_date, 'major' AS severity, "
              "'T1' AS table_id LIMIT 0")
    c.execute("CREATE TABLE quarantine AS SELECT DATE '2026-11-28' AS business_date, '{}' AS record LIMIT 0")
    c.execute((VIEWS_DIR / "50_daily_summary.sql").read_text())
    got = rows(c, "SELECT currency, stakes, paid, rounds, tables FROM daily_summary ORDER BY currency")
    assert [(r["currency"], r["stakes"], r["paid"]) for r in got] == [("EUR", 1000, 2000), ("USD", 500, 0)]
    assert [r["rounds"] for r in got] == [1, 0]  # the table's round counts under the table's currency


# --- reference tables ----------------------------------------------------------------------------


def test_reference_tables(wh, con):
    from engine.games import game, game_names

    results = [r for g in map(game, game_names()) for rid in g.ruleset_ids() for r in g.rtp(g.load_ruleset(rid))]
    # the key: (ruleset, bet_type, mode, selection), selection '-' where the RTP does not depend on it
    every = {(r.ruleset, r.bet_type, r.mode, r.selection or "-"): r for r in results}
    got = rows(con, "SELECT * FROM theoretical_rtp")
    assert len(got) == len(every) == len(results)
    assert {(r["ruleset"], r["bet_type"], r["mode"], r["selection"]) for r in got} == set(every)
    # each row names its text: the bundled file's, by the sha256 of its bytes (read here, not by the engine)
    import hashlib

    files = {f.stem: hashlib.sha256(f.read_bytes()).hexdigest()
             for f in (ROOT / "engine" / "games").glob("*/rulesets/*.toml")}
    assert all(r["ruleset_sha256"] == files[r["ruleset"]] and r["bundled"] is True for r in got)
    # a bet type has either one row, selection '-', or a row per selection
    kinds: dict[tuple, set[bool]] = defaultdict(set)
    for r in got:
        kinds[(r["ruleset"], r["bet_type"], r["mode"])].add(r["selection"] == "-")
    assert all(len(k) == 1 for k in kinds.values())
    # of these games' bets only sic bo's TOTAL is priced per selection (another game may label a row's
    # circumstances in `selection`: casino stud's JACKPOT, at a jackpot balance)
    these = {rid for name in ("baccarat", "blackjack", "roulette", "sic_bo") for rid in game(name).ruleset_ids()}
    per_selection = {key for key, k in kinds.items() if k == {False} and key[0] in these}
    assert per_selection == {("sic_bo_live", "TOTAL", "-")}
    assert sorted(int(r["selection"]) for r in got if r["bet_type"] == "TOTAL" and r["ruleset"] == "sic_bo_live") == \
        list(range(4, 18))
    for r in got:
        expected = every[(r["ruleset"], r["bet_type"], r["mode"], r["selection"])]
        assert Fraction(r["rtp_exact"]) == expected.rtp and r["rtp"] == float(expected.rtp)
        if expected.outcomes:
            assert 0 < r["return_stddev"] < 60
        else:  # not an enumeration (blackjack's MAIN and BET_BEHIND): no exact standard deviation
            assert r["return_stddev"] is None
    blackjack = {r["bet_type"]: r for r in got if r["ruleset"] == "blackjack_8d_live"}
    assert set(blackjack) == {"MAIN", "PAIR", "INSURANCE", "BET_BEHIND"}
    assert {r["mode"] for r in blackjack.values()} == {"-"}
    assert blackjack["PAIR"]["rtp"] == pytest.approx(1 - 0.040964, abs=1e-6)  # 25/12/6 at 8 decks, as published
    tables = rows(con, "SELECT * FROM audited_tables ORDER BY table_id")
    assert [(t["table_id"], t["game"], t["ruleset"], t["currency"], t["table_max"], t["run_id"]) for t in tables] == [
        (t["table_id"], t["game"], t["ruleset"], t["currency"], t["table_max"], wh.run_id) for t in TABLES]


def test_the_reference_key_is_enforced(wh, tmp_path):
    """theoretical_rtp holds one row per (ruleset_sha256, bet_type, mode, selection): a second is refused; another
    text of the same ruleset id (another sha256) is another row."""
    copy = tmp_path / "audit.duckdb"
    shutil.copyfile(wh.path, copy)
    c = duckdb.connect(str(copy))
    insert = ("INSERT INTO theoretical_rtp (ruleset, bet_type, mode, rtp, rtp_exact, selection, ruleset_sha256, "
              "bundled) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    try:
        row = c.execute("SELECT ruleset, bet_type, mode, rtp, rtp_exact, selection, ruleset_sha256, bundled "
                        "FROM theoretical_rtp WHERE bet_type = 'TOTAL' AND selection = '4'").fetchone()
        assert row[6] is not None and row[7] is True
        with pytest.raises(duckdb.ConstraintException):
            c.execute(insert, list(row))
        with pytest.raises(duckdb.ConstraintException):  # (the key is the text's, not whether it is bundled)
            c.execute(insert, [*row[:7], False])
        # the same bet type and mode with another selection is another row
        c.execute(insert, [*row[:5], "x", *row[6:]])
        # the same ruleset id, bet type, mode and selection of another text is another row
        c.execute(insert, [*row[:6], "0" * 64, False])
        with pytest.raises(duckdb.ConstraintException):  # selection is never null ('-': does not depend on it)
            c.execute(insert, ["r", "b", "-", 1, "1/1", None, "1" * 64, False])
        with pytest.raises(duckdb.ConstraintException):  # nor is bundled
            c.execute(insert, ["r", "b", "-", 1, "1/1", "-", "1" * 64, None])
    finally:
        c.close()


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


# --- across games: a baccarat and a blackjack table in one run -----------------------------------


@pytest.fixture(scope="module")
def mixed():
    return mixed_warehouse()


@pytest.fixture(scope="module")
def mcon(mixed):
    yield from _read_only(mixed)


def _comparable(r: dict, folder: Path) -> tuple:
    """A view row without the new game column and the run id, its source file relative to the input."""
    # floats to 12 significant digits: DuckDB sums in parallel, so an aggregate's last bit can differ run to run
    out = {k: float(f"{v:.12g}") if isinstance(v, float) else v for k, v in r.items() if k not in ("game", "run_id")}
    if out.get("source_file"):
        out["source_file"] = str(Path(out["source_file"]).relative_to(folder))
    return tuple(sorted(out.items(), key=lambda kv: kv[0]))


def test_baccarat_rows_are_unchanged_beside_a_blackjack_table(wh, con, mixed, mcon):
    """Every view gives the baccarat rows of the mixed run exactly as the baccarat-only run gives them
    (every column but the new game and the run id), and game = 'baccarat' on each of them."""
    for view in VIEWS:
        alone = rows(con, f"SELECT * FROM {view}")
        beside = rows(mcon, f"SELECT * FROM {view} WHERE game = 'baccarat'")
        assert alone and {r["game"] for r in alone} == {"baccarat"}, view
        assert (sorted(repr(_comparable(r, wh.folder)) for r in alone)
                == sorted(repr(_comparable(r, mixed.folder)) for r in beside)), view
        other = rows(mcon, f"SELECT DISTINCT game FROM {view} WHERE game IS DISTINCT FROM 'baccarat'")
        assert other == [{"game": "blackjack"}], view


def test_blackjack_rows_carry_their_game(mcon):
    for view in VIEWS:
        got = rows(mcon, f"SELECT table_id, game FROM {view} WHERE table_id = ?", [BLACKJACK_TABLE]) \
            if view != "daily_summary" else rows(mcon, "SELECT game FROM daily_summary WHERE game = 'blackjack'")
        assert got and {r["game"] for r in got} == {"blackjack"}, view
    assert rows(mcon, "SELECT DISTINCT game FROM discrepancies WHERE table_id <> ?", [BLACKJACK_TABLE]) == [
        {"game": "baccarat"}]


def test_all_rounds_is_every_games_rounds(mixed, mcon):
    counts = {r["game"]: r["n"] for r in rows(mcon, "SELECT game, count(*) AS n FROM all_rounds GROUP BY game")}
    assert counts == {"baccarat": len(mixed.data.rounds),
                      "blackjack": mcon.execute("SELECT count(*) FROM blackjack_round_replays").fetchone()[0]}
    bj = mcon.execute("SELECT round_id, boxes, recorded_box_cards, recorded_dealer_cards, recorded_dealer_total, "
                      "expected_box_cards, expected_dealer_cards FROM blackjack_round_replays ORDER BY round_id "
                      "LIMIT 1").fetchone()
    r = rows(mcon, "SELECT * FROM all_rounds WHERE round_id = ?", [bj[0]])[0]
    boxes = "; ".join(f"box {b}: {' '.join(c)}" for b, c in zip(bj[1], bj[2], strict=True))
    assert r["recorded_round"] == f"{boxes}; dealer: {' '.join(bj[3])} ({bj[4]})"
    expected = "; ".join(f"box {b}: {' '.join(c)}" for b, c in zip(bj[1], bj[5], strict=True))
    assert r["expected_round"] == f"{expected}; dealer: {' '.join(bj[6])}"
    assert r["decisions"].startswith("card 1 of the shoe: ") and r["game"] == "blackjack"
    rnd = next(x for x in mixed.data.rounds if x["round_id"] == "S1-R1")
    r = rows(mcon, "SELECT * FROM all_rounds WHERE round_id = 'S1-R1'")[0]
    assert r["recorded_round"] == (f"P {' '.join(rnd['player_cards'])} ({rnd['player_score']}) "
                                   f"B {' '.join(rnd['banker_cards'])} ({rnd['banker_score']}) {rnd['outcome']}")


def _blackjack_findings(mcon, kinds) -> list[dict]:
    return rows(mcon, f"SELECT * FROM findings WHERE table_id = ? AND kind IN ({', '.join('?' * len(kinds))})",
                [BLACKJACK_TABLE, *kinds])


def test_blackjack_discrepancies_and_limit_breaches(mixed, mcon):
    planted = {f["kind"] for f in mixed.blackjack.faults}
    settled = rows(mcon, "SELECT bet_id, delta FROM settlements WHERE table_id = ? AND delta <> 0", [BLACKJACK_TABLE])
    got = rows(mcon, "SELECT * FROM discrepancies WHERE game = 'blackjack'")
    assert sorted((r["bet_id"], r["delta"]) for r in got) == sorted((s["bet_id"], s["delta"]) for s in settled)
    assert {r["kind"] for r in got} == {"OVERPAID", "UNDERPAID"} <= planted
    assert all(r["mode"] is None and r["table_id"] == BLACKJACK_TABLE for r in got)
    breaches = rows(mcon, "SELECT * FROM limit_breaches WHERE game = 'blackjack'")
    findings = _blackjack_findings(mcon, BLACKJACK_BETTING)
    assert sorted((r["kind"], r["bet_id"]) for r in breaches) == sorted((f["kind"], f["bet_id"]) for f in findings)
    assert {"STAKE_ABOVE_MAX", "INSURANCE_NOT_OFFERED", "BET_BEHIND_BY_SEATED"} <= {r["kind"] for r in breaches}
    assert all(r["stake"] is not None and r["bet_type"] in ("MAIN", "PAIR", "INSURANCE", "BET_BEHIND")
               for r in breaches)


def test_blackjack_dealing_violations_show_the_round(mcon):
    got = rows(mcon, "SELECT * FROM dealing_violations WHERE game = 'blackjack'")
    findings = _blackjack_findings(mcon, BLACKJACK_DEALING)
    assert sorted((r["kind"], r["round_id"] or "") for r in got) == sorted((f["kind"], f["round_id"] or "")
                                                                           for f in findings)
    kinds = {r["kind"] for r in got}
    assert {"SHOE_COMPOSITION", "CARD_SEQUENCE_MISMATCH", "DEALER_DRAW_RULE", "ILLEGAL_DECISION",
            "AUTO_PLAY_DEVIATION"} <= kinds
    for r in got:
        assert r["expected_player_cards"] is None and r["recorded_score"] is None and r["recorded_outcome"] is None
        if r["round_id"] is None:
            assert r["kind"] == "SHOE_COMPOSITION" and r["recorded_round"] is None
            continue
        assert r["round_no"] >= 1 and r["round_status"] in ("settled", "cancelled")
        assert "dealer: " in r["recorded_round"] and r["decisions"]
        assert r["severity"] == SEVERITY[r["kind"]]
    dealer = next(r for r in got if r["kind"] == "DEALER_DRAW_RULE")
    assert "dealer " in dealer["decisions"] and "rule:" in dealer["decisions"]
    illegal = next(r for r in got if r["kind"] == "ILLEGAL_DECISION")
    assert "ILLEGAL" in illegal["decisions"]


def test_blackjack_rtp_by_table_and_bet_type(mcon):
    from engine.games.blackjack.rtp import blackjack_rtp
    from engine.games.blackjack.rules import load_blackjack_rules

    theory = {r.bet_type: r.rtp for r in blackjack_rtp(load_blackjack_rules("blackjack_8d_live"))}
    got = {r["bet_type"]: r for r in rows(mcon, "SELECT * FROM rtp_by_table_and_bet_type WHERE game = 'blackjack'")}
    assert set(got) == {"MAIN", "PAIR", "INSURANCE", "BET_BEHIND"} == set(theory)
    for bet_type, r in got.items():
        bets = mcon.execute("SELECT count(*), sum(stake), sum(paid) FROM settlements WHERE table_id = ? "
                            "AND bet_type = ? AND round_status = 'settled' AND stake > 0",
                            [BLACKJACK_TABLE, bet_type]).fetchone()
        assert (r["bets"], r["stakes"], r["paid"]) == bets
        assert r["mode"] is None and r["ruleset"] == "blackjack_8d_live" and r["table_id"] == BLACKJACK_TABLE
        assert Fraction(r["theoretical_rtp_exact"]) == theory[bet_type]
        assert r["rtp_band_half_width"] > 0 and r["within_band"] is not None
    assert got["MAIN"]["theoretical_return_stddev"] is None  # the band uses the sample standard deviation
    assert got["PAIR"]["theoretical_return_stddev"] > 0


def test_daily_summary_has_a_row_per_game(mixed, mcon):
    got = {(r["business_date"], r["game"], r["currency"]): r for r in rows(mcon, "SELECT * FROM daily_summary")}
    assert set(got) == {(DAY1, "baccarat", "EUR"), (DAY1, "baccarat", "USD"), (DAY2, "baccarat", "EUR"),
                        (DAY1, "blackjack", "EUR")}
    bj = got[(DAY1, "blackjack", "EUR")]
    bets = mcon.execute("SELECT count(*), sum(stake), sum(paid), count(DISTINCT account_id) FROM settlements "
                        "WHERE table_id = ?", [BLACKJACK_TABLE]).fetchone()
    assert (bj["bets"], bj["stakes"], bj["paid"], bj["accounts"]) == bets
    assert bj["rounds"] == mcon.execute("SELECT count(*) FROM blackjack_round_replays").fetchone()[0] > 0
    assert bj["tables"] == 1 and bj["currency"] == "EUR"
    findings = _blackjack_findings(mcon, tuple(SEVERITY))
    assert bj["findings"] == len(findings) > 0
    for sev in ("critical", "major", "minor"):
        assert bj[f"findings_{sev}"] == sum(f["severity"] == sev for f in findings)


def test_views_on_a_blackjack_only_warehouse():
    alone = blackjack_warehouse()
    c = duckdb.connect(str(alone.path), read_only=True)
    try:
        for view in VIEWS:
            games = {r["game"] for r in rows(c, f"SELECT DISTINCT game FROM {view}")}
            assert games == {"blackjack"}, view
        assert c.execute("SELECT count(*) FROM round_replays").fetchone() == (0,)
        assert c.execute("SELECT count(*) FROM all_rounds").fetchone()[0] == c.execute(
            "SELECT count(*) FROM blackjack_round_replays").fetchone()[0] > 0
    finally:
        c.close()


# --- roulette and sic bo: a recorded table of each, sic bo's TOTAL priced per selection ------------------

@pytest.fixture(scope="module")
def outcomes():
    return outcome_warehouse()


@pytest.fixture(scope="module")
def ocon(outcomes):
    yield from _read_only(outcomes)


def test_theoretical_rtp_of_each_sic_bo_total_from_the_rules(ocon):
    got = {r["selection"]: r for r in rows(ocon, "SELECT * FROM theoretical_rtp WHERE ruleset = 'sic_bo_live' "
                                                 "AND bet_type = 'TOTAL'")}
    assert set(got) == {str(t) for t in SIC_BO_TOTAL_PAYS}
    for total in SIC_BO_TOTAL_PAYS:
        r = got[str(total)]
        assert Fraction(r["rtp_exact"]) == total_rtp(total) and r["rtp"] == float(total_rtp(total))
        assert r["return_stddev"] == pytest.approx(total_stddev(total), rel=1e-12) and r["mode"] == "-"
    assert got["4"]["rtp_exact"] == "61/72" and got["9"]["rtp_exact"] == "175/216"  # 3/216 * 61; 25/216 * 7


def test_sic_bo_total_theoretical_rtp_is_the_stake_weighted_mean_of_its_selections(outcomes, ocon):
    bets = settled_input_bets(outcomes, "sic_bo", "TOTAL")
    view = rows(ocon, "SELECT * FROM rtp_by_table_and_bet_type WHERE table_id = ? AND bet_type = 'TOTAL'",
                [SIC_BO_TABLE])
    assert len(view) == 1
    r = view[0]
    assert (r["bets"], r["stakes"], r["paid"]) == (len(bets), sum(b["stake"] for b in bets),
                                                  sum(b["paid"] for b in bets))
    # the bet read with two selections has none; a total outside 4-17 (SELECTION_INVALID) is not priced
    selections: dict[tuple, set] = defaultdict(set)
    for b in bets:
        selections[(b["round_id"], b["bet_id"])].add(b["selection"])
    assert selections[outcomes.two_selections] and len(selections[outcomes.two_selections]) == 2
    priced = [b for b in bets if len(selections[(b["round_id"], b["bet_id"])]) == 1
              and b["selection"] in {str(t) for t in SIC_BO_TOTAL_PAYS}]
    unpriced = [b for b in bets if b not in priced]
    assert {b["selection"] for b in unpriced} & {"3", "18"}, "the fixture plants an illegal total"
    assert len(unpriced) >= 3 and len({b["selection"] for b in priced}) == 14
    stakes = sum(b["stake"] for b in bets)
    theory = sum(b["stake"] * total_rtp(int(b["selection"])) for b in priced) / sum(b["stake"] for b in priced)
    assert r["theoretical_rtp"] == pytest.approx(float(theory), rel=1e-12)
    assert theory != sum(b["stake"] * total_rtp(int(b["selection"])) for b in priced) / stakes  # (unpriced left out)
    assert r["theoretical_rtp_exact"] is None and r["theoretical_return_stddev"] is None
    # the band: each bet's own s (unpriced: the sample s of the type's bets), summed per round
    sample = statistics.stdev(b["paid"] / b["stake"] for b in bets)
    assert r["return_stddev"] == pytest.approx(sample, rel=1e-9)
    per_round: dict[str, float] = defaultdict(float)
    for b in bets:
        per_round[b["round_id"]] += b["stake"] * (total_stddev(int(b["selection"])) if b in priced else sample)
    half = 1.96 * math.sqrt(sum(x * x for x in per_round.values())) / stakes
    assert r["rtp_band_half_width"] == pytest.approx(half, rel=1e-9)
    assert (r["band_low"], r["band_high"]) == (pytest.approx(float(theory) - half, rel=1e-9),
                                               pytest.approx(float(theory) + half, rel=1e-9))
    assert r["within_band"] == (float(theory) - half <= r["observed_rtp"] <= float(theory) + half)
    # conservative: wider than the exact 95% band of this mix (the dice's joint law: two totals never both win;
    # an unpriced bet is voided whatever the dice, a constant), since some rolls have bets on several totals
    variance = Fraction(0)
    for round_id in per_round:
        mine = [b for b in priced if b["round_id"] == round_id]
        credits = [sum(b["stake"] * total_credit(int(b["selection"]), roll) for b in mine) for roll in SIC_BO_ROLLS]
        mean = Fraction(sum(credits), len(credits))
        variance += Fraction(sum(c * c for c in credits), len(credits)) - mean * mean
    assert any(len({b["selection"] for b in priced if b["round_id"] == x}) > 1 for x in per_round)
    assert 1.96 * math.sqrt(variance) / stakes < half


def test_roulette_rows_are_single_zero_by_the_rules(outcomes, ocon):
    """Every roulette bet returns 36/37 (RULES.md), with s from what it covers; the band is the view's one-s
    formula, each round's stake of the type taken together."""
    got = {r["bet_type"]: r for r in rows(ocon, "SELECT * FROM rtp_by_table_and_bet_type WHERE table_id = ?",
                                          [ROULETTE_TABLE])}
    bets = settled_input_bets(outcomes, "roulette")
    assert set(got) == {b["bet_type"] for b in bets} >= set(ROULETTE_COVERS)
    for code, covers in ROULETTE_COVERS.items():
        r, mine = got[code], [b for b in bets if b["bet_type"] == code]
        stakes = sum(b["stake"] for b in mine)
        assert (r["bets"], r["stakes"], r["paid"]) == (len(mine), stakes, sum(b["paid"] for b in mine))
        assert Fraction(r["theoretical_rtp_exact"]) == Fraction(36, 37) and r["theoretical_rtp"] == 36 / 37
        s = math.sqrt(Fraction(covers, 37) * Fraction(36, covers) ** 2 - Fraction(36, 37) ** 2)
        assert r["theoretical_return_stddev"] == pytest.approx(s, rel=1e-12), code
        per_round: dict[str, int] = defaultdict(int)
        for b in mine:
            per_round[b["round_id"]] += b["stake"]
        half = 1.96 * s * math.sqrt(sum(w * w for w in per_round.values())) / stakes
        assert r["rtp_band_half_width"] == pytest.approx(half, rel=1e-9), code
    # a sic bo code bet at the roulette table (BET_TYPE_NOT_OFFERED): no theoretical RTP, not a mix either
    foreign = [r for code, r in got.items() if code not in ROULETTE_COVERS]
    assert foreign and all(r["theoretical_rtp"] is None and r["band_low"] is None for r in foreign)


def test_rows_other_than_the_mix_are_as_without_per_selection_rtps(outcomes, tmp_path):
    """Without theoretical_rtp's rows per selection (the view before them), every row of the view is the
    same but sic bo's TOTAL, whose figures of the mix alone differ."""
    copy = tmp_path / "audit.duckdb"
    shutil.copyfile(outcomes.path, copy)
    c = duckdb.connect(str(copy))
    try:
        with_mix = {(r["table_id"], r["bet_type"]): r for r in rows(c, "SELECT * FROM rtp_by_table_and_bet_type")}
        c.execute("DELETE FROM theoretical_rtp WHERE selection <> '-'")
        before = {(r["table_id"], r["bet_type"]): r for r in rows(c, "SELECT * FROM rtp_by_table_and_bet_type")}
    finally:
        c.close()
    assert set(with_mix) == set(before) and len(before) > 30
    mix_columns = {"theoretical_rtp", "rtp_band_half_width", "band_low", "band_high", "within_band"}

    def same(r: dict, leave_out: set[str]) -> dict:  # floats to 12 significant digits (DuckDB's parallel sums)
        return {k: float(f"{v:.12g}") if isinstance(v, float) else v for k, v in r.items() if k not in leave_out}

    for key, r in before.items():
        if key == (SIC_BO_TABLE, "TOTAL"):
            assert r["theoretical_rtp"] is None and with_mix[key]["theoretical_rtp"] is not None
            assert same(r, mix_columns) == same(with_mix[key], mix_columns)
        else:
            assert same(r, set()) == same(with_mix[key], set()), key


def _to_12_digits(got: list[dict]) -> list[dict]:
    """Rows with their floats to 12 significant digits (DuckDB's parallel sums differ in the last bits)."""
    return [{k: float(f"{v:.12g}") if isinstance(v, float) else v for k, v in r.items()} for r in got]


def test_the_view_prices_each_round_by_its_own_texts_rows(outcomes, tmp_path):
    """theoretical_rtp holding a second text of sic_bo_live (another sha256, not bundled, every RTP halved):
    the view is unchanged while no round names it; once the sic bo table's rounds name it, their every bet
    type, TOTAL's mix of selections among them, is priced at half (exact: each row's rtp is a fraction)."""
    copy = tmp_path / "audit.duckdb"
    shutil.copyfile(outcomes.path, copy)
    other = "f" * 64
    c = duckdb.connect(str(copy))
    try:
        view = "SELECT * FROM rtp_by_table_and_bet_type WHERE table_id = ? ORDER BY bet_type"
        before = rows(c, view, [SIC_BO_TABLE])
        c.execute("INSERT INTO theoretical_rtp SELECT ruleset, bet_type, mode, rtp / 2, rtp_exact || '*1/2', "
                  "return_stddev / 2, selection, ?, false FROM theoretical_rtp WHERE ruleset = 'sic_bo_live'", [other])
        assert _to_12_digits(rows(c, view, [SIC_BO_TABLE])) == _to_12_digits(before)
        c.execute("UPDATE settlement_rounds SET ruleset_sha256 = ? WHERE table_id = ?", [other, SIC_BO_TABLE])
        after = rows(c, view, [SIC_BO_TABLE])
    finally:
        c.close()
    assert [r["bet_type"] for r in after] == [r["bet_type"] for r in before] and "TOTAL" in [r["bet_type"] for r
                                                                                              in before]
    for b, a in zip(before, after, strict=True):
        assert a["ruleset_sha256"] == other and a["bets"] == b["bets"]
        if b["theoretical_rtp"] is None:
            assert a["theoretical_rtp"] is None
            continue
        assert a["theoretical_rtp"] == pytest.approx(b["theoretical_rtp"] / 2, rel=1e-12), b["bet_type"]
        if b["theoretical_rtp_exact"] is not None:
            assert a["theoretical_rtp_exact"] == b["theoretical_rtp_exact"] + "*1/2"


def test_rtp_outside_band_lists_the_outcome_rows_outside_their_band(ocon):
    """The saved query rtp_outside_band on roulette and sic bo: the view's rows with within_band false, the
    TOTAL mix judged like any other row (a null band, e.g. a bet type not offered, is never listed)."""
    sql = (ROOT / "audits" / "queries" / "rtp_outside_band.sql").read_text()
    listed = rows(ocon, sql)
    view = rows(ocon, "SELECT * FROM rtp_by_table_and_bet_type")
    assert sorted((r["table_id"], r["bet_type"]) for r in listed) == sorted(
        (r["table_id"], r["bet_type"]) for r in view if r["within_band"] is False)
    total = next(r for r in view if (r["table_id"], r["bet_type"]) == (SIC_BO_TABLE, "TOTAL"))
    assert total["within_band"] is not None and any(r["within_band"] is None for r in view)
    gaps = [abs(r["observed_rtp"] - r["theoretical_rtp"]) for r in listed]
    assert gaps == sorted(gaps, reverse=True)
