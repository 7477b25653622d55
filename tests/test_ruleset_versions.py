"""Ruleset versions over time (issue 44): the optional input table `table_rulesets`, each round settled under
the ruleset in force when its betting closed.

Hand-worked on documents 000 and 001, whose paytables differ only where the Banker wins with a 6 on two cards
after the Player drew a third: LUCKY_SIX pays 12:1 under 000 (baccarat_8d_extended: by the Banker's two cards)
and 20:1 under 001 (baccarat_8d_standard: someone drew). A stake of 100 credits back 1,300 or 2,100. Both
rulesets burn and cut the shoe alike, so the shoe that straddles the change replays clean under either."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipelines.audit import run
from pitboss.cli import app
from schemas.contract import schema
from tests import datasets

OLD, NEW = "baccarat_8d_extended", "baccarat_8d_standard"


@pytest.fixture(autouse=True)
def _bundled_files_alone():
    """No test leaves the texts it gave a run in force for the next (engine.ruleset_file.use_texts)."""
    yield
    from engine.ruleset_file import use_texts

    use_texts({})
# S1's rounds where the Banker wins with a 6 on two cards and the Player drew (found in datasets.build()):
BEFORE, AT, AFTER = "S1-R12", "S1-R28", "S1-R43"
CREDIT = {OLD: 1300, NEW: 2100}  # of a LUCKY_SIX stake of 100 on such a round


def _day(change_at_offset: dt.timedelta | None, paid: dict[str, int], **change) -> dict[str, list[dict]]:
    """The honest day of tests/datasets.py (table T1 under OLD) with a LUCKY_SIX bet of 100 on BEFORE, AT and
    AFTER paid as `paid` says, and T1 changing to NEW at AT's betting_closed_at + `change_at_offset`."""
    data = datasets.build()
    rounds = {r["round_id"]: r for r in data["rounds"]}
    for rid in (BEFORE, AT, AFTER):
        r = rounds[rid]
        assert (r["outcome"], r["banker_score"], len(r["banker_cards"]), len(r["player_cards"])) == ("BANKER", 6, 2, 3)
        data["bets"].append(dict(bet_id=f"L6-{rid}", round_id=rid, table_id="T1", account_id="A9",
                                 placed_at=r["betting_opened_at"], bet_type="LUCKY_SIX", mode="commission",
                                 stake=100, currency="EUR", paid=paid[rid], settled_at=r["settled_at"], seat=None,
                                 channel=None))
    if change_at_offset is not None:
        data["table_rulesets"] = [dict(table_id="T1", ruleset=NEW, version="paytable 2026-11",
                                       effective_from=rounds[AT]["betting_closed_at"] + change_at_offset, **change)]
    return data


def _audit(data: dict, tmp: Path) -> tuple[dict, duckdb.DuckDBPyConnection]:
    folder = datasets.write(data, tmp / "in")
    record = run(["--input", str(folder), "--output", str(tmp / "out")])
    return record, duckdb.connect()


def _lucky_six(tmp: Path) -> dict[str, int]:
    con = duckdb.connect()
    rows = con.execute("SELECT round_id, expected FROM read_parquet(?) WHERE bet_type = 'LUCKY_SIX'",
                       [str(tmp / "out" / "settlements" / "*.parquet")]).fetchall()
    return dict(rows)


def _findings(tmp: Path) -> list[tuple]:
    return duckdb.connect().execute("SELECT kind, bet_id FROM read_parquet(?) ORDER BY ALL",
                                    [str(tmp / "out" / "findings" / "*.parquet")]).fetchall()


HONEST = {BEFORE: CREDIT[OLD], AT: CREDIT[NEW], AFTER: CREDIT[NEW]}


def test_a_change_at_betting_closed_applies_to_that_round(tmp_path):
    """The change exactly at AT's betting_closed_at: AT's bet was accepted under NEW (20:1), BEFORE's in the
    same shoe under OLD (12:1); the shoe replays clean under both, and nothing else is found."""
    _audit(_day(dt.timedelta(0), HONEST), tmp_path)
    assert _lucky_six(tmp_path) == {BEFORE: 1300, AT: 2100, AFTER: 2100}
    assert _findings(tmp_path) == []


