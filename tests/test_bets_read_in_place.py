"""The two ways the pipeline gets bets to their group of shoes give the same outputs, byte for byte:
each group reading its own row groups of local bets files (the default), and every bet read up front
and shuffled to its group (`--shuffle-bets`, the way for remote input). Checked on input laid out as
the recorder writes it (row groups of one or two table-days), on bets scattered over the row groups
(each feeds many groups: read once and shuffled), and on broken rows of every kind."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.audit import run
from pipelines.io import SpillFolder
from pipelines.transforms import (
    DUPLICATE_BUCKETS,
    READ_IN_PLACE_UP_TO,
    ROUND_INDEX,
    Packed,
    _buckets,
    _compact,
    _duplicates_in_bucket,
    _group_of,
    _HashedIds,
    _hold_by_own_group,
    _RoundLookup,
    _route_held,
    _ShoeGroupIndex,
    duplicate_buckets,
    string_hash,
)
from pitboss.recorder import GenerateConfig, generate
from schemas.outputs import FINDINGS

OUTPUTS = ("round_replays", "settlements", "findings", "quarantine")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """8 tables (all four rulesets, mini-baccarat's one-round shoes too) on 2 days, planted faults of
    every kind, bets in row groups of 700 rows: most row groups hold bets of one table-day, some of two."""
    out = tmp_path_factory.mktemp("recorded") / "data"
    generate(GenerateConfig(out=out, tables=8, days=2, rounds_per_table=50, bets_per_round=12, seed=3,
                            fault_rate=0.02, row_group_rows=700, quiet=True))
    return out


def _bets_file(folder: Path) -> Path:
    return sorted((folder / "bets").rglob("*.parquet"))[0]


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def _scattered(recorded: Path, tmp: Path) -> Path:
    """The same bets in a random order in one file: every row group feeds more groups (16 table-days)
    than are read in place."""
    import shutil

    folder = _copy(recorded, tmp / "scattered")
    bets = pa.concat_tables(pq.read_table(p) for p in sorted((folder / "bets").rglob("*.parquet")))
    shutil.rmtree(folder / "bets")
    (folder / "bets").mkdir()
    order = np.random.default_rng(1).permutation(bets.num_rows)
    pq.write_table(bets.take(pa.array(order)), folder / "bets" / "part-00000.parquet", row_group_size=2000)
    return folder


def _broken(recorded: Path, tmp: Path) -> Path:
    """Bad rows, bets on unknown rounds (one row group holds nothing else), bets of a round in
    quarantine, a round and its bets on an unknown shoe, bets repeated in another file, and two shoes
    recorded again in another file: one as it was, one opened a day later (in another table-day)."""
    folder = _copy(recorded, tmp / "broken")
    bets_path, rounds_path = _bets_file(folder), sorted((folder / "rounds").rglob("*.parquet"))[0]
    bets, rounds = pq.read_table(bets_path).to_pylist(), pq.read_table(rounds_path).to_pylist()
    bets[10]["stake"] = -500  # rejected by the row rules
    bets[900]["account_id"] = None
    bets[1500]["bet_type"] = "BANKER_PAIRS"
    bets[2000]["round_id"] = "NO-SUCH-ROUND"  # on an unknown round, in a row group of known ones
    bets[2100]["round_id"] = None  # rejected, and on no round
    held = rounds[30]["round_id"]
    rounds[30]["player_cards"] = ["1H", "2H"]  # the round is quarantined; its bets follow it
    rounds.append(dict(rounds[0], round_id="ORPHAN-ROUND", shoe_id="NO-SUCH-SHOE"))
    bets.append(dict(bets[5], bet_id="ORPHAN-BET", round_id="ORPHAN-ROUND"))
    for rows, path in ((bets, bets_path), (rounds, rounds_path)):
        nullable = pa.schema([f.with_nullable(True) for f in pq.read_schema(path)])
        pq.write_table(pa.Table.from_pylist(rows, nullable), path, row_group_size=700)
    # another file: bets on unknown rounds only (a row group no group reads), then repeated bets
    lost = [dict(b, bet_id=f"LOST-{i}", round_id=f"LOST-ROUND-{i % 3}") for i, b in enumerate(bets[200:250])]
    again = [dict(b) for b in bets[100:110]] + [dict(b) for b in bets if b["round_id"] == held][:3]
    nullable = pa.schema([f.with_nullable(True) for f in pq.read_schema(bets_path)])
    pq.write_table(pa.Table.from_pylist(lost + again, nullable), bets_path.with_name("part-00099.parquet"),
                   row_group_size=50)
    shoes_path = sorted((folder / "shoes").rglob("*.parquet"))[0]
    shoes = pq.read_table(shoes_path)
    again, later = shoes.slice(0, 1), shoes.slice(1, 1)
    at = later.schema.get_field_index("opened_at")
    later = later.set_column(at, later.schema.field(at),
                             pc.add(later["opened_at"], pa.scalar(86_400_000_000, pa.duration("us"))))
    pq.write_table(pa.concat_tables([again, later]), shoes_path.with_name("part-00099.parquet"))
    return folder


def _digests(out: Path) -> dict[str, dict[str, str]]:
    return {name: {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((out / name).glob("*.parquet"))}
            for name in OUTPUTS}


def _metrics(out: Path) -> dict[str, int]:
    return json.loads((out / "_manifest.json").read_text())["metrics"]


def _row_groups(folder: Path) -> int:
    return sum(pq.ParquetFile(p).metadata.num_row_groups for p in (folder / "bets").rglob("*.parquet"))


@pytest.mark.parametrize("layout", ["as recorded", "scattered", "broken"])
def test_reading_bets_in_place_gives_the_outputs_of_shuffling_them(recorded, tmp_path, layout):
    folder = {"as recorded": lambda: recorded, "scattered": lambda: _scattered(recorded, tmp_path),
              "broken": lambda: _broken(recorded, tmp_path)}[layout]()
    run(["--input", str(folder), "--output", str(tmp_path / "in_place")])
    run(["--input", str(folder), "--output", str(tmp_path / "shuffled"), "--shuffle-bets"])
    in_place, shuffled = _digests(tmp_path / "in_place"), _digests(tmp_path / "shuffled")
    assert in_place == shuffled
    metrics = _metrics(tmp_path / "in_place")
    read_in_place = metrics.get("audit.bet_row_groups_read_in_place", 0)
    if layout == "scattered":
        assert read_in_place == 0  # each row group feeds more than READ_IN_PLACE_UP_TO groups
    else:
        assert 0 < read_in_place <= _row_groups(folder)
        # a row group is read by each group it feeds (at most READ_IN_PLACE_UP_TO), less what is kept
        assert metrics["audit.bet_row_group_reads"] <= READ_IN_PLACE_UP_TO * read_in_place
    assert "audit.bet_row_groups_read_in_place" not in _metrics(tmp_path / "shuffled")
    # every bet accounted for, either way
    rows_in = sum(pq.ParquetFile(p).metadata.num_rows for p in (folder / "bets").rglob("*.parquet"))
    settled = pq.read_table(tmp_path / "in_place" / "settlements").num_rows
    quarantine = pq.read_table(tmp_path / "in_place" / "quarantine")
    assert settled + quarantine["source_table"].to_pylist().count("bets") == rows_in


def test_the_broken_rows_are_where_they_belong(recorded, tmp_path):
    folder = _broken(recorded, tmp_path)
    run(["--input", str(folder), "--output", str(tmp_path / "out")])
    q = pq.read_table(tmp_path / "out" / "quarantine").to_pylist()
    reasons = {r["record_id"]: r["reason"] for r in q if r["source_table"] == "bets"}
    assert sum(1 for r in reasons if r and r.startswith("LOST-")) == 50
    assert all(reasons[f"LOST-{i}"] == "round_id not found in rounds" for i in range(50))
    assert "NO-SUCH-SHOE" in reasons["ORPHAN-BET"]
    assert "the bet's round is in quarantine" in reasons.values()
    # a shoe recorded twice (as it was, or opened a day later) is replayed from neither copy: its rounds and
    # both copies go to quarantine
    shoes = pq.read_table(sorted((folder / "shoes").rglob("*.parquet"))[0])["shoe_id"].to_pylist()[:2]
    rounds = [r for r in q if r["source_table"] == "rounds" and "appears 2 times in shoes" in (r["reason"] or "")]
    assert {s for s in shoes if any(repr(s) in r["reason"] for r in rounds)} == set(shoes)
    replayed = set(pq.read_table(tmp_path / "out" / "round_replays")["shoe_id"].to_pylist())
    assert not replayed & set(shoes)
    copies = [r["record_id"] for r in q if r["source_table"] == "shoes" and "appears 2 times" in r["reason"]]
    assert sorted(copies) == sorted(shoes * 2)  # both copies of each, accounted for in quarantine
    findings = pq.read_table(tmp_path / "out" / "findings")
    kinds = findings["kind"].to_pylist()
    assert kinds.count("UNKNOWN_ROUND") >= 51  # the 50 lost bets and NO-SUCH-ROUND (plus planted ones)
    repeated = {b for k, b in zip(kinds, findings["bet_id"].to_pylist(), strict=True) if k == "DUPLICATE_BET"}
    again = pq.read_table(_bets_file(recorded))["bet_id"].to_pylist()[100:110]
    assert set(again) <= repeated


def test_findings_are_written_by_group_of_shoes_and_the_rest_in_shards(recorded, tmp_path):
    folder = _broken(recorded, tmp_path)
    run(["--input", str(folder), "--output", str(tmp_path / "out"), "--shards", "3"])
    out = tmp_path / "out"
    files = sorted((out / "findings").glob("*.parquet"))
    by_group = [p for p in files if p.name.startswith("group-")]
    shards = [p for p in files if p.name.startswith("part-")]
    assert len(by_group) + len(shards) == len(files) and len(shards) == 3 and len(by_group) > 1

    def shoes(path: Path) -> set:
        return set(pq.read_table(path, columns=["shoe_id"])["shoe_id"].to_pylist())

    replayed_in = {shoe: p.name for p in (out / "round_replays").glob("group-*.parquet") for shoe in shoes(p)}
    seen: set = set()
    for path in by_group:  # each holds the findings of the shoes of one group, replayed in one file
        mine = shoes(path)
        assert None not in mine and not mine & seen
        seen |= mine
        assert len({replayed_in[shoe] for shoe in mine if shoe in replayed_in}) == 1
    across = pq.read_table(shards)["kind"].to_pylist()
    assert set(across) == {"UNKNOWN_ROUND", "DUPLICATE_BET"}
    every = pq.read_table(out / "findings")["kind"].to_pylist()
    assert every.count("UNKNOWN_ROUND") + every.count("DUPLICATE_BET") == len(across)


def _spills_recorded(monkeypatch) -> list[tuple[str, int, str]]:
    """(path, rows, what it holds: "bet ids", "input" (shoes or rounds) or "output" (a shard's part of the
    quarantine or of the findings across groups)) of every table the run's SpillFolder writes."""

    written, put, put_parts = [], SpillFolder.put, SpillFolder.put_parts

    def kind(table):
        names = set(table.column_names)
        return "output" if names & {"kind", "reason"} else "bet ids" if "bet_id" in names else "input"

    def recording(self, table):
        handle = put(self, table)
        written.append((handle.path, table.num_rows, kind(table)))
        return handle

    def recording_parts(self, parts):
        handles = put_parts(self, parts)
        assert len({h.path for h in handles}) == 1  # one file
        written.append((handles[0].path, sum(p.num_rows for p in parts), kind(parts[0])))
        return handles

    monkeypatch.setattr(SpillFolder, "put", recording)
    monkeypatch.setattr(SpillFolder, "put_parts", recording_parts)
    return written


@pytest.mark.parametrize("layout", ["as recorded", "broken"])
def test_every_checked_bet_id_shoe_and_round_waits_in_a_file_once_and_the_files_go_with_the_run(
        recorded, tmp_path, monkeypatch, layout):
    folder = recorded if layout == "as recorded" else _broken(recorded, tmp_path)
    written = _spills_recorded(monkeypatch)
    out = tmp_path / "out"
    run(["--input", str(folder), "--output", str(out)])
    metrics = _metrics(out)
    # the duplicate check saw each bet that passed the row checks exactly once, from files, and the shoes
    # and rounds went to their groups through files too
    ids = sum(rows for _, rows, kind in written if kind == "bet ids")
    assert ids == metrics["input.bets_rows"] - metrics.get("input.bets_quarantined", 0)
    assert sum(rows for _, rows, kind in written if kind == "input") == sum(
        pq.ParquetFile(p).metadata.num_rows for name in ("shoes", "rounds") for p in (folder / name).rglob("*.parquet")
    ) - metrics.get("input.shoes_quarantined", 0) - metrics.get("input.rounds_quarantined", 0)
    # ... and every row of the sharded outputs reached its shard through a file
    sharded = [p for name in ("quarantine", "findings") for p in (out / name).glob("part-*.parquet")]
    assert sum(rows for _, rows, kind in written if kind == "output") == sum(
        pq.ParquetFile(p).metadata.num_rows for p in sharded) > 0
    assert len({path for path, _, _ in written}) == len(written)
    assert not any(Path(path).exists() for path, _, _ in written) and not (out / "_spill").exists()


def test_a_failed_run_leaves_no_waiting_ids_behind(recorded, tmp_path, monkeypatch):
    import pipelines.transforms as transforms

    written = _spills_recorded(monkeypatch)

    def failing(_element):
        raise RuntimeError("the duplicate check failed")

    monkeypatch.setattr(transforms, "_duplicates_in_bucket", failing)
    out = tmp_path / "out"
    with pytest.raises(Exception, match="the duplicate check failed"):
        run(["--input", str(recorded), "--output", str(out)])
    assert written and not (out / "_spill").exists() and not (out / "_manifest.json").exists()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=20)), min_size=1, max_size=40), st.integers(0, 10))
