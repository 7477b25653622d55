"""Output files are sorted by their keys: `sorted_rows` gives exactly what a stable sort gives, whether
the rows come already in order (the engine's usual order, where no sort runs) or not."""

from __future__ import annotations

import io
import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.io import (
    ROW_GROUP,
    SpillFolder,
    _apart,
    _in_order,
    _WriteShard,
    sorted_rows,
    write_parquet,
    write_parquet_parts,
)

KEYS = ["shoe", "round_no", "bet"]
_rows = st.lists(st.tuples(st.sampled_from(["S1", "S2", "S10", "s1", "É"]), st.integers(0, 3),
                           st.one_of(st.none(), st.sampled_from(["B1", "B2", "B10", ""]))),
                 max_size=40)


def _table(rows) -> pa.Table:
    return pa.table({"shoe": pa.array([r[0] for r in rows], pa.string()),
                     "round_no": pa.array([r[1] for r in rows], pa.int32()),
                     "bet": pa.array([r[2] for r in rows], pa.string()),
                     "row": pa.array(range(len(rows)), pa.int64())})


def _stable_sort(table: pa.Table) -> pa.Table:
    return table.take(pc.sort_indices(table, [(k, "ascending") for k in KEYS]))


@settings(max_examples=300, deadline=None)
@given(_rows)
def test_sorted_rows_is_a_stable_sort(rows):
    table = _table(rows)
    assert sorted_rows(table, KEYS).equals(_stable_sort(table))


@settings(max_examples=300, deadline=None)
@given(_rows)
def test_rows_in_order_are_recognised_and_kept(rows):
    ordered = _stable_sort(_table(rows))
    if ordered["bet"].null_count == 0:
        assert _in_order(ordered, KEYS)
    assert sorted_rows(ordered, KEYS).equals(ordered)


def test_a_row_out_of_order_on_a_later_key_is_caught():
    table = _table([("S1", 1, "B2"), ("S1", 1, "B1"), ("S2", 0, "B0")])
    assert not _in_order(table, KEYS)
    assert sorted_rows(table, KEYS)["row"].to_pylist() == [1, 0, 2]


