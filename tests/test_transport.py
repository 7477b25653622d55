"""How Arrow tables travel between the pipeline's steps: pickled as compressed Arrow IPC (slices carry
their own rows only), and through ArrowTableCoder where a collection is declared as tables."""

from __future__ import annotations

import pickle

import apache_beam as beam
import pyarrow as pa
import pytest

import pipelines.transforms as transforms
from pipelines.transforms import ArrowTableCoder, Packed, SplitByTag


def _bets(n: int) -> pa.Table:
    return pa.table({
        "bet_id": [f"B{i:08d}" for i in range(n)],
        "round_id": pa.array([f"R{i // 50:06d}" for i in range(n)]).dictionary_encode(),
        "stake": pa.array(range(n), pa.int64()),
        "seat": pa.array([None if i % 7 == 0 else i % 7 for i in range(n)], pa.int8()),
    })


def test_a_pickled_table_comes_back_identical_and_compressed():
    table = _bets(50_000)
    data = pickle.dumps(table)
    assert pickle.loads(data).equals(table)
    assert pickle.loads(data).schema == table.schema  # dictionary columns stay dictionaries
    assert len(data) < table.nbytes / 3


def test_a_big_table_decoded_again_from_the_same_bytes_is_the_same_table():
    """As a side input is, by each DoFn that takes it: one copy in memory, not one per DoFn."""
    import secrets

    index = pa.table({"round_id": [secrets.token_hex(16) for _ in range(60_000)]})
    data = pickle.dumps(index)
    assert len(data) >= transforms._SHARE_FROM
    first, again = pickle.loads(data), pickle.loads(data)
    assert first is again and first.equals(index) and first is not index
    other = pickle.loads(pickle.dumps(index.slice(1)))  # other bytes: another table
    assert other is not first and other.equals(index.slice(1))
    del first, again
    assert pickle.loads(data).equals(index)  # once freed, decoded anew


def test_a_pickled_slice_carries_its_own_rows_only():
    table = _bets(100_000)
    part = table.slice(40_000, 1_000)
    data = pickle.dumps(part)
    assert pickle.loads(data).equals(part)
    assert len(data) < table.nbytes / 20  # not the parent's buffers (pyarrow's own pickle carries them)


def test_a_table_without_columns_keeps_its_row_count():
    table = pa.table({"x": [1, 2, 3]}).drop_columns(["x"])
    assert pickle.loads(pickle.dumps(table)).num_rows == 3


def test_packed_table_round_trip():
    table = _bets(10_000)
    packed = pickle.loads(pickle.dumps(Packed(table)))
    assert packed.table().equals(table)


def test_a_spilled_table_comes_back_identical_and_its_handle_is_small(tmp_path):
    from pipelines.io import SpillFolder

    table = _bets(10_000)
    handle = pickle.loads(pickle.dumps(SpillFolder(str(tmp_path / "spill")).put(table)))
    assert handle.table().equals(table) and handle.table().schema == table.schema
    assert len(pickle.dumps(handle)) < 300  # a path, not the rows
    files = list((tmp_path / "spill").iterdir())
    assert [f.name for f in files] == [handle.path.rsplit("/", 1)[1]] and 0 < files[0].stat().st_size < table.nbytes


def test_arrow_table_coder_round_trip_and_size_estimate_without_encoding(monkeypatch):
    coder = ArrowTableCoder()
    table = _bets(20_000)
    assert coder.decode(coder.encode(table)).equals(table)

    def no_encoding(_table):
        raise AssertionError("the size estimate encoded the table")

    monkeypatch.setattr(transforms, "_ipc_bytes", no_encoding)
    assert coder.get_impl().estimate_size(_bets(30_000)) == _bets(30_000).nbytes


def test_collections_declared_as_tables_get_the_arrow_coder():
    assert isinstance(beam.coders.registry.get_coder(pa.Table), ArrowTableCoder)
    pipeline = beam.Pipeline()
    pairs = pipeline | beam.Create([("a", pa.table({"x": [1]})), ("b", 3)])
    split = pairs | SplitByTag("a", "b", tables=("a",))
    assert split["a"].element_type is pa.Table
    assert split["b"].element_type is not pa.Table


@pytest.mark.parametrize("rows", [0, 1, 5_000])
def test_arrow_table_coder_through_a_pipeline(rows):
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner
    from apache_beam.testing.util import assert_that

    table = _bets(rows)

    def check(tables):
        assert len(tables) == 1 and tables[0].equals(table)

    with beam.Pipeline(runner=FnApiRunner()) as pipeline:
        tables = (pipeline | beam.Create([0]) | beam.Map(lambda _: table).with_output_types(pa.Table)
                  | beam.Reshuffle())
        assert_that(tables, check)
