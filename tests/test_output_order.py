"""Output files are sorted by their keys: `sorted_rows` gives exactly what a stable sort gives, whether
the rows come already in order (the engine's usual order, where no sort runs) or not."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.io import _in_order, sorted_rows, write_parquet

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