def test_a_change_a_microsecond_after_betting_closed_does_not(tmp_path):
    """One microsecond later, AT's round closed under OLD: its bet paid 2,100 is overpaid by 800 (flipping the
    boundary's >= to > fails the test above, < to <= this one)."""
    _audit(_day(dt.timedelta(microseconds=1), HONEST), tmp_path)
    assert _lucky_six(tmp_path) == {BEFORE: 1300, AT: 1300, AFTER: 2100}
    assert _findings(tmp_path) == [("OVERPAID", f"L6-{AT}")]


def test_a_change_a_microsecond_before_betting_closed_applies(tmp_path):
    _audit(_day(-dt.timedelta(microseconds=1), HONEST), tmp_path)
    assert _lucky_six(tmp_path) == {BEFORE: 1300, AT: 2100, AFTER: 2100}


def test_without_the_table_every_round_is_under_tables_ruleset(tmp_path):
    _audit(_day(None, HONEST), tmp_path)
    assert _lucky_six(tmp_path) == {BEFORE: 1300, AT: 1300, AFTER: 1300}
    assert _findings(tmp_path) == [("OVERPAID", f"L6-{AT}"), ("OVERPAID", f"L6-{AFTER}")]


def _sha_of_outputs(out: Path) -> dict[str, str]:
    import hashlib

    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*.parquet"))}


def test_a_change_after_the_night_leaves_the_outputs_byte_identical(tmp_path):
    """Every round closed before the change: the table is audited once, under tables.ruleset, as without the
    table; and each bet is settled once (read = settled + quarantined) in the straddled night too."""
    paid = {BEFORE: 1300, AT: 1300, AFTER: 1300}
    folder = datasets.write(_day(None, paid), tmp_path / "in")
    run(["--input", str(folder), "--output", str(tmp_path / "none")])
    datasets.write(_day(dt.timedelta(days=2), paid), folder)  # (the same input paths: settlements name them)
    run(["--input", str(folder), "--output", str(tmp_path / "later")])
    none, later = _sha_of_outputs(tmp_path / "none"), _sha_of_outputs(tmp_path / "later")
    # (but for round_rulesets: the rounds of a table that table_rulesets names, each under tables.ruleset)
    assert {k: v for k, v in later.items() if not k.startswith("round_rulesets/")} == {
        k: v for k, v in none.items() if not k.startswith("round_rulesets/")}
    con = duckdb.connect()
    assert con.execute("SELECT DISTINCT ruleset, version FROM read_parquet(?)",
                       [str(tmp_path / "later" / "round_rulesets" / "*.parquet")]).fetchall() == [(OLD, None)]
    assert con.execute("SELECT count(*) FROM read_parquet(?)",
                       [str(tmp_path / "none" / "round_rulesets" / "*.parquet")]).fetchone() == (0,)
    _audit(_day(dt.timedelta(0), HONEST), tmp_path / "split")
    con = duckdb.connect()
    settled = con.execute("SELECT count(*), count(DISTINCT bet_id) FROM read_parquet(?)",
                          [str(tmp_path / "split" / "out" / "settlements" / "*.parquet")]).fetchone()
    replays = con.execute("SELECT count(*), count(DISTINCT round_id) FROM read_parquet(?)",
                          [str(tmp_path / "split" / "out" / "round_replays" / "*.parquet")]).fetchone()
    data = _day(None, paid)
    assert settled == (len(data["bets"]), len(data["bets"]))
    assert replays == (len(data["rounds"]), len(data["rounds"]))


def _cli_audit(data: dict, tmp: Path):
    changes = data.pop("table_rulesets")
    folder = datasets.write(data, tmp / "in")
    nullable = pa.schema([f.with_nullable(True) for f in schema("table_rulesets")])  # (as an operator may write it)
    pq.write_table(pa.Table.from_pylist(changes, nullable), folder / "table_rulesets.parquet")
    return CliRunner().invoke(app, ["audit", "--input", str(folder), "--output", str(tmp / "out"), "--no-validate",
                                    "--no-progress"])