def test_string_hash_depends_on_the_string_alone(values, cut):
    """Equal strings hash equal wherever they sit (neighbours, slices, chunks); a null hashes like ''."""
    whole = string_hash(pa.array(values, pa.string()))
    one_by_one = np.array([string_hash(pa.array([v], pa.string()))[0] for v in values], dtype=np.uint64)
    assert (whole == one_by_one).all()
    cut = min(cut, len(values))
    chunked = string_hash(pa.chunked_array([pa.array(values[:cut], pa.string()), pa.array(values[cut:], pa.string())]))
    assert (chunked == whole).all()
    sliced = string_hash(pa.array(["x" * 30, *values], pa.string()).slice(1))
    assert (sliced == whole).all()
    empty = string_hash(pa.array([""], pa.string()))[0]
    assert all(h == empty for v, h in zip(values, whole, strict=True) if v is None)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(alphabet="AB-0123", min_size=0, max_size=12), min_size=0, max_size=300),
       st.sampled_from([1, 3, DUPLICATE_BUCKETS, 22, 300, 4096]))
def test_buckets_keep_every_row_once_and_equal_ids_together(ids, count):
    table = pa.table({"bet_id": pa.array(ids, pa.string()), "row": pa.array(range(len(ids)), pa.int64())})
    parts = list(_buckets(table, count))
    rows = sorted(r for _, part in parts for r in part["row"].to_pylist())
    assert rows == list(range(len(ids)))
    bucket_of: dict[str, int] = {}
    for bucket, part in parts:
        assert 0 <= bucket < count
        for bet_id in part["bet_id"].to_pylist():
            assert bucket_of.setdefault(bet_id, bucket) == bucket