def test_a_file_depends_on_its_rows_not_on_the_chunks_they_came_in(tmp_path):
    """The same rows in one chunk or in several (as the DaskRunner and the in-process runner hand a shard its
    parts) give the same bytes: Arrow's writer would otherwise cut a text column's pages where chunks end."""
    n = 20_000
    records = pa.array([f'{{"bet_id": "B{i:07d}", "stake": {i * 7919 % 100_003}}}' * 3 for i in range(n)])
    table = pa.table({"record": records, "kind": pa.array(["a", "b"] * (n // 2))})
    chunked = pa.concat_tables([table.slice(0, 7_001), table.slice(7_001, 5_000), table.slice(12_001)])
    assert chunked["record"].num_chunks == 3
    write_parquet(table, str(tmp_path / "one.parquet"))
    write_parquet(chunked, str(tmp_path / "three.parquet"))
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "three.parquet").read_bytes()


def _bets(n: int, first: int = 0) -> pa.Table:
    return pa.table({"table_id": pa.array([f"T{(first + i) // 50_000:02d}" for i in range(n)], pa.string()),
                     "bet_id": pa.array([f"B{first + i:07d}" for i in range(n)], pa.string()),
                     "moment": pa.array([None if i % 13 == 0 else i / 7 for i in range(n)], pa.float64())})


def test_a_file_written_part_by_part_is_the_file_of_its_rows(tmp_path):
    """write_parquet_parts gives write_parquet's bytes of the parts concatenated, whatever the parts' sizes against
    the row groups (a part ending exactly at a row group's end, one row past it, parts spanning two row groups,
    empty parts, no rows at all)."""
    cases = [[0], [5], [ROW_GROUP], [ROW_GROUP - 1, 1], [ROW_GROUP, 1], [100_000, 0, 50_000, 200_000, 3]]
    for sizes in cases:
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        parts = [_bets(n, s) for n, s in zip(sizes, starts, strict=True)]
        whole = pa.concat_tables(parts)
        write_parquet(whole, str(tmp_path / "whole.parquet"))
        write_parquet_parts(iter(parts), str(tmp_path / "parts.parquet"), whole.schema)
        assert (tmp_path / "whole.parquet").read_bytes() == (tmp_path / "parts.parquet").read_bytes(), sizes


def test_a_file_written_part_by_part_in_smaller_row_groups_is_the_file_of_its_rows(tmp_path):
    """Both writers take the rows a row group (the surveillance's outputs use smaller ones): the same bytes both
    ways, and the row groups of that size, at and around its boundaries."""
    group = 1_000
    for sizes in ([group], [group - 1, 1], [group, 1], [2_500, 0, 499, 1]):
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        parts = [_bets(n, s) for n, s in zip(sizes, starts, strict=True)]
        whole = pa.concat_tables(parts)
        write_parquet(whole, str(tmp_path / "whole.parquet"), group)
        write_parquet_parts(iter(parts), str(tmp_path / "parts.parquet"), whole.schema, group)
        assert (tmp_path / "whole.parquet").read_bytes() == (tmp_path / "parts.parquet").read_bytes(), sizes
        meta = pq.ParquetFile(tmp_path / "parts.parquet").metadata
        rows = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        assert rows == [group] * (sum(sizes) // group) + ([sum(sizes) % group] if sum(sizes) % group else []), sizes


def test_a_file_written_as_it_goes_is_the_file_arrow_writes_in_memory(tmp_path):
    """The writers stream their row groups into the file (no copy of the whole file in memory): the bytes are those
    of the same rows written whole into Arrow's in-memory buffer with the outputs' options (zstd; the repeating
    columns dictionary-encoded, bet_id not), over several row groups and with none."""
    for n in (0, 7, 2 * ROW_GROUP + 5):
        rows = _bets(n)
        buffer = pa.BufferOutputStream()
        pq.write_table(rows, buffer, row_group_size=ROW_GROUP, compression="zstd",
                       use_dictionary=["table_id", "moment"])
        in_memory = buffer.getvalue().to_pybytes()
        write_parquet(rows, str(tmp_path / "whole.parquet"))
        write_parquet_parts(iter([rows.slice(0, 1000), rows.slice(1000)]), str(tmp_path / "parts.parquet"),
                            rows.schema)
        assert (tmp_path / "whole.parquet").read_bytes() == in_memory, n
        assert (tmp_path / "parts.parquet").read_bytes() == in_memory, n
        assert pq.ParquetFile(tmp_path / "whole.parquet").metadata.num_row_groups == max(1, -(-n // ROW_GROUP))


def test_a_file_written_part_by_part_holds_one_copy_of_a_row_group(tmp_path):
    """write_parquet_parts copies each row group once out of its parts and lets the copy go once written: what Arrow
    allocates while writing three row groups and a bit (the copies, the writer's pages) stays below 1.5 row groups
    (concatenating the parts and keeping the rest as a slice of that copy held two copies at once)."""
    n = 3 * ROW_GROUP + 1_000
    rows = pa.table({"detector": pa.array(["shared_rounds"] * n),
                     "detail": pa.array([f"{i:040d} of a test's detail" for i in range(n)]),
                     "value": pa.array(range(n), pa.float64())})
    parts = [rows.slice(at, 16_384).combine_chunks() for at in range(0, n, 16_384)]
    group = rows.slice(0, ROW_GROUP).combine_chunks().nbytes

    def given():
        while parts:
            yield parts.pop(0)

    counted, before = pa.proxy_memory_pool(pa.system_memory_pool()), pa.default_memory_pool()
    pa.set_memory_pool(counted)
    try:
        write_parquet_parts(given(), str(tmp_path / "parts.parquet"), rows.schema)
    finally:
        pa.set_memory_pool(before)
    assert counted.max_memory() < 1.5 * group, (counted.max_memory(), group)
    assert pq.read_table(tmp_path / "parts.parquet").equals(rows)


def _spilled(tmp_path, rows: list[tuple[str, int]]):
    store = SpillFolder(str(tmp_path / "spill"))
    return store.put(pa.table({"k": pa.array([r[0] for r in rows], pa.string()),
                               "n": pa.array([r[1] for r in rows], pa.int64())}))


def test_parts_apart_on_the_first_key_are_ordered_by_it(tmp_path):
    b = _spilled(tmp_path, [("b", 1), ("c", 0)])
    a = _spilled(tmp_path, [("a", 2), ("a", 1)])
    empty = _spilled(tmp_path, [])
    assert _apart([b, empty, a], "k") == [a, b]
    # a value shared by two parts: their rows' order would be the runner's, so the shard is sorted whole
    assert _apart([b, _spilled(tmp_path, [("a", 0), ("b", 0)])], "k") is None
    assert _apart([b, _spilled(tmp_path, [(None, 0)])], "k") is None  # (nulls: left to the sort)
    assert _apart([a], "k") is None
    assert _apart([a, pa.table({"k": ["z"], "n": [0]})], "k") is None  # a part held in memory


def test_a_shard_of_parts_apart_is_written_as_the_shard_sorted_whole(tmp_path):
    """A shard whose spilled parts each hold their own tables (advantage_moments: a part a table) is written a part
    at a time: the same bytes as the rows gathered, sorted and written at once."""
    parts = [_bets(70_000, 100_000), _bets(90_000, 0), _bets(40_000, 200_000)]  # T02-T03, T00-T01, T04
    parts = [p.take(pa.array(list(range(p.num_rows - 1, -1, -1)))) for p in parts]  # each out of order
    store = SpillFolder(str(tmp_path / "spill"))
    handles = [store.put(p) for p in parts]
    assert _apart(handles, "table_id") is not None
    schema = parts[0].schema
    (path,) = _WriteShard(str(tmp_path), "streamed", schema, ["table_id", "bet_id"], 1, merge=True).process(
        (0, handles))
    write_parquet(sorted_rows(pa.concat_tables(parts), ["table_id", "bet_id"]), str(tmp_path / "whole.parquet"))
    assert open(path, "rb").read() == (tmp_path / "whole.parquet").read_bytes()


@settings(max_examples=60, deadline=None)
@given(st.lists(_rows, min_size=2, max_size=5))
def test_overlapping_parts_merged_are_the_shard_sorted_whole(tmp_path_factory, parts):
    """Spilled parts whose keys overlap (the surveillance_tests of shared_rounds, a part a table), merged
    (`merge=True`), give the file of the parts concatenated in their order and sorted stably, nulls last."""
    tmp_path = tmp_path_factory.mktemp("merge")
    store = SpillFolder(str(tmp_path / "spill"))
    tables = []
    for i, rows in enumerate(parts):
        t = _table(rows)
        tables.append(t.set_column(3, "row", pa.array([i * 100 + r for r in range(t.num_rows)], pa.int64())))
    handles = [store.put(t) for t in tables]
    (path,) = _WriteShard(str(tmp_path), "merged", tables[0].schema, KEYS, 1, merge=True).process((0, handles))
    write_parquet(_stable_sort(pa.concat_tables(tables)), str(tmp_path / "whole.parquet"))
    assert open(path, "rb").read() == (tmp_path / "whole.parquet").read_bytes()


def test_a_merge_across_many_batches_and_windows(tmp_path, monkeypatch):
    """Parts of several MERGE_BATCH batches, merged MERGE_OUT rows at a time (a batch spans two windows)."""
    import random

    import pipelines.io as io

    monkeypatch.setattr(io, "MERGE_OUT", 700)
    rng = random.Random(3)
    shoes = ["S1", "S2", "S10", "s1", "É"]
    tables = [_table([(rng.choice(shoes), rng.randint(0, 3), rng.choice(["B1", "B2", None]))
                      for _ in range(n)]) for n in (1_500, 1, 2_300)]
    _assert_merged_is_the_whole_sort(tmp_path, tables)


def _assert_merged_is_the_whole_sort(tmp_path, tables: list[pa.Table]) -> None:
    """The merge shard's file of `tables` spilled: byte for byte their concatenation sorted stably, written whole."""
    store = SpillFolder(str(tmp_path / "spill"))
    (path,) = _WriteShard(str(tmp_path), "merged", tables[0].schema, KEYS, 1, merge=True).process(
        (0, [store.put(t) for t in tables]))
    write_parquet(_stable_sort(pa.concat_tables(tables)), str(tmp_path / "whole.parquet"))
    assert open(path, "rb").read() == (tmp_path / "whole.parquet").read_bytes()


def test_a_merge_of_many_parts_sorted_or_not_is_the_shard_sorted_whole(tmp_path, monkeypatch):
    """Many spilled parts (the surveillance_tests: a part a detector's table), some already in order, some empty,
    ties and nulls across parts, each part several MERGE_BATCH runs long: the file of the parts concatenated in
    their order and sorted stably, byte for byte."""
    import random

    import pipelines.io as io

    monkeypatch.setattr(io, "MERGE_BATCH", 7)
    monkeypatch.setattr(io, "MERGE_OUT", 50)
    rng = random.Random(43)
    tables = []
    for i in range(40):
        t = _table([(rng.choice(["S1", "S2", "É"]), rng.randint(0, 2), rng.choice(["B1", "B2", None]))
                    for _ in range(rng.choice([0, 1, 7, 8, 30]))])
        t = t.set_column(3, "row", pa.array([i * 100 + r for r in range(t.num_rows)], pa.int64()))
        tables.append(_stable_sort(t) if i % 3 == 0 else t)  # (a third already in order)
    _assert_merged_is_the_whole_sort(tmp_path, tables)


def test_the_merge_holds_a_small_uncompressed_batch_a_part(tmp_path, monkeypatch):
    """What the merge holds grows with its parts (424 at 10M bets): each part is sorted into a run of MERGE_BATCH
    row batches, spilled uncompressed (read back once: compressing each small buffer cost more than it saved)."""
    import pipelines.io as io

    runs: list[tuple[pa.Table, bool]] = []
    put = SpillFolder.put
    monkeypatch.setattr(SpillFolder, "put", lambda self, table, compressed=True: (
        runs.append((table, compressed)), put(self, table, compressed))[1])
    store = SpillFolder(str(tmp_path / "spill"))
    parts = [_bets(300, 0), _bets(5, 10), _bets(0)]
    handles = [put(store, p) for p in parts]
    merged = pa.concat_tables(list(io._merged(handles, parts[0].schema, ["table_id", "bet_id"])))
    assert merged.equals(sorted_rows(pa.concat_tables(parts), ["table_id", "bet_id"]))
    assert [t.num_rows for t, _ in runs] == [300, 5, 0] and not any(compressed for _, compressed in runs)
    assert max(b.num_rows for t, _ in runs for b in t.to_batches()) == io.MERGE_BATCH
    plain, packed = store.put(_bets(5_000), compressed=False), store.put(_bets(5_000))
    assert plain.table().equals(packed.table())
    assert os.path.getsize(plain.path) > 2 * os.path.getsize(packed.path)


def test_a_spilled_tables_columns_are_read_alone(tmp_path):
    """Spilled.table(columns) gives those columns (decompressed on the reading thread), as the whole table has them."""
    handle = SpillFolder(str(tmp_path / "spill")).put(_bets(1_000))
    assert handle.table(["table_id", "moment"]).equals(_bets(1_000).select(["table_id", "moment"]))
    assert handle.table().equals(_bets(1_000))


class _WriteOnlyHandle(io.RawIOBase):
    """A remote filesystem's upload stream as Beam hands it (gs://, s3://): write only, no tell, no seek."""

    def __init__(self, kept: dict, path: str):
        self.kept, self.path = kept, path
        kept[path] = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.kept[self.path] += bytes(data)
        return len(data)

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        raise io.UnsupportedOperation("tell")


def test_the_writers_stream_into_a_handle_that_can_only_write(tmp_path, monkeypatch):
    """Streamed into the file (not copied out of a buffer whole), the writers must not need the handle's position:
    a remote filesystem's upload stream has none. The bytes are those written locally."""
    import pipelines.io

    rows = _bets(2 * ROW_GROUP + 5)
    write_parquet(rows, str(tmp_path / "whole.parquet"))
    kept: dict[str, bytearray] = {}
    monkeypatch.setattr(pipelines.io.FileSystems, "create", lambda path, *a, **k: _WriteOnlyHandle(kept, path))
    write_parquet(rows, "gs://bucket/whole.parquet")
    write_parquet_parts(iter([rows.slice(0, 1000), rows.slice(1000)]), "gs://bucket/parts.parquet", rows.schema)
    assert bytes(kept["gs://bucket/whole.parquet"]) == (tmp_path / "whole.parquet").read_bytes()
    assert bytes(kept["gs://bucket/parts.parquet"]) == (tmp_path / "whole.parquet").read_bytes()
