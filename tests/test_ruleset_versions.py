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
    assert _sha_of_outputs(tmp_path / "none") == _sha_of_outputs(tmp_path / "later")
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
