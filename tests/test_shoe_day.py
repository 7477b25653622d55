"""One business day for a shoe's own findings (issue 41): a shoe's group is its table and the business day of its
first round (the UTC date its betting opened), and its shoe-level findings (round_id null: SHOE_COMPOSITION ...)
and a table-day's AUDIT_ERROR are dated by that day, in every game: a shoe opened at 23:59 for rounds from 00:01
does not make the run claim the day before (the warehouse's load replaces the days a run covers).

Two recorded nights of a baccarat and a blackjack table (pitboss generate, no faults); on night 2 each table's
first shoe is opened at 23:59 of day 1, its first round at 00:01 of day 2 (its rounds and bets moved with it),
and its shoes row says 7 decks for its 8 decks of cards (SHOE_COMPOSITION, a shoe's own finding); night 1's first
shoes say so too."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipelines.audit import run
from pipelines.convert import shoe_days
from pipelines.dead_letter import AUDIT_ERROR, dead_letter
from pipelines.warehouse import load
from pitboss.recorder import GenerateConfig, generate
from schemas.outputs import OUTPUTS

DAY1, DAY2 = dt.date(2026, 11, 28), dt.date(2026, 11, 29)
SHOE_OPENED = dt.datetime(2026, 11, 28, 23, 59, tzinfo=dt.UTC)
FIRST_ROUND = dt.datetime(2026, 11, 29, 0, 1, tzinfo=dt.UTC)
TABLES = ("T01-BAC8X", "T02-BJ8")
MOVED = tuple(f"{t}-20261129-S0001" for t in TABLES)  # each table's first shoe of night 2
NIGHT1_SHOES = tuple(f"{t}-20261128-S0001" for t in TABLES)
INPUTS = ("tables", "limits", "shoes", "rounds", "bets")


def _night(recorded: Path, date: dt.date) -> dict[str, list[pa.Table]]:
    """Each input table of one recorded day, a table per file (the games' files have different columns)."""
    def read(name: str) -> list[pa.Table]:
        if (recorded / f"{name}.parquet").exists():
            return [pq.read_table(recorded / f"{name}.parquet")]
        return [pq.read_table(f) for f in sorted((recorded / name / f"date={date}").glob("*.parquet"))]
    return {name: read(name) for name in INPUTS}


def _moved(night: dict[str, list[pa.Table]]) -> dict[str, list[pa.Table]]:
    """Night 2 with each MOVED shoe opened at 23:59 of day 1 and its rounds and bets moved so that its first round's
    betting opens at 00:01 of day 2; its shoes row says 7 decks."""
    rounds = [r for t in night["rounds"] for r in t.select(["shoe_id", "round_id", "betting_opened_at"]).to_pylist()]
    shift = {shoe: FIRST_ROUND - min(r["betting_opened_at"] for r in rounds if r["shoe_id"] == shoe) for shoe in MOVED}
    of_round = {r["round_id"]: shift[r["shoe_id"]] for r in rounds if r["shoe_id"] in shift}

    def moved(table: pa.Table, key: str, by: dict, times: tuple[str, ...], **changes) -> pa.Table:
        rows = table.to_pylist()
        for row in rows:
            if row[key] in by:
                for col in times:
                    row[col] = row[col] + by[row[key]] if row[col] is not None else None
                row.update(changes)
        return pa.Table.from_pylist(rows, table.schema)

    return {**night,
            "shoes": [moved(t, "shoe_id", shift, ("opened_at",)) for t in night["shoes"]],
            "rounds": [moved(t, "shoe_id", shift, ("betting_opened_at", "betting_closed_at", "settled_at"))
                       for t in night["rounds"]],
            "bets": [moved(t, "round_id", of_round, ("placed_at", "settled_at")) for t in night["bets"]]}


def _seven_decks(night: dict[str, list[pa.Table]], shoe_ids: tuple[str, ...], opened: dt.datetime | None = None
                 ) -> dict[str, list[pa.Table]]:
    """The shoes `shoe_ids` saying 7 decks for their 8 (SHOE_COMPOSITION), opened at `opened` if given."""
    def shoes(table: pa.Table) -> pa.Table:
        rows = table.to_pylist()
        for row in rows:
            if row["shoe_id"] in shoe_ids:
                row["decks"] = 7
                row["opened_at"] = opened or row["opened_at"]
        return pa.Table.from_pylist(rows, table.schema)
    return {**night, "shoes": [shoes(t) for t in night["shoes"]]}


def _write(night: dict[str, list[pa.Table]], folder: Path) -> Path:
    for name, tables in night.items():
        (folder / name).mkdir(parents=True)
        for i, table in enumerate(tables):
            pq.write_table(table, folder / name / f"part-{i}.parquet")
    return folder


def _output(manifest: dict, name: str) -> pa.Table:
    files = [o["path"] for o in manifest["outputs"].get(name, [])]
    return pa.concat_tables([pq.read_table(f).cast(OUTPUTS[name]) for f in files]) if files else OUTPUTS[
        name].empty_table()


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    root = tmp_path_factory.mktemp("shoe_day")
    generate(GenerateConfig(out=root / "recorded", tables=1, blackjack_tables=1, rounds_per_table=30,
                            bets_per_round=3.0, seed=3, fault_rate=0.0, cancel_rate=0.0, days=2))
    # night 1 has a shoe's own finding of its own (what night 2 would erase if it claimed day 1)
    one = _write(_seven_decks(_night(root / "recorded", DAY1), NIGHT1_SHOES), root / "night1")
    two = _write(_seven_decks(_moved(_night(root / "recorded", DAY2)), MOVED, SHOE_OPENED), root / "night2")
    manifests = [run(["--input", str(folder), "--output", str(root / f"out{i}")]).__dict__
                 for i, folder in enumerate((one, two), start=1)]
    warehouse = root / "audit.duckdb"
    for manifest in manifests:
        load(str(warehouse), manifest)
    return manifests, warehouse


def test_a_shoes_own_finding_is_dated_by_its_first_rounds_day_in_every_card_game(nights):
    manifests, _ = nights
    found = _output(manifests[1], "findings")
    own = found.filter(pc.and_(pc.is_null(found["round_id"]), pc.is_in(found["shoe_id"], pa.array(MOVED))))
    assert sorted((f["shoe_id"], f["kind"], f["business_date"]) for f in own.to_pylist()) == [
        (shoe, "SHOE_COMPOSITION", DAY2) for shoe in MOVED]  # (by the shoe's opening: DAY1)
    assert set(_output(manifests[1], "findings")["business_date"].to_pylist()) == {DAY2}


def test_two_consecutive_nights_loaded_keep_both(nights):
    manifests, warehouse = nights
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        for name in ("settlements", "findings"):
            got = dict(con.execute(f"SELECT business_date, count(*) FROM {name} GROUP BY 1").fetchall())
            want = {}
            for manifest in manifests:
                for d in _output(manifest, name)["business_date"].to_pylist():
                    want[d] = want.get(d, 0) + 1
            assert got == want and set(got) == {DAY1, DAY2}, name
    finally:
        con.close()


def _at(*times: dt.datetime | None) -> pa.Array:
    return pa.array(times, pa.timestamp("us", tz="UTC"))


def test_shoe_days_first_round_else_opening():
    """A shoe's day: its first round's (the earliest betting opening, in any row order), its opening's where it
    has no round or no round with a betting time."""
    shoes = pa.table({"shoe_id": ["S1", "S2", "S3"], "opened_at": _at(SHOE_OPENED, SHOE_OPENED, SHOE_OPENED)})
    rounds = pa.table({"shoe_id": ["S1", "S1", "S3"],
                       "betting_opened_at": _at(FIRST_ROUND + dt.timedelta(days=1), FIRST_ROUND, None)})
    assert shoe_days(shoes, rounds).to_pylist() == [DAY2, DAY1, DAY1]
    # (an outcome session's findings by the same rule: tests/test_outcome_adaptor.py, outcomes._finding_days)


def test_an_audit_error_is_dated_by_the_groups_day(tmp_path, monkeypatch):
    """A table-day whose shoe opened at 23:59 for a round at 00:01: its AUDIT_ERROR is of the round's day."""
    monkeypatch.chdir(tmp_path)  # (pitboss-error.log)
    source = {"_source_file": ["f"], "_source_row": [0]}
    shoes = pa.table({"shoe_id": ["S1"], "table_id": ["T"], "opened_at": _at(SHOE_OPENED), **source})
    rounds = pa.table({"round_id": ["R1"], "shoe_id": ["S1"], "betting_opened_at": _at(FIRST_ROUND), **source})
    bets = pa.table({"bet_id": ["B1"], "round_id": ["R1"], "placed_at": _at(FIRST_ROUND), **source})
    info = SimpleNamespace(table_id="T", game="blackjack")
    _, finding = dead_letter("T/2026-11-29", info, shoes, rounds, bets, RuntimeError("boom"))
    assert finding.to_pylist()[0]["kind"] == AUDIT_ERROR
    assert finding["business_date"].to_pylist() == [DAY2]  # (min opened_at: DAY1)