def test_a_longer_night_has_more_duplicate_buckets_each_no_bigger():
    mib = 1 << 20
    assert duplicate_buckets(0) == duplicate_buckets(100 * mib) == DUPLICATE_BUCKETS  # up to ~10M bets: 8
    sizes = [100 * mib, 200 * mib, 352 * mib, 1000 * mib, 10_000 * mib]
    counts = [duplicate_buckets(b) for b in sizes]
    assert counts == sorted(counts) and counts[-1] > counts[0]
    assert all(b / n <= 16 * mib for b, n in zip(sizes[1:], counts[1:], strict=True))  # 16 MiB of bets a bucket


def test_the_number_of_duplicate_buckets_does_not_change_the_outputs(recorded, tmp_path, monkeypatch):
    """Spread over many more buckets (as a long night's bet ids are), the duplicate check finds the same."""
    from pipelines import transforms

    folder = _broken(recorded, tmp_path)
    run(["--input", str(folder), "--output", str(tmp_path / "eight")])
    bets_bytes = sum(p.stat().st_size for p in (folder / "bets").rglob("*.parquet"))
    monkeypatch.setattr(transforms, "BETS_BYTES_PER_BUCKET", bets_bytes // 40)
    assert duplicate_buckets(bets_bytes) >= 40
    buckets: set[int] = set()
    real = transforms._buckets
    monkeypatch.setattr(transforms, "_buckets", lambda table, count: buckets.add(count) or real(table, count))
    run(["--input", str(folder), "--output", str(tmp_path / "many")])
    assert buckets == {duplicate_buckets(bets_bytes)}
    assert _digests(tmp_path / "many") == _digests(tmp_path / "eight")
    assert pq.read_table(tmp_path / "many" / "findings")["kind"].to_pylist().count("DUPLICATE_BET") >= 13


def _bets_with_ids(ids: list[str]) -> pa.Table:
    n = len(ids)
    return pa.table({
        "bet_id": pa.array(ids, pa.string()),
        "placed_at": pa.array([1_700_000_000_000_000 + (i * 7919) % 13 for i in range(n)], pa.timestamp("us", "UTC")),
        "_source_file": pa.array([f"f{i % 2}" for i in range(n)], pa.string()),
        "_source_row": pa.array(range(n), pa.int64()),
        "round_id": pa.array(["R"] * n, pa.string()), "table_id": pa.array(["T"] * n, pa.string()),
        "account_id": pa.array(["A"] * n, pa.string())})


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.none() | st.text(alphabet="AB-01", max_size=12), max_size=200))
def test_the_duplicate_check_finds_exactly_the_repeats(ids):
    """Against counting: every occurrence of an id after its first (by placed_at, file, row) is one
    DUPLICATE_BET, and nothing else is, whichever of a bucket's tables the occurrences are in. A missing id
    (which the row checks reject before) is never a repeat."""
    bets = _bets_with_ids(ids)
    found = list(_duplicates_in_bucket((0, [bets.slice(0, len(ids) // 2), bets.slice(len(ids) // 2)])))
    got = sorted((r["bet_id"], r["recorded"]) for t in found for r in t.to_pylist())
    rows = sorted(bets.to_pylist(), key=lambda r: (r["bet_id"] is None, r["bet_id"] or "", r["placed_at"],
                                                   r["_source_file"], r["_source_row"]))
    expected, seen = [], set()
    for r in rows:
        if r["bet_id"] is None:
            continue
        if r["bet_id"] in seen:
            expected.append((r["bet_id"], f"{r['_source_file']} row {r['_source_row']}"))
        seen.add(r["bet_id"])
    assert got == sorted(expected)


def test_a_duplicate_bet_finding_reads_as_worked_by_hand():
    """One id recorded three times, the repeats on two tables of the bucket and across midnight UTC: the first
    placed is the original; each later one is a finding dated by its own day (UTC), naming where it is."""
    us = lambda text: int(np.datetime64(text, "us").astype(np.int64))  # noqa: E731
    first = pa.table({
        "bet_id": ["B-7", "B-1"], "placed_at": pa.array([us("2026-11-28T23:59:59"), us("2026-11-28T20:00:00")],
                                                        pa.timestamp("us", "UTC")),
        "_source_file": ["bets/a.parquet", "bets/a.parquet"], "_source_row": pa.array([4, 5], pa.int64()),
        "round_id": ["R-1", "R-2"], "table_id": ["T1", "T1"], "account_id": ["A-9", "A-3"]})
    second = pa.table({
        "bet_id": ["B-7", "B-7"], "placed_at": pa.array([us("2026-11-29T00:00:01"), us("2026-11-28T23:00:00")],
                                                        pa.timestamp("us", "UTC")),
        "_source_file": ["bets/b.parquet", "bets/b.parquet"], "_source_row": pa.array([0, 1], pa.int64()),
        "round_id": ["R-8", "R-9"], "table_id": ["T2", "T2"], "account_id": ["A-9", "A-4"]})
    (found,) = _duplicates_in_bucket((3, [first, second]))
    again = "; each occurrence is settled, the repeat may be a double booking."
    assert found.to_pylist() == [
        {"business_date": date(2026, 11, 28), "kind": "DUPLICATE_BET", "severity": "critical", "table_id": "T1",
         "shoe_id": None, "round_id": "R-1", "bet_id": "B-7", "account_id": "A-9", "expected": "a unique bet_id",
         "recorded": "bets/a.parquet row 4", "message": f"Bet id B-7 appears again (bets/a.parquet row 4){again}"},
        {"business_date": date(2026, 11, 29), "kind": "DUPLICATE_BET", "severity": "critical", "table_id": "T2",
         "shoe_id": None, "round_id": "R-8", "bet_id": "B-7", "account_id": "A-9", "expected": "a unique bet_id",
         "recorded": "bets/b.parquet row 0", "message": f"Bet id B-7 appears again (bets/b.parquet row 0){again}"},
    ]
    assert found.schema.equals(FINDINGS)


class _CountedPart:
    """A packed part of a bucket that records which columns each read asked for."""

    def __init__(self, table: pa.Table):
        self.packed, self.reads = Packed(table), []

    def table(self, columns=None):
        self.reads.append(columns)
        return self.packed.table(columns)


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.text(alphabet="AB-01", max_size=6), max_size=120),
       cuts=st.lists(st.integers(0, 120), max_size=4))
def test_the_duplicate_check_reads_whole_parts_only_where_an_id_repeats(ids, cuts):
    """Held parts (packed or spilled) are read for their ids first; the rest of a part is read only when it
    holds an occurrence of a repeated id, and the findings are those of the plain tables."""
    bets = _bets_with_ids(ids)
    ends = sorted({min(c, len(ids)) for c in cuts} | {0, len(ids)})
    tables = [bets.slice(a, b - a) for a, b in zip(ends, ends[1:], strict=False)]
    parts = [_CountedPart(t) for t in tables]
    found = list(_duplicates_in_bucket((0, parts)))
    assert [t.to_pylist() for t in found] == [t.to_pylist() for t in _duplicates_in_bucket((0, tables))]
    repeated = {i for i in ids if ids.count(i) > 1}
    for part, t in zip(parts, tables, strict=True):
        holds_a_repeat = bool(repeated & set(t["bet_id"].to_pylist()))
        assert part.reads == [["bet_id"]] + ([None] if holds_a_repeat else [])


def test_a_spilled_or_packed_table_gives_back_only_the_columns_asked_for(tmp_path):
    table = _bets_with_ids([f"B{i}" for i in range(1000)])
    for held in (Packed(table), SpillFolder(str(tmp_path)).put(table)):
        assert held.table(["bet_id", "_source_row"]).equals(table.select(["bet_id", "_source_row"]))
        assert held.table().equals(table)


def test_the_parts_of_a_table_spilled_in_one_file_each_come_back_alone(tmp_path):
    """The duplicate check's buckets of one batch of bets: slices sharing the table's dictionaries, one
    file, each part read back as it was (every column, or those asked for), whatever its size."""
    table = _compact(_bets_with_ids([f"B{i % 700}" for i in range(1000)]).combine_chunks())
    ends = [0, 1, 400, 400, 999, 1000]
    parts = [table.slice(a, b - a) for a, b in zip(ends, ends[1:], strict=False)]
    handles = SpillFolder(str(tmp_path)).put_parts(parts)
    assert len({h.path for h in handles}) == 1 and len(list(tmp_path.iterdir())) == 1
    for part, handle in zip(parts, handles, strict=True):
        assert handle.table().equals(part.combine_chunks()) and handle.table().schema == table.schema
        assert handle.table(["bet_id", "_source_row"]).equals(part.select(["bet_id", "_source_row"]))


def _round_index(round_ids: list[str]) -> pa.Table:
    n = len(round_ids)
    return pa.table({"round_id": round_ids, "shoe_id": ["S"] * n, "_group": ["G"] * n}, schema=ROUND_INDEX)


def test_the_dofns_of_one_pipeline_share_one_round_lookup_and_other_pipelines_get_their_own():
    """The round lookup (every round of the night, hashed) is built once for a pipeline's DoFns, however
    many look rounds up; another pipeline in the same process, whose round index looks the same from its
    size and ends but differs inside, gets rows from its own index."""
    night = _round_index(["R-1", "R-2", "R-2", "R-9"])  # R-2 twice: it names no one round
    other = _round_index(["R-1", "R-3", "R-4", "R-9"])  # same rows, bytes, first and last id
    bets = pa.array(["R-9", "R-2", "R-3", "R-1"])

    def rows(lookup, index):
        codes, at = lookup.rounds(bets, index)
        return at.take(pa.array(codes)).to_pylist()

    locating, grouping = _RoundLookup("night"), _RoundLookup("night")
    assert rows(locating, night) == [3, None, None, 0]
    built = _RoundLookup._index
    assert rows(grouping, night) == [3, None, None, 0] and _RoundLookup._index is built  # not built again
    assert grouping.repeated == {"R-2"}
    assert rows(_RoundLookup("another night"), other) == [3, None, 1, 0]
    assert _RoundLookup("another night").repeated == set()
    assert rows(locating, night) == [3, None, None, 0]  # (built again for the first pipeline: the latest only)


@settings(max_examples=200, deadline=None)
@given(index=st.lists(st.sampled_from([f"R-{i}" for i in range(40)]), max_size=60),
       wanted=st.lists(st.sampled_from([f"R-{i}" for i in range(50)]), unique=True, max_size=30),
       chunk=st.integers(1, 7), weak_hash=st.booleans())
def test_the_round_lookup_finds_each_id_s_one_row_as_a_dict_of_the_ids_would(index, wanted, chunk, weak_hash):
    """Oracle: a plain dict of the index's ids. Ids in the index once are found at their row; ids not in it,
    or in it more than once, are not. With a weak hash (4 values) most ids share their hash with others:
    found all the same, through the ids compared and the dict of shared hashes."""
    import pipelines.transforms as transforms

    rows: dict[str, list[int]] = {}
    for row, rid in enumerate(index):
        rows.setdefault(rid, []).append(row)
    expected = [rows[r][0] if len(rows.get(r, [])) == 1 else None for r in wanted]
    ids = pa.chunked_array([pa.array(index[i:i + chunk], pa.string()) for i in range(0, len(index), chunk)],
                           pa.string())
    strong = transforms._python_hashes
    if weak_hash:
        transforms._python_hashes = lambda values: strong(values) % 4
    try:
        lookup = _HashedIds(ids)
        found = lookup.rows_of(pa.array(wanted, pa.string()), ids).to_pylist()
    finally:
        transforms._python_hashes = strong
    assert found == expected
    assert lookup.repeated == {r for r, at in rows.items() if len(at) > 1}


@settings(max_examples=300, deadline=None)
@given(shoes=st.lists(st.tuples(st.sampled_from(["S-1", "S-2", "S-3", "S-4"]),
                                st.sampled_from(["T-1", "T-2", "shoe:S-1"]), st.sampled_from([1, 2, None])),
                      max_size=25),
       batch=st.integers(1, 6))
def test_each_shoe_goes_to_the_group_its_id_has_in_the_night_s_shoe_groups(shoes, batch):
    """Oracle: every shoe row's group looked up in the night's shoe groups (_group_of), row by row. Parts whose
    shoes all keep their own group are routed whole without that lookup: the same groups either way, ids
    recorded twice (with the same group or not) and a table named like a shoe's own group included (the row
    checks before keep out shoes without an id or a table)."""
    day = [None, datetime(2026, 11, 27, 23, tzinfo=UTC), datetime(2026, 11, 28, 1, tzinfo=UTC)]
    night = pa.table({"shoe_id": pa.array([s for s, _, _ in shoes], pa.string()),
                      "table_id": pa.array([t for _, t, _ in shoes], pa.string()),
                      "opened_at": pa.array([day[d or 0] for _, _, d in shoes], pa.timestamp("us", tz="UTC")),
                      "row": pa.array(range(len(shoes)), pa.int64())})
    parts = [part for start in range(0, len(shoes), batch)
             for part in _hold_by_own_group(night.slice(start, batch), None)]
    index_of = _ShoeGroupIndex()
    acc = index_of.create_accumulator()
    for _, rows, _ in parts:
        acc = index_of.add_input(acc, rows)
    index = index_of.extract_output(acc)
    routed = sorted((group, row) for part in parts for group, held in _route_held(part, index)
                    for row in held.table()["row"].to_pylist())
    expected = sorted(zip(_group_of(night["shoe_id"], index).to_pylist(), range(len(shoes)), strict=True))
    assert routed == expected