@pytest.mark.parametrize("row, column, says", [
    (dict(table_id=None), "table_id", "table_id is null"),
    (dict(ruleset=None), "ruleset", "ruleset is null"),
    (dict(effective_from=None), "effective_from", "effective_from is null"),
    (dict(ruleset="baccarat_9d_unknown"), "ruleset", "table 'T1': unknown ruleset 'baccarat_9d_unknown'"),
    (dict(ruleset="roulette_single_zero_live"), "ruleset",
     "table 'T1' plays baccarat: its ruleset cannot change to 'roulette_single_zero_live' (a roulette ruleset)"),
    (dict(table_id="T9"), "table_id", "table 'T9' is not in tables"),
])
def test_a_bad_row_stops_the_run_naming_file_column_and_row(tmp_path, row, column, says):
    data = _day(dt.timedelta(0), HONEST)
    data["table_rulesets"].insert(0, dict(data["table_rulesets"][0], effective_from=dt.datetime(2026, 11, 28, 9,
                                                                                                  tzinfo=dt.UTC)))
    data["table_rulesets"][1].update(row)
    result = _cli_audit(data, tmp_path)
    assert result.exit_code == 3, result.output
    assert f"table_rulesets.parquet: column '{column}': row 1: {says}" in " ".join(result.output.split())


def test_two_rulesets_from_one_instant_stop_the_run(tmp_path):
    data = _day(dt.timedelta(0), HONEST)
    data["table_rulesets"].append(dict(data["table_rulesets"][0], ruleset=OLD))
    result = _cli_audit(data, tmp_path)
    assert result.exit_code == 3, result.output
    assert ("table_rulesets.parquet: column 'effective_from': row 1: table 'T1' has two rulesets from "
            "2026-11-28T12:28:15+00:00 (rows 0 and 1)") in " ".join(result.output.split())


def _bundled_sha(ruleset_id: str) -> str:
    """sha256 of a bundled ruleset file's bytes, read here (an oracle independent of the engine's reader)."""
    import hashlib

    path = Path(__file__).resolve().parents[1] / "engine" / "games" / "baccarat" / "rulesets" / f"{ruleset_id}.toml"
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """The straddled day (the change at AT's betting close) loaded into a warehouse of the layout before issue 44:
    its settlement_rounds without ruleset_sha256 (and a round of an earlier night in it), no rulesets table."""
    from pipelines.warehouse import load

    tmp = tmp_path_factory.mktemp("warehouse")
    first = run(["--input", str(datasets.write(_day(None, HONEST), tmp / "first")), "--output", str(tmp / "o1")])
    path = tmp / "w.duckdb"
    load(str(path), first.__dict__)
    con = duckdb.connect(str(path))
    con.execute("UPDATE settlement_rounds SET business_date = DATE '2026-11-01' WHERE round_id = 'S0-R01'")
    con.execute("DROP VIEW settlements")
    con.execute("DROP VIEW ruleset_history")
    con.execute("ALTER TABLE settlement_rounds DROP COLUMN ruleset_sha256")
    con.execute("DROP TABLE rulesets")
    con.close()
    record = run(["--input", str(datasets.write(_day(dt.timedelta(0), HONEST), tmp / "in")), "--output",
                  str(tmp / "out")])
    load(str(path), record.__dict__)
    return str(path)


def _read(path: str, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(path, read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


# (docs/warehouse.md: a bet beside the text that paid it)
BET_RULESETS = "SELECT bet_id, ruleset_sha256 FROM settlements "


def test_the_warehouse_keeps_each_text_once_and_each_bet_names_it(warehouse):
    old, new = _bundled_sha(OLD), _bundled_sha(NEW)
    texts = _read(warehouse, "SELECT sha256, ruleset, game, text FROM rulesets ORDER BY ruleset")
    assert [(sha, rid, g) for sha, rid, g, _ in texts] == [(old, OLD, "baccarat"), (new, NEW, "baccarat")]
    assert "LUCKY_SIX" in texts[1][3]
    named = dict(_read(warehouse, BET_RULESETS + "WHERE bet_type = 'LUCKY_SIX' AND business_date = DATE '2026-11-28'"))
    assert named == {f"L6-{BEFORE}": old, f"L6-{AT}": new, f"L6-{AFTER}": new}
    by_shoe = _read(warehouse, "SELECT shoe_id, round_no >= 28, ruleset_sha256, count(*) FROM settlements "
                               "WHERE business_date = DATE '2026-11-28' GROUP BY ALL ORDER BY ALL")
    assert [row[:3] for row in by_shoe] == [("S0", False, old), ("S0", True, old), ("S1", False, old),
                                            ("S1", True, new)]
    # each bet names its own round's text: the one settlement_rounds holds, the earlier night's too (none)
    assert _read(warehouse, "SELECT count(*), count(*) FILTER (WHERE s.ruleset_sha256 IS NOT DISTINCT FROM "
                            "r.ruleset_sha256) FROM settlements s JOIN settlement_rounds r USING (run_id, round_id, "
                            "table_id, shoe_id, business_date)") == _read(
        warehouse, "SELECT count(*), count(*) FROM settlements")
    assert _read(warehouse, "SELECT DISTINCT ruleset_sha256 FROM settlements WHERE business_date = "
                            "DATE '2026-11-01'") == [(None,)]
    # the earlier night's round, loaded before the texts were kept, names none
    assert _read(warehouse, "SELECT DISTINCT ruleset_sha256 FROM settlement_rounds WHERE business_date = "
                            "DATE '2026-11-01'") == [(None,)]


def test_the_ruleset_history_view_lists_each_tables_versions(warehouse):
    rows = _read(warehouse, "SELECT table_id, ruleset, version, ruleset_sha256, first_closed_at FROM "
                            "ruleset_history WHERE first_date = DATE '2026-11-28' ORDER BY first_closed_at")
    closed_at = {r: _read(warehouse, "SELECT DISTINCT betting_closed_at FROM round_rulesets WHERE round_id = ?",
                          [r])[0][0] for r in ("S0-R01", AT)}
    assert rows == [("T1", OLD, None, _bundled_sha(OLD), closed_at["S0-R01"]),
                    ("T1", NEW, "paytable 2026-11", _bundled_sha(NEW), closed_at[AT])]


# --- the operator's own rulesets (--rulesets) and the warehouse's (--rulesets-from-warehouse) ------------------

BACCARAT_RULESETS = Path(__file__).resolve().parents[1] / "engine" / "games" / "baccarat" / "rulesets"
V2 = "baccarat_8d_extended_v2"


def _corrected(text: str, ruleset_id: str = V2) -> str:
    """Document 000 with its two-card Lucky Six cut from 12:1 to 11:1 (a paytable an operator corrects)."""
    old = '{ when = { outcome = "BANKER", banker_score = 6, banker_card_count = 2 }, odds = "12:1" }'
    assert text.count(old) == 1
    return text.replace(old, old.replace('"12:1"', '"11:1"')).replace(f'id = "{OLD}"', f'id = "{ruleset_id}"')


def _own(tmp: Path, files: dict[str, str]) -> Path:
    folder = tmp / "own"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _cli(tmp: Path, data: dict, *options: str):
    folder = datasets.write(data, tmp / "in")
    return CliRunner().invoke(app, ["audit", "--input", str(folder), "--output", str(tmp / "out"), "--no-validate",
                                    "--no-progress", *options])


def test_an_operators_ruleset_settles_the_rounds_after_its_change(tmp_path):
    """T1 moves to the operator's V2 (two-card Lucky Six 11:1) at AT's betting close: AT's and AFTER's bets paid
    1,200 are right, BEFORE's 1,300 under the bundled 000; the warehouse keeps V2's text as the file holds it."""
    v2 = _corrected((BACCARAT_RULESETS / f"{OLD}.toml").read_text(encoding="utf-8"))
    own = _own(tmp_path, {f"{V2}.toml": v2})
    data = _day(dt.timedelta(0), {BEFORE: 1300, AT: 1200, AFTER: 1200}, )
    data["table_rulesets"][0]["ruleset"] = V2
    result = _cli(tmp_path, data, "--rulesets", str(own), "--warehouse", str(tmp_path / "w.duckdb"))
    assert result.exit_code == 0, result.output
    assert _lucky_six(tmp_path) == {BEFORE: 1300, AT: 1200, AFTER: 1200}
    assert _findings(tmp_path) == []
    import hashlib

    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    sha = hashlib.sha256((own / f"{V2}.toml").read_bytes()).hexdigest()
    assert con.execute("SELECT sha256, text FROM rulesets WHERE ruleset = ?", [V2]).fetchall() == [(sha, v2)]
    # V2 priced from its text (no bundled file has its id): LUCKY_SIX 12 p2 + 21 p3 (tests/baccarat_tableau.py),
    # in theoretical_rtp and in the view's row of the rounds after the change
    from fractions import Fraction

    from tests.baccarat_tableau import banker_six_chances

    p2, p3 = banker_six_chances(8)
    assert {(sha_, bundled, Fraction(exact)) for sha_, bundled, exact in con.execute(
        "SELECT ruleset_sha256, bundled, rtp_exact FROM theoretical_rtp WHERE ruleset = ? AND bet_type = 'LUCKY_SIX' "
        "AND mode = 'commission'", [V2]).fetchall()} == {(sha, False, 12 * p2 + 21 * p3)}
    assert con.execute("SELECT ruleset, bets, theoretical_rtp_exact FROM rtp_by_table_and_bet_type WHERE table_id = "
                       "'T1' AND bet_type = 'LUCKY_SIX' AND ruleset_sha256 = ?", [sha]).fetchall() == [
        (V2, 2, str(12 * p2 + 21 * p3))]


@pytest.mark.parametrize("name, text, says", [
    (f"{V2}.toml", lambda t: _corrected(t).replace("[shoe]", "[shoe]\nburns = 3"),
     f"{V2}.toml: field 'shoe.burns': unknown key"),
    (f"{V2}.toml", lambda t: _corrected(t).replace('card_count = 2 }, odds = "11:1"', 'card_count = 2 }, odds = "11"'),
     f"{V2}.toml: field 'bets.LUCKY_SIX.pays[0].odds': odds '11' is not of the form"),
    ("baccarat_fixed.toml", lambda t: _corrected(t), f"baccarat_fixed.toml: field 'id': says '{V2}', file name says "
                                                     "'baccarat_fixed'"),
    (f"{OLD}.toml", lambda t: _corrected(t, OLD), f"{OLD}.toml: ruleset id '{OLD}' is a bundled ruleset with "
                                                  "another text"),
    ("sic_bo_live.toml", lambda t: _corrected(t, "sic_bo_live"), "sic_bo_live.toml: field 'id': 'sic_bo_live' is a "
                                                                 "bundled sic_bo ruleset, this file a baccarat one"),
    (f"{V2}.toml", lambda t: _corrected(t).replace('game = "baccarat"', 'game = "bacarat"'),
     f"{V2}.toml: field 'game': 'bacarat' is not a known game"),
])
def test_an_operators_ruleset_is_checked_as_strictly_as_a_bundled_one(tmp_path, name, text, says):
    own = _own(tmp_path, {name: text((BACCARAT_RULESETS / f"{OLD}.toml").read_text(encoding="utf-8"))})
    result = _cli(tmp_path, _day(None, HONEST), "--rulesets", str(own))
    assert result.exit_code == 3, result.output
    assert says in " ".join(result.output.split())


def test_a_bundled_rulesets_own_text_is_accepted_as_it_is(tmp_path):
    own = _own(tmp_path, {f"{OLD}.toml": (BACCARAT_RULESETS / f"{OLD}.toml").read_text(encoding="utf-8")})
    result = _cli(tmp_path, _day(None, HONEST), "--rulesets", str(own))
    assert result.exit_code == 0, result.output


def test_a_night_audited_again_after_a_bundled_file_changed_is_reproduced_byte_for_byte(tmp_path, monkeypatch):
    """The bundled baccarat files are a copy here (never the repo's). The night is audited and loaded; then the
    copy's 000 has its two-card Lucky Six cut to 11:1. Audited again with the warehouse's texts, every output file
    is the first run's byte for byte; audited again with the files as they now are, the bets that 12:1 paid right
    are overpaid."""
    import hashlib
    import shutil

    import engine.ruleset_file as ruleset_file

    copy = tmp_path / "bundled"
    shutil.copytree(BACCARAT_RULESETS, copy)
    shipped = ruleset_file.shipped_folder
    monkeypatch.setattr(ruleset_file, "shipped_folder",
                        lambda package: copy if package == "engine.games.baccarat.rulesets" else shipped(package))
    data = _day(None, {BEFORE: 1300, AT: 1300, AFTER: 1300})
    folder = datasets.write(data, tmp_path / "in")
    warehouse = str(tmp_path / "w.duckdb")

    def audit(out: str, *options: str):
        result = CliRunner().invoke(app, ["audit", "--input", str(folder), "--output", str(tmp_path / out),
                                          "--warehouse", warehouse, "--no-validate", "--no-progress", *options])
        assert result.exit_code == 0, result.output
        return _sha_of_outputs(tmp_path / out)

    first = audit("first")
    path = copy / f"{OLD}.toml"
    path.write_text(_corrected(path.read_text(encoding="utf-8"), OLD), encoding="utf-8")
    again = audit("again", "--rulesets-from-warehouse")
    assert again == first
    now = audit("now")
    assert now != first
    findings = duckdb.connect().execute("SELECT kind, bet_id FROM read_parquet(?) ORDER BY ALL",
                                        [str(tmp_path / "now" / "findings" / "*.parquet")]).fetchall()
    assert findings == [("OVERPAID", f"L6-{r}") for r in (BEFORE, AT, AFTER)]
    # the warehouse keeps both texts of the id, and names each night's rounds' own
    con = duckdb.connect(warehouse, read_only=True)
    kept = sorted(sha for (sha,) in con.execute("SELECT sha256 FROM rulesets WHERE ruleset = ?", [OLD]).fetchall())
    assert kept == sorted([_bundled_sha(OLD), hashlib.sha256(path.read_bytes()).hexdigest()])


# --- rtp of a kept text, replay and report naming the version ----------------------------------------------------


def test_rtp_of_a_kept_text_is_that_texts(tmp_path):
    """A warehouse that kept a corrected 000 (two-card Lucky Six 11:1): its LUCKY_SIX RTP is the bundled one less
    the probability of the two-card Banker six that the unit it no longer pays (credit 13 -> 12)."""
    import hashlib
    import json

    text = _corrected((BACCARAT_RULESETS / f"{OLD}.toml").read_text(encoding="utf-8"), OLD)
    sha = hashlib.sha256(text.encode()).hexdigest()
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE rulesets (sha256 VARCHAR, ruleset VARCHAR, game VARCHAR, text VARCHAR, "
                "first_run_id VARCHAR)")
    con.execute("INSERT INTO rulesets VALUES (?, ?, 'baccarat', ?, 'R1')", [sha, OLD, text])
    con.close()

    def lucky_six(*options: str) -> dict:
        result = CliRunner().invoke(app, ["rtp", "--ruleset", OLD, "--json", *options])
        assert result.exit_code == 0, result.output
        rows = [r for r in json.loads(result.stdout) if r["bet_type"] == "LUCKY_SIX" and r["mode"] == "commission"]
        return rows[0]

    bundled, kept = lucky_six(), lucky_six("--ruleset-hash", sha[:12], "--warehouse", str(path))
    two_card = [o for o in bundled["outcomes"] if o["credit"] == 13]
    assert len(two_card) == 1
    assert kept["rtp"] == pytest.approx(bundled["rtp"] - two_card[0]["probability"], abs=1e-12)
    missing = CliRunner().invoke(app, ["rtp", "--ruleset-hash", "0" * 12, "--warehouse", str(path)])
    assert missing.exit_code == 2 and "no ruleset text kept has the hash 000000000000" in missing.output


def test_replay_names_the_version_a_round_was_settled_under(warehouse, tmp_path):
    import json

    path = warehouse
    for round_id, ruleset, version, sha in ((BEFORE, OLD, None, _bundled_sha(OLD)),
                                            (AT, NEW, "paytable 2026-11", _bundled_sha(NEW))):
        result = CliRunner().invoke(app, ["replay", round_id, "--warehouse", path, "--format", "json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert (data["ruleset"], data["ruleset_version"], data["ruleset_sha256"]) == (ruleset, version, sha)
    text = CliRunner().invoke(app, ["replay", AT, "--warehouse", path])
    squeezed = "".join(c for c in text.output if not c.isspace() and c != "│")  # (the cell wraps at 80 columns)
    assert f"versionpaytable2026-11,textsha256{_bundled_sha(NEW)}" in squeezed
    # from the input, judged as the audit judged it: under NEW, the Lucky Six paid 2,100 is right
    folder = datasets.write(_day(dt.timedelta(0), HONEST), tmp_path / "in")
    result = CliRunner().invoke(app, ["replay", AT, "--input", str(folder), "--format", "json"])
    data = json.loads(result.stdout)
    assert (data["ruleset"], data["ruleset_sha256"]) == (NEW, _bundled_sha(NEW))
    assert [(b["bet_id"], b["expected"]) for b in data["bets"] if b["bet_type"] == "LUCKY_SIX"] == [(f"L6-{AT}", 2100)]


def test_the_report_lists_the_versions_the_night_used(warehouse, tmp_path):
    path = warehouse
    out = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", "--run", "latest", "--warehouse", path, "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    rows = page.split('id="ruleset-versions-rows">')[1].split("</tbody>")[0]
    assert rows.count("<tr>") == 2
    assert rows.index(_bundled_sha(OLD)[:12]) < rows.index(_bundled_sha(NEW)[:12]) and "paytable 2026-11" in rows


def test_rulesets_from_a_warehouse_that_kept_none_is_refused(tmp_path):
    path = tmp_path / "old.duckdb"
    duckdb.connect(str(path)).close()
    result = _cli(tmp_path, _day(None, HONEST), "--warehouse", str(path), "--rulesets-from-warehouse")
    assert result.exit_code == 3 and "keeps no ruleset texts yet" in " ".join(result.output.split())
    missing = _cli(tmp_path / "b", _day(None, HONEST), "--rulesets-from-warehouse")
    assert missing.exit_code == 2 and "--rulesets-from-warehouse reads the ruleset texts" in missing.output


def test_pitboss_validate_checks_table_rulesets_as_the_audit_does(tmp_path):
    data = _day(dt.timedelta(0), HONEST)
    data["table_rulesets"][0]["ruleset"] = "sic_bo_live"
    folder = datasets.write(data, tmp_path / "in")
    result = CliRunner().invoke(app, ["validate", "--input", str(folder)])
    assert result.exit_code == 3, result.output
    assert ("table_rulesets.parquet: column 'ruleset': row 0: table 'T1' plays baccarat: its ruleset cannot change "
            "to 'sic_bo_live' (a sic_bo ruleset)") in " ".join(result.output.split())


def test_a_change_of_dealing_procedure_mid_shoe_judges_the_rounds_after_it_by_the_new_one(tmp_path):
    """T1 moves to mini-baccarat (6 decks, a fresh shuffle every hand) at AT's betting close, mid-shoe S1 whose
    cards were dealt on as an 8-deck shoe: S1's rounds from AT on are judged by mini-baccarat's procedure and are
    findings (their cards are not a fresh shuffle's); the rounds before AT, S0 and the shoe itself (judged under
    the ruleset of its first round) are not."""
    data = _day(dt.timedelta(0), HONEST)
    data["table_rulesets"][0]["ruleset"] = "mini_baccarat_6d"
    _audit(data, tmp_path)
    found = duckdb.connect().execute("SELECT kind, shoe_id, round_id FROM read_parquet(?)",
                                     [str(tmp_path / "out" / "findings" / "*.parquet")]).fetchall()
    assert {kind for kind, *_ in found} >= {"CARD_SEQUENCE_MISMATCH"}
    assert all(shoe == "S1" and round_id is not None and int(round_id.split("-R")[1]) >= 28
               for _, shoe, round_id in found), found
    assert ("CARD_SEQUENCE_MISMATCH", "S1", AT) in found
